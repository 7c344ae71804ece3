"""Results -> frames (the raw board and what the board shows) and leaderboard.parquet."""
from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from leaderboard.board.columns import schema
from leaderboard.board.file import LEADERBOARD_PATH, load_board, load_results, rebuild_leaderboard
from leaderboard.board.frames import SIZE_BUCKETS, board_table, board_text, leaderboard_frame, sort_runs
from leaderboard.board.views import view_board, view_text
from tests.results_files import SHA_A, SHA_B, result, write_result

S = schema()
CURE_HEADERS = [S.column(name).label for name in S.view("cure").columns]


def display_frame(raw, schema, **filters):
    """The CURE view as text (these results files have CURE alone)."""
    return view_text(raw, schema, "cure", **filters)


def test_leaderboard_frame_keeps_raw_fractions_one_row_per_run():
    df = leaderboard_frame([result("org/a"), result("org/a", sha=SHA_B, Cf=None)], S)
    assert len(df) == 2
    assert list(df.columns) == S.names
    assert df.loc[0, "cure_Ro"] == pytest.approx(0.1)
    assert df.loc[0, "revision"] == SHA_A  # the full sha in the raw frame
    assert math.isnan(df.loc[1, "cure_Cf"])
    assert df.loc[0, "suite"] == "sample" and df.loc[0, "key"] == f"org/a/{SHA_A[:12]}_auto"


def test_leaderboard_frame_tolerates_missing_benchmarks_and_odd_values():
    res = result("org/a")
    del res["benchmarks"]
    odd = result("org/b", Ro="not a number", Rh=float("inf"), Cb=True)
    df = leaderboard_frame([res, odd], S)
    assert df["cure_Ro"].isna().all()
    assert math.isnan(df.loc[1, "cure_Rh"]) and math.isnan(df.loc[1, "cure_Cb"])
    empty = leaderboard_frame([], S)
    assert empty.empty and list(empty.columns) == S.names


def test_display_frame_shows_percentages_with_one_decimal_and_na():
    df = leaderboard_frame([result("org/a", Ro=0.5456, Rh=0.7682, Rcot=0.6566, Cf=None, Cb=1.0,
                                          step_accuracy=0.0)], S)
    shown = display_frame(df, S)
    row = shown.iloc[0]
    assert row["Model"] == "org/a"
    assert row["Revision"] == SHA_A[:12]
    assert row["CURE Ro"] == "54.6"
    assert row["CURE Rh"] == "76.8"
    assert row["CURE Rcot"] == "65.7"
    assert row["CURE Cf"] == "n/a"
    assert row["CURE Cb"] == "100.0"
    assert row["CURE step accuracy"] == "0.0"
    assert row["Params (B)"] == "0.5"
    assert all(isinstance(v, str) for v in shown.iloc[0])


def test_display_frame_sorts_by_ro_descending_with_na_last():
    df = leaderboard_frame([
        result("org/low", Ro=0.09), result("org/na", Ro=None), result("org/high", Ro=1.0),
        result("org/mid", Ro=0.10), result("org/na2", Ro=None), result("org/zero", Ro=0.0)], S)
    shown = display_frame(df, S)
    assert list(shown["Model"]) == ["org/high", "org/mid", "org/low", "org/zero", "org/na", "org/na2"]
    assert list(shown["CURE Ro"]) == ["100.0", "10.0", "9.0", "0.0", "n/a", "n/a"]
    # na last whatever the direction
    ascending = sort_runs(df, "cure_Ro", ascending=True)
    assert list(ascending["model"])[-2:] == ["org/na", "org/na2"]


def test_board_table_holds_numbers_and_shows_the_same_text():
    df = leaderboard_frame([result("org/a", Ro=0.123, Cf=None), result("org/b", Ro=0.5, params=None)], S)
    _, board = view_board(df, S, "cure")
    assert board["CURE Ro"].tolist() == [50.0, 12.3]
    assert math.isnan(board.loc[1, "CURE Cf"])
    import gradio as gr

    data = gr.Dataframe(interactive=False).postprocess(board_table(board, S))
    ro, cf = CURE_HEADERS.index("CURE Ro"), CURE_HEADERS.index("CURE Cf")
    assert data.headers == CURE_HEADERS
    assert data.data[0][ro] == 50.0 and data.data[1][cf] is None  # numbers behind the text
    shown = board_text(board, S).values.tolist()
    links = CURE_HEADERS.index("Model")
    for got, want in zip(data.metadata["display_value"], shown):  # the same text, the model as a Hub link
        got = [re.sub(r"<span title=\"[^\"]*\">(.*)</span>", r"\1", cell) for cell in got]  # a score's hover title
        assert got[:links] + got[links + 1:] == want[:links] + want[links + 1:]
        assert got[links] == f"[{want[links]}](https://huggingface.co/{want[links]})"
    _, none = view_board(df.iloc[0:0], S, "cure")
    empty = gr.Dataframe(interactive=False).postprocess(board_table(none, S))
    assert empty.data == [] and empty.headers == CURE_HEADERS


def test_search_is_a_case_insensitive_substring_of_the_model_name():
    df = leaderboard_frame([result("Org/Tiny-LLaVA"), result("org/smol-vlm"), result("other/llama")], S)
    assert list(display_frame(df, S, search="llava")["Model"]) == ["Org/Tiny-LLaVA"]
    assert set(display_frame(df, S, search="  ORG/ ")["Model"]) == {"Org/Tiny-LLaVA", "org/smol-vlm"}
    assert set(display_frame(df, S, search="smol; llama")["Model"]) == {"org/smol-vlm", "other/llama"}
    assert display_frame(df, S, search="(.*").empty  # not a regular expression
    assert len(display_frame(df, S, search="")) == 3


def test_model_type_and_size_filters():
    df = leaderboard_frame([
        result("org/tiny", params=0.0001, model_type="pretrained"),
        result("org/one", params=1.0, model_type="instruction-tuned"),
        result("org/three", params=3.0, model_type="RL-tuned"),
        result("org/seven", params=7.2, model_type="pretrained"),
        result("org/fifteen", params=15.0, model_type="pretrained"),
        result("org/big", params=70.0, model_type="merged / other"),
        result("org/unknown", params=None, model_type="pretrained"),
    ], S)
    models = lambda **kw: set(display_frame(df, S, **kw)["Model"])  # noqa: E731
    assert models(model_types=["instruction-tuned", "RL-tuned"]) == {"org/one", "org/three"}
    assert models(sizes=["<1B"]) == {"org/tiny"}
    assert models(sizes=["1-3B"]) == {"org/one"}
    assert models(sizes=["3-7B"]) == {"org/three"}
    assert models(sizes=["7-15B"]) == {"org/seven", "org/fifteen"}
    assert models(sizes=[">15B", "unknown"]) == {"org/big", "org/unknown"}
    assert models(model_types=["pretrained"], sizes=["7-15B"], search="SEVEN") == {"org/seven"}
    assert models(model_types=["pretrained"], sizes=[">15B"]) == set()
    assert len(display_frame(df, S)) == 7
    assert list(SIZE_BUCKETS) == ["<1B", "1-3B", "3-7B", "7-15B", ">15B", "unknown"]


def test_load_results_skips_broken_files(store):
    write_result(store, result("org/a"))
    store.write_bytes("results/org/b/000000000000_auto.json", b"{not json")
    store.write_json("results/org/c/000000000000_auto.json", {"no": "model"})
    loaded = load_results(store)
    assert [r["model"] for r in loaded] == ["org/a"]


# ------------------------------------------------------------------------------------------------ parquet

def test_rebuild_leaderboard_writes_a_parquet_that_datasets_loads(store):
    write_result(store, result("org/a", Ro=0.25))
    write_result(store, result("org/a", sha=SHA_B, precision="float32", Ro=None, Cf=None))
    write_result(store, result("org/b", Ro=0.75))
    df = rebuild_leaderboard(store, S)
    assert len(df) == 3
    path = store.root / LEADERBOARD_PATH
    assert path.exists()

    import datasets

    ds = datasets.load_dataset("parquet", data_files=str(path), split="train")
    assert ds.num_rows == 3
    assert set(ds.column_names) == set(S.names)
    rows = {(r["model"], r["precision"]): r for r in ds}
    assert rows[("org/a", "auto")]["cure_Ro"] == pytest.approx(0.25)  # raw fractions
    assert rows[("org/a", "float32")]["cure_Ro"] is None
    assert rows[("org/b", "auto")]["revision"] == SHA_A

    back = pd.read_parquet(path)
    assert list(back["model"]) == ["org/b", "org/a", "org/a"]  # by the overall score, n/a last


def test_rebuild_leaderboard_with_no_results_writes_an_empty_board(store):
    df = rebuild_leaderboard(store, S)
    assert df.empty
    back = pd.read_parquet(store.root / LEADERBOARD_PATH)
    assert back.empty and list(back.columns) == S.names


# ------------------------------------------------------------------------------------------------ load_board

def test_load_board_reads_the_parquet_and_rebuilds_when_the_schema_grew(store):
    write_result(store, result("org/a", Ro=0.3))
    write_result(store, result("org/b", sha=SHA_B, Ro=0.6, Cf=None))
    fallback = load_board(store, S)  # no leaderboard.parquet yet: built from the results files
    assert sorted(fallback["model"]) == ["org/a", "org/b"]

    rebuild_leaderboard(store, S)
    store.delete("results/org/a/" + SHA_A[:12] + "_auto.json")  # the board now comes from the parquet alone
    board = load_board(store, S)
    assert list(board["model"]) == ["org/b", "org/a"]
    assert list(board.columns) == S.names
    assert math.isnan(board.loc[0, "cure_Cf"]) and board.loc[1, "cure_Ro"] == pytest.approx(0.3)

    old = board.drop(columns=["cure_Cb"])  # a file written before a column existed
    store.write_bytes(LEADERBOARD_PATH, old.to_parquet(index=False))
    rebuilt = load_board(store, S)
    assert list(rebuilt["model"]) == ["org/b"] and "cure_Cb" in rebuilt.columns

    store.write_bytes(LEADERBOARD_PATH, b"not parquet")
    assert list(load_board(store, S)["model"]) == ["org/b"]


def test_reform_view_has_its_dimension_columns_after_the_main_metrics():
    df = leaderboard_frame([result("org/a")], S)
    assert "reform_gen_spatial" in df.columns and "reform_lik_description" in df.columns
    headers = [S.column(name).label for name in S.view("reform").columns]
    dimensions = [h for h in headers if h.startswith(("ReForm gen ", "ReForm lik ")) and
                  not h.endswith(("overall", "accuracy", "instability", "95%"))]
    assert len(dimensions) == 16
    main = ["ReForm gen overall", "ReForm lik overall", "ReForm instability", "ReForm format hit rate"]
    assert headers[5:13:2] == main and headers[6] == "ReForm gen overall 95%" and headers.index("ReForm gen spatial") > headers.index("ReForm format hit rate")
    assert headers.index("ReForm coverage") > max(headers.index(h) for h in dimensions)


def test_numbers_read_like_the_percentages_beside_them():
    """A measured number (CIDEr, an entropy) keeps a decimal as the percentages do ("0.0", never "0"); a toy model's
    size reads "<0.01" billion, never 0.0000723; counts stay whole."""
    from leaderboard.formatting import format_billions, format_measure, format_number

    assert [format_measure(v) for v in (0, 0.0, 1.234, 2, 12.34, 123.4, 0.000123, None)] == [
        "0.0", "0.0", "1.23", "2.0", "12.3", "123.4", "0.000123", "n/a"]
    assert [format_billions(v) for v in (0.0000723, 0.5, 7.615, None)] == ["<0.01", "0.5", "7.62", "n/a"]
    assert format_number(2) == "2"  # a count or a setting
    res = result("org/toy", params=0.0000723)
    res["benchmarks"]["lave"] = {"scores": {"lave": 0.5, "cider": 0.0}, "counts": {"unrated": 0},
                                 "coverage": {"share": 1.0}}
    res["benchmarks"]["reform"] = {"scores": {"gen_overall": 0.5, "instability": 0}, "coverage": {"share": 1.0}}
    raw = leaderboard_frame([res], S)
    lave = view_text(raw, S, "lave").iloc[0]
    assert lave["LAVE CIDEr"] == "0.0" and lave["Params (B)"] == "<0.01" and lave["LAVE unrated (count)"] == "0"
    assert view_text(raw, S, "reform").iloc[0]["ReForm instability"] == "0.0"


def test_run_details_cut_long_text_values():
    """Issue 61, Also: a run with a 1 MB generation_path made Run details 1.7M characters. A text cell now holds at
    most TEXT_CHARS characters ("…" where cut), in every view and in the board table's data and display alike; the
    raw frame (and leaderboard.parquet) keeps the value whole."""
    from leaderboard.board.frames import TEXT_CHARS, board_frame
    from leaderboard.board.views import shown_rows

    res = result("org/long")
    res["run"].update({"generation_path": "static-" + "x" * 1_000_000, "attention": "<b>" * 50_000,
                       "versions": {"torch": "2." + "9" * 100_000, "transformers": "line\n" * 20_000},
                       "hardware": {"gpu_name": "H" * 5_000}, "dtype": "float32"})
    raw = leaderboard_frame([res], S)
    assert len(raw.loc[0, "generation_path"]) > 1_000_000  # the data stays whole; only its view is cut
    view = S.view("runs")
    [row] = view_text(raw, S, "runs").to_dict("records")
    assert sum(len(str(v)) for v in row.values()) < 20 * TEXT_CHARS, {k: len(str(v)) for k, v in row.items()}
    for label in ("Generation", "Attention", "torch", "transformers", "GPU"):
        assert len(row[label]) == TEXT_CHARS and row[label].endswith("…"), label
    assert row["Generation"].startswith("static-xxx") and row["Device"] == "cpu"  # a short value is as it was
    table = board_table(board_frame(shown_rows(raw, S, view).rows, S, view), S)
    assert len(str(table)) < 40 * TEXT_CHARS
    shown = dict(zip(table["headers"], table["metadata"]["display_value"][0]))
    data = dict(zip(table["headers"], table["data"][0]))
    assert shown["Generation"] == data["Generation"] == row["Generation"]
