"""The dispatcher (LEADERBOARD_EXECUTOR=hf-jobs): each claimed request runs as one Hugging Face Job.

One tick, with at most three commits to the requests repo (each a single step of the store):
1. look at the Jobs of the requests RUNNING under a Job lease (`hf-job:...`), through the Jobs API: a live Job is
   left alone and its progress read from its log (no commit); a Job that ended with an error, was cancelled or
   deleted returns its request to the queue (attempts + 1, FAILED after LEADERBOARD_MAX_ATTEMPTS) with its log tail;
   a Job that completed without publishing fails its request with its log tail. A request whose Job was started
   but not yet recorded (a restart between the two) gets the Job found by its labels; one with no Job at all goes
   back to the queue. These closes are one commit.
2. claim up to LEADERBOARD_JOBS_MAX minus the live Jobs (one commit), each under a new lease owner whose lease lasts
   the Job's whole time (LEADERBOARD_MAX_RUN_SECONDS plus a margin): the Job never renews it, so a run costs no
   heartbeat commits; liveness comes from the Jobs API.
3. start one Job per claimed request, on the flavor of its size, and record the Jobs (one commit).
A live Job whose request is no longer RUNNING under its lease (cancelled from the Queue tab) is cancelled. The Jobs
are found by label, so a restarted Space adopts its running Jobs instead of starting a second one.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from leaderboard.running import hf_jobs
from leaderboard.running.job_flavors import TooLarge, flavor_for, hardware_prices
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request

log = logging.getLogger(__name__)
LEASE_PREFIX = "hf-job:"
LEASE_MARGIN_S = 600.0  # a Job's lease outlasts its timeout by this much
UNRECORDED_GRACE_S = 300.0  # a claimed request without a Job for this long goes back to the queue


def is_job_lease(owner: str | None) -> bool:
    return bool(owner) and owner.startswith(LEASE_PREFIX)


@dataclass
class DispatchReport:
    """What one tick did (request keys)."""

    started: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
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

    def _our_jobs(self) -> list:
        labels = {hf_jobs.LABEL_STORE: hf_jobs.label(self.settings.results_repo)}
        return list(self.api.list_jobs(labels=labels, namespace=self.namespace))

    def log_lines(self, job_id: str) -> list[str]:
        """A Job's log so far ([] when it cannot be read), secrets scrubbed."""
        try:
            lines = list(self.api.fetch_job_logs(job_id=job_id, namespace=self.namespace))
        except Exception as exc:  # noqa: BLE001 - a log that cannot be read is shown as none
            log.warning("the log of Job %s could not be read: %s", job_id, type(exc).__name__)
            return []
        return [self.settings.scrub(line) for line in lines]

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

    def tick(self) -> DispatchReport:
        """One tick (the Scheduler runs one at a time)."""
        report = DispatchReport()
        try:
            self._tick(report)
        except Exception as exc:  # noqa: BLE001 - an outage of the store or the Jobs API: the next tick tries
            report.error = self.settings.scrub(f"{type(exc).__name__}: {exc}")
            log.warning("dispatch tick stopped: %s", report.error)
        return report

    def _tick(self, report: DispatchReport) -> None:
        settings = self.settings
        queue.recover(self.store, settings.max_attempts)  # leases that outlived their Job's time
        requests = queue.all_requests(self.store)
        jobs = self._our_jobs()
        by_id = {job.id: job for job in jobs}
        live_by_label = {}
        for job in jobs:
            if hf_jobs.stage_of(job) in hf_jobs.LIVE_STAGES:
                live_by_label.setdefault((job.labels or {}).get(hf_jobs.LABEL_REQUEST), []).append(job)
        running = [r for r in requests if r.status == queue.RUNNING and is_job_lease(r.lease_owner)]
        closes, adopt, live = [], {}, {}
        for request in running:
            job = by_id.get(request.job.get("id")) if request.job.get("id") else None
            if job is None and request.job.get("id"):
                job = self._inspect(request.job["id"])
            if job is None:
                job = self._find(live_by_label, request)
                if job is not None:
                    adopt[request.path] = (request.lease_owner, self._record(job, request.job.get("flavor", "")))
                    live[request.key] = self._state(job, request)
                    report.adopted.append(request.key)
                elif self._claimed_long_ago(request):
                    closes.append((request.path, request.lease_owner, "RELEASE",
                                   {"error": "no Job was started for this request; it went back to the queue"}))
                    report.returned.append(request.key)
                continue
            stage = hf_jobs.stage_of(job)
            if stage in hf_jobs.LIVE_STAGES:
                live[request.key] = self._state(job, request)
                continue
            closes.append(self._ended(request, job, stage, report))
        by_label = {hf_jobs.label(r.key): r for r in requests}
        for job in jobs:  # a live Job whose request was cancelled, taken back or deleted is stopped
            if hf_jobs.stage_of(job) in hf_jobs.LIVE_STAGES and self._orphan(job, by_label):
                if self.cancel(job.id):
                    report.cancelled_jobs.append(job.id)
        queue.finish_many(self.store, closes)
        queue.record_jobs(self.store, adopt)
        # a Job whose request is already closed is still live while it winds down: it holds its place too
        busy = max(len(live), sum(len(found) for found in live_by_label.values()))
        free = settings.jobs_max - busy
        started = self._start(free, live_by_label, report)
        live.update(started)
        self.live = live

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
        return request.status == queue.PENDING or hf_jobs.label(request.lease_owner) != labels.get(hf_jobs.LABEL_OWNER)

    def _inspect(self, job_id: str):
        try:
            return self.api.inspect_job(job_id=job_id, namespace=self.namespace)
        except Exception as exc:  # noqa: BLE001 - a deleted Job (404) reads as gone
            log.warning("Job %s could not be inspected: %s", job_id, type(exc).__name__)
            return None

    @staticmethod
    def _find(live_by_label: dict, request: Request):
        """The live Job started for this request under its current lease (found by its labels), if any."""
        for job in live_by_label.get(hf_jobs.label(request.key), []):
            if (job.labels or {}).get(hf_jobs.LABEL_OWNER) == hf_jobs.label(request.lease_owner):
                return job
        return None

    @staticmethod
    def _claimed_long_ago(request: Request) -> bool:
        started = queue.parse_time(request.started_time)
        return started is None or queue.now() - started > timedelta(seconds=UNRECORDED_GRACE_S)

    def _record(self, job, flavor: str) -> dict:
        return {"id": job.id, "namespace": self.namespace, "flavor": flavor or str(getattr(job, "flavor", "") or ""),
                "url": getattr(job, "url", "") or "", "started": queue.iso(queue.now())}

    def _state(self, job, request: Request) -> hf_jobs.JobState:
        lines = self.log_lines(job.id)
        flavor = request.job.get("flavor") or str(getattr(job, "flavor", "") or "")
        return hf_jobs.JobState(id=job.id, stage=hf_jobs.stage_of(job), flavor=flavor,
                                message=(job.status.message or "") if job.status else "",
                                progress=hf_jobs.last_progress(lines))

    def _ended(self, request: Request, job, stage: str, report: DispatchReport) -> tuple[str, str, str, dict]:
        """How to close a request whose Job is over but which is still RUNNING (the Job did not close it)."""
        message = self.settings.scrub((job.status.message or "") if job.status else "")
        tail = self.log_tail(job.id)
        if stage == "COMPLETED":
            report.failed.append(request.key)
            return (request.path, request.lease_owner, queue.FAILED,
                    {"error": "the Job finished but did not publish its results", "log_tail": tail})
        report.returned.append(request.key)
        why = f"the Job {job.id} ended {stage}" + (f": {message}" if message else "")
        return (request.path, request.lease_owner, queue.PENDING,
                {"error": why, "log_tail": tail, "max_attempts": self.settings.max_attempts})

    def _start(self, free: int, live_by_label: dict, report: DispatchReport) -> dict[str, hf_jobs.JobState]:
        """Claim up to `free` requests (one commit), start their Jobs, record them (one commit)."""
        settings = self.settings
        lease = settings.max_run_seconds + LEASE_MARGIN_S
        claimed = queue.claim_many(self.store, lambda _r: f"{LEASE_PREFIX}{uuid.uuid4().hex[:12]}", lease, free)
        records, closes, started = {}, [], {}
        for request in claimed:
            try:
                flavor = flavor_for(settings, request.params_billions, request.precision)
            except TooLarge as exc:
                closes.append((request.path, request.lease_owner, queue.FAILED, {"error": str(exc)}))
                report.failed.append(request.key)
                continue
            if live_by_label.get(hf_jobs.label(request.key)):  # never two Jobs for one request
                closes.append((request.path, request.lease_owner, "RELEASE",
                               {"error": "an earlier Job of this request is still running; waiting for it"}))
                continue
            try:
                job = self.api.run_job(image=settings.jobs_image, command=hf_jobs.job_command(settings, request,
                                                                                               request.lease_owner),
                                       env=hf_jobs.job_env(settings), secrets=hf_jobs.job_secrets(settings),
                                       flavor=flavor, timeout=int(settings.max_run_seconds),
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
                                                    flavor=flavor)
            report.started.append(request.key)
        queue.record_jobs(self.store, records)
        queue.finish_many(self.store, closes)
        return started
