"""The Hub store against an in-process fake of the HfApi calls it makes (tests/fake_hub.py), which honours
parent_commit. The queue, the board file and open_store run for real on top of it."""
from __future__ import annotations

import json
import threading
import traceback

import pytest

from leaderboard.board.columns import schema
from leaderboard.board.file import LEADERBOARD_PATH, load_board, rebuild_leaderboard
from leaderboard.settings import Settings
from leaderboard.store import MAX_JSON_BYTES, DamagedFile, StoreConflict, open_store
from leaderboard.store.hub import HubStore, HubStoreError
from leaderboard.submissions import records as queue
from tests import test_request_queue as local_queue_tests
from tests.fake_hub import FakeHfApi
from tests.results_files import SHA_B, result, write_result

RESULTS, REQUESTS = "lb/results", "lb/requests"
TOKEN = "hf_" + "S3cr3tT0kenForTheFakeHub0123456789"


@pytest.fixture
def api(tmp_path):
    return FakeHfApi(token=TOKEN, root=tmp_path / "fake-hub")


@pytest.fixture
def hub(api):
    return HubStore(api, RESULTS, REQUESTS)


# ------------------------------------------------------------------------------------------------ round trips

def test_read_write_list_delete_round_trip(hub, api):
    assert hub.read_bytes("results/org/m/abc_auto.json") is None
    assert hub.read_json("requests/org/m/abc_auto.json") is None
    assert hub.list("requests") == [] and hub.list("results", suffix=".json") == []

    hub.write_json("requests/org/m/abc_auto.json", {"b": 1, "a": [1, 2]})
    hub.write_bytes("results/org/m/abc_auto.json", b'{"model": "org/m"}')
    hub.write_bytes("requests/org/m/.hidden.json", b"{}")
    hub.write_bytes("requests/org/m/notes.txt", b"x")

    # the same JSON formatting as the local store
    assert api.files(REQUESTS)["requests/org/m/abc_auto.json"] == json.dumps(
        {"b": 1, "a": [1, 2]}, indent=2, sort_keys=True).encode()
    assert hub.read_json("requests/org/m/abc_auto.json") == {"a": [1, 2], "b": 1}
    assert hub.read_bytes("results/org/m/abc_auto.json") == b'{"model": "org/m"}'
    # requests/ in the requests repo, everything else in the results repo
    assert "requests/org/m/abc_auto.json" not in api.files(RESULTS)
    assert "results/org/m/abc_auto.json" not in api.files(REQUESTS)
    assert hub.list("requests") == ["requests/org/m/abc_auto.json", "requests/org/m/notes.txt"]
    assert hub.list("requests", suffix=".json") == ["requests/org/m/abc_auto.json"]
    assert hub.list("requests/org") == hub.list("requests")
    assert hub.list("requests/or") == []  # a folder, not a string prefix
    assert hub.list("results") == ["results/org/m/abc_auto.json"]

    hub.write_bytes("results/org/m/abc_auto.json", b"v2")  # overwrite
    assert hub.read_bytes("results/org/m/abc_auto.json") == b"v2"
    hub.delete("results/org/m/abc_auto.json")
    assert hub.read_bytes("results/org/m/abc_auto.json") is None and hub.list("results") == []
    commits = dict(api.commits)
    hub.delete("results/org/m/abc_auto.json")  # absent: no error, no commit
    assert dict(api.commits) == commits


def test_write_many_makes_one_commit_per_repo(hub, api):
    files = {f"details/org/m/abc_auto/bench{i}.parquet": bytes([i]) * 10 for i in range(3)}
    files["results/org/m/abc_auto.json"] = b"{}"
    files["requests/org/m/abc_auto.json"] = b'{"status": "FINISHED"}'
    before = dict(api.commits)
    hub.write_many(files)
    assert api.commits[RESULTS] - before.get(RESULTS, 0) == 1
    assert api.commits[REQUESTS] - before.get(REQUESTS, 0) == 1
    for path, data in files.items():
        assert hub.read_bytes(path) == data
    assert hub.list("details", suffix=".parquet") == sorted(p for p in files if p.startswith("details/"))
    hub.write_many({})  # nothing to write: no commit
    assert api.commits[RESULTS] - before.get(RESULTS, 0) == 1


def test_one_repo_for_everything_when_no_requests_repo(api):
    store = HubStore(api, RESULTS)
    store.write_many({"requests/a/b/c.json": b"1", "results/a/b/c.json": b"2"})
    assert api.commits[RESULTS] == 1 and set(api.files(RESULTS)) >= {"requests/a/b/c.json", "results/a/b/c.json"}
    with store.lock():
        assert store.read_bytes("requests/a/b/c.json") == b"1"
        store.write_bytes("requests/a/b/c.json", b"3")
    assert store.read_bytes("requests/a/b/c.json") == b"3"


def test_paths_must_stay_inside(hub, api):
    for bad in ["../escape.json", "/abs.json", "a/../../b", ""]:
        with pytest.raises(ValueError):
            hub.write_bytes(bad, b"x")
        with pytest.raises(ValueError):
            hub.read_bytes(bad)
    assert api.calls["create_commit"] == 0 and api.calls["hf_hub_download"] == 0


def test_a_missing_repo_is_an_error_not_an_empty_store(api):
    store = HubStore(api, "lb/none", create=False)
    with pytest.raises(HubStoreError, match="lb/none"):
        store.read_bytes("results/a.json")
    with pytest.raises(HubStoreError, match="lb/none"):
        store.list("results")


# ------------------------------------------------------------------------------------------------ lock()

def test_a_write_with_a_stale_parent_raises_store_conflict(hub, api):
    hub.write_json("requests/org/m/abc_auto.json", {"status": "PENDING"})
    other = HubStore(api, RESULTS, REQUESTS)
    with pytest.raises(StoreConflict):
        with hub.lock():
            assert hub.read_json("requests/org/m/abc_auto.json") == {"status": "PENDING"}
            other.write_json("requests/org/m/abc_auto.json", {"status": "CANCELLED"})  # another writer got there first
            # reads inside the transaction stay at the commit it started from
            assert hub.read_json("requests/org/m/abc_auto.json") == {"status": "PENDING"}
            assert hub.list("requests") == ["requests/org/m/abc_auto.json"]
            hub.write_json("requests/org/m/abc_auto.json", {"status": "RUNNING"})
    assert api.rejected == 1
    assert hub.read_json("requests/org/m/abc_auto.json") == {"status": "CANCELLED"}  # nothing was overwritten
    with hub.lock():  # the next transaction starts from the new head and succeeds
        hub.write_json("requests/org/m/abc_auto.json", {"status": "RUNNING"})
    assert hub.read_json("requests/org/m/abc_auto.json") == {"status": "RUNNING"}


def test_writes_in_one_transaction_are_one_commit(hub, api):
    hub.write_json("requests/org/m/abc_auto.json", {"n": 0})
    with hub.lock():
        hub.write_json("requests/org/m/abc_auto.json", {"n": 1})
        assert hub.read_json("requests/org/m/abc_auto.json") == {"n": 1}  # reads see our buffered writes
        hub.write_json("requests/org/m/def_auto.json", {"n": 2})
        with hub.lock():  # nested use joins the outer transaction
            hub.delete("requests/org/m/abc_auto.json")
        assert hub.list("requests") == ["requests/org/m/def_auto.json"]
        hub.write_json("results/org/m/def_auto.json", {"n": 3})  # the results repo: straight out
        assert api.commits[REQUESTS] == 1 and api.commits[RESULTS] == 1
    assert api.rejected == 0 and api.commits[REQUESTS] == 2  # the transaction's writes land as one commit
    assert hub.list("requests") == ["requests/org/m/def_auto.json"]
    assert hub.read_json("results/org/m/def_auto.json") == {"n": 3}


def test_transactions_are_per_thread(hub, api):
    """One HubStore shared by threads: a transaction on one thread does not pin another thread's reads."""
    hub.write_json("requests/a/b/c.json", {"v": 1})
    inside, outside_done = threading.Event(), threading.Event()
    seen = {}

    def other_thread():
        inside.wait(5)
        hub.write_json("requests/a/b/c.json", {"v": 2})  # not in a transaction on this thread: no parent
        seen["other"] = hub.read_json("requests/a/b/c.json")
        outside_done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with pytest.raises(StoreConflict):
        with hub.lock():
            inside.set()
            assert outside_done.wait(5)
            seen["mine"] = hub.read_json("requests/a/b/c.json")
            hub.write_json("requests/a/b/c.json", {"v": 3})
    thread.join()
    assert seen == {"other": {"v": 2}, "mine": {"v": 1}}


# ------------------------------------------------------------------------------------------------ the queue

def test_claims_from_several_threads_each_with_its_own_store(api):
    api.commit_latency = 0.01  # the commit round trip: concurrent transactions overlap and some lose the race
    setup = HubStore(api, RESULTS, REQUESTS)
    requests = local_queue_tests._enqueue(setup, 12)
    got: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def claimer(name: str) -> None:
        store = HubStore(api, RESULTS, REQUESTS)
        start.wait()
        try:
            while (request := queue.claim(store, name, 60)) is not None:
                with lock:
                    got.append((request.path, name))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(f"t{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    paths = [path for path, _ in got]
    assert len(paths) == 12 and set(paths) == {r.path for r in requests}  # each claimed exactly once, none lost
    stored = {r.path: r for r in queue.all_requests(setup)}
    assert all(r.status == queue.RUNNING for r in stored.values())
    assert all(stored[path].lease_owner == name for path, name in got)  # no claim was overwritten by another
    assert api.rejected >= 1  # some commits lost the race and their claims were run again


@pytest.mark.parametrize("scenario", [
    "test_claim_takes_the_oldest_pending_and_leases_it",
    "test_two_thread_claimers_never_get_the_same_request",
    "test_heartbeat_extends_only_our_lease",
    "test_expired_lease_returns_to_pending_then_fails_after_max_attempts",
    "test_finish_needs_the_lease_and_release_does_not_count_an_attempt",
    "test_cancel_pending_or_running_only",
    "test_pending_position",
    "test_a_step_that_loses_a_race_is_run_again",
])
def test_queue_protocol_on_the_hub_store(scenario, hub):
    """The queue tests written for the local store, run unchanged on the Hub store (one store shared by threads)."""
    getattr(local_queue_tests, scenario)(hub)


# ------------------------------------------------------------------------------------------------ damaged files

NESTED = b"[" * 100_000 + b"]" * 100_000  # 200 KB of nesting: json.loads raises RecursionError
OVERSIZED = json.dumps({"model": "org/bad", "revision": SHA_B, "notes": ["x" * MAX_JSON_BYTES]}).encode()


@pytest.mark.parametrize("data, reason", [(NESTED, "nested deeper than 64 levels"), (OVERSIZED, "-byte limit")],
                         ids=["nested JSON", "oversized"])
def test_a_nested_or_oversized_request_is_skipped_and_listed_on_the_hub_store(hub, data, reason):
    good = queue.Request(model="org/good", revision=SHA_B)
    queue.save(hub, good)
    bad = f"requests/org/bad/{SHA_B[:12]}_auto.json"
    hub.write_bytes(bad, data)
    assert [r.path for r in queue.all_requests(hub)] == [good.path]
    listed = dict(hub.damaged.listing())
    assert list(listed) == [bad] and reason in listed[bad] and "[[" not in listed[bad]
    assert queue.claim(hub, "w1", lease_seconds=60).path == good.path
    assert queue.claim(hub, "w2", lease_seconds=60) is None
    with hub.lock():  # a file buffered inside a transaction is parsed by the same rules
        hub.write_bytes(f"requests/org/bad/{'a' * 12}_auto.json", data)
        with pytest.raises(DamagedFile, match=reason):
            queue.load(hub, f"requests/org/bad/{'a' * 12}_auto.json")


# ------------------------------------------------------------------------------------------------ the board

def test_rebuild_and_load_the_board_on_the_hub_store(hub, api):
    write_result(hub, result("org/alpha", Ro=0.3))
    write_result(hub, result("org/beta", sha=SHA_B, Ro=0.6))
    built = rebuild_leaderboard(hub, schema())
    assert list(built["model"]) == ["org/beta", "org/alpha"]
    assert LEADERBOARD_PATH in api.files(RESULTS)
    loaded = load_board(hub, schema())
    assert list(loaded["model"]) == ["org/beta", "org/alpha"]
    assert loaded["cure_Ro"].tolist() == pytest.approx([0.6, 0.3])


# ------------------------------------------------------------------------------------------------ settings

def test_open_store_builds_a_hub_store_from_settings(tmp_path, api):
    settings = Settings.from_env({"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": RESULTS,
                                  "LEADERBOARD_REQUESTS_REPO": REQUESTS}, home=tmp_path)
    store = open_store(settings, api=api)
    assert isinstance(store, HubStore)
    assert (store.results_repo, store.requests_repo) == (RESULTS, REQUESTS)
    assert api.calls["create_repo"] == 2  # both repos are created (or found)
    store.write_json("requests/a/b/c.json", {"x": 1})
    assert open_store(settings, api=api).read_json("requests/a/b/c.json") == {"x": 1}


def test_open_store_without_an_api_uses_hfapi_with_the_settings_token(tmp_path, monkeypatch):
    import huggingface_hub

    made = []

    class RecordingHfApi(FakeHfApi):
        def __init__(self, token=None):
            super().__init__(token=token, root=tmp_path / "hub")
            made.append(self)

    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingHfApi)
    settings = Settings.from_env({"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": RESULTS,
                                  "HF_TOKEN": TOKEN}, home=tmp_path)
    store = open_store(settings)
    assert isinstance(store, HubStore) and made[0].token == TOKEN and store.requests_repo == RESULTS


def test_hub_settings_without_a_results_repo_are_refused(tmp_path):
    with pytest.raises(ValueError, match="LEADERBOARD_RESULTS_REPO"):
        Settings.from_env({"LEADERBOARD_STORE": "hub"}, home=tmp_path)
    with pytest.raises(ValueError, match="results repo"):
        HubStore(FakeHfApi(), "")


# ------------------------------------------------------------------------------------------------ errors

def _enter_lock(store):
    with store.lock():
        pass


@pytest.mark.parametrize("method, call", [
    ("hf_hub_download", lambda s: s.read_bytes("results/a/b/c.json")),
    ("list_repo_files", lambda s: s.list("requests")),
    ("create_commit", lambda s: s.write_json("requests/a/b/c.json", {"x": 1})),
    ("create_commit", lambda s: s.delete("results/a/b/c.json")),
    ("repo_info", lambda s: _enter_lock(s)),
])
def test_errors_are_clear_and_never_hold_the_token(hub, api, method, call):
    hub.write_bytes("results/a/b/c.json", b"x")
    api.fail_next(method, 500, f"internal error while checking the credentials {TOKEN}")
    with pytest.raises(HubStoreError) as raised:
        call(hub)
    error = raised.value
    assert TOKEN not in str(error) and TOKEN not in repr(error.args)
    assert TOKEN not in "".join(traceback.format_exception(error))  # the original error is not chained
    assert error.status_code == 500 and "500" in str(error) and "internal error" in str(error)


def test_a_failed_repo_creation_is_logged_without_the_token(api, caplog):
    api.fail_next("create_repo", 403, f"token {TOKEN} may not create repos")
    store = HubStore(api, "lb/other", REQUESTS)
    assert TOKEN not in caplog.text and "lb/other" in caplog.text
    assert store.requests_repo == REQUESTS


# ------------------------------------------------------------------------------------------------ races and outages

@pytest.mark.parametrize("claimers", [4, 8])
def test_many_claimers_lose_races_but_never_crash_and_never_share(api, claimers):
    """4 and 8 claimers with a commit round trip: a claim that loses every race answers None ("try next tick"),
    never raises; each request is claimed exactly once."""
    api.commit_latency = 0.01
    setup = HubStore(api, RESULTS, REQUESTS)
    requests = local_queue_tests._enqueue(setup, 16)
    got: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(claimers)

    def claimer(name: str) -> None:
        store = HubStore(api, RESULTS, REQUESTS)
        start.wait()
        try:
            while any(r.status == queue.PENDING for r in queue.all_requests(store)):
                request = queue.claim(store, name, 60)
                if request is not None:
                    with lock:
                        got.append((request.path, name))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(f"t{i}",)) for i in range(claimers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, [traceback.format_exception(e) for e in errors]
    paths = [path for path, _ in got]
    assert sorted(paths) == sorted(r.path for r in requests)  # each exactly once, none lost
    stored = {r.path: r for r in queue.all_requests(setup)}
    assert all(stored[path].lease_owner == name for path, name in got)
    assert api.rejected >= 1


def test_a_claim_that_loses_every_race_is_none_not_an_error(hub, monkeypatch):
    local_queue_tests._enqueue(hub, 1)

    monkeypatch.setattr(queue, "backoff", lambda attempt, **_: 0.0)  # no waits between the lost attempts
    monkeypatch.setattr(hub, "lock", lambda: _raising_lock(StoreConflict("lost")))
    assert queue.claim(hub, "w", 60) is None
    assert queue.recover(hub, max_attempts=3) == []


class _raising_lock:
    def __init__(self, error):
        self.error = error

    def __enter__(self):
        raise self.error

    def __exit__(self, *exc):
        return False


def test_the_worker_loop_survives_store_outages(api, tmp_path, monkeypatch):
    """Hub errors in every part of a tick: the loop logs each and goes on; the request is then run."""
    from leaderboard.running import attempt
    from leaderboard.running import scheduler

    settings = Settings.from_env({}, home=tmp_path / "home", run_scheduler=False, scheduler_interval=0.01)
    store = HubStore(api, RESULTS, REQUESTS)
    local_queue_tests._enqueue(store, 1)
    ran = []
    monkeypatch.setattr(scheduler, "run_request", lambda s, st, request, owner, stop=None: ran.append(request.path)
                        or attempt.TickReport(request=request.path, status=queue.FINISHED))
    for method in ("list_repo_files", "repo_info"):
        api.fail_next(method, 503, "Service Unavailable")
        report = scheduler.tick(settings, store)
        assert report.request is None and "HubStoreError" in report.error and TOKEN not in report.error
    assert ran == []
    api.fail_next("list_repo_files", 503, "Service Unavailable")
    assert scheduler.run_worker_loop(settings, store, threading.Event(), max_ticks=3) == 1
    assert len(ran) == 1  # run exactly once, after the outages
