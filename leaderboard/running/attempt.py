"""One attempt of a request whose lease we hold: run the evaluator to its end while renewing the lease (or, inside a
Hugging Face Job, only checking it), then publish and close the request FINISHED, back to PENDING, or FAILED with
its reason and the log's tail.

Exit 0 with a results.json -> check the lease is still ours, publish (leaderboard.board.publish), close FINISHED,
then put the run's row on the board. Killed by a signal, or a publish the store refused -> back to PENDING
(attempts + 1) or FAILED after max attempts. Any other exit -> FAILED with the worker's one-line reason. Every
attempt journals its model responses in the request's one responses folder, so an attempt after a kill or a restart
resumes where the last one stopped; the folder is removed once the request is FINISHED.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from evaluator.api import MODEL_TOKEN_SETTING, PARENT_PID_ENV
from leaderboard.board.publish import publish, publish_board
from leaderboard.running.evaluator_process import (PROGRESS_PREFIX, PROJECT_DIR, QUIET_PROGRESS, copy_output,
                                                   failure_reason, log_tail, read_progress, request_dir,
                                                   responses_dir, stop_earlier_runs, stop_process, worker_command)
from leaderboard.running.job_clock import job_seen
from leaderboard.settings import Settings
from leaderboard.store import Store, StoreConflict, backoff
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request

log = logging.getLogger(__name__)
JOB_PROGRESS_SECONDS = 5.0  # inside a Job: a progress line in its log at most this often (when it changed)


@dataclass
class TickReport:
    """What one tick did."""

    recovered: list[str] = field(default_factory=list)
    request: str | None = None  # the request path it ran, if any
    status: str | None = None  # the request's status afterwards
    error: str | None = None
    run_dir: Path | None = None


def _lost(store: Store, path: str, said: str) -> tuple[str, str]:
    """A run whose lease went, as its report says it: CANCELLED, by whom, when the request was cancelled (a person's
    choice, not a fault); else LOST with `said`."""
    try:
        request = queue.load(store, path)
    except Exception:  # noqa: BLE001 - the store cannot say: the plain word
        return "LOST", said
    if request is None or request.status != queue.CANCELLED:
        return "LOST", said
    by = next((a.get("by") for a in reversed(request.actions) if isinstance(a, dict) and a.get("action") == "cancel"),
              None)
    return "CANCELLED", f"by {by}: the evaluation was stopped" if by else "the evaluation was stopped"


def _still_ours(store: Store, path: str, owner: str) -> bool | None:
    """Whether the request is still RUNNING under our lease, read without writing (None: the store could not say).
    A store that reads from a picture of the Hub (inside a Job nothing else refreshes it) is refreshed first."""
    try:
        refresh = getattr(store, "refresh", None)
        if refresh is not None:
            refresh()
        request = queue.load(store, path)
    except Exception as exc:  # noqa: BLE001 - an outage or a damaged file: ask again at the next heartbeat
        log.warning("could not read %s to check the lease: %s", path, type(exc).__name__)
        return None
    return request is not None and request.status == queue.RUNNING and request.lease_owner == owner


def run_request(settings: Settings, store: Store, request: Request, owner: str,
                stop: threading.Event | None = None, in_job: bool = False, served_by: str | None = None) -> TickReport:
    """Run the worker for a request we hold the lease on, and close the request (`served_by`: the spec of the server
    that answers for its model, leaderboard.running.engine_job's vLLM; None: the evaluator loads it).

    in_job (inside a Hugging Face Job): the lease was set by the dispatcher for the Job's whole time and is never
    renewed here, so a run costs no heartbeat commits; the lease is only read (is it still ours?), progress goes to
    stdout as PROGRESS_PREFIX lines and the evaluator's output to stdout too, where the dispatcher reads them from
    the Job's log."""
    stop = stop or threading.Event()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    run_dir = request_dir(settings, request) / stamp
    responses = responses_dir(settings, request)
    out_dir, log_path = run_dir / "out", run_dir / "worker.log"
    run_dir.mkdir(parents=True, exist_ok=True)
    request_file = run_dir / "request.json"
    request_file.write_text(json.dumps(request.to_dict(), indent=2))
    report = TickReport(request=request.path, run_dir=run_dir)
    stop_earlier_runs(request_dir(settings, request))  # never two live runs of one request (nor one journal)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", PARENT_PID_ENV: str(os.getpid()),  # the evaluator dies with us
           **QUIET_PROGRESS}  # no "Loading weights: 100%|..." bars in the log tail the Queue shows
    if settings.judge_bearer:  # secrets reach the worker by environment, never its command line
        env["LEADERBOARD_JUDGE_TOKEN"] = settings.judge_bearer
    env.pop(MODEL_TOKEN_SETTING, None)  # a served model's token reaches its own runs only
    if request.served and settings.model_token:
        env[MODEL_TOKEN_SETTING] = settings.model_token
    started = last_renewal = time.monotonic()
    shown: dict | None = None
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(worker_command(settings, request_file, out_dir, responses, served=request.served,
                                               served_by=served_by, thinking=request.thinking), cwd=PROJECT_DIR,
                                env=env, stdout=subprocess.PIPE if in_job else log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        copier = None
        if in_job:
            copier = threading.Thread(target=copy_output, args=(proc.stdout, log, sys.stdout.buffer), daemon=True)
            copier.start()
        (run_dir / "worker.pid").write_text(str(proc.pid))
        outcome = None
        poll = min(settings.heartbeat_seconds, JOB_PROGRESS_SECONDS) if in_job else settings.heartbeat_seconds
        while True:
            try:
                proc.wait(timeout=poll)
                break
            except subprocess.TimeoutExpired:
                pass
            progress = read_progress(out_dir)
            if in_job and progress and {**progress, "updated": None} != shown:
                shown = {**progress, "updated": None}
                print(PROGRESS_PREFIX + json.dumps(progress, sort_keys=True), flush=True)
            if stop.is_set():
                outcome = ("RELEASE", "the evaluator was shut down; the request went back to the queue")
            elif time.monotonic() - started > settings.max_run_seconds:
                outcome = (queue.FAILED, f"timed out after {settings.max_run_seconds:.0f} s "
                                         "(LEADERBOARD_MAX_RUN_SECONDS): the run was stopped")
            elif in_job:
                if time.monotonic() - last_renewal >= settings.heartbeat_seconds:  # a read, not a commit
                    last_renewal = time.monotonic()
                    if _still_ours(store, request.path, owner) is False:
                        outcome = ("LOST", "the lease was lost (cancelled or recovered elsewhere)")
            elif time.monotonic() - last_renewal >= renewal_interval(settings):
                renewed = _renew(settings, store, request.path, owner, progress)
                if renewed is False:
                    outcome = ("LOST", "the lease was lost (cancelled or recovered elsewhere)")
                elif renewed:  # one not written (a lost race, an outage) is tried again at the next poll
                    last_renewal = time.monotonic()
            if outcome:
                stop_process(proc)
                break
        if copier is not None:
            copier.join(timeout=10)
    tail = log_tail(log_path, settings)
    if outcome and outcome[0] == "LOST":
        report.status, report.error = _lost(store, request.path, outcome[1])
        return report
    final_progress = read_progress(out_dir)
    if final_progress and not in_job:  # the last progress the worker wrote stays on the request
        _renew(settings, store, request.path, owner, final_progress)
    if outcome:
        closed = close_run(settings, store, request.path, owner, outcome[0], error=outcome[1], log_tail=tail)
    elif proc.returncode == 0 and (out_dir / "results.json").exists():
        ours = _still_ours(store, request.path, owner) if in_job else _renew(settings, store, request.path, owner)
        if not ours:  # never publish a run whose lease is someone else's
            report.status, report.error = "LOST", "the lease was lost before the results were published"
            return report
        try:  # a Job's cost needs the Jobs API's word on when it started (a lookup that fails fails nothing)
            job = job_seen(settings, store, request, owner) if in_job else None
            with _lease_kept(settings, store, request.path, owner, not in_job):  # a slow publish keeps the lease
                published = publish(store, request, out_dir, settings, job=job)
        except Exception as exc:  # a store that failed mid-publish loses nothing: the attempt counts, the request
            # returns to the queue (its answers are journaled, so the next attempt only grades and publishes again)
            closed = close_run(settings, store, request.path, owner, queue.PENDING, log_tail=tail,
                               max_attempts=settings.max_attempts,
                               error=settings.scrub(f"publishing the results failed: {type(exc).__name__}: {exc}"))
        else:
            closed = close_run(settings, store, request.path, owner, queue.FINISHED, log_tail=tail)
            if closed is not None and closed.status == queue.FINISHED:  # the details hold every response now
                shutil.rmtree(responses, ignore_errors=True)
                publish_board(settings, store, closed, published)
    elif proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        closed = close_run(settings, store, request.path, owner, queue.PENDING, log_tail=tail,
                           error=f"the worker was killed by {name}", max_attempts=settings.max_attempts)
    else:
        closed = close_run(settings, store, request.path, owner, queue.FAILED, log_tail=tail,
                           error=failure_reason(log_path, proc.returncode, settings))
    report.status = closed.status if closed else "LOST"
    report.error = closed.error if closed else "the lease was lost before the run was closed"
    return report


CLOSE_ATTEMPTS = 6  # rounds of queue.finish (each one already retries lost races) before the lease is left to expire


def close_run(settings: Settings, store: Store, path: str, owner: str, status: str, **fields) -> Request | None:
    """queue.finish, tried again on a store error or a lost race: a run that cannot be closed at all keeps its lease,
    which expires and returns the request to the queue (its answers are journaled, so the next attempt is quick).
    None when the lease is no longer ours (or could not be closed)."""
    for attempt in range(CLOSE_ATTEMPTS):
        try:
            return queue.finish(store, path, owner, status, **fields)
        except (StoreConflict, OSError) as exc:
            log.warning("closing %s as %s failed (%s); trying again", path, status, settings.scrub(str(exc)))
            time.sleep(backoff(attempt, base=0.5, cap=10.0))
    log.error("could not close %s as %s; its lease will expire and the request return to the queue", path, status)
    return None


@contextmanager
def _lease_kept(settings: Settings, store: Store, path: str, owner: str, renew: bool = True) -> Iterator[None]:
    """The lease renewed in the background while the block runs (the publish: several commits, each of which may
    lose races and wait), as the run's loop renews it while the evaluator runs: a lease lapses only when its worker
    is gone. `renew` False (a Job, whose lease the Space keeps): nothing is done."""
    if not renew:
        yield
        return
    done = threading.Event()

    def keep() -> None:
        wait = renewal_interval(settings)
        while not done.wait(wait):
            renewed = _renew(settings, store, path, owner)
            if renewed is False:
                return
            wait = renewal_interval(settings) if renewed else settings.heartbeat_seconds

    thread = threading.Thread(target=keep, name="lease-keeper", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=60)


def renewal_interval(settings: Settings) -> float:
    """Seconds between lease renewals (each one a write of the request, with its progress): every heartbeat on the
    local store; on the Hub store, where each one is a commit, a third of the lease (at least the heartbeat), so a
    run costs a few commits an hour, not one a minute."""
    if settings.store_backend == "local":
        return settings.heartbeat_seconds
    return max(settings.heartbeat_seconds, settings.lease_seconds / 3)


def _renew(settings: Settings, store: Store, path: str, owner: str, progress: dict | None = None) -> bool | None:
    """Extend our lease: True, or False when it is no longer ours; None when the store could not be written this
    time (a lost race, an outage): the run goes on and the next heartbeat tries again."""
    try:
        return queue.heartbeat(store, path, owner, settings.lease_seconds, progress)
    except (StoreConflict, OSError) as exc:
        log.warning("heartbeat for %s not written (%s); trying again at the next one", path,
                    settings.scrub(str(exc)))
        return None
