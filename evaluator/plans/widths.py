"""How wide a score's 95% interval is expected to be at a suite's size, before any run: for About and
docs/benchmarks.md, the lite suites beside the full ones.

Each benchmark's headline score is taken as a share at 50%, the widest case, with its items as the units that
repeat (a CURE instance, a SimpleQA or LAVE question, a ReForm-Eval instance across its repeats). A score over every
item has variance p(1 - p) / n; a score that averages strata (ReForm-Eval: the mean over its accuracy dimensions of
the mean over each one's datasets) has variance sum of w_s^2 p(1 - p) / n_s over its strata, w_s being a stratum's
weight in it. The interval is then Wilson's (evaluator.metrics.intervals.wilson) at the effective number of items
that variance implies, as `mean_interval` takes a clustered proportion's: an expectation, not a measurement.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from evaluator.benchmarks import get_benchmark, lite as lite_rule
from evaluator.benchmarks.lite import EQUAL
from evaluator.metrics.intervals import wilson

SHARE = 0.5  # the widest case


@dataclass(frozen=True)
class Width:
    """One benchmark's headline score: its expected 95% half-width in points on the lite and on the full suite."""

    benchmark: str
    metric: str
    lite_items: int
    lite_half_width: float
    full_items: int
    full_half_width: float


def half_width(weights_and_sizes: list[tuple[float, int]], share: float = SHARE) -> float:
    """The expected 95% half-width, in points, of a weighted mean of strata ([(weight, items)], weights summing to
    1) of a share `share`: Wilson's interval at the effective items the variance implies."""
    variance = sum(w * w * share * (1 - share) / n for w, n in weights_and_sizes if n > 0 and w > 0)
    if variance <= 0:
        return math.nan
    effective = share * (1 - share) / variance
    low, high = wilson(share * effective, effective)
    return 100.0 * (high - low) / 2


def _weights(name: str, strata: dict[str, int]) -> dict[str, float]:
    """Each stratum's weight in the headline score: ReForm-Eval's by its dimensions (the benchmark's own rule), an
    equal-allocation benchmark's equal, else by size."""
    benchmark = get_benchmark(name)
    weighing = getattr(benchmark, "headline_weights", None)
    if callable(weighing):
        return weighing(strata)
    total = sum(strata.values())
    if benchmark.CARD.lite.allocation == EQUAL:
        return {s: 1.0 / len(strata) for s in strata}
    return {s: n / total for s, n in strata.items()}


def expected(name: str) -> Width | None:
    """The expected widths of a benchmark's headline score on its lite and full suites (None: it has no lite rule)."""
    card = get_benchmark(name).CARD
    if card.lite is None:
        return None
    full = dict(card.lite.strata)
    lite = lite_rule.sizes(card.lite, full)
    weights = _weights(name, full)
    return Width(name, card.default_metric, sum(lite.values()),
                 half_width([(weights[s], lite[s]) for s in full]), sum(full.values()),
                 half_width([(weights[s], full[s]) for s in full]))
