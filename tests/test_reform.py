"""ReForm-Eval benchmark: the prompt builder (marks, shuffling, templates) and a run on the real tiny LLaVA."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from evaluator.benchmarks import get_benchmark, reform
from evaluator.benchmarks.base import BenchmarkContext
from evaluator.benchmarks.reform_data import DIMENSIONS, MC
from evaluator.metrics.reform import extract_option
from evaluator.models.base import GenerationRequest
from evaluator.models.transformers_adapter import fold_history

OPTIONS = ["red", "green", "blue", "yellow"]


# ------------------------------------------------------------------------------------------------ prompt builder

def test_registered_with_images():
    mod = get_benchmark("reform")
    assert mod.NAME == "reform" and mod.NEEDS_IMAGES is True


def test_marks_in_every_style_map_back_to_their_index():
    assert reform.list_options(["x", "y"], "upper") == "(A) x; (B) y"
    assert reform.list_options(["x", "y"], "lower") == "(a) x; (b) y"
    assert reform.list_options(["x", "y"], "number") == "(1) x; (2) y"
    for style in reform.MARK_STYLES:
        for i, mark in enumerate(reform.marks(style, 4)):
            assert extract_option(f"{mark} something", 4) == i
    with pytest.raises(ValueError):
        reform.marks("roman", 2)


def test_prompts_are_ours_and_there_are_at_least_five_templates():
    prompts = reform.load_prompts()
    gen = reform.split_templates(prompts["reform_gen_templates"])
    lik = reform.split_templates(prompts["reform_lik_templates"])
    assert len(gen) >= 5 and len(lik) >= 5
    assert all("{question}" in t and "{options}" in t for t in gen)
    assert all("{question}" in t and "{options}" not in t for t in lik)
    assert prompts["reform_example_answer"].strip() == "(B)"
    assert "(B)" in prompts["reform_example"] and "(A)" in prompts["reform_example"]
    history = reform.example_history(prompts)
    assert [t["role"] for t in history] == ["user", "assistant"] and history[1]["content"] == "(B)"


def test_repeats_use_different_templates_shuffled_orders_and_marks_deterministically():
    plans = [reform.plan_repeat("q-1", OPTIONS, r, 6, seed=0) for r in range(5)]
    again = [reform.plan_repeat("q-1", OPTIONS, r, 6, seed=0) for r in range(5)]
    assert plans == again
    assert len({p["template_id"] for p in plans}) == 5
    assert all(sorted(p["order"]) == [0, 1, 2, 3] for p in plans)
    assert len({tuple(p["order"]) for p in plans}) > 1
    assert all(p["mark_style"] in reform.MARK_STYLES for p in plans)
    other = [reform.plan_repeat("q-1", OPTIONS, r, 6, seed=1) for r in range(5)]
    assert other != plans
    fixed = [reform.plan_repeat("q-1", OPTIONS, r, 6, mark_mode="lower") for r in range(5)]
    assert {p["mark_style"] for p in fixed} == {"lower"}
    # many items: every style turns up under "random"
    styles = {reform.plan_repeat(f"q-{k}", OPTIONS, 0, 6)["mark_style"] for k in range(40)}
    assert styles == set(reform.MARK_STYLES)


def test_generation_and_likelihood_texts():
    text = reform.generation_text("Q: {question}\nOptions: {options}", " What colour? ", ["a", "b"], "upper")
    assert text == "Q: What colour?\nOptions: (A) a; (B) b"
    assert reform.likelihood_text("Q: {question}", "What?") == "Q: What?"
    item = {"history": [{"from": "human", "value": "hi"}, {"from": "assistant", "value": "(A) red"}]}
    assert reform.dialogue_history(item) == [{"role": "user", "content": "hi"},
                                             {"role": "assistant", "content": "(A) red"}]
    assert reform.repeat_seed(0, 1) == reform.repeat_seed(0, 1) != reform.repeat_seed(0, 2) != reform.repeat_seed(1, 2)


def test_history_folds_into_the_text_without_a_chat_template():
    turns = [{"role": "user", "content": "Example?"}, {"role": "assistant", "content": "(B)"}]
    assert fold_history([], "Q") == "Q"
    assert fold_history(turns, "Q") == "User: Example?\nAssistant: (B)\nUser: Q"
    assert GenerationRequest(text="x").history == []


def test_limit_keeps_that_many_items_per_dimension():
    items = [{"dimension": d, "question_id": f"{d}-{k}"} for d in ("a", "b") for k in range(4)]
    assert [i["question_id"] for i in reform._select(items, 2)] == ["a-0", "a-1", "b-0", "b-1"]
    assert reform._select(items, 0) == items


# ------------------------------------------------------------------------------------------------ tiny LLaVA

@pytest.fixture(scope="module")
def llava(tiny_folder):
    from evaluator.models import load_model

    return load_model(str(tiny_folder("llava")))


def _run(model, **options):
    seen = []
    ctx = BenchmarkContext(limit=2, options=options, progress=lambda done, total: seen.append((done, total)))
    return reform.run(model, ctx), seen


@pytest.fixture(scope="module")
def both(llava):
    return _run(llava)


def test_run_both_modes_on_the_tiny_llava(both):
    result, seen = both
    scores, counts = result.scores, result.counts
    for dim in DIMENSIONS:
        for prefix in ("gen", "lik"):
            assert f"{prefix}_{dim}" in scores, (prefix, dim)
            assert 0.0 <= scores[f"{prefix}_{dim}"] <= 10.0  # CIDEr may exceed 1
    for key in ("gen_overall", "lik_overall", "lik_mean_overall", "format_hit_rate", "instability",
                "lik_instability"):
        assert not math.isnan(scores[key]), key
    assert 0.0 <= scores["format_hit_rate"] <= 1.0
    assert 0.0 <= scores["instability"] <= math.log(5) + 1e-9
    assert 0.0 <= scores["lik_instability"] <= math.log(5) + 1e-9
    assert counts["items"] == 2 * len(DIMENSIONS) and counts["repeats"] == 5
    assert seen[-1] == (counts["items"], counts["items"])
    assert result.extra["settings"]["repeats"] == 5 and result.extra["gen_datasets"]

    df = pd.DataFrame(result.details)
    assert all(list(row) == list(result.details[0]) for row in result.details)  # same columns every row
    df.to_parquet(__import__("io").BytesIO())  # one type per column
    mc = df[df["form"] == MC]
    gen = mc[mc["mode"] == "generation"]
    lik = mc[mc["extraction"] == "likelihood"]
    assert len(gen) == counts["multiple_choice"] * 5 and len(lik) == counts["multiple_choice"] * 5
    assert set(mc[mc["mode"] == "likelihood"]["extraction"]) == {"likelihood", "likelihood_mean"}
    for _, row in gen.iterrows():
        shown = json.loads(row["options"])
        assert reform.list_options(shown, row["mark_style"]) in row["prompt"]  # the option list, as sent
        assert "(B)" in row["prompt"]  # the one-shot example comes first
        assert row["prompt"].index("Which of these is a fruit?") < row["prompt"].index(shown[0])
    for _, row in lik.iterrows():
        shown = json.loads(row["options"])
        question_turn = row["prompt"].rsplit("<image>", 1)[1]  # after the dialogue history, if any
        assert "(A)" not in question_turn and "(a)" not in question_turn and "(1)" not in question_turn
        assert all(reform.list_options(shown, style) not in row["prompt"] for style in reform.MARK_STYLES)
        assert "Which of these is a fruit?" not in row["prompt"]
        assert row["prediction"] in shown and len(json.loads(row["option_scores"])) == len(shown)
    # each MC item's repeats: different templates, deterministic
    for _, group in gen.groupby("question_id"):
        assert group["template_id"].nunique() == 5
    free = df[df["form"] != MC]
    assert set(free["extraction"]) <= {"ocr", "kie", "caption"} and (free["mode"] == "generation").all()
    assert set(df["dimension"]) == set(DIMENSIONS)
    # multi-turn items carry their history before the question
    dialogue = gen[gen["dimension"] == "multi_turn_dialogue"]
    assert dialogue["prompt"].str.count("assistant").min() >= 2


def test_same_seed_same_prompts_and_modes_alone(llava, both):
    result, _ = both
    gen_only, _ = _run(llava, **{"reform.mode": "generation", "reform.repeats": "5"})
    prompts_both = [r["prompt"] for r in result.details if r["mode"] == "generation"]
    prompts_gen = [r["prompt"] for r in gen_only.details if r["mode"] == "generation"]
    assert prompts_both == prompts_gen
    assert "lik_overall" not in gen_only.scores and "gen_overall" in gen_only.scores
    lik_only, _ = _run(llava, **{"reform.mode": "likelihood", "reform.repeats": "2", "reform.seed": "3"})
    assert "gen_overall" not in lik_only.scores and "lik_overall" in lik_only.scores
    assert {r["repeat"] for r in lik_only.details if r["mode"] == "likelihood"} == {0, 1}
    with pytest.raises(ValueError):
        _run(llava, **{"reform.mode": "bogus"})


def test_sampled_repeats_share_a_seed_so_they_batch(llava, monkeypatch):
    """All items of one repeat carry the same sampling seed, so the adapter runs them as one batch (a seed per item
    would make every sampled request a batch of one)."""
    batches = []
    original = llava._generate_batch

    def spy(batch, temperature, seed):
        batches.append((temperature, seed, len(batch)))
        return original(batch, temperature, seed)

    monkeypatch.setattr(llava, "_generate_batch", spy)
    ctx = BenchmarkContext(limit=1, options={"reform.mode": "generation", "reform.repeats": "2"}, batch_size=64)
    result = reform.run(llava, ctx)
    sampled = [b for b in batches if b[0] > 0]
    assert {seed for _, seed, _ in sampled} == {reform.repeat_seed(0, 0), reform.repeat_seed(0, 1)}
    n_mc = result.counts["multiple_choice"]
    assert sum(size for *_, size in sampled) == 2 * n_mc and max(size for *_, size in sampled) > 1
