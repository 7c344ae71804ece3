"""leaderboard.parquet: one row per finished run (raw fractions), updated one run at a time as runs are published.

The board reads this one file however many runs there are. Publishing a run costs the same whatever the number of
runs (`add_run`): one read of the file, the run's row replaced or added (built from its results, already in
memory), one write; the file's metadata (the results files it was built from, the runs' marks) follows, so
`board_is_current` still holds. A missing, damaged or outdated file (one that lacks a column of the schema, because
a benchmark was added) is rebuilt from the results files (`rebuild_leaderboard`), as is a board that a tick finds
behind the store; `python -m leaderboard.board.file --rebuild` does it by hand.
"""
from __future__ import annotations

import io
import json
import logging
import sys

import pandas as pd

from leaderboard.board.columns import NUMERIC, Schema
from leaderboard.board.frames import leaderboard_frame, sort_runs, typed
from leaderboard.store import DamagedFile, Store, parse_json

log = logging.getLogger(__name__)

LEADERBOARD_PATH = "leaderboard.parquet"


def _results_record(data) -> dict:
    """The results object a stored results file holds; DamagedFile, with the reason, when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), str) or not data["model"]:
        raise DamagedFile("not a results object (a JSON object with a model)")
    if not isinstance(data.get("benchmarks", {}), dict) or not isinstance(data.get("run", {}), dict):
        raise DamagedFile("benchmarks or run is not an object")
    return data


def read_results(store: Store, path: str) -> dict | None:
    """The results file at `path`; None when there is none, or when it is damaged (over the size limit, not UTF-8
    or JSON, nested too deep, not a results object: the store's ledger of damaged files lists it, see
    leaderboard.store.damage). A path that is not the store's (PathRefused) is raised, never listed."""
    try:
        data = store.read_json(path)
        found = None if data is None else _results_record(data)
    except DamagedFile as exc:
        store.damaged.report(path, exc)
        return None
    store.damaged.clear(path)
    return found


def _results_key(path: str) -> str:
    """results/<key>.json -> <key>."""
    return path[len("results/"):-len(".json")]


def _publication(store: Store) -> tuple[set[str], dict[str, dict[str, str]]]:
    """(keys of runs whose request exists but is not FINISHED: a run that stopped between writing its results and
    closing its request, or one running again, or whose request file is damaged: their results stay off the board;
    key -> the marks of each finished run that has some: why an admin hid it from the ranking, the pull request that
    proposed it to its model page (leaderboard.submissions.actions.board_marks))."""
    from leaderboard.submissions import records as queue  # the queue imports the store only; no circle at import time
    from leaderboard.submissions.actions import board_marks

    requests = queue.all_requests(store)
    unpublished = {r.key for r in requests if r.status != queue.FINISHED}
    unpublished |= {path[len("requests/"):-len(".json")] for path, _ in store.damaged.listing()
                    if path.startswith("requests/") and path.endswith(".json")}
    marks = {r.key: board_marks(r) for r in requests if r.status == queue.FINISHED}
    return unpublished, {key: found for key, found in marks.items() if found}


def published_results(store: Store) -> dict[str, dict]:
    """Path -> results of every published run: each readable results file whose request is FINISHED (or that has no
    request, e.g. results published by hand). A run an admin hid carries the reason under "hidden", a run proposed to
    its model page the pull request's URL under "pull_request". A damaged file is skipped and listed in the store's
    ledger."""
    unpublished, marks = _publication(store)
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
        found[path] = {**data, **marks[key]} if key in marks else data
    store.damaged.settle("results", damaged)
    return found


def load_results(store: Store) -> list[dict]:
    """The results of every published run (see published_results)."""
    return list(published_results(store).values())


def _published_paths(store: Store) -> tuple[set[str], dict[str, dict[str, str]]]:
    """The paths published_results would read, from the listing, the requests and the ledger (no results read), and
    the finished runs' marks."""
    unpublished, marks = _publication(store)
    damaged = {path for path, _ in store.damaged.listing()}
    paths = {p for p in store.list("results", suffix=".json") if _results_key(p) not in unpublished and p not in damaged}
    return paths, marks


def board_is_current(store: Store) -> bool:
    """Whether leaderboard.parquet was built from exactly the published runs' files, with the same runs hidden and
    the same pull requests (a publish that stopped between closing its request and rebuilding the board leaves it
    behind; the scheduler then rebuilds it)."""
    import pyarrow.parquet as pq

    data = store.read_bytes(LEADERBOARD_PATH)
    if data is None:
        return False
    try:
        built_from, marks_then = _sources(pq.read_schema(io.BytesIO(data)).metadata)
    except Exception:  # noqa: BLE001 - a damaged or older board file is not current
        return False
    paths, marks = _published_paths(store)
    return set(built_from) == paths and marks_then == marks


MARK_METADATA = {"hidden": b"hidden", "pull_request": b"pull_requests"}  # a mark -> the metadata key listing it


def _sources(metadata: dict[bytes, bytes] | None) -> tuple[list[str], dict[str, dict[str, str]]]:
    """(the results files, the runs' marks: key -> {hidden, pull_request}) that the board file's metadata lists;
    DamagedFile when it lists no results files."""
    if not metadata or b"results" not in metadata:
        raise DamagedFile("leaderboard.parquet lists no results files")
    sources = parse_json(metadata[b"results"])
    listed = {mark: parse_json(metadata.get(name, b"{}")) for mark, name in MARK_METADATA.items()}
    if not isinstance(sources, list) or not all(isinstance(v, dict) for v in listed.values()):
        raise DamagedFile("leaderboard.parquet's list of results files, hidden runs or pull requests is of the wrong "
                          "kind")
    marks: dict[str, dict[str, str]] = {}
    for mark, runs in listed.items():
        for key, value in runs.items():
            marks.setdefault(str(key), {})[mark] = str(value)
    return [str(p) for p in sources], marks


def _text_array(values: pd.Series):
    """A text column as an arrow string array (None and NaN: null); values that are not text are written as text."""
    import pyarrow as pa

    values = values.astype(object).where(values.notna(), None)
    try:
        return pa.array(values.to_numpy(), type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values.tolist()], type=pa.string())


def _fields(schema: Schema) -> list:
    """The board file's columns: float64 numbers and string text, each with its label and description."""
    import pyarrow as pa

    return [pa.field(col.name, pa.float64() if col.kind in NUMERIC else pa.string(),
                     metadata={"label": col.label, "description": col.description}) for col in schema.columns]


def _file_metadata(schema: Schema, sources: list[str] | None,
                   marks: dict[str, dict[str, str]] | None) -> dict[str, str]:
    listed = {name.decode(): json.dumps({key: found[mark] for key, found in sorted((marks or {}).items())
                                         if found.get(mark)}) for mark, name in MARK_METADATA.items()}
    return {"columns": json.dumps(schema.names), "results": json.dumps(sorted(sources or [])), **listed}


def _table(df: pd.DataFrame, schema: Schema):
    """The raw frame as an arrow table of the board's columns (column at a time: no loop over rows)."""
    import pyarrow as pa

    arrays = []
    for col in schema.columns:
        values = df[col.name] if col.name in df.columns else pd.Series([None] * len(df), dtype=object)
        if col.kind in NUMERIC:
            arrays.append(pa.array(pd.to_numeric(values, errors="coerce").astype("float64").to_numpy(),
                                   type=pa.float64(), from_pandas=True))
        else:
            arrays.append(_text_array(values))
    return pa.Table.from_arrays(arrays, schema=pa.schema(_fields(schema)))


def _file_bytes(table) -> bytes:
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def parquet_bytes(df: pd.DataFrame, schema: Schema, sources: list[str] | None = None,
                  marks: dict[str, dict[str, str]] | None = None) -> bytes:
    """The raw frame as parquet (pyarrow), with explicit types so an empty board is a valid file too; each column
    carries its label and description in the file's metadata, and the file lists the results files it was built
    from (`sources`), the runs hidden by an admin and the runs' pull requests (`marks`: key -> {hidden,
    pull_request})."""
    table = _table(df, schema)
    return _file_bytes(table.replace_schema_metadata(_file_metadata(schema, sources, marks)))


def _ordered(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """The board's stored order: the default sort, high first (NaN last, ties by model), then by key, so that a
    board updated run by run (`_sorted`, the same order on arrow tables) and one rebuilt from the files are the same
    file."""
    by_key = frame.sort_values("key", kind="stable", na_position="last") if "key" in frame.columns else frame
    return sort_runs(by_key, schema.default_sort).reset_index(drop=True)


def _sorted(table, schema: Schema):
    """An arrow board table in the board's stored order (see _ordered)."""
    import pyarrow.compute as pc

    keys = [(name, order, "at_end") for name, order in ((schema.default_sort, "descending"), ("model", "ascending"),
                                                        ("key", "ascending")) if name in table.column_names]
    return table.take(pc.sort_indices(table, sort_keys=keys)) if keys else table


def rebuild_leaderboard(store: Store, schema: Schema) -> pd.DataFrame:
    """Rebuild `leaderboard.parquet` from the published results in the store (reads every results file and
    request: the repair, not the publish); returns the raw frame."""
    published = published_results(store)
    df = _ordered(leaderboard_frame(list(published.values()), schema), schema)
    marks = {_results_key(path): {mark: data[mark] for mark in MARK_METADATA if data.get(mark)}
             for path, data in published.items()}
    marks = {key: found for key, found in marks.items() if found}
    store.write_bytes(LEADERBOARD_PATH, parquet_bytes(df, schema, list(published), marks))
    return df


def read_board(store: Store, schema: Schema):
    """The stored board as (arrow table of the schema's columns, the results files it was built from, the runs'
    marks), in one read; None when it is missing, damaged, lacks its metadata or a column of the schema (then only a
    rebuild will do)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = store.read_bytes(LEADERBOARD_PATH)
    if data is None:
        return None
    try:
        table = pq.read_table(io.BytesIO(data))
        sources, marks = _sources(table.schema.metadata)
        if any(name not in table.column_names for name in schema.names):
            return None
        fields = _fields(schema)
        table = pa.Table.from_arrays([table[f.name] if table[f.name].type == f.type else table[f.name].cast(f.type)
                                      for f in fields], schema=pa.schema(fields))
    except Exception as exc:  # noqa: BLE001 - a damaged or older board file is rebuilt
        log.warning("leaderboard.parquet unreadable (%s); it will be rebuilt from the results", exc)
        return None
    return table, sources, marks


def add_run(store: Store, schema: Schema, path: str, results: dict, marks: dict[str, str] | None = None) -> None:
    """Put one published run on the board in constant work: read leaderboard.parquet once, replace the run's row
    (or add it) with the one built from `results` (the run's results file at `path`, already in memory), and write
    it back in the board's order, its metadata listing `path` and the run's marks (`marks`: its request's hidden
    reason and pull request, leaderboard.submissions.actions.board_marks) as a rebuild would, so the board stays
    current. Call it only once the run's request is FINISHED. A board that is missing, damaged or lacks a column is
    rebuilt from the results files instead. Under the store's lock, so two publishers on one folder do not lose a
    row (on the Hub store a row lost to a race is restored by the next tick's check, board_is_current). The rows
    stay arrow columns throughout: no per-row or per-cell work in Python."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet  # noqa: F401 - imported before the lock, as the run's row is built: the lock is held
    # only for the read, the merge and the write (a heartbeat waiting on it for seconds lapses a short lease)

    key = _results_key(path)
    marks = {mark: str(value) for mark, value in (marks or {}).items() if mark in MARK_METADATA and value}
    row = _table(leaderboard_frame([{**results, **marks}], schema), schema)
    with store.lock():
        board = read_board(store, schema)
        if board is None:
            rebuild_leaderboard(store, schema)
            return
        table, sources, marked = board
        same = pc.fill_null(pc.equal(table["key"], pa.scalar(key, pa.string())), False)
        others = table.filter(pc.invert(same)) if pc.any(same).as_py() else table  # a re-run replaces its row
        table = _sorted(pa.concat_tables([others, row]), schema)
        marked.pop(key, None)
        if marks:
            marked[key] = marks
        metadata = _file_metadata(schema, sorted(set(sources) | {path}), marked)
        store.write_bytes(LEADERBOARD_PATH, _file_bytes(table.replace_schema_metadata(metadata)))


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
    return typed(frame, schema.columns)[schema.names]


def main(argv: list[str] | None = None) -> int:
    """`python -m leaderboard.board.file --rebuild`: rebuild leaderboard.parquet from the results files."""
    import argparse

    from leaderboard.board.columns import schema
    from leaderboard.settings import Settings
    from leaderboard.store import open_store

    parser = argparse.ArgumentParser(prog="python -m leaderboard.board.file", description=(
        "Rebuild leaderboard.parquet from the results files of every finished run (the repair; publishing a run "
        "updates it one row at a time)."))
    parser.add_argument("--rebuild", action="store_true", required=True, help="rebuild the board from the results")
    parser.parse_args(argv)
    settings = Settings.from_env()
    frame = rebuild_leaderboard(open_store(settings), schema(settings.benchmarks))
    print(f"leaderboard.parquet rebuilt from the results files: {len(frame)} run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
