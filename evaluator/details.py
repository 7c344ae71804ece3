"""Details files: one parquet file per benchmark, one row per question (and per repeat or part).

The run writes the model's raw answers first and scores from what it reads back, as `rescore` does later, so a
stored details file is all that grading needs.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd


def write_details(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path, index=False)


def _plain(value):
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalars -> Python
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return math.nan
    return value


def read_details(path: Path) -> list[dict]:
    """The rows of a details file as plain Python values (NaN for missing numbers)."""
    frame = pd.read_parquet(path)
    columns = list(frame.columns)
    return [{c: _plain(v) for c, v in zip(columns, values)} for values in frame.itertuples(index=False, name=None)]
