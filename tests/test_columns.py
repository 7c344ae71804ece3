"""The column schema, built from the benchmarks' cards."""
from __future__ import annotations

from evaluator import api
from leaderboard.columns import NUMBER, SCORE, metric_column, schema

S = schema()


def test_schema_labels_and_names_are_unique():
    labels = [c.label for c in S.columns]
    names = [c.name for c in S.columns]
    assert len(labels) == len(set(labels))
    assert len(names) == len(set(names))


def test_every_column_has_a_description_and_benchmark_columns_belong_to_a_benchmark():
    benchmarks = {card.name for card in S.cards}
    assert benchmarks == set(api.benchmark_names())
    for col in S.columns:
        assert col.description.strip(), col.name
        if col.kind == SCORE:
            assert col.group in benchmarks, col.name
            assert col.path[:2] == ("benchmarks", col.group) and col.path[2] in ("scores", "extra")
    for card in S.cards:
        assert card.summary.strip()


def test_board_columns_in_the_agreed_order():
    assert [c.label for c in S.shown] == [
        "Model", "Revision", "Precision", "Type", "Params (B)",
        "CURE Ro", "CURE Rh", "CURE Rcot", "CURE Cf", "CURE Cb", "CURE step accuracy",
        "SimpleQA correct", "SimpleQA not attempted", "SimpleQA incorrect", "SimpleQA correct given attempted",
        "SimpleQA F-score", "SimpleQA ungraded",
        "ReForm gen overall", "ReForm lik overall", "ReForm instability", "ReForm format hit rate",
        "LAVE score", "LAVE VQA accuracy", "LAVE ANLS", "LAVE exact match", "LAVE BLEU-4", "LAVE CIDEr",
        "LAVE unrated", "Suite", "Judge"]
    assert S.default_sort == "cure_Ro"
    assert schema(("simpleqa", "cure")).default_sort == "simpleqa_f_score"  # the first configured benchmark ranks


def test_a_card_metric_is_a_column():
    card = api.card("simpleqa")
    cols = [metric_column(card, card.metric(key)) for key in ("f_score", "correct", "ungraded")]
    assert [c.name for c in cols] == ["simpleqa_f_score", "simpleqa_correct", "simpleqa_ungraded"]
    assert [c.label for c in cols] == ["SimpleQA F-score", "SimpleQA correct", "SimpleQA ungraded"]
    assert cols[0].path == ("benchmarks", "simpleqa", "scores", "f_score")
    assert cols[2].path == ("benchmarks", "simpleqa", "counts", "ungraded") and cols[2].kind == NUMBER
    assert [c.kind for c in cols[:2]] == [SCORE, SCORE] and all(c.group == "simpleqa" for c in cols)
    assert cols[2].higher_is_better is False


def test_about_tab_reads_the_schema_descriptions():
    from leaderboard.ui.about import columns_markdown

    text = columns_markdown(S)
    for col in S.columns:
        if col.shown or col in S.optional:
            assert col.label in text and col.description in text
    for card in S.cards:
        assert card.summary in text and card.paper in text
        assert all(o.key in text for o in card.options) and all(s.setting in text for s in card.sources)
