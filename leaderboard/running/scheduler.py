"""The periodic job: recover stale leases, bring the board up to date, claim the oldest request and run it
(leaderboard.running.attempt), one evaluation per tick.

A store that cannot be read or written, or a race lost to other claimers, ends a tick with the reason; nothing is
raised out of the loop. `Scheduler` runs ticks on an APScheduler BackgroundScheduler (the Space), or hands them to
the Hugging Face Jobs dispatcher (leaderboard.running.job_dispatch); `python -m leaderboard.running.worker` runs the
same loop without the UI (run_worker_loop).
"""
from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone

from apscheduler.schedulers.background import BackgroundScheduler

from leaderboard.board.publish import rebuild_board
from leaderboard.running import model_cache
from leaderboard.running.attempt import TickReport, close_run, run_request
from leaderboard.settings import Settings
from leaderboard.store import Store, StoreBusy
from leaderboard.submissions import records as queue

log = logging.getLogger(__name__)
# a tick that is still running when the next is due is skipped on purpose; APScheduler would warn each time
logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)


REFRESH_ATTEMPTS = 3  # a tick waits out this many 429s of the Hub before it gives up until the next tick


def prepare_store(settings: Settings, store: Store, stop: threading.Event | None = None) -> None:
    """What each tick does first: bring the store's picture up to date (a 429 is waited out, as long as the Hub
    asks), then squash the requests repo's history when it has grown past LEADERBOARD_SQUASH_AFTER_COMMITS (no
    transaction is open at the start of a tick)."""
    started = time.monotonic()
    for attempt in range(REFRESH_ATTEMPTS):
        try:  # a repo already refreshed by an earlier attempt of this tick is not asked again
            store.refresh(max_age=time.monotonic() - started if attempt else 0.0)
            break
        except Exception as exc:  # noqa: BLE001 - only a 429 (it carries retry_after) is waited out here
            wait = getattr(exc, "retry_after", None)
            if wait is None or attempt == REFRESH_ATTEMPTS - 1:
                raise
            log.warning("the Hub asked to slow down; the tick waits %.0f s", wait)
            if stop is not None and stop.wait(wait):
                raise
            if stop is None:
                time.sleep(wait)
    squash = getattr(store, "squash_history", None)
    if squash is not None and settings.squash_after_commits:
        squash(settings.squash_after_commits)


def tick(settings: Settings, store: Store, stop: threading.Event | None = None, owner: str | None = None) -> TickReport:
    """Refresh the store's picture, recover expired leases, bring the board up to date, claim the oldest PENDING
    request and run it to the end, then (LEADERBOARD_DELETE_MODELS) delete from this machine's Hub cache the models
    this leaderboard downloaded that the queue no longer needs (leaderboard.running.model_cache). Those first steps
    can wait: when the commit budget has no room for them they are deferred to a later tick (StoreBusy), keeping the
    room for closing runs. A store that cannot be read or written right now ends the tick with the reason (the next
    tick tries again)."""
    try:
        prepare_store(settings, store, stop)
        with store.without_waiting():
            recovered = [r.path for r in queue.recover(store, settings.max_attempts)]
            rebuild_board(settings, store, only_if_stale=True)
            owner = owner or queue.worker_id()
            request = queue.claim(store, owner, settings.lease_seconds)
    except StoreBusy as busy:
        log.info("tick deferred: %s", busy)
        return TickReport(error=f"deferred: {busy}")
    except Exception as exc:  # noqa: BLE001 - an outage or a bug of ours: this tick does nothing, the next one tries
        error = settings.scrub(f"the store could not be read or written: {type(exc).__name__}: {exc}")
        log.warning("tick skipped: %s", error)
        return TickReport(error=error)
    if request is None:
        return TickReport(recovered=recovered)
    report = _run_claimed(settings, store, request, owner, stop)
    report.recovered = recovered
    return report


def served_tick(settings: Settings, store: Store, stop: threading.Event | None = None,
                owner: str | None = None) -> TickReport:
    """LEADERBOARD_EXECUTOR=hf-jobs: claim the oldest PENDING served request and run it on this machine (see
    Scheduler). The dispatcher's ticks recover expired leases and keep the board, this one only takes served
    requests (the dispatcher never does), so a long served run never holds up dispatching."""
    try:
        store.refresh(max_age=settings.hub_refresh_seconds)  # the refresh timer and the dispatcher keep it current
        with store.without_waiting():
            owner = owner or queue.worker_id()
            request = queue.claim(store, owner, settings.lease_seconds, accept=lambda r: r.served)
    except StoreBusy as busy:
        return TickReport(error=f"deferred: {busy}")
    except Exception as exc:  # noqa: BLE001 - an outage: this tick does nothing, the next one tries
        error = settings.scrub(f"the store could not be read or written: {type(exc).__name__}: {exc}")
        log.warning("served tick skipped: %s", error)
        return TickReport(error=error)
    return TickReport() if request is None else _run_claimed(settings, store, request, owner, stop)


def _run_claimed(settings: Settings, store: Store, request: queue.Request, owner: str,
                 stop: threading.Event | None) -> TickReport:
    """Run one claimed request to its end and close it; then free this machine's Hub cache (model_cache)."""
    downloads = model_cache.note_download(settings, request)  # before the evaluator fetches the model
    try:
        report = run_request(settings, store, request, owner, stop)
    except Exception as exc:  # no job is lost: an error of ours closes the request with its reason
        error = settings.scrub(f"the scheduler failed to run the worker: {type(exc).__name__}: {exc}")
        closed = close_run(settings, store, request.path, owner, queue.FAILED, error=error)
        report = TickReport(request=request.path, status=closed.status if closed else None, error=error)
    # this machine's disk (a Job's is thrown away with it); a lost lease is a cancel (or a recovery elsewhere)
    model_cache.free_after_run(settings, store, request, downloaded=downloads, cancelled=report.status in ("LOST", "CANCELLED"))
    return report


class Scheduler:
    """Ticks on an APScheduler BackgroundScheduler, one at a time; shutdown() returns work to the queue.

    With LEADERBOARD_EXECUTOR=hf-jobs a tick is the dispatcher's (leaderboard.running.job_dispatch): the evaluations run
    as Hugging Face Jobs, `jobs_api` (default: huggingface_hub.HfApi with HF_TOKEN) starts and watches them, and
    `dispatcher.live` says what each running request's Job is doing. A served model's request (an endpoint answers
    it: nothing to download, no GPU) is never sent to a Job: a second job of the scheduler (`served_tick`) claims
    served requests only and runs them on the Space itself, one at a time, so a long served run never holds up
    dispatching. On the Space rather than a cpu-basic Job because the work is network-bound (waiting on HTTP
    answers): a Job would add minutes of start-up and a bill for that waiting, and the endpoint's token
    (LEADERBOARD_MODEL_TOKEN) would have to be handed to a Job."""

    def __init__(self, settings: Settings, store: Store, jobs_api=None):
        self.settings, self.store = settings, store
        self.stop = threading.Event()
        self._scheduler = BackgroundScheduler(daemon=True)
        self.dispatcher = None
        if settings.executor == "hf-jobs":
            from leaderboard.running.job_dispatch import Dispatcher

            if jobs_api is None:
                from huggingface_hub import HfApi

                jobs_api = HfApi(token=settings.hf_token or None)
            self.dispatcher = Dispatcher(settings, store, jobs_api)
            if settings.on_space and settings.jobs_budget_usd is None:
                log.warning("LEADERBOARD_JOBS_BUDGET_USD is not set: nothing limits what the Hugging Face Jobs cost "
                            "(up to LEADERBOARD_JOBS_MAX at once, each up to LEADERBOARD_MAX_ATTEMPTS x its timeout); "
                            "set it to cap their spend over LEADERBOARD_JOBS_BUDGET_DAYS")

    def _tick(self) -> None:
        if self.stop.is_set():
            return
        if self.dispatcher is not None:
            report = self.dispatcher.tick(prepare=lambda: prepare_store(self.settings, self.store, self.stop))
            # a Job killed between closing its request and adding its row leaves the board behind: catch it up
            rebuild_board(self.settings, self.store, only_if_stale=True)
            for key in report.started:
                print(f"[dispatcher] {key}: Job started", flush=True)
            for key in report.returned + report.failed:
                print(f"[dispatcher] {key}: its Job ended; see the Queue tab", flush=True)
            return
        self._run(tick, "scheduler")

    def _served_tick(self) -> None:
        if not self.stop.is_set():
            self._run(served_tick, "served")

    def _run(self, one_tick, name: str) -> None:
        """One local tick (`tick` or `served_tick`), its request's outcome printed; never raises."""
        try:
            report = one_tick(self.settings, self.store, self.stop)
        except Exception as exc:  # noqa: BLE001 - the Space keeps serving; the next tick tries again
            log.exception("%s tick failed: %s", name, self.settings.scrub(str(exc)))
            return
        if report.request:
            print(f"[{name}] {report.request}: {report.status} {report.error or ''}".rstrip(), flush=True)

    def start(self, first_tick_now: bool = True) -> None:
        first = datetime.now(timezone.utc) if first_tick_now else None
        self._scheduler.add_job(self._tick, "interval", seconds=self.settings.scheduler_interval, id="evaluate",
                                max_instances=1, coalesce=True, next_run_time=first)
        if self.dispatcher is not None:  # served requests run here, never as Jobs
            self._scheduler.add_job(self._served_tick, "interval", seconds=self.settings.scheduler_interval,
                                    id="evaluate-served", max_instances=1, coalesce=True, next_run_time=first)
        self._scheduler.start()

    def shutdown(self) -> None:
        self.stop.set()
        if self._scheduler.running:
            self._scheduler.shutdown(wait=True)


def run_worker_loop(settings: Settings, store: Store, stop: threading.Event, max_ticks: int | None = None) -> int:
    """The standalone worker: tick until stopped; sleep the interval when the queue is empty. Returns runs done."""
    runs = ticks = 0
    while not stop.is_set() and (max_ticks is None or ticks < max_ticks):
        ticks += 1
        try:
            report = tick(settings, store, stop)
        except Exception as exc:  # noqa: BLE001 - the worker survives any error and tries again after the interval
            print(f"[worker] tick failed: {settings.scrub(f'{type(exc).__name__}: {exc}')}", flush=True)
            stop.wait(settings.scheduler_interval)
            continue
        if report.request:
            runs += 1
            print(f"[worker] {report.request}: {report.status} {report.error or ''}".rstrip(), flush=True)
        else:
            if report.error:
                print(f"[worker] {report.error}", flush=True)
            stop.wait(settings.scheduler_interval)
    return runs
