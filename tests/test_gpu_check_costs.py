"""bench/gpu_check.py's per-call costs record (part 6), without running the check: the record built from fake phase
timings and the samples' counted workloads gives request_s = option-scoring seconds / requests and step_s = decode
seconds / (batches x new tokens); --write-costs merges it into a measured.json-shaped file keeping the other records,
which evaluator.plans.costs reads back (and then prices that GPU from its own record); a record whose figures are not
positive numbers is refused in one line and nothing is written."""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
from argparse import Namespace

import pytest

from evaluator.benchmarks.workloads import Calls, Workload
from evaluator.plans.costs import MEASURED, measured_records, on_flavor, record_problem, write_record
from tests.conftest import PROJECT


@pytest.fixture(scope="module")
def gpu_check():
    """bench/gpu_check.py as a module (bench/ on the path while it is imported; the environment it sets back)."""
    environ, path = dict(os.environ), list(sys.path)
    sys.path.insert(0, str(PROJECT / "bench"))
    try:
        import gpu_check as module
    finally:
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:] = path
    return module


BUILD = {"params": 7.06e9, "device_name": "NVIDIA H100 80GB HBM3", "memory_gib": 79.2, "machine": "NVIDIA H100"}
CURE = {"items": 20, "load_s": 12.5, "option_scoring_s": 4.0}
SIMPLEQA = {"items": 31, "generation_s": 25.0, "compile_s": 5.0, "batch_size": 64, "path": "static-compiled",
            "dtype": "bfloat16"}


def record(gpu_check, **changes):
    cure, simpleqa = {**CURE, **changes.pop("cure", {})}, {**SIMPLEQA, **changes.pop("simpleqa", {})}
    return gpu_check.costs_record(BUILD, cure, simpleqa, gpu_check.sample_workload("cure", 0),
                                  gpu_check.sample_workload("simpleqa", 0), 576, "2026-12-01", "bench/gpu_check.py")


def test_the_record_divides_each_phase_by_its_counted_calls(gpu_check):
    cure_work = gpu_check.sample_workload("cure", 0)
    assert cure_work.items == 20 and cure_work.total("scorings") == 77  # the sample's 77 option scorings
    found = record(gpu_check)
    assert found["request_s"] == pytest.approx(4.0 / 77, rel=1e-3)
    # SimpleQA's sample with the full suite's options: 31 greedy answers of 256 tokens, one batch of up to 64, its
    # 5 s of compile warm-up taken out
    assert found["step_s"] == pytest.approx((25.0 - 5.0) / 256, rel=1e-3)
    text = cure_work.total("prompt_tokens") / 77
    assert found["prompt_tokens"] == pytest.approx(576 + text, abs=0.5)
    assert found["load_s"] == 12.5 and found["params_billions"] == 7.06 and found["batch_size"] == 64
    assert (found["gpu"], found["hardware"]) == ("h100", "one NVIDIA H100 80GB HBM3 (79 GiB)")
    assert (found["dtype"], found["generation_path"], found["measured"]) == ("bfloat16", "static-compiled",
                                                                              "2026-12-01")
    assert "77 option-scoring requests (20 items)" in found["request_basis"] and "4.00 s" in found["request_basis"]
    assert "256 decode steps (1 batch of up to 64 of its 31 text requests" in found["step_basis"]
    assert "less a 5.0 s compile warm-up" in found["step_basis"]
    assert record_problem(found) is None


def test_decode_steps_are_batches_times_each_ones_budget(gpu_check):
    generations = Workload("simpleqa", "sample", (Calls("question", items=100, generations=1.0, new_tokens=32.0),),
                           "fake")
    scorings = Workload("cure", "sample", (Calls("instance", items=10, scorings=3.0, prompt_tokens=40.0, images=1.0),),
                        "fake")
    found = gpu_check.costs_record({"params": 1e9, "machine": "a CPU"}, {**CURE, "items": 10},
                                   {**SIMPLEQA, "items": 100, "compile_s": 0.0, "batch_size": 64}, scorings,
                                   generations, 64, "2026-12-01", "test")
    # 100 requests at batch 64: 2 batches of 32 steps each
    assert found["step_s"] == pytest.approx(25.0 / (2 * 32), rel=1e-3)
    assert found["request_s"] == pytest.approx(4.0 / 30, rel=1e-3) and found["prompt_tokens"] == 104
    assert (found["gpu"], found["hardware"]) == ("", "a CPU")


def test_gpu_names_map_to_their_families(gpu_check):
    names = {"NVIDIA H200": "h200", "NVIDIA H100 80GB HBM3": "h100", "NVIDIA A100-SXM4-80GB": "a100",
             "NVIDIA L40S": "l40s", "NVIDIA A10G": "a10g", "NVIDIA L4": "l4", "Tesla T4": "t4",
             "NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000",
             "NVIDIA GeForce RTX 4090": "nvidia-geforce-rtx-4090"}
    assert {name: gpu_check.gpu_family(name) for name in names} == names
    assert (gpu_check.image_tokens("7b"), gpu_check.image_tokens("bench")) == (576, 64)


def test_the_writer_merges_and_the_plan_reads_it_back(gpu_check, tmp_path):
    target = tmp_path / "measured.json"
    shutil.copy(MEASURED, target)
    found = record(gpu_check)
    write_record(target, "h100", found)
    records = measured_records(target)
    assert set(records) == {"h200", "cpu", "h100"}
    assert records["h100"].request_s == found["request_s"] and records["h100"].step_s == found["step_s"]
    shipped = json.loads(MEASURED.read_text())["records"]
    assert json.loads(target.read_text())["records"]["h200"] == shipped["h200"]  # the others kept as they were
    assert on_flavor("h100", records).slowdown == 1.0  # priced from its own record now, not the H200's scaled
    write_record(target, "h100", {**found, "step_s": 0.5})  # a second measurement replaces the first
    assert measured_records(target)["h100"].step_s == 0.5 and len(measured_records(target)) == 3
    fresh = tmp_path / "new.json"  # a missing file starts as a copy of the shipped measured.json
    write_record(fresh, "h100", found)
    assert set(measured_records(fresh)) == {"h200", "cpu", "h100"}


@pytest.mark.parametrize("change", [{"request_s": 0.0}, {"step_s": -1.0}, {"load_s": math.nan},
                                    {"prompt_tokens": "many"}, {"batch_size": 6.5}, {"params_billions": True}])
def test_a_record_whose_figures_are_not_positive_numbers_is_refused(gpu_check, tmp_path, change):
    target = tmp_path / "measured.json"
    shutil.copy(MEASURED, target)
    before = target.read_text()
    with pytest.raises(ValueError) as refused:
        write_record(target, "h100", {**record(gpu_check), **change})
    assert "refused" in str(refused.value) and "\n" not in str(refused.value)
    assert target.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["measured.json"]


def test_the_check_refuses_in_one_line_and_writes_nothing(gpu_check, tmp_path):
    target = tmp_path / "measured.json"
    shutil.copy(MEASURED, target)
    before = target.read_text()
    ok, names = gpu_check.OK, ("build", "suites", "costs")
    for cure, status, reason in (({"option_scoring_s": 0.0}, gpu_check.FAILED, "refused: a figure is not a positive "
                                  "number: request_s 0.0"),
                                 ({"items": 19}, gpu_check.FAILED, "refused: the cure run answered 19 items")):
        parts = {key: gpu_check.Part(key, key) for key in names}
        parts["build"].status, parts["build"].data = ok, BUILD
        runs = {"cure": gpu_check.Part("cure", "cure", ok, data={**CURE, **cure}),
                "simpleqa": gpu_check.Part("simpleqa", "simpleqa", ok, data=SIMPLEQA)}
        parts["suites"].data = runs
        args = Namespace(write_costs=str(target), limit=0, shape="7b")
        gpu_check.costs(parts["costs"], parts, args)
        assert parts["costs"].status == status and parts["costs"].result.startswith(reason), parts["costs"].result
        assert "\n" not in parts["costs"].result and target.read_text() == before
    runs["cure"].data = CURE
    runs["simpleqa"].status = gpu_check.FAILED
    gpu_check.costs(parts["costs"], parts, args)
    assert (parts["costs"].status, parts["costs"].result) == (gpu_check.FAILED, "not measured: simpleqa did not run")
    runs["simpleqa"].status = ok
    gpu_check.costs(parts["costs"], parts, args)
    assert parts["costs"].status == ok and parts["costs"].result.endswith(f"written to {target}")
    assert measured_records(target)["h100"].load_s == 12.5


def test_a_target_that_is_not_measured_json_is_refused_before_the_check_runs(gpu_check, tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert gpu_check.main(["--shape", "tiny", "--device", "cpu", "--write-costs", str(broken)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"error: --write-costs {broken}: cannot be read as measured.json") and "\n" not in error
    assert gpu_check.costs_target_problem(str(tmp_path / "no-folder" / "m.json")).endswith("does not exist")
    assert gpu_check.costs_target_problem(str(tmp_path / "m.json")) is None
    (tmp_path / "list.json").write_text("[]")
    assert "not of measured.json's shape" in gpu_check.costs_target_problem(str(tmp_path / "list.json"))
