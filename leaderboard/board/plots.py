"""The board's two figures (plotly), drawn from the raw board frame (leaderboard.board.frames.leaderboard_frame):

- each run's score against its size (params_billions), for the overall score or one benchmark's headline score;
  runs without a known size or without the score are left out, and the figure says how many;
- one or two runs' scores on a benchmark's dimensions (the metrics its card lists in `dimensions`), each with its
  95% interval as an error bar where the raw frame has the score's `_low` and `_high` columns; a dimension that is
  not a percentage (a CIDEr) is drawn on an axis of its own beside the percentages.

Text from strangers (model names) reaches the hover text and the legend HTML-escaped, since plotly reads a subset of
HTML there. No benchmark is named here: everything comes from the cards.
"""
from __future__ import annotations

import html
import math
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evaluator import api
from leaderboard.board.columns import SCORE, Schema, headline
from leaderboard.board.frames import MODEL_FACTS, model_shown
from leaderboard.board.interval_columns import interval_name
from leaderboard.formatting import as_float

PERCENT_AXIS = "score (%)"
OTHER_AXIS = "value (not a percentage)"
SIZE_AXIS = "parameters (billions, log scale)"
OVERALL_COLUMN = "overall"
NAME_CHARS = 80  # the most characters of a model name in a hover text or a legend entry


def run_name(row: dict) -> str:
    """A run's model name as the board writes it (a served model by its display name), with its revision and
    precision, HTML-escaped and cut to NAME_CHARS."""
    name = model_shown({k: row.get(k) for k in MODEL_FACTS})[1]
    text = f"{name} @ {str(row.get('revision') or '')[:12]} ({row.get('precision') or ''})"
    if len(text) > NAME_CHARS:
        text = text[: NAME_CHARS - 1] + "…"
    return html.escape(text)


def score_choices(schema: Schema) -> list[tuple[str, str]]:
    """(label, column) of the scores the size figure can plot: the overall score, then each benchmark's headline."""
    return [("Overall", OVERALL_COLUMN)] + [(f"{card.title}: {headline(card).label}", f"{card.name}_{card.default_metric}")
                                           for card in schema.cards]


def _message(fig: go.Figure, text: str) -> go.Figure:
    fig.add_annotation(text=html.escape(text), showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return fig


def size_figure(raw: pd.DataFrame | None, schema: Schema, column: str = OVERALL_COLUMN) -> go.Figure:
    """Each run's `column` (the overall score or a benchmark's headline, see score_choices) against its size, one
    point per run with a known size and a score, the model in the hover text."""
    col = schema.by_name.get(column) or schema.column(OVERALL_COLUMN)
    fig = go.Figure()
    fig.update_layout(title=f"{col.label} against model size", xaxis_title=SIZE_AXIS, xaxis_type="log",
                      yaxis_title=f"{col.label} (%)" if col.kind == SCORE else col.label, margin={"t": 48})
    if raw is None or len(raw) == 0 or col.name not in raw:
        return _message(fig, "No finished run yet.")
    sizes = raw["params_billions"].map(as_float)
    scores = raw[col.name].map(as_float)
    known = raw[(sizes > 0) & scores.notna()]  # NaN compares False: an unknown size or score is left out
    left_out = int(scores.notna().sum()) - len(known)
    if len(known) == 0:
        return _message(fig, f"No run has both a known size and {col.label}.")
    scale = 100.0 if col.kind == SCORE else 1.0
    rows = known.to_dict("records")
    fig.add_trace(go.Scatter(
        x=[as_float(r["params_billions"]) for r in rows], y=[round(as_float(r[col.name]) * scale, 1) for r in rows],
        mode="markers", name=col.label, text=[run_name(r) for r in rows],
        hovertemplate="%{text}<br>%{x:.3g}B parameters<br>" + html.escape(col.label) + " %{y:.1f}<extra></extra>"))
    if left_out:
        fig.update_layout(title=f"{col.label} against model size ({left_out} run{'s' if left_out != 1 else ''} "
                                "of unknown size left out)")
    return fig


def dimension_cards(schema: Schema) -> list[api.Card]:
    """The benchmarks whose cards list dimensions to chart."""
    return [card for card in schema.cards if card.dimensions]


def _interval(row: dict, column: str, scale: float) -> tuple[float, float] | None:
    """The distances from a score to its 95% interval's ends (None: the frame has no finite interval)."""
    value, low, high = (as_float(row.get(name)) for name in
                        (column, interval_name(column, "low"), interval_name(column, "high")))
    if any(math.isnan(v) for v in (value, low, high)):
        return None
    return (max(high - value, 0.0) * scale, max(value - low, 0.0) * scale)


def dimension_figure(raw: pd.DataFrame | None, schema: Schema, benchmark: str, keys: Sequence[str]) -> go.Figure:
    """Bars of one or two runs (`keys`: run keys, the first two used) on the benchmark's dimensions, percentages on
    one axis and other numbers (a CIDEr) on their own, each with its 95% interval where the frame has one; a
    dimension no picked run has a value on is left out."""
    card = schema.card(benchmark)
    dims = [card.metric(k) for k in card.dimensions] if card is not None else []
    rows = [] if raw is None or len(raw) == 0 else [r for key in list(dict.fromkeys(k for k in keys if k))[:2]
                                                    for r in raw[raw["key"] == key].to_dict("records")[:1]]
    columns = [(m, f"{card.name}_{m.key}") for m in dims]
    columns = [(m, c) for m, c in columns if any(not math.isnan(as_float(r.get(c))) for r in rows)]
    percent = [(m, c) for m, c in columns if m.kind in api.PERCENT_KINDS]
    other = [(m, c) for m, c in columns if m.kind not in api.PERCENT_KINDS]
    parts = [p for p in (percent, other) if p]
    title = f"{card.title} by dimension" if card is not None else "By dimension"
    if not rows or not parts:
        fig = go.Figure()
        fig.update_layout(title=title)
        return _message(fig, "Pick a run with scores on this benchmark's dimensions." if card is not None and dims
                        else "This benchmark lists no dimensions.")
    widths = [len(p) for p in parts]
    fig = make_subplots(rows=1, cols=len(parts), column_widths=[w / sum(widths) for w in widths],
                        horizontal_spacing=0.12 if len(parts) > 1 else 0.0)
    for n, row in enumerate(rows):
        name = run_name(row)
        for col_no, part in enumerate(parts, start=1):
            scale = 100.0 if part is percent else 1.0
            values = [as_float(row.get(c)) for _, c in part]
            bars = [_interval(row, c, scale) for _, c in part]
            error = None
            if any(b is not None for b in bars):
                error = {"type": "data", "symmetric": False, "array": [b[0] if b else 0.0 for b in bars],
                         "arrayminus": [b[1] if b else 0.0 for b in bars]}
            fig.add_trace(go.Bar(
                x=[html.escape(m.label) for m, _ in part],
                y=[None if math.isnan(v) else round(v * scale, 1 if scale > 1 else 3) for v in values],
                name=name, legendgroup=str(n), showlegend=col_no == 1, offsetgroup=str(n), error_y=error,
                marker_color=("#1f77b4", "#ff7f0e")[n],
                hovertemplate=name + "<br>%{x}: %{y}<extra></extra>"), row=1, col=col_no)
    for col_no, part in enumerate(parts, start=1):
        labels = list(dict.fromkeys(html.escape(m.label) for m, _ in part))
        fig.update_yaxes(title_text=PERCENT_AXIS if part is percent else labels[0] if len(labels) == 1 else OTHER_AXIS,
                         row=1, col=col_no)
    fig.update_layout(title=title, barmode="group", legend={"orientation": "h", "y": -0.3}, margin={"t": 48})
    return fig
