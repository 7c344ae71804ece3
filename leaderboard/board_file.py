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


def read_results(store: Store, path: str) -> dict | None:
    """The results file at `path`; None when there is none, or when it is damaged (not UTF-8 or JSON, not a results
    object: the store's ledger of damaged files lists it, see leaderboard.store.damage)."""
    try:
        data = store.read_json(path)
    except ValueError as exc:  # not UTF-8, not JSON
        store.damaged.report(path, exc)
        return None
    if data is None:
        store.damaged.clear(path)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("model"), str) or not data["model"]:
        store.damaged.report(path, "not a results object (a JSON object with a model)")
        return None
    if not isinstance(data.get("benchmarks", {}), dict) or not isinstance(data.get("run", {}), dict):
        store.damaged.report(path, "benchmarks or run is not an object")
        return None
    store.damaged.clear(path)
    return data


def _results_key(path: str) -> str:
    """results/<key>.json -> <key>."""
    return path[len("results/"):-len(".json")]


def _publication(store: Store) -> tuple[set[str], dict[str, str]]:
    """(keys of runs whose request exists but is not FINISHED: a run that stopped between writing its results and
    closing its request, or one running again, or whose request file is damaged: their results stay off the board;
    key -> reason of each finished run an admin hid from the ranking)."""
    from leaderboard import request_queue as queue  # the queue imports the store only; no circle at import time

    requests = queue.all_requests(store)
    unpublished = {r.key for r in requests if r.status != queue.FINISHED}
    unpublished |= {path[len("requests/"):-len(".json")] for path, _ in store.damaged.listing()
                    if path.startswith("requests/") and path.endswith(".json")}
    return unpublished, {r.key: r.hidden for r in requests if r.status == queue.FINISHED and r.hidden}


def published_results(store: Store) -> dict[str, dict]:
    """Path -> results of every published run: each readable results file whose request is FINISHED (or that has no
    request, e.g. results published by hand). A run an admin hid carries the reason under "hidden". A damaged file
    is skipped and listed in the store's ledger."""
    unpublished, hidden = _publication(store)
    found, damaged = {}, set()
    for path in store.list("results", suffix=".json"):
        key = _results_key(path)
        if key in unpublished:
            continue
        data = read_results(store, path)
        if data is None:
            if any(p == path for p, _ in store.damaged.listing()):
                damaged.add(path)
            continue
        found[path] = {**data, "hidden": hidden[key]} if key in hidden else data
    store.damaged.settle("results", damaged)
    return found


def load_results(store: Store) -> list[dict]:
    """The results of every published run (see published_results)."""
    return list(published_results(store).values())


def _published_paths(store: Store) -> tuple[set[str], dict[str, str]]:
    """The paths published_results would read, from the listing, the requests and the ledger (no results read), and
    the hidden runs' reasons."""
    unpublished, hidden = _publication(store)
    damaged = {path for path, _ in store.damaged.listing()}
    paths = {p for p in store.list("results", suffix=".json") if _results_key(p) not in unpublished and p not in damaged}
    return paths, hidden


def board_is_current(store: Store) -> bool:
    """Whether leaderboard.parquet was built from exactly the published runs' files, with the same runs hidden (a
    publish that stopped between closing its request and rebuilding the board leaves it behind; the scheduler then
    rebuilds it)."""
    import pyarrow.parquet as pq

    data = store.read_bytes(LEADERBOARD_PATH)
    if data is None:
        return False
    try:
        metadata = pq.read_schema(io.BytesIO(data)).metadata
        built_from, hidden_then = json.loads(metadata[b"results"]), json.loads(metadata.get(b"hidden", b"{}"))
    except Exception:  # noqa: BLE001 - a damaged or older board file is not current
        return False
    paths, hidden = _published_paths(store)
    return set(built_from) == paths and hidden_then == hidden


def parquet_bytes(df: pd.DataFrame, schema: Schema, sources: list[str] | None = None,
                  hidden: dict[str, str] | None = None) -> bytes:
    """The raw frame as parquet (pyarrow), with explicit types so an empty board is a valid file too; each column
    carries its label and description in the file's metadata, and the file lists the results files it was built
    from (`sources`) and the runs hidden by an admin (`hidden`: key -> reason)."""
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
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata={
        "columns": json.dumps(schema.names), "results": json.dumps(sorted(sources or [])),
        "hidden": json.dumps(dict(sorted((hidden or {}).items())))}))
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def rebuild_leaderboard(store: Store, schema: Schema) -> pd.DataFrame:
    """Rebuild `leaderboard.parquet` from the published results in the store; returns the raw frame."""
    published = published_results(store)
    df = sort_runs(leaderboard_frame(list(published.values()), schema), schema.default_sort).reset_index(drop=True)
    hidden = {_results_key(path): data["hidden"] for path, data in published.items() if data.get("hidden")}
    store.write_bytes(LEADERBOARD_PATH, parquet_bytes(df, schema, list(published), hidden))
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
