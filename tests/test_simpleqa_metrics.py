"""SimpleQA metrics against hand-computed values."""
from __future__ import annotations

import math
import random

import pytest

from evaluator.metrics import (
    expected_calibration_error,
    frequency_points,
    reliability_points,
    simpleqa_breakdown,
    simpleqa_scores,
)
from evaluator.metrics.simpleqa import QUANTILE_BINS


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


# --- issue 29: the SimpleQA write-up's binning, 30 equal-count (quantile) bins

def test_quantile_ece_hand_computed_30_bins():
    # 60 distinct confidences 0.400, 0.405, ..., 0.695; pairs (2b, 2b+1) form bin b (30 bins of 2). Bin b is all
    # right when b is even, all wrong when odd; its mean confidence is m_b = 0.40 + (4b + 1) / 400.
    # gaps: even b: 1 - m_b = (239 - 4b) / 400, sum over b = 0, 2, ..., 28: 15 * 239 - 4 * 210 = 2745
    #       odd b: m_b = (161 + 4b) / 400, sum over b = 1, 3, ..., 29: 15 * 161 + 4 * 225 = 3315
    # ECE = (2745 + 3315) / 400 / 30 = 0.505 (every bin weighs 2 of 60)
    conf = [0.40 + i / 200 for i in range(60)]
    corr = [(i // 2) % 2 == 0 for i in range(60)]
    assert QUANTILE_BINS == 30
    assert expected_calibration_error(conf, corr, QUANTILE_BINS, quantile=True) == pytest.approx(0.505)
    pts = reliability_points(conf, corr, QUANTILE_BINS, quantile=True)
    assert len(pts) == 30 and all(p["n"] == 2 for p in pts)
    assert pts[0] == {"bin_low": 0.40, "bin_high": pytest.approx(0.405), "confidence": pytest.approx(0.4025),
                      "accuracy": 1.0, "n": 2}
    assert pts[29]["bin_low"] == pytest.approx(0.69) and pts[29]["accuracy"] == 0.0
    # the same answers over 10 equal-width bins: 3 bins of 20, each half right, gaps 0.0525, 0.0475, 0.1475
    assert expected_calibration_error(conf, corr) == pytest.approx((0.0525 + 0.0475 + 0.1475) / 3)


def test_quantile_bins_keep_equal_confidences_together_in_any_order():
    # 10 answers, 30 bins: the i-th sorted answer would go to bin 3i; the run of 0.7s starts at 0 and the run of
    # 0.9s at 5, so two bins of 5. 0.7: 3 of 5 right, gap 0.1; 0.9: 4 of 5 right, gap 0.1. ECE 0.1.
    conf = [0.7] * 5 + [0.9] * 5
    corr = [True, True, True, False, False] + [True, True, True, True, False]
    expected = [(0.7, 0.7, 0.6, 5), (0.9, 0.9, 0.8, 5)]
    order = list(range(10))
    for seed in range(5):
        random.Random(seed).shuffle(order)
        pts = reliability_points([conf[i] for i in order], [corr[i] for i in order], 30, quantile=True)
        assert [(p["bin_low"], p["bin_high"], p["accuracy"], p["n"]) for p in pts] == \
            [(lo, hi, pytest.approx(acc), n) for lo, hi, acc, n in expected]
        assert expected_calibration_error([conf[i] for i in order], [corr[i] for i in order], 30, quantile=True) \
            == pytest.approx(0.1)


def test_quantile_bins_with_fewer_answers_than_bins_and_skips():
    # 4 answers, 30 bins: each its own bin, so the ECE is the mean of |correct - confidence|: 0.1, 0.8, 0.3, 0.4
    conf, corr = [0.9, 0.8, 0.3, 0.6], [True, False, False, True]
    assert expected_calibration_error(conf, corr, 30, quantile=True) == pytest.approx(0.4)
    assert [p["n"] for p in reliability_points(conf, corr, 30, quantile=True)] == [1, 1, 1, 1]
    assert expected_calibration_error([0.5, None, math.nan], [True, True, None], 30, quantile=True) == \
        pytest.approx(0.5)
    assert math.isnan(expected_calibration_error([], [], 30, quantile=True))
    pts = frequency_points([0.2, 0.2, 0.6, 1.0], [True, False, True, True], 30, quantile=True)
    assert [(p["frequency"], p["accuracy"], p["n"]) for p in pts] == [(0.2, 0.5, 2), (0.6, 1.0, 1), (1.0, 1.0, 1)]
