"""CURE metrics: Rh, Rcot, Ro, Cf = Ro/Rcot, Cb = Ro/Rh (BENCHMARKS.md), step accuracy, by chain length."""
from __future__ import annotations

import math

import pytest

from evaluator.metrics import cure_by_chain_length, cure_scores, cure_step_accuracy


def realise(n: int, both: int, high_only: int, chain_only: int, chain_len: int = 3):
    """Boolean lists with `both` instances right on both, `high_only`/`chain_only` right on one, the rest on none.

    A wrong chain has its last step wrong (the others right), so chains are not all-or-nothing per step.
    """
    high, chains = [], []
    for i in range(n):
        h = i < both + high_only
        s = i < both or both + high_only <= i < both + high_only + chain_only
        high.append(h)
        chains.append([True] * chain_len if s else [True] * (chain_len - 1) + [False])
    return high, chains


def test_blip2_row_from_the_paper():
    # Ro 54.56, Rh 76.82, Rcot 65.66 with N = 10,000: 5,456 both, 2,226 high only, 1,110 chain only, 1,208 none.
    high, chains = realise(10_000, both=5456, high_only=7682 - 5456, chain_only=6566 - 5456)
    s = cure_scores(high, chains)
    assert s["Ro"] == pytest.approx(0.5456)
    assert s["Rh"] == pytest.approx(0.7682)
    assert s["Rcot"] == pytest.approx(0.6566)
    # The paper's 83.10 / 71.03 came from unrounded rates; from the rounded ones we get 0.830947 and 0.710232,
    # so compare to 4 decimals with a tolerance of one unit in the last place.
    assert s["Cf"] == pytest.approx(0.8310, abs=1e-4)
    assert s["Cb"] == pytest.approx(0.7103, abs=1e-4)
    assert s["Cf"] == pytest.approx(5456 / 6566)
    assert s["Cb"] == pytest.approx(5456 / 7682)


def test_human_row_from_the_paper():
    high, chains = realise(100, both=85, high_only=93 - 85, chain_only=89 - 85)
    s = cure_scores(high, chains)
    assert (s["Ro"], s["Rh"], s["Rcot"]) == pytest.approx((0.85, 0.93, 0.89))
    assert round(s["Cf"], 3) == 0.955
    assert round(s["Cb"], 3) == 0.914


def test_cf_is_not_the_mean_of_s_times_h():
    high, chains = realise(10, both=3, high_only=2, chain_only=3)
    s = cure_scores(high, chains)
    wrong = sum(h and all(c) for h, c in zip(high, chains)) / len(high)  # the circulating formula = Ro
    assert wrong == pytest.approx(s["Ro"]) == pytest.approx(0.3)
    assert s["Cf"] == pytest.approx(3 / 6)
    assert s["Cb"] == pytest.approx(3 / 5)
    assert s["Cf"] != pytest.approx(wrong)


def test_small_hand_case():
    high = [True, True, False, False]
    chains = [[True, True], [True, False, True], [True, True, True, True], [False, False]]
    s = cure_scores(high, chains)
    assert s == pytest.approx({"Rh": 0.5, "Rcot": 0.5, "Ro": 0.25, "Cf": 0.5, "Cb": 0.5})
    assert cure_step_accuracy(chains) == pytest.approx(8 / 11)


def test_rcot_is_all_or_nothing_not_step_accuracy():
    s = cure_scores([True], [[True, True, True, False]])
    assert s["Rcot"] == 0.0
    assert cure_step_accuracy([[True, True, True, False]]) == pytest.approx(0.75)


def test_zero_denominators_are_nan():
    s = cure_scores([False, False], [[True, True], [True, True]])  # nothing high-level right
    assert s["Rh"] == 0.0 and s["Rcot"] == 1.0 and s["Ro"] == 0.0
    assert s["Cf"] == 0.0
    assert math.isnan(s["Cb"])
    s = cure_scores([True], [[False, True]])  # no chain right
    assert math.isnan(s["Cf"]) and s["Cb"] == 0.0


def test_empty_input_is_all_nan():
    s = cure_scores([], [])
    assert set(s) == {"Rh", "Rcot", "Ro", "Cf", "Cb"}
    assert all(math.isnan(v) for v in s.values())
    assert math.isnan(cure_step_accuracy([]))
    assert cure_by_chain_length([], []) == {}


def test_all_right_and_fractions():
    s = cure_scores([True] * 3, [[True, True]] * 3)
    assert s == {"Rh": 1.0, "Rcot": 1.0, "Ro": 1.0, "Cf": 1.0, "Cb": 1.0}
    assert all(isinstance(v, float) for v in s.values())


def test_mismatched_lengths_and_empty_chain_are_rejected():
    with pytest.raises(ValueError):
        cure_scores([True], [])
    with pytest.raises(ValueError):
        cure_scores([True], [[]])


def test_by_chain_length():
    high = [True, False, True, True, False]
    chains = [[True, True], [True, True], [True, False, True], [True, True, True], [True, True, True, True]]
    by = cure_by_chain_length(high, chains)
    assert sorted(by) == [2, 3, 4]
    assert by[2]["n"] == 2 and by[3]["n"] == 2 and by[4]["n"] == 1
    assert by[2]["Rh"] == 0.5 and by[2]["Rcot"] == 1.0 and by[2]["Cf"] == 0.5 and by[2]["Cb"] == 1.0
    assert by[3]["Rcot"] == 0.5 and by[3]["Ro"] == 0.5 and by[3]["step_accuracy"] == pytest.approx(5 / 6)
    assert by[4]["Rh"] == 0.0 and math.isnan(by[4]["Cb"]) and by[4]["Cf"] == 0.0
