"""How much to believe a score: its standard error and 95% interval, and ranks that claim no more than the intervals.

After "Adding Error Bars to Evals" (Miller, 2024) and lm-evaluation-harness's standard errors:

- `mean_interval`: a mean over items, its standard error from the central limit theorem, clustered when items come in
  groups that share a unit (a CURE chain, a ReForm-Eval instance across its wordings, a question across its samples):
  SE = sqrt(sum over clusters of (sum of the cluster's deviations from the mean)^2) / n, which is the plain
  sqrt(variance / n) when every cluster has one item. A mean of 0/1 outcomes (a proportion) gets Wilson's interval,
  which stays inside [0, 1] near 0 and 1, at the effective sample size the clustering leaves (n over the design
  effect; the number of clusters when the outcomes are all alike); any other mean gets mean +- 1.96 SE, cut to the
  range its values can take, and when its clustered outcomes are all alike (SE 0) and that range is finite, Wilson's
  interval of the mean rescaled to 0..1 over the range, at the number of clusters (`range_wilson`): a bounded
  value's variance is at most a proportion's of the same mean, so agreeing items never claim an exact score.
- `bootstrap_interval`: a ratio or composite metric (Cf, Cb, an F score, ECE, CIDEr, BLEU, an instability, a mean of
  scores) recomputed on clusters drawn with replacement, `iters` times from a fixed seed: SE is the draws' standard
  deviation, the interval their 2.5th and 97.5th percentiles (so it stays inside whatever range the metric has);
  draws that all agree, for a statistic with a known range, get `range_wilson` at the number of clusters instead.
- A standard error is never 0 beside an interval of width: it is then the interval's width / (2 x 1.96)
  (`spread_stderr`), and a record's bounds are rounded outward around its score (`Interval.record`).
- `ranks`: a row's rank is one plus the number of rows whose interval lies wholly above its own (Chatbot Arena's
  rule), so rows that cannot be told apart share a rank.

Pure functions over plain numbers; NaN where a value is undefined.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile
BOOTSTRAP_ITERS = 1000
BOOTSTRAP_SEED = 0
# a corpus statistic (BLEU, CIDEr, a composite with captions) costs time in proportion to the units it is recomputed
# over: at most this many draws x units per bootstrap (CIDEr over 1,000 questions x 200 draws took 28 s on 2 cores),
# and never fewer than MIN_DRAWS draws
DRAW_BUDGET = 1_000_000
MIN_DRAWS = 20
CLT, CLUSTERED, WILSON, BOOTSTRAP = "clt", "clustered clt", "wilson", "bootstrap"
ALIKE = "outcomes all alike: wilson on the range"
PLACES = 6  # the decimals a record keeps


@dataclass(frozen=True)
class Interval:
    """A score's standard error, its 95% interval (low, high), the items or clusters it rests on (n), and how it was
    computed (method: e.g. "wilson, clustered clt by chain", "bootstrap over 20 instances")."""

    stderr: float
    low: float
    high: float
    n: int
    method: str

    def record(self, score: float | None = None) -> dict:
        """As results.json keeps it (benchmarks.<name>.intervals.<metric>): the bounds widened to hold `score` (a
        bootstrap's percentiles may miss the statistic itself) and rounded outward, so that low <= score <= high
        holds of the score and of the score rounded to as many decimals."""
        low, high = self.low, self.high
        if _number(score) and _number(low) and _number(high):
            low, high = min(low, float(score)), max(high, float(score))
        scale = 10 ** PLACES
        return {"stderr": _rounded(spread_stderr(self.stderr, low, high)),
                "low": _rounded(math.floor(low * scale) / scale if _number(low) else low),
                "high": _rounded(math.ceil(high * scale) / scale if _number(high) else high), "n": self.n,
                "method": self.method}


def _rounded(value: float | None) -> float | None:
    return round(float(value), PLACES) if _number(value) else None


def spread_stderr(stderr: float, low: float, high: float) -> float:
    """A standard error that is never 0 beside an interval of width: the width / (2 x 1.96) where `stderr` is 0."""
    if _number(stderr) and stderr == 0 and _number(low) and _number(high) and high > low:
        return (high - low) / (2 * Z95)
    return stderr


def range_wilson(mean: float, size: int, within: tuple[float, float]) -> tuple[float, float]:
    """Wilson's 95% interval of a mean of values in `within` (finite), rescaled to 0..1 over that range, at `size`
    units: the honest width when the units all agree (a bounded value's variance is at most (high - mean) x
    (mean - low), a proportion's). A range of no width: the mean itself."""
    low, high = float(within[0]), float(within[1])
    span = high - low
    if not (math.isfinite(span) and span > 0) or size <= 0:
        return mean, mean
    share = min(1.0, max(0.0, (mean - low) / span))
    bottom, top = wilson(share * size, size)
    return min(mean, low + bottom * span), max(mean, low + top * span)


def wilson(successes: float, n: float) -> tuple[float, float]:
    """Wilson's 95% score interval of a proportion successes / n (n may be an effective, non-whole size)."""
    if n <= 0:
        return math.nan, math.nan
    p = successes / n
    denominator = 1 + Z95 ** 2 / n
    centre = (p + Z95 ** 2 / (2 * n)) / denominator
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def clustered_stderr(values: Sequence[float], clusters: Sequence[Hashable] | None = None) -> float:
    """The standard error of the mean of `values`, clustered by `clusters` (None: every value its own cluster)."""
    n = len(values)
    if n == 0:
        return math.nan
    mean = sum(values) / n
    sums: dict = {}
    for index, value in enumerate(values):
        key = clusters[index] if clusters is not None else index
        sums[key] = sums.get(key, 0.0) + (value - mean)
    return math.sqrt(sum(s * s for s in sums.values())) / n


def mean_interval(values: Sequence[float], clusters: Sequence[Hashable] | None = None, unit: str = "",
                  proportion: bool = True, within: tuple[float, float] = (-math.inf, math.inf)) -> Interval:
    """The interval of a mean over items (NaN values left out, with their clusters). `unit` names what an item, or
    a cluster, is in the method ("clt over questions", "clustered clt by chain"); clusters None or all of one item:
    the plain central-limit standard error. proportion False: the values are not 0/1 outcomes even when they happen
    to be (an entropy), so no Wilson. `within`: the range a mean of these values can take (a score in 0..1, an
    entropy from 0), to which a central-limit interval is cut.
    Clustered 0/1 outcomes that are all alike (all 0 or all 1) show no spread to measure the clustering by: Wilson's
    interval is then taken at the number of clusters, the least information they can hold, not at the items; any
    other mean whose clustered outcomes all agree (SE 0), in a finite `within`, gets `range_wilson` there. The
    standard error is then the interval's width / (2 x 1.96), never 0."""
    kept = [(v, clusters[i] if clusters is not None else i) for i, v in enumerate(values)
            if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n = len(kept)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, CLT)
    numbers = [float(v) for v, _ in kept]
    keys = [k for _, k in kept]
    size = len(set(keys))
    grouped = clusters is not None and size < n
    stderr = clustered_stderr(numbers, keys if grouped else None)
    method = f"{CLUSTERED} by {unit or 'cluster'}" if grouped else (f"{CLT} over {unit}s" if unit else CLT)
    mean = sum(numbers) / n
    if proportion and all(v in (0.0, 1.0) for v in numbers):
        plain = math.sqrt(mean * (1 - mean) / n)
        effective = n * (plain / stderr) ** 2 if stderr > 0 and plain > 0 else (size if plain == 0 else n)
        low, high = wilson(mean * effective, effective)
        return Interval(spread_stderr(stderr, low, high), low, high, size, f"{WILSON}, {method}")
    if stderr <= 1e-12 * max(1.0, abs(mean)) and all(math.isfinite(float(end)) for end in within):
        low, high = range_wilson(mean, size, within)
        return Interval(spread_stderr(0.0, low, high), low, high, size,
                        f"{ALIKE} {float(within[0]):g}..{float(within[1]):g} at the clusters, {method}")
    low, high = float(within[0]), float(within[1])
    return Interval(stderr, max(low, mean - Z95 * stderr), min(high, mean + Z95 * stderr), size, method)


def affordable_draws(units: int, iters: int, budget: int = DRAW_BUDGET, least: int = MIN_DRAWS) -> int:
    """The draws for a bootstrap over `units` clusters whose statistic costs time in proportion to them: `iters`, fewer
    when units x iters would pass `budget` (a full suite's corpus metric), never fewer than `least` (nor than
    `iters`). The interval's method says how many were drawn."""
    if units <= 0:
        return iters
    return max(min(iters, budget // units), min(least, iters))


def bootstrap_interval(clusters: Sequence[Hashable], statistic: Callable[[list], float],
                       iters: int = BOOTSTRAP_ITERS, seed: int = BOOTSTRAP_SEED, unit: str = "",
                       within: tuple[float, float] | None = None) -> Interval:
    """The interval of `statistic(drawn clusters)` over `iters` draws of the clusters with replacement from a fixed
    seed (the same run gives the same interval). Draws where the statistic is undefined (NaN) are left out; fewer
    than half of them defined, or fewer than 2 clusters: NaN. `within`: the statistic's range, where it has one
    (draws that all agree then get `range_wilson` at the number of clusters)."""
    ranges = {"": within} if within is not None else None
    return bootstrap_intervals(clusters, lambda drawn: {"": statistic(drawn)}, iters, seed, unit, ranges)[""]


def bootstrap_intervals(clusters: Sequence[Hashable], statistics: Callable[[list], dict[str, float]],
                        iters: int = BOOTSTRAP_ITERS, seed: int = BOOTSTRAP_SEED, unit: str = "",
                        within: dict[str, tuple[float, float]] | None = None) -> dict[str, Interval]:
    """bootstrap_interval for several statistics computed together on each draw (`statistics(drawn)` -> {key:
    value}): one interval per key any draw gave; `within`: the range of each key that has one."""
    pool = list(dict.fromkeys(clusters))
    method = f"{BOOTSTRAP} over {unit or 'cluster'}s, {iters} draws, seed {seed}"
    if len(pool) < 2:
        keys = statistics(pool) if pool else {"": math.nan}
        return {key: Interval(math.nan, math.nan, math.nan, len(pool), method) for key in keys}
    draw = random.Random(seed)
    found: dict[str, list[float]] = {}
    for _ in range(iters):
        for key, value in statistics([pool[draw.randrange(len(pool))] for _ in pool]).items():
            found.setdefault(key, [])
            if value is not None and math.isfinite(value):
                found[key].append(float(value))
    out = {}
    for key, values in found.items():
        if len(values) < iters / 2:
            out[key] = Interval(math.nan, math.nan, math.nan, len(pool), method)
            continue
        values.sort()
        mean = sum(values) / len(values)
        stderr = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
        low, high = _percentile(values, 0.025), _percentile(values, 0.975)
        bounds = (within or {}).get(key)
        if high <= low and bounds is not None:
            low, high = range_wilson(low, len(pool), bounds)
            out[key] = Interval(spread_stderr(0.0, low, high), low, high, len(pool),
                                f"{method}; draws all alike: wilson on the range {bounds[0]:g}..{bounds[1]:g} at "
                                "the clusters")
            continue
        out[key] = Interval(spread_stderr(stderr, low, high), low, high, len(pool), method)
    return out


def _percentile(ordered: list[float], share: float) -> float:
    """The `share` percentile of sorted values, interpolated linearly (numpy's default)."""
    position = share * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def ranks(bounds: Sequence[tuple[float, float]], higher_is_better: bool = True) -> list[int]:
    """Each row's rank: one plus the number of rows whose interval (low, high) lies wholly above its own (below it,
    when lower is better). A row without an interval counts its own value as both ends."""
    places = []
    for low, high in bounds:
        if higher_is_better:
            better = sum(1 for other_low, _ in bounds if other_low > high)
        else:
            better = sum(1 for _, other_high in bounds if other_high < low)
        places.append(1 + better)
    return places


@dataclass(frozen=True)
class Paired:
    """Two runs compared on the questions both answered: the mean of A's score minus B's (a fraction of a point per
    question), its interval, how many questions, and on how many A was right and B wrong, and the reverse."""

    difference: float
    interval: Interval
    shared: int
    a_only_right: int
    b_only_right: int

    def text(self) -> str:
        """E.g. "A - B = +4.2 points (95% -1.3 to +9.8), on 50 shared items, A right and B wrong on 9, the reverse
        on 7"."""
        if self.shared == 0:
            return "no shared items: the two runs cannot be compared"
        low, high = self.interval.low, self.interval.high
        return (f"A - B = {100 * self.difference:+.1f} points (95% {100 * low:+.1f} to {100 * high:+.1f}), on "
                f"{self.shared} shared items, A right and B wrong on {self.a_only_right}, the reverse on "
                f"{self.b_only_right}")


def paired_difference(a: dict[Hashable, float], b: dict[Hashable, float],
                      clusters: dict[Hashable, Hashable] | None = None, unit: str = "") -> Paired:
    """A against B on the questions both scored (scores in 0..1 by question; NaN: not scored): the per-question
    differences' mean and its central-limit interval (clustered by `clusters`, question -> its unit, where questions
    come in groups), and the questions only one of them got right (a score of 1 against 0)."""
    shared = [q for q in a if q in b and _number(a[q]) and _number(b[q])]
    differences = [float(a[q]) - float(b[q]) for q in shared]
    keys = [clusters.get(q, q) for q in shared] if clusters else None
    interval = mean_interval(differences, keys, unit=unit, proportion=False, within=(-1.0, 1.0))
    mean = sum(differences) / len(differences) if differences else math.nan
    return Paired(mean, interval, len(shared), sum(1 for q in shared if a[q] >= 1 and b[q] <= 0),
                  sum(1 for q in shared if b[q] >= 1 and a[q] <= 0))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
