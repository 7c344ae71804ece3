"""The loopback Hub's Jobs (used by tests/hub_server.py): each Job's command RUNS here as a local subprocess.

The `image` is ignored; the command runs in its own process group with this process's environment (or the server's
`job_env`), then the Job's `environment`, then its `secrets` on top; stdout and stderr are captured line by line as
the Job's logs. Stages are the client's `JobStage` values: SCHEDULING for the runner's `scheduling_seconds` (0 by
default; a real GPU Job can wait minutes for a machine; math.inf holds it until the test calls `release`), then
RUNNING, then COMPLETED (exit code 0), ERROR (another exit code, `kill`, or `timeoutSeconds` of running: the process
is killed), or CANCELED (`cancel`, in either live stage). When the command exits, what is left of its process group is
killed, as when a container stops, so the log pipe closes; the stage turns terminal only once every log line has been
read.

What the real API refuses is refused here: a flavor that is not one of huggingface_hub's own `JobHardware` names
(the hardware list is built from that enum), a label key or value outside `^[A-Za-z0-9_-]{1,63}$` (400), a timeout
that is not a positive integer, a volume (huggingface_hub's `Volume`) of another type than bucket, model, dataset or
space, without an `<owner>/<name>` source, or whose mount path is not absolute or is used twice (400); the server
refuses a bucket that does not exist (404) or whose owner's namespace the caller may not act in (403).

A volume is mounted, not copied: every Job that mounts one bucket sees the same folder, kept between Jobs (under the
runner's `mounts` folder). A container's mount point cannot be made here without root, so the one liberty taken is
that the Job's environment values that start with a volume's mount path are given the folder's path instead.

A `JobRecord` is what a test may look at and never holds a secret value: only the secret NAMES.
"""
from __future__ import annotations

import json
import math
import os
import re
import secrets
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator

from huggingface_hub import JobHardware

from tests.hub_repos import HubError, iso_time

TERMINAL = ("COMPLETED", "CANCELED", "ERROR", "DELETED")
KEEP_ALIVE_SECONDS = 30.0  # the Hub sends an SSE comment this often on a silent log stream


def _gpu(model: str, quantity: int, vram_gb: int) -> dict:
    return {"type": "gpu", "model": model, "quantity": str(quantity), "vram": f"{vram_gb} GB",
            "manufacturer": "Nvidia"}


def _hardware(name: str, pretty: str, cpu: int, ram_gb: int, usd_per_hour: float, gpu: dict | None) -> dict:
    micro_per_minute = round(usd_per_hour * 1_000_000 / 60)
    return {"name": name, "prettyName": pretty, "cpu": f"{cpu} vCPU", "ram": f"{ram_gb} GB",
            "ephemeralStorage": "50 GB", "accelerator": gpu, "unitCostMicroUSD": micro_per_minute,
            "unitCostUSD": micro_per_minute / 1_000_000, "unitLabel": "minute"}


# GPU families by flavor name prefix: (model, GB of memory per GPU, illustrative US$ per GPU-hour).
_GPU_FAMILIES = {"t4": ("T4", 16, 0.40), "l4": ("L4", 24, 0.80), "l40s": ("L40S", 48, 1.80),
                 "a10g": ("A10G", 24, 1.00), "a100": ("A100", 80, 2.50), "h200": ("H200", 141, 5.00),
                 "rtx-pro-6000": ("RTX PRO 6000", 96, 3.00)}
_CPU_PRICES = {"cpu-basic": 0.01, "cpu-upgrade": 0.03, "cpu-performance": 0.10, "cpu-xl": 0.40}


def _row(name: str) -> dict:
    """One hardware entry for a flavor name of the client's JobHardware enum."""
    if name.startswith("cpu-"):
        return _hardware(name, name.replace("-", " ").title(), 2, 16, _CPU_PRICES.get(name, 0.05), None)
    family = max((f for f in _GPU_FAMILIES if name == f or name.startswith((f + "-", f + "x"))), key=len)
    model, vram, price = _GPU_FAMILIES[family]
    count = int(re.search(r"x(\d+)$", name).group(1)) if re.search(r"x(\d+)$", name) else 1
    return _hardware(name, f"{count}x Nvidia {model}", 8 * count, 30 * count, price * count,
                     _gpu(model, count, vram * count))


# GET /api/jobs/hardware, in the shape the client parses into JobHardwareInfo: exactly the flavors of the installed
# huggingface_hub's JobHardware enum (kept in sync with the Hub's API by its maintainers), prices illustrative.
HARDWARE = [_row(item.value) for item in JobHardware]
FLAVORS = {row["name"] for row in HARDWARE}


@dataclass(frozen=True)
class JobRecord:
    """What was asked of a Job (secret names only) and, in `hub.jobs`, a snapshot of where it stands."""

    id: str
    namespace: str
    user: str
    image: str
    command: list[str]
    env: dict[str, str]
    secret_names: list[str]
    labels: dict[str, str]
    flavor: str
    timeout: int | None
    created_at: float
    volumes: list[dict] = field(default_factory=list)  # as the API took them: type, source, mountPath, ...
    stage: str = "SCHEDULING"
    message: str | None = None
    pid: int | None = None


class Job:
    """A running (or finished) Job: its process, stage and logs; `changed` wakes the log streams."""

    def __init__(self, record: JobRecord):
        self.record = record
        self.stage, self.message = "SCHEDULING", None
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.proc: subprocess.Popen | None = None
        self.logs: list[tuple[float, str]] = []
        self.changed = threading.Condition()
        self._end: tuple[str, str | None] | None = None  # why it was stopped (cancel, kill, timeout)

    @property
    def terminal(self) -> bool:
        return self.stage in TERMINAL

    def snapshot(self) -> JobRecord:
        with self.changed:
            return replace(self.record, stage=self.stage, message=self.message,
                           pid=self.proc.pid if self.proc else None)

    def log_lines(self) -> list[str]:
        with self.changed:
            return [line for _ts, line in self.logs]

    def append_log(self, line: str) -> None:
        with self.changed:
            self.logs.append((time.time(), line))
            self.changed.notify_all()

    def set_stage(self, stage: str, message: str | None = None) -> None:
        with self.changed:
            self.stage, self.message = stage, message
            if stage == "RUNNING":
                self.started_at = time.time()
            elif stage in TERMINAL:
                self.finished_at = time.time()
            self.changed.notify_all()

    def stop(self, stage: str, message: str | None, sig: int) -> bool:
        """Signal the process group; the stage becomes `stage` when it is gone (at once for a Job still
        SCHEDULING, which has no process yet). False if it had already ended."""
        with self.changed:
            if self.terminal or self._end is not None:
                return False
            self._end = (stage, message)
            proc = self.proc
        if proc is None:  # never started: it ends here, and the scheduler leaves it alone
            self.set_stage(stage, message)
            return True
        _signal_group(proc, sig)
        return True

    def end_reason(self, returncode: int) -> tuple[str, str | None]:
        with self.changed:
            if self._end is not None:
                return self._end
        if returncode == 0:
            return "COMPLETED", None
        return "ERROR", f"Job failed with exit code: {returncode}"

    def json(self) -> dict:
        """The Job as the Hub's Jobs API answers it (what JobInfo parses)."""
        rec = self.record
        with self.changed:
            stage, message, started, finished = self.stage, self.message, self.started_at, self.finished_at
        now = finished or time.time()
        answer = {
            "id": rec.id, "createdAt": iso_time(rec.created_at), "dockerImage": rec.image, "spaceId": None,
            "command": rec.command, "arguments": [], "environment": rec.env,
            "secrets": {name: None for name in rec.secret_names}, "flavor": rec.flavor, "labels": rec.labels,
            "timeout": rec.timeout, "status": {"stage": stage, "message": message}, "volumes": rec.volumes,
            "owner": {"id": _id_of(rec.namespace), "name": rec.namespace,
                      "type": "user" if rec.namespace == rec.user else "org"},
            "initiator": {"type": "user", "id": _id_of(rec.user), "name": rec.user},
            "durations": {"schedulingSecs": round(started - rec.created_at) if started else None,
                          "runningSecs": round(now - started) if started else None,
                          "totalSecs": round(now - rec.created_at)},
        }
        if started:
            answer["startedAt"] = iso_time(started)
        if finished:
            answer["finishedAt"] = iso_time(finished)
        return answer


def _id_of(name: str) -> str:
    return name.encode().hex()[:24].ljust(24, "0")


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the Job runs in its own session: its group id is its pid
    except (ProcessLookupError, PermissionError):
        pass


def _kill_if_running(proc: subprocess.Popen) -> None:
    if proc.poll() is None:  # once reaped, the watcher has already killed the rest of the group
        _signal_group(proc, signal.SIGKILL)


def _string_map(spec: dict, key: str) -> dict[str, str]:
    value = spec.get(key) or {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise HubError(400, f"{key} must map names to strings")
    return dict(value)


LABEL_RE = re.compile(r"^[A-Za-z0-9_-]{1,63}$")  # what the Jobs API takes as a label key or value


def _validate(spec: dict) -> None:
    for key, value in _string_map(spec, "labels").items():
        if not LABEL_RE.match(key) or not LABEL_RE.match(value):
            raise HubError(400, f"Invalid label {key}={value!r}: keys and values are 1 to 63 letters, digits, "
                                "'-' or '_'")
    command = spec.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(part, str) for part in command):
        raise HubError(400, "command must be a non-empty list of strings")
    if spec.get("flavor", "cpu-basic") not in FLAVORS:
        raise HubError(400, f"Invalid flavor {spec.get('flavor')!r}: one of {sorted(FLAVORS)}")
    timeout = spec.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or timeout <= 0):
        raise HubError(400, "timeoutSeconds must be a positive integer")
    volumes(spec)


VOLUME_TYPES = ("bucket", "model", "dataset", "space")
SOURCE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def volumes(spec: dict) -> list[dict]:
    """The spec's volumes, checked as the API checks them (400 for a bad one)."""
    found = spec.get("volumes") or []
    if not isinstance(found, list) or not all(isinstance(v, dict) for v in found):
        raise HubError(400, "volumes must be a list of objects")
    paths = [v.get("mountPath") for v in found]
    for volume in found:
        if volume.get("type") not in VOLUME_TYPES:
            raise HubError(400, f"Invalid volume type {volume.get('type')!r}: one of {', '.join(VOLUME_TYPES)}")
        if not isinstance(volume.get("source"), str) or not SOURCE_RE.match(volume["source"]):
            raise HubError(400, f"Invalid volume source {volume.get('source')!r}: expected <owner>/<name>")
        path = volume.get("mountPath")
        if not isinstance(path, str) or not path.startswith("/") or path.rstrip("/") == "":
            raise HubError(400, f"Invalid mountPath {path!r}: an absolute path other than /")
        if paths.count(path) > 1:
            raise HubError(400, f"Two volumes are mounted at {path}")
    return found


class JobRunner:
    """Starts, watches, lists and stops the Jobs. `cwd` and `base_env` (default: os.environ at start) apply to
    every Job; `kill_grace` is how long a canceled Job has between SIGTERM and SIGKILL."""

    def __init__(self, cwd: str | os.PathLike | None = None, base_env: dict[str, str] | None = None,
                 kill_grace: float = 2.0, scheduling_seconds: float = 0.0):
        self.cwd = cwd
        self.mounts = Path(cwd if cwd is not None else ".").resolve() / "mounts"  # each volume's folder, kept
        self.base_env = base_env
        self.kill_grace = kill_grace
        # how long a new Job waits in SCHEDULING (tests may set it); math.inf holds it there until release(job_id)
        self.scheduling_seconds = scheduling_seconds
        self._jobs: dict[str, Job] = {}
        self._held: dict[str, dict[str, str]] = {}  # Job id -> its environment, while held in SCHEDULING
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------------------ running

    def run(self, namespace: str, user: str, spec: dict) -> Job:
        _validate(spec)
        env, hidden = _string_map(spec, "environment"), _string_map(spec, "secrets")
        record = JobRecord(id=secrets.token_hex(12), namespace=namespace, user=user,
                           image=spec.get("dockerImage") or spec.get("spaceId") or "",
                           command=list(spec["command"]) + list(spec.get("arguments") or []), env=env,
                           secret_names=sorted(hidden), labels=_string_map(spec, "labels"),
                           flavor=spec.get("flavor", "cpu-basic"), timeout=spec.get("timeoutSeconds"),
                           created_at=time.time(), volumes=[dict(v) for v in volumes(spec)])
        job = Job(record)
        with self._lock:
            self._jobs[record.id] = job
        process_env = {**(os.environ if self.base_env is None else self.base_env), **env, **hidden}
        for volume in record.volumes:  # the mount point, as this machine has it
            folder = self.mount_folder(volume)
            folder.mkdir(parents=True, exist_ok=True)
            point = volume["mountPath"].rstrip("/")
            process_env = {name: (str(folder) + value[len(point):] if value == point or value.startswith(point + "/")
                                  else value) for name, value in process_env.items()}
        if self.scheduling_seconds <= 0:
            self._start(job, process_env)
        elif self.scheduling_seconds == math.inf:  # the test's clock: a machine is free when it says so
            with self._lock:
                self._held[record.id] = process_env
        else:
            timer = threading.Timer(self.scheduling_seconds, self._start, args=(job, process_env))
            timer.daemon = True
            timer.start()
        return job

    def release(self, job_id: str) -> None:
        """A Job held in SCHEDULING (scheduling_seconds = math.inf) gets its machine: its command starts now, unless
        it was cancelled meanwhile."""
        with self._lock:
            process_env = self._held.pop(job_id)
        self._start(self._jobs[job_id], process_env)

    def mount_folder(self, volume: dict) -> Path:
        """The folder a volume mounts: one per source (and sub-path), shared by every Job that mounts it."""
        return self.mounts / volume["type"] / volume["source"] / (volume.get("path") or "").strip("/")

    def _start(self, job: Job, process_env: dict[str, str]) -> None:
        """SCHEDULING is over: the command starts (unless the Job was cancelled meanwhile)."""
        with job.changed:
            if job.terminal:
                return
            try:
                job.proc = subprocess.Popen(job.record.command, cwd=self.cwd, env=process_env,
                                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                job.logs.append((time.time(), f"could not start the command: {exc}"))
                job.proc = None
        if job.proc is None:
            job.set_stage("ERROR", "could not start the command")
            return
        job.set_stage("RUNNING")
        threading.Thread(target=self._watch, args=(job,), name=f"job-{job.record.id}", daemon=True).start()

    def _watch(self, job: Job) -> None:
        proc = job.proc
        reader = threading.Thread(target=_read_logs, args=(job,), daemon=True)
        reader.start()
        try:
            proc.wait(timeout=job.record.timeout)  # the timeout counts from RUNNING, not from SCHEDULING
        except subprocess.TimeoutExpired:
            job.stop("ERROR", f"Job timeout: the Job ran longer than its {job.record.timeout} s", signal.SIGKILL)
            proc.wait()
        _signal_group(proc, signal.SIGKILL)  # the container stops: nothing of the Job outlives its command
        reader.join()
        job.set_stage(*job.end_reason(proc.returncode))

    # ------------------------------------------------------------------------------------------------ stopping

    def cancel(self, namespace: str, job_id: str) -> None:
        job = self.get(namespace, job_id)
        if job.stop("CANCELED", None, signal.SIGTERM) and job.proc is not None:
            timer = threading.Timer(self.kill_grace, _kill_if_running, args=(job.proc,))
            timer.daemon = True
            timer.start()

    def kill(self, job_id: str, message: str = "Job was killed (exit code 137)") -> None:
        """Test hook: the Job dies mid-run (like an out-of-memory kill) and ends in ERROR."""
        self.by_id(job_id).stop("ERROR", message, signal.SIGKILL)

    def close(self) -> None:
        """Kill every Job still running and wait for them (the server is going away)."""
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.stop("CANCELED", "the test Hub stopped", signal.SIGKILL)
        for job in jobs:
            with job.changed:
                job.changed.wait_for(lambda job=job: job.terminal, timeout=10)

    # ------------------------------------------------------------------------------------------------ reading

    def by_id(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise HubError(404, f"Job {job_id} not found")
        return job

    def get(self, namespace: str, job_id: str) -> Job:
        job = self.by_id(job_id)
        if job.record.namespace != namespace:
            raise HubError(404, f"Job {job_id} not found")
        return job

    def records(self) -> list[JobRecord]:
        with self._lock:
            jobs = list(self._jobs.values())
        return [job.snapshot() for job in jobs]

    def select(self, namespace: str, stages: list[str], labels: list[str]) -> list[Job]:
        """Newest first; `stages` any of, `labels` all of ("key=value", or "key" for any value)."""
        wanted = [label.partition("=") for label in labels]
        with self._lock:
            jobs = [job for job in self._jobs.values() if job.record.namespace == namespace]
        found = []
        for job in reversed(jobs):
            have = job.record.labels
            if stages and job.stage not in stages:
                continue
            if all(key in have and (not sep or have[key] == value) for key, sep, value in wanted):
                found.append(job)
        return found


def _read_logs(job: Job) -> None:
    for raw in job.proc.stdout:
        job.append_log(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    job.proc.stdout.close()


def _sse(ts: float, line: str) -> bytes:
    return b"data: " + json.dumps({"data": line, "timestamp": iso_time(ts)}).encode() + b"\n\n"


def log_stream(job: Job, tail: int | None = None, keep_alive: float = KEEP_ALIVE_SECONDS) -> Iterator[bytes]:
    """GET /api/jobs/{ns}/{id}/logs: server-sent events `data: {"data": line, "timestamp": ...}`, the Hub's
    "===== Job started" line first; the stream follows the Job and ends when it is over."""
    start = job.started_at or job.record.created_at
    yield _sse(start, f"===== Job started at {iso_time(start)} =====")
    with job.changed:
        sent = max(0, len(job.logs) - tail) if tail is not None else 0
    while True:
        with job.changed:
            if not job.changed.wait_for(lambda: len(job.logs) > sent or job.terminal, timeout=keep_alive):
                batch, done = None, False
            else:
                batch, done = job.logs[sent:], job.terminal
        if batch is None:
            yield b": keep-alive\n\n"
            continue
        for ts, line in batch:
            yield _sse(ts, line)
        sent += len(batch)
        if done:
            return
