"""bench/gpu_check.py, the one command for a GPU loan, runs here too: on the CPU with the tiny-shaped model (every path
of the bench shape, in a fraction of its time) and every part shrunk (one test, 4 questions, 4 requests of 4 tokens, one
item per benchmark and dimension), it reports every part and prints the summary, the projection and the per-call costs
record it writes (--write-costs); a part made to fail
(part 1 pointed at a missing test file) is reported while the others still run. Every card says how large its full suite
is, or that it is not known."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

import pytest

from evaluator.benchmarks import REGISTRY, card_problems, cards
from evaluator.plans.costs import measured_records
from tests.conftest import PROJECT

SHRUNK = ("--shape", "tiny", "--device", "cpu", "--tests", "tests/test_families.py::test_batch_size_setting",
          "--questions", "4", "--repeats", "1", "--requests", "4", "--new-tokens", "4", "--batches", "1,4",
          "--limit", "1")
ROWS = ("build the model", "1 tests", "2 option scoring", "3 generation", "4 sample suites", "5 projection",
        "6 costs record")


def run_check(*extra: str) -> subprocess.CompletedProcess:
    """The shrunk check in a subprocess; its time limit is above the script's own budget (--budget-s, 540 s), so on a
    loaded machine the script reports the parts it had to cut rather than being killed (it took over 240 s once, with
    two whole suites running beside it)."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.run([sys.executable, "bench/gpu_check.py", *SHRUNK, *extra], cwd=PROJECT, capture_output=True,
                          text=True, timeout=600, env=env)


def summary_rows(stdout: str) -> dict[str, str]:
    """The summary table's rows by their part's title."""
    table = stdout.split("\nsummary (", 1)[1].split("\n\n", 1)[0]
    return {title: line for line in table.splitlines() for title in ROWS if line.startswith(title)}


def projection_rows(stdout: str) -> dict[str, str]:
    table = stdout.split("\nprojection (", 1)[1]
    return {name: line for line in table.splitlines() for name in REGISTRY if line.startswith(f"{name} ")}


@pytest.mark.slow
def test_every_part_runs_on_the_cpu_and_the_summary_and_projection_are_printed(tmp_path):
    done = run_check("--write-costs", str(tmp_path / "measured.json"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    rows = summary_rows(done.stdout)
    assert set(rows) == set(ROWS), rows
    assert all("  ok  " in line for line in rows.values()), rows
    assert "1 passed, 0 failed, 0 errors, 0 skipped" in rows["1 tests"]
    assert "4 questions x 6 options" in rows["2 option scoring"] and "the same choice in" in rows["2 option scoring"]
    assert "batch 1 " in rows["3 generation"] and "batch 4 " in rows["3 generation"]
    # both paths, the static one uncompiled on the CPU, with the floor and the answers they share
    assert "dynamic: batch 1 " in rows["3 generation"] and "static: batch 1 " in rows["3 generation"]
    assert "ms/step" in rows["3 generation"] and "the floor " in rows["3 generation"]
    assert "the same answers on both paths: batch 1 4 of 4, batch 4 4 of 4" in rows["3 generation"]
    assert "part 3 targets (static) (set for the 7b shape on a GPU: for reference only)" in done.stdout
    assert all(f"{name} " in rows["4 sample suites"] for name in REGISTRY)
    assert "(dynamic, " in rows["4 sample suites"]  # the path the evaluator takes on the CPU
    assert "vision passes saved" in rows["4 sample suites"]  # each image encoded once
    assert "part 2 targets" in done.stdout and "sample suites by phase" in done.stdout
    effect = next(line for line in done.stdout.splitlines() if line.startswith("batch size and the numbers: "))
    assert "(float32) log-probabilities moved by up to" in effect and "between batch 1 and batch 4" in effect
    assert "option scores moved by up to" in effect
    projection = projection_rows(done.stdout)
    assert set(projection) == set(REGISTRY)
    for card in cards():  # each full suite projected from its count (ReForm-Eval's too, since counts.py)
        assert (f"{card.full_suite_items:,}" if card.full_suite_items else "per 1,000 items") in projection[card.name]
    assert "1,622" in projection["cure"] and "not measured" not in done.stdout.split("\nprojection (", 1)[1]
    assert "judge not included" in projection["simpleqa"] and "judge not included" in projection["lave"]
    assert "judge time is not included" in done.stdout
    # part 6: the CPU's per-call costs record, merged into a copy of measured.json that the plan reads back
    assert "'cpu': " in rows["6 costs record"] and "ms a decode step (batch 4, dynamic)" in rows["6 costs record"]
    assert "per-call costs record 'cpu' for evaluator/plans/measured.json (written to" in done.stdout
    records = measured_records(tmp_path / "measured.json")
    assert set(records) == {"h200", "cpu"} and records["h200"] == measured_records()["h200"]
    cpu = records["cpu"]
    assert cpu.by.startswith("bench/gpu_check.py --shape tiny") and (cpu.gpu, cpu.batch_size) == ("", 4)
    assert "3 option-scoring requests (1 item), each with one image (4 image tokens)" in cpu.request_basis
    assert "256 decode steps (1 batch of up to 4 of its 1 text request" in cpu.step_basis


@pytest.mark.slow
def test_a_failing_part_is_reported_and_the_others_still_run():
    done = run_check("--tests", "tests/no_such_test_file.py", "--parts", "tests,generation")
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-4000:]
    rows = summary_rows(done.stdout)
    assert "failed" in rows["1 tests"] and "no_such_test_file.py" in rows["1 tests"], rows["1 tests"]
    assert "  ok  " in rows["3 generation"] and "batch 4 " in rows["3 generation"]
    assert "not asked" in rows["2 option scoring"] and "not asked" in rows["4 sample suites"]
    assert all("not measured" in line for line in projection_rows(done.stdout).values())


def test_every_card_says_how_large_its_full_suite_is():
    for card in cards():
        assert card.full_suite_note.strip(), card.name
        assert card.full_suite_items is None or card.full_suite_items > 0
    cure = next(card for card in cards() if card.name == "cure")
    assert cure.full_suite_items == 1622
    assert "positive whole number" in " ".join(card_problems(replace(cure, full_suite_items=0), "cure"))
    assert "where CARD.full_suite_items comes from" in " ".join(
        card_problems(replace(cure, full_suite_note=""), "cure"))
