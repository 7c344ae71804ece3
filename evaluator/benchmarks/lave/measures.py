"""LAVE's board metrics in the explorer (ItemView.measure): the answers behind each one and the metric recomputed on
their details rows by the run's own scoring functions (scoring.headline_scores, scoring.agreement), so the
explorer's headline is the board's number. Behind LAVE: the answers the judge rated; behind VQA accuracy: the
answered questions with ten annotators' answers; behind the other strict metrics: every answered question; behind
an agreement: the answers both the judge and that metric scored; behind "unrated": the answers the judge could not
rate; behind "rating_fallback": the rated answers whose reply held no rating (counted as 2)."""
from __future__ import annotations

import math

import pandas as pd

from evaluator.benchmarks.item_tables import THOUGHT_MEASURE
from evaluator.benchmarks.lave.scoring import ITEM_METRICS, STRING_METRICS, agreement, headline_scores
from evaluator.benchmarks.spec import Measure

AGREE = "agree_"
KEYS = ("lave", *STRING_METRICS, "unrated", "rating_fallback", *(AGREE + m for m in STRING_METRICS))


def _defined(values: pd.Series) -> pd.Series:
    return pd.to_numeric(values, errors="coerce").notna()


def behind(details: pd.DataFrame, key: str) -> pd.Series:
    """Which details rows are behind the metric `key` (a boolean mask over the rows)."""
    answered = details["status"] == "ok"
    rated = answered & _defined(details["lave"])
    if key == "lave":
        return rated
    if key == "unrated":
        return answered & ~rated
    if key == "rating_fallback":
        return rated & details["rating_fallback"].fillna(False).astype(bool)
    if key.startswith(AGREE):
        return rated & _defined(details[key[len(AGREE):]])
    if key in ITEM_METRICS:
        return answered & _defined(details[key])
    return answered  # the corpus metrics (BLEU-4, CIDEr) are scored on every answer


def value(details: pd.DataFrame, key: str) -> float:
    """The metric `key` on these details rows, as the run scored it (NaN when they hold none)."""
    rows = [dict(r) for r in details[details["status"] == "ok"].to_dict("records")]
    for row in rows:
        row["lave"] = float(row["lave"]) if row.get("lave") is not None else math.nan
    if key == "unrated":
        return float(sum(1 for r in rows if math.isnan(r["lave"])))
    if key == "rating_fallback":
        return float(sum(1 for r in rows if not math.isnan(r["lave"]) and bool(r.get("rating_fallback"))))
    if key.startswith(AGREE):
        return float(agreement(rows, key[len(AGREE):])["agreement"]) if rows else math.nan
    return float(headline_scores(rows)[key])


def measure(key: str) -> Measure | None:
    """The Measure of one of LAVE's board metrics (None for a key it does not know)."""
    if key == "thought_unclosed":  # replies that ended inside their thought
        return THOUGHT_MEASURE
    if key not in KEYS:
        return None

    def rows(table: pd.DataFrame, details: pd.DataFrame) -> pd.Series:
        return table["item"].isin(details.loc[behind(details, key), "item"])

    return Measure(rows=rows, value=lambda details: value(details, key))
