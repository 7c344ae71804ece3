"""ReForm-Eval's board metrics in the explorer (ItemView.measure): the questions behind each one (its mode and,
for a dimension's score, its dimension) and the metric recomputed on their details rows by the run's own scoring
(scoring.score), so the explorer's headline is the board's number."""
from __future__ import annotations

import pandas as pd

from evaluator.benchmarks.item_tables import THOUGHT_MEASURE, scored_again
from evaluator.benchmarks.reform.datasets import DIMENSIONS, MC
from evaluator.benchmarks.reform.scoring import score
from evaluator.benchmarks.spec import Measure

MODES = {"gen": "generation", "lik": "likelihood"}
MC_ONLY = ("instability", "format_hit_rate", "mc_accuracy")  # computed over multiple-choice rows alone
NO_PREFIX = {"instability": "gen", "format_hit_rate": "gen"}  # generation metrics named without "gen_"


def _split(key: str) -> tuple[str, str] | None:
    """(mode prefix, rest) of a metric key: ("gen", "overall"), ("lik", "spatial"), ("gen", "instability")."""
    if key in NO_PREFIX:
        return NO_PREFIX[key], key
    prefix, _, rest = key.partition("_")
    if prefix not in MODES or not (rest == "overall" or rest in DIMENSIONS or rest in MC_ONLY):
        return None
    return prefix, rest


def in_mode(table: pd.DataFrame, prefix: str) -> pd.Series:
    """The questions a mode's scores rest on: its own multiple-choice questions and (both modes) the OCR, KIE and
    caption ones, which are answered by generation."""
    if prefix == "gen":
        return table["mode"] == MODES["gen"]
    return (table["mode"] == MODES["lik"]) | (table["form"] != MC)


def measure(key: str) -> Measure | None:
    """The Measure of a board metric of ReForm-Eval (None for a key it does not know)."""
    if key == "thought_unclosed":  # replies that ended inside their thought
        return THOUGHT_MEASURE
    split = _split(key)
    if split is None:
        return None
    prefix, rest = split

    def rows(table: pd.DataFrame, _details: pd.DataFrame) -> pd.Series:
        mask = in_mode(table, prefix)
        if rest in DIMENSIONS:
            mask &= table["dimension"] == rest
        elif rest in MC_ONLY:
            mask &= table["form"] == MC
        return mask

    return Measure(rows=rows, value=lambda details: scored_again(score, details, key, {"reform.mode": MODES[prefix]}))
