"""SimpleQA metrics against hand-computed values."""
from __future__ import annotations

import math

import pytest

from evaluator.metrics import (
    expected_calibration_error,
    frequency_points,
    reliability_points,
    simpleqa_breakdown,
    simpleqa_scores,
)


def test_scores_hand_computed():
    # 2 A, 1 B, 1 C, plus one ungraded (None) and one junk grade: 4 graded.
    s = simpleqa_scores(["A", "B", "A", "C", None, "X"])
    assert s["n"] == 4 and s["ungraded"] == 2
    assert s["correct"] == pytest.approx(0.5)
    assert s["incorrect"] == pytest.approx(0.25)
    assert s["not_attempted"] == pytest.approx(0.25)
    assert s["attempted"] == pytest.approx(0.75)
    assert s["correct_given_attempted"] == pytest.approx(2 / 3)
    # harmonic mean of 0.5 and 2/3 = 2 * (1/3) / (7/6) = 4/7
    assert s["f_score"] == pytest.approx(4 / 7)


def test_scores_nothing_attempted():
    s = simpleqa_scores(["C", "C", "C"])
    assert s["correct"] == 0 and s["incorrect"] == 0 and s["not_attempted"] == 1
    assert s["attempted"] == 0
    assert s["correct_given_attempted"] == 0
    assert s["f_score"] == 0


def test_scores_all_wrong_gives_zero_f():
    s = simpleqa_scores(["B", "B"])
    assert s["correct"] == 0 and s["correct_given_attempted"] == 0 and s["f_score"] == 0


def test_scores_all_correct():
    s = simpleqa_scores(["A"] * 3)
    assert s["correct"] == 1 and s["correct_given_attempted"] == 1 and s["f_score"] == 1


def test_scores_all_ungraded_and_empty():
    for grades in ([None, None, ""], []):
        s = simpleqa_scores(grades)
        assert s["n"] == 0 and s["ungraded"] == len(grades)
        for key in ("correct", "incorrect", "not_attempted", "attempted", "correct_given_attempted", "f_score"):
            assert math.isnan(s[key]), key


def test_ungraded_is_not_wrong():
    # An ungraded item must not pull accuracy down: same scores as without it.
    assert simpleqa_scores(["A", None])["correct"] == 1.0
    assert simpleqa_scores(["A", "B", None]) == {**simpleqa_scores(["A", "B"]), "ungraded": 1}


def test_breakdown():
    b = simpleqa_breakdown(["A", "B", "C", "A", None], ["Art", "Art", "Music", "Music", "Music"])
    assert list(b) == ["Art", "Music"]
    assert b["Art"]["correct"] == 0.5 and b["Art"]["n"] == 2
    assert b["Music"]["n"] == 2 and b["Music"]["ungraded"] == 1
    assert b["Music"]["correct"] == 0.5 and b["Music"]["not_attempted"] == 0.5
    assert b["Music"]["correct_given_attempted"] == 1.0
    with pytest.raises(ValueError):
        simpleqa_breakdown(["A"], [])


def test_ece_hand_computed():
    # bin [0.9,1.0]: conf 0.95, 1.0 -> mean 0.975, acc 0.5 -> gap 0.475, n=2
    # bin [0.2,0.3): conf 0.2 -> acc 0 -> gap 0.2, n=1
    # bin [0.6,0.7): conf 0.6, 0.6 -> acc 1.0 -> gap 0.4, n=2
    conf = [0.95, 1.0, 0.2, 0.6, 0.6]
    corr = [True, False, False, True, True]
    expected = (2 * 0.475 + 1 * 0.2 + 2 * 0.4) / 5
    assert expected_calibration_error(conf, corr) == pytest.approx(expected)
    pts = reliability_points(conf, corr)
    assert [(p["bin_low"], p["n"]) for p in pts] == [(0.2, 1), (0.6, 2), (0.9, 2)]
    assert pts[2]["confidence"] == pytest.approx(0.975) and pts[2]["accuracy"] == 0.5
    assert pts[2]["bin_high"] == pytest.approx(1.0)
    assert set(pts[0]) == {"bin_low", "bin_high", "confidence", "accuracy", "n"}


def test_ece_perfect_calibration_is_zero():
    # conf 0.25 with 1 of 4 right; conf 0.75 with 3 of 4 right; conf 1.0 all right; conf 0.0 all wrong.
    conf = [0.25] * 4 + [0.75] * 4 + [1.0] * 2 + [0.0] * 3
    corr = [True, False, False, False] + [True, True, True, False] + [True, True] + [False] * 3
    assert expected_calibration_error(conf, corr) == pytest.approx(0.0)


def test_ece_single_bin_and_skips():
    # One bin: mean conf 0.5, acc 1 -> 0.5. None/NaN confidences and None correctness are skipped.
    assert expected_calibration_error([0.5, None, math.nan, 0.5], [True, True, False, None], n_bins=1) \
        == pytest.approx(0.5)
    assert math.isnan(expected_calibration_error([], []))
    with pytest.raises(ValueError):
        expected_calibration_error([1.5], [True])
    with pytest.raises(ValueError):
        expected_calibration_error([0.5], [True, False])


def test_frequency_points():
    pts = frequency_points([1.0, 1.0, 0.4, 0.6], [True, True, False, True], n_bins=5)
    assert [p["bin_low"] for p in pts] == [0.4, 0.6, 0.8]
    assert pts[-1] == {"bin_low": 0.8, "bin_high": 1.0, "frequency": 1.0, "accuracy": 1.0, "n": 2}
    assert pts[0]["accuracy"] == 0.0 and pts[1]["accuracy"] == 1.0


def test_bin_edges():
    # Edges belong to the bin above (floating-point 0.1 * 3 included); 1.0 belongs to the last bin.
    pts = reliability_points([0.1 * 3, 0.7, 1.0, 0.0], [True, True, True, False])
    assert [(p["bin_low"], p["n"]) for p in pts] == [(0.0, 1), (0.3, 1), (0.7, 1), (0.9, 1)]
