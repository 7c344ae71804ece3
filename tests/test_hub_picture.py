"""The Hub store reads from its picture of each repo (leaderboard.store.hub_picture), over real HTTP against the
loopback Hub: a refresh with nothing changed is one call per repo, a moved head fetches only the changed files, the
store's own commits need no read, no file lands in the Hub cache on disk, large files are fetched once per blob id
and kept in a bounded cache, and pages of the Space ask the Hub nothing."""
from __future__ import annotations

import json
import time
import uuid
from urllib.parse import unquote
from contextlib import contextmanager
from pathlib import Path

import pytest
from huggingface_hub import HfApi, constants

from leaderboard.store.hub import HubStore
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request
from tests.conftest import HUB_ORG, PATIENT
from tests.hub_server import HubServer, hub_client_online

ORG = HUB_ORG


FREE_ACCOUNT = {"api": 1000, "resolvers": 5000}  # the Hub's read limits per 5 minutes for a free account
COMMITS_PER_HOUR = 128  # and its commit limit per repo


@pytest.fixture(scope="module")
def hub():
    """The loopback Hub with the Hub's limits on: every test here runs within them."""
    with HubServer() as server, hub_client_online():
        server.set_read_budget(**FREE_ACCOUNT)
        server.set_commit_budget(COMMITS_PER_HOUR)
        yield server


@pytest.fixture
def api(hub):
    """A client of a user of its own: the read budget is counted per user."""
    return HfApi(endpoint=hub.url, token=hub.issue_token(f"user-{uuid.uuid4().hex[:6]}", orgs=[ORG]))


class Calls(list):
    """(method, path) of each request the loopback Hub received inside `counting`."""

    def kinds(self) -> list[str]:
        found = []
        for method, path in self:
            kind = next((k for k in ("tree", "paths-info", "commits", "preupload", "commit", "resolve")
                         if f"/{k}/" in path), "info" if path.startswith("/api/") else path)
            found.append(kind)
        return found


@contextmanager
def counting(hub):
    calls, start = Calls(), len(hub.requests)
    yield calls
    calls.extend(hub.requests[start:])


def requests(n: int, status: str = queue.PENDING) -> list[Request]:
    return [Request(model=f"org{i % 3}/model-{i}", revision=f"{i:040x}", status=status,
                    submitted_time=f"2026-11-20T00:00:{i:02d}+00:00") for i in range(n)]


def populate(store: HubStore, n: int) -> list[Request]:
    made = requests(n)
    store.write_many({r.path: json.dumps(r.to_dict()).encode() for r in made})
    return made


def test_nothing_changed_costs_one_call_per_repo(hub, api, repos):
    store = HubStore(api, *repos)
    populate(store, 30)
    assert len(queue.all_requests(store)) == 30
    with counting(hub) as calls:
        store.refresh()
        assert len(queue.all_requests(store)) == 30
        assert store.read_bytes("results/none.json") is None  # asked once ...
    assert calls.kinds() == ["info", "info", "paths-info"]
    with counting(hub) as calls:
        store.refresh()
        queue.all_requests(store)
        assert store.read_bytes("results/none.json") is None  # ... then known to be absent
    assert calls.kinds() == ["info", "info"]


def test_a_moved_head_fetches_only_the_files_whose_blob_changed(hub, api, repos):
    store, other = HubStore(api, *repos), HubStore(api, *repos, create=False)
    made = populate(store, 30)
    queue.all_requests(store)
    changed = queue.load(other, made[7].path)
    changed.notes = ["changed by another writer"]
    queue.save(other, changed)
    with counting(hub) as calls:
        store.refresh()
    assert sorted(calls.kinds()) == ["info", "info", "resolve", "tree"]
    assert [p for _, p in calls if "/resolve/" in p][0].endswith(made[7].path)
    assert any(p.endswith("/tree/" + store.head(repos[1]) + "/requests") for _, p in calls)  # the folder, not the repo
    with counting(hub) as calls:
        assert queue.load(store, made[7].path).notes == ["changed by another writer"]
    assert calls == []


def test_the_stores_own_commits_need_no_read(hub, api, repos):
    store = HubStore(api, *repos)
    made = populate(store, 5)
    queue.all_requests(store)
    with counting(hub) as calls:
        claimed = queue.claim(store, "w1", 60)
    assert claimed.path == made[0].path and calls.kinds().count("commit") == 1 and "resolve" not in calls.kinds()
    with counting(hub) as calls:
        store.refresh()
        assert queue.load(store, made[0].path).status == queue.RUNNING
        assert [r.status for r in queue.all_requests(store)].count(queue.RUNNING) == 1
    assert calls.kinds() == ["info", "info"]


def test_reads_leave_no_snapshot_folders_in_the_hub_cache(hub, api, repos):
    cache = Path(constants.HF_HUB_CACHE)
    before = sorted(cache.glob("datasets--*")) if cache.exists() else []
    store, other = HubStore(api, *repos), HubStore(api, *repos, create=False)
    made = populate(store, 10)
    for n in range(5):
        queue.save(other, Request(model=f"new/model-{n}", revision=f"{n + 100:040x}"))
        store.refresh()
        assert len(queue.all_requests(store)) == 11 + n
        assert queue.load(store, made[0].path) is not None
    after = sorted(cache.glob("datasets--*")) if cache.exists() else []
    assert after == before


def test_large_files_are_fetched_once_per_blob_id_and_bounded(hub, api, repos):
    store = HubStore(api, *repos, cache_mb=0.25)  # 262,144 bytes
    files = {f"details/org/m/{n:012x}_auto/cure.parquet": bytes([n]) * 100_000 for n in range(3)}
    HubStore(api, *repos, create=False).write_many(files)
    assert set(files) <= hub.lfs_paths(repos[0])  # parquet files go through Git LFS
    first = sorted(files)[0]
    with counting(hub) as calls:
        assert store.read_bytes(first) == files[first]
        assert store.read_bytes(first) == files[first]
    assert calls.kinds().count("resolve") == 1
    for path in sorted(files)[1:]:  # two more of 100 KB: the first leaves the 256 KB cache
        assert store.read_bytes(path) == files[path]
    assert store.pictures.contents.sizes()[1] <= 262_144
    with counting(hub) as calls:
        assert store.read_bytes(first) == files[first]
    assert calls.kinds().count("resolve") == 1


def test_a_deep_folder_is_listed_for_the_call_and_a_top_folder_is_kept(hub, api, repos):
    store = HubStore(api, *repos)
    store.write_many({"details/a/b/c_auto/x.parquet": b"PAR1", "details/a/b/d_auto/x.parquet": b"PAR1"})
    with counting(hub) as calls:
        assert store.list("details/a/b/c_auto") == ["details/a/b/c_auto/x.parquet"]
    assert calls.kinds() == ["tree"] and unquote(calls[0][1]).endswith("/details/a/b/c_auto")
    with counting(hub) as calls:
        assert len(store.list("details", suffix=".parquet")) == 2
        assert store.list("details/a/b/d_auto") == ["details/a/b/d_auto/x.parquet"]
    assert calls.kinds() == ["tree"]


@pytest.mark.slow  # waits out a 429
def test_a_tick_waits_out_a_read_429_and_then_runs(hub, api, repos, tmp_path):
    """The Hub's read budget (one API call per 2-second window here) is spent: the tick's refresh waits the seconds
    the RateLimit header names, without asking again for a repo it already refreshed, then the tick claims."""
    from leaderboard.running import attempt, scheduler
    from leaderboard.settings import Settings

    store = HubStore(api, *repos)
    made = populate(store, 2)
    queue.all_requests(store)
    HubStore(api, *repos, create=False).write_bytes("results/x.json", b"{}")  # both repos move on
    queue.save(HubStore(api, *repos, create=False), Request(model="org/late", revision="c" * 40))
    settings = Settings.from_env({}, home=tmp_path, store_backend="hub", results_repo=repos[0],
                                 requests_repo=repos[1])
    hub.set_read_budget(api=1, window_seconds=2.0)
    try:
        started = time.monotonic()
        scheduler.prepare_store(settings, store)
        waited = time.monotonic() - started
    finally:
        hub.set_read_budget(**FREE_ACCOUNT)
    assert hub.rate_limited()["api"] >= 1 and waited >= 1.0
    assert len(queue.all_requests(store)) == 3  # both pictures are at their heads
    ran = []
    original = scheduler.run_request
    scheduler.run_request = lambda s, st, request, owner, stop=None: ran.append(request.path) or \
        attempt.TickReport(request=request.path, status=queue.RUNNING)
    try:
        report = scheduler.tick(settings, store)
    finally:
        scheduler.run_request = original
    assert report.error is None and ran == [made[0].path]


@pytest.mark.slow  # a browser test
def test_pages_of_the_space_ask_the_hub_nothing(hub, api, repos, tmp_path, open_page):
    """Once the Space's refresh timer has read what the pages read, visitors (a browser going through every tab, and
    an API client) cost no Hub call: the pages answer from the store's picture."""
    from gradio_client import Client

    from leaderboard.board.columns import schema
    from leaderboard.board.file import rebuild_leaderboard
    from leaderboard.settings import Settings
    from leaderboard.ui import build_app, launch_options, warm_store
    from tests.conftest import free_port
    from tests.results_files import SHA_B, result, write_result

    publisher = HubStore(api, *repos)  # what a Job would have written
    for model, sha in (("org/alpha", "a" * 40), ("org/beta", SHA_B)):
        write_result(publisher, result(model, sha=sha))
        queue.save(publisher, Request(model=model, revision=sha, status=queue.FINISHED,
                                      finished_time="2026-11-22T02:10:00+00:00"))
    populate(publisher, 5)
    rebuild_leaderboard(publisher, schema())
    settings = Settings.from_env({}, home=tmp_path, store_backend="hub", results_repo=repos[0],
                                 requests_repo=repos[1], run_scheduler=False)
    store = HubStore(api, *repos, create=False)
    warm_store(store)
    demo = build_app(settings, store)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(settings, store))
    try:
        with counting(hub) as calls:
            page = open_page(f"http://127.0.0.1:{port}/")
            page.locator("#leaderboard-table").get_by_text("org/beta", exact=True).filter(
                visible=True).first.wait_for(state="visible")
            for tab in ("Queue", "Submit", "Explorer", "About"):
                page.get_by_role("tab", name=tab).click()
                page.wait_for_timeout(300)
            page.get_by_role("tab", name="Queue").click()
            page.get_by_text("org1/model-4").filter(visible=True).first.wait_for(state="visible")
            client = Client(f"http://127.0.0.1:{port}/", verbose=False, httpx_kwargs=PATIENT)
            pending = client.predict(api_name="/queue")[0]
            board = client.predict(api_name="/leaderboard")
        assert len(pending["data"]) == 5 and len(board["data"]) == 2
        assert calls == []
    finally:
        demo.close()
        hub.set_read_budget(**FREE_ACCOUNT)


def test_the_refresh_timer_keeps_the_picture_current_and_survives_outages(hub, api, repos):
    from leaderboard.store.refresh_timer import RefreshTimer

    store = HubStore(api, *repos)
    populate(store, 2)
    warmed = []
    timer = RefreshTimer(store, 0.2, warm=lambda: warmed.append(len(queue.all_requests(store)))).start()
    try:
        wait_until(lambda: timer.rounds >= 1)
        queue.save(HubStore(api, *repos, create=False), Request(model="org/late", revision="c" * 40))
        wait_until(lambda: len(queue.all_requests(store)) == 3)  # seen without a read of ours
        hub.fail_next_request(f"/api/datasets/{repos[0]}", 503, "Service Unavailable")
        rounds = timer.rounds
        wait_until(lambda: timer.rounds >= rounds + 3)  # a failed round is logged; the next ones go on
    finally:
        timer.stop()
    assert warmed == [2]


def wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_older_versions_of_rewritten_files_are_not_kept(hub, api, repos):
    store = HubStore(api, *repos)
    for n in range(6):
        store.write_bytes("requests/a/b/c.json", json.dumps({"n": n, "pad": "x" * 1000}).encode())
    small, _ = store.pictures.contents.sizes()
    assert small < 2 * 1100  # one version of the file (and nothing of the .transaction marks)
