"""Hugging Face Jobs as the dispatcher uses them: what a request's Job runs, and reading a Job back.

A Job evaluates one claimed request: `python -m leaderboard.running.job_run --request <path> --owner <lease owner>` in
the image of the settings (by default this Space's own image, so the Job runs the Space's code), with every setting but
the secrets in its environment and the tokens as Job secrets (never in its command, environment or labels). Its labels
tie it to the store and to the request, so a restarted Space finds its Jobs again. With LEADERBOARD_ENGINE=vllm it runs
vLLM's pinned image instead, and `python -m leaderboard.running.engine_job ... -- vllm serve ...` after the setup
(leaderboard.running.engine_args).

Label values are what the Jobs API accepts (`^[A-Za-z0-9_-]{1,63}$`): the store and the request are found by a short
hash of the results repo and of the request key (a model id such as `Qwen/Qwen2.5-VL-7B-Instruct` has a dot, and two
keys may read alike once sanitised), the lease owner by its sanitised form (ours: `hf-job-<12 hex>`); the Job's `name`
is the request key made readable, cut to 63 characters, for people looking at the Jobs page.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import time
from dataclasses import dataclass

from leaderboard.running.engine_args import engine_command, in_flight, setup, uses_vllm
from leaderboard.running.evaluator_process import PROGRESS_PREFIX, QUIET_PROGRESS
from leaderboard.settings import Settings
from leaderboard.submissions.records import Request

LABEL_STORE = "leaderboard-store"  # which store (results repo) the Job publishes to: a hash of the repo id
LABEL_REQUEST = "leaderboard-request"  # which request it evaluates: a hash of its key
LABEL_OWNER = "leaderboard-lease"  # the lease owner it runs under, sanitised
JOB_HOME = "leaderboard-job-data"  # the Job's own LEADERBOARD_HOME, in its working folder (run folders, image cache)
JOB_CACHE_MOUNT = "/leaderboard-cache"  # where a Job mounts LEADERBOARD_JOBS_CACHE_BUCKET (its compile cache)
LIVE_STAGES = ("SCHEDULING", "RUNNING")
LOG_LINES = 50  # log lines kept on a FAILED request
PROGRESS_TAIL = 20  # log lines read from a live Job's log for its progress (the API's `tail`)
PASSED_THROUGH = ("HF_ENDPOINT",)  # environment the Job needs besides the settings (a Hub mirror or test server)
LABEL_RE = re.compile(r"^[A-Za-z0-9_-]{1,63}$")  # what the Jobs API accepts as a label value


def label(text: str) -> str:
    """`text` as a readable label value: '/' becomes '--', any other character but letters, digits, '_' and '-'
    becomes '-', cut to 63 characters (never empty)."""
    return (re.sub(r"[^A-Za-z0-9_-]", "-", text.replace("/", "--"))[:63]) or "-"


def hashed_label(text: str) -> str:
    """A label value that finds `text` again: 16 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def store_label(settings: Settings) -> str:
    return hashed_label(settings.results_repo)


def request_label(key: str) -> str:
    return hashed_label(key)


def job_labels(settings: Settings, request: Request, owner: str) -> dict[str, str]:
    return {LABEL_STORE: store_label(settings), LABEL_REQUEST: request_label(request.key), LABEL_OWNER: label(owner)}


def job_name(request: Request) -> str:
    """The Job's name (its `name` label): the request key, readable."""
    return label(request.key)


def job_command(settings: Settings, request: Request, owner: str, flavor: str = "",
                batch: int | None = None) -> list[str]:
    """The Job's command: the evaluation of one request (with the vLLM engine: served by vLLM on the Job's loopback,
    on `flavor`'s GPUs at `batch` requests in flight), after the setup command when there is one."""
    if uses_vllm(settings):
        run = engine_command(settings, request, owner, flavor, batch)
    else:
        run = ["python", "-m", "leaderboard.running.job_run", "--request", request.path, "--owner", owner]
    before = setup(settings)
    if not before:
        return run
    return ["bash", "-c", f"{before} && exec {shlex.join(run)}"]


def job_env(settings: Settings, flavor: str = "", batch_size: int | None = None) -> dict[str, str]:
    """The Job's environment: this Space's settings (no secrets), run locally inside the Job, with the Hub store. On
    a GPU flavor the device is `cuda`: a Job billed for a GPU that cannot use it stops at once with the reason
    instead of evaluating on its CPU; on a CPU flavor it is `cpu`. The compile cache goes into the mounted cache
    bucket where there is one (job_volumes), else into the Job's own home. With the vLLM engine the batch size is the
    requests in flight, and the engine itself is the Job's command, not a setting of its local run."""
    env = settings.as_env()
    if uses_vllm(settings):
        batch_size = in_flight(settings, batch_size)
    env.pop("LEADERBOARD_ENGINE", None)
    if batch_size is not None:  # planned for the run's memory (run_memory): replaces the Space's own
        env["LEADERBOARD_BATCH_SIZE"] = str(int(batch_size))
    if flavor:
        env["LEADERBOARD_DEVICE"] = "cpu" if flavor.startswith("cpu-") else "cuda"
    env.update({"LEADERBOARD_EXECUTOR": "local", "LEADERBOARD_RUN_SCHEDULER": "0", "LEADERBOARD_HOME": JOB_HOME,
                "LEADERBOARD_PYTHON": "", "PYTHONUNBUFFERED": "1", **QUIET_PROGRESS})
    if not settings.image_cache:
        env["LEADERBOARD_IMAGE_CACHE"] = ""
    env["LEADERBOARD_COMPILE_CACHE"] = f"{JOB_CACHE_MOUNT}/torch-compile" if settings.jobs_cache_bucket else ""
    env.update({name: os.environ[name] for name in PASSED_THROUGH if os.environ.get(name)})
    return env


def job_volumes(settings: Settings) -> list | None:
    """What a Job mounts: the cache bucket (LEADERBOARD_JOBS_CACHE_BUCKET) read-write at JOB_CACHE_MOUNT, or nothing."""
    if not settings.jobs_cache_bucket:
        return None
    from huggingface_hub import Volume

    return [Volume(type="bucket", source=settings.jobs_cache_bucket, mount_path=JOB_CACHE_MOUNT)]


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
    scheduling_s: float | None = None  # seconds it waited for a machine (so far, while SCHEDULING)


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


def scheduling_seconds(info, now: float | None = None) -> float | None:
    """How long a Job waited in SCHEDULING: the API's durations when it gives them, else from its times."""
    durations = getattr(info, "durations", None)
    if durations is not None and getattr(durations, "scheduling_secs", None) is not None:
        return float(durations.scheduling_secs)
    created, started = getattr(info, "created_at", None), getattr(info, "started_at", None)
    if created is None:
        return None
    end = started.timestamp() if started is not None else (now if now is not None else time.time())
    return max(0.0, end - created.timestamp())


def running_seconds(info) -> float | None:
    """How long a Job ran (RUNNING to its end), from the API's durations or its times; None when unknown."""
    durations = getattr(info, "durations", None)
    if durations is not None and getattr(durations, "running_secs", None) is not None:
        return float(durations.running_secs)
    started, finished = getattr(info, "started_at", None), getattr(info, "finished_at", None)
    if started is None or finished is None:
        return None
    return max(0.0, finished.timestamp() - started.timestamp())


def timed_out(info, timeout_s: float) -> bool:
    """Whether a Job that ended in ERROR was stopped by its timeout: it ran (nearly) its whole timeout, or its
    status message says so (the Hub's wording is not documented, so the time decides where it is known)."""
    ran = running_seconds(info)
    if ran is not None and ran >= timeout_s - 5:
        return True
    message = str(getattr(getattr(info, "status", None), "message", "") or "").lower()
    return "timeout" in message or "timed out" in message
