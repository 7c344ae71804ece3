"""Results -> pandas DataFrames: the raw frame (one row per run, every raw column of the schema, scores as
fractions), the search and filters, and a view's rows as the board shows them (scores as percentages with one
decimal, "n/a" for undefined, the model linked to its Hub page, a served model shown by its display name, tagged
"served" with its endpoint's host). Which rows a view shows, in which order, is leaderboard.board.views.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable, Sequence
from urllib.parse import quote

import numpy as np
import pandas as pd

from evaluator import api
from leaderboard.board.columns import (COST_COLUMNS, COUNT, INTERVAL, NUMBER, NUMERIC, RANK, SCORE, SHA, TIME, Column,
                                       Schema, View, value_at)
from leaderboard.board.costs import NOT_RECORDED
from leaderboard.board.interval_columns import hold_scores
from leaderboard.board.score_cells import (SAMPLE, SAMPLE_SHOWN, SEPARATOR, Cells, interval_text, is_score,
                                           of_benchmark, row_cells, score_text, score_title, with_title)
from leaderboard.formatting import as_float, escape_markdown, format_billions, format_number, format_time

SIZE_BUCKETS: tuple[str, ...] = ("<1B", "1-3B", "3-7B", "7-15B", ">15B", "unknown")
HUB_URL = "https://huggingface.co"
LOCAL_RUN = "local/"  # how a local folder's run is named (leaderboard.submissions.model_inspection.inspect_folder)
MODEL_FACTS = ("model", "served", "display_name", "endpoint", "endpoint_model", "pull_request",
               "thinking", "thinking_mode")  # a model cell's facts
PULL_REQUEST_URL = re.compile(r"^https?://[A-Za-z0-9.:-]+/[A-Za-z0-9._/-]+/discussions/\d+$")  # a PR the board links
UNRANKED = "unranked"  # the # of a run that is not ranked (flagged, or without a score)
MODEL_ROWS = "model_rows"  # board_frame's attrs: each row's MODEL_FACTS, for drawing its model cell
CELLS = "cells"  # board_frame's attrs: each row's Cells (what its cells say beyond their value)
TEXT_CHARS = 300  # the most characters a text cell shows



def leaderboard_frame(results: Iterable[dict], schema: Schema) -> pd.DataFrame:
    """One row per run, machine column names (every column of the schema), raw values: scores are fractions or NaN."""
    values: dict[str, list] = {col.name: [] for col in schema.columns}
    for result in results:
        for col in schema.columns:
            value = col.derive(result) if col.derive is not None else value_at(result, col.path)
            values[col.name].append(as_float(value) if col.kind in NUMERIC else (None if value is None else str(value)))
    frame = pd.DataFrame({col.name: np.array(values[col.name], dtype=float if col.kind in NUMERIC else object)
                          for col in schema.columns}, columns=schema.names)
    return hold_scores(frame, schema.columns)


def typed(frame: pd.DataFrame, columns: Sequence[Column], by_label: bool = False) -> pd.DataFrame:
    """`frame` with each of `columns` (found by name, or by label) as a board frame keeps it: float64 for a number,
    object for anything else. One astype for the columns that differ: a column at a time took some 0.2 s of every
    board read (340 columns), several times a page load."""
    kinds = {(c.label if by_label else c.name): np.dtype("float64" if c.kind in NUMERIC else object) for c in columns}
    moved = {name: kind for name, kind in kinds.items() if frame[name].dtype != kind}
    return frame.astype(moved) if moved else frame


def run_choices(raw: pd.DataFrame | None, columns: Sequence[str]) -> list[tuple[str, str]]:
    """("<model> @ <sha12> (<precision>)", key) of every run on the board with a value in any of `columns`, in
    board order."""
    present = [c for c in columns if raw is not None and c in raw]
    if raw is None or len(raw) == 0 or not present:
        return []
    runs = raw[raw[present].notna().any(axis=1)]
    facts = runs[[c for c in MODEL_FACTS if c in runs]].to_dict("records")
    return [(f"{model_shown(fact)[1]} @ {str(r.revision)[:12]} ({r.precision})", r.key)
            for fact, r in zip(facts, runs.itertuples())]


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
    """A raw text value as the board shows it, in every view (a sha shortened, a time formatted), at most TEXT_CHARS
    characters ("…" where cut: a run fact of a megabyte stays in the results, not in the view); the model and
    details cells (Markdown, drawn from their own facts) are left whole."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = str(value)
    if col.kind == SHA:
        return text[:12]
    if col.kind == TIME:
        text = format_time(text)
    if col.name in MARKDOWN_COLUMNS or len(text) <= TEXT_CHARS:
        return text
    return text[: TEXT_CHARS - 1] + "…"


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
    if terms:  # the model id, and a served model's display name and endpoint model name
        names = df["model"].fillna("").astype(str).str.lower()
        for extra in ("display_name", "endpoint_model"):
            if extra in df:
                names = names + "\n" + df[extra].where(df[extra].notna(), "").astype(str).str.lower()
        hit = pd.Series(False, index=df.index)
        for term in terms:
            hit |= names.str.contains(term, regex=False)
        mask &= hit
    if model_types:
        mask &= df["model_type"].isin(list(model_types))
    if sizes:
        mask &= df["params_billions"].map(size_bucket).isin(list(sizes))
    return df[mask]


HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
MARKDOWN_COLUMNS = ("model", "details")  # shown as Markdown (links); every other column is plain text


def model_link(model: str, endpoint: str = HUB_URL) -> str:
    """The model id as a Markdown link to its Hub page (escaped); a local folder (a path, or a run's `local/<folder
    name>`) is shown without a link: it has no Hub page."""
    text = escape_markdown(model, limit=None)
    if not HUB_ID.match(model or "") or (model or "").startswith(LOCAL_RUN):
        return text
    return f"[{text}]({endpoint.rstrip('/')}/{quote(model, safe='/')})"


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def pull_request_link(facts: dict) -> str:
    """" · PR" linked to the pull request that proposed the run's results to its model page ("" when it has none, or
    when the stored URL is not a Hub discussion's)."""
    url = _text(facts.get("pull_request"))
    return f" · [PR]({url})" if PULL_REQUEST_URL.match(url) else ""


def _untagged(name: str) -> str:
    """A display name without a "(served)" of its own at its end: the cell adds the tag, with the host."""
    return re.sub(r"\s*\(served\)\s*$", "", name, flags=re.IGNORECASE)


def model_shown(facts: dict, endpoint: str = HUB_URL) -> tuple[str, str]:
    """A row's model cell (facts: its MODEL_FACTS) as (Markdown, plain text): the model id linked to its Hub page (a
    local folder: no link), with a PR link when its results were proposed to its model page, or a served model's
    display name (else its endpoint's model name) tagged "served" with its endpoint's host, linked to the Hub page of
    the endpoint's model name only when that is a Hub id. A run is tagged with the thinking it ran with (thinking_tag).
    """
    shown, plain = _model_shown(facts, endpoint)
    tag = thinking_tag(facts)
    return (f"{shown} ({tag})", f"{plain} ({tag})") if tag else (shown, plain)


def thinking_tag(facts: dict) -> str:
    """"thinking" for a run that thought or whose prompts opened a thought, "thinking off" for one whose prompts
    closed it (a template's switch set off, or its default), "" otherwise: one model run both ways is two rows."""
    mode = _text(facts.get("thinking_mode"))
    if facts.get("thinking") == "true" or mode.startswith("on"):
        return "thinking"
    return "thinking off" if mode.startswith("off") else ""


def _model_shown(facts: dict, endpoint: str) -> tuple[str, str]:
    model = _text(facts.get("model"))
    if facts.get("served") != "true":
        return model_link(model, endpoint) + pull_request_link(facts), model
    target, url = _text(facts.get("endpoint_model")), _text(facts.get("endpoint"))
    name = _untagged(_text(facts.get("display_name"))) or target or model
    tag = f"served: {api.Endpoint(url, name).host}" if url else "served"
    text = escape_markdown(name, limit=None)
    if target and api.model_id_problem(target) is None:
        text = f"[{text}]({endpoint.rstrip('/')}/{quote(target, safe='/')})"
    return f"{text} ({escape_markdown(tag, limit=None)})", f"{name} ({tag})"


def board_frame(rows: pd.DataFrame, schema: Schema, view: View, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A view's rows (board_views.shown_rows) with typed values under the columns' labels (`columns`: these of the
    view's, such as its board table's or its More columns'; default: all): scores as percentages rounded to one
    decimal (NaN: undefined or not run), numbers, counts and ranks as they are, everything else text (an interval
    column: "45.0-67.3 (n 20)"). What the cells say beyond their values (intervals, suite, rank group, cost recorded)
    is in attrs: `board_text` and `board_table` format it."""
    cols = [schema.column(name) for name in (view.columns if columns is None else columns)]
    cells = row_cells(rows, schema, cols)
    data = {}
    for c in cols:
        values = rows[c.name] if c.name in rows else [None] * len(rows)
        if c.kind == SCORE:
            data[c.label] = [round(v * 100, 1) if not math.isnan(v) else math.nan
                             for v in (as_float(x) for x in values)]
        elif c.kind in NUMERIC:
            data[c.label] = [as_float(x) for x in values]
        elif c.kind == INTERVAL:
            score = schema.column(c.interval_of)
            data[c.label] = [interval_text(score, cell.intervals.get(c.interval_of)) for cell in cells]
        elif c.name == "scored_on":  # benchmark names -> their short titles
            titles = {card.name: card.short_title for card in schema.cards}
            data[c.label] = [_format(c, ", ".join(titles.get(n, n) for n in str(x).split(",") if n))
                             if isinstance(x, str) else "" for x in values]
        else:
            data[c.label] = [_format(c, x) for x in values]
    out = typed(pd.DataFrame(data, columns=[c.label for c in cols]), cols, by_label=True).reset_index(drop=True)
    out.attrs[MODEL_ROWS] = rows[[c for c in MODEL_FACTS if c in rows]].to_dict("records")
    out.attrs[CELLS] = cells
    return out


def _cell_text(c: Column, value: Any, cells: Cells = Cells()) -> str:
    """A cell as text; `cells`: what the row's cells say beyond their value (a cost cell of an older run says it was
    not recorded, never 0; a rank is written with its range and group, "1-2 of 3 · by generation"; a score with
    its interval)."""
    if not cells.recorded and c.name in COST_COLUMNS and (value is None or value == "" or
                                                          (isinstance(value, float) and math.isnan(value))):
        return NOT_RECORDED
    if c.kind == SCORE or (c.kind == NUMBER and of_benchmark(c)):
        return score_text(c, value, cells)
    if c.kind == RANK:
        if value is None or math.isnan(value):
            return f"{UNRANKED} {cells.group}" if cells.group else UNRANKED
        place = str(int(value)) + (f"-{int(cells.worst)}" if not math.isnan(cells.worst) and cells.worst > value
                                   else "")
        return f"{place} {cells.group}" if cells.group else place
    if c.name == "suite" and value == SAMPLE:
        return SAMPLE_SHOWN
    if c.name == "limit" and (value is None or math.isnan(value) or value <= 0):
        return "none"
    if c.name == "params_billions":
        return format_billions(value)
    if c.kind in (NUMBER, COUNT):
        return format_number(value)
    if c.name == "details":  # links -> their labels, for the plain-text board
        return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", "" if value is None else str(value))
    return "" if value is None else str(value)


def board_text(board: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """`board_frame`'s output as plain text: percentages with one decimal and half their 95% interval ("55.6 ±
    11.2"), "n/a" for undefined and "not run" for a benchmark the run did not run, ranks as integers or ranges with
    their group ("unranked" for a run that is not), the details links as their labels."""
    by_label = {c.label: c for c in (*schema.columns, *schema.board_only)}
    cols = [by_label[label] for label in board.columns]
    facts, cells = _model_rows(board, cols), _row_cells(board)
    out = pd.DataFrame({c.label: [model_shown(facts[i])[1] if c.name == "model" else
                                  _cell_text(c, v, cells[i]) for i, v in enumerate(board[c.label])]
                        for c in cols},
                       columns=list(board.columns))
    return out.astype(object)


def _model_rows(board: pd.DataFrame, cols: list[Column]) -> list[dict]:
    """Each row's MODEL_FACTS (board_frame keeps them; a frame without them: the model ids alone)."""
    facts = board.attrs.get(MODEL_ROWS)
    if isinstance(facts, list) and len(facts) == len(board):
        return facts
    label = next((c.label for c in cols if c.name == "model"), None)
    return [{"model": v} for v in board[label]] if label else [{} for _ in range(len(board))]


def _row_cells(board: pd.DataFrame) -> list[Cells]:
    """Each row's Cells (board_frame keeps them; a frame without them: nothing beyond the values)."""
    cells = board.attrs.get(CELLS)
    return cells if isinstance(cells, list) and len(cells) == len(board) else [Cells() for _ in range(len(board))]


def _titled(c: Column, schema: Schema) -> bool:
    """Whether the column's cells carry a title (hover text): the scores, and the suite."""
    return c.name == "suite" or (c.kind in (SCORE, NUMBER) and is_score(c, schema))


def datatypes(board: pd.DataFrame, schema: Schema) -> list[str]:
    """gr.Dataframe's datatype of each column: "markdown" for the link columns and the scores (their text has a
    hover title), "number" for other numbers, else "str"."""
    by_label = {c.label: c for c in (*schema.columns, *schema.board_only)}
    types = []
    for label in board.columns:
        c = by_label[label]
        types.append("markdown" if c.name in MARKDOWN_COLUMNS or _titled(c, schema) else
                     "number" if c.kind in NUMERIC else "str")
    return types


def board_table(board: pd.DataFrame, schema: Schema, endpoint: str = HUB_URL, titles: bool = True) -> dict:
    """`board_frame`'s output as the value gr.Dataframe takes: `data` holds the numbers (None when undefined), so
    sorting a column in the browser is numeric, and plain model ids; `metadata.display_value` the text shown, as
    `board_text` ("54.6 ± 9.8", "n/a"; undefined sorts as the lowest value), with the model linked to its Hub page and
    each score's interval, standard error and method (and a sample or lite suite's nature) in its hover title
    (titles False: the plain text, for API clients, who have the intervals' own columns);
    `metadata.styling` draws a line above the first row of each group when there are several. Built directly: a
    pandas Styler does the same but takes seconds for a thousand rows."""
    by_label = {c.label: c for c in (*schema.columns, *schema.board_only)}
    cols = [by_label[label] for label in board.columns]
    data, text, styles = [], [], []
    columns = [(c, board[c.label].tolist(), titles and _titled(c, schema)) for c in cols]
    facts, cells = _model_rows(board, cols), _row_cells(board)
    for i in range(len(board)):
        row, shown = [], []
        for c, values, titled in columns:
            value = values[i]
            if c.kind in NUMERIC:
                value = None if value is None or math.isnan(value) else float(value)
            else:
                value = "" if value is None else str(value)
            row.append(value)
            plain = _cell_text(c, math.nan if value is None else value, cells[i])
            if c.name == "model":
                shown.append(model_shown(facts[i], endpoint)[0])
            elif c.name == "details":
                shown.append(value)
            elif titled:
                title = score_title(c, cells[i].intervals.get(c.name) if c.name != "suite" else None,
                                    cells[i].suite, cells[i])
                shown.append(with_title(plain, title))
            else:
                shown.append(plain)
        data.append(row)
        text.append(shown)
        styles.append([SEPARATOR if cells[i].group_start else ""] * len(cols))
    metadata = {"display_value": text, "styling": styles} if data else None
    return {"headers": [c.label for c in cols], "data": data, "metadata": metadata}
