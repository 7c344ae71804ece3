"""SimpleQA on the board: one run's calibration figure (plotly). Texts from strangers (model ids) are escaped:
plotly renders some HTML tags."""
from __future__ import annotations

import html
import math

import plotly.graph_objects as go


def _points(points: list[dict] | None, x_key: str) -> list[dict]:
    """Bins that hold answers, with finite coordinates."""
    usable = []
    for point in points or []:
        x, y = point.get(x_key), point.get("accuracy")
        if point.get("n") and isinstance(x, (int, float)) and isinstance(y, (int, float)) \
                and math.isfinite(x) and math.isfinite(y):
            usable.append(point)
    return usable


def _stated_trace(points: list[dict], ece) -> go.Scatter:
    label = "stated confidence" + (f" (ECE {ece:.3f})" if isinstance(ece, (int, float)) else "")
    return go.Scatter(x=[p["confidence"] for p in points], y=[p["accuracy"] for p in points],
                      mode="lines+markers", name=label, text=[f"{p['n']} answers" for p in points],
                      hovertemplate="confidence %{x:.2f}<br>accuracy %{y:.2f}<br>%{text}")


def _frequency_trace(points: list[dict]) -> go.Scatter:
    return go.Scatter(x=[p["frequency"] for p in points], y=[p["accuracy"] for p in points],
                      mode="lines+markers", name="answer frequency", text=[f"{p['n']} questions" for p in points],
                      hovertemplate="frequency %{x:.2f}<br>accuracy %{y:.2f}<br>%{text}")


def calibration_figure(result: dict | None) -> go.Figure | None:
    """SimpleQA calibration of one run: accuracy against stated confidence and against answer frequency.

    Reads results["benchmarks"]["simpleqa"]["extra"]: "reliability" (points with confidence, accuracy, n) and
    "frequency" (points with frequency, accuracy, n), as the benchmark writes them. The diagonal is perfect
    calibration. A calibration that was not run is said in the title instead of drawn. None for no run.
    """
    if result is None:
        return None
    simpleqa = (result.get("benchmarks") or {}).get("simpleqa") or {}
    extra = simpleqa.get("extra") or {}
    ran = extra.get("calibration") or {}
    figure = go.Figure()
    figure.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                                line={"dash": "dash", "color": "grey"}, hoverinfo="skip"))
    stated = _points(extra.get("reliability"), "confidence")
    if stated:
        figure.add_trace(_stated_trace(stated, (simpleqa.get("scores") or {}).get("ece")))
    frequency = _points(extra.get("frequency"), "frequency")
    if frequency:
        figure.add_trace(_frequency_trace(frequency))
    missing = [name for name, key in (("stated confidence", "confidence"), ("answer frequency", "frequency"))
               if not ran.get(key)]
    model = html.escape(f"{result.get('model', '?')} @ {str(result.get('revision') or '')[:12]}")
    title = model + (f"<br><sup>not run: {', '.join(missing)}</sup>" if missing else "")
    figure.update_layout(title={"text": title}, xaxis={"title": {"text": "stated confidence / answer frequency"},
                                                       "range": [0, 1]},
                         yaxis={"title": {"text": "accuracy (judge: correct)"}, "range": [0, 1.02]},
                         height=420, margin={"l": 60, "r": 20, "t": 70, "b": 50}, legend={"x": 0.01, "y": 0.99})
    return figure
