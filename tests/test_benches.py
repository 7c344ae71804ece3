"""Issue 69, point 4: benches cannot rot. Every script in bench/ has a smoke form here: the quick tier imports each
(its module-level code and every import it names at the top, with its environment put back after) and checks what
bench/chaos.py counts as harm and what its Submit probe sends (both kept quick in tests/quick_tier_slow.txt); the
slow tier runs each script's own command line at tiny sizes (SMOKES, or the test SMOKED_ELSEWHERE names) and wants
exit code 0. A new script without a smoke form fails test_every_bench_has_a_smoke_form.
bench/chaos.py failed on main because its Submit probe sent a text-only model to a Space whose benchmarks need
images; it now submits the tiny LLaVA under an id of its own, and exits 1 when a line counts harm."""
from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runs import evaluator_many
from tests.test_family_cli import OPTIONS as FAMILY_OPTIONS

PROJECT = Path(__file__).resolve().parent.parent
BENCH = PROJECT / "bench"
HELPERS = ("_chaos_worker", "_gpu_workers", "_models")  # run by the benches, not by people: imported only
# script -> its command line at tiny sizes (seconds to a minute or two each on 2 cores)
SMOKES = {
    "batch_drift": ["--families", "llava", "--requests", "2"],
    "board_load": ["5"],
    "chaos": ["--requests", "1", "--kills", "1", "--claims", "1", "--only", "kills-local"],
    "compiled_shapes": ["--batch-size", "2", "--shape", "tiny"],
    "eval_results": ["1"],
    "explorer": ["20"],
    "family_batches": ["--families", "llava", "--limit", "1", "--batch", "2",  # the quickest vision family,
                       *(part for option in FAMILY_OPTIONS for part in ("--option", option))],  # as the CLI checks
    "generation": ["1", "--new-tokens", "2", "--shape", "tiny"],
    "hub_calls": ["2"],
    "interval_cost": ["20"],
    "jobs_dispatch": ["--requests", "1", "--scheduling", "0.1"],
    "judge_pace": ["--shape", "tiny", "--answers", "2"],  # the 135M-shaped judge took 9 minutes on one answer
    "option_scoring": ["--repeats", "1", "--questions", "2", "--shape", "tiny"],
    "publish_cost": ["2"],
    "sample_suites": ["--models", "tiny-vision", "--trial-only"],  # all four benchmarks; the real sizes: 12 minutes+
    "served": ["--requests", "2", "--max-new-tokens", "2", "--repeats", "1"],
}
# Scripts that set the Hub client's environment (HF_HOME, HF_HUB_CACHE, Xet) before huggingface_hub reads it, once, at
# import: their smoke starts a fresh Python. Every other smoke runs in the test worker's warm runner (tests.cli_runs:
# the script run as `python SCRIPT ARGS` runs it, with torch and transformers already imported; about 8 CPU-s saved
# each); test_every_bench_has_a_smoke_form holds a script that sets that environment to this list.
FRESH_PYTHON = {"chaos", "eval_results", "hub_calls", "jobs_dispatch"}
# script -> the test that runs its command line at tiny sizes already (a second run here would repeat it)
SMOKED_ELSEWHERE = {"gpu_check": "tests/test_gpu_check.py"}  # every part, on the CPU, shrunk


def test_every_bench_has_a_smoke_form():
    scripts = {path.stem for path in BENCH.glob("*.py")}
    assert scripts == set(SMOKES) | set(SMOKED_ELSEWHERE) | set(HELPERS), scripts ^ (
        set(SMOKES) | set(SMOKED_ELSEWHERE) | set(HELPERS))
    for name, test in SMOKED_ELSEWHERE.items():
        assert f'"bench/{name}.py"' in (PROJECT / test).read_text(), (name, test)
    sets_hub_env = {path.stem for path in BENCH.glob("*.py")
                    if re.search(r"os\.environ(\[\"HF_|\.update\(\{\"HF_)", path.read_text())}
    assert sets_hub_env - set(SMOKED_ELSEWHERE) <= FRESH_PYTHON <= set(SMOKES), sets_hub_env


@pytest.fixture
def bench_path(monkeypatch, environ_kept):
    """bench/ first on sys.path, and os.environ as it was once the test ends (a bench sets its own at import)."""
    monkeypatch.syspath_prepend(str(BENCH))


def imported(name: str):
    """bench/<name>.py imported afresh (its module-level code run again)."""
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.mark.parametrize("name", sorted({*SMOKES, *SMOKED_ELSEWHERE, *HELPERS} - {"_chaos_worker"}))
def test_each_bench_imports_with_what_it_names(bench_path, name):
    module = imported(name)
    work = getattr(module, "WORK", None)
    if isinstance(work, Path) and work.name.startswith("bench-"):
        shutil.rmtree(work, ignore_errors=True)  # chaos makes its work folder at import
    runs = [value for key, value in vars(module).items() if key in ("main", "run", "measure") and callable(value)]
    assert runs or name in HELPERS, f"bench/{name}.py has no main"


def test_the_chaos_worker_announces_a_publish_write(bench_path, tmp_path, monkeypatch):
    from leaderboard.store.local import LocalStore

    monkeypatch.setattr(LocalStore, "write_bytes", LocalStore.write_bytes)  # put back: the import patches it
    monkeypatch.setenv("CHAOS_MARKERS", str(tmp_path))
    monkeypatch.setenv("CHAOS_WRITE_DELAY", "0")
    worker = imported("_chaos_worker")
    store = LocalStore(tmp_path / "store")
    store.write_bytes("results/org/model/key.json", b"{}")
    assert worker.MARKER.read_text() == "" and store.read_bytes("results/org/model/key.json") == b"{}"
    assert worker._phase("requests/org/model/key.json") == "close" and worker._phase("README.md") is None


def test_chaos_counts_harm_and_its_submit_probe_asks_what_the_space_takes(bench_path):
    chaos = imported("chaos")
    shutil.rmtree(chaos.WORK, ignore_errors=True)
    clean = ["kills, local store (N=10, K=10): lost 0, stuck RUNNING 0, duplicated 0, partial 0, orphan evaluators 0; "
             "FAILED with a reason 2",
             "4 workers, local store, 12 requests: claimed more than once 0, never run 0, worker crashes 0, heartbeats "
             "not written 0",
             "judge failing 30 %, lave (30 answers ...): misgraded 0; unrated (counted, not scored) 3",
             "damaged results: a JSON list: the service answered 5 of 5 (board, queue, submit, explorer, tick); the "
             "file is listed"]
    harmed = [clean[0].replace("lost 0", "lost 1"), clean[1] + " (the queue did not drain)",
              clean[3].replace("5 of 5 (board, queue, submit, explorer, tick)",
                               "4 of 5 (board, queue, submit, explorer, tick) - failed: submit"),
              clean[3].replace("is listed", "is NOT LISTED"), clean[2].replace("misgraded 0", "misgraded 12")]
    assert chaos.harmful(clean) == [] and chaos.harmful(harmed) == harmed
    source = inspect.getsource(chaos.damaged_files)
    tree = ast.parse((PROJECT / "leaderboard" / "ui" / "submit.py").read_text())  # read, not imported (gradio)
    on_submit = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "on_submit")
    inputs = {arg.arg for arg in on_submit.args.args} - {"profile"}  # the Submit API's named inputs
    sent = {name for name in inputs if f"{name}=" in source}
    assert sent == inputs and {"model_id", "model_type"} <= inputs, (inputs, sent)
    assert "constants.HF_HUB_CACHE), SUBMIT_PROBE, models.llava" in source  # a model that sees, where Submit looks


@pytest.mark.slow  # each starts the script's own command line, tiny sizes: seconds to a minute or two
@pytest.mark.parametrize("name", sorted(SMOKES))
def test_each_bench_runs_at_tiny_sizes(tmp_path, name):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    command = [f"bench/{name}.py", *SMOKES[name]]
    if name in FRESH_PYTHON:
        done = subprocess.run([sys.executable, *command], cwd=PROJECT, env=env, capture_output=True, text=True,
                              timeout=600)
    else:
        (done,) = evaluator_many([command], tmp_path / "report.json", timeout=600, env=env)
    assert done.returncode == 0, (name, done.stdout[-2000:], done.stderr[-3000:])
