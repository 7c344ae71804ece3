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

