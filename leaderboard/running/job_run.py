"""Inside a Hugging Face Job: evaluate the one request the dispatcher claimed for it, and publish.

`python -m leaderboard.running.job_run --request requests/<key>.json --owner <lease owner>`

It claims nothing: the request must be RUNNING under `owner`, else it stops with a message. It runs the evaluator and
publishes results and details exactly as the local worker does (leaderboard.running.attempt.run_request), but never
renews the lease (the dispatcher set it for the Job's whole time, extends it while the Jobs API says the Job is live,
and watches the Job through that API), so the run costs no heartbeat commits; progress goes to stdout as
LEADERBOARD_PROGRESS lines (one every few seconds, when it changed), which the Space reads from the Job's log.
SIGTERM (a cancelled Job) stops the evaluation; the request is closed by whoever cancelled it.
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading

from leaderboard.running.attempt import run_request
from leaderboard.settings import Settings
from leaderboard.store import Store, open_store
from leaderboard.submissions import records as queue


def leased_request(store, path: str, owner: str) -> queue.Request | None:
    """The request at `path` when it is RUNNING under `owner`; else None, said in one `error:` line."""
    request = queue.load(store, path)
    if request is None or request.status != queue.RUNNING or request.lease_owner != owner:
        state = "missing" if request is None else f"{request.status}, leased to {request.lease_owner or 'nobody'}"
        print(f"error: {path} is not leased to this Job ({state}); nothing to do", flush=True)
        return None
    return request


def job_start(path: str, owner: str) -> tuple[Settings, Store, threading.Event, queue.Request | None]:
    """A Job's settings, store, stop event (set by SIGTERM, a cancelled Job) and the request it was leased (None:
    said in one line)."""
    settings = Settings.from_env_or_exit()
    store = open_store(settings)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return settings, store, stop, leased_request(store, path, owner)


def evaluated(settings: Settings, store: Store, request: queue.Request, owner: str, stop: threading.Event,
              served_by: str | None = None) -> int:
    """The request run and closed (run_request in a Job), said in one line: the Job's exit status."""
    report = run_request(settings, store, request, owner, stop, in_job=True, served_by=served_by)
    print(f"[job] {request.key}: {report.status} {report.error or ''}".rstrip(), flush=True)
    return 0 if report.status == queue.FINISHED else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m leaderboard.running.job_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--request", required=True, help="the request's path in the store")
    parser.add_argument("--owner", required=True, help="the lease owner the dispatcher claimed it under")
    args = parser.parse_args(argv)
    settings, store, stop, request = job_start(args.request, args.owner)
    if request is None:
        return 3
    print(f"[job] evaluating {request.key} (store: {settings.store_backend})", flush=True)
    return evaluated(settings, store, request, args.owner, stop)


if __name__ == "__main__":
    sys.exit(main())
