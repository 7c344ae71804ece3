"""The dispatcher (LEADERBOARD_EXECUTOR=hf-jobs): each claimed request runs as one Hugging Face Job.

One tick asks the Jobs API for the live Jobs of this store only (`status=SCHEDULING,RUNNING` and the store's label),
then brings the store's picture to the head (a Job closes its request before it ends, so a Job not live in that
listing is read with its close), and makes at most four commits to the requests repo (each a single step of the
store), most ticks none:
1. keep the leases of requests whose Job is live: a lease about to run out (less than LEASE_MARGIN_S left) is
   extended, so a Job that waited long in SCHEDULING never loses its request to recovery (and is never cancelled as
   an orphan); a request whose Job was started but not yet recorded (a restart between the two) gets the Job found
   by its labels. Then expired leases are recovered.
2. look at the Jobs of the requests RUNNING under a Job lease (`hf-job:...`): a live Job is left alone and, when
   RUNNING, its progress read from the last lines of its log (`tail`, no commit); a Job no longer live is inspected
   once: one stopped by its timeout FAILS its request ("timed out after ..."; never retried, so a run never costs
   more than its timeout), one that ended in ERROR for another reason (the platform's, a killed container), was
   cancelled or deleted returns its request to the queue with its stage message and log tail (attempts + 1, FAILED
   after LEADERBOARD_MAX_ATTEMPTS); one that completed without publishing fails its request. A request with no Job
   at all goes back to the queue. These closes are one commit.
3. claim up to LEADERBOARD_JOBS_MAX minus the live Jobs (one commit; never a served model's request, which runs on
   the Space itself: leaderboard.running.scheduler.Scheduler), each under a new lease owner whose lease lasts
   the Job's timeout (LEADERBOARD_MAX_RUN_SECONDS + LEADERBOARD_JOBS_TIMEOUT_MARGIN) plus LEASE_MARGIN_S: the Job
   never renews it, so a run costs no heartbeat commits; liveness comes from the Jobs API.
4. start one Job per claimed request, on the flavor of its size, with that timeout, and record the Jobs (one commit).
With LEADERBOARD_JOBS_BUDGET_USD the claim takes a request only when its Job's worst case fits the budget, reserved in
the claim's own commit (a request whose recorded cost plan alone is over the whole budget is claimed and FAILED with
its numbers, as one no flavor takes); what each Job cost replaces its reservation in a later commit of these (the ledger rides
along, never a commit of its own: leaderboard.running.job_budget, leaderboard.submissions.jobs_ledger).
A live Job whose request is no longer RUNNING under its lease (cancelled from the Queue tab) is cancelled. The Jobs
are found by label (a hash of the request key, see hf_jobs), so a restarted Space adopts its running Jobs instead of
starting a second one.
"""
from __future__ import annotations

import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for_futures
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Callable

from leaderboard.running import hf_jobs
from leaderboard.running.engine_args import job_image
from leaderboard.running.job_budget import JobsBudget
from leaderboard.running.job_flavors import TooLarge, hardware_prices
from leaderboard.running.run_memory import planned_flavor
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import jobs_ledger
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request

log = logging.getLogger(__name__)
LEASE_PREFIX = "hf-job:"
LEASE_MARGIN_S = 600.0  # a Job's lease outlasts its timeout by this much, and is extended when less is left
UNRECORDED_GRACE_S = 300.0  # a claimed request without a Job for this long goes back to the queue
LOG_READERS = 8  # live Jobs whose logs are read at once (each read waits for the Hub's replay of the tail)
# How long a tick waits for the RUNNING Jobs' logs. The Hub replays a log's tail at once, then holds the stream open
# while the Job is silent, and huggingface_hub reads on until its 5 s timeout: a tick takes the lines that came within
# this and goes on (a read still open ends by itself, its late lines unused).
PROGRESS_WAIT_S = 1.0


def is_job_lease(owner: str | None) -> bool:
    return bool(owner) and owner.startswith(LEASE_PREFIX)


def job_timeout(settings: Settings) -> int:
    """A Job's timeout: the evaluator's own limit plus the margin for starting, loading and publishing."""
    return jobs_ledger.job_timeout(settings)


def lease_seconds(settings: Settings) -> float:
    return job_timeout(settings) + LEASE_MARGIN_S


def lease_left(request: Request) -> float:
    """Seconds until the request's lease runs out (0 when it has none or it is over)."""
    expires = queue.parse_time(request.lease_expires)
    return 0.0 if expires is None else max(0.0, (expires - queue.now()).total_seconds())


@dataclass
class DispatchReport:
    """What one tick did (request keys)."""

    started: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
    renewed: list[str] = field(default_factory=list)  # leases extended while their Job is live
    returned: list[str] = field(default_factory=list)  # back to the queue, or FAILED after the attempts
    failed: list[str] = field(default_factory=list)
    cancelled_jobs: list[str] = field(default_factory=list)
    error: str | None = None


class Dispatcher:
    """Starts and watches the Jobs; `live` holds what the Queue tab shows of each running request's Job."""

    def __init__(self, settings: Settings, store: Store, api):
        self.settings, self.store, self.api = settings, store, api
        self.live: dict[str, hf_jobs.JobState] = {}  # request key -> its Job, as last seen
        self._namespace: str | None = settings.jobs_namespace or None
        self._prices: dict[str, str] | None = None
        self.budget = JobsBudget(lambda: self.settings, store, api, lambda: self.namespace,
                                 lambda: job_timeout(self.settings))

    # ---- the Jobs API -------------------------------------------------------------------------------------

    @property
    def namespace(self) -> str:
        if self._namespace is None:
            self._namespace = self.api.whoami()["name"]
        return self._namespace

    def prices(self) -> dict[str, str]:
        """Flavor -> cost rate (e.g. "$0.80/h") from the Jobs hardware list, read once."""
        if self._prices is None:
            self._prices = hardware_prices(self.api)
        return self._prices

    def _live_jobs(self) -> list:
        """The live Jobs (SCHEDULING or RUNNING) of this store: one listing, never the Jobs of the past."""
        labels = {hf_jobs.LABEL_STORE: hf_jobs.store_label(self.settings)}
        return list(self.api.list_jobs(status=list(hf_jobs.LIVE_STAGES), labels=labels, namespace=self.namespace))

    def log_lines(self, job_id: str, tail: int = hf_jobs.LOG_LINES) -> list[str]:
        """The last `tail` lines of a Job's log ([] when it cannot be read), secrets scrubbed."""
        lines: list[str] = []
        self.read_log(job_id, lines, tail)
        return lines

    def read_log(self, job_id: str, into: list[str], tail: int) -> None:
        """Append the last `tail` lines of a Job's log to `into` as they arrive, secrets scrubbed (none when it
        cannot be read)."""
        try:
            for line in self.api.fetch_job_logs(job_id=job_id, namespace=self.namespace, tail=tail):
                into.append(self.settings.scrub(line))
        except Exception as exc:  # noqa: BLE001 - a log that cannot be read is shown as none
            log.warning("the log of Job %s could not be read: %s", job_id, type(exc).__name__)
            into.clear()

    def log_tail(self, job_id: str) -> str:
        lines = hf_jobs.evaluator_lines(self.log_lines(job_id))
        return "\n".join(lines[-hf_jobs.LOG_LINES:])

    def cancel(self, job_id: str) -> bool:
        try:
            self.api.cancel_job(job_id=job_id, namespace=self.namespace)
            return True
        except Exception as exc:  # noqa: BLE001 - the next tick tries again
            log.warning("Job %s could not be cancelled: %s", job_id, self.settings.scrub(str(exc)))
            return False

    # ---- one tick -----------------------------------------------------------------------------------------

    def tick(self, prepare: Callable[[], None] | None = None) -> DispatchReport:
        """One tick (the Scheduler runs one at a time). `prepare` runs once the live Jobs are listed and before the
        requests are read (default: refresh the store's picture; the Scheduler's also squashes), so a Job that closed
        its request and then ended before the listing is read closed, never as a Job that ended without publishing.
        A prepare that fails is logged and the tick goes on with the picture it has."""
        report = DispatchReport()
        try:
            self._tick(report, prepare or (lambda: self.store.refresh()))
        except Exception as exc:  # noqa: BLE001 - an outage of the store or the Jobs API: the next tick tries
            report.error = self.settings.scrub(f"{type(exc).__name__}: {exc}")
            log.warning("dispatch tick stopped: %s", report.error)
        return report

    def _tick(self, report: DispatchReport, prepare: Callable[[], None]) -> None:
        settings = self.settings
        live_jobs = self._live_jobs()
        try:
            prepare()
        except Exception as exc:  # noqa: BLE001 - the reads below say the same if the store is out; the tick goes on
            log.warning("the store could not be refreshed: %s", settings.scrub(str(exc)))
        live_by_id = {job.id: job for job in live_jobs}
        live_by_label: dict[str, list] = {}
        for job in live_jobs:
            live_by_label.setdefault((job.labels or {}).get(hf_jobs.LABEL_REQUEST), []).append(job)
        self._keep_leases(queue.all_requests(self.store), live_by_id, live_by_label, report)
        queue.recover(self.store, settings.max_attempts)  # leases whose Job is gone and whose time is over
        requests = queue.all_requests(self.store)
        closes, live = [], {}
        for request in requests:
            if request.status != queue.RUNNING or not is_job_lease(request.lease_owner):
                continue
            job_id = request.job.get("id")
            job = self._live_job(request, live_by_id, live_by_label)
            if job is None and job_id:
                job = self._inspect(job_id)  # no longer live: its end, asked once
            if job is None:
                if self._claimed_long_ago(request):
                    closes.append((request.path, request.lease_owner, "RELEASE",
                                   {"error": "no Job was started for this request; it went back to the queue"}))
                    report.returned.append(request.key)
                continue
            stage = hf_jobs.stage_of(job)
            if stage in hf_jobs.LIVE_STAGES:
                live[request.key] = (job, request)
                continue
            closes.append(self._ended(request, job, stage, report))
        by_label = {hf_jobs.request_label(r.key): r for r in requests}
        for job in live_jobs:  # a live Job whose request was cancelled, taken back or deleted is stopped
            if self._orphan(job, by_label) and self.cancel(job.id):
                report.cancelled_jobs.append(job.id)
        self.budget.look(requests, live_jobs)  # what ended Jobs cost: it rides along the commits below
        queue.finish_many(self.store, closes, also=self.budget.ride())
        # a Job whose request is already closed is still live while it winds down: it holds its place too
        busy = max(len(live), len(live_jobs))
        states = self._states(live)
        states.update(self._start(settings.jobs_max - busy, live_by_label, report))
        self.live = states

    def _keep_leases(self, requests: list[Request], live_by_id: dict, live_by_label: dict,
                     report: DispatchReport) -> None:
        """One commit, only when needed: extend the leases of requests whose Job is live and whose lease has less
        than LEASE_MARGIN_S left (a Job may wait long in SCHEDULING), and record the Jobs found by label for
        requests whose Job was started but not recorded."""
        changes = {}
        for request in requests:
            if request.status != queue.RUNNING or not is_job_lease(request.lease_owner):
                continue
            job_id = request.job.get("id")
            job = self._live_job(request, live_by_id, live_by_label)
            if job is None:
                continue
            record = None if job_id else self._record(job, request.job.get("flavor", ""))
            if record is not None or lease_left(request) < LEASE_MARGIN_S:
                changes[request.path] = (request.lease_owner, record)
                (report.adopted if record is not None else report.renewed).append(request.key)
        adopted = {owner: record["id"] for owner, record in changes.values() if record is not None}
        record_jobs(self.store, changes, lease_seconds=lease_seconds(self.settings),
                          also=self.budget.ride(attach=adopted))

    def _states(self, live: dict[str, tuple]) -> dict[str, hf_jobs.JobState]:
        """What the Queue tab shows of each live Job: the logs of the RUNNING ones are read at once, in threads,
        for at most PROGRESS_WAIT_S (a silent Job's stream would hold the tick 5 s)."""
        lines: dict[str, list[str]] = {key: [] for key in live}
        running = [key for key, (job, _request) in live.items() if hf_jobs.stage_of(job) == "RUNNING"]
        if running:
            pool = ThreadPoolExecutor(max_workers=min(LOG_READERS, len(running)))
            reads = [pool.submit(self.read_log, live[key][0].id, lines[key], hf_jobs.PROGRESS_TAIL) for key in running]
            wait_for_futures(reads, timeout=PROGRESS_WAIT_S)
            pool.shutdown(wait=False)
        return {key: self._state(job, request, list(lines[key])) for key, (job, request) in live.items()}

    @staticmethod
    def _orphan(job, by_label: dict[str, Request]) -> bool:
        """Whether a live Job no longer has its request to evaluate: the request is gone, cancelled, or queued or
        running under another lease. (A Job whose request it FINISHED or FAILED is ending on its own.)"""
        labels = job.labels or {}
        request = by_label.get(labels.get(hf_jobs.LABEL_REQUEST))
        if request is None or request.status == queue.CANCELLED:
            return True
        if request.status in (queue.FINISHED, queue.FAILED):
            return False
        return (request.status == queue.PENDING
                or hf_jobs.label(request.lease_owner or "") != labels.get(hf_jobs.LABEL_OWNER))

    def _inspect(self, job_id: str):
        """A Job no longer live, asked for once (None when it cannot be read: a deleted Job reads as gone)."""
        return self.budget.inspect(job_id)

    @classmethod
    def _live_job(cls, request: Request, live_by_id: dict, live_by_label: dict):
        """The request's live Job: the one recorded on it, or (none recorded yet) the one found by its labels."""
        job_id = request.job.get("id")
        return live_by_id.get(job_id) if job_id else cls._find(live_by_label, request)

    @staticmethod
    def _find(live_by_label: dict, request: Request):
        """The live Job started for this request under its current lease (found by its labels), if any."""
        for job in live_by_label.get(hf_jobs.request_label(request.key), []):
            if (job.labels or {}).get(hf_jobs.LABEL_OWNER) == hf_jobs.label(request.lease_owner or ""):
                return job
        return None

    @staticmethod
    def _claimed_long_ago(request: Request) -> bool:
        started = queue.parse_time(request.started_time)
        return started is None or queue.now() - started > timedelta(seconds=UNRECORDED_GRACE_S)

    def _record(self, job, flavor: str) -> dict:
        timeout = getattr(job, "timeout", None) or job_timeout(self.settings)
        return {"id": job.id, "namespace": self.namespace, "flavor": flavor or str(getattr(job, "flavor", "") or ""),
                "url": getattr(job, "url", "") or "", "started": queue.iso(queue.now()), "timeout": int(timeout)}

    def _state(self, job, request: Request, lines: list[str]) -> hf_jobs.JobState:
        flavor = request.job.get("flavor") or str(getattr(job, "flavor", "") or "")
        return hf_jobs.JobState(id=job.id, stage=hf_jobs.stage_of(job), flavor=flavor,
                                message=(job.status.message or "") if job.status else "",
                                progress=hf_jobs.last_progress(lines), scheduling_s=hf_jobs.scheduling_seconds(job))

    def _ended(self, request: Request, job, stage: str, report: DispatchReport) -> tuple[str, str, str, dict]:
        """How to close a request whose Job is over but which is still RUNNING (the Job did not close it)."""
        message = self.settings.scrub((job.status.message or "") if job.status else "")
        tail = self.log_tail(job.id)
        if stage == "COMPLETED":
            report.failed.append(request.key)
            return (request.path, request.lease_owner, queue.FAILED,
                    {"error": "the Job finished but did not publish its results", "log_tail": tail})
        timeout = float(request.job.get("timeout") or job_timeout(self.settings))
        if stage == "ERROR" and hf_jobs.timed_out(job, timeout):
            report.failed.append(request.key)
            why = (f"timed out after {timeout:.0f} s ({timeout / 3600:.1f} h: LEADERBOARD_MAX_RUN_SECONDS plus "
                   f"LEADERBOARD_JOBS_TIMEOUT_MARGIN); the Job {job.id} was stopped and is not retried")
            return (request.path, request.lease_owner, queue.FAILED,
                    {"error": why + (f" ({message})" if message else ""), "log_tail": tail})
        report.returned.append(request.key)
        why = f"the Job {job.id} ended {stage}" + (f": {message}" if message else "")
        return (request.path, request.lease_owner, queue.PENDING,
                {"error": why, "log_tail": tail, "max_attempts": self.settings.max_attempts})

    def _start(self, free: int, live_by_label: dict, report: DispatchReport) -> dict[str, hf_jobs.JobState]:
        """Claim up to `free` requests (one commit), start their Jobs, record them (one commit)."""
        settings = self.settings
        if free > 0:
            self.budget.rates()  # the prices the claim's gate reserves with (read again at most hourly)
        self.budget.refused = {}
        claimed = queue.claim_many(self.store, lambda _r: f"{LEASE_PREFIX}{uuid.uuid4().hex[:12]}",
                                   lease_seconds(settings), free, accept=lambda r: not r.served,
                                   gate_of=self.budget.gate)
        records, closes, started = {}, [], {}
        for request in claimed:
            over = self.budget.refused.get(request.path)
            if over:  # its plan is over the whole Jobs budget: it would wait forever
                closes.append((request.path, request.lease_owner, queue.FAILED, {"error": f"{over}, so it was not run"}))
                report.failed.append(request.key)
                continue
            try:
                flavor, batch = planned_flavor(settings, request)
            except TooLarge as exc:
                closes.append((request.path, request.lease_owner, queue.FAILED, {"error": str(exc)}))
                report.failed.append(request.key)
                continue
            if live_by_label.get(hf_jobs.request_label(request.key)):  # never two Jobs for one request
                closes.append((request.path, request.lease_owner, "RELEASE",
                               {"error": "an earlier Job of this request is still running; waiting for it"}))
                continue
            try:
                job = self.api.run_job(image=job_image(settings),
                                       command=hf_jobs.job_command(settings, request, request.lease_owner, flavor,
                                                                   batch),
                                       env=hf_jobs.job_env(settings, flavor, batch),
                                       secrets=hf_jobs.job_secrets(settings),
                                       flavor=flavor, timeout=job_timeout(settings),
                                       volumes=hf_jobs.job_volumes(settings),
                                       name=hf_jobs.job_name(request),
                                       labels=hf_jobs.job_labels(settings, request, request.lease_owner),
                                       namespace=self.namespace)
            except Exception as exc:  # noqa: BLE001 - the request goes back to the queue with the reason
                error = settings.scrub(f"the Job could not be started: {type(exc).__name__}: {exc}")
                closes.append((request.path, request.lease_owner, queue.PENDING,
                               {"error": error, "max_attempts": settings.max_attempts}))
                report.returned.append(request.key)
                continue
            records[request.path] = (request.lease_owner, self._record(job, flavor))
            started[request.key] = hf_jobs.JobState(id=job.id, stage=hf_jobs.stage_of(job) or "SCHEDULING",
                                                    flavor=flavor, scheduling_s=hf_jobs.scheduling_seconds(job))
            report.started.append(request.key)
        record_jobs(self.store, records, also=self.budget.ride(
            attach={owner: record["id"] for owner, record in records.values()}))
        queue.finish_many(self.store, closes, also=self.budget.ride(release=tuple(owner for _, owner, _, _ in closes)))
        return started


def record_jobs(store: Store, jobs: dict[str, tuple[str, dict | None]],
                lease_seconds: float | None = None, also=None) -> list[str]:
    """In one step of the store, for each running request (path -> (lease owner, job record or None)): write its Job
    record (None: keep it) and, with `lease_seconds`, extend its lease to now + lease_seconds. Returns the paths
    written (a request no longer RUNNING under that owner is left alone). `also()`, when given, runs inside the same
    step when it wrote any (as in finish_many)."""
    if not jobs:
        return []

    def step() -> list[str]:
        written = []
        for path, (owner, job) in jobs.items():
            request = queue.load_or_none(store, path)
            if request is None or request.status != queue.RUNNING or request.lease_owner != owner:
                continue
            if job is not None:
                request.job = job
            if lease_seconds is not None:
                request.lease_expires = queue.iso(queue.now() + timedelta(seconds=lease_seconds))
            queue.save(store, request)
            written.append(path)
        if also is not None and written:
            also()
        return written

    return queue.transact(store, step)
