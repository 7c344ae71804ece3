"""SimpleQA on the board: one run's calibration figure (plotly). Texts from strangers (model ids) are escaped:
plotly renders some HTML tags."""
from __future__ import annotations

import html
import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots


def _points(points: list[dict] | None, x_key: str) -> list[dict]:
    """Bins that hold answers, with finite coordinates."""
    usable = []
    for point in points or []:
        x, y = point.get(x_key), point.get("accuracy")
        if point.get("n") and isinstance(x, (int, float)) and isinstance(y, (int, float)) \
                and math.isfinite(x) and math.isfinite(y):
            usable.append(point)
    return usable


def _stated_trace(points: list[dict], ece, suffix: str = "") -> go.Scatter:
    label = "stated confidence" + suffix + (f" (ECE {ece:.3f})" if isinstance(ece, (int, float)) else "")
    return go.Scatter(x=[p["confidence"] for p in points], y=[p["accuracy"] for p in points],
                      mode="lines+markers", name=label, text=[f"{p['n']} answers" for p in points],
                      hovertemplate="confidence %{x:.2f}<br>accuracy %{y:.2f}<br>%{text}")


def _frequency_trace(points: list[dict], suffix: str = "") -> go.Scatter:
    return go.Scatter(x=[p["frequency"] for p in points], y=[p["accuracy"] for p in points],
                      mode="lines+markers", name="answer frequency" + suffix,
                      text=[f"{p['n']} questions" for p in points],
                      hovertemplate="frequency %{x:.2f}<br>accuracy %{y:.2f}<br>%{text}")


def _main_binning(extra: dict) -> str:
    """How the main points are binned: the write-up's equal-count bins, or (a run scored before they were used)
    10 equal-width bins."""
    bins = (extra.get("calibration_bins") or {}).get("quantile")
    return f"{bins} equal-count bins, as in the SimpleQA write-up" if bins else "10 equal-width bins"


def _traces(extra: dict, ece, reliability: str, frequency: str, suffix: str = "") -> list[go.Scatter]:
    """The stated-confidence and answer-frequency traces of one binning (those with points)."""
    traces = []
    stated = _points(extra.get(reliability), "confidence")
    if stated:
        traces.append(_stated_trace(stated, ece, suffix))
    shares = _points(extra.get(frequency), "frequency")
    if shares:
        traces.append(_frequency_trace(shares, suffix))
    return traces


def _diagonal(show: bool) -> go.Scatter:
    return go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration", showlegend=show,
                      line={"dash": "dash", "color": "grey"}, hoverinfo="skip")


def calibration_figure(result: dict | None) -> go.Figure | None:
    """SimpleQA calibration of one run: accuracy against stated confidence and against answer frequency.

    Reads results["benchmarks"]["simpleqa"]["extra"]: "reliability" (points with confidence, accuracy, n) and
    "frequency" (points with frequency, accuracy, n), as the benchmark writes them: 30 equal-count bins (older runs:
    10 equal-width ones); where the run also holds the 10 equal-width points ("reliability_equal_width",
    "frequency_equal_width"), they are a second panel. The diagonal is perfect calibration. A calibration that was
    not run is said in the title instead of drawn. None for no run.
    """
    if result is None:
        return None
    simpleqa = (result.get("benchmarks") or {}).get("simpleqa") or {}
    extra = simpleqa.get("extra") or {}
    ran = extra.get("calibration") or {}
    main = _traces(extra, (simpleqa.get("scores") or {}).get("ece"), "reliability", "frequency")
    second = _traces(extra, extra.get("ece_equal_width"), "reliability_equal_width", "frequency_equal_width",
                     ", 10 equal-width bins")
    titles = (_main_binning(extra), "10 equal-width bins")
    figure = make_subplots(rows=1, cols=2, subplot_titles=titles) if second else go.Figure()
    for col, traces in ((1, main), (2, second)) if second else ((None, main),):
        where = {"row": 1, "col": col} if col else {}
        figure.add_trace(_diagonal(col in (None, 1)), **where)
        for trace in traces:
            figure.add_trace(trace, **where)
    missing = [name for name, key in (("stated confidence", "confidence"), ("answer frequency", "frequency"))
               if not ran.get(key)]
    model = html.escape(f"{result.get('model', '?')} @ {str(result.get('revision') or '')[:12]}")
    title = model + (f"<br><sup>not run: {', '.join(missing)}</sup>" if missing else "")
    axis = {"title": {"text": "stated confidence / answer frequency"}, "range": [0, 1]}
    figure.update_xaxes(**axis)
    figure.update_yaxes(title={"text": "accuracy (judge: correct)"}, range=[0, 1.02])
    figure.update_layout(title={"text": title}, height=420, margin={"l": 60, "r": 20, "t": 90, "b": 50},
                         legend={"x": 0.01, "y": 0.99})
    if second:  # two panels: the legend below them
        figure.update_layout(height=480, margin={"b": 140}, legend={"orientation": "h", "x": 0, "y": -0.25})
    else:
        figure.update_xaxes(title={"text": f"stated confidence / answer frequency ({titles[0]})"})
    return figure
