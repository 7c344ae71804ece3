"""The evaluator as a subprocess of a worker: its folders (a request's run folders and responses journal), its command
line, its log (tail, one-line failure reason, progress lines in a Job's log), and stopping it (its process group,
and any earlier attempt of the same request still alive on this machine)."""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from evaluator import api
from leaderboard.settings import Settings
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
QUIET_PROGRESS = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}  # no carriage-return bars in a run's log
PROGRESS_PREFIX = "LEADERBOARD_PROGRESS "  # a progress line in a Job's log: this prefix, then the progress JSON
log = logging.getLogger(__name__)


def log_tail(log_path: Path, settings: Settings, lines: int = queue.LOG_TAIL_LINES) -> str:
    try:
        content = log_path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return ""
    # progress bars redraw with carriage returns: keep what the line finally showed
    content = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in content]
    return settings.scrub("\n".join(content[-lines:]))


def failure_reason(log_path: Path, returncode: int, settings: Settings) -> str:
    """The worker's last `error: ...` line, or the exit code."""
    try:
        content = log_path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        content = []
    for line in reversed(content):
        if line.startswith("error: "):
            return settings.scrub(line[len("error: "):].strip())
    return f"the worker exited with code {returncode} without a reason"


def request_dir(settings: Settings, request: Request) -> Path:
    """The folder of a request's runs: its attempts' stamped run folders and its responses journal."""
    return Path(os.path.abspath(settings.runs_dir / request.key.replace("/", "__")))


def responses_dir(settings: Settings, request: Request) -> Path:
    """Where every attempt of a request journals its model responses (the same folder for each attempt)."""
    return request_dir(settings, request) / "responses"


def worker_command(settings: Settings, request_file: Path, out_dir: Path,
                   responses: Path | None = None, served: bool = False, served_by: str | None = None,
                   thinking: str | None = None) -> list[str]:
    """`python -m evaluator run ...` for one request: the settings' benchmarks, suite, limit, batch size, device,
    generation cache and compile cache folder (made absolute, never resolved: the evaluator checks it, and only a run
    that compiles uses it), every data location that is set (by its source key), the judge and the
    responses folder; tokens go by environment, never here. For a served model's request (`served`) the options that pick how a benchmark is asked (a card's
    mode option) are left out: the deployer's choice is for in-process runs; a served run is asked in each card's
    default mode where its server gives prompt log-probabilities, else by generation (its results say which). `served_by`: the spec of the server that answers for the
    request's Hub model (a Job's vLLM engine), passed as --model. `thinking`: the request's (auto, on, off), passed as
    --thinking over the Space's LEADERBOARD_THINKING, which runs a request from before thinking was asked (None)."""
    command = [settings.python or sys.executable, "-m", "evaluator", "run", "--request", str(request_file),
               "--out", str(out_dir), "--benchmarks", ",".join(settings.benchmarks), "--suite", settings.suite,
               "--limit", str(settings.limit), "--batch-size", str(settings.batch_size), "--device", settings.device,
               "--generation-cache", settings.generation_cache,
               "--compile-cache", os.path.abspath(settings.compile_dir), "--thinking", thinking or settings.thinking,
               "--thinking-budget", settings.thinking_budget.strip(),
               "--images-dir", os.path.abspath(settings.images_dir)]  # never resolved: a loop raised after the claim
    if responses is not None:
        command += ["--responses", str(responses)]
    if served_by:  # the Job's vLLM engine (leaderboard.running.engine_job), the only engine a Job starts
        command += ["--model", served_by, "--engine", "vllm"]
    for key, location in settings.sources.items():
        if location:
            command += ["--source", f"{key}={location}"]
    if settings.judge:
        command += ["--judge", settings.judge]
    modes = {card.mode_option for card in api.cards() if card.mode_option} if served else set()
    for option in settings.options:
        if option.partition("=")[0].strip() not in modes:
            command += ["--option", option]
    return command


def read_progress(out_dir: Path) -> dict | None:
    try:
        progress = json.loads((out_dir / "progress.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    progress["updated"] = queue.iso(queue.now())
    return progress


def stop_process(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the worker's process group, then SIGKILL after a grace period."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _live_evaluator(pid: int, run_dir: Path) -> bool:
    """Whether `pid` is a live evaluator of the run in `run_dir` (its command line names the run's folder)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        try:  # no /proc: fall back to "the process exists"
            os.kill(pid, 0)
            return True
        except OSError:
            return False
    return b" -m evaluator " in command and str(run_dir).encode() in command


def stop_earlier_runs(folder: Path, wait: float = 30.0) -> list[int]:
    """SIGKILL any evaluator of an earlier attempt of this request that is still alive on this machine (its run folder
    holds worker.pid), and wait until it is gone; returns the process ids stopped."""
    stopped = []
    for pid_file in sorted(folder.glob("*/worker.pid")):
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            continue
        if not _live_evaluator(pid, pid_file.parent):
            continue
        log.warning("an earlier run of %s is still alive (pid %d): stopping it before the new attempt", folder.name,
                    pid)
        for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
            try:
                target()
                break
            except OSError:
                continue
        deadline = time.monotonic() + wait
        while _live_evaluator(pid, pid_file.parent) and time.monotonic() < deadline:
            try:  # our own child: reap it, or it lingers as a zombie
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            time.sleep(0.05)
        stopped.append(pid)
    return stopped



def copy_output(source, log, echo) -> None:
    """Copy the evaluator's output to its log file and to `echo` (a Job's stdout), chunk by chunk."""
    for chunk in iter(lambda: source.read1(65536), b""):
        log.write(chunk)
        log.flush()
        echo.write(chunk)
        echo.flush()
