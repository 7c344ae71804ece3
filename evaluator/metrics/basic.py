"""Two rules every benchmark shares: which option is chosen from its scores, and the mean of defined values."""
from __future__ import annotations

import math
from typing import Iterable


def argmax(values: list[float]) -> int:
    """First index of the largest value; NaN never wins; -1 when there is none (the option-choice rule)."""
    best, best_val = -1, -math.inf
    for i, v in enumerate(values):
        if not math.isnan(v) and (best < 0 or v > best_val):
            best, best_val = i, v
    return best


def nan_mean(values: Iterable[float]) -> float:
    """The mean of the defined values (NaN ones skipped); NaN when none is defined."""
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan
