"""ReForm-Eval benchmark: the card, the prompt builder (marks, shuffling, templates), the plan, and runs on the real
tiny LLaVA the way the runner does them (plan, execute, details file, score)."""
from __future__ import annotations

import copy
import json
import math

import pandas as pd
import pytest
from PIL import Image

from evaluator.benchmarks import card_problems, get_benchmark
from evaluator.benchmarks.reform import CARD, datasets, files, planning, prompts, scoring
from evaluator.benchmarks.reform.datasets import DIMENSIONS, MC
from evaluator.benchmarks.seeds import item_seed
from evaluator.benchmarks.spec import NUMBER, PlanContext, ScoreContext
from evaluator.inputs.images import encode_image_base64
from evaluator.metrics.reform import extract_option
from evaluator.models.base import GenerationRequest
from evaluator.models.transformers_adapter import fold_history
from evaluator.runs.details import read_details, write_details
from tests.benchmark_runs import run_benchmark

OPTIONS = ["red", "green", "blue", "yellow"]


# ------------------------------------------------------------------------------------------------ card

def test_registered_with_images():
    mod = get_benchmark("reform")
    assert mod.CARD is CARD and CARD.name == "reform" and CARD.needs_images is True and CARD.needs_judge is False


def test_card_fits_the_contract():
    assert card_problems(CARD, "reform") == []
    assert CARD.title == "ReForm-Eval" and CARD.short_title == "ReForm"
    assert CARD.paper == "https://arxiv.org/abs/2310.02569" and CARD.default_metric == "gen_overall"
    assert CARD.grader is None and CARD.sections == ()
    assert [s.key for s in CARD.sources] == ["reform"] and CARD.sources[0].setting == "LEADERBOARD_REFORM_DATASETS"
    assert {o.key: o.default for o in CARD.options} == {
        "reform.mode": "both", "reform.repeats": "5", "reform.marks": "random", "reform.seed": "0",
        "reform.max_new_tokens": "16", "reform.free_max_new_tokens": "32"}
    view = CARD.item_view
    assert view.question == "question" and view.grade == "correct"
    assert view.group_by == ("dimension", "dataset", "form", "mode")


def test_card_metrics_keys_and_board_labels():
    keys = [m.key for m in CARD.metrics]
    assert keys[:4] == ["gen_overall", "lik_overall", "instability", "format_hit_rate"]
    dims = [f"{mode}_{dim}" for mode in ("gen", "lik") for dim in DIMENSIONS]
    assert keys[4:20] == dims
    shown = [m.key for m in CARD.metrics if m.shown]
    assert shown == ["gen_overall", "lik_overall", "instability", "format_hit_rate"]
    instability = CARD.metric("instability")
    assert instability.kind == NUMBER and instability.higher_is_better is False
    labels = {f"reform_{m.key}": f"{CARD.short_title} {m.label}" for m in CARD.metrics}
    assert labels["reform_gen_overall"] == "ReForm gen overall"
    assert labels["reform_lik_overall"] == "ReForm lik overall"
    assert labels["reform_instability"] == "ReForm instability"
    assert labels["reform_format_hit_rate"] == "ReForm format hit rate"
    assert labels["reform_gen_coarse_perception"] == "ReForm gen coarse perception"
    assert labels["reform_lik_cross_modal_inference"] == "ReForm lik cross-modal inference"
    assert labels["reform_gen_multi_turn_dialogue"] == "ReForm gen multi-turn dialogue"
    assert "CIDEr" in CARD.metric("lik_description").description
    assert not any(m.judged for m in CARD.metrics)
    # the description dimension is a CIDEr, not a percentage, and says it stays out of the overall score
    for mode in ("gen", "lik"):
        description = CARD.metric(f"{mode}_description")
        assert description.kind == NUMBER and "CIDEr" in description.label and "not part of the overall" in \
            description.description
        assert CARD.metric(f"{mode}_spatial").kind != NUMBER
        assert "7 accuracy dimensions" in CARD.metric(f"{mode}_overall").description


def test_card_states_its_likelihood_rule_and_its_differences():
    rule = CARD.likelihood_rule
    assert "summed log-likelihood" in rule and all(w in rule for w in ("sum", "mean", "token count",
                                                                        "likelihood_mean", "recompute"))
    assert len(CARD.differences) >= 5 and all(d.strip().endswith(".") for d in CARD.differences)
    said = " ".join(CARD.differences)
    for topic in ("prompts are our own", "K-ViQuAE, A-OKVQRA and A-OKVQAR", "seeds", "gold answers of earlier rounds",
                  "whitespace dropped", "16 new tokens"):
        assert topic in said, topic
    assert "not run" not in said  # issue 41: all 61 run, so that is no difference
    # issue 29: the OCR list rule and the bare option text now follow the reference, so neither is a difference
    assert "any one of them" not in said and "never equal to an option's text" not in said


def test_each_dimension_column_says_over_how_many_datasets():
    """Issue 29: a dimension's column description (the board and the About tab read it) gives the number of datasets
    its mean is over in the full suite, out of the reference's (issue 41: all of them)."""
    expected = {"coarse_perception": (9, 9), "fine_perception": (10, 10), "scene_text": (15, 15),
                "visual_reasoning": (12, 12), "spatial": (3, 3), "cross_modal_inference": (6, 6), "description": (4, 4),
                "multi_turn_dialogue": (2, 2)}
    assert {dim: datasets.dimension_counts(dim) for dim in DIMENSIONS} == expected
    for mode in ("gen", "lik"):
        for dim, (run, listed) in expected.items():
            text = CARD.metric(f"{mode}_{dim}").description
            assert f"over {run} of the reference's {listed} datasets" in text, (mode, dim)
    assert not any("not run" in m.description for m in CARD.metrics)


# ------------------------------------------------------------------------------------------------ prompt builder

def test_marks_in_every_style_map_back_to_their_index():
    assert prompts.list_options(["x", "y"], "upper") == "(A) x; (B) y"
    assert prompts.list_options(["x", "y"], "lower") == "(a) x; (b) y"
    assert prompts.list_options(["x", "y"], "number") == "(1) x; (2) y"
    for style in prompts.MARK_STYLES:
        for i, mark in enumerate(prompts.marks(style, 4)):
            assert extract_option(f"{mark} something", 4) == i
    with pytest.raises(ValueError):
        prompts.marks("roman", 2)


def test_prompts_are_ours_and_there_are_at_least_five_templates():
    texts = prompts.load_prompts()
    gen = prompts.split_templates(texts["reform_gen_templates"])
    lik = prompts.split_templates(texts["reform_lik_templates"])
    assert len(gen) >= 5 and len(lik) >= 5
    assert all("{question}" in t and "{options}" in t for t in gen)
    assert all("{question}" in t and "{options}" not in t for t in lik)
    assert texts["reform_example_answer"].strip() == "(B)"
    assert "(B)" in texts["reform_example"] and "(A)" in texts["reform_example"]
    history = prompts.example_history(texts)
    assert [t["role"] for t in history] == ["user", "assistant"] and history[1]["content"] == "(B)"


def test_repeats_use_different_templates_shuffled_orders_and_marks_deterministically():
    plans = [prompts.plan_repeat("q-1", OPTIONS, r, 6, seed=0) for r in range(5)]
    again = [prompts.plan_repeat("q-1", OPTIONS, r, 6, seed=0) for r in range(5)]
    assert plans == again
    assert len({p["template_id"] for p in plans}) == 5
    assert all(sorted(p["order"]) == [0, 1, 2, 3] for p in plans)
    assert len({tuple(p["order"]) for p in plans}) > 1
    assert all(p["mark_style"] in prompts.MARK_STYLES for p in plans)
    other = [prompts.plan_repeat("q-1", OPTIONS, r, 6, seed=1) for r in range(5)]
    assert other != plans
    fixed = [prompts.plan_repeat("q-1", OPTIONS, r, 6, mark_mode="lower") for r in range(5)]
    assert {p["mark_style"] for p in fixed} == {"lower"}
    # many items: every style turns up under "random"
    styles = {prompts.plan_repeat(f"q-{k}", OPTIONS, 0, 6)["mark_style"] for k in range(40)}
    assert styles == set(prompts.MARK_STYLES)


def test_generation_and_likelihood_texts():
    text = prompts.generation_text("Q: {question}\nOptions: {options}", " What colour? ", ["a", "b"], "upper")
    assert text == "Q: What colour?\nOptions: (A) a; (B) b"
    assert prompts.likelihood_text("Q: {question}", "What?") == "Q: What?"
    item = {"history": [{"from": "human", "value": "hi"}, {"from": "assistant", "value": "(A) red"}]}
    assert prompts.dialogue_history(item) == [{"role": "user", "content": "hi"},
                                              {"role": "assistant", "content": "(A) red"}]


def test_history_folds_into_the_text_without_a_chat_template():
    turns = [{"role": "user", "content": "Example?"}, {"role": "assistant", "content": "(B)"}]
    assert fold_history([], "Q") == "Q"
    assert fold_history(turns, "Q") == "User: Example?\nAssistant: (B)\nUser: Q"
    assert GenerationRequest(text="x").history == []


def test_limit_keeps_that_many_items_per_dimension():
    items = [{"dimension": d, "question_id": f"{d}-{k}"} for d in ("a", "b") for k in range(4)]
    assert [i["question_id"] for i in planning.select(items, 2)] == ["a-0", "a-1", "b-0", "b-1"]
    assert planning.select(items, 0) == items


def _table_items(per_dataset: int = 3) -> list[dict]:
    """`per_dataset` items of every dataset of the full suite's table, in its order."""
    return [{"dimension": d.dimension, "dataset": d.name, "question_id": f"{d.name}-{k}"}
            for d in datasets.DATASETS for k in range(per_dataset)]


def test_limit_takes_the_datasets_of_a_dimension_in_turn():
    items = [{"dimension": "a", "dataset": ds, "question_id": f"{ds}-{k}"} for ds, n in (("x", 4), ("y", 1), ("z", 3))
             for k in range(n)] + [{"dimension": "b", "dataset": "w", "question_id": f"w-{k}"} for k in range(3)]
    picked = [i["question_id"] for i in planning.select(items, 5)]
    # round-robin x, y, z, then x, z (y has run out); kept in the suite's order
    assert picked == ["x-0", "x-1", "y-0", "z-0", "z-1", "w-0", "w-1", "w-2"]
    assert [i["question_id"] for i in planning.select(items, 2)] == ["x-0", "y-0", "w-0", "w-1"]


def test_a_limit_of_the_largest_dimension_covers_every_dataset_the_same_way_twice():
    items = _table_items()
    widest = max(sum(d.dimension == dim for d in datasets.DATASETS) for dim in DIMENSIONS)
    picked = planning.select(items, widest)
    assert {i["dataset"] for i in picked} == {d.name for d in datasets.DATASETS}
    for dim in DIMENSIONS:
        in_dim = [i for i in picked if i["dimension"] == dim]
        n_datasets = sum(d.dimension == dim for d in datasets.DATASETS)
        assert len(in_dim) == min(widest, 3 * n_datasets)
    assert planning.select(_table_items(), widest) == picked  # deterministic
    assert [items.index(i) for i in picked] == sorted(items.index(i) for i in picked)  # suite order kept
    one = planning.select(items, 1)  # below the number of datasets: the first dataset of each dimension
    assert [i["question_id"] for i in one] == [f"{next(d.name for d in datasets.DATASETS if d.dimension == dim)}-0"
                                               for dim in DIMENSIONS]


def test_the_overall_score_leaves_the_description_cider_out():
    def row(ds: str, dim: str, form: str, qid: str, prediction: str, gold: str, **extra) -> dict:
        return {"question_id": qid, "dataset": ds, "dimension": dim, "form": form, "mode": "generation",
                "extraction": "mark" if form == MC else form, "prediction": prediction, "gold": gold,
                "options": json.dumps(["yes", "no"]) if form == MC else "[]", "option_scores": "", **extra}

    caption_refs = {"c1": "a red circle on white", "c2": "two blue squares side by side"}
    rows = [row("vqa", "visual_reasoning", MC, "q1", "(A)", "0"), row("vqa", "visual_reasoning", MC, "q2", "(B)", "1"),
            row("sp", "spatial", MC, "s1", "(B)", "0")]
    rows += [row("cap", "description", "caption", k, v, json.dumps([v])) for k, v in caption_refs.items()]
    got = scoring.score(rows, ScoreContext(options={"reform.mode": "generation", "reform.repeats": "1"}))
    assert got.scores["gen_description"] == pytest.approx(10.0)  # a caption equal to its reference: CIDEr 10
    assert got.scores["gen_visual_reasoning"] == 1.0 and got.scores["gen_spatial"] == 0.0
    assert got.scores["gen_overall"] == 0.5  # (1.0 + 0.0) / 2, the CIDEr of 10 left out
    assert math.isnan(scoring.accuracy_mean({"description": 10.0}))  # no accuracy dimension: undefined


def test_item_keys_stay_question_ids_unless_datasets_share_one():
    items = [{"question_id": "0", "dataset": "MSCOCO-caption"}, {"question_id": "1", "dataset": "MSCOCO-caption"},
             {"question_id": "0", "dataset": "TextCaps"}, {"question_id": "q7", "dataset": "VQA-v2"},
             {"question_id": "0", "dataset": "TextCaps"}]
    assert planning.item_keys(items) == ["MSCOCO-caption/0", "1", "TextCaps/0", "q7", "TextCaps/0#2"]
    assert planning.item_keys(items[1:2] + items[3:4]) == ["1", "q7"]


# ------------------------------------------------------------------------------------------------ the plan

def test_plan_asks_item_by_item_and_repeat_by_repeat():
    plan = get_benchmark("reform").plan(PlanContext(limit=1, options={"reform.repeats": "2"}))
    assert len(plan.items) == len(DIMENSIONS) and len(set(plan.items)) == len(plan.items)
    assert [a.item for a in plan.asks] == sorted((a.item for a in plan.asks), key=plan.items.index)
    for item in plan.items:
        asks = [a for a in plan.asks if a.item == item]
        rows = [r for r in plan.rows if r["question_id"] == item]
        if rows[0]["form"] != MC:
            assert len(asks) == 1 and asks[0].options is None and asks[0].request.temperature == 0
            assert [r["extraction"] for r in rows] == [rows[0]["form"]]
            continue
        # generation then likelihood for repeat 0, then for repeat 1; one image loader for the item
        assert [a.options is None for a in asks] == [True, False, True, False]
        assert [a.request.seed for a in asks if a.options is None] == [item_seed("reform", 0, item, 0),
                                                                       item_seed("reform", 0, item, 1)]
        assert len({id(a.images) for a in asks}) == 1 and asks[0].images()[0].mode == "RGB"
        assert [(r["mode"], r["repeat"], r["extraction"]) for r in rows] == [
            ("generation", 0, "mark"), ("generation", 1, "mark"),
            ("likelihood", 0, "likelihood"), ("likelihood", 0, "likelihood_mean"),
            ("likelihood", 1, "likelihood"), ("likelihood", 1, "likelihood_mean")]
        assert asks[1].rows == rows[2:4] and asks[1].options == json.loads(rows[2]["options"])
        assert all(r["question"].strip() and r["question"] in asks[0].request.text for r in rows)
    assert all(list(r) == list(plan.rows[0]) for r in plan.rows)
    assert set(plan.prompts) == {"reform_ocr", "reform_kie", "reform_caption", "reform_gen_templates",
                                 "reform_example", "reform_example_answer", "reform_lik_templates"}


@pytest.mark.parametrize("options, message", [
    ({"reform.mode": "bogus"}, "reform.mode"),
    ({"reform.repeats": "0"}, "reform.repeats"),
    ({"reform.marks": "roman"}, "reform.marks"),
    ({"reform.seed": "x"}, "reform.seed"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        get_benchmark("reform").plan(PlanContext(options=options))
    with pytest.raises(ValueError, match=message):
        get_benchmark("reform").score([], ScoreContext(options=options))


def test_full_suite_plan_reads_the_named_datasets_and_hashes_the_question_wording(tmp_path, monkeypatch):
    image = encode_image_base64(Image.new("RGB", (16, 16), (9, 99, 199)))
    docs = {"huggingface_data/VSR/vsr_core_multiple_choice.json": {"data": [
                {"question_id": "0", "image": image, "question": "Is it left?", "answer": "yes",
                 "answer_options": ["yes", "no"]}]},
            "huggingface_data/MSCOCO/captions-sampled.json": {"dataset_name": "MSCOCO", "data": [
                {"img": image, "annos": ["a blue square", "blue"]}]}}
    calls = []

    def fake_hub(repo_id, filename, revision):
        calls.append(filename)
        path = tmp_path / filename.replace("/", "_")
        path.write_text(json.dumps(docs[filename]), encoding="utf-8")
        return str(path)

    monkeypatch.setattr(files, "hub_file", fake_hub)
    plan = get_benchmark("reform").plan(PlanContext(suite="full", sources={"reform": " VSR , MSCOCO-caption "},
                                                    options={"reform.repeats": "1"}))
    assert calls == [datasets.DATASETS_BY_NAME[n].hub_path for n in ("VSR", "MSCOCO-caption")]
    assert plan.items == ["VSR/0", "MSCOCO-caption/0"]  # both datasets number their items from 0
    assert {r["question_id"] for r in plan.rows} == set(plan.items)
    assert plan.prompts["reform_dataset_questions"].startswith("{")
    assert "{claim}" in plan.prompts["reform_mocheg"]
    with pytest.raises(ValueError, match="unknown ReForm-Eval dataset"):
        get_benchmark("reform").plan(PlanContext(suite="full", sources={"reform": "NoSuchSet"}))


# ------------------------------------------------------------------------------------------------ tiny LLaVA

@pytest.fixture(scope="module")
def llava(tiny_folder, one_torch_thread):
    from evaluator.models import load_model

    return load_model(str(tiny_folder("llava")))


def _run(model, tmp_path_factory, **options):
    seen = []
    folder = tmp_path_factory.mktemp("reform-run")
    result = run_benchmark("reform", model, limit=2, options=options, folder=folder,
                           progress=lambda done, total: seen.append((done, total)))
    return result, seen, folder


@pytest.fixture(scope="module")
def both(llava, tmp_path_factory):
    return _run(llava, tmp_path_factory)


def test_run_both_modes_on_the_tiny_llava(both):
    result, seen, _ = both
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
    assert set(result.prompts) >= {"reform_gen_templates", "reform_lik_templates", "reform_ocr"}

    df = pd.DataFrame(result.rows)
    assert all(list(row) == list(result.rows[0]) for row in result.rows)  # same columns every row
    assert all({k: type(v) for k, v in row.items()} == {k: type(v) for k, v in result.rows[0].items()}
               for row in result.rows)
    df.to_parquet(__import__("io").BytesIO())  # one type per column
    assert (df["question"].str.strip() != "").all()
    mc = df[df["form"] == MC]
    gen = mc[mc["mode"] == "generation"]
    lik = mc[mc["extraction"] == "likelihood"]
    assert len(gen) == counts["multiple_choice"] * 5 and len(lik) == counts["multiple_choice"] * 5
    assert set(mc[mc["mode"] == "likelihood"]["extraction"]) == {"likelihood", "likelihood_mean"}
    for _, row in gen.iterrows():
        shown = json.loads(row["options"])
        assert prompts.list_options(shown, row["mark_style"]) in row["prompt"]  # the option list, as sent
        assert "(B)" in row["prompt"]  # the one-shot example comes first
        assert row["prompt"].index("Which of these is a fruit?") < row["prompt"].index(shown[0])
    for _, row in lik.iterrows():
        shown = json.loads(row["options"])
        question_turn = row["prompt"].rsplit("<image>", 1)[1]  # after the dialogue history, if any
        assert "(A)" not in question_turn and "(a)" not in question_turn and "(1)" not in question_turn
        assert all(prompts.list_options(shown, style) not in row["prompt"] for style in prompts.MARK_STYLES)
        # the one-shot example comes first in likelihood mode too, as in the reference
        assert row["prompt"].index("Which of these is a fruit?") < row["prompt"].rindex(row["question"])
        assert row["prediction"] in shown and len(json.loads(row["option_scores"])) == len(shown)
    # the two likelihood rows of a repeat come from one scoring
    means = mc[mc["extraction"] == "likelihood_mean"]
    assert list(lik["option_scores"]) == list(means["option_scores"]) and list(lik["prompt"]) == list(means["prompt"])
    # each MC item's repeats: different templates, deterministic
    for _, group in gen.groupby("question_id"):
        assert group["template_id"].nunique() == 5
    free = df[df["form"] != MC]
    assert set(free["extraction"]) <= {"ocr", "kie", "caption"} and (free["mode"] == "generation").all()
    assert set(df["dimension"]) == set(DIMENSIONS)
    # multi-turn items carry their history before the question
    dialogue = gen[gen["dimension"] == "multi_turn_dialogue"]
    assert dialogue["prompt"].str.count("assistant").min() >= 2


def test_a_reader_recomputes_both_likelihood_choices_from_the_details(both, tmp_path):
    """The stored details keep every option's sum, mean and token count, and a likelihood_mean row beside each
    likelihood row: the summed-log-likelihood choice and the per-token-mean choice both follow from option_scores."""
    result, _, _ = both
    path = tmp_path / "reform.parquet"
    write_details(path, result.rows)
    details = pd.read_parquet(path)
    lik = details[details["mode"] == "likelihood"]
    by_sum = lik[lik["extraction"] == "likelihood"].reset_index(drop=True)
    by_mean = lik[lik["extraction"] == "likelihood_mean"].reset_index(drop=True)
    assert len(by_sum) == len(by_mean) > 0
    assert (by_sum[["question_id", "repeat", "option_scores"]] == by_mean[["question_id", "repeat",
                                                                          "option_scores"]]).all().all()
    differ = 0
    for (_, s_row), (_, m_row) in zip(by_sum.iterrows(), by_mean.iterrows()):
        scores = json.loads(s_row["option_scores"])
        assert len(scores) == len(json.loads(s_row["options"])) and all(set(o) == {"sum", "mean", "n_tokens"}
                                                                       for o in scores)
        assert all(o["n_tokens"] > 0 and o["mean"] == pytest.approx(o["sum"] / o["n_tokens"]) for o in scores)
        sums, means = [o["sum"] for o in scores], [o["mean"] for o in scores]
        assert int(s_row["parsed_answer"]) == sums.index(max(sums))
        assert int(m_row["parsed_answer"]) == means.index(max(means))
        assert s_row["correct"] == (s_row["parsed_answer"] == s_row["gold"])
        differ += s_row["parsed_answer"] != m_row["parsed_answer"]
    print(f"\nlikelihood repeats: {len(by_sum)}, sum and per-token-mean choices differ in {differ}")
    assert result.scores["lik_mc_accuracy"] == pytest.approx(by_sum["correct"].mean())
    assert result.scores["lik_mean_mc_accuracy"] == pytest.approx(by_mean["correct"].mean())


def test_scoring_the_stored_scored_details_again_gives_the_same(both, tmp_path):
    """What rescore does: the scored details file, read back and scored again, gives the same scores, counts,
    extra and rows (every scoring column is reset and derived again from the raw answers)."""
    result, _, _ = both
    path = tmp_path / "reform.parquet"
    write_details(path, result.rows)
    stored = read_details(path)
    tampered = copy.deepcopy(stored)
    for row in tampered:  # stale grades must not survive
        row.update(correct=not row["correct"], score=0.5, parsed_answer="7")
        if row["mode"] == "likelihood":
            row["prediction"] = "stale"
    ctx = ScoreContext(limit=2)
    again = scoring.score(tampered, ctx)
    assert again.scores == result.scores and again.counts == result.counts
    assert json.dumps(again.extra, sort_keys=True) == json.dumps(result.extra, sort_keys=True)
    write_details(tmp_path / "again.parquet", again.rows)
    assert pd.read_parquet(tmp_path / "again.parquet").equals(pd.read_parquet(path))


def test_same_seed_same_prompts_and_modes_alone(llava, both, tmp_path_factory):
    result, _, _ = both
    gen_only, _, _ = _run(llava, tmp_path_factory, **{"reform.mode": "generation", "reform.repeats": "5"})
    prompts_both = [r["prompt"] for r in result.rows if r["mode"] == "generation"]
    prompts_gen = [r["prompt"] for r in gen_only.rows if r["mode"] == "generation"]
    assert prompts_both == prompts_gen
    assert "lik_overall" not in gen_only.scores and "gen_overall" in gen_only.scores
    assert "reform_lik_templates" not in gen_only.prompts
    lik_only, _, _ = _run(llava, tmp_path_factory, **{"reform.mode": "likelihood", "reform.repeats": "2",
                                                      "reform.seed": "3"})
    assert "gen_overall" not in lik_only.scores and "lik_overall" in lik_only.scores
    assert {r["repeat"] for r in lik_only.rows if r["mode"] == "likelihood"} == {0, 1}
    assert "reform_gen_templates" not in lik_only.prompts
    assert {"reform_example", "reform_example_answer"} <= set(lik_only.prompts)  # its example turn is hashed too
    with pytest.raises(ValueError):
        _run(llava, tmp_path_factory, **{"reform.mode": "bogus"})


def test_sampled_requests_have_a_seed_each_and_still_batch(llava, monkeypatch):
    """Every sampled request carries its own seed (the item's and the repeat's), and the adapter still runs them in
    batches: it samples each row from its own seed, so no batch changes an answer."""
    batches = []
    original = llava._generate_batch

    def spy(batch):
        batches.append([(r.temperature, r.seed) for r in batch])
        return original(batch)

    monkeypatch.setattr(llava, "_generate_batch", spy)
    result = run_benchmark("reform", llava, limit=1, options={"reform.mode": "generation", "reform.repeats": "2"},
                           batch_size=64)
    sampled = [seed for batch in batches for temperature, seed in batch if temperature > 0]
    n_mc = result.counts["multiple_choice"]
    assert len(sampled) == len(set(sampled)) == 2 * n_mc  # one seed per item and repeat
    assert max(sum(1 for t, _ in batch if t > 0) for batch in batches) > 1  # and they share batches