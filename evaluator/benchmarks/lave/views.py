"""LAVE's section of the board: one run's LAVE beside each strict string metric, and how often they agree."""
from __future__ import annotations

import math

import pandas as pd

from evaluator.benchmarks.lave.scoring import STRING_METRICS

NA = "n/a"
HEADERS = ["Metric", "Score", "Agrees with LAVE", "Spearman", "Items"]


def _number(value, percent: bool) -> str:
    """A score as the board shows it: a percentage with one decimal, or a plain number; n/a when undefined."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        return NA
    return f"{100 * value:.1f}" if percent else f"{value:.3f}"


def lave_agreement_frame(result: dict | None) -> pd.DataFrame:
    """One run's LAVE beside each strict metric: its score, how often it agrees with LAVE on correct vs not, the
    Spearman correlation of the per-item scores and the items compared (empty when the run has no LAVE)."""
    lave = ((result or {}).get("benchmarks") or {}).get("lave") or {}
    if not lave.get("scores"):
        return pd.DataFrame(columns=HEADERS)
    counts = lave.get("counts") or {}
    ratings = (lave.get("extra") or {}).get("ratings") or {}
    spread = ", ".join(f"{ratings.get(k, 0)} rated {k}" for k in ("3", "2", "1"))
    bare = f"; {counts['no_rationale']} with no rationale" if "no_rationale" in counts else ""  # newer results
    rows = [["LAVE", _number(lave["scores"].get("lave"), True), "-", "-",
             f"{counts.get('rated', 0)} rated ({spread}; {counts.get('rating_fallback', 0)} without a rating "
             f"counted as 2{bare}; {counts.get('unrated', 0)} unrated)"]]
    agreement = (lave.get("extra") or {}).get("agreement") or {}
    for metric, label in STRING_METRICS.items():
        agree = agreement.get(metric) or {}
        rows.append([label, _number(lave["scores"].get(metric), metric != "cider"),
                     _number(agree.get("agreement"), True), _number(agree.get("spearman"), False),
                     str(agree.get("n", 0))])
    return pd.DataFrame(rows, columns=HEADERS)
