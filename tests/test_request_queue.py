"""The queue's claim / lease / recover protocol on the real local store, with threads and processes."""
from __future__ import annotations

import multiprocessing
import threading
from datetime import timedelta

from leaderboard.store.local import LocalStore
from leaderboard.submissions import records as queue
from leaderboard.submissions.actions import act
from leaderboard.submissions.identity import Visitor
from leaderboard.submissions.records import Request
from tests.hub_cache import fake_sha


ADMIN = Visitor("admin", admin=True)


def _enqueue(store, n: int) -> list[Request]:
    made = []
    for i in range(n):
        request = Request(model=f"org/model-{i:02d}", revision=fake_sha(str(i)),
                          submitted_time=f"2026-11-22T00:00:{i:02d}+00:00")
        queue.save(store, request)
        made.append(request)
    return made


def test_claim_takes_the_oldest_pending_and_leases_it(store):
    first, second = _enqueue(store, 2)
    claimed = queue.claim(store, "w1", lease_seconds=60)
    assert claimed.path == first.path
    stored = queue.load(store, first.path)
    assert stored.status == queue.RUNNING and stored.lease_owner == "w1"
    assert queue.parse_time(stored.lease_expires) > queue.now() + timedelta(seconds=50)
    assert queue.claim(store, "w2", 60).path == second.path
    assert queue.claim(store, "w3", 60) is None


def test_two_thread_claimers_never_get_the_same_request(store):
    _enqueue(store, 24)
    got: list[str] = []
    lock = threading.Lock()

    def claimer(name: str) -> None:
        while (request := queue.claim(store, name, 60)) is not None:
            with lock:
                got.append(request.path)

    threads = [threading.Thread(target=claimer, args=(f"t{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 24 and len(set(got)) == 24
    assert all(r.status == queue.RUNNING for r in queue.all_requests(store))


def _process_claimer(root: str, name: str, results) -> None:
    store = LocalStore(root)
    while (request := queue.claim(store, name, 60)) is not None:
        results.put(request.path)
    results.put(None)


def test_two_process_claimers_never_get_the_same_request(store):
    _enqueue(store, 20)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_process_claimer, args=(str(store.root), f"p{i}", results)) for i in range(3)]
    for worker in workers:
        worker.start()
    got, finished = [], 0
    while finished < len(workers):
        item = results.get(timeout=60)
        if item is None:
            finished += 1
        else:
            got.append(item)
    for worker in workers:
        worker.join(timeout=30)
    assert len(got) == 20 and len(set(got)) == 20
    owners = {queue.load(store, path).lease_owner for path in got}
    assert owners <= {"p0", "p1", "p2"}


def test_heartbeat_extends_only_our_lease(store):
    _enqueue(store, 1)
    claimed = queue.claim(store, "w1", lease_seconds=5)
    before = queue.parse_time(queue.load(store, claimed.path).lease_expires)
    assert queue.heartbeat(store, claimed.path, "w1", 120, {"benchmark": "cure", "done": 3, "total": 20})
    after = queue.load(store, claimed.path)
    assert queue.parse_time(after.lease_expires) > before + timedelta(seconds=100)
    assert after.progress["done"] == 3
    assert not queue.heartbeat(store, claimed.path, "intruder", 120)


def test_expired_lease_returns_to_pending_then_fails_after_max_attempts(store):
    _enqueue(store, 1)
    path = None
    for attempt in range(1, 4):
        claimed = queue.claim(store, f"w{attempt}", lease_seconds=1)
        path = claimed.path
        assert queue.recover(store, max_attempts=3) == []  # not expired yet
        later = queue.now() + timedelta(seconds=5)
        recovered = queue.recover(store, max_attempts=3, at=later)
        assert [r.path for r in recovered] == [path]
        stored = queue.load(store, path)
        assert stored.attempts == attempt and stored.lease_owner is None
        if attempt < 3:
            assert stored.status == queue.PENDING and "retrying" in stored.error
        else:
            assert stored.status == queue.FAILED and "gave up after 3" in stored.error
    assert queue.claim(store, "w9", 60) is None


def test_idle_claims_and_recoveries_never_take_the_lock(store, monkeypatch):
    """With nothing pending and no lease lapsed, a claim and a recovery only read: idle workers polling the queue
    never queue for the lock a running worker's heartbeat needs (bench/chaos.py's 8 claimers on 2 cores saw a
    starved heartbeat lapse its lease, and its request run twice)."""
    from contextlib import contextmanager

    _enqueue(store, 2)
    held, taken = store.lock, []

    @contextmanager
    def counted():
        taken.append(1)
        with held():
            yield

    monkeypatch.setattr(store, "lock", counted)
    assert queue.claim(store, "w1", 60) is not None and queue.claim_many(store, lambda _r: "w2", 60, 5)
    assert len(taken) == 2
    assert queue.claim(store, "w3", 60) is None and queue.claim_many(store, lambda _r: "w3", 60, 5) == []
    assert queue.recover(store, max_attempts=3) == []
    assert len(taken) == 2  # nothing to take or recover: no lock
    assert len(queue.recover(store, max_attempts=3, at=queue.now() + timedelta(seconds=120))) == 2
    assert len(taken) == 3


def test_a_read_that_fails_outside_the_lock_leaves_the_claim_to_the_locked_step(store, monkeypatch):
    """The read before the lock is a shortcut, never a new way to fail: when it fails (on the Hub store, a history
    squashed twice during it: CI saw test_a_squash_during_claims_loses_nothing end on it), the claim or recovery takes
    the lock and reads again, as it did before the shortcut."""
    from contextlib import contextmanager

    from leaderboard.store import HistoryGone

    _enqueue(store, 2)
    held, listed, inside, taken = store.lock, store.list, [False], []

    @contextmanager
    def tracked():
        with held():
            inside[0] = True
            taken.append(1)
            try:
                yield
            finally:
                inside[0] = False

    def flaky(*args, **kwargs):
        if not inside[0]:  # every read outside the lock fails
            raise HistoryGone("the revision this read was made at was squashed away")
        return listed(*args, **kwargs)

    monkeypatch.setattr(store, "lock", tracked)
    monkeypatch.setattr(store, "list", flaky)
    assert queue.claim(store, "w1", 60) is not None
    assert len(queue.recover(store, max_attempts=3, at=queue.now() + timedelta(seconds=120))) == 1
    assert len(taken) == 2  # both went on to the lock, and did what they came for


def test_finish_needs_the_lease_and_release_does_not_count_an_attempt(store):
    _enqueue(store, 1)
    claimed = queue.claim(store, "w1", 60)
    assert queue.finish(store, claimed.path, "other", queue.FINISHED) is None
    released = queue.finish(store, claimed.path, "w1", "RELEASE", error="shut down")
    assert released.status == queue.PENDING and released.attempts == 0
    again = queue.claim(store, "w2", 60)
    done = queue.finish(store, again.path, "w2", queue.FAILED, error="boom", log_tail="line")
    assert done.status == queue.FAILED and done.error == "boom" and done.log_tail == "line" and done.finished_time


def test_cancel_pending_or_running_only(store):
    first, second = _enqueue(store, 2)
    queue.claim(store, "w1", 60)
    ok, message = act(store, second.path, "cancel", ADMIN)
    assert ok and queue.load(store, second.path).status == queue.CANCELLED
    assert queue.claim(store, "w2", 60) is None
    ok, message = act(store, first.path, "cancel", ADMIN)  # running: stopped, its worker's lease is gone
    stopped = queue.load(store, first.path)
    assert ok and (stopped.status, stopped.lease_owner) == (queue.CANCELLED, None)
    assert queue.heartbeat(store, first.path, "w1", 60) is False  # the worker sees it at its next heartbeat
    ok, message = act(store, first.path, "cancel", ADMIN)
    assert not ok and "Only a PENDING or RUNNING request can be cancelled; this one is CANCELLED" in message
    assert act(store, "requests/none/x/000000000000_auto.json", "cancel", ADMIN) == (False, "No such request.")


def test_pending_position(store):
    requests = _enqueue(store, 3)
    assert [queue.pending_position(store, r) for r in requests] == [1, 2, 3]
    queue.claim(store, "w", 60)
    assert queue.pending_position(store, requests[2]) == 2
    assert queue.pending_position(store, requests[0]) == 0


def test_local_store_refuses_paths_outside_and_writes_atomically(store):
    import pytest

    for bad in ["../escape.json", "/abs.json", "a/../../b"]:
        with pytest.raises(ValueError):
            store.write_bytes(bad, b"x")
    store.write_json("requests/a/b/c.json", {"x": 1})
    assert store.read_json("requests/a/b/c.json") == {"x": 1}
    assert store.list("requests") == ["requests/a/b/c.json"]
    assert not [p for p in store.root.rglob(".tmp-*")]


def test_a_step_that_loses_a_race_is_run_again(store):
    from leaderboard.store import StoreConflict

    _enqueue(store, 1)
    calls = {"writes": 0}
    original = store.write_bytes

    def flaky_write(path, data):  # the first write loses the race, as a Hub commit with a stale parent does
        calls["writes"] += 1
        if calls["writes"] == 1:
            raise StoreConflict("parent moved")
        original(path, data)

    store.write_bytes = flaky_write
    claimed = queue.claim(store, "w1", 60)
    assert claimed is not None and calls["writes"] == 2
    assert queue.load(store, claimed.path).lease_owner == "w1"
