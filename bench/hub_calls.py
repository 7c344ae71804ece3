"""What the Space costs the Hub in calls, counted on the loopback Hub (tests/hub_server.py) with the real
huggingface_hub client and the real Hub store.

For N requests (half FINISHED, with results, a details file per benchmark and their row on leaderboard.parquet; half
FAILED, so that a tick has nothing to claim), in a requests repo and a results repo, written by another store (as a
Job would), the Space's own store:
- starts cold: the refresh timer's first read of what the pages read (queue, results, board), then the first tick;
- an idle scheduler tick (refresh, recover, the board's staleness check, claim: nothing PENDING), and a round of the
  refresh timer with nothing changed;
- one new submission (the request written PENDING by the Space's store, as the Submit tab does) and the tick after it
  (the evaluation itself is left out: the tick's run of the request is replaced by a stand-in that leaves it
  RUNNING); then the tick after another process's commit (a request saved by the other store);
- the first view of a run's details in the explorer, then one page load of the Space's board, queue and explorer:
  the `/leaderboard`, `/queue` and `/explorer_items` API endpoints of the real app (what the tabs' load events read),
  through gradio_client;
- 5 minutes with 10 open Queue tabs plus the scheduler, from those figures: each tab refreshes the queue every
  leaderboard.ui.queue_tab.REFRESH_SECONDS, the scheduler ticks every LEADERBOARD_SCHEDULER_INTERVAL, the refresh
  timer runs every LEADERBOARD_HUB_REFRESH_SECONDS (each round counted at full price, though a round right after a
  tick skips the repos the tick checked);
and, for the Hub cache on disk (HF_HUB_CACHE, a temporary folder), its snapshot folders and files before and after
20 commits to the requests repo, each followed by a read of the queue.
Each figure is the number of HTTP requests the loopback Hub received, with a breakdown by kind (tree: a listing;
resolve: a file download; info: a repo's head; commits: the history listing; paths-info; commit, preupload). The
Hub's documented limits are per 5 minutes: 5,000 resolver calls for a free account (12,000 PRO) and 1,000 other API
calls (2,500 PRO).

Run: `.venv/bin/python bench/hub_calls.py [N ...]` (default 100 1000). Not part of the test suite. The last line:
`hub calls: idle tick N=100 <a>, N=1000 <b>; after one submission <c>; page load <d>; 5 min with 10 viewers <e>`
(c, d and e at the largest N). Goals (issue "the Hub store at public scale"): a and b at most 2, c at most 6, d 0,
e under 1,000.
"""
from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

CACHE = Path(tempfile.mkdtemp(prefix="bench-hub-cache-"))
os.environ["HF_HUB_CACHE"] = str(CACHE)  # before huggingface_hub is imported: the client reads it once
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ["HF_HUB_DISABLE_XET"] = "1"  # the loopback Hub serves Git LFS uploads, not Xet (tests/hub_server.py)
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # no upload bar per commit in the figures
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import json  # noqa: E402

from evaluator import api  # noqa: E402

RESULTS_REPO, REQUESTS_REPO = "bench-org/results", "bench-org/requests"
WINDOW_S = 300


def kind(method: str, path: str) -> str:
    """What a request to the Hub was, by its path."""
    if "/resolve/" in path:
        return f"resolve {method}"
    if path.startswith("/lfs-storage/"):
        return "LFS storage (a CDN on the Hub, not a Hub call)"
    for word in ("tree", "paths-info", "commits", "commit", "preupload", "validate-yaml", "repos/create", "lfs"):
        if f"/{word}" in path:
            return word
    return "info" if path.startswith("/api/") else path


class Calls:
    """Counts what the loopback Hub received between start() and stop()."""

    def __init__(self, hub):
        self.hub = hub

    def __enter__(self) -> "Calls":
        self.start = len(self.hub.requests)
        return self

    def __exit__(self, *_exc) -> None:
        self.kinds = Counter(kind(method, path) for method, path in self.hub.requests[self.start:])
        self.total = sum(self.kinds.values())

    def __str__(self) -> str:
        return f"{self.total} ({', '.join(f'{k} {n}' for k, n in self.kinds.most_common())})"


def details_files(benchmarks: list[str], key: str, model: str, revision: str) -> dict[str, bytes]:
    """Each benchmark's details file of one run, as the publisher writes it (declared columns, run columns)."""
    from evaluator.runs.details import write_details
    from leaderboard.board.dataset_card import with_run_columns
    from tests.published_runs import details_rows

    found = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in benchmarks:
            path = Path(folder) / f"{name}.parquet"
            write_details(path, details_rows(name, key, rows=5))
            found[name] = with_run_columns(path.read_bytes(), key, model, revision)
    return found


def populate(store, count: int, benchmarks: list[str]) -> str:
    """`count` requests, half FINISHED with results and details, half FAILED; returns the first finished run's key
    (its details are the ones the explorer reads; the others are copies)."""
    from leaderboard.submissions import records as queue
    from leaderboard.submissions.records import Request

    files: dict[str, bytes] = {}
    key = ""
    parquets: dict[str, bytes] = {}
    for i in range(count):
        model, sha = f"org{i % 37}/model-{i}", f"{i:040x}"
        finished = i % 2 == 0
        request = Request(model=model, revision=sha, status=queue.FINISHED if finished else queue.FAILED,
                          finished_time=queue.iso(queue.now()), error=None if finished else "it failed")
        files[request.path] = json.dumps(request.to_dict(), indent=2).encode()
        if finished:
            key = key or request.key
            results = {"model": model, "revision": sha, "precision": "auto", "model_type": "pretrained",
                       "params_billions": 0.5, "key": request.key, "finished_time": request.finished_time,
                       "run": {"suite": "sample", "limit": 0}, "skipped": {},
                       "benchmarks": {name: {"scores": {m.key: 0.5 for m in api.card(name).metrics},
                                             "counts": {"items": 5}} for name in benchmarks}}
            files[f"results/{request.key}.json"] = json.dumps(results).encode()
            parquets = parquets or details_files(benchmarks, request.key, model, sha)  # the explorer reads the first
            for name in benchmarks:
                files[f"details/{request.key}/{name}.parquet"] = parquets[name]
    store.write_many(files)
    return key


def cache_size() -> tuple[int, int]:
    """(snapshot folders, files and links under them) in the Hub cache."""
    snapshots = [p for p in CACHE.glob("*/snapshots/*") if p.is_dir()]
    return len(snapshots), sum(1 for s in snapshots for p in s.rglob("*") if not p.is_dir())


def measure(count: int, with_app: bool) -> dict:
    from gradio_client import Client
    from huggingface_hub import HfApi

    from leaderboard.board.columns import schema
    from leaderboard.board.file import rebuild_leaderboard
    from leaderboard.running import attempt, scheduler
    from leaderboard.settings import Settings
    from leaderboard.store.hub import HubStore
    from leaderboard.submissions import records as queue
    from leaderboard.submissions.records import Request
    from leaderboard.ui import build_app, launch_options, warm_store
    from leaderboard.ui.queue_tab import REFRESH_SECONDS
    from tests.conftest import free_port
    from tests.hub_server import HubServer, hub_client_online

    found: dict = {"n": count}
    home = Path(tempfile.mkdtemp(prefix="bench-hub-home-"))
    with HubServer() as hub, hub_client_online():
        token = hub.issue_token("bench", orgs=["bench-org"])
        settings = Settings.from_env({}, home=home, store_backend="hub", results_repo=RESULTS_REPO,
                                     requests_repo=REQUESTS_REPO, hf_token=token)
        publisher = HubStore(HfApi(endpoint=hub.url, token=token), RESULTS_REPO, REQUESTS_REPO)  # as a Job
        key = populate(publisher, count, list(settings.benchmarks))
        rebuild_leaderboard(publisher, schema(settings.benchmarks))
        store = HubStore(HfApi(endpoint=hub.url, token=token), RESULTS_REPO, REQUESTS_REPO, create=False)
        with Calls(hub) as cold:  # the Space starts: its timer reads what the pages read, then the first tick
            warm_store(store)
            scheduler.tick(settings, store)
        found["cold_start"] = cold
        with Calls(hub) as idle:
            report = scheduler.tick(settings, store)
        assert report.request is None and not report.error, report
        found["idle_tick"] = idle
        with Calls(hub) as timer_round:
            store.refresh()
        found["timer_round"] = timer_round

        with Calls(hub) as submitted:  # the Submit tab writes through the Space's own store
            queue.save(store, Request(model="new-org/new-model", revision="f" * 40))
        found["submission"] = submitted
        ran = []
        original = scheduler.run_request
        scheduler.run_request = lambda s, st, request, owner, stop=None: ran.append(request.path) or \
            attempt.TickReport(request=request.path, status=queue.RUNNING)
        try:
            with Calls(hub) as after:
                scheduler.tick(settings, store)
            assert ran, "the tick claimed the new request"
            queue.save(publisher, Request(model="other-org/model", revision="e" * 40))  # another process's commit
            with Calls(hub) as after_foreign:
                scheduler.tick(settings, store)
        finally:
            scheduler.run_request = original
        found["tick_after_submission"] = after
        found["tick_after_foreign"] = after_foreign

        if with_app:
            demo = build_app(settings, store)
            port = free_port()
            demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                        **launch_options(settings, store))
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False)
                explorer = {"run": key, "benchmark": settings.benchmarks[0], "api_name": "/explorer_items"}
                with Calls(hub) as first_view:  # the first view of a run's details fetches its file once
                    client.predict(**explorer)
                found["first_details_view"] = first_view
                pages = {}
                for name, call in (("board", lambda: client.predict(api_name="/leaderboard")),
                                   ("queue", lambda: client.predict(api_name="/queue")),
                                   ("explorer", lambda: client.predict(**explorer))):
                    with Calls(hub) as page:
                        call()
                    pages[name] = page
                found["pages"] = pages
            finally:
                demo.close()
            ticks = WINDOW_S / settings.scheduler_interval
            rounds = WINDOW_S / settings.hub_refresh_seconds
            refreshes = WINDOW_S / REFRESH_SECONDS * 10
            found["five_minutes"] = round(pages["queue"].total * refreshes + idle.total * ticks
                                          + timer_round.total * rounds)
            found["five_minutes_how"] = (f"{refreshes:.0f} queue refreshes x {pages['queue'].total} + {ticks:.0f} "
                                         f"ticks x {idle.total} + {rounds:.0f} timer rounds x {timer_round.total}")

            before = cache_size()
            for i in range(20):
                queue.save(store, Request(model=f"cache-org/model-{i}", revision=f"{i:040x}"))
                queue.all_requests(store)
            found["cache"] = (before, cache_size())
    return found


def main(sizes: list[int]) -> None:
    results = []
    for count in sizes:
        found = measure(count, with_app=count == max(sizes))
        results.append(found)
        print(f"N={count}: cold start (the timer's first read of queue, results and board, then the first tick) "
              f"{found['cold_start']}")
        print(f"N={count}: idle tick {found['idle_tick']}; a timer round with nothing changed {found['timer_round']}")
        print(f"N={count}: one submission {found['submission']}; the tick after it {found['tick_after_submission']}")
        print(f"N={count}: the tick after another process's commit {found['tick_after_foreign']}")
        if "pages" in found:
            print(f"N={count}: first view of a run's details in the explorer {found['first_details_view']}")
            for name, page in found["pages"].items():
                print(f"N={count}: page load, {name}: {page}")
            print(f"N={count}: 5 minutes with 10 Queue tabs and the scheduler: {found['five_minutes']} calls "
                  f"({found['five_minutes_how']})")
            (folders_0, files_0), (folders_1, files_1) = found["cache"]
            print(f"N={count}: Hub cache on disk: {folders_0} snapshot folders / {files_0} files before 20 commits, "
                  f"{folders_1} / {files_1} after")
    by_n = {r["n"]: r for r in results}
    last = results[-1]
    idle = ", ".join(f"N={n} {r['idle_tick'].total}" for n, r in by_n.items())
    print(f"hub calls: idle tick {idle}; after one submission {last['tick_after_submission'].total}; page load "
          f"{sum(p.total for p in last['pages'].values())}; 5 min with 10 viewers {last['five_minutes']}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 1000])
