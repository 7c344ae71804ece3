"""The column schema, results -> frames, the queue's text and leaderboard.parquet."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from leaderboard import queue as q
from leaderboard import tables

SHA_A = "abcdef0123456789abcdef0123456789abcdef01"
SHA_B = "0123456789abcdef0123456789abcdef01234567"


def result(model: str, sha: str = SHA_A, precision: str = "auto", model_type: str = "pretrained",
           params: float | None = 0.5, **scores) -> dict:
    """A results file as the scheduler publishes it (see the contract in the brief)."""
    cure = {"Rh": 0.5, "Rcot": 0.2, "Ro": 0.1, "Cf": 0.5, "Cb": 0.2, "step_accuracy": 0.4}
    cure.update(scores)
    return {
        "model": model, "revision": sha, "precision": precision, "model_type": model_type,
        "params_billions": params, "architecture": "LlavaForConditionalGeneration",
        "key": f"{model}/{sha[:12]}_{precision}",
        "submitted_time": "2026-11-22T02:00:00+00:00", "finished_time": "2026-11-22T02:10:00+00:00",
        "run": {"dtype": "float32", "device": "cpu", "batch_size": 4, "versions": {"torch": "2"},
                "git_commit": "abc", "judge": None, "prompt_hashes": {"cure_high": "sha256:00"}, "suite": "sample",
                "item_counts": {"cure": 20}, "wall_time_s": 12.3, "scoring_path": "reference", "has_vision": True},
        "benchmarks": {"cure": {"scores": cure, "counts": {"items": 20, "scored": 20, "image_unavailable": 0},
                                "extra": {"by_chain_length": {"2": {"Rh": 0.5, "n": 5}}, "mode": "likelihood"}}},
        "skipped": {},
    }


def write_result(store, res: dict) -> str:
    path = f"results/{res['model']}/{res['revision'][:12]}_{res['precision']}.json"
    store.write_json(path, res)
    return path


# ------------------------------------------------------------------------------------------------ schema

def test_schema_labels_and_names_are_unique():
    labels = [c.label for c in tables.COLUMNS]
    names = [c.name for c in tables.COLUMNS]
    assert len(labels) == len(set(labels))
    assert len(names) == len(set(names))


def test_every_column_has_a_description_and_benchmark_columns_belong_to_a_benchmark():
    benchmarks = {b.name for b in tables.BENCHMARKS}
    for col in tables.COLUMNS:
        assert col.description.strip(), col.name
        if col.kind == tables.SCORE:
            assert col.group in benchmarks, col.name
            assert col.path[:2] == ("benchmarks", col.group) and col.path[2] in ("scores", "extra")
    for bench in tables.BENCHMARKS:
        assert bench.summary.strip()


def test_board_columns_in_the_agreed_order():
    assert tables.display_headers() == [
        "Model", "Revision", "Precision", "Type", "Params (B)",
        "CURE Ro", "CURE Rh", "CURE Rcot", "CURE Cf", "CURE Cb", "CURE step accuracy",
        "SimpleQA correct", "SimpleQA not attempted", "SimpleQA incorrect", "SimpleQA correct given attempted",
        "SimpleQA F-score", "SimpleQA ungraded",
        "ReForm gen overall", "ReForm lik overall", "ReForm instability", "ReForm format hit rate",
        "LAVE score", "LAVE VQA accuracy", "LAVE ANLS", "LAVE exact match", "LAVE BLEU-4", "LAVE CIDEr",
        "LAVE unrated", "Suite"]
    assert tables.DEFAULT_SORT == "cure_Ro"


def test_adding_a_benchmark_is_one_declaration():
    cols = tables.benchmark_columns("simpleqa", "SimpleQA", [("f_score", "F-score."), ("correct", "Correct.")])
    assert [c.name for c in cols] == ["simpleqa_f_score", "simpleqa_correct"]
    assert [c.label for c in cols] == ["SimpleQA F-score", "SimpleQA correct"]
    assert cols[0].path == ("benchmarks", "simpleqa", "scores", "f_score")
    assert all(c.kind == tables.SCORE and c.group == "simpleqa" for c in cols)


def test_about_tab_reads_the_schema_descriptions():
    from leaderboard.ui.about import columns_markdown

    text = columns_markdown()
    for col in tables.COLUMNS:
        if col.shown or col.name in tables.OPTIONAL_COLUMNS:
            assert col.label in text and col.description in text


# ------------------------------------------------------------------------------------------------ frames

def test_leaderboard_frame_keeps_raw_fractions_one_row_per_run():
    df = tables.leaderboard_frame([result("org/a"), result("org/a", sha=SHA_B, Cf=None)])
    assert len(df) == 2
    assert list(df.columns) == [c.name for c in tables.COLUMNS]
    assert df.loc[0, "cure_Ro"] == pytest.approx(0.1)
    assert df.loc[0, "revision"] == SHA_A  # the full sha in the raw frame
    assert math.isnan(df.loc[1, "cure_Cf"])
    assert df.loc[0, "suite"] == "sample" and df.loc[0, "key"] == f"org/a/{SHA_A[:12]}_auto"


def test_leaderboard_frame_tolerates_missing_benchmarks_and_odd_values():
    res = result("org/a")
    del res["benchmarks"]
    odd = result("org/b", Ro="not a number", Rh=float("inf"), Cb=True)
    df = tables.leaderboard_frame([res, odd])
    assert df["cure_Ro"].isna().all()
    assert math.isnan(df.loc[1, "cure_Rh"]) and math.isnan(df.loc[1, "cure_Cb"])
    empty = tables.leaderboard_frame([])
    assert empty.empty and list(empty.columns) == [c.name for c in tables.COLUMNS]


def test_display_frame_shows_percentages_with_one_decimal_and_na():
    df = tables.leaderboard_frame([result("org/a", Ro=0.5456, Rh=0.7682, Rcot=0.6566, Cf=None, Cb=1.0,
                                          step_accuracy=0.0)])
    shown = tables.display_frame(df)
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
    df = tables.leaderboard_frame([
        result("org/low", Ro=0.09), result("org/na", Ro=None), result("org/high", Ro=1.0),
        result("org/mid", Ro=0.10), result("org/na2", Ro=None), result("org/zero", Ro=0.0)])
    shown = tables.display_frame(df)
    assert list(shown["Model"]) == ["org/high", "org/mid", "org/low", "org/zero", "org/na", "org/na2"]
    assert list(shown["CURE Ro"]) == ["100.0", "10.0", "9.0", "0.0", "n/a", "n/a"]
    # na last whatever the direction
    ascending = tables.sort_runs(df, "cure_Ro", ascending=True)
    assert list(ascending["model"])[-2:] == ["org/na", "org/na2"]


def test_board_table_holds_numbers_and_shows_the_same_text():
    df = tables.leaderboard_frame([result("org/a", Ro=0.123, Cf=None), result("org/b", Ro=0.5, params=None)])
    board = tables.board_frame(df)
    assert board["CURE Ro"].tolist() == [50.0, 12.3]
    assert math.isnan(board.loc[1, "CURE Cf"])
    import gradio as gr

    data = gr.Dataframe(interactive=False).postprocess(tables.board_table(board))
    assert data.headers == tables.display_headers()
    assert data.data[0][5] == 50.0 and data.data[1][8] is None  # numbers behind the text
    assert data.metadata["display_value"] == tables.display_frame(df).values.tolist()
    empty = gr.Dataframe(interactive=False).postprocess(tables.board_table(tables.board_frame(df.iloc[0:0])))
    assert empty.data == [] and empty.headers == tables.display_headers()


def test_search_is_a_case_insensitive_substring_of_the_model_name():
    df = tables.leaderboard_frame([result("Org/Tiny-LLaVA"), result("org/smol-vlm"), result("other/llama")])
    assert list(tables.display_frame(df, search="llava")["Model"]) == ["Org/Tiny-LLaVA"]
    assert set(tables.display_frame(df, search="  ORG/ ")["Model"]) == {"Org/Tiny-LLaVA", "org/smol-vlm"}
    assert set(tables.display_frame(df, search="smol; llama")["Model"]) == {"org/smol-vlm", "other/llama"}
    assert tables.display_frame(df, search="(.*").empty  # not a regular expression
    assert len(tables.display_frame(df, search="")) == 3


def test_model_type_and_size_filters():
    df = tables.leaderboard_frame([
        result("org/tiny", params=0.0001, model_type="pretrained"),
        result("org/one", params=1.0, model_type="instruction-tuned"),
        result("org/three", params=3.0, model_type="RL-tuned"),
        result("org/seven", params=7.2, model_type="pretrained"),
        result("org/fifteen", params=15.0, model_type="pretrained"),
        result("org/big", params=70.0, model_type="merged / other"),
        result("org/unknown", params=None, model_type="pretrained"),
    ])
    models = lambda **kw: set(tables.display_frame(df, **kw)["Model"])  # noqa: E731
    assert models(model_types=["instruction-tuned", "RL-tuned"]) == {"org/one", "org/three"}
    assert models(sizes=["<1B"]) == {"org/tiny"}
    assert models(sizes=["1-3B"]) == {"org/one"}
    assert models(sizes=["3-7B"]) == {"org/three"}
    assert models(sizes=["7-15B"]) == {"org/seven", "org/fifteen"}
    assert models(sizes=[">15B", "unknown"]) == {"org/big", "org/unknown"}
    assert models(model_types=["pretrained"], sizes=["7-15B"], search="SEVEN") == {"org/seven"}
    assert models(model_types=["pretrained"], sizes=[">15B"]) == set()
    assert len(tables.display_frame(df)) == 7
    assert list(tables.SIZE_BUCKETS) == ["<1B", "1-3B", "3-7B", "7-15B", ">15B", "unknown"]


def test_load_results_skips_broken_files(store):
    write_result(store, result("org/a"))
    store.write_bytes("results/org/b/000000000000_auto.json", b"{not json")
    store.write_json("results/org/c/000000000000_auto.json", {"no": "model"})
    loaded = tables.load_results(store)
    assert [r["model"] for r in loaded] == ["org/a"]


# ------------------------------------------------------------------------------------------------ queue

def _request(model: str, sha: str = SHA_A, **fields) -> q.Request:
    return q.Request(model=model, revision=sha, **fields)


def test_queue_frame_pending_in_queue_order_with_positions():
    reqs = [_request("org/second", submitted_time="2026-11-22T02:00:05+00:00"),
            _request("org/first", submitted_time="2026-11-22T02:00:00+00:00"),
            _request("org/done", status=q.FINISHED)]
    df = tables.queue_frame(reqs, q.PENDING)
    assert list(df["Model"]) == ["org/first", "org/second"]
    assert list(df["#"]) == ["1", "2"]
    assert df.loc[0, "Revision"] == SHA_A[:12]
    assert df.loc[0, "Submitted"] == "2026-11-22 02:00:00 UTC"
    assert df.loc[0, "Key"] == f"org/first/{SHA_A[:12]}_auto"


def test_queue_frame_running_shows_progress_text():
    reqs = [_request("org/run", status=q.RUNNING, started_time="2026-11-22T02:01:00+00:00", attempts=1,
                     progress={"benchmark": "cure", "done": 12, "total": 20, "rate": 1.4}),
            _request("org/starting", sha=SHA_B, status=q.RUNNING, started_time="2026-11-22T02:02:00+00:00")]
    df = tables.queue_frame(reqs, q.RUNNING)
    assert list(df["Progress"]) == ["cure 12/20 (1.4 it/s)", "starting"]
    assert df.loc[0, "Started"] == "2026-11-22 02:01:00 UTC"
    assert df.loc[0, "Attempts"] == "1"
    assert tables.progress_text({"benchmark": "cure", "done": 3, "total": 20}) == "cure 3/20"


def test_queue_frame_failed_has_reason_and_log_tail():
    reqs = [_request("org/bad", status=q.FAILED, error="CUDA out of memory", log_tail="line 1\nline 2",
                     finished_time="2026-11-22T03:00:00+00:00", attempts=3)]
    df = tables.queue_frame(reqs, q.FAILED)
    assert df.loc[0, "Error"] == "CUDA out of memory"
    assert df.loc[0, "Log tail"] == "line 1\nline 2"
    assert df.loc[0, "Finished"] == "2026-11-22 03:00:00 UTC"
    assert all(isinstance(v, str) for v in df.iloc[0])


def test_queue_frame_finished_and_cancelled_newest_first_and_empty_frames_have_headers():
    reqs = [_request("org/old", status=q.FINISHED, finished_time="2026-11-22T01:00:00+00:00"),
            _request("org/new", sha=SHA_B, status=q.FINISHED, finished_time="2026-11-22T05:00:00+00:00"),
            _request("org/gone", status=q.CANCELLED, finished_time="2026-11-22T04:00:00+00:00")]
    assert list(tables.queue_frame(reqs, q.FINISHED)["Model"]) == ["org/new", "org/old"]
    assert list(tables.queue_frame(reqs, q.CANCELLED)["Cancelled"]) == ["2026-11-22 04:00:00 UTC"]
    for status in q.STATUSES:
        empty = tables.queue_frame([], status)
        assert empty.empty and list(empty.columns) == list(tables.QUEUE_COLUMNS[status])
    with pytest.raises(ValueError):
        tables.queue_frame(reqs, "LOST")


# ------------------------------------------------------------------------------------------------ parquet

def test_rebuild_leaderboard_writes_a_parquet_that_datasets_loads(store):
    write_result(store, result("org/a", Ro=0.25))
    write_result(store, result("org/a", sha=SHA_B, precision="float32", Ro=None, Cf=None))
    write_result(store, result("org/b", Ro=0.75))
    df = tables.rebuild_leaderboard(store)
    assert len(df) == 3
    path = store.root / tables.LEADERBOARD_PATH
    assert path.exists()

    import datasets

    ds = datasets.load_dataset("parquet", data_files=str(path), split="train")
    assert ds.num_rows == 3
    assert set(ds.column_names) == {c.name for c in tables.COLUMNS}
    rows = {(r["model"], r["precision"]): r for r in ds}
    assert rows[("org/a", "auto")]["cure_Ro"] == pytest.approx(0.25)  # raw fractions
    assert rows[("org/a", "float32")]["cure_Ro"] is None
    assert rows[("org/b", "auto")]["revision"] == SHA_A

    back = pd.read_parquet(path)
    assert list(back["model"]) == ["org/b", "org/a", "org/a"]  # default order, n/a last


def test_rebuild_leaderboard_with_no_results_writes_an_empty_board(store):
    df = tables.rebuild_leaderboard(store)
    assert df.empty
    back = pd.read_parquet(store.root / tables.LEADERBOARD_PATH)
    assert back.empty and list(back.columns) == [c.name for c in tables.COLUMNS]


# ------------------------------------------------------------------------------------------------ load_board

def test_load_board_reads_the_parquet_and_rebuilds_when_the_schema_grew(store):
    write_result(store, result("org/a", Ro=0.3))
    write_result(store, result("org/b", sha=SHA_B, Ro=0.6, Cf=None))
    fallback = tables.load_board(store)  # no leaderboard.parquet yet: built from the results files
    assert sorted(fallback["model"]) == ["org/a", "org/b"]

    tables.rebuild_leaderboard(store)
    store.delete("results/org/a/" + SHA_A[:12] + "_auto.json")  # the board now comes from the parquet alone
    board = tables.load_board(store)
    assert list(board["model"]) == ["org/b", "org/a"]
    assert list(board.columns) == [c.name for c in tables.COLUMNS]
    assert math.isnan(board.loc[0, "cure_Cf"]) and board.loc[1, "cure_Ro"] == pytest.approx(0.3)

    old = board.drop(columns=["cure_Cb"])  # a file written before a column existed
    store.write_bytes(tables.LEADERBOARD_PATH, old.to_parquet(index=False))
    rebuilt = tables.load_board(store)
    assert list(rebuilt["model"]) == ["org/b"] and "cure_Cb" in rebuilt.columns

    store.write_bytes(tables.LEADERBOARD_PATH, b"not parquet")
    assert list(tables.load_board(store)["model"]) == ["org/b"]


def test_reform_dimension_columns_can_be_added_before_suite():
    df = tables.leaderboard_frame([result("org/a")])
    assert "reform_gen_spatial" in df.columns and "reform_lik_description" in df.columns
    assert not any(c.shown for c in tables.REFORM_DIMENSION_COLUMNS) and len(tables.REFORM_DIMENSION_COLUMNS) == 16
    board = tables.board_frame(df, extra=["reform_lik_spatial", "reform_gen_spatial", "bogus"])
    headers = list(board.columns)
    assert headers[-3:] == ["ReForm gen spatial", "ReForm lik spatial", "Suite"]
    assert headers[:-3] == tables.display_headers()[:-1]
    table = tables.board_table(board)
    assert table["headers"] == headers and table["data"][0][-2] is None
    assert list(tables.board_frame(df).columns) == tables.display_headers()
