"""One damaged file never stops the service: every reader of the store skips it, logs it once and lists it.

Each kind of damage is written over a request (or results) file next to good ones; the queue, the scheduler's tick,
the standalone worker loop, submission, the board and the Queue tab's API then go on as if it were not there, and
the file is listed (path and reason) in the store's ledger of damaged files.
"""
from __future__ import annotations

import json
import logging
import threading

import pytest

from leaderboard import request_queue as queue
from leaderboard import scheduler
from leaderboard.board_file import load_board, load_results, rebuild_leaderboard
from leaderboard.columns import schema
from leaderboard.identity import Visitor
from leaderboard.request_actions import act
from leaderboard.request_queue import Request
from leaderboard.store import DamagedFile
from leaderboard.submission import submit
from tests.hub_cache import fake_sha
from tests.results_files import result, write_result

GOOD = Request(model="org/good", revision=fake_sha("good"), submitted_time="2026-11-22T00:00:00+00:00")
BAD = Request(model="org/bad", revision=fake_sha("bad"), submitted_time="2026-11-22T00:00:01+00:00")


def _record(**changes) -> bytes:
    data = {**BAD.to_dict(), **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...}).encode()


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
                        or scheduler.TickReport(request=request.path, status=queue.FINISHED))
    report = scheduler.tick(settings, store)
    assert report.error is None and report.request == GOOD.path and ran == [GOOD.path]
    stop = threading.Event()
    assert scheduler.run_worker_loop(settings.with_(scheduler_interval=0.01), store, stop, max_ticks=3) == 0
    assert [p for p, _ in store.damaged.listing()] == [BAD.path]


def test_submission_works_beside_it_and_refuses_clearly_over_it(store, settings, tiny_llava, tiny_llama):
    bad = Request(model=tiny_llava.repo_id, revision=tiny_llava.sha)
    store.write_bytes(bad.path, b"\x00\xff garbage")
    refused = submit(settings, store, tiny_llava.repo_id, by=Visitor("visitor"))
    assert not refused.ok and "damaged" in refused.message and "internal error" not in refused.message
    assert store.read_bytes(bad.path) == b"\x00\xff garbage"  # nothing changed
    queued = submit(settings, store, tiny_llama.repo_id, by=Visitor("visitor"))
    assert queued.ok and queued.position == 1, queued.message


RESULTS_DAMAGE = {
    "garbage JSON": b"{not json",
    "not UTF-8": b"\xff\xfe\x00",
    "a JSON list": b"[]",
    "no model": b'{"benchmarks": {}}',
    "benchmarks as a list": json.dumps({**result("org/bad"), "benchmarks": [1]}).encode(),
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
