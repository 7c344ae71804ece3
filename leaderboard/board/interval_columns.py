"""The interval columns: each score column's standard error, 95% interval, n and method (INTERVAL_PARTS), read from a
results file's benchmarks.<name>.intervals.<metric> (evaluator.metrics.intervals computes them), the overall score's
interval combined from its benchmarks', and the board-only text column that shows an interval ("45.0-67.3 (n 20)")."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from evaluator import api
from leaderboard.board.column_types import COUNT, INTERVAL, TEXT, Column, finite, value_at

# an interval's parts, each a raw column "<score column>_<part>": its standard error, its 95% interval (low, high;
# on the score's own scale: fractions for percentages) and the items or clusters it rests on
INTERVAL_PARTS = ("stderr", "low", "high", "n", "method")
INTERVALS_DESCRIPTION = (
    "Every score column `<column>` of a benchmark (and `overall`) has five companions: `<column>_stderr` (its "
    "standard error), `<column>_low` and `<column>_high` (its 95% interval, on the score's own scale: fractions for "
    "percentages), `<column>_n` (the items or clusters it rests on: chains, instances or questions) and "
    "`<column>_method` (how it was computed, e.g. \"wilson, clustered clt by chain\"). A mean over "
    "items has the central-limit standard error, clustered by the unit that repeats (a chain of questions about one "
    "image, an instance asked in several wordings, a question sampled several times), and Wilson's interval when it "
    "is a proportion (so that it stays inside 0..1); a ratio or a composite (a conditional ratio, an F score, a "
    "calibration error, BLEU, CIDEr, a mean over dimensions) is bootstrapped over the same clusters from a fixed seed "
    "(its 2.5th and 97.5th percentiles). A mean whose clustered outcomes all agree gets Wilson's interval on its "
    "range at the number of clusters (its method says \"outcomes all alike\"), never a width of 0. The overall "
    "score's interval treats its benchmarks as independent samples: each side's distance from the score is the root "
    "of the sum of the benchmarks' own distances on that side squared over the number of benchmarks (one benchmark: "
    "its own interval), and its standard error the same of theirs. Empty when the score is undefined, and for runs "
    "published before intervals were recorded.")


def interval_name(column: str, part: str) -> str:
    """The raw column of one part of a score column's interval."""
    return f"{column}_{part}"


def interval_columns(score: Column, where: tuple[str, ...] = ()) -> tuple[Column, ...]:
    """The four interval columns of a score column: at `where` + part in a results file (a benchmark's
    benchmarks.<name>.intervals.<metric>), or derived by `score.derive`'s companion (the overall score's)."""
    out = []
    for part in INTERVAL_PARTS:
        kind = COUNT if part == "n" else TEXT if part == "method" else score.kind
        what = {"stderr": "standard error", "low": "95% interval's lower end", "high": "95% interval's upper end",
                "n": "items or clusters its interval rests on", "method": "interval's method"}[part]
        out.append(Column(interval_name(score.name, part), f"{score.label} {part}", (*where, part) if where else (),
                          kind, f"{score.label}: its {what} (see the interval columns' note).", group=score.group,
                          higher_is_better=score.higher_is_better, interval_of=score.name))
    return tuple(out)


def overall_interval(results: dict, scores: dict[str, float], cards: Sequence[api.Card]) -> dict | None:
    """The overall score's interval, its benchmarks independent samples: each side's distance from the mean is
    sqrt(sum of the benchmarks' distances on that side^2) / k, so a benchmark's Wilson interval cut at 0 or 1 keeps
    its other side, an overall over one benchmark is that benchmark's interval, and the interval stays inside [0, 1]
    (the root of a sum of squares is at most the sum). Its standard error: each benchmark's half-width / 1.96, combined
    alike. None when a benchmark in the mean has no interval (a run published before intervals were recorded).
    `scores`: the headline score of each benchmark in the overall mean (leaderboard.board.columns.headline_scores)."""
    if not scores:
        return None
    below, above, errors, items = [], [], [], 0
    for card in cards:
        if card.name not in scores:
            continue
        record = value_at(results, ("benchmarks", card.name, "intervals", card.default_metric))
        low, high = finite(value_at(record, ("low",))), finite(value_at(record, ("high",)))
        n = finite(value_at(record, ("n",)))
        if low is None or high is None or n is None:
            return None
        score = scores[card.name]
        below.append(max(0.0, score - low))
        above.append(max(0.0, high - score))
        errors.append((high - low) / 2 / api.Z95)
        items += int(n)
    mean, k = sum(scores.values()) / len(scores), len(errors)
    combined = (lambda parts: math.sqrt(sum(p * p for p in parts)) / k)
    return {"stderr": combined(errors), "low": max(0.0, mean - combined(below)),
            "high": min(1.0, mean + combined(above)), "n": items, "method": f"{OVERALL_METHOD} over {k} benchmark(s)"}


OVERALL_METHOD = "independent benchmarks: each side sqrt(sum of its distances^2) / k"


def hold_scores(frame: pd.DataFrame, columns: Sequence[Column]) -> pd.DataFrame:
    """Each score's interval columns made to hold the score (an older results file rounded its bounds and not its
    score) and its standard error never 0 beside an interval of width (then the width / (2 x 1.96)). On the columns'
    arrays, and the frame built once: a column at a time in pandas took some 0.3 s of every board built."""
    held: dict[str, np.ndarray] = {}
    for col in columns:
        if col.interval_of and col.name == interval_name(col.interval_of, "low") and col.interval_of in frame:
            high_name, stderr_name = interval_name(col.interval_of, "high"), interval_name(col.interval_of, "stderr")
            score, low, high = (frame[name].to_numpy(dtype=float) for name in (col.interval_of, col.name, high_name))
            free = np.isnan(score)
            with np.errstate(invalid="ignore"):
                low = np.where(free | np.isnan(low) | (low <= score), low, score)
                high = np.where(free | np.isnan(high) | (high >= score), high, score)
            held[col.name], held[high_name] = low, high
            if stderr_name in frame:
                stderr, width = frame[stderr_name].to_numpy(dtype=float), high - low
                with np.errstate(invalid="ignore"):
                    held[stderr_name] = np.where((stderr == 0) & (width > 0), width / (2 * api.Z95), stderr)
    if not held:
        return frame
    return pd.DataFrame({name: held[name] if name in held else frame[name] for name in frame.columns},
                        index=frame.index)


def interval_text_column(score: Column) -> Column:
    """The board-only column that shows a score's 95% interval and n as text ("45.0-67.3 (n 20)")."""
    return Column(f"{score.name}_interval", f"{score.label} 95%", (), INTERVAL,
                  f"{score.label}'s 95% interval, low-high, and n: the items or clusters it rests on (chains, "
                  "instances or questions; hover a score for its standard error and method). Empty for runs published "
                  "before intervals were recorded.", group=score.group, higher_is_better=score.higher_is_better,
                  interval_of=score.name)
