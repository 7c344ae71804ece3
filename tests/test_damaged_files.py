"""One damaged file never stops the service: every reader of the store skips it, logs it once and lists it.

Each kind of damage is written over a request (or results) file next to good ones; the queue, the scheduler's tick,
the standalone worker loop, submission, the board and the Queue tab's API then go on as if it were not there, and
the file is listed (path and reason) in the store's ledger of damaged files.
"""
from __future__ import annotations

import io
import json
import logging
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from leaderboard.board import publish as publishing
from leaderboard.running import attempt
from leaderboard.running import scheduler
from leaderboard.submissions import records as queue
from leaderboard.board.file import (LEADERBOARD_PATH, board_is_current, load_board, load_results, read_board,
                                    read_results, rebuild_leaderboard)
from leaderboard.board.columns import schema
from leaderboard.explorer.details_cache import DetailsCache, DetailsError, details_path
from leaderboard.store import MAX_JSON_BYTES, DamagedFile, PathRefused
from leaderboard.submissions.actions import act
from leaderboard.submissions.checks import submit
from leaderboard.submissions.identity import Visitor
from leaderboard.submissions.records import Request
from tests.hub_cache import fake_sha
from tests.results_files import result, write_result

GOOD = Request(model="org/good", revision=fake_sha("good"), submitted_time="2026-11-22T00:00:00+00:00")
BAD = Request(model="org/bad", revision=fake_sha("bad"), submitted_time="2026-11-22T00:00:01+00:00")


def _record(**changes) -> bytes:
    data = {**BAD.to_dict(), **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...}).encode()


NESTED = b"[" * 100_000 + b"]" * 100_000  # 200 KB of nesting: json.loads raises RecursionError
PADDING = "x" * MAX_JSON_BYTES  # makes a well-formed file one over the size limit
OVERSIZED_REQUEST = _record(notes=[PADDING])
OVERSIZED_RESULTS = json.dumps({**result("org/bad"), "padding": PADDING}).encode()

DAMAGE = {
    "garbage JSON": (b"{not json", "JSONDecodeError"),
    "not UTF-8": (b'{"model": "org/bad\xff\xfe"}', "UnicodeDecodeError"),
    "a JSON list": (b'[1, 2, 3]', "a JSON list"),
    "fields missing": (b'{"status": "PENDING"}', "model, revision missing"),
    "a lease that is not a time": (_record(status="RUNNING", lease_owner="w", lease_expires="next tuesday"),
                                   "lease_expires 'next tuesday' is not a time"),
    "attempts as text": (_record(attempts="two"), "attempts is text"),
    "an unknown status": (_record(status="DONE-ISH"), "status 'DONE-ISH' is not one of"),
    "another request's record": (json.dumps(GOOD.to_dict()).encode(), "not the one its path names"),
    "nested JSON": (NESTED, "JSON nested deeper than 64 levels"),
    "oversized": (OVERSIZED_REQUEST, f"over the {MAX_JSON_BYTES}-byte limit"),
    # issue 61, point 2: an action's time is checked like the record's own (a far-future one would be counted by
    # the daily limits until then)
    "an action at no time": (_record(actions=[{"action": "hide", "by": "a", "at": "soon", "reason": "r"}]),
                             "actions[0].at 'soon' is not a time"),
    "an action dated 2999": (_record(actions=[{"action": "cancel", "by": "a", "at": "2999-01-01T00:00:00+00:00"}]),
                             "actions[0].at (2999-01-01T00:00:00+00:00) is in the future"),
    "an action that is not one": (_record(actions=["cancel"]), "actions[0] is not an action"),
}


@pytest.fixture(params=list(DAMAGE), ids=list(DAMAGE))
def damaged(request, store):
    """The good request saved, and BAD's file overwritten with one kind of damage; (data, reason)."""
    queue.save(store, Request(**GOOD.to_dict()))
    data, reason = DAMAGE[request.param]
    store.write_bytes(BAD.path, data)
    return data, reason


def test_the_queue_skips_it_lists_it_and_logs_it_once(damaged, store, caplog):
    data, reason = damaged
    with caplog.at_level(logging.WARNING, logger="leaderboard.store.damage"):
        for _ in range(3):
            assert [r.path for r in queue.all_requests(store)] == [GOOD.path]
    listed = dict(store.damaged.listing())
    assert list(listed) == [BAD.path] and reason in listed[BAD.path]
    assert len([r for r in caplog.records if BAD.path in r.getMessage()]) == 1  # logged once, not at every scan
    with pytest.raises(DamagedFile, match="."):
        queue.load(store, BAD.path)
    # the service goes on: claim, heartbeat, recover and cancel work around it; the damaged file is untouched
    assert queue.recover(store, max_attempts=3) == []
    claimed = queue.claim(store, "w1", lease_seconds=60)
    assert claimed.path == GOOD.path and queue.heartbeat(store, GOOD.path, "w1", 60)
    assert queue.claim(store, "w2", lease_seconds=60) is None
    assert queue.heartbeat(store, BAD.path, "w1", 60) is False
    done, message = act(store, BAD.path, "cancel", Visitor("admin", admin=True))
    assert not done and "damaged" in message
    assert store.read_bytes(BAD.path) == data


def test_a_repaired_or_removed_file_leaves_the_list(damaged, store):
    queue.all_requests(store)
    assert store.damaged.listing()
    queue.save(store, Request(**BAD.to_dict()))  # repaired
    assert {r.path for r in queue.all_requests(store)} == {GOOD.path, BAD.path}
    assert store.damaged.listing() == []
    store.write_bytes(BAD.path, b"{")
    queue.all_requests(store)
    store.delete(BAD.path)  # removed
    queue.all_requests(store)
    assert store.damaged.listing() == []


def test_ticks_and_the_standalone_worker_loop_go_on(damaged, store, settings, monkeypatch):
    ran = []
    monkeypatch.setattr(scheduler, "run_request", lambda s, st, request, owner, stop=None: ran.append(request.path)
                        or attempt.TickReport(request=request.path, status=queue.FINISHED))
    report = scheduler.tick(settings, store)
    assert report.error is None and report.request == GOOD.path and ran == [GOOD.path]
    stop = threading.Event()
    assert scheduler.run_worker_loop(settings.with_(scheduler_interval=0.01), store, stop, max_ticks=3) == 0
    assert [p for p, _ in store.damaged.listing()] == [BAD.path]


@pytest.mark.parametrize("kind", ["garbage", "nested JSON", "oversized"])
def test_submission_works_beside_it_and_refuses_clearly_over_it(store, settings, tiny_llava, tiny_llama, kind):
    bad = Request(model=tiny_llava.repo_id, revision=tiny_llava.sha)
    data, reason = {"garbage": (b"\x00\xff garbage", "not UTF-8"), "nested JSON": DAMAGE["nested JSON"],
                    "oversized": (json.dumps({**bad.to_dict(), "notes": [PADDING]}).encode(), "over the")}[kind]
    store.write_bytes(bad.path, data)
    refused = submit(settings, store, tiny_llava.repo_id, by=Visitor("visitor"))
    assert not refused.ok and "damaged" in refused.message and "internal error" not in refused.message
    assert reason in refused.message
    assert store.read_bytes(bad.path) == data  # nothing changed
    text = settings.with_(benchmarks=("cure", "simpleqa"))  # a text-only model is queued where a benchmark fits it
    queued = submit(text, store, tiny_llama.repo_id, by=Visitor("visitor"))
    assert queued.ok and queued.position == 1, queued.message


RESULTS_DAMAGE = {
    "garbage JSON": b"{not json",
    "not UTF-8": b"\xff\xfe\x00",
    "a JSON list": b"[]",
    "no model": b'{"benchmarks": {}}',
    "benchmarks as a list": json.dumps({**result("org/bad"), "benchmarks": [1]}).encode(),
    "nested JSON": NESTED,
    "oversized": OVERSIZED_RESULTS,
}


@pytest.mark.parametrize("data", list(RESULTS_DAMAGE.values()), ids=list(RESULTS_DAMAGE))
def test_a_damaged_results_file_is_listed_and_the_board_keeps_the_rest(store, data):
    write_result(store, result("org/good"))
    store.write_bytes("results/org/bad/0123456789ab_auto.json", data)
    board = rebuild_leaderboard(store, schema())
    assert list(board["model"]) == ["org/good"]
    assert [p for p, _ in store.damaged.listing()] == ["results/org/bad/0123456789ab_auto.json"]
    assert [r["model"] for r in load_results(store)] == ["org/good"]
    assert list(load_board(store, schema())["model"]) == ["org/good"]
    store.write_bytes(LEADERBOARD_PATH, b"garbage")  # the board must be rebuilt, reading the damaged file again
    assert list(load_board(store, schema())["model"]) == ["org/good"]
    assert read_board(store, schema()) is not None and board_is_current(store)


def test_the_queue_tab_api_lists_damaged_files_and_keeps_answering(client, store):
    queue.save(store, Request(**GOOD.to_dict()))
    store.write_bytes(BAD.path, b"{not json")
    store.write_bytes("results/org/bad/0123456789ab_auto.json", b"[]")
    tables = client.predict(api_name="/queue")
    assert [row[0] for row in tables[0]["data"]] == ["1"]  # the good request is pending, first in line
    listed = client.predict(api_name="/damaged_files")
    assert [d["path"] for d in listed] == [BAD.path, "results/org/bad/0123456789ab_auto.json"]
    assert "JSONDecodeError" in listed[0]["reason"] and "not a results object" in listed[1]["reason"]
    assert all("not json" not in d["reason"] for d in listed)  # reasons, never content


def test_nested_and_oversized_files_are_listed_with_a_reason_never_their_content(store, settings, monkeypatch):
    """A board that must be rebuilt, a tick and the queue go on beside a nested request and an oversized results
    file; the ledger names both with the reason only."""
    finished = Request(**{**GOOD.to_dict(), "status": queue.FINISHED})
    queue.save(store, finished)
    write_result(store, result("org/good", sha=GOOD.revision))
    store.write_bytes(BAD.path, NESTED)
    store.write_bytes("results/org/big/0123456789ab_auto.json", OVERSIZED_RESULTS)
    store.write_bytes(LEADERBOARD_PATH, b"garbage")
    assert list(load_board(store, schema())["model"]) == ["org/good"]
    monkeypatch.setattr(scheduler, "run_request", lambda *args, **kwargs: pytest.fail("nothing is PENDING"))
    assert scheduler.tick(settings, store).error is None and board_is_current(store)
    listed = dict(store.damaged.listing())
    assert list(listed) == [BAD.path, "results/org/big/0123456789ab_auto.json"]
    assert "nested deeper than 64 levels" in listed[BAD.path]
    assert "over the 8388608-byte limit" in listed["results/org/big/0123456789ab_auto.json"]
    assert all("[[" not in reason and "xxxx" not in reason and len(reason) < 240 for reason in listed.values())


def test_a_file_over_the_limit_is_refused_by_its_size_without_being_read(store):
    queue.save(store, Request(**GOOD.to_dict()))
    huge = store.root / BAD.path
    huge.parent.mkdir(parents=True, exist_ok=True)
    with open(huge, "wb") as handle:
        handle.truncate(64 * 1024 ** 3)  # 64 GiB, sparse: reading it would exhaust the memory
    assert [r.path for r in queue.all_requests(store)] == [GOOD.path]
    with pytest.raises(DamagedFile, match=f"{64 * 1024 ** 3} bytes, over the {MAX_JSON_BYTES}-byte limit"):
        queue.load(store, BAD.path)
    assert read_results(store, "results/org/good/0123456789ab_auto.json") is None  # absent, not damaged
    assert [p for p, _ in store.damaged.listing()] == [BAD.path]


def test_a_path_leaving_the_store_is_refused_and_never_listed_as_damaged(store):
    store.write_bytes("results/0123456789ab_auto.json", b"{not json")  # what "results/org/../..." would name
    for _ in range(5):
        with pytest.raises(PathRefused):
            read_results(store, "results/org/../0123456789ab_auto.json")
        with pytest.raises(PathRefused):
            queue.load(store, "requests/org/../0123456789ab_auto.json")
    assert store.damaged.listing() == []


def test_the_local_store_never_follows_a_symbolic_link_out_of_it(store, tmp_path):
    queue.save(store, Request(**GOOD.to_dict()))
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "0123456789ab_auto.json"
    record = json.dumps({**BAD.to_dict(), "model": "org/evil", "revision": "0123456789ab" + "0" * 28}).encode()
    secret.write_bytes(record)  # a readable request: it would join the queue if the store followed the link
    link = store.root / "requests/org/evil/0123456789ab_auto.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(secret)
    (store.root / "requests/org/linked").symlink_to(outside, target_is_directory=True)
    (store.root / "results").mkdir()
    (store.root / "results/org").symlink_to(outside, target_is_directory=True)

    assert [r.path for r in queue.all_requests(store)] == [GOOD.path]
    assert store.list("requests") == [GOOD.path] and store.list("results") == []
    assert queue.load(store, "requests/org/evil/0123456789ab_auto.json") is None
    assert store.read_bytes("requests/org/linked/0123456789ab_auto.json") is None
    assert read_results(store, "results/org/0123456789ab_auto.json") is None
    assert store.damaged.listing() == []
    with pytest.raises(PathRefused):  # a write through a linked folder would land outside
        store.write_bytes("requests/org/linked/new/0123456789ab_auto.json", b"{}")
    with pytest.raises(PathRefused):
        store.delete("results/org/0123456789ab_auto.json")
    store.write_bytes("requests/org/evil/0123456789ab_auto.json", b"{}")  # replaces the link, not its target
    assert not link.is_symlink() and link.read_bytes() == b"{}"
    assert secret.read_bytes() == record and sorted(p.name for p in outside.iterdir()) == [secret.name]


def test_explorer_details_with_nested_json_metadata_are_listed_not_raised(store):
    table = pa.table({"item": ["q1"]}).replace_schema_metadata({b"pandas": NESTED})  # parsed by pandas on read
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    store.write_bytes(details_path(GOOD.key, "cure"), buffer.getvalue())
    with pytest.raises(DetailsError, match="could not be read"):
        DetailsCache(store).get(GOOD.key, "cure")
    assert [p for p, _ in store.damaged.listing()] == [details_path(GOOD.key, "cure")]


def test_nested_json_in_the_board_files_metadata_makes_it_rebuilt(store, settings):
    write_result(store, result("org/good"))
    rebuild_leaderboard(store, schema())
    assert board_is_current(store)
    table = pq.read_table(io.BytesIO(store.read_bytes(LEADERBOARD_PATH)))
    for damage in ({b"results": NESTED}, {b"results": b"[]", b"hidden": NESTED}, {b"results": b'{"a": 1}'}):
        buffer = io.BytesIO()
        pq.write_table(table.replace_schema_metadata({**table.schema.metadata, **damage}), buffer)
        store.write_bytes(LEADERBOARD_PATH, buffer.getvalue())
        assert not board_is_current(store) and read_board(store, schema()) is None
        assert publishing.rebuild_board(settings, store, only_if_stale=True) and board_is_current(store)
