"""Hugging Face Jobs as the dispatcher uses them: what a request's Job runs, and reading a Job back.

A Job evaluates one claimed request: `python -m leaderboard.running.job_run --request <path> --owner <lease owner>` in
the image of the settings (by default this Space's own image, so the Job runs the Space's code), with every setting but
the secrets in its environment and the tokens as Job secrets (never in its command, environment or labels). Its labels
tie it to the store and to the request, so a restarted Space finds its Jobs again.
"""
from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass

from leaderboard.running.evaluator_process import PROGRESS_PREFIX
from leaderboard.settings import Settings
from leaderboard.submissions.records import Request

LABEL_STORE = "leaderboard-store"  # which store (results repo) the Job publishes to
LABEL_REQUEST = "leaderboard-request"  # which request it evaluates
LABEL_OWNER = "leaderboard-lease"  # the lease owner it runs under
JOB_HOME = "leaderboard-job-data"  # the Job's own LEADERBOARD_HOME, in its working folder (run folders, image cache)
LIVE_STAGES = ("SCHEDULING", "RUNNING")
LOG_LINES = 50  # log lines kept on a FAILED request
PASSED_THROUGH = ("HF_ENDPOINT",)  # environment the Job needs besides the settings (a Hub mirror or test server)


def label(text: str) -> str:
    """A label value: letters, digits, '.', '_' and '-' only (a request key's '/' becomes '--')."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", text.replace("/", "--"))[:120]


def job_labels(settings: Settings, request: Request, owner: str) -> dict[str, str]:
    return {LABEL_STORE: label(settings.results_repo), LABEL_REQUEST: label(request.key), LABEL_OWNER: label(owner)}


def job_command(settings: Settings, request: Request, owner: str) -> list[str]:
    """The Job's command: the evaluation of one request, after the setup command when one is set."""
    run = ["python", "-m", "leaderboard.running.job_run", "--request", request.path, "--owner", owner]
    if not settings.jobs_setup:
        return run
    return ["bash", "-c", f"{settings.jobs_setup} && exec {shlex.join(run)}"]


def job_env(settings: Settings) -> dict[str, str]:
    """The Job's environment: this Space's settings (no secrets), run locally inside the Job, with the Hub store."""
    env = settings.as_env()
    env.update({"LEADERBOARD_EXECUTOR": "local", "LEADERBOARD_RUN_SCHEDULER": "0", "LEADERBOARD_HOME": JOB_HOME,
                "LEADERBOARD_PYTHON": "", "PYTHONUNBUFFERED": "1"})
    if not settings.image_cache:
        env["LEADERBOARD_IMAGE_CACHE"] = ""
    env.update({name: os.environ[name] for name in PASSED_THROUGH if os.environ.get(name)})
    return env


def job_secrets(settings: Settings) -> dict[str, str]:
    """The tokens, passed as Job secrets: HF_TOKEN (the Hub store, gated models) and the judge's token."""
    secrets = {"HF_TOKEN": settings.hf_token}
    if settings.judge_token:
        secrets["LEADERBOARD_JUDGE_TOKEN"] = settings.judge_token
    return {name: value for name, value in secrets.items() if value}


@dataclass
class JobState:
    """What the Queue tab shows of a request's Job (read from the Jobs API and the Job's log, never committed)."""

    id: str
    stage: str
    message: str = ""
    flavor: str = ""
    progress: dict | None = None


def stage_of(info) -> str:
    """A JobInfo's stage as text ("RUNNING", "ERROR", ...)."""
    stage = getattr(getattr(info, "status", None), "stage", "") or ""
    return str(getattr(stage, "value", stage))


def last_progress(lines: list[str]) -> dict | None:
    """The last progress line in a Job's log, read; None when there is none (or it does not read)."""
    for line in reversed(lines):
        if line.startswith(PROGRESS_PREFIX):
            try:
                progress = json.loads(line[len(PROGRESS_PREFIX):])
            except ValueError:
                return None
            return progress if isinstance(progress, dict) else None
    return None


def evaluator_lines(lines: list[str]) -> list[str]:
    """A Job's log without its progress lines (what a FAILED request keeps as its log tail)."""
    return [line for line in lines if not line.startswith(PROGRESS_PREFIX)]
