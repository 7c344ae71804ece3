"""A run's plan, before it runs: each benchmark's workload against the requests its plan really makes, a model's
facts from its folder, the hours and dollars per machine from the measured per-call costs, thinking counted, the lite
suites sized to 30 minutes of one H100 for a 7B model, and `python -m evaluator plan`."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evaluator.__main__ import main
from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.spec import PlanContext
from evaluator.benchmarks.workloads import count_plan, text_tokens
from evaluator.metrics.intervals import wilson
from evaluator.plans import widths
from evaluator.plans.costs import (LITE_TARGET_S, REFERENCE, cheapest_per_gpu, gpu_family, jobs_flavors,
                                   measured_records, on_cpu, on_flavor)
from evaluator.plans.estimate import fits, plan_run, thinking_counted
from evaluator.plans.facts import counted_parameters, facts_for
from tests import shaped_configs

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
ALL = ["cure", "simpleqa", "reform", "lave"]


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    root = tmp_path_factory.mktemp("shapes")
    return {name: shaped_configs.write(root / name, name) for name in shaped_configs.SHAPES}


@pytest.mark.parametrize("name,options,expect", [
    ("cure", {}, {"scorings": 77, "generations": 0}),
    ("cure", {"cure.mode": "generation"}, {"scorings": 0, "generations": 77, "new_tokens": 77 * 16}),
    ("reform", {"reform.mode": "likelihood"}, {"generations": 13}),  # the free-form items alone generate
    ("reform", {"reform.repeats": "2"}, {"scorings": 74, "generations": 74 + 13}),
    ("simpleqa", {"simpleqa.frequency": "off", "simpleqa.confidence": "off"}, {"generations": 31, "judge_calls": 31}),
    ("simpleqa", {}, {"generations": 31 * 7, "judge_calls": 31 * 3}),  # the sample runs both calibrations
    ("lave", {"lave.max_new_tokens": "8"}, {"generations": 30, "new_tokens": 240, "judge_calls": 30}),
])
def test_a_sample_workload_counts_the_requests_its_plan_makes(name, options, expect):
    benchmark = get_benchmark(name)
    ctx = PlanContext(options=options)
    counted = benchmark.workload(ctx)
    asks = benchmark.plan(ctx).asks
    assert counted.total("generations") == sum(a.options is None for a in asks)
    assert counted.total("scorings") == sum(a.options is not None for a in asks)
    assert counted.total("new_tokens") == sum(a.request.max_new_tokens for a in asks if a.options is None)
    for what, value in expect.items():
        assert counted.total(what) == pytest.approx(value), what


@pytest.mark.parametrize("name,mode", [("cure", "likelihood"), ("cure", "generation"), ("reform", "both")])
def test_the_prompt_token_constants_are_the_sample_suites_means(name, mode):
    # the full and lite suites are counted with constants: they must stay the sample's means (within a tenth)
    import importlib

    cure_work = importlib.import_module("evaluator.benchmarks.cure.workload")
    reform_work = importlib.import_module("evaluator.benchmarks.reform.workload")

    asks = get_benchmark(name).plan(PlanContext(options={f"{name}.mode": mode})).asks

    def mean(chosen):
        texts = [text_tokens(a.request.text) + sum(text_tokens(t["content"]) for t in a.request.history)
                 for a in chosen]
        return sum(texts) / len(texts)
    if name == "cure":
        assert cure_work.PROMPT_TOKENS[mode] == pytest.approx(mean(asks), rel=0.1)
    else:
        mc = [a for a in asks if a.rows[0]["form"] == "multiple_choice"]
        assert reform_work.GENERATION_PROMPT_TOKENS == pytest.approx(mean([a for a in mc if a.options is None]),
                                                                     rel=0.1)
        assert reform_work.LIKELIHOOD_PROMPT_TOKENS == pytest.approx(mean([a for a in mc if a.options]), rel=0.1)


@pytest.mark.skipif(not (SHARED / "cure" / "cot_consistency_eval.jsonl").is_file(), reason="real CURE data not found "
                    "at ../shared/data/cure (read from there; not shipped)")
@pytest.mark.parametrize("mode", ["likelihood", "generation"])
def test_cures_full_workload_counted_offline_is_the_real_files_plan(mode):
    benchmark = get_benchmark("cure")
    source = {"cure": str(SHARED / "cure" / "cot_consistency_eval.jsonl")}
    real = count_plan(benchmark.plan(PlanContext(suite="full", sources=source, options={"cure.mode": mode})),
                      "cure", "full", "instance", "")
    table = benchmark.workload(PlanContext(suite="full", options={"cure.mode": mode}))
    for what in ("items", "generations", "scorings", "options", "new_tokens"):
        assert table.total(what) == pytest.approx(real.total(what)), what
    assert table.total("scorings" if mode == "likelihood" else "generations") == 6348


def test_a_limit_keeps_each_kinds_share_and_reform_counts_its_limit_per_dimension():
    cure = get_benchmark("cure").workload(PlanContext(suite="full", limit=100))
    assert cure.items == 100 and "cut to the first 100 items" in cure.basis
    reform = get_benchmark("reform").workload(PlanContext(suite="full", limit=2))
    assert reform.items == 16  # 2 per dimension, 8 dimensions, as planning.select takes them


def test_a_models_parameters_are_counted_from_its_weights_headers(tiny_llava):
    from safetensors import safe_open

    folder = Path(tiny_llava.folder)
    with safe_open(str(next(folder.glob("*.safetensors"))), "pt") as weights:
        exact = sum(math.prod(weights.get_slice(k).get_shape()) for k in weights.keys())
    count, basis = counted_parameters(folder, json.loads((folder / "config.json").read_text()))
    assert count == exact and basis == "counted from its safetensors headers"


def test_the_shaped_configs_give_the_published_sizes_and_image_tokens(shapes):
    llava, qwen, scout = (facts_for(str(shapes[n])) for n in ("llava-1.5-7b", "qwen3-vl-8b", "llama-4-scout"))
    assert llava.params == pytest.approx(7.06e9, rel=0.03) and llava.active == llava.params
    assert llava.image_tokens == 576 and not llava.thinks
    assert qwen.params == pytest.approx(8.77e9, rel=0.05) and qwen.thinks and qwen.switch
    assert qwen.image_tokens == 25 * 19  # an 800x600 picture at 32 pixels a token
    assert scout.params == pytest.approx(109e9, rel=0.03) and scout.active == pytest.approx(17e9, rel=0.1)
    assert "1 of 16 experts a token" in scout.params_basis


def test_thinking_adds_its_budget_to_every_generation_and_off_adds_nothing(shapes):
    qwen = facts_for(str(shapes["qwen3-vl-8b"]))
    records = measured_records()
    on = plan_run(qwen, ALL, "lite", [on_flavor("h200", records)], thinking="on", thinking_budget=4096)
    off = plan_run(qwen, ALL, "lite", [on_flavor("h200", records)], thinking="off")
    assert on.total("thinking") == 4096 * on.total("generations") and off.total("thinking") == 0
    assert on.on("h200").model_s > 10 * off.on("h200").model_s
    assert thinking_counted(qwen, "auto")[0] and not thinking_counted(facts_for(str(shapes["llava-1.5-7b"])), "on")[0]
    with pytest.raises(ValueError, match="--thinking must be one of"):
        thinking_counted(qwen, "maybe")


def test_the_lite_suites_run_a_7b_model_in_30_minutes_on_one_h100_by_the_plan(shapes):
    llava = facts_for(str(shapes["llava-1.5-7b"]))
    records = measured_records()
    run = plan_run(llava, ALL, "lite", [on_flavor(REFERENCE, records)], thinking="off")
    assert run.on(REFERENCE).seconds <= LITE_TARGET_S
    full = plan_run(llava, ALL, "full", [on_flavor(REFERENCE, records)], thinking="off")
    assert full.on(REFERENCE).seconds > 10 * run.on(REFERENCE).seconds  # what the lite suite saves


def test_hardware_is_priced_from_its_own_record_else_the_reference_by_bandwidth():
    records = measured_records()
    h200, a100, cpu = on_flavor("h200", records), on_flavor("a100-large", records), on_cpu(records)
    assert h200.slowdown == 1.0 and h200.usd_per_hour == 5.0 and "measured on" in h200.speed_basis
    assert a100.slowdown == pytest.approx(4.8 / 2.0) and "not measured on it" in a100.speed_basis
    assert on_flavor("a100-large", records, {"a100-large": 3.1}).usd_per_hour == 3.1  # the Hub's own list wins
    assert cpu.usd_per_hour is None and cpu.measured.batch_size == 4
    assert gpu_family("l40sx4") == "l40s" and gpu_family("l4x1") == "l4" and gpu_family("cpu-basic") is None
    assert all(gpu_family(name) for name in jobs_flavors())


def test_only_the_cheapest_flavor_of_each_gpu_that_holds_the_model_is_listed(shapes):
    records = measured_records()
    machines = [on_flavor(name, records) for name in jobs_flavors()]
    scout = facts_for(str(shapes["llama-4-scout"]))
    listed = {m.name for m in cheapest_per_gpu(machines, lambda m: fits(scout, m))}
    assert "h200x2" in listed and "h200" not in listed and "a100-large" not in listed  # 218 GB of weights


def test_the_cli_prints_a_plan_with_what_each_figure_rests_on(shapes, capsys):
    assert main(["plan", "--model", str(shapes["llava-1.5-7b"]), "--suite", "lite"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"plan: {shapes['llava-1.5-7b']} (LlavaForConditionalGeneration), suite lite")
    for said in ("cure: 500 items; 1,956 option scorings", "simpleqa: 1,000 items; 1,000 generations",
                 "judge: 1,000 calls", "lave: 100 items", 'hours (h:mm, days as "d") and dollars, at most',
                 "  h100 ", "  cpu ",
                 "what the figures rest on:", "CURE sample through the CLI", "the judge: 3 s a call",
                 "image tokens: 576 a picture"):
        assert said in out, said


def test_the_cli_refuses_an_unknown_flavor_and_a_text_model_skips_the_image_benchmarks(shapes, tiny_llama, capsys):
    assert main(["plan", "--model", str(shapes["llava-1.5-7b"]), "--flavors", "h900"]) == 1
    assert "error: unknown Jobs flavor 'h900'" in capsys.readouterr().err
    assert main(["plan", "--model", str(tiny_llama.folder), "--flavors", "a10g-small"]) == 0
    out = capsys.readouterr().out
    assert "cure: skipped: a text-only model, and it needs images" in out and "simpleqa: 31 items" in out


def test_expected_widths_are_wilsons_interval_at_the_effective_items():
    low, high = wilson(250, 500)
    assert widths.half_width([(1.0, 500)]) == pytest.approx(100 * (high - low) / 2)
    assert widths.half_width([(0.5, 100), (0.5, 100)]) == pytest.approx(widths.half_width([(1.0, 200)]))
    weights = get_benchmark("reform").headline_weights({n: 10 for n, _ in get_benchmark("reform").CARD.lite.strata})
    assert sum(weights.values()) == pytest.approx(1.0) and weights["MSCOCO-caption"] == 0.0
    for found in (widths.expected(n) for n in ALL):
        assert 0 < found.full_half_width < found.lite_half_width < 15, found
