"""The board's figures (issue 62, point 8): score against size and one or two runs by dimension, drawn from the raw
board frame; runs without a size left out, model names escaped in the hover text, the intervals as error bars."""
from __future__ import annotations

from evaluator import api
from leaderboard.board.columns import schema
from leaderboard.board.frames import leaderboard_frame
from leaderboard.board.plots import (OTHER_AXIS, PERCENT_AXIS, SIZE_AXIS, dimension_cards, dimension_figure,
                                     score_choices, size_figure)
from tests.results_files import SHA_B, result

S = schema()
HOSTILE = 'org/<img src=x onerror=alert(1)>&"'


def cure_run(model: str, params: float | None, ro: float = 0.1, sha: str | None = None, interval: bool = False):
    res = result(model, params=params, Ro=ro, **({} if sha is None else {"sha": sha}))
    if interval:
        res["benchmarks"]["cure"]["intervals"] = {"Ro": {"stderr": 0.04, "low": 0.05, "high": 0.22, "n": 20,
                                                         "method": "wilson"}}
    return res


def test_size_figure_plots_each_sized_run_and_leaves_out_one_without_a_size():
    raw = leaderboard_frame([cure_run("org/small", 0.5, ro=0.3), cure_run("org/big", 13.0, ro=0.6),
                             cure_run("org/unknown", None, ro=0.9)], S)
    fig = size_figure(raw, S, "cure_Ro")
    assert len(fig.data) == 1
    points = dict(zip(fig.data[0].x, fig.data[0].y))
    assert points == {0.5: 30.0, 13.0: 60.0}  # percentages, the run of unknown size not drawn
    assert not any("unknown" in text for text in fig.data[0].text)
    assert fig.layout.xaxis.title.text == SIZE_AXIS and fig.layout.xaxis.type == "log"
    assert fig.layout.yaxis.title.text == "CURE Ro (%)"
    assert "1 run of unknown size left out" in fig.layout.title.text


def test_size_figure_escapes_the_model_name_in_its_hover_text():
    raw = leaderboard_frame([cure_run(HOSTILE, 7.0)], S)
    fig = size_figure(raw, S, "cure_Ro")
    (text,) = fig.data[0].text
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;&amp;&quot;" in text
    assert "%{text}" in fig.data[0].hovertemplate


def test_size_figure_offers_the_overall_and_each_benchmark_s_headline_and_says_when_nothing_has_a_size():
    assert [column for _, column in score_choices(S)] == ["overall"] + [
        f"{card.name}_{card.default_metric}" for card in S.cards]
    raw = leaderboard_frame([cure_run("org/unknown", None)], S)
    fig = size_figure(raw, S)
    assert not fig.data and "known size" in fig.layout.annotations[0].text


def test_every_card_s_dimensions_are_its_metrics_and_the_board_charts_those_that_list_some():
    charted = [card.name for card in dimension_cards(S)]
    assert charted == [card.name for card in api.cards() if card.dimensions] and len(charted) >= 2
    for card in api.cards():
        assert set(card.dimensions) <= {m.key for m in card.metrics}, card.name


def test_dimension_figure_draws_two_runs_with_the_card_s_dimensions_and_an_interval_as_an_error_bar():
    raw = leaderboard_frame([cure_run("org/a", 1.0, interval=True), cure_run(HOSTILE, 2.0, sha=SHA_B)], S)
    card = S.card("cure")
    fig = dimension_figure(raw, S, "cure", list(raw["key"]))
    assert len(fig.data) == 2
    a, b = fig.data
    labels = [card.metric(key).label for key in card.dimensions]
    assert list(a.x) == labels and list(b.x) == labels
    assert dict(zip(a.x, a.y))["Ro"] == 10.0 and dict(zip(a.x, a.y))["Rh"] == 50.0
    ro = labels.index("Ro")
    assert round(a.error_y.array[ro], 6) == 12.0 and round(a.error_y.arrayminus[ro], 6) == 5.0  # 22 - 10, 10 - 5
    assert b.error_y.array is None  # no interval recorded: no error bar
    assert "<img" not in b.name and "&lt;img" in b.name
    assert fig.layout.yaxis.title.text == PERCENT_AXIS


def test_dimension_figure_of_one_run_and_a_number_that_is_not_a_percentage_on_its_own_axis():
    reform = next(card for card in dimension_cards(S) if any(
        card.metric(k).kind not in api.PERCENT_KINDS for k in card.dimensions))
    res = result("org/a", params=1.0)
    scores = {key: (0.5 if reform.metric(key).kind in api.PERCENT_KINDS else 0.8) for key in reform.dimensions}
    res["benchmarks"] = {reform.name: {"scores": scores, "counts": {"items": 10}, "extra": {}}}
    raw = leaderboard_frame([res], S)
    fig = dimension_figure(raw, S, reform.name, [raw["key"][0], ""])
    assert len(fig.data) == 2  # one run, two axes
    assert fig.layout.yaxis.title.text == PERCENT_AXIS
    assert fig.layout.yaxis2.title.text in (OTHER_AXIS, *(reform.metric(k).label for k in reform.dimensions))
    assert set(fig.data[0].y) == {50.0} and set(fig.data[1].y) == {0.8}


def test_dimension_figure_without_a_picked_run_says_what_to_do():
    raw = leaderboard_frame([cure_run("org/a", 1.0)], S)
    fig = dimension_figure(raw, S, "cure", ["", None])
    assert not fig.data and "Pick a run" in fig.layout.annotations[0].text
    assert not dimension_figure(raw, S, "simpleqa", list(raw["key"])).data


def test_a_card_whose_dimensions_name_no_metric_is_refused_in_one_sentence():
    from dataclasses import replace

    from evaluator.benchmarks import card_problems

    card = replace(S.card("cure"), dimensions=("Rh", "nope"))
    assert card_problems(card, "cure") == ["CARD.dimensions names 'nope', which is not one of its metrics"]
