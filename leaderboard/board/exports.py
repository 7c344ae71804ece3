"""The board as shown, as files to download: one view's rows after its search and filters, under the view's columns
(every column of it, the More columns' too), as a CSV file and a parquet file.

The values are the board frame's (leaderboard.board.frames.board_frame): scores as percentages with one decimal
(empty when undefined or not run), numbers and ranks as numbers, other cells as text; the model as the board writes
it (a served model by its display name), the details as their links. A CSV cell of text that a spreadsheet would read
as a formula (it starts with =, +, -, @, a tab or a carriage return) gets a leading apostrophe, so that opening the
file runs nothing a model's name carried; the parquet file keeps the text as it is (no spreadsheet evaluates it).
"""
from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pandas as pd

from leaderboard.board.columns import View
from leaderboard.board.frames import MODEL_FACTS, model_shown

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
MAX_KEPT = 32  # the most download folders kept under the downloads folder (the oldest go first)


def defuse(value: object) -> object:
    """A text cell made inert in a spreadsheet: a leading apostrophe when it starts like a formula; anything else
    as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def export_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`board_frame`'s output as a plain table: the model column as the board writes it (plain text), nothing in
    attrs (the cells' extra facts stay on the board)."""
    out = frame.copy()
    out.attrs = {}
    facts = frame.attrs.get("model_rows")
    if "Model" in out and isinstance(facts, list) and len(facts) == len(out):
        out["Model"] = [model_shown({k: f.get(k) for k in MODEL_FACTS})[1] for f in facts]
    return out


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cell defused (see defuse), for the CSV file."""
    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].astype(object).map(defuse)
    return out


def file_stem(view: View) -> str:
    """The files' name without its suffix: "leaderboard-<view key>"."""
    return "leaderboard-" + (re.sub(r"[^A-Za-z0-9_-]+", "-", view.key).strip("-") or "view")


def write_exports(frame: pd.DataFrame, view: View, folder: Path) -> tuple[Path, Path]:
    """The CSV and parquet files of `frame` (export_frame's), in a folder of their own under `folder` named by their
    content (the same view twice: the same files); at most MAX_KEPT such folders are kept."""
    data = csv_frame(frame).to_csv(index=False).encode("utf-8")
    digest = hashlib.sha256(data + view.key.encode()).hexdigest()[:16]
    target = folder / digest
    stem = file_stem(view)
    csv_path, parquet_path = target / f"{stem}.csv", target / f"{stem}.parquet"
    if not (csv_path.is_file() and parquet_path.is_file()):
        target.mkdir(parents=True, exist_ok=True)
        csv_path.write_bytes(data)
        frame.to_parquet(parquet_path, index=False)
    _prune(folder, keep=target)
    return csv_path, parquet_path


def _prune(folder: Path, keep: Path) -> None:
    """Remove the oldest download folders beyond MAX_KEPT (never `keep`)."""
    try:
        folders = sorted((p for p in folder.iterdir() if p.is_dir() and p != keep), key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for old in folders[: max(len(folders) - (MAX_KEPT - 1), 0)]:
        shutil.rmtree(old, ignore_errors=True)
