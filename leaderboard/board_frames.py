"""Results -> pandas DataFrames: the raw frame (one row per run, every column of the schema, scores as fractions)
and what the board shows (filtered, sorted, scores as percentages with one decimal, "n/a" for undefined).
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import pandas as pd

from leaderboard.columns import NUMBER, NUMERIC, SCORE, SHA, TIME, Column, Schema
from leaderboard.formatting import as_float, format_number, format_score, format_time

SIZE_BUCKETS: tuple[str, ...] = ("<1B", "1-3B", "3-7B", "7-15B", ">15B", "unknown")


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def leaderboard_frame(results: Iterable[dict], schema: Schema) -> pd.DataFrame:
    """One row per run, machine column names (every column of the schema), raw values: scores are fractions or NaN."""
    rows = []
    for result in results:
        row = {}
        for col in schema.columns:
            value = _get(result, col.path)
            row[col.name] = as_float(value) if col.kind in NUMERIC else (None if value is None else str(value))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=schema.names)
    for col in schema.columns:
        frame[col.name] = frame[col.name].astype("float64" if col.kind in NUMERIC else object)
    return frame


def run_choices(raw: pd.DataFrame | None, columns: Sequence[str]) -> list[tuple[str, str]]:
    """("<model> @ <sha12> (<precision>)", key) of every run on the board with a value in any of `columns`, in
    board order."""
    present = [c for c in columns if raw is not None and c in raw]
    if raw is None or len(raw) == 0 or not present:
        return []
    runs = raw[raw[present].notna().any(axis=1)]
    return [(f"{r.model} @ {str(r.revision)[:12]} ({r.precision})", r.key) for r in runs.itertuples()]


def size_bucket(params_billions: float | None) -> str:
    """"<1B", "1-3B", "3-7B", "7-15B" (15 included), ">15B", or "unknown"."""
    p = as_float(params_billions)
    if math.isnan(p):
        return "unknown"
    if p < 1:
        return "<1B"
    if p < 3:
        return "1-3B"
    if p < 7:
        return "3-7B"
    if p <= 15:
        return "7-15B"
    return ">15B"


def _format(col: Column, value: Any) -> str:
    if col.kind == SCORE:
        return format_score(value)
    if col.kind == NUMBER:
        return format_number(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = str(value)
    if col.kind == SHA:
        return text[:12]
    if col.kind == TIME:
        return format_time(text)
    return text


def sort_runs(df: pd.DataFrame, by: str, ascending: bool = False) -> pd.DataFrame:
    """Sort by one raw column with NaN last (either direction); ties by model name."""
    if df.empty or by not in df.columns:
        return df
    return df.sort_values([by, "model"], ascending=[ascending, True], na_position="last", kind="stable")


def filter_runs(df: pd.DataFrame, search: str = "", model_types: Sequence[str] = (),
                sizes: Sequence[str] = ()) -> pd.DataFrame:
    """Rows whose model name contains `search` (case-insensitive; several terms separated by ';' match any),
    whose type is one of `model_types` and whose size bucket is one of `sizes` (empty: no filter)."""
    mask = pd.Series(True, index=df.index)
    terms = [t.strip().lower() for t in (search or "").split(";") if t.strip()]
    if terms:
        names = df["model"].fillna("").astype(str).str.lower()
        hit = pd.Series(False, index=df.index)
        for term in terms:
            hit |= names.str.contains(term, regex=False)
        mask &= hit
    if model_types:
        mask &= df["model_type"].isin(list(model_types))
    if sizes:
        mask &= df["params_billions"].map(size_bucket).isin(list(sizes))
    return df[mask]


def board_columns(schema: Schema, extra: Sequence[str] = ()) -> list[Column]:
    """The board's columns: the shown ones, plus the optional columns named in `extra` just before "Suite", in
    schema order."""
    optional = {c.name for c in schema.optional}
    chosen = [c for c in schema.columns if c.name in set(extra or ()) and c.name in optional]
    base = list(schema.shown)
    at = next((i for i, c in enumerate(base) if c.name == "suite"), len(base))
    return base[:at] + chosen + base[at:]


def board_frame(df: pd.DataFrame, schema: Schema, search: str = "", model_types: Sequence[str] = (),
                sizes: Sequence[str] = (), extra: Sequence[str] = ()) -> pd.DataFrame:
    """The board with typed values: shown columns under their labels, filtered, sorted by the default column
    descending with undefined last; scores as percentages rounded to one decimal (NaN: undefined), plain numbers as
    they are (NaN: unknown), everything else text. `display_frame` and `board_table` format it."""
    rows = sort_runs(filter_runs(df, search, model_types or (), sizes or ()), schema.default_sort)
    cols = board_columns(schema, extra)
    data = {}
    for c in cols:
        if c.kind == SCORE:
            data[c.label] = [round(v * 100, 1) if not math.isnan(v) else math.nan
                             for v in (as_float(x) for x in rows[c.name])]
        elif c.kind == NUMBER:
            data[c.label] = [as_float(x) for x in rows[c.name]]
        else:
            data[c.label] = [_format(c, x) for x in rows[c.name]]
    out = pd.DataFrame(data, columns=[c.label for c in cols])
    for c in cols:
        out[c.label] = out[c.label].astype("float64" if c.kind in NUMERIC else object)
    return out.reset_index(drop=True)


def _cell_text(c: Column, value: Any) -> str:
    if c.kind == SCORE:
        return format_score(None if value is None or math.isnan(value) else value / 100)
    if c.kind == NUMBER:
        return format_number(value)
    return "" if value is None else str(value)


def display_frame(df: pd.DataFrame, schema: Schema, search: str = "", model_types: Sequence[str] = (),
                  sizes: Sequence[str] = ()) -> pd.DataFrame:
    """The board as text: shown columns under their labels, percentages with one decimal, "n/a" for undefined,
    filtered, sorted by the default column descending with n/a last."""
    board = board_frame(df, schema, search, model_types, sizes)
    headers = [c.label for c in schema.shown]
    out = pd.DataFrame({c.label: [_cell_text(c, v) for v in board[c.label]] for c in schema.shown}, columns=headers)
    return out.astype(object)


def board_table(board: pd.DataFrame, schema: Schema) -> dict:
    """`board_frame`'s output as the value gr.Dataframe takes: `data` holds the numbers (None when undefined), so
    sorting a column in the browser is numeric, and `metadata.display_value` the text shown, the same as
    `display_frame` ("54.6", "n/a"; undefined sorts as the lowest value). Built directly: a pandas Styler does
    the same but takes seconds for a thousand rows."""
    by_label = {c.label: c for c in schema.columns}
    cols = [by_label[label] for label in board.columns]
    data, text = [], []
    columns = [(c, board[c.label].tolist()) for c in cols]
    for i in range(len(board)):
        row, shown = [], []
        for c, values in columns:
            value = values[i]
            if c.kind in NUMERIC:
                value = None if value is None or math.isnan(value) else float(value)
            else:
                value = "" if value is None else str(value)
            row.append(value)
            shown.append(_cell_text(c, math.nan if value is None else value))
        data.append(row)
        text.append(shown)
    metadata = {"display_value": text, "styling": [[""] * len(cols) for _ in text]} if data else None
    return {"headers": [c.label for c in cols], "data": data, "metadata": metadata}
