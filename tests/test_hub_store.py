"""The Hub store over real HTTP against the loopback Hub (tests/hub_server.py) with huggingface_hub's own HfApi: the
repos honour parent_commit (a stale one is refused with 412). The queue, the board file and open_store run for real
on top of it."""
from __future__ import annotations

import json
import threading
import time
import traceback
import uuid

import pytest
from huggingface_hub import HfApi

from leaderboard.board.columns import schema
from leaderboard.board.file import LEADERBOARD_PATH, load_board, rebuild_leaderboard
from leaderboard.settings import Settings
from leaderboard.store import MAX_JSON_BYTES, DamagedFile, StoreConflict, open_store
from leaderboard.store.hub import TRANSACTION_MARK, WRITE_BACKOFF_CAP, HubStore, HubStoreError
from leaderboard.submissions import records as queue
from tests import test_request_queue as local_queue_tests
from tests.conftest import HUB_ORG
from tests.results_files import SHA_B, result, write_result

ORG = HUB_ORG


@pytest.fixture
def store(api, repos):
    return HubStore(api, *repos)


def served_since(hub, start: int) -> list[tuple[str, str]]:
    """(method, path) of the requests the loopback Hub served since `start` (an index into hub.requests)."""
    return list(hub.requests[start:])


def failure_met(hub) -> bool:
    """Whether the failure injected with hub.fail_next_request was answered (a leftover one is dropped, so that it
    cannot reach the next test on this module's server)."""
    with hub._lock:
        return hub.failures.take("") is None


def pending_left(store: HubStore) -> bool:
    """Whether the repo, brought to its head, still holds a PENDING request."""
    store.refresh()
    return any(r.status == queue.PENDING for r in queue.all_requests(store))


def claim_until_none_left(store: HubStore, name: str, got: list, lock: threading.Lock) -> None:
    """Claim until a claim answers None and the refreshed listing has no PENDING request left (a None can also be a
    claim that lost every race, and the store's picture only moves on with its own commits, a lost race or a
    refresh)."""
    while True:
        request = queue.claim(store, name, 60)
        if request is not None:
            with lock:
                got.append((request.path, name))
        elif not pending_left(store):
            return


# ------------------------------------------------------------------------------------------------ round trips

def test_read_write_list_delete_round_trip(store, api, hub, repos):
    results, requests = repos
    assert store.read_bytes("results/org/m/abc_auto.json") is None
    assert store.read_json("requests/org/m/abc_auto.json") is None
    assert store.list("requests") == [] and store.list("results", suffix=".json") == []

    store.write_json("requests/org/m/abc_auto.json", {"b": 1, "a": [1, 2]})
    store.write_bytes("results/org/m/abc_auto.json", b'{"model": "org/m"}')
    store.write_bytes("requests/org/m/.hidden.json", b"{}")
    store.write_bytes("requests/org/m/notes.txt", b"x")

    # the same JSON formatting as the local store
    assert hub.files(requests)["requests/org/m/abc_auto.json"] == json.dumps(
        {"b": 1, "a": [1, 2]}, indent=2, sort_keys=True).encode()
    assert store.read_json("requests/org/m/abc_auto.json") == {"a": [1, 2], "b": 1}
    assert store.read_bytes("results/org/m/abc_auto.json") == b'{"model": "org/m"}'
    # requests/ in the requests repo, everything else in the results repo
    assert "requests/org/m/abc_auto.json" not in hub.files(results)
    assert "results/org/m/abc_auto.json" not in hub.files(requests)
    assert store.list("requests") == ["requests/org/m/abc_auto.json", "requests/org/m/notes.txt"]
    assert store.list("requests", suffix=".json") == ["requests/org/m/abc_auto.json"]
    assert store.list("requests/org") == store.list("requests")
    assert store.list("requests/or") == []  # a folder, not a string prefix
    assert store.list("results") == ["results/org/m/abc_auto.json"]

    store.write_bytes("results/org/m/abc_auto.json", b"v2")  # overwrite
    assert store.read_bytes("results/org/m/abc_auto.json") == b"v2"
    assert hub.files(results)["results/org/m/abc_auto.json"] == b"v2"
    store.delete("results/org/m/abc_auto.json")
    assert store.read_bytes("results/org/m/abc_auto.json") is None and store.list("results") == []
    assert "results/org/m/abc_auto.json" not in hub.files(results)
    commits, start = dict(hub.commits), len(hub.requests)
    store.delete("results/org/m/abc_auto.json")  # absent: no error, no commit (the picture knows: no call at all)
    assert dict(hub.commits) == commits and served_since(hub, start) == []
    # another store sees it all from the head
    other = HubStore(api, *repos)
    assert other.read_json("requests/org/m/abc_auto.json") == {"a": [1, 2], "b": 1}
    assert other.list("requests") == store.list("requests") and other.list("results") == []


def test_write_many_makes_one_commit_per_repo(store, hub, repos):
    results, requests = repos
    files = {f"details/org/m/abc_auto/bench{i}.parquet": bytes([i]) * 10 for i in range(3)}
    files["results/org/m/abc_auto.json"] = b"{}"
    files["requests/org/m/abc_auto.json"] = b'{"status": "FINISHED"}'
    before = dict(hub.commits)
    store.write_many(files)
    assert hub.commits[results] - before.get(results, 0) == 1
    assert hub.commits[requests] - before.get(requests, 0) == 1
    for path, data in files.items():
        assert store.read_bytes(path) == data
        assert hub.files(requests if path.startswith("requests/") else results)[path] == data
    assert store.list("details", suffix=".parquet") == sorted(p for p in files if p.startswith("details/"))
    store.write_many({})  # nothing to write: no commit
    assert hub.commits[results] - before.get(results, 0) == 1
    assert hub.commits[requests] - before.get(requests, 0) == 1


def test_one_repo_for_everything_when_no_requests_repo(api, hub, repos):
    results, requests = repos
    store = HubStore(api, results)
    assert store.requests_repo == results
    store.write_many({"requests/a/b/c.json": b"1", "results/a/b/c.json": b"2"})
    assert hub.commits[results] == 1 and hub.commits[requests] == 0
    assert set(hub.files(results)) >= {"requests/a/b/c.json", "results/a/b/c.json"}
    with store.lock():
        assert store.read_bytes("requests/a/b/c.json") == b"1"
        store.write_bytes("requests/a/b/c.json", b"3")
    assert store.read_bytes("requests/a/b/c.json") == b"3" and hub.files(results)["requests/a/b/c.json"] == b"3"
    assert hub.commits[results] == 2


def test_paths_must_stay_inside(store, hub):
    start = len(hub.requests)
    for bad in ["../escape.json", "/abs.json", "a/../../b", ""]:
        with pytest.raises(ValueError):
            store.write_bytes(bad, b"x")
        with pytest.raises(ValueError):
            store.read_bytes(bad)
        with pytest.raises(ValueError):
            store.list(bad)
    assert served_since(hub, start) == []  # refused before any Hub call


def test_a_missing_repo_is_an_error_not_an_empty_store(api, hub):
    missing = f"{ORG}/none-{uuid.uuid4().hex[:8]}"
    store = HubStore(api, missing, create=False)
    with pytest.raises(HubStoreError, match=missing) as raised:
        store.read_bytes("results/a.json")
    assert raised.value.status_code == 404 and "RepositoryNotFound" in str(raised.value)
    with pytest.raises(HubStoreError, match=missing):
        store.list("results")
    with pytest.raises(HubStoreError, match=missing):
        store.refresh()


# ------------------------------------------------------------------------------------------------ lock()

def test_a_write_with_a_stale_parent_raises_store_conflict(store, api, hub, repos):
    requests = repos[1]
    store.write_json("requests/org/m/abc_auto.json", {"status": "PENDING"})
    other = HubStore(api, *repos)
    with pytest.raises(StoreConflict):
        with store.lock():
            assert store.read_json("requests/org/m/abc_auto.json") == {"status": "PENDING"}
            other.write_json("requests/org/m/abc_auto.json", {"status": "CANCELLED"})  # another writer got there first
            # reads inside the transaction stay at the commit it started from
            assert store.read_json("requests/org/m/abc_auto.json") == {"status": "PENDING"}
            assert store.list("requests") == ["requests/org/m/abc_auto.json"]
            store.write_json("requests/org/m/abc_auto.json", {"status": "RUNNING"})
    assert hub.repos.rejected[requests] == 1
    assert json.loads(hub.files(requests)["requests/org/m/abc_auto.json"]) == {"status": "CANCELLED"}
    # the refused commit refreshed the picture: the store reads the other writer's change without a refresh()
    assert store.read_json("requests/org/m/abc_auto.json") == {"status": "CANCELLED"}  # nothing was overwritten
    with store.lock():  # the next transaction starts from the new head and succeeds
        store.write_json("requests/org/m/abc_auto.json", {"status": "RUNNING"})
    assert store.read_json("requests/org/m/abc_auto.json") == {"status": "RUNNING"}
    assert json.loads(hub.files(requests)["requests/org/m/abc_auto.json"]) == {"status": "RUNNING"}
    assert hub.repos.rejected[requests] == 1


def test_another_store_s_commits_are_seen_after_a_refresh(store, api, hub, repos):
    store.write_json("requests/org/m/abc_auto.json", {"n": 1})
    assert store.list("requests") == ["requests/org/m/abc_auto.json"]
    other = HubStore(api, *repos)
    other.write_json("requests/org/m/abc_auto.json", {"n": 2})
    other.write_json("requests/org/m/def_auto.json", {"n": 3})
    # reads answer from the picture: the same head until refresh() ...
    assert store.read_json("requests/org/m/abc_auto.json") == {"n": 1}
    assert store.list("requests") == ["requests/org/m/abc_auto.json"]
    store.refresh()  # ... which brings it to the head
    assert store.read_json("requests/org/m/abc_auto.json") == {"n": 2}
    assert store.list("requests") == ["requests/org/m/abc_auto.json", "requests/org/m/def_auto.json"]
    assert store.head(repos[1]) == hub.head(repos[1])


def test_writes_in_one_transaction_are_one_commit(store, hub, repos):
    results, requests = repos
    store.write_json("requests/org/m/abc_auto.json", {"n": 0})
    with store.lock():
        store.write_json("requests/org/m/abc_auto.json", {"n": 1})
        assert store.read_json("requests/org/m/abc_auto.json") == {"n": 1}  # reads see our buffered writes
        store.write_json("requests/org/m/def_auto.json", {"n": 2})
        with store.lock():  # nested use joins the outer transaction
            store.delete("requests/org/m/abc_auto.json")
        assert store.list("requests") == ["requests/org/m/def_auto.json"]
        store.write_json("results/org/m/def_auto.json", {"n": 3})  # the results repo: straight out
        assert hub.commits[requests] == 1 and hub.commits[results] == 1
        assert "requests/org/m/def_auto.json" not in hub.files(requests)
    assert hub.repos.rejected[requests] == 0 and hub.commits[requests] == 2  # the transaction's writes: one commit
    # that commit deleted one file and added another (and, like every commit of the store, a fresh .transaction)
    assert set(hub.files(requests)) == {".gitattributes", TRANSACTION_MARK, "requests/org/m/def_auto.json"}
    assert store.list("requests") == ["requests/org/m/def_auto.json"]
    assert store.read_json("results/org/m/def_auto.json") == {"n": 3}


def test_transactions_are_per_thread(store, hub, repos):
    """One HubStore shared by threads: a transaction on one thread does not pin another thread's reads."""
    store.write_json("requests/a/b/c.json", {"v": 1})
    inside, outside_done = threading.Event(), threading.Event()
    seen = {}

    def other_thread():
        inside.wait(5)
        store.write_json("requests/a/b/c.json", {"v": 2})  # not in a transaction on this thread
        seen["other"] = store.read_json("requests/a/b/c.json")
        outside_done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with pytest.raises(StoreConflict):
        with store.lock():
            inside.set()
            assert outside_done.wait(5)
            seen["mine"] = store.read_json("requests/a/b/c.json")
            store.write_json("requests/a/b/c.json", {"v": 3})
    thread.join()
    assert seen == {"other": {"v": 2}, "mine": {"v": 1}}
    assert json.loads(hub.files(repos[1])["requests/a/b/c.json"]) == {"v": 2}
    assert hub.repos.rejected[repos[1]] == 1


# ------------------------------------------------------------------------------------------------ the queue

@pytest.mark.slow  # seconds of racing claimers
def test_claims_from_several_threads_each_with_its_own_store(api, hub, repos):
    setup = HubStore(api, *repos)
    requests = local_queue_tests._enqueue(setup, 12)
    got: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def claimer(name: str) -> None:
        try:
            store = HubStore(api, *repos)
            start.wait()
            claim_until_none_left(store, name, got, lock)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(f"t{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, [traceback.format_exception(e) for e in errors]
    paths = [path for path, _ in got]
    assert len(paths) == 12 and set(paths) == {r.path for r in requests}  # each claimed exactly once, none lost
    setup.refresh()
    stored = {r.path: r for r in queue.all_requests(setup)}
    assert all(r.status == queue.RUNNING for r in stored.values())
    assert all(stored[path].lease_owner == name for path, name in got)  # no claim was overwritten by another
    assert hub.repos.rejected[repos[1]] >= 1  # some commits lost the race and their claims were run again


@pytest.mark.slow  # racing writers over HTTP
def test_writes_racing_for_one_repo_all_land(api, hub, repos):
    """Jobs that finish together publish to one results repo at once (plain writes, each on its picture's head): a
    write that lost the race is committed again on the new head until it lands; none is refused in the end. The
    store's waits between attempts (exponential, full jitter, up to WRITE_BACKOFF_CAP) are recorded and then slept
    for a 20th of their length: the same spread of the writers at a 20th of the wall time (13 to 17 s of waiting
    before)."""
    writers, errors, asked = 10, [], []
    start = threading.Barrier(writers)

    def sleep(seconds: float) -> None:
        asked.append(seconds)
        time.sleep(seconds / 20)

    def publish(i: int) -> None:
        try:
            store = HubStore(api, *repos, sleep=sleep)
            store.refresh()
            start.wait()
            for n in range(2):
                store.write_many({f"details/m{i}/r{n}/cure.parquet": b"PAR1" + bytes(2000) + b"PAR1",
                                  f"results/m{i}/r{n}.json": b"{}"})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=publish, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not errors, [traceback.format_exception(e) for e in errors]
    files = hub.files(repos[0])
    assert all(f"results/m{i}/r{n}.json" in files for i in range(writers) for n in range(2))
    assert hub.repos.rejected[repos[0]] >= 1 and asked  # they did race, and the losers waited
    assert all(0 <= wait <= WRITE_BACKOFF_CAP for wait in asked), max(asked)


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
def test_queue_protocol_on_the_hub_store(scenario, store):
    """The queue tests written for the local store, run unchanged on the Hub store (one store shared by threads)."""
    getattr(local_queue_tests, scenario)(store)


# ------------------------------------------------------------------------------------------------ damaged files

NESTED = b"[" * 100_000 + b"]" * 100_000  # 200 KB of nesting: json.loads raises RecursionError
OVERSIZED = json.dumps({"model": "org/bad", "revision": SHA_B, "notes": ["x" * MAX_JSON_BYTES]}).encode()


@pytest.mark.parametrize("data, reason", [(NESTED, "nested deeper than 64 levels"), (OVERSIZED, "-byte limit")],
                         ids=["nested JSON", "oversized"])
def test_a_nested_or_oversized_request_is_skipped_and_listed_on_the_hub_store(store, api, hub, repos, data, reason):
    good = queue.Request(model="org/good", revision=SHA_B)
    queue.save(store, good)
    bad = f"requests/org/bad/{SHA_B[:12]}_auto.json"
    store.write_bytes(bad, data)
    assert hub.files(repos[1])[bad] == data
    start = len(hub.requests)
    # the store that wrote it, and a store reading it from the Hub
    for reader in (store, HubStore(api, *repos)):
        assert [r.path for r in queue.all_requests(reader)] == [good.path]
        listed = dict(reader.damaged.listing())
        assert list(listed) == [bad] and reason in listed[bad] and "[[" not in listed[bad]
    if data is OVERSIZED:  # refused by its size in the listing: never fetched
        assert not any(method == "GET" and bad in path for method, path in served_since(hub, start))
    assert queue.claim(store, "w1", lease_seconds=60).path == good.path
    assert queue.claim(store, "w2", lease_seconds=60) is None
    with store.lock():  # a file buffered inside a transaction is parsed by the same rules
        store.write_bytes(f"requests/org/bad/{'a' * 12}_auto.json", data)
        with pytest.raises(DamagedFile, match=reason):
            queue.load(store, f"requests/org/bad/{'a' * 12}_auto.json")


# ------------------------------------------------------------------------------------------------ the board

def test_rebuild_and_load_the_board_on_the_hub_store(store, api, hub, repos):
    write_result(store, result("org/alpha", Ro=0.3))
    write_result(store, result("org/beta", sha=SHA_B, Ro=0.6))
    built = rebuild_leaderboard(store, schema())
    assert list(built["model"]) == ["org/beta", "org/alpha"]
    assert LEADERBOARD_PATH in hub.files(repos[0])
    for reader in (store, HubStore(api, *repos)):  # from the picture, and fetched from the Hub
        loaded = load_board(reader, schema())
        assert list(loaded["model"]) == ["org/beta", "org/alpha"]
        assert loaded["cure_Ro"].tolist() == pytest.approx([0.6, 0.3])


# ------------------------------------------------------------------------------------------------ settings

def _creates(hub, start: int) -> int:
    return sum(1 for method, path in served_since(hub, start) if (method, path) == ("POST", "/api/repos/create"))


def test_open_store_builds_a_hub_store_from_settings(tmp_path, api, hub, repos):
    results, requests = repos
    settings = Settings.from_env({"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": results,
                                  "LEADERBOARD_REQUESTS_REPO": requests}, home=tmp_path)
    start = len(hub.requests)
    store = open_store(settings, api=api)
    assert isinstance(store, HubStore)
    assert (store.results_repo, store.requests_repo) == (results, requests)
    assert _creates(hub, start) == 2  # both repos are created (or found)
    assert hub.head(results) and hub.head(requests)
    store.write_json("requests/a/b/c.json", {"x": 1})
    assert open_store(settings, api=api).read_json("requests/a/b/c.json") == {"x": 1}


def test_open_store_without_an_api_uses_hfapi_with_the_settings_token(tmp_path, monkeypatch, hub, token, repos):
    import huggingface_hub

    made = []

    class RecordingHfApi(HfApi):
        """The real client, pointed at the loopback Hub, recording the token it was given."""

        def __init__(self, token=None, **kw):
            super().__init__(endpoint=hub.url, token=token)
            made.append(self)

    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingHfApi)
    settings = Settings.from_env({"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": repos[0],
                                  "HF_TOKEN": token}, home=tmp_path)
    store = open_store(settings)
    assert isinstance(store, HubStore) and store.api is made[0] and made[0].token == token
    assert store.requests_repo == repos[0]
    store.write_json("requests/a/b/c.json", {"x": 1})  # a write needs the token: it went with the requests
    assert json.loads(hub.files(repos[0])["requests/a/b/c.json"]) == {"x": 1} and token in hub.tokens_used


def test_hub_settings_without_a_results_repo_are_refused(tmp_path, hub):
    with pytest.raises(ValueError, match="LEADERBOARD_RESULTS_REPO"):
        Settings.from_env({"LEADERBOARD_STORE": "hub"}, home=tmp_path)
    start = len(hub.requests)
    with pytest.raises(ValueError, match="results repo"):
        HubStore(HfApi(endpoint=hub.url), "")
    assert served_since(hub, start) == []


# ------------------------------------------------------------------------------------------------ errors

def _enter_lock(store):
    with store.lock():
        pass


# case -> (on which store, the path pattern of the request that fails, the store call). "fresh": a store that has not
# read the repos yet (the writing store's picture holds what it wrote, and would not ask the Hub). The failure is a
# 5xx that huggingface_hub never retries (501): a listing and the history go through its http_backoff, which retries
# a 500, 502, 503 or 504 itself (see the test below), so one of those would not surface.
ERROR_CASES = {
    "the head": ("fresh", lambda results, requests: f"/api/datasets/{requests}", _enter_lock),
    "the head (refresh)": ("fresh", lambda results, requests: f"/api/datasets/{results}", lambda s: s.refresh()),
    "the read of a file": ("fresh", lambda *_: "/resolve/", lambda s: s.read_bytes("results/a/b/c.json")),
    "the paths of files": ("fresh", lambda *_: "/paths-info/", lambda s: s.read_json("results/a/b/c.json")),
    "a listing": ("fresh", lambda *_: "/tree/", lambda s: s.list("requests")),
    "the history": ("fresh", lambda *_: "/commits/", lambda s: s.write_json("requests/a/b/c.json", {"x": 1})),
    "a commit": ("same", lambda *_: "/commit/", lambda s: s.write_json("requests/a/b/c.json", {"x": 1})),
    "a commit (delete)": ("same", lambda *_: "/commit/", lambda s: s.delete("results/a/b/c.json")),
}
FAILURE = 501


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_are_clear_and_never_hold_the_token(store, api, hub, repos, token, case):
    which, pattern, call = ERROR_CASES[case]
    store.write_bytes("results/a/b/c.json", b"x")
    store.write_bytes("requests/a/b/old.json", b"{}")
    target = HubStore(api, *repos) if which == "fresh" else store
    commits = dict(hub.commits)
    hub.fail_next_request(pattern(*repos), FAILURE, f"internal error while checking the credentials {token}")
    with pytest.raises(HubStoreError) as raised:
        call(target)
    error = raised.value
    assert token_free(error, token)
    assert error.status_code == FAILURE and str(FAILURE) in str(error) and "internal error" in str(error)
    assert any(repo in str(error) for repo in repos)  # the message says which repo
    assert failure_met(hub)
    assert dict(hub.commits) == commits  # nothing landed


def test_a_listing_that_fails_once_with_a_500_is_retried_by_the_client(api, hub, repos):
    HubStore(api, *repos).write_json("requests/a/b/c.json", {"x": 1})
    store = HubStore(api, *repos)
    start = len(hub.requests)
    hub.fail_next_request("/tree/", 500, "internal error")
    assert store.list("requests") == ["requests/a/b/c.json"]
    assert [method for method, path in served_since(hub, start) if "/tree/" in path] == ["GET", "GET"]


def token_free(error: BaseException, token: str) -> bool:
    return token not in str(error) and token not in repr(error.args) \
        and token not in "".join(traceback.format_exception(error))  # the original error is not chained


def test_a_failed_repo_creation_is_logged_without_the_token(api, hub, repos, token, caplog):
    other = f"{ORG}/other-{uuid.uuid4().hex[:8]}"
    hub.fail_next_request("/api/repos/create", 403, f"token {token} may not create repos")
    store = HubStore(api, other, repos[1])
    assert token not in caplog.text and other in caplog.text
    assert store.requests_repo == repos[1] and hub.head(repos[1])  # the other repo was created
    with pytest.raises(HubStoreError, match=other):  # a repo that could not be created: said clearly when used
        store.read_bytes("results/a.json")


# ------------------------------------------------------------------------------------------------ races and outages

@pytest.mark.slow  # seconds of racing claimers
@pytest.mark.parametrize("claimers", [4, 8])
def test_many_claimers_lose_races_but_never_crash_and_never_share(api, hub, repos, claimers):
    """4 and 8 claimers, each with its own store, over HTTP: a claim that loses every race answers None ("try next
    tick"), never raises; each request is claimed exactly once."""
    setup = HubStore(api, *repos)
    requests = local_queue_tests._enqueue(setup, 16)
    got: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(claimers)

    def claimer(name: str) -> None:
        try:
            store = HubStore(api, *repos)
            start.wait()
            claim_until_none_left(store, name, got, lock)
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
    setup.refresh()
    stored = {r.path: r for r in queue.all_requests(setup)}
    assert all(stored[path].lease_owner == name for path, name in got)
    assert hub.repos.rejected[repos[1]] >= 1


def test_a_heartbeat_that_loses_many_races_in_a_row_still_lands_at_once(api, hub, repos):
    """Issue 51, cause 6: at 8 workers a heartbeat lost every one of its 10 slowly spaced attempts, the lease lapsed
    while its worker lived, and the request ran twice. A heartbeat touches only its own request: it is tried again at
    once on the new head (reading the request there), so 15 lost races in a row still land it."""
    store = HubStore(api, *repos)
    [request] = local_queue_tests._enqueue(store, 1)
    assert queue.claim(store, "worker-a", 60).path == request.path
    for _ in range(15):  # what the Hub answers a commit whose parent is no longer the head
        hub.fail_next_request(f"/api/datasets/{repos[1]}/commit/", 412,
                              "A commit has happened since. Please refresh and try again.")
    assert queue.heartbeat(store, request.path, "worker-a", 600, {"done": 3}) is True
    assert failure_met(hub)
    store.refresh()
    stored = queue.load(store, request.path)
    assert stored.progress == {"done": 3} and queue.parse_time(stored.lease_expires) > queue.now() + \
        queue.timedelta(seconds=500)
    # a cancel that lands meanwhile is seen: the heartbeat loses the race to it, reads the request on the new head
    other = HubStore(api, *repos)
    cancelled = queue.load(other, request.path)
    cancelled.status = queue.CANCELLED
    queue.save(other, cancelled)
    assert queue.heartbeat(store, request.path, "worker-a", 600) is False
    store.refresh()
    assert queue.load(store, request.path).status == queue.CANCELLED


def test_a_claim_that_loses_every_race_is_none_not_an_error(store, monkeypatch):
    local_queue_tests._enqueue(store, 1)

    monkeypatch.setattr(queue, "backoff", lambda attempt, **_: 0.0)  # no waits between the lost attempts
    monkeypatch.setattr(store, "lock", lambda: _raising_lock(StoreConflict("lost")))
    assert queue.claim(store, "w", 60) is None
    assert queue.recover(store, max_attempts=3) == []


class _raising_lock:
    def __init__(self, error):
        self.error = error

    def __enter__(self):
        raise self.error

    def __exit__(self, *exc):
        return False


def test_the_worker_loop_survives_store_outages(api, hub, repos, token, tmp_path, monkeypatch):
    """Hub errors in every part of a tick (the head, a listing, the read of a file, a commit): the loop logs each
    and goes on; the request is then run, once."""
    from leaderboard.running import attempt
    from leaderboard.running import scheduler

    results, requests = repos
    settings = Settings.from_env({}, home=tmp_path / "home", run_scheduler=False, scheduler_interval=0.01)
    local_queue_tests._enqueue(HubStore(api, *repos), 1)
    store = HubStore(api, *repos)  # its picture holds nothing yet: the tick lists and reads from the Hub
    ran = []
    monkeypatch.setattr(scheduler, "run_request", lambda s, st, request, owner, stop=None: ran.append(request.path)
                        or attempt.TickReport(request=request.path, status=queue.FINISHED))
    # a listing's 500, 502, 503 and 504 are retried by huggingface_hub itself (see above): its outage is a 501
    for pattern, status in ((f"/api/datasets/{requests}", 503), ("/tree/", 501), ("/resolve/", 503),
                            (f"/api/datasets/{requests}/commit/", 503)):  # the claim's commit
        hub.fail_next_request(pattern, status, f"Service Unavailable ({token})")
        report = scheduler.tick(settings, store)
        assert report.request is None and "HubStoreError" in report.error and token not in report.error, \
            (pattern, report)
        assert failure_met(hub), pattern  # that part of the tick met the outage
    assert ran == []
    assert all(r.status == queue.PENDING for r in queue.all_requests(store))
    hub.fail_next_request(f"/api/datasets/{results}", 503, "Service Unavailable")
    assert scheduler.run_worker_loop(settings, store, threading.Event(), max_ticks=3) == 1
    assert len(ran) == 1  # run exactly once, after the outages
