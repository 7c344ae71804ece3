"""Details files: one parquet file per benchmark, one row per question (and per repeat or part).

The run writes the model's raw answers first and scores from what it reads back, as `rescore` does later, so a
stored details file is all that grading needs.

Every details file of a benchmark has the same columns, in the same order, of the same types: those its card
declares (Card.details), whatever the run's options, limit or outcome. A column a row leaves out is stored as null;
a value is stored as its column's type says (DETAIL_DTYPES; a "json" column is a JSON text, a NaN number stays
NaN); a column the card does not declare, or a value that is not of its column's type, is refused (DetailsError),
so the files of every run load as one dataset (`datasets.load_dataset("parquet", data_files=[...])`).
"""
from __future__ import annotations

import json
import math
import numbers
from pathlib import Path
from typing import Iterable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.benchmarks.spec import BOOL, FLOAT, INT, JSON, STRING, Card, DetailColumn

# how each details type is stored: its arrow type, and its name as a `datasets` feature dtype (a dataset card's
# dataset_info)
ARROW_TYPES = {STRING: pa.string(), INT: pa.int64(), FLOAT: pa.float64(), BOOL: pa.bool_(), JSON: pa.string()}
DETAIL_DTYPES = {STRING: "string", INT: "int64", FLOAT: "float64", BOOL: "bool", JSON: "string"}
MODEL_METADATA = "leaderboard.model"  # the parquet schema metadata key of what a file says about its model


class DetailsError(ValueError):
    """Details rows that do not fit their benchmark's declared columns."""


def details_card(benchmark: Card | str) -> Card:
    """The card of a benchmark given as a Card (or an object with a Card's name and details) or by its registered
    name."""
    if isinstance(benchmark, str):
        from evaluator.benchmarks import get_benchmark

        return get_benchmark(benchmark).CARD
    return benchmark


def details_schema(benchmark: Card | str) -> pa.Schema:
    """The arrow schema of a benchmark's details files: its declared columns, in order, each of its type."""
    return pa.schema([pa.field(column.name, ARROW_TYPES[column.type]) for column in details_card(benchmark).details])


def _rows_benchmark(path: Path, rows: list[dict]) -> str:
    """The benchmark details rows belong to: the one their "benchmark" column names, else the file's name."""
    named = {row.get("benchmark") for row in rows if isinstance(row.get("benchmark"), str)}
    if len(named) > 1:
        raise DetailsError(f"details rows of several benchmarks in one file: {', '.join(sorted(named))}")
    return named.pop() if named else Path(path).stem


def _missing(value) -> bool:
    """None, a NaN or pandas' NA: a value that is not there."""
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _cast(value, column: DetailColumn, benchmark: str, index: int):
    """`value` as the type of `column` (None: null); DetailsError when it is not of that type."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes, list, dict)):
        try:
            value = value.item()  # a numpy scalar -> Python
        except (ValueError, TypeError):
            pass
    kind = column.type
    if kind == FLOAT:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)  # NaN stays NaN
        if value is None or value is pd.NA:
            return None
    elif _missing(value):
        return None
    elif kind == STRING and isinstance(value, str):
        return value
    elif kind == JSON:
        if isinstance(value, str):
            return value
        if isinstance(value, (list, dict)):
            return json.dumps(value, ensure_ascii=False)
    elif kind == INT and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    elif kind == INT and isinstance(value, float) and value.is_integer():
        return int(value)
    elif kind == BOOL and isinstance(value, bool):
        return value
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise DetailsError(f"{benchmark} details: column {column.name!r} is declared {kind}, but row {index} holds "
                       f"{type(value).__name__} {shown}")


def details_table(rows: Iterable[dict], benchmark: Card | str) -> pa.Table:
    """The rows as an arrow table of the benchmark's details schema; DetailsError for an undeclared column or a
    value of the wrong type."""
    card = details_card(benchmark)
    rows = list(rows)
    declared = {column.name for column in card.details}
    for row in rows:
        undeclared = [name for name in row if name not in declared]
        if undeclared:
            raise DetailsError(
                f"{card.name} details: column {', '.join(map(repr, undeclared))} is not declared on the card of "
                f"benchmark {card.name!r}; add a DetailColumn for it to CARD.details (evaluator/benchmarks/spec.py)")
    arrays = [pa.array([_cast(row.get(column.name), column, card.name, i) for i, row in enumerate(rows)],
                       type=ARROW_TYPES[column.type]) for column in card.details]
    return pa.Table.from_arrays(arrays, schema=details_schema(card))


def write_details(path: Path, rows: list[dict], benchmark: Card | str | None = None,
                  metadata: dict | None = None) -> None:
    """Write a benchmark's details rows as its card declares them (details_table). benchmark: its Card or name;
    None: the benchmark the rows' "benchmark" column names, else the one the file is named after
    (<benchmark>.parquet).

    A card-like object with no `details` at all (a hand-made stand-in for a benchmark, outside the registry, whose
    check refuses any card without declared columns) has nothing to check against: its rows are written with the
    types pandas infers, as every details file was before the cards declared them.

    metadata: what the file says about the model that answered (a served model's endpoint and token usage), stored
    as JSON in the parquet schema's metadata under MODEL_METADATA (details_metadata reads it back)."""
    path = Path(path)
    if benchmark is not None and not isinstance(benchmark, (Card, str)) and not hasattr(benchmark, "details"):
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_parquet(path, index=False)
        return
    if benchmark is None:
        benchmark = _rows_benchmark(path, rows)
        from evaluator.benchmarks import REGISTRY

        if benchmark not in REGISTRY:
            raise DetailsError(f"cannot tell whose details {path} holds: its rows name no registered benchmark and "
                               f"neither does the file ({benchmark!r}); pass the benchmark")
    table = details_table(rows, benchmark)
    if metadata:
        table = table.replace_schema_metadata({MODEL_METADATA: json.dumps(metadata, sort_keys=True, default=str)})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def details_metadata(path: Path) -> dict | None:
    """What a details file says about the model that answered (write_details' metadata); None when it says nothing
    or cannot be read."""
    try:
        raw = (pq.read_schema(path).metadata or {}).get(MODEL_METADATA.encode())
        found = json.loads(raw) if raw else None
    except (OSError, ValueError, pa.ArrowException):
        return None
    return found if isinstance(found, dict) else None


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
