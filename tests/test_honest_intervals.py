"""No interval claims more than its data (issue 69): outcomes that all agree keep a width, a stderr is never 0 beside
an interval of width, bounds hold their score, and the overall's interval is never narrower than its parts'."""
from __future__ import annotations

import math

import pytest

from evaluator.metrics.intervals import Z95, Interval, bootstrap_interval, mean_interval, range_wilson, wilson
from leaderboard.board.columns import headline_scores, overall_interval, schema
from leaderboard.board.frames import leaderboard_frame
from leaderboard.board.views import view_text
from tests.results_files import board_result

S = schema()
HEADLINES = {"cure": "Ro", "simpleqa": "f_score", "reform": "gen_overall", "lave": "lave"}
INSTANCES = 37


def honest(found: dict[str, Interval], scores: dict[str, float]) -> None:
    """Each score's interval has width and a stderr that is not 0, and holds its score as recorded."""
    for key, score in scores.items():
        interval = found[key]
        assert interval.high > interval.low and interval.stderr > 0, key
        record = interval.record(score)
        assert record["low"] <= score <= record["high"] and record["low"] <= round(score, 6) <= record["high"], key


@pytest.mark.parametrize("right", [False, True])
def test_cure_all_alike(right):
    from evaluator.metrics.cure import cure_intervals

    found = cure_intervals([right] * INSTANCES, [[right, right]] * INSTANCES)
    share = float(right)
    honest(found, {"Rh": share, "Rcot": share, "Ro": share, "step_accuracy": share, "Cf": 1.0, "Cb": 1.0}
           if right else {"Rh": 0.0, "Rcot": 0.0, "Ro": 0.0, "step_accuracy": 0.0})
    assert (found["Ro"].low, found["Ro"].high) == pytest.approx(wilson(INSTANCES * share, INSTANCES))


def reform_row(question: str, repeat: int, correct: bool) -> dict:
    return {"question_id": question, "dataset": "ds1", "dimension": "coarse_perception", "form": "mc",
            "score": float(correct), "correct": correct, "prediction": f"({'ABCDE'[repeat]})", "repeat": repeat,
            "parsed_answer": str(repeat), "options": '["a", "b", "c", "d", "e"]', "mark_style": "(A)"}


def test_reform_instability_all_ln_5_and_accuracy_all_0():
    from evaluator.benchmarks.reform.scoring import instability, score_intervals

    # five repeats of each instance, five different answers: entropy ln 5 on every one of the 37 instances
    rows = [reform_row(f"q{i}", r, False) for i in range(INSTANCES) for r in range(5)]
    found = score_intervals([("gen", rows)], [], rows, [])
    score = instability(rows)
    assert score == pytest.approx(math.log(5))
    honest(found, {"instability": score, "gen_mc_accuracy": 0.0, "gen_overall": 0.0, "format_hit_rate": 1.0})
    low, high = range_wilson(score, INSTANCES, (0.0, math.log(5)))
    assert (found["instability"].low, found["instability"].high) == pytest.approx((low, high))
    assert found["instability"].low == pytest.approx(math.log(5) * wilson(INSTANCES, INSTANCES)[0])
    assert "all alike" in found["instability"].method and "all alike" in found["gen_overall"].method


def test_lave_all_half_anls_all_0_vqa_all_1():
    import json

    from evaluator.benchmarks.lave.scoring import score_intervals

    rows = [{"question_id": str(i), "lave": 0.5, "vqa_accuracy": 1.0, "anls": 0.0, "exact_match": 1.0,
             "bleu4": 0.0, "cider": 0.0, "parsed_answer": "a cat", "gold": json.dumps(["a cat"])}
            for i in range(INSTANCES)]
    found = score_intervals(rows)
    wanted = {"lave": 0.5, "vqa_accuracy": 1.0, "anls": 0.0, "exact_match": 1.0}
    honest({key: found[key] for key in wanted}, wanted)
    assert (found["lave"].low, found["lave"].high) == pytest.approx(wilson(INSTANCES / 2, INSTANCES))
    assert (found["anls"].low, found["anls"].high) == pytest.approx(wilson(0, INSTANCES))


def test_simpleqa_all_right():
    from evaluator.benchmarks.simpleqa.options import read_settings
    from evaluator.benchmarks.simpleqa.scoring import score_intervals

    rows = [{"question_id": str(i), "part": "answer", "grade": "A"} for i in range(INSTANCES)]
    found = score_intervals(rows, read_settings("sample", {"simpleqa.confidence": "off"}))
    honest(found, {"correct": 1.0, "incorrect": 0.0, "not_attempted": 0.0, "f_score": 1.0,
                   "correct_given_attempted": 1.0})
    assert found["f_score"].low == pytest.approx(wilson(INSTANCES, INSTANCES)[0])


def test_a_mean_without_a_range_and_a_range_of_no_width_keep_their_old_reading():
    assert mean_interval([2.0] * 5, proportion=False).high == 2.0
    assert range_wilson(0.0, 5, (0.0, 0.0)) == (0.0, 0.0)
    assert bootstrap_interval(list(range(5)), lambda drawn: 3.0).low == 3.0


def test_a_record_holds_its_score_rounded_or_not():
    # bounds rounded to 6 decimals used to leave ln 5 = 1.6094379 outside [1.609438, 1.609438]
    record = Interval(0.0, math.log(5), math.log(5), 37, "clt").record(math.log(5))
    assert record["low"] <= math.log(5) <= record["high"] and record["low"] <= round(math.log(5), 6)
    # a bootstrap's percentiles that miss the statistic itself are widened to hold it, and the stderr follows
    missed = Interval(0.0, 0.52, 0.61, 20, "bootstrap").record(0.5)
    assert (missed["low"], missed["high"]) == (0.5, 0.61) and missed["stderr"] == pytest.approx(0.11 / (2 * Z95), 1e-5)


def with_interval(res: dict, name: str, score: float) -> dict:
    low, high = range_wilson(score, INSTANCES, (0.0, 1.0))
    res["benchmarks"][name]["intervals"] = {HEADLINES[name]: {
        "stderr": 0.0, "low": low, "high": high, "n": INSTANCES, "method": "wilson, clt over instances"}}
    return res


@pytest.mark.parametrize("score", [0.0, 1.0])
@pytest.mark.parametrize("names", [("cure",), ("cure", "lave"), ("cure", "simpleqa", "reform", "lave")])
def test_the_overall_over_one_two_and_four_benchmarks_at_0_and_at_100(names, score):
    skipped = {name: "x" for name in HEADLINES if name not in names}
    res = board_result("org/a", {name: score for name in names}, skipped=skipped)
    for name in names:
        with_interval(res, name, score)
    found = overall_interval(res, headline_scores(res, S.cards), S.cards)
    low, high = range_wilson(score, INSTANCES, (0.0, 1.0))
    # one side is cut at 0 or 100; the other is sqrt(k x side^2) / k = side / sqrt(k), never halved by the cut
    side = (high - low) / math.sqrt(len(names))
    assert (found["low"], found["high"]) == pytest.approx((0.0, side) if score == 0 else (1 - side, 1.0))
    assert found["stderr"] == pytest.approx((high - low) / (2 * Z95) / math.sqrt(len(names)))
    row = leaderboard_frame([res], S).iloc[0]
    assert row["overall_low"] <= row["overall"] <= row["overall_high"] and row["overall_stderr"] > 0
    assert row["cure_Ro_stderr"] > 0  # a stderr of 0 beside an interval of width reads its width / 3.92
    if len(names) == 1:  # the overall over one benchmark is that benchmark's interval, shown alike
        assert (row["overall_low"], row["overall_high"]) == pytest.approx((row["cure_Ro_low"], row["cure_Ro_high"]))
        board = view_text(leaderboard_frame([res], S), S)
        assert board["Overall"][0].split(" ± ")[1] == board["CURE Ro"][0].split(" ± ")[1]


def test_an_older_file_whose_bounds_miss_its_score_is_held_on_the_board():
    res = board_result("org/a", {"reform": 0.4}, skipped={n: "x" for n in HEADLINES if n != "reform"})
    res["benchmarks"]["reform"]["intervals"] = {"gen_overall": {
        "stderr": 0.0, "low": 0.41, "high": 0.41, "n": 37, "method": "bootstrap over instances"}}
    row = leaderboard_frame([res], S).iloc[0]
    assert row["reform_gen_overall_low"] == 0.4 and row["reform_gen_overall_high"] == 0.41
    assert row["reform_gen_overall_stderr"] == pytest.approx(0.01 / (2 * Z95))
    assert row["overall_low"] <= row["overall"] <= row["overall_high"]
