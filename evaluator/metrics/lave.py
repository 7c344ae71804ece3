"""LAVE (LLM-Assisted VQA Evaluation, arXiv 2310.02567): rating to score, and agreement with string metrics.

The judge rates an answer 1 (incorrect), 2 (ambiguous / incomplete) or 3 (correct); the item score is
s = (r - 1) / 2 in {0, 0.5, 1} and LAVE is the mean of s. Pure functions, no model calls.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

AGREEMENT_RULE = "LAVE correct = rating 3 (score >= 1.0); other correct = score >= {threshold:g}"


def lave_score(rating: int) -> float:
    """(r - 1) / 2 for a rating r in {1, 2, 3}; anything else (0, 4, 2.5, "3", True) raises ValueError."""
    if isinstance(rating, bool) or not isinstance(rating, (int, np.integer)) or rating not in (1, 2, 3):
        raise ValueError(f"a LAVE rating must be 1, 2 or 3, got {rating!r}")
    return (int(rating) - 1) / 2


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation with average ranks for ties; NaN for fewer than 2 items or a constant side."""
    if len(x) < 2:
        return math.nan
    rx = pd.Series(x).rank(method="average").to_numpy()
    ry = pd.Series(y).rank(method="average").to_numpy()
    dx, dy = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    if den == 0:
        return math.nan
    return float((dx * dy).sum() / den)


def lave_agreement(lave: list[float], other: list[float], threshold: float = 0.5) -> dict:
    """How far per-item LAVE scores and one string metric (VQA accuracy, ANLS, exact match, ...) agree.

    Items where either side is NaN (or None) are dropped. Rule for "correct": LAVE counts an item correct only
    at rating 3 (score >= 1.0; rating 2 = ambiguous counts as not correct); the other metric counts it correct when
    its score >= ``threshold`` (0.5 by default: VQA accuracy 0.6+ = at least two matching annotators, ANLS above 0.5,
    exact match 1). Returns ``{"n", "agreement", "spearman", "rule"}``: agreement = share of items where both call it
    correct or both call it not correct (NaN when n == 0); spearman = rank correlation of the raw scores (average
    ranks for ties; NaN when n < 2 or either side is constant).
    """
    a = np.asarray(lave, dtype=float)
    b = np.asarray(other, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"lave and other must be flat lists of the same length, got {a.shape} and {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    n = int(len(a))
    agreement = float(np.mean((a >= 1.0) == (b >= threshold))) if n else math.nan
    return {
        "n": n,
        "agreement": agreement,
        "spearman": _spearman(a, b),
        "rule": AGREEMENT_RULE.format(threshold=threshold),
    }
