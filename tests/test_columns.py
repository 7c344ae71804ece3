"""The column schema, built from the benchmarks' cards."""
from __future__ import annotations

from evaluator import api
from leaderboard.board.columns import COUNT, INTERVALS_DESCRIPTION, SCORE, metric_column, schema

S = schema()


def test_schema_labels_and_names_are_unique():
    labels = [c.label for c in S.columns]
    names = [c.name for c in S.columns]
    assert len(labels) == len(set(labels))
    assert len(names) == len(set(names))


def test_every_column_has_a_description_and_benchmark_columns_belong_to_a_benchmark():
    benchmarks = {card.name for card in S.cards}
    assert benchmarks == set(api.benchmark_names())
    for col in (*S.columns, *S.board_only):
        assert col.description.strip(), col.name
        if col.group in benchmarks and not col.path:  # an interval's text column, drawn from the raw ones
            assert col.interval_of in S.by_name and col.kind == "interval", col.name
        elif col.group in benchmarks:
            assert col.path[:2] == ("benchmarks", col.group) and col.path[2] in ("scores", "extra", "counts",
                                                                                   "coverage", "thinking", "intervals")
        else:
            assert col.group in ("model", "run", "board"), col.name
    for card in S.cards:
        assert card.summary.strip()
        assert S.column(f"{card.name}_coverage").kind == SCORE


def test_views_overview_first_then_one_per_benchmark():
    assert [v.label for v in S.views] == ["Overview", "CURE", "SimpleQA", "ReForm-Eval", "LAVE", "Run details"]
    assert [S.column(n).label for n in S.view("overview").columns] == [  # fits 1,400 px; model + overall first
        "#", "Model", "Overall", "CURE Ro", "SimpleQA F-score", "ReForm gen overall", "LAVE score", "Suite", "Flag",
        "Notes", "Precision", "Revision"]
    assert [S.column(n).label for n in S.view("runs").columns] == [  # the run facts, what tells runs apart first
        "#", "Model", "Precision", "Revision", "Overall", "Overall 95%", "Scored on", "Type", "Params (B)", "Suite",
        "Lite rule", "Asked by",
        "Limit", "CURE Ro 95%", "SimpleQA F-score 95%", "ReForm gen overall 95%", "LAVE score 95%", "CURE coverage", "SimpleQA coverage", "ReForm coverage", "LAVE coverage", "Judge", "Judge id", "Endpoint",
        "Hardware", "Hours (GPU)", "Hours (CPU, wall)", "Cost (USD)", "Thinking mode", "Thought tokens / reply",
        "Answer tokens / reply", "Flag", "Notes", "Details", "Dtype", "Device", "GPU", "Batch size",
        "Attention", "Generation", "Decoding overrides", "torch", "transformers", "Submitted", "Finished"]
    assert S.default_sort == "overall" and S.view("lave").rank_by == "lave_lave"
    for card in S.cards:  # a benchmark's view holds every metric of its card, and no other benchmark's
        names = set(S.view(card.name).columns)
        assert {f"{card.name}_{m.key}" for m in card.metrics} <= names
        assert not any(n.split("_")[0] in set(api.benchmark_names()) - {card.name} for n in names)
    assert [v.key for v in schema(("simpleqa", "cure")).views][:3] == ["overview", "simpleqa", "cure"]
    assert S.view("bogus") is S.views[0]


def test_a_card_metric_is_a_column():
    card = api.card("simpleqa")
    cols = [metric_column(card, card.metric(key)) for key in ("f_score", "correct", "ungraded")]
    assert [c.name for c in cols] == ["simpleqa_f_score", "simpleqa_correct", "simpleqa_ungraded"]
    assert [c.label for c in cols] == ["SimpleQA F-score", "SimpleQA correct", "SimpleQA ungraded (count)"]
    assert cols[0].path == ("benchmarks", "simpleqa", "scores", "f_score")
    assert cols[2].path == ("benchmarks", "simpleqa", "counts", "ungraded") and cols[2].kind == COUNT
    assert [c.kind for c in cols[:2]] == [SCORE, SCORE] and all(c.group == "simpleqa" for c in cols)
    assert cols[2].higher_is_better is False


def test_about_tab_reads_the_schema_descriptions():
    from leaderboard.ui.about import columns_markdown

    text = columns_markdown(S)
    assert INTERVALS_DESCRIPTION in text
    for col in (*S.columns, *S.board_only):
        if col.interval_of:  # the interval columns: one paragraph for all of them
            continue
        assert col.label in text and col.description.replace("<", "&lt;") in text, col.name
    assert "- **Key**: &lt;org>/&lt;model>/&lt;sha12>_&lt;precision>, with -thinking-on" in text  # shown, not eaten as HTML
    for card in S.cards:
        assert card.summary in text and card.paper in text
        assert all(o.key in text for o in card.options) and all(s.setting in text for s in card.sources)
