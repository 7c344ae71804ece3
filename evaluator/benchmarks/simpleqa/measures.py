"""SimpleQA's board metrics in the explorer (ItemView.measure): the questions behind each one and the metric
recomputed on their details rows by the run's own scoring functions, so the explorer's headline is the board's
number. Behind the grade shares and the F-score: the graded answers; behind correct given attempted: the attempted
ones (correct or incorrect); behind "ungraded" and "cut off": those answers; behind the ECE: the questions whose
stated confidence was read and its guess graded."""
from __future__ import annotations

import math

import pandas as pd

from evaluator.benchmarks.item_tables import THOUGHT_MEASURE, text
from evaluator.benchmarks.simpleqa.scoring import MAIN_SCORES, confidence_ece, usable_confidence
from evaluator.benchmarks.spec import Measure
from evaluator.metrics.simpleqa import GRADES, simpleqa_scores

KEYS = (*MAIN_SCORES, "ungraded", "hit_token_limit", "ece")


def _records(details: pd.DataFrame, part: str) -> list[dict]:
    """The rows of one part, with the grade as text ("" when none), the confidence as a float (NaN when none) and
    hit_token_limit as True, False or None."""
    rows = [dict(r) for r in details[details["part"] == part].to_dict("records")]
    for row in rows:
        row["grade"] = text(row.get("grade"))
        confidence = pd.to_numeric(row.get("confidence"), errors="coerce")
        row["confidence"] = math.nan if pd.isna(confidence) else float(confidence)
        limit = row.get("hit_token_limit")
        row["hit_token_limit"] = None if limit is None or limit != limit else bool(limit)
    return rows


def _behind(row: dict, key: str) -> bool:
    """Whether one answer (or, for the ECE, one confidence row) is behind the metric `key`."""
    if key == "ungraded":
        return row["grade"] not in GRADES
    if key == "hit_token_limit":
        return row["hit_token_limit"] is True
    if key == "correct_given_attempted":
        return row["grade"] in ("A", "B")
    if key == "ece":
        return usable_confidence(row)
    return row["grade"] in GRADES


def value(details: pd.DataFrame, key: str) -> float:
    """The metric `key` on these details rows, as the run scored it (NaN when they hold none)."""
    if key == "ece":
        return float(confidence_ece(_records(details, "confidence")))
    answers = _records(details, "answer")
    if key in ("ungraded", "hit_token_limit"):
        return float(sum(1 for r in answers if _behind(r, key)))
    return float(simpleqa_scores([r["grade"] or None for r in answers])[key])


def measure(key: str) -> Measure | None:
    """The Measure of one of SimpleQA's board metrics (None for a key it does not know)."""
    if key == "thought_unclosed":  # replies that ended inside their thought
        return THOUGHT_MEASURE
    if key not in KEYS:
        return None

    def rows(table: pd.DataFrame, details: pd.DataFrame) -> pd.Series:
        part = _records(details, "confidence" if key == "ece" else "answer")
        return table["item"].isin({r["item"] for r in part if _behind(r, key)})

    return Measure(rows=rows, value=lambda details: value(details, key))
