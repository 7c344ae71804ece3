"""Publishing a run costs the same whatever the number of runs: the board gets the run's row from one read and one
write of leaderboard.parquet, and the board so updated run by run is the board a full rebuild gives."""
from __future__ import annotations

import io
import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from evaluator import api
from leaderboard.board import publish as publishing
from leaderboard.running import scheduler
from leaderboard.submissions import records as queue
from leaderboard.board.file import (LEADERBOARD_PATH, add_run, board_is_current, load_board, main as board_main,
                                    rebuild_leaderboard)
from leaderboard.board.columns import schema
from leaderboard.board.dataset_card import CARD_PATH
from leaderboard.settings import Settings
from leaderboard.store import open_store
from leaderboard.submissions.records import Request
from tests.published_runs import finished_output, publish_finished
from tests.results_files import SHA_A, SHA_B, board_result, write_result


class CountingStore:
    """A store that records every read (read_bytes, read_json, list) and every write_many batch."""

    def __init__(self, inner):
        self.inner = inner
        self.reads: list[tuple[str, str]] = []
        self.writes: list[list[str]] = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def read_bytes(self, path):
        self.reads.append(("read", path))
        return self.inner.read_bytes(path)

    def read_json(self, path):
        self.reads.append(("read", path))
        return self.inner.read_json(path)

    def list(self, prefix, suffix=""):
        self.reads.append(("list", prefix))
        return self.inner.list(prefix, suffix)

    def write_many(self, files):
        self.writes.append(list(files))
        return self.inner.write_many(files)

    def write_bytes(self, path, data):
        self.writes.append([path])
        return self.inner.write_bytes(path, data)


def _finished_runs(store, count: int, board) -> None:
    """`count` finished runs: their requests FINISHED, their results files, and the board built from them."""
    first = api.benchmark_names()[0]
    for i in range(count):
        sha = f"{i:040x}"
        request = Request(model=f"org{i % 7}/model-{i}", revision=sha, status=queue.FINISHED)
        queue.save(store, request)
        res = board_result(request.model, {first: (i % 10) / 10}, sha=sha)
        write_result(store, res)
    rebuild_leaderboard(store, board)


def _publish_reads(settings, tmp_path, count: int) -> list[tuple[str, str]]:
    """The store reads of publishing one more run (publish, then its board row) on a store of `count` finished
    runs, the queue's own reads of the request aside."""
    home = tmp_path / f"home-{count}"
    settings = settings.with_(home=home)
    store = open_store(settings)
    board = schema(settings.benchmarks)
    _finished_runs(store, count, board)
    first = api.benchmark_names()[0]
    counting = CountingStore(store)
    publish_finished(settings, counting, finished_output(tmp_path / f"new-{count}", "new", {first: 0.9}), "org/new",
                     SHA_B)
    assert board_is_current(store)  # the updated board lists the run: no rebuild follows
    assert len(load_board(store, board)) == count + 1
    return [r for r in counting.reads if not r[1].startswith("requests/")]


def test_a_publish_reads_the_same_files_whatever_the_number_of_runs(settings, tmp_path):
    few, many = _publish_reads(settings, tmp_path, 5), _publish_reads(settings, tmp_path, 50)
    key = f"org/new/{SHA_B[:12]}_auto"
    # the model's eval_results folder is listed too when the run earns no file there (to remove an earlier one)
    assert few == many == [("list", f"details/{key}"), ("read", CARD_PATH), ("list", "eval_results/org/new"),
                           ("read", LEADERBOARD_PATH)]


def test_the_publish_write_holds_details_card_and_results_together(settings, store, tmp_path):
    first, second = api.benchmark_names()[:2]
    counting = CountingStore(store)
    publish_finished(settings, counting, finished_output(tmp_path / "a", "A", {first: 0.5, second: 0.5}), "org/a")
    key = f"org/a/{'a' * 12}_auto"
    publishes = [batch for batch in counting.writes if any(p.startswith("results/") for p in batch)]
    assert publishes == [[f"details/{key}/{first}.parquet", f"details/{key}/{second}.parquet", CARD_PATH,
                          f"results/{key}.json"]]  # results last
    assert counting.writes[-1] == [LEADERBOARD_PATH]  # the board after the request is FINISHED
    counting.writes.clear()
    publish_finished(settings, counting, finished_output(tmp_path / "b", "B", {first: 0.5}), "org/b")
    publishes = [batch for batch in counting.writes if any(p.startswith("results/") for p in batch)]
    assert publishes and CARD_PATH not in publishes[0]  # the card did not change: not written again


def _board_and_metadata(store):
    data = store.read_bytes(LEADERBOARD_PATH)
    metadata = pq.read_schema(io.BytesIO(data)).metadata
    return pq.read_table(io.BytesIO(data)).to_pandas(), json.loads(metadata[b"results"]), json.loads(
        metadata[b"hidden"])


def test_a_board_updated_run_by_run_equals_a_full_rebuild(settings, store, tmp_path):
    first, second = api.benchmark_names()[:2]
    runs = [("a", "org/a", SHA_A, {first: 0.5, second: 0.1}, None),
            ("b", "org/b", SHA_A, {first: 0.5}, None),  # ties with a on the first benchmark
            ("c", "org/c", SHA_B, {first: None}, None),  # an undefined score
            ("d", "org/d", SHA_A, {first: 0.9}, "trained on the test data"),  # hidden by an admin
            ("a2", "org/a", SHA_A, {first: 0.2}, None),  # a re-run of a: replaces its row and its second benchmark
            ("e", "org/a", SHA_B, {first: 0.2}, None)]  # another revision of the same model, tied with a2
    for name, model, sha, scores, hidden in runs:
        publish_finished(settings, store, finished_output(tmp_path / name, name, scores), model, sha, hidden=hidden)
        assert board_is_current(store), name
    updated, sources, hidden = _board_and_metadata(store)
    assert len(updated) == 5 and updated["key"].is_unique
    assert hidden == {f"org/d/{SHA_A[:12]}_auto": "trained on the test data"}
    row = updated.set_index("key").loc[f"org/a/{SHA_A[:12]}_auto"]
    assert row[f"{first}_{api.card(first).default_metric}"] == pytest.approx(0.2)
    assert pd.isna(row[f"{second}_{api.card(second).default_metric}"])

    rebuild_leaderboard(store, schema(settings.benchmarks))
    rebuilt, rebuilt_sources, rebuilt_hidden = _board_and_metadata(store)
    pd.testing.assert_frame_equal(updated, rebuilt)
    assert sources == rebuilt_sources and hidden == rebuilt_hidden


def test_a_missing_or_damaged_board_is_rebuilt_by_the_publish(settings, store, tmp_path):
    first = api.benchmark_names()[0]
    board = schema(settings.benchmarks)
    publish_finished(settings, store, finished_output(tmp_path / "a", "a", {first: 0.5}), "org/a")
    store.write_bytes(LEADERBOARD_PATH, b"not a parquet file")
    closed, results = publish_finished(settings, store, finished_output(tmp_path / "b", "b", {first: 0.6}), "org/b")
    assert sorted(load_board(store, board)["model"]) == ["org/a", "org/b"] and board_is_current(store)
    store.delete(LEADERBOARD_PATH)
    add_run(store, board, f"results/{closed.key}.json", results)
    assert sorted(load_board(store, board)["model"]) == ["org/a", "org/b"] and board_is_current(store)


def test_a_board_that_lacks_a_column_is_rebuilt_not_patched(settings, store, tmp_path):
    first = api.benchmark_names()[0]
    board = schema(settings.benchmarks)
    publish_finished(settings, store, finished_output(tmp_path / "a", "a", {first: 0.5}), "org/a")
    table = pq.read_table(io.BytesIO(store.read_bytes(LEADERBOARD_PATH)))
    narrow = table.drop_columns([board.names[-1]])
    buffer = io.BytesIO()
    pq.write_table(narrow, buffer)
    store.write_bytes(LEADERBOARD_PATH, buffer.getvalue())
    publish_finished(settings, store, finished_output(tmp_path / "b", "b", {first: 0.6}), "org/b")
    assert list(pq.read_schema(io.BytesIO(store.read_bytes(LEADERBOARD_PATH))).names) == board.names
    assert board_is_current(store)


def test_a_failed_board_update_is_caught_up_by_the_next_tick(settings, store, tmp_path, monkeypatch):
    first = api.benchmark_names()[0]
    publish_finished(settings, store, finished_output(tmp_path / "a", "a", {first: 0.5}), "org/a")

    def refused(*args, **kwargs):
        raise OSError("the store is down")

    monkeypatch.setattr(publishing, "add_run", refused)
    request = Request(model="org/b", revision=SHA_B, status=queue.RUNNING, lease_owner="w")
    queue.save(store, request)
    results = publishing.publish(store, request, finished_output(tmp_path / "b", "b", {first: 0.6}), settings)
    closed = queue.finish(store, request.path, "w", queue.FINISHED)
    assert not publishing.publish_board(settings, store, closed, results)  # logged, not raised
    assert not board_is_current(store)
    monkeypatch.undo()
    assert scheduler.tick(settings, store).request is None
    assert board_is_current(store) and sorted(load_board(store, schema())["model"]) == ["org/a", "org/b"]


def test_the_rebuild_command_rebuilds_the_board(settings, store, tmp_path, monkeypatch, capsys):
    first = api.benchmark_names()[0]
    publish_finished(settings, store, finished_output(tmp_path / "a", "a", {first: 0.5}), "org/a")
    store.delete(LEADERBOARD_PATH)
    monkeypatch.setenv("LEADERBOARD_HOME", str(settings.home))
    assert board_main(["--rebuild"]) == 0
    assert "1 run(s)" in capsys.readouterr().out
    assert board_is_current(open_store(Settings.from_env()))


def test_on_the_hub_store_a_publish_is_one_commit_and_the_board_another(tmp_path):
    """On the loopback Hub (tests/hub_server.py) with the real client: a publish is one commit of the results repo
    (the details parquet through Git LFS), the board update another."""
    import uuid

    from huggingface_hub import HfApi

    from leaderboard.store.hub import HubStore
    from tests.hub_server import HubServer, hub_client_online

    suffix = uuid.uuid4().hex[:8]
    results_repo, requests_repo = f"test-org/results-{suffix}", f"test-org/requests-{suffix}"
    with HubServer() as server, hub_client_online():
        hub = HubStore(HfApi(endpoint=server.url, token=server.issue_token("ada", orgs=["test-org"])),
                       results_repo, requests_repo)
        settings = Settings.from_env({}, home=tmp_path / "home", store_backend="hub", results_repo=results_repo,
                                     requests_repo=requests_repo, space_id="org/space")
        first = api.benchmark_names()[0]
        before = server.commits[results_repo]
        request = Request(model="org/a", revision=SHA_A, status=queue.RUNNING, lease_owner="w")
        queue.save(hub, request)
        results = publishing.publish(hub, request, finished_output(tmp_path / "a", "a", {first: 0.5}), settings)
        assert server.commits[results_repo] == before + 1
        files = server.files(results_repo)
        details = f"details/{request.key}/{first}.parquet"
        assert {CARD_PATH, f"results/{request.key}.json", details} <= set(files)
        assert details in server.lfs_paths(results_repo)  # the parquet went through Git LFS ...
        assert pq.read_table(io.BytesIO(files[details])).num_rows > 0  # ... and is the real file
        assert f"results/{request.key}.json" not in server.lfs_paths(results_repo)
        assert b"https://huggingface.co/spaces/org/space" in files[CARD_PATH]
        assert f'load_dataset("{results_repo}", "leaderboard"'.encode() in files[CARD_PATH]
        closed = queue.finish(hub, request.path, "w", queue.FINISHED)
        assert publishing.publish_board(settings, hub, closed, results)
        assert server.commits[results_repo] == before + 2 and board_is_current(hub)
        assert LEADERBOARD_PATH in server.files(results_repo)
