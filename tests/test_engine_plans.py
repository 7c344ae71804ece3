"""Issue 68, point 3: the plan knows the engine. `python -m evaluator plan --engine vllm` prices a run served by vLLM
(continuous batching: every answer token at the decode rate, no batch waiting for its longest reply; a question scored
by likelihood as 1 + K prefills) from vLLM's published throughput, and every figure says whether it was measured,
published or assumed."""
from __future__ import annotations

import json

import pytest

from evaluator import api
from evaluator.__main__ import main
from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.spec import PlanContext
from evaluator.plans.costs import BANDWIDTH_TBPS, measured_records
from evaluator.plans.engines import PUBLISHED, VLLM, engine_records, marks, on_engine
from evaluator.plans.estimate import plan_run
from evaluator.plans.facts import facts_for
from tests import shaped_configs

ALL = ["cure", "simpleqa", "reform", "lave"]
VLLM_BLOG = "https://blog.vllm.ai/2024/09/05/perf-update.html"


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    root = tmp_path_factory.mktemp("shapes")
    return {name: shaped_configs.write(root / name, name) for name in shaped_configs.SHAPES}


def test_vllm_prices_a_thinking_models_answers_far_below_a_static_batch(shapes):
    qwen = facts_for(str(shapes["qwen3-vl-8b"]))
    records = measured_records()
    static = plan_run(qwen, ALL, "lite", [on_engine("h200", records)], thinking="on", thinking_budget=4096)
    served = plan_run(qwen, ALL, "lite", [on_engine("h200", records, VLLM)], thinking="on", thinking_budget=4096)
    assert served.engine == VLLM and static.engine == "transformers"
    assert served.total("thinking") == static.total("thinking") > 0  # the same workload, priced differently
    on = (static.on("h200").hardware, served.on("h200").hardware)
    answers = {b.name: tuple(b.seconds(machine, qwen, 64) for machine in on) for b in served.benchmarks}
    assert answers["simpleqa"][1] < answers["simpleqa"][0] / 3  # text answers: no padded batch of 64 to wait for
    assert served.on("h200").model_s < static.on("h200").model_s / 2
    calm = plan_run(qwen, ALL, "lite", [on_engine("h200", records, VLLM)], thinking="off")
    assert served.on("h200").model_s > 3 * calm.on("h200").model_s  # the thought still costs its tokens


def test_vllm_scores_an_option_question_as_one_plus_k_prefills():
    workload = get_benchmark("cure").workload(PlanContext(suite="lite"))  # option scorings only, one image each
    h200 = on_engine("h200", measured_records(), VLLM)
    record = h200.served
    image_tokens, active = 576.0, record.params_billions * 1e9
    expected = 0.0
    for part in workload.parts:
        requests = part.items * part.scorings * (1 + part.options)  # the prompt, then each option
        expected += requests * (part.prompt_tokens + part.images * image_tokens) / record.prefill.value
        expected += requests / record.decode.value  # max_tokens=1: one token decoded each
    plan = plan_run(facts_for_cure(active), ["cure"], "lite", [h200], thinking="off")
    assert plan.on("h200").model_s == pytest.approx(expected * BANDWIDTH_TBPS["h100"] / BANDWIDTH_TBPS["h200"])
    assert plan.total("scorings") == workload.total("scorings") and plan.total("generations") == 0


def facts_for_cure(params: float):
    """A dense VLM of `params` parameters and 576 image tokens a picture, no thinking."""
    return api.plan_facts("org/vlm", {"vision_config": {"image_size": 336, "patch_size": 14}},
                          "LlavaForConditionalGeneration", True, params)


def test_every_figure_is_marked_measured_published_or_assumed():
    records = measured_records()
    assert marks(on_engine("h100", records, VLLM)) == {
        "prompts": f"published ({VLLM_BLOG})", "generation": f"published ({VLLM_BLOG})",
        "loading": "assumed (https://blog.vllm.ai/2025/10/26/sleep-mode.html)"}
    assert marks(on_engine("h100", records)) == {name: "measured (H200, 2026-11-26)"
                                                 for name in ("prompts", "generation", "loading")}
    served = engine_records()["vllm-h100"]
    assert "not measured here" in served.decode.status and served.decode.value == 7900
    assert served.prefill.value == 27000 and served.start.status == "assumed"
    h200 = on_engine("h200", records, VLLM)
    assert h200.slowdown == pytest.approx(3.35 / 4.8) and "x 0.70 (memory bandwidth 3.35" in h200.speed_basis
    assert "tensor parallelism would be faster" in on_engine("h200x2", records, VLLM).speed_basis
    with pytest.raises(ValueError, match="--engine must be one of transformers, vllm"):
        on_engine("h200", records, "sglang")


def test_a_malformed_published_record_is_refused_naming_it(tmp_path):
    data = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    data["records"]["vllm-h100"]["figures"]["decode_tokens_s"]["value"] = 0
    (tmp_path / "published.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="published.json: record 'vllm-h100' is malformed"):
        engine_records(tmp_path / "published.json")


def test_the_cli_plans_on_vllm_with_its_marks(shapes, tiny_llava, capsys):
    assert main(["plan", "--model", str(shapes["llava-1.5-7b"]), "--suite", "lite", "--engine", "vllm"]) == 0
    out = capsys.readouterr().out
    assert "  engine: vllm (served, continuous batching: no batch waits for its longest reply)" in out
    assert f"27,000 prompt tokens a second: published ({VLLM_BLOG})" in out
    assert f"7,900 answer tokens a second: published ({VLLM_BLOG})" in out
    assert "90 s to start the server: assumed (" in out and "1 + K requests" in out
    assert "  cpu " not in out and "  h100 " in out and "measured (" not in out
    assert main(["plan", "--model", str(tiny_llava.folder), "--engine", "vllm", "--flavors", "a10g-small"]) == 0
    tiny = capsys.readouterr().out
    assert "  a10g-small " in tiny and "vllm figures x 5.58" in tiny
    assert main(["plan", "--model", str(shapes["llava-1.5-7b"]), "--suite", "lite"]) == 0
    default = capsys.readouterr().out
    assert "  engine: transformers (" in default and "measured (H200, 2026-11-26)" in default
    with pytest.raises(SystemExit):  # argparse's choices
        main(["plan", "--model", str(shapes["llava-1.5-7b"]), "--engine", "sglang"])

