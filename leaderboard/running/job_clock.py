"""Inside a Hugging Face Job, at publish: what the Jobs API says of this Job, for the run's cost
(leaderboard.board.costs): its flavor, when it turned RUNNING (`started_at`) and the flavor's price per hour.

The Job is the one recorded on its request (`request.job`: id and namespace, written by the dispatcher right after
starting it; the request is read again from the store, since the Job may have started before the record), else the
live one carrying the request's labels (hf_jobs.job_labels). A lookup that fails leaves what it could not read None
and is logged: it never fails the publish.
"""
from __future__ import annotations

import logging
from datetime import datetime

from leaderboard.board.costs import JobSeen
from leaderboard.running import hf_jobs
from leaderboard.running.job_flavors import hardware_rates
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request

log = logging.getLogger(__name__)


def _recorded(store: Store, request: Request) -> dict:
    """The Job record on the request as the store holds it now ({} when it cannot be read)."""
    try:
        stored = queue.load(store, request.path)
    except Exception as exc:  # noqa: BLE001 - the request as the Job was given it will do
        log.warning("could not read %s again for its Job: %s", request.path, type(exc).__name__)
        stored = None
    job = (stored or request).job
    return job if isinstance(job, dict) else {}


def _find(api, settings: Settings, request: Request, owner: str, recorded: dict):
    """The JobInfo of this Job: inspected by its recorded id, else the newest live Job with the request's labels."""
    if recorded.get("id"):
        return api.inspect_job(job_id=str(recorded["id"]), namespace=recorded.get("namespace") or None)
    found = api.list_jobs(labels=hf_jobs.job_labels(settings, request, owner),
                          namespace=settings.jobs_namespace or None)
    live = [job for job in found if hf_jobs.stage_of(job) == "RUNNING"]
    return max(live, key=lambda job: job.started_at.timestamp() if job.started_at else 0.0) if live else None


def job_seen(settings: Settings, store: Store, request: Request, owner: str, api=None) -> JobSeen:
    """What the Jobs API says of the Job running `request` under `owner`, now (see the module's docstring); never
    raises."""
    recorded = _recorded(store, request)
    info, rate = None, None
    flavor = recorded.get("flavor") or None
    try:
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=settings.hf_token or None)
        info = _find(api, settings, request, owner, recorded)
        flavor = getattr(info, "flavor", None) or flavor
        flavor = str(getattr(flavor, "value", flavor)) if flavor else None
        rate = hardware_rates(api).get(flavor) if flavor else None
    except Exception as exc:  # noqa: BLE001 - the run's seconds are then not known; the publish goes on
        log.warning("the Jobs API could not say when this Job started: %s", settings.scrub(str(exc))[:300])
    started = getattr(info, "started_at", None)
    return JobSeen(id=getattr(info, "id", None) or recorded.get("id") or None, flavor=str(flavor) if flavor else None,
                   started_at=started if isinstance(started, datetime) else None, usd_per_hour=rate)
