"""LAVE's card: it satisfies the registry, and declares the board's LAVE columns, sources and options as before."""
from __future__ import annotations

from evaluator.benchmarks import card_problems, get_benchmark
from evaluator.benchmarks.lave import CARD
from evaluator.benchmarks.lave.data import DOCMATIX
from evaluator.benchmarks.spec import COUNT, FRACTION, NUMBER, ItemView

AGREEMENT = ("vqa_accuracy", "anls", "exact_match", "bleu4", "cider")


def test_the_card_fits_the_registry():
    assert card_problems(CARD, "lave") == []
    assert get_benchmark("lave").CARD is CARD
    assert CARD.title == CARD.short_title == "LAVE" and CARD.paper == "https://arxiv.org/abs/2310.02567"
    assert CARD.summary.startswith("LLM-assisted VQA evaluation (arXiv 2310.02567)")
    assert CARD.needs_images and CARD.needs_judge and CARD.default_metric == "lave"


def test_metric_keys_board_names_and_labels():
    keys = [m.key for m in CARD.metrics]
    assert keys == ["lave", "vqa_accuracy", "anls", "exact_match", "bleu4", "cider", "unrated", "rating_fallback",
                    *(f"agree_{m}" for m in AGREEMENT), "thought_unclosed"]
    assert [f"lave_{k}" for k in keys] == [
        "lave_lave", "lave_vqa_accuracy", "lave_anls", "lave_exact_match", "lave_bleu4", "lave_cider", "lave_unrated",
        "lave_rating_fallback", "lave_agree_vqa_accuracy", "lave_agree_anls", "lave_agree_exact_match", "lave_agree_bleu4", "lave_agree_cider",
        "lave_thought_unclosed"]
    assert [f"{CARD.short_title} {m.label}" for m in CARD.metrics] == [
        "LAVE score", "LAVE VQA accuracy", "LAVE ANLS", "LAVE exact match (VQA-normalised)", "LAVE BLEU-4",
        "LAVE CIDEr", "LAVE unrated", "LAVE fallback ratings (no rating in the reply)", "LAVE agrees with VQA accuracy", "LAVE agrees with ANLS",
        "LAVE agrees with exact match (VQA-normalised)", "LAVE agrees with BLEU-4", "LAVE agrees with CIDEr",
        "LAVE ended in thought"]


def test_metric_kinds_paths_and_visibility():
    by_key = {m.key: m for m in CARD.metrics}
    for key in ("lave", "vqa_accuracy", "anls", "exact_match", "bleu4", "cider"):
        assert by_key[key].where == ("scores", key) and by_key[key].shown and by_key[key].higher_is_better
    assert by_key["cider"].kind == NUMBER and "Not a percentage" in by_key["cider"].description
    assert all(by_key[k].kind == FRACTION for k in ("lave", "vqa_accuracy", "anls", "exact_match", "bleu4"))
    unrated = by_key["unrated"]
    assert unrated.kind == COUNT and not unrated.higher_is_better and unrated.where == ("counts", "unrated")
    assert unrated.shown and unrated.judged
    assert [k for k, m in by_key.items() if m.judged] == ["lave", "unrated", "rating_fallback",
                                                          *(f"agree_{m}" for m in AGREEMENT)]
    for metric in AGREEMENT:
        agree = by_key[f"agree_{metric}"]
        assert agree.where == ("extra", "agreement", metric, "agreement") and not agree.shown
        assert agree.kind == FRACTION and agree.description.startswith("Share of answered items where LAVE and ")
    assert by_key["agree_exact_match"].description.startswith(
        "Share of answered items where LAVE and exact match (VQA-normalised) agree on correct vs not (LAVE correct "
        "= rating 3; exact match (VQA-normalised) correct at or above its threshold in the results file).")


def test_sources_options_and_item_view():
    assert [(s.key, s.setting, s.default) for s in CARD.sources] == [
        ("lave", "LEADERBOARD_LAVE_VQA", ""), ("lave.docmatix", "LEADERBOARD_LAVE_DOCMATIX", DOCMATIX)]
    assert CARD.sources[0].accepts.startswith("a VQA v2-style file added to the full LAVE suite (beside Docmatix)")
    assert [(o.key, o.default) for o in CARD.options] == [
        ("lave.max_new_tokens", "32"), ("lave.shots", "8"), ("lave.judge_max_tokens", ""), ("lave.docmatix", "on")]
    from evaluator.benchmarks.item_tables import by_question
    from evaluator.benchmarks.lave import explore, measures

    assert CARD.item_view == ItemView(question="question", grade="rating", rationale="judge_rationale",
                                      image="image_ref", group_by=("kind", "source"), key=by_question,
                                      items=explore.items, parts=explore.parts, picture=explore.picture,
                                      measure=measures.measure)


def test_task_text_follows_the_reference_and_the_card_says_where_the_rating_rule_differs():
    """Issue 15, point 7: no leniency sentence the reference lacks; the rating parser's choice is stated."""
    from evaluator.benchmarks.lave.rater import load_lave_prompts
    from evaluator.judge import parse_lave_rating

    task = load_lave_prompts().task
    for said in ("1 to 3", "incorrect or irrelevant", "ambiguous or incomplete", "correct", "rationale",
                 "yes/no question"):
        assert said in task
    for lenient in ("synonym", "rephras", "meaning, not the wording", "lenient"):
        assert lenient not in task.lower()
    said = " ".join(CARD.differences)
    assert "last labelled rating" in said and "final character" in said and "fallback 2" in said
    # the stated rule, shown on the replies where it differs from reading the last token
    assert parse_lave_rating("The answer matches. So rating=3.") == 3
    assert parse_lave_rating("So rating=3. I hope this helps.") == 3
    assert parse_lave_rating("3 of the references say red; the candidate says blue.") is None
