"""leaderboard.parquet: one row per finished run (raw fractions), rebuilt from the results files on publish.

The board reads this one file however many runs there are; a missing, damaged or outdated file (one that lacks a
column of the schema, because a benchmark was added) is rebuilt from the results files.
"""
from __future__ import annotations

import io
import json
import logging
import math

import pandas as pd

from leaderboard.board_frames import leaderboard_frame, sort_runs
from leaderboard.columns import NUMERIC, Schema
from leaderboard.store import Store

log = logging.getLogger(__name__)

LEADERBOARD_PATH = "leaderboard.parquet"


def load_results(store: Store) -> list[dict]:
    """Every results file in the store; a file that cannot be read or is not a results object is skipped (logged)."""
    found = []
    for path in store.list("results", suffix=".json"):
        try:
            data = store.read_json(path)
        except (ValueError, OSError) as exc:  # malformed JSON, a vanished file
            log.warning("skipping unreadable results file %s: %s", path, exc)
            continue
        if isinstance(data, dict) and isinstance(data.get("model"), str):
            found.append(data)
        else:
            log.warning("skipping results file %s: not a results object", path)
    return found


def parquet_bytes(df: pd.DataFrame, schema: Schema) -> bytes:
    """The raw frame as parquet (pyarrow), with explicit types so an empty board is a valid file too; each column
    carries its label and description in the file's metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields, arrays = [], []
    for col in schema.columns:
        values = df[col.name].tolist() if col.name in df.columns else [None] * len(df)
        missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in values]
        if col.kind in NUMERIC:
            typ = pa.float64()
            values = [None if gone else float(v) for v, gone in zip(values, missing)]
        else:
            typ = pa.string()
            values = [None if gone else str(v) for v, gone in zip(values, missing)]
        fields.append(pa.field(col.name, typ, metadata={"label": col.label, "description": col.description}))
        arrays.append(pa.array(values, type=typ))
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata={"columns": json.dumps(schema.names)}))
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def rebuild_leaderboard(store: Store, schema: Schema) -> pd.DataFrame:
    """Rebuild `leaderboard.parquet` from the results in the store; returns the raw frame."""
    df = sort_runs(leaderboard_frame(load_results(store), schema), schema.default_sort).reset_index(drop=True)
    store.write_bytes(LEADERBOARD_PATH, parquet_bytes(df, schema))
    return df


def load_board(store: Store, schema: Schema) -> pd.DataFrame:
    """The raw board frame, read from `leaderboard.parquet` (built from the results files when it is missing,
    rebuilt when it is damaged or lacks a column of the schema)."""
    data = store.read_bytes(LEADERBOARD_PATH)
    if data is None:
        return leaderboard_frame(load_results(store), schema)
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # a damaged file must not take the board down
        log.warning("leaderboard.parquet unreadable (%s); rebuilding it from the results", exc)
        return rebuild_leaderboard(store, schema)
    if any(name not in frame.columns for name in schema.names):
        return rebuild_leaderboard(store, schema)
    for col in schema.columns:
        frame[col.name] = frame[col.name].astype("float64" if col.kind in NUMERIC else object)
    return frame[schema.names]
