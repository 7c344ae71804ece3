"""CURE's board metrics in the explorer (ItemView.measure): the instances behind each one (every scored instance;
for Cf, whose denominator is Rcot, those whose whole chain is right; for Cb, whose denominator is Rh, those whose
high-level inference is right) and the metric recomputed on their details rows by the run's own scoring
(scoring.score), so the explorer's headline is the board's number."""
from __future__ import annotations

import pandas as pd

from evaluator.benchmarks.cure.scoring import score
from evaluator.benchmarks.item_tables import THOUGHT_MEASURE, scored_again
from evaluator.benchmarks.spec import Measure

KEYS = ("Ro", "Rh", "Rcot", "Cf", "Cb", "step_accuracy")


def instances(details: pd.DataFrame) -> pd.DataFrame:
    """Per instance ("item"), as the scoring reads it: scored (its image was read: the high-level row is "ok"),
    high (the high-level inference is right) and chain (every step of the chain is right)."""
    high_row = details["part"] == "high"
    right = details["correct"].fillna(False).astype(bool)
    high = details[high_row].drop_duplicates("item").set_index("item")
    chain = right[~high_row].groupby(details.loc[~high_row, "item"], sort=False).all()
    out = pd.DataFrame({"scored": high["status"] == "ok", "high": right[high_row].groupby(
        details.loc[high_row, "item"], sort=False).any()})
    out["chain"] = chain.reindex(out.index, fill_value=True)
    return out


def measure(key: str) -> Measure | None:
    """The Measure of one of CURE's board metrics (None for a key it does not know)."""
    if key == "thought_unclosed":  # replies that ended inside their thought
        return THOUGHT_MEASURE
    if key not in KEYS:
        return None

    def rows(table: pd.DataFrame, details: pd.DataFrame) -> pd.Series:
        facts = instances(details)
        behind = facts["scored"] & (facts["chain"] if key == "Cf" else facts["high"] if key == "Cb" else True)
        return table["item"].isin(facts.index[behind.astype(bool)])

    return Measure(rows=rows, value=lambda details: scored_again(score, details, key))
