"""The evaluator's command line, as the scheduler and a person run it, and the standalone worker process."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request
from tests.cli_runs import evaluator_many
from tests.conftest import PROJECT


# every test here starts the evaluator (or the worker) as a process of its own
pytestmark = pytest.mark.slow


def evaluator(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evaluator", *args], cwd=PROJECT, capture_output=True, text=True,
                          timeout=timeout)


def test_list_benchmarks_gives_one_line_each_with_what_it_measures_modes_judge_and_suite_sizes():
    from evaluator.api import benchmark_names, cards

    done = evaluator("list-benchmarks")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    every = done.stdout.splitlines()
    lines = [line for line in every if not line.startswith("  ")]
    assert [line.split(":")[0] for line in lines] == list(benchmark_names())
    for line, card in zip(lines, cards()):
        what = line.split(":", 1)[1].split(". modes: ")[0].strip()
        assert len(what.split()) >= 4, line  # a few words on what it measures, not a bare name
        assert ("needs a judge" in line) == card.needs_judge and ("no judge" in line) != card.needs_judge, line
        assert re.search(r"; sample suite: [\d,]+ items; lite suite: [\d,]+ items; ", line), line
        full = f"{card.full_suite_items:,} items" if card.full_suite_items else "not known"
        assert line.endswith(f"; full suite: {full}"), line
    by_name = dict(zip(benchmark_names(), lines))
    assert "modes: likelihood (default), generation;" in by_name["cure"]
    # each mode's calls per item follow their benchmark's line (the card's workload, in words)
    cure = every[every.index(by_name["cure"]) + 1:every.index(by_name["cure"]) + 3]
    assert cure[0].startswith("  per item (likelihood): one request per question") and "option scoring" in cure[0]
    assert cure[1].startswith("  per item (generation): ") and "a generation of up to 16 tokens" in cure[1]
    assert any("1 judge grade" in line for line in every if line.startswith("  per item (generation): a greedy"))
    assert "full suite: 1,622 items" in by_name["cure"]
    assert "modes: generation;" in by_name["simpleqa"] and "sample suite: 20 items" in by_name["cure"]


def test_an_unknown_benchmark_is_said_at_once_before_torch_and_nothing_about_devices(tmp_path):
    """The name is checked before anything heavy is imported: neither torch nor the runner has loaded when the
    error line comes, and a command that fails on its arguments says nothing about devices."""
    wrapper = ("import runpy, sys\n"
               "sys.argv = ['evaluator', 'run', '--model', 'org/model', '--benchmarks', 'cure,nope', '--out', "
               f"{str(tmp_path / 'out')!r}]\n"
               "try:\n    runpy.run_module('evaluator', run_name='__main__', alter_sys=True)\n"
               "except SystemExit as exit:\n    code = exit.code\n"
               "heavy = [name for name in ('torch', 'transformers', 'evaluator.runs.runner') if name in sys.modules]\n"
               "print('heavy:', heavy)\nsys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", wrapper], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == ["error: unknown benchmark 'nope'; known: cure, simpleqa, reform, lave "
                                        "(python -m evaluator list-benchmarks)"], done.stderr
    assert done.stdout.strip() == "heavy: []"
    failing = (["--benchmarks", "nope"], ["--batch-size", "many"], ["--option", "cure.mode=guess"],
               ["--benchmarks", "simpleqa"])  # simpleqa without --judge
    runs = evaluator_many([["run", "--model", "org/model", *args, "--out", str(tmp_path / "out")] for args in failing],
                          tmp_path / "said.json")
    for args, said in zip(failing, runs, strict=True):
        output = said.stdout + said.stderr
        assert said.returncode == 1 and said.stderr.startswith("error: "), (args, output)
        assert not re.search(r"WARNING|CUDA|device", output, re.IGNORECASE), (args, output)


def test_run_by_generation_on_a_pinned_hub_model(tiny_llava, tmp_path):
    out = tmp_path / "out"
    (done,) = evaluator_many([["run", "--model", tiny_llava.repo_id, "--revision", tiny_llava.sha, "--limit", "2",
                               "--option", "cure.mode=generation", "--out", str(out), "--responses",
                               str(tmp_path / "responses")]], tmp_path / "report.json")  # torch loaded once a worker
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["revision"] == tiny_llava.sha and results["benchmarks"]["cure"]["extra"]["mode"] == "generation"
    details = pd.read_parquet(out / "details" / "cure.parquet")
    assert set(details["extraction"]) == {"letter"} and details["question_id"].nunique() == 2
    # --responses: every model response journaled, one generation request per details row
    journal = (tmp_path / "responses" / "cure.jsonl").read_text().splitlines()
    assert len(journal) == len(details)
    assert {json.loads(line)["item"] for line in journal} == set(details["question_id"])
    assert results["run"]["resumed"] == {"cure": {"reused": 0, "items": 2, "model_requests": len(details)}}
    assert "cure: " in done.stdout  # the scores line printed for the log
    states = re.findall(r"cure answering:.*?(\d+/\d+) \[[^\]]*?(\d+/\d+ requests)\]", done.stdout)
    assert states and len(states) == len(set(states)), done.stdout  # each state printed once, no line twice
    assert states[-1] == ("2/2", f"{len(details)}/{len(details)} requests")
    timing = next(line for line in done.stdout.splitlines() if "items/s" in line)  # where the time went
    assert re.fullmatch(r"cure: 2 item\(s\) in [\d.]+ s, [\d.]+ items/s; generation [\d.]+ s \(\d+ %\), "
                        r"option scoring 0\.0 s \(0 %\)", timing), timing


def test_failures_exit_non_zero_with_a_one_line_reason(tiny_llava, tmp_path):
    cases = [
        (["--model", tiny_llava.repo_id, "--benchmarks", "nope"], "unknown benchmark 'nope'"),
        (["--model", "tiny-org/not-there"], "error: "),
        (["--model", tiny_llava.repo_id, "--option", "cure.mode=guess", "--limit", "1"], "mode"),
        (["--model", "tiny-org/a b"], "error: The model id 'tiny-org/a b' contains spaces"),  # the Submit tab's rule
        (["--model", "no-org"], "error: The model id 'no-org' is not of the form org/name; no local model folder"),
        (["--model", "org/bad--name"], "is not a valid Hub model id"),
    ]
    # the first case as its own `python -m evaluator` process; the others, and --debug, in one process (see _MANY)
    first = evaluator("run", *cases[0][0], "--out", str(tmp_path / "out"))
    *rest, debug = evaluator_many([["run", *args, "--out", str(tmp_path / "out")] for args, _ in cases[1:]] +
                                  [["run", "--model", "tiny-org/not-there", "--out", str(tmp_path / "out"), "--debug"]],
                                  tmp_path / "said.json")
    for (args, expected), done in zip(cases, [first, *rest], strict=True):
        errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        assert done.returncode == 1 and errors == [done.stderr.strip().splitlines()[-1]], (args, done.stderr)
        assert expected in errors[0] and "Traceback" not in done.stderr, (args, done.stderr)
    assert not (tmp_path / "out" / "results.json").exists()
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.strip().splitlines()[-1].startswith("error: ")


def test_what_the_configuration_tells_is_said_before_any_model_loads(tiny_llama, tmp_path):
    """Issue 52, point 11: no judge for SimpleQA, a text-only model asked only for image benchmarks, and a model not
    in the offline cache were said in the library's words, or after the model loaded (up to 38 s). Now each is one
    line of our own, before the device is even chosen."""
    out = str(tmp_path / "out")
    refused = tmp_path / "glm"
    refused.mkdir()
    (refused / "config.json").write_text(json.dumps({"model_type": "fuyu", "architectures": ["FuyuForCausalLM"]}))
    cases = [
        (["--model", tiny_llama.repo_id, "--revision", tiny_llama.sha, "--benchmarks", "simpleqa"],
         "error: simpleqa needs a judge: set LEADERBOARD_JUDGE or pass --judge"),
        (["--model", tiny_llama.repo_id, "--revision", tiny_llama.sha, "--benchmarks", "cure,reform"],
         f"error: {tiny_llama.repo_id} is text-only (its config.json: LlamaForCausalLM, no vision part) and cure, "
         "reform need image input: nothing would run"),
        (["--model", "tiny-org/never-downloaded", "--benchmarks", "cure"],
         "error: tiny-org/never-downloaded is not in this machine's Hugging Face cache"),
        (["--model", str(refused), "--benchmarks", "cure"],  # an image-text-to-text type that does not run here
         "error: unsupported architecture FuyuForCausalLM (model_type 'fuyu'): not yet verified"),
    ]
    said = evaluator_many([["run", *args, "--out", out] for args, _ in cases], tmp_path / "said.json")
    for (args, expected), done in zip(cases, said, strict=True):
        last = done.stderr.strip().splitlines()[-1]
        assert done.returncode == 1 and last.startswith(expected), (args, done.stderr[-2000:])
        assert "Traceback" not in done.stderr and "Error:" not in last, last  # no library's exception name
        assert "device:" not in done.stdout + done.stderr, done.stdout  # nothing loaded, no device chosen
    assert "HF_HUB_OFFLINE=1" in said[2].stderr and "local model folder" in said[2].stderr
    assert "the families table, docs/models.md, lists the families that run" in said[3].stderr


def test_a_bad_compile_cache_is_refused_before_a_compiled_run_and_never_touched_by_a_cpu_run(tiny_llava, tmp_path):
    """Round 4: a file, or a path under a file, as the compile cache failed every run with FileExistsError and the
    machine's path, CPU runs on the dynamic path too. Now a run that would compile (--device cuda) is refused before
    the model loads, in one line naming the setting and no path; a CPU run (cpu, or auto without a GPU, as the worker
    asks) runs and neither makes nor touches the folder."""
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    (tmp_path / "a-file").write_text("not a folder")
    model = ["--model", tiny_llava.repo_id, "--revision", tiny_llava.sha, "--benchmarks", "cure", "--limit", "1"]
    refused = {tmp_path / "a-file": "it is a file, not a folder",
               tmp_path / "a-file" / "torch-compile": "a part of its path is a file, not a folder",
               tmp_path / "loop-a": "its path goes round a loop of symbolic links"}
    ran = [("cpu", tmp_path / "a-file"), ("auto", tmp_path / "loop-a"), ("cpu", tmp_path / "never" / "made")]
    said = evaluator_many([["run", *model, "--device", "cuda", "--compile-cache", str(folder), "--out",
                            str(tmp_path / "refused")] for folder in refused] +
                          [["run", *model, "--device", device, "--compile-cache", str(folder), "--out",
                            str(tmp_path / f"out-{n}")] for n, (device, folder) in enumerate(ran)],
                          tmp_path / "said.json")
    for (folder, why), done in zip(refused.items(), said):
        assert done.returncode == 1 and done.stderr.splitlines() == [
            f"error: --compile-cache (LEADERBOARD_COMPILE_CACHE) names no folder PyTorch's compile cache can use: "
            f"{why}"], (folder, done.stderr[-2000:])
        assert "device:" not in done.stdout, done.stdout  # said before a device is chosen, nothing loaded
    for n, done in enumerate(said[len(refused):]):
        assert done.returncode == 0, (ran[n], done.stderr[-2000:])
        assert "generation: dynamic" in done.stdout and (tmp_path / f"out-{n}" / "results.json").is_file()
    assert (tmp_path / "a-file").read_text() == "not a folder" and not (tmp_path / "never").exists()


def test_compare_prints_the_paired_difference_and_refuses_a_missing_folder(tmp_path):
    """`python -m evaluator compare A B` as a process: a header, one line per benchmark both have (A - B on the
    questions both scored, worked out by hand in tests/test_compare_runs.py), and one `error:` line with exit code 2
    for a folder that is not there."""
    from tests.hand_details import LAVE_A, LAVE_B, results_folder

    a = results_folder(tmp_path, "a", {"lave": LAVE_A})
    b = results_folder(tmp_path, "b", {"lave": LAVE_B})
    done = evaluator("compare", str(a), str(b), timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.splitlines() == [
        "A = org/a, sample suite; B = org/b, sample suite",
        "LAVE: A - B = -16.7 points (95% -87.2 to +53.9), on 3 shared items, A right and B wrong on 0, the reverse on 1"]
    missing = evaluator("compare", str(a), str(tmp_path / "nowhere"), timeout=120)
    assert missing.returncode == 2 and missing.stdout == "" and "Traceback" not in missing.stderr
    assert missing.stderr.splitlines() == [f"error: B: {tmp_path / 'nowhere'} does not exist"]


def test_standalone_worker_runs_the_queue_and_stops_cleanly(settings, store, tiny_llava):
    """`python -m leaderboard.running.worker`: SIGTERM mid-run returns the request to the queue, uncounted, and exits 0."""
    queue.save(store, Request(model=tiny_llava.repo_id, revision=tiny_llava.sha))
    env = {**os.environ, "LEADERBOARD_HOME": str(settings.home), "LEADERBOARD_HEARTBEAT_SECONDS": "0.5",
           "LEADERBOARD_SCHEDULER_INTERVAL": "0.5"}
    worker = subprocess.Popen([sys.executable, "-m", "leaderboard.running.worker"], cwd=PROJECT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not queue.all_requests(store)[0].progress.get("total"):
            time.sleep(0.2)
        assert queue.all_requests(store)[0].status == queue.RUNNING
        worker.send_signal(signal.SIGTERM)
        output, _ = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 0, output
    stored = queue.all_requests(store)[0]
    assert stored.status == queue.PENDING and stored.attempts == 0 and stored.lease_owner is None
    assert "stopped after" in output and store.list("results") == []
