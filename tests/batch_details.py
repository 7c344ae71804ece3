"""Two runs' details files compared row by row, as the batch checks compare them (tests/test_batch_invariance.py,
tests/test_family_cli.py, bench/family_batches.py): a row differs when any column but `near_ties` differs (an
option's log-likelihood by more than OPTION_TOLERANCE per token); a differing row is explained when both runs recorded
a near tie at the same step after the same tokens and chose differently there (evaluator.models.near_ties): the
replies agreed up to a step whose top two (or whose draw and an edge) were closer than the drift between batch
shapes, and parted there."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

OPTION_TOLERANCE = 1e-5
NEAR_TIES = "near_ties"


@dataclass
class Differing:
    """A details row that differs between the two runs: its index, the columns that differ, and the step of the near
    tie both runs recorded and parted at (None: unexplained)."""

    row: int
    columns: list[str]
    parted_at: int | None


def _scores(cell) -> list[dict]:
    return json.loads(cell) if isinstance(cell, str) and cell else []


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _close(a: dict, b: dict) -> bool:
    """Two scores of one option within OPTION_TOLERANCE per token, and of the same length."""
    return (a["n_tokens"] == b["n_tokens"] and abs(a["mean"] - b["mean"]) <= OPTION_TOLERANCE
            and abs(a["sum"] - b["sum"]) <= OPTION_TOLERANCE * max(1, a["n_tokens"]))


def _same(column: str, u, v) -> bool:
    if column == "option_scores":
        su, sv = _scores(u), _scores(v)
        return len(su) == len(sv) and all(_close(p, q) for p, q in zip(su, sv))
    return (_missing(u) and _missing(v)) or str(u) == str(v)


def parted_at(u, v) -> int | None:
    """The step where two replies' recorded near ties show them parting: the same step after the same tokens, a
    different token chosen (None when no such step was recorded)."""
    ties_u = {(t["step"], t["before"]): t["tokens"][0] for t in _scores(u)}
    for tie in _scores(v):
        chosen = ties_u.get((tie["step"], tie["before"]))
        if chosen is not None and chosen != tie["tokens"][0]:
            return tie["step"]
    return None


def differing_rows(a: Path, b: Path) -> dict[str, list[Differing]]:
    """Per details file (by benchmark) of run `a`, its rows that differ from run `b`'s. AssertionError when the two
    runs do not hold the same files, columns and row counts."""
    names = sorted(path.name for path in (a / "details").glob("*.parquet"))
    assert names and names == sorted(path.name for path in (b / "details").glob("*.parquet")), (a, b)
    found = {}
    for name in names:
        x, y = pd.read_parquet(a / "details" / name), pd.read_parquet(b / "details" / name)
        assert list(x.columns) == list(y.columns) and len(x) == len(y), name
        columns = [c for c in x.columns if c != NEAR_TIES]
        rows = []
        for i in range(len(x)):
            apart = [c for c in columns if not _same(c, x[c].iat[i], y[c].iat[i])]
            if apart:
                ties = (x[NEAR_TIES].iat[i], y[NEAR_TIES].iat[i]) if NEAR_TIES in x else (None, None)
                rows.append(Differing(i, apart, parted_at(*ties)))
        found[name.removesuffix(".parquet")] = rows
    return found
