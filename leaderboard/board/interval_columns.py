"""The interval columns: each score column's standard error, 95% interval, n and method (INTERVAL_PARTS), read from a
results file's benchmarks.<name>.intervals.<metric> (evaluator.metrics.intervals computes them), the overall score's
interval combined from its benchmarks', and the board-only text column that shows an interval ("45.0-67.3 (n 20)")."""
from __future__ import annotations

import math
from typing import Sequence

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
    "(its 2.5th and 97.5th percentiles). The overall score's interval treats its benchmarks as independent samples: "
    "its standard error is the root of the sum of theirs squared over the number of benchmarks. Empty when the score is "
    "undefined, and for runs published before intervals were recorded.")


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
    """The overall score's interval: each benchmark's standard error taken as its 95% interval's half-width / 1.96
    (so that a proportion at 0 or 1 still counts its Wilson width), the benchmarks independent samples, so the mean's
    standard error is sqrt(sum of SE^2) / k, and the interval the mean +- 1.96 SE kept inside [0, 1]. None when a
    benchmark in the mean has no interval (a run published before intervals were recorded). `scores`: the headline
    score of each benchmark in the overall mean (leaderboard.board.columns.headline_scores)."""
    if not scores:
        return None
    errors, items = [], 0
    for card in cards:
        if card.name not in scores:
            continue
        record = value_at(results, ("benchmarks", card.name, "intervals", card.default_metric))
        low, high = finite(value_at(record, ("low",))), finite(value_at(record, ("high",)))
        n = finite(value_at(record, ("n",)))
        if low is None or high is None or n is None:
            return None
        errors.append((high - low) / 2 / api.Z95)
        items += int(n)
    mean, stderr = sum(scores.values()) / len(scores), math.sqrt(sum(e * e for e in errors)) / len(errors)
    return {"stderr": stderr, "low": max(0.0, mean - api.Z95 * stderr), "high": min(1.0, mean + api.Z95 * stderr),
            "n": items, "method": f"{OVERALL_METHOD} over {len(errors)} benchmark(s)"}


OVERALL_METHOD = "independent benchmarks: sqrt(sum of SE^2) / k"


def interval_text_column(score: Column) -> Column:
    """The board-only column that shows a score's 95% interval and n as text ("45.0-67.3 (n 20)")."""
    return Column(f"{score.name}_interval", f"{score.label} 95%", (), INTERVAL,
                  f"{score.label}'s 95% interval, low-high, and n: the items or clusters it rests on (chains, "
                  "instances or questions; hover a score for its standard error and method). Empty for runs published "
                  "before intervals were recorded.", group=score.group, higher_is_better=score.higher_is_better,
                  interval_of=score.name)
