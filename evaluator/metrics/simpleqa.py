"""SimpleQA metrics (see BENCHMARKS.md): grade fractions, F-score, breakdowns, and calibration.

Grades: "A" = correct, "B" = incorrect, "C" = not attempted. Anything else (None, "", a stray string) is
*ungraded* (the judge failed or its reply could not be parsed): it is counted as "ungraded" and left out of every
fraction, never scored as wrong.

    correct, incorrect, not_attempted   fractions of the graded items
    attempted                           correct + incorrect
    correct_given_attempted             correct / attempted (0 when nothing was attempted)
    f_score                             harmonic mean of correct and correct_given_attempted (0 when both are 0)

With no graded item at all every fraction is undefined and returned as NaN.

Calibration (no official code exists): expected_calibration_error bins confidences (0..1) and returns the
item-weighted mean of |accuracy - mean confidence| over non-empty bins. Two binnings: n_bins equal-width bins
([0, 0.1), ..., [0.9, 1.0], 1.0 falls in the last bin), or with quantile=True n_bins equal-count bins, as the
SimpleQA write-up draws its calibration (30 of them, QUANTILE_BINS): the pairs sorted by confidence, the i-th of N
in bin floor(i * n_bins / N), except that equal confidences are never split: a run of them stays in the bin where
it starts (so the bins depend on the values alone, not on the order they came in). reliability_points gives the
per-bin points for a plot; frequency_points does the same for answer-frequency calibration (x = share of the k
samples that gave the most frequent answer, y = whether that answer was correct). Pairs whose confidence is
missing/NaN or whose correctness is None (ungraded) are skipped. Pure functions, no models.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Hashable, Iterable

GRADES = ("A", "B", "C")
QUANTILE_BINS = 30  # the SimpleQA write-up's calibration: 30 equal-count bins
EQUAL_WIDTH_BINS = 10  # ours before, kept as a second figure


def simpleqa_scores(grades: Iterable) -> dict[str, float]:
    """Fractions over the graded items plus counts n (graded) and ungraded."""
    grades = list(grades)
    graded = [g for g in grades if g in GRADES]
    n = len(graded)
    ungraded = len(grades) - n
    if n == 0:
        nan = math.nan
        return {"correct": nan, "incorrect": nan, "not_attempted": nan, "attempted": nan,
                "correct_given_attempted": nan, "f_score": nan, "n": 0, "ungraded": ungraded}
    correct = graded.count("A") / n
    incorrect = graded.count("B") / n
    not_attempted = graded.count("C") / n
    attempted = correct + incorrect
    cga = correct / attempted if attempted > 0 else 0.0
    f_score = 2 * correct * cga / (correct + cga) if (correct + cga) > 0 else 0.0
    return {"correct": correct, "incorrect": incorrect, "not_attempted": not_attempted, "attempted": attempted,
            "correct_given_attempted": cga, "f_score": f_score, "n": n, "ungraded": ungraded}


def simpleqa_breakdown(grades: Iterable, keys: Iterable[Hashable]) -> dict:
    """simpleqa_scores per key (e.g. topic or answer_type), keys in first-seen order."""
    grades, keys = list(grades), list(keys)
    if len(grades) != len(keys):
        raise ValueError(f"{len(grades)} grades but {len(keys)} keys")
    groups: dict = defaultdict(list)
    for g, k in zip(grades, keys):
        groups[k].append(g)
    return {k: simpleqa_scores(v) for k, v in groups.items()}


def _pairs(xs, correct) -> list[tuple[float, bool]]:
    xs, correct = list(xs), list(correct)
    if len(xs) != len(correct):
        raise ValueError(f"{len(xs)} confidences but {len(correct)} correctness values")
    out = []
    for x, c in zip(xs, correct):
        if x is None or c is None:
            continue
        x = float(x)
        if math.isnan(x):
            continue
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"confidence {x} outside 0..1")
        out.append((x, bool(c)))
    return out


def _bin_index(x: float, n_bins: int) -> int:
    return min(int(x * n_bins + 1e-9), n_bins - 1)  # the epsilon keeps 0.3 (0.29999...) in [0.3, 0.4)


def _quantile_bins(pairs: list[tuple[float, bool]], n_bins: int) -> dict[int, list[tuple[float, bool]]]:
    """Equal-count bins: sorted by confidence, the i-th pair of N in bin i * n_bins // N; a run of equal
    confidences stays whole in the bin where it starts."""
    pairs = sorted(pairs)  # by confidence; equal confidences stay in one bin, so their order never matters
    bins: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    starts: dict[float, int] = {}
    for i, (x, c) in enumerate(pairs):
        bins[starts.setdefault(x, i * n_bins // len(pairs))].append((x, c))
    return bins


def reliability_points(confidences, correct, n_bins: int = 10, quantile: bool = False) -> list[dict]:
    """One point per non-empty bin (equal-width, or equal-count with quantile=True): bin_low, bin_high (the bin's
    edges; for equal-count bins its least and greatest confidence), confidence (mean), accuracy, n."""
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    pairs = _pairs(confidences, correct)
    if quantile:
        bins = _quantile_bins(pairs, n_bins)
    else:
        bins = defaultdict(list)
        for x, c in pairs:
            bins[_bin_index(x, n_bins)].append((x, c))
    points = []
    for b in sorted(bins):
        items = bins[b]
        points.append({
            "bin_low": min(x for x, _ in items) if quantile else b / n_bins,
            "bin_high": max(x for x, _ in items) if quantile else (b + 1) / n_bins,
            "confidence": sum(x for x, _ in items) / len(items),
            "accuracy": sum(1 for _, c in items if c) / len(items),
            "n": len(items),
        })
    return points


def expected_calibration_error(confidences, correct, n_bins: int = 10, quantile: bool = False) -> float:
    """Item-weighted mean over bins (reliability_points) of |accuracy - mean confidence|; NaN with no usable
    pair."""
    points = reliability_points(confidences, correct, n_bins, quantile)
    total = sum(p["n"] for p in points)
    if total == 0:
        return math.nan
    return sum(p["n"] * abs(p["accuracy"] - p["confidence"]) for p in points) / total


def frequency_points(frequencies, correct, n_bins: int = 10, quantile: bool = False) -> list[dict]:
    """Answer-frequency calibration: per bin of the top answer's frequency (0..1), its mean and the accuracy.

    Points have bin_low, bin_high, frequency (mean), accuracy, n.
    """
    return [{"bin_low": p["bin_low"], "bin_high": p["bin_high"], "frequency": p["confidence"],
             "accuracy": p["accuracy"], "n": p["n"]}
            for p in reliability_points(frequencies, correct, n_bins, quantile)]
