"""The board as shown, as files (issue 62, point 8): the view's rows after its search and filters, every column of
the view, as CSV and parquet under the folder Gradio serves from; a model name that reads as a spreadsheet formula is
defused in the CSV."""
from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import pandas as pd

from leaderboard.board.columns import schema
from leaderboard.board.exports import defuse
from leaderboard.board.frames import leaderboard_frame
from leaderboard.ui.board_figures import download_files
from tests.results_files import result

S = schema()
FORMULA = "=HYPERLINK(\"http://evil.example\",\"x\")"


def _raw():
    return leaderboard_frame([result("org/alpha", Ro=0.4), result("org/beta", Ro=0.3), result(FORMULA, Ro=0.2),
                              result("@org/at", Ro=0.1)], S)


def _files(settings, store, tmp_path, view="cure", search=""):
    paths = download_files(tmp_path, _raw(), S, settings, store, view, search, [], [], True)
    return [Path(p) for p in paths]


def test_the_download_holds_the_view_s_rows_and_every_column_of_it_as_csv_and_parquet(settings, store, tmp_path):
    csv_path, parquet_path = _files(settings, store, tmp_path, search="org/")
    assert csv_path.suffix == ".csv" and parquet_path.suffix == ".parquet" and csv_path.name.startswith("leaderboard-")
    table = pd.read_parquet(parquet_path)
    assert list(table.columns) == [S.column(name).label for name in S.view("cure").columns]
    assert list(table["Model"]) == ["org/alpha", "org/beta", "@org/at"]  # the search left out the formula's row
    assert list(table["CURE Ro"]) == [40.0, 30.0, 10.0]  # percentages as the board holds them
    with csv_path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["Model"] for r in rows] == ["org/alpha", "org/beta", "'@org/at"]
    assert [r["CURE Ro"] for r in rows] == ["40.0", "30.0", "10.0"]


def test_a_formula_looking_model_name_is_defused_in_the_csv_and_kept_in_the_parquet(settings, store, tmp_path):
    csv_path, parquet_path = _files(settings, store, tmp_path, search="hyperlink")
    with csv_path.open(newline="", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["Model"] == "'" + FORMULA
    assert not any(value.startswith(("=", "+", "-", "@")) for value in row.values())
    assert list(pd.read_parquet(parquet_path)["Model"]) == [FORMULA]


def test_defuse_guards_each_formula_start_and_leaves_numbers_and_plain_text():
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert defuse(f"{start}1+1") == f"'{start}1+1"
    assert defuse("org/model") == "org/model" and defuse(-3.5) == -3.5 and defuse(None) is None


def test_the_same_view_twice_gives_the_same_files_and_an_empty_view_still_has_its_headers(settings, store, tmp_path):
    assert _files(settings, store, tmp_path) == _files(settings, store, tmp_path)
    csv_path, parquet_path = _files(settings, store, tmp_path, search="no such model")
    assert len(pd.read_parquet(parquet_path)) == 0
    assert csv_path.read_text(encoding="utf-8").splitlines()[0].startswith("#,Model")


def test_the_app_writes_its_files_where_gradio_serves_files_from():
    """Gradio hands out a returned file from its temporary folder (processing_utils._check_allowed): the tab's
    folder is under it."""
    from leaderboard.ui import board_figures

    folder = Path(tempfile.gettempdir()) / board_figures.DOWNLOADS
    assert folder.parent == Path(tempfile.gettempdir())
