"""The SimpleQA calibration figure built from a results file (moved from leaderboard/plots.py)."""
from __future__ import annotations

from evaluator.benchmarks.simpleqa.views import calibration_figure


def _result(**extra) -> dict:
    return {"model": "org/<b>m</b>", "revision": "a" * 40,
            "benchmarks": {"simpleqa": {"scores": {"ece": 0.125}, "extra": extra}}}


def test_calibration_figure_draws_both_curves_and_the_diagonal():
    reliability = [{"bin_low": 0.0, "bin_high": 0.1, "confidence": 0.05, "accuracy": 0.0, "n": 2},
                   {"bin_low": 0.1, "bin_high": 0.2, "confidence": None, "accuracy": None, "n": 0},
                   {"bin_low": 0.9, "bin_high": 1.0, "confidence": 0.95, "accuracy": 0.75, "n": 4}]
    frequency = [{"bin_low": 0.2, "bin_high": 0.3, "frequency": 0.2, "accuracy": 0.5, "n": 2}]
    figure = calibration_figure(_result(reliability=reliability, frequency=frequency,
                                        calibration={"confidence": True, "frequency": True}))
    names = [trace.name for trace in figure.data]
    assert names == ["perfect calibration", "stated confidence (ECE 0.125)", "answer frequency"]
    assert list(figure.data[1].x) == [0.05, 0.95] and list(figure.data[1].y) == [0.0, 0.75]  # the empty bin is left out
    assert list(figure.data[2].x) == [0.2]
    assert "<b>" not in figure.layout.title.text and "&lt;b&gt;" in figure.layout.title.text


def test_a_calibration_that_did_not_run_is_named_not_drawn():
    figure = calibration_figure(_result(calibration={"confidence": False, "frequency": False}))
    assert [trace.name for trace in figure.data] == ["perfect calibration"]
    assert "not run: stated confidence, answer frequency" in figure.layout.title.text


def test_no_run_draws_nothing():
    assert calibration_figure(None) is None



def test_a_run_with_both_binnings_draws_the_write_up_s_30_bins_and_the_10_equal_width_ones_beside():
    """Issue 29: the main panel is the SimpleQA write-up's 30 equal-count bins; the 10 equal-width bins are a
    second panel, with their own ECE."""
    quantile = [{"bin_low": 0.4, "bin_high": 0.405, "confidence": 0.4025, "accuracy": 1.0, "n": 2},
                {"bin_low": 0.41, "bin_high": 0.415, "confidence": 0.4125, "accuracy": 0.0, "n": 2}]
    width = [{"bin_low": 0.4, "bin_high": 0.5, "confidence": 0.4075, "accuracy": 0.5, "n": 4}]
    freq = [{"bin_low": 0.2, "bin_high": 0.2, "frequency": 0.2, "accuracy": 0.5, "n": 2}]
    figure = calibration_figure(_result(reliability=quantile, reliability_equal_width=width, frequency=freq,
                                        frequency_equal_width=freq, ece_equal_width=0.0875,
                                        calibration_bins={"quantile": 30, "equal_width": 10},
                                        calibration={"confidence": True, "frequency": True}))
    names = [trace.name for trace in figure.data]
    assert names == ["perfect calibration", "stated confidence (ECE 0.125)", "answer frequency",
                     "perfect calibration", "stated confidence, 10 equal-width bins (ECE 0.087)",
                     "answer frequency, 10 equal-width bins"]
    assert list(figure.data[1].x) == [0.4025, 0.4125] and figure.data[1].xaxis == "x"
    assert figure.data[4].xaxis == "x2" and list(figure.data[4].x) == [0.4075]
    titles = [a.text for a in figure.layout.annotations]
    assert titles == ["30 equal-count bins, as in the SimpleQA write-up", "10 equal-width bins"]


def test_a_run_scored_before_the_quantile_bins_says_it_is_binned_by_width():
    figure = calibration_figure(_result(reliability=[{"confidence": 0.85, "accuracy": 0.5, "n": 4}],
                                        calibration={"confidence": True, "frequency": False}))
    assert [trace.name for trace in figure.data] == ["perfect calibration", "stated confidence (ECE 0.125)"]
    assert "10 equal-width bins" in figure.layout.xaxis.title.text
