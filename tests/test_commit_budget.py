"""The Hub store's commit economy, over real HTTP against the loopback Hub (tests/hub_server.py): one commit per
transaction (reads inside see the buffered writes; an exception commits nothing; a lost race is run again), one
commit budget per repo over a rolling window for every writer (read from the repo's history), 429 answers waited out
(Retry-After), never failing a write, and, for what a person waits on, a refusal with the minutes to wait instead."""
from __future__ import annotations

import json
import logging
import threading
import time
import traceback
from datetime import timedelta

import pytest

from leaderboard.settings import Settings
from leaderboard.store import StoreBusy, StoreConflict, open_store
from leaderboard.store.hub import DEFAULT_RETRY_AFTER, MAX_RETRY_AFTER, TRANSACTION_MARK, HubStore
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request
from tests.conftest import HUB_ORG
from tests.hub_cache import fake_sha

ORG = HUB_ORG


class FakeTime:
    """A wall clock (epoch seconds, starting now) that only moves when slept on; the sleeps are recorded."""

    def __init__(self):
        self.now, self.sleeps = time.time(), []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def store_of(api, repos, **kw) -> HubStore:
    return HubStore(api, *repos, **kw)


def running_requests(store: HubStore, n: int) -> list[Request]:
    """n RUNNING requests whose leases expired an hour ago, written in one commit."""
    expired = queue.iso(queue.now() - timedelta(hours=1))
    made = [Request(model=f"org/model-{i}", revision=fake_sha(f"r{i}"), status=queue.RUNNING, lease_owner="gone",
                    lease_expires=expired, submitted_time=f"2026-11-22T00:00:0{i}+00:00") for i in range(n)]
    store.write_many({r.path: json.dumps(r.to_dict()).encode() for r in made})
    return made


def commit_times(hub, repo: str) -> list[float]:
    """When each commit after the initial one landed, oldest first (walking the history from the head)."""
    times, commit = [], hub.repos.snapshot("dataset", repo)
    while commit.parent is not None:
        times.append(commit.at)
        commit = hub.repos.snapshot("dataset", repo, commit.parent)
    return sorted(times)


# ------------------------------------------------------------------------------------------------ one commit a step

def test_a_queue_step_changing_three_requests_is_one_commit(api, hub, repos):
    store = store_of(api, repos)
    made = running_requests(store, 3)
    before = hub.commits[repos[1]]
    changed = queue.recover(store, max_attempts=3)
    assert sorted(r.path for r in changed) == sorted(r.path for r in made)
    assert hub.commits[repos[1]] - before == 1  # was 3: one commit per request
    stored = queue.all_requests(store)
    assert [(r.status, r.attempts) for r in stored] == [(queue.PENDING, 1)] * 3

    before = hub.commits[repos[1]]
    claimed = queue.claim(store, "w1", 60)
    assert claimed.path == made[0].path and hub.commits[repos[1]] - before == 1
    assert hub.commits[repos[0]] == 0 and hub.repos.rejected[repos[1]] == 0


def test_reads_inside_a_transaction_see_its_buffered_writes(api, hub, repos):
    store = store_of(api, repos)
    store.write_many({"requests/a/b/keep.json": b"1", "requests/a/b/gone.json": b"2"})
    before = hub.commits[repos[1]]
    with store.lock():
        store.write_bytes("requests/a/b/keep.json", b"changed")
        store.write_json("requests/a/b/new.json", {"n": 1})
        store.delete("requests/a/b/gone.json")
        store.delete("requests/a/b/never-there.json")  # a delete of what is absent is dropped, as outside lock()
        assert store.read_bytes("requests/a/b/keep.json") == b"changed"
        assert store.read_json("requests/a/b/new.json") == {"n": 1}
        assert store.read_bytes("requests/a/b/gone.json") is None
        assert store.list("requests", suffix=".json") == ["requests/a/b/keep.json", "requests/a/b/new.json"]
        store.write_json("results/a/b/run.json", {"score": 1})  # the results repo: straight out
        assert hub.commits[repos[0]] == 1
        assert hub.commits[repos[1]] == before and hub.files(repos[1])["requests/a/b/keep.json"] == b"1"
    assert hub.commits[repos[1]] - before == 1
    assert set(hub.files(repos[1])) == {".gitattributes", TRANSACTION_MARK, "requests/a/b/keep.json",
                                        "requests/a/b/new.json"}
    assert hub.files(repos[1])["requests/a/b/keep.json"] == b"changed"


def test_an_exception_inside_lock_commits_nothing(api, hub, repos):
    store = store_of(api, repos)
    store.write_bytes("requests/a/b/c.json", b"1")
    before = hub.commits[repos[1]]
    with pytest.raises(RuntimeError):
        with store.lock():
            store.write_bytes("requests/a/b/c.json", b"2")
            store.delete("requests/a/b/c.json")
            raise RuntimeError("the step failed")
    with store.lock():  # a transaction that only reads
        assert store.read_bytes("requests/a/b/c.json") == b"1"
    assert hub.commits[repos[1]] == before and store.read_bytes("requests/a/b/c.json") == b"1"


def test_two_stores_racing_on_one_request_lose_no_update(api, hub, repos):
    """B's transaction lands while A's is open: A's commit is refused (412), transact runs A's step again on the
    new head, and both changes are there."""
    a, b = store_of(api, repos), store_of(api, repos, create=False)
    (request,) = running_requests(a, 1)
    runs = []

    def add_note(store, note, meanwhile=None):
        current = queue.load(store, request.path)
        runs.append(note)
        if meanwhile:
            meanwhile()
        current.notes = current.notes + [note]
        queue.save(store, current)

    queue.transact(a, lambda: add_note(a, "from A", meanwhile=None if runs else
                                       lambda: queue.transact(b, lambda: add_note(b, "from B"))))
    assert runs == ["from A", "from B", "from A"]
    assert queue.load(a, request.path).notes == ["from B", "from A"]
    assert hub.repos.rejected[repos[1]] == 1 and hub.commits[repos[1]] == 1 + 2


def test_threads_racing_with_their_own_stores_count_every_increment(api, hub, repos):
    """Two writers often read the same counter and write the same next value: the client would skip the second
    commit as empty (without checking its parent) but for the transaction's mark, and an increment would be lost."""
    store_of(api, repos).write_json("requests/a/b/counter.json", {"n": 0})
    start, errors = threading.Barrier(2), []

    def bump(times: int) -> None:
        store = store_of(api, repos, create=False)
        start.wait()
        try:
            for _ in range(times):
                def step():
                    counter = store.read_json("requests/a/b/counter.json")
                    store.write_json("requests/a/b/counter.json", {"n": counter["n"] + 1})
                queue.transact(store, step, attempts=50)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=bump, args=(5,)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert store_of(api, repos, create=False).read_json("requests/a/b/counter.json") == {"n": 10}
    assert hub.commits[repos[1]] == 1 + 10  # one commit per transaction that won


# ------------------------------------------------------------------------------------------------ the budget

def test_the_budget_keeps_commits_within_the_window(api, hub, repos):
    """The server allows 3 commits a second (more: 429); the store, with the same budget, never meets a 429."""
    hub.set_commit_budget(3, window_seconds=1.0, repo_id=repos[1])
    store = store_of(api, repos, commit_budget=3, budget_window=1.0)
    started = time.monotonic()
    for n in range(5):
        store.write_json(f"requests/a/b/{n}.json", {"n": n})
        assert store.commits_in_window(repos[1]) <= 3
    assert time.monotonic() - started >= 0.9  # the 4th waited for the 1st to leave the window
    assert hub.commits[repos[1]] == 5 and hub.repos.throttled[repos[1]] == 0
    landed = commit_times(hub, repos[1])
    assert all(later - earlier >= 0.95 for earlier, later in zip(landed, landed[3:]))  # never 4 within a second
    assert {f"requests/a/b/{n}.json" for n in range(5)} <= set(hub.files(repos[1]))


def test_the_budget_waits_for_the_oldest_commit_to_leave_the_window(api, hub, repos, caplog, token):
    fake = FakeTime()
    store = store_of(api, repos, commit_budget=3, budget_window=100.0, clock=fake.clock, sleep=fake.sleep)
    with caplog.at_level(logging.WARNING, logger="leaderboard.store.hub"):
        for n in range(5):
            store.write_bytes("results/a.json", str(n).encode())
    assert fake.sleeps == [100.0] and hub.commits[repos[0]] == 5  # one wait, then all landed
    assert store.commits_in_window(repos[0]) == 2 and store.commits_in_window(repos[1]) == 0
    warnings = [r.getMessage() for r in caplog.records if "commit budget" in r.getMessage()]
    assert len(warnings) == 1 and "100.0 s" in warnings[0] and token not in caplog.text


def history_reads(hub, repo: str, start: int) -> int:
    return sum(1 for _, path in hub.requests[start:] if path.endswith(f"/{repo}/commits/main"))


def test_one_budget_for_every_writer_of_a_repo(api, hub, repos):
    """Three commits by one store are counted by another (from the repo's history): with a budget of 4, the other
    has room for one more; then a background write waits and a write that must not wait is refused, unwritten."""
    first = store_of(api, repos, commit_budget=4)
    start = len(hub.requests)
    for n in range(3):
        first.write_bytes(f"requests/a/b/{n}.json", b"1")
    assert history_reads(hub, repos[1], start) == 1  # read once; its own commits kept it exact
    fake = FakeTime()
    second = store_of(api, repos, create=False, commit_budget=4, clock=fake.clock, sleep=fake.sleep)
    second.write_bytes("requests/a/b/3.json", b"1")  # 3 of 4 used: room for one
    assert second.commits_in_window(repos[1]) == 4 and fake.sleeps == []
    before = hub.files(repos[1])
    with pytest.raises(StoreBusy) as busy, second.without_waiting():
        second.write_bytes("requests/a/b/4.json", b"1")
    assert busy.value.minutes == 60 and str(busy.value) == "the leaderboard is busy; try again in 60 minutes"
    assert hub.files(repos[1]) == before and fake.sleeps == []  # nothing written, nobody slept
    second.write_bytes("requests/a/b/4.json", b"1")  # background work waits for the oldest to leave the hour
    assert len(fake.sleeps) == 1 and 3590 < fake.sleeps[0] <= 3600 and "requests/a/b/4.json" in hub.files(repos[1])


def test_a_writer_that_must_not_wait_keeps_room_for_background_work(api, hub, repos):
    fake = FakeTime()
    store = store_of(api, repos, commit_budget=10, clock=fake.clock, sleep=fake.sleep)
    with store.without_waiting():
        for n in range(9):
            store.write_bytes(f"requests/a/b/{n}.json", b"1")
        with pytest.raises(StoreBusy):
            store.write_bytes("requests/a/b/9.json", b"1")  # the last one is kept for background work
    store.write_bytes("results/run.json", b"1")  # another repo: its own budget
    store.write_bytes("requests/a/b/9.json", b"1")  # background: the reserve
    assert fake.sleeps == [] and hub.commits[repos[1]] == 10


def test_a_429_inside_without_waiting_is_a_busy_refusal(api, hub, repos):
    fake = FakeTime()
    store = store_of(api, repos, sleep=fake.sleep)
    hub.fail_next_commit(repos[1], status=429, retry_after=150)
    with pytest.raises(StoreBusy) as busy, store.without_waiting():
        queue.save(store, Request(model="org/m", revision="a" * 40))
    assert busy.value.minutes == 3 and fake.sleeps == [] and hub.commits[repos[1]] == 0


def test_a_busy_submission_is_refused_and_nothing_is_written(api, hub, repos, tiny_llava, tmp_path):
    from leaderboard.submissions.checks import submit
    from leaderboard.submissions.identity import Visitor

    settings = Settings.from_env({}, home=tmp_path, store_backend="hub", results_repo=repos[0],
                                 requests_repo=repos[1], allow_local_models=True,
                                 local_models_root=tiny_llava.folder.parent, commit_budget=2)
    store = open_store(settings, api=api)
    store.write_bytes("requests/a/b/other.json", b"{}")  # 1 of 2: the reserve of 1 is left to background work
    before = hub.files(repos[1])
    outcome = submit(settings, store, str(tiny_llava.folder), by=Visitor("root", admin=True))
    assert not outcome.ok and "The leaderboard is busy; try again in 60 minutes" in outcome.message, outcome.message
    assert hub.files(repos[1]) == before and queue.all_requests(store) == []


# ------------------------------------------------------------------------------------------------ squash

def test_the_history_is_squashed_past_its_length_with_files_unchanged(api, hub, repos):
    store = store_of(api, repos)
    for n in range(5):
        store.write_bytes(f"requests/a/b/{n}.json", str(n).encode())
    files = hub.files(repos[1])
    assert not store.squash_history(after_commits=6)  # 6 commits: not past 6
    store.write_bytes("requests/a/b/5.json", b"5")
    assert store.squash_history(after_commits=6)
    assert hub.squashes[repos[1]] == 1 and store.commits_on_branch(repos[1]) == 1
    assert {k: v for k, v in hub.files(repos[1]).items() if k != TRANSACTION_MARK} == \
        {k: v for k, v in {**files, "requests/a/b/5.json": b"5"}.items() if k != TRANSACTION_MARK}
    other = store_of(api, repos, create=False)  # another writer still counts the hour's 6 commits
    other.write_bytes("requests/a/b/6.json", b"6")
    assert other.commits_in_window(repos[1]) == 7
    queue.transact(store, lambda: store.write_bytes("requests/a/b/7.json", b"7"))  # the squasher goes on
    assert store.read_bytes("requests/a/b/6.json") == b"6" and store.read_bytes("requests/a/b/7.json") == b"7"


def test_no_squash_while_a_transaction_is_open(api, hub, repos):
    store = store_of(api, repos)
    for n in range(3):
        store.write_bytes(f"requests/a/b/{n}.json", b"1")
    with store.lock():
        assert not store.squash_history(after_commits=1)
    assert hub.squashes[repos[1]] == 0 and store.squash_history(after_commits=1)


def test_a_read_outlives_squashes_during_it_and_during_its_refresh(api, hub, repos, monkeypatch):
    """Ten squashes one after another, each landing just before a fetch of the reader (its listing's prefetch, its
    read, the refresh after a failed read): the read still answers. CI once saw a claimer's read end on a squash that
    met the refresh too."""
    writer = store_of(api, repos)
    made = [Request(model=f"org/model-{i}", revision=fake_sha(f"q{i}"), submitted_time=f"2026-11-22T00:00:0{i}+00:00")
            for i in range(3)]
    writer.write_many({r.path: json.dumps(r.to_dict()).encode() for r in made})
    reader = store_of(api, repos, create=False)
    reader.refresh()
    fetch, squashed = reader.pictures.calls.fetch, [0]

    def squash_first(*args, **kwargs):
        if squashed[0] < 10:
            squashed[0] += 1
            assert writer.squash_history(after_commits=0)
        return fetch(*args, **kwargs)

    monkeypatch.setattr(reader.pictures.calls, "fetch", squash_first)
    assert sorted(r.path for r in queue.all_requests(reader)) == sorted(r.path for r in made)
    assert squashed[0] == 10 and hub.squashes[repos[1]] == 10


@pytest.mark.slow  # seconds of racing claimers
def test_a_squash_during_claims_loses_nothing(api, hub, repos):
    """Four claimers, each with its own store, take 24 requests while the history is squashed again and again:
    each request is claimed exactly once and every claim is on the final files."""
    setup = store_of(api, repos)
    made = [Request(model=f"org/model-{i}", revision=fake_sha(f"s{i}"), submitted_time=f"2026-11-22T00:00:{i:02d}+00:00")
            for i in range(24)]
    setup.write_many({r.path: json.dumps(r.to_dict()).encode() for r in made})
    got, errors, done = [], [], threading.Event()
    lock = threading.Lock()

    def claimer(name: str) -> None:
        store = store_of(api, repos, create=False)
        try:
            while True:
                store.refresh()
                request = queue.claim(store, name, 600)
                if request is None:
                    if not any(r.status == queue.PENDING for r in queue.all_requests(store)):
                        return
                    continue
                with lock:
                    got.append((request.path, name))
                seen, until = hub.squashes[repos[1]], time.monotonic() + 2
                while hub.squashes[repos[1]] == seen and time.monotonic() < until:  # let a squash land between
                    time.sleep(0.01)                                                # claims, whatever the load
        except BaseException:  # pragma: no cover - reported below, with where it was raised
            errors.append(traceback.format_exc())

    def squasher() -> None:
        store = store_of(api, repos, create=False)
        while not done.is_set():
            store.refresh()
            store.squash_history(after_commits=2)
            time.sleep(0.02)

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(4)]
    squashing = threading.Thread(target=squasher)
    squashing.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    done.set()
    squashing.join(30)
    assert not errors
    assert sorted(path for path, _ in got) == sorted(r.path for r in made)  # each exactly once, none lost
    final = store_of(api, repos, create=False)
    stored = {r.path: r for r in queue.all_requests(final)}
    assert all(stored[path].status == queue.RUNNING and stored[path].lease_owner == name for path, name in got)
    assert hub.squashes[repos[1]] >= 2


def test_open_store_passes_the_commit_budget(api, hub, repos, tmp_path):
    settings = Settings.from_env({"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": repos[0],
                                  "LEADERBOARD_REQUESTS_REPO": repos[1], "LEADERBOARD_COMMIT_BUDGET": "7"},
                                 home=tmp_path)
    store = open_store(settings, api=api)
    assert isinstance(store, HubStore) and store.commit_budget == 7 and store.budget_window == 3600.0


# ------------------------------------------------------------------------------------------------ 429

def test_a_429_is_waited_out_and_the_write_lands(api, hub, repos, caplog, token):
    store = store_of(api, repos)
    hub.fail_next_commit(repos[1], status=429, retry_after=1)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="leaderboard.store.hub"):
        store.write_json("requests/a/b/c.json", {"n": 1})
    assert time.monotonic() - started >= 0.95
    assert hub.repos.throttled[repos[1]] == 1 and hub.commits[repos[1]] == 1
    assert store.read_json("requests/a/b/c.json") == {"n": 1}
    assert "429" in caplog.text and token not in caplog.text


def test_a_429_on_a_transaction_commit_retries_on_the_same_parent(api, hub, repos):
    fake = FakeTime()
    store = store_of(api, repos, sleep=fake.sleep)
    hub.fail_next_commit(repos[1], status=429, retry_after=3)
    with store.lock():
        store.write_bytes("requests/a/b/c.json", b"1")
        store.write_bytes("requests/a/b/d.json", b"2")
    assert fake.sleeps == [3.0] and hub.commits[repos[1]] == 1 and hub.repos.rejected[repos[1]] == 0


def test_a_429_then_a_moved_parent_is_a_conflict_and_the_step_runs_again(api, hub, repos):
    other = store_of(api, repos, create=False)
    waits = []

    def sleep(seconds):  # while this store waits out the 429, another writer commits
        waits.append(seconds)
        other.write_bytes("requests/a/b/other.json", b"x")

    store = store_of(api, repos, sleep=sleep)
    runs = []

    def step():
        runs.append(1)
        if len(runs) == 1:
            hub.fail_next_commit(repos[1], status=429, retry_after=2)
        store.write_bytes("requests/a/b/mine.json", b"y")

    queue.transact(store, step)
    assert waits == [2.0] and len(runs) == 2 and hub.repos.rejected[repos[1]] == 1
    assert {"requests/a/b/mine.json", "requests/a/b/other.json"} <= set(hub.files(repos[1]))
    assert hub.commits[repos[1]] == 2


@pytest.mark.parametrize("retry_after, waited", [(None, DEFAULT_RETRY_AFTER), (7200, MAX_RETRY_AFTER)])
def test_a_429_without_or_with_a_huge_retry_after_waits_a_sane_time(api, hub, repos, retry_after, waited):
    fake = FakeTime()
    store = store_of(api, repos, sleep=fake.sleep)
    hub.fail_next_commit(repos[0], status=429, retry_after=retry_after)
    store.write_bytes("results/a.json", b"1")
    assert fake.sleeps == [waited] and hub.commits[repos[0]] == 1


def test_a_transaction_conflict_is_still_a_store_conflict(api, hub, repos):
    store, other = store_of(api, repos), store_of(api, repos, create=False)
    with pytest.raises(StoreConflict):
        with store.lock():
            other.write_bytes("requests/a/b/c.json", b"theirs")
            store.write_bytes("requests/a/b/c.json", b"mine")
    assert hub.files(repos[1])["requests/a/b/c.json"] == b"theirs"


def test_a_queue_action_when_busy_changes_nothing(api, hub, repos):
    from leaderboard.submissions.actions import act
    from leaderboard.submissions.identity import Visitor

    store = store_of(api, repos, commit_budget=1)
    request = Request(model="org/m", revision="b" * 40, submitter="ada")
    queue.save(store, request)  # the one commit of the hour
    before = hub.files(repos[1])
    done, message = act(store, request.path, "cancel", Visitor("ada"))
    assert not done and message.startswith("The leaderboard is busy; try again in 60 minutes") and \
        "Nothing was changed" in message
    assert hub.files(repos[1]) == before and queue.load(store, request.path).status == queue.PENDING
