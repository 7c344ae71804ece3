"""The periodic job: recover stale leases, claim the oldest request, run the worker subprocess, publish.

One tick runs at most one evaluation. The worker is `python -m evaluator run --request FILE --out DIR`,
its output going to a log file; while it runs the tick renews the lease and copies progress into the
request. Exit 0 with a results.json -> check the lease is still ours, publish results + details (and the results
dataset's card when its text changed) in one store write, close the request FINISHED, then put the run's row on
leaderboard.parquet (one read and one write of the board whatever the number of runs; the board shows only runs
whose request is FINISHED; a tick that finds the board behind the store, e.g. after a kill between the two,
rebuilds it from the results files). Killed by a signal, or a publish the store refused -> back to PENDING
(attempts + 1) or FAILED after max attempts. Any other exit -> FAILED with the worker's one-line reason and the last
lines of its log.
The evaluator never outlives the worker (evaluator.parent_watch: it is killed when the worker dies), and an earlier
attempt of the same request still alive on this machine is stopped before a new one starts. A store that cannot be
read or written, or a race lost to other claimers, ends a tick with the reason; nothing is raised out of the loop.
Every attempt of a request journals its model responses in the same folder, <runs>/<key>/responses (each
attempt has its own stamped run folder beside it), so an attempt that starts again after a kill or a restart
resumes where the last one stopped; the folder is removed once the request is FINISHED, kept otherwise.
`Scheduler` runs ticks on an APScheduler BackgroundScheduler (the Space); `python -m leaderboard.worker`
runs the same loop without the UI.
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
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from apscheduler.schedulers.background import BackgroundScheduler

from evaluator.api import PARENT_PID_ENV
from leaderboard import request_queue as queue
from leaderboard.board_file import add_run, board_is_current, rebuild_leaderboard
from leaderboard.columns import schema
from leaderboard.dataset_card import card_update, with_run_columns
from leaderboard.request_queue import Request
from leaderboard.settings import Settings
from leaderboard.store import Store, StoreConflict, backoff

PROJECT_DIR = Path(__file__).resolve().parent.parent
log = logging.getLogger(__name__)
# a tick that is still running when the next is due is skipped on purpose; APScheduler would warn each time
logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)


@dataclass
class TickReport:
    """What one tick did."""

    recovered: list[str] = field(default_factory=list)
    request: str | None = None  # the request path it ran, if any
    status: str | None = None  # the request's status afterwards
    error: str | None = None
    run_dir: Path | None = None


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
    return (settings.runs_dir / request.key.replace("/", "__")).resolve()


def responses_dir(settings: Settings, request: Request) -> Path:
    """Where every attempt of a request journals its model responses (the same folder for each attempt)."""
    return request_dir(settings, request) / "responses"


def worker_command(settings: Settings, request_file: Path, out_dir: Path,
                   responses: Path | None = None) -> list[str]:
    """`python -m evaluator run ...` for one request: the settings' benchmarks, suite, limit, batch size, every data
    location that is set (by its source key), the judge and the responses folder; tokens go by environment,
    never here."""
    command = [settings.python or sys.executable, "-m", "evaluator", "run", "--request", str(request_file),
               "--out", str(out_dir), "--benchmarks", ",".join(settings.benchmarks), "--suite", settings.suite,
               "--limit", str(settings.limit), "--batch-size", str(settings.batch_size),
               "--images-dir", str(settings.images_dir.resolve())]
    if responses is not None:
        command += ["--responses", str(responses)]
    for key, location in settings.sources.items():
        if location:
            command += ["--source", f"{key}={location}"]
    if settings.judge:
        command += ["--judge", settings.judge]
    for option in settings.options:
        command += ["--option", option]
    return command


def publish(store: Store, request: Request, out_dir: Path, settings: Settings | None = None) -> dict:
    """Copy a finished run into the store in one write (one commit on the Hub store): details first (each with the
    run's run_key, model and revision in front, so the files of every run load as one dataset), then the results
    dataset's card (README.md) when its text changed, results last; details of an earlier attempt's benchmarks
    that this run does not have are removed, so a re-run replaces, never mixes. Reads two things whatever the
    number of runs: the listing of the run's own details folder and the stored card. Returns the results as
    written. The run reaches the board once its request is FINISHED (close_run) and its row is added
    (publish_board)."""
    settings = settings or Settings()
    results = json.loads((out_dir / "results.json").read_text())
    results.update({"model": request.model, "revision": request.revision, "precision": request.precision,
                    "model_type": request.model_type, "params_billions": request.params_billions,
                    "architecture": request.architecture, "submitted_time": request.submitted_time,
                    "key": request.key, "source": request.source})
    files: dict[str, bytes | None] = {path: None for path in store.list(f"details/{request.key}", suffix=".parquet")}
    details = sorted((out_dir / "details").glob("*.parquet"))
    for parquet in details:
        files[f"details/{request.key}/{parquet.name}"] = with_run_columns(parquet.read_bytes(), request.key,
                                                                          request.model, request.revision)
    files.update(card_update(store, schema(settings.benchmarks), [p.stem for p in details], settings.space_id,
                             settings.results_repo))
    encoded = json.dumps(results, indent=2, sort_keys=True).encode()
    files[f"results/{request.key}.json"] = encoded
    store.write_many(files)
    return json.loads(encoded)


def publish_board(settings: Settings, store: Store, request: Request, results: dict) -> bool:
    """Put a run whose request is now FINISHED on leaderboard.parquet: its row replaced or added, the rest as it
    was (board_file.add_run: one read and one write, whatever the number of runs). A failure is logged, never
    raised: the next tick finds the board behind the store and rebuilds it. Returns whether it was written."""
    try:
        add_run(store, schema(settings.benchmarks), f"results/{request.key}.json", results, request.hidden)
        return True
    except Exception as exc:  # noqa: BLE001 - the board is rebuilt from the store at the next tick
        log.warning("adding %s to leaderboard.parquet failed (the next tick rebuilds it): %s", request.key,
                    settings.scrub(str(exc)))
        return False


def rebuild_board(settings: Settings, store: Store, only_if_stale: bool = False) -> bool:
    """Rebuild leaderboard.parquet from the published runs (when `only_if_stale`: only if it does not list exactly
    them; each tick asks). The repair, and what an admin's hide or show does; a publish adds its one row instead
    (publish_board). A failure is logged, never raised: the next tick checks again. Returns whether it was
    rebuilt."""
    try:
        if only_if_stale and board_is_current(store):
            return False
        rebuild_leaderboard(store, schema(settings.benchmarks))
        return True
    except Exception as exc:  # noqa: BLE001 - the board is rebuilt from the store at the next tick
        log.warning("rebuilding leaderboard.parquet failed (the next tick tries again): %s", settings.scrub(str(exc)))
        return False


def _read_progress(out_dir: Path) -> dict | None:
    try:
        progress = json.loads((out_dir / "progress.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    progress["updated"] = queue.iso(queue.now())
    return progress


def _stop_process(proc: subprocess.Popen, grace: float = 10.0) -> None:
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


PROGRESS_PREFIX = "LEADERBOARD_PROGRESS "  # a progress line in a Job's log: this prefix, then the progress JSON


def _still_ours(store: Store, path: str, owner: str) -> bool | None:
    """Whether the request is still RUNNING under our lease, read without writing (None: the store could not say)."""
    try:
        request = queue.load(store, path)
    except Exception as exc:  # noqa: BLE001 - an outage or a damaged file: ask again at the next heartbeat
        log.warning("could not read %s to check the lease: %s", path, type(exc).__name__)
        return None
    return request is not None and request.status == queue.RUNNING and request.lease_owner == owner


def _copy_output(source, log, echo) -> None:
    """Copy the evaluator's output to its log file and to `echo` (a Job's stdout), chunk by chunk."""
    for chunk in iter(lambda: source.read1(65536), b""):
        log.write(chunk)
        log.flush()
        echo.write(chunk)
        echo.flush()


def run_request(settings: Settings, store: Store, request: Request, owner: str,
                stop: threading.Event | None = None, in_job: bool = False) -> TickReport:
    """Run the worker for a request we hold the lease on, and close the request.

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
    env = {**os.environ, "PYTHONUNBUFFERED": "1", PARENT_PID_ENV: str(os.getpid())}  # the evaluator dies with us
    if settings.judge_bearer:  # secrets reach the worker by environment, never its command line
        env["LEADERBOARD_JUDGE_TOKEN"] = settings.judge_bearer
    started = last_renewal = time.monotonic()
    shown: dict | None = None
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(worker_command(settings, request_file, out_dir, responses), cwd=PROJECT_DIR,
                                env=env, stdout=subprocess.PIPE if in_job else log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        copier = None
        if in_job:
            copier = threading.Thread(target=_copy_output, args=(proc.stdout, log, sys.stdout.buffer), daemon=True)
            copier.start()
        (run_dir / "worker.pid").write_text(str(proc.pid))
        outcome = None
        while True:
            try:
                proc.wait(timeout=settings.heartbeat_seconds)
                break
            except subprocess.TimeoutExpired:
                pass
            progress = _read_progress(out_dir)
            if in_job and progress and {**progress, "updated": None} != shown:
                shown = {**progress, "updated": None}
                print(PROGRESS_PREFIX + json.dumps(progress, sort_keys=True), flush=True)
            if stop.is_set():
                outcome = ("RELEASE", "the evaluator was shut down; the request went back to the queue")
            elif time.monotonic() - started > settings.max_run_seconds:
                outcome = (queue.FAILED, f"the run took longer than {settings.max_run_seconds:.0f} s and was stopped")
            elif in_job:
                if _still_ours(store, request.path, owner) is False:
                    outcome = ("LOST", "the lease was lost (cancelled or recovered elsewhere)")
            elif time.monotonic() - last_renewal >= renewal_interval(settings):
                last_renewal = time.monotonic()
                if _renew(settings, store, request.path, owner, progress) is False:
                    outcome = ("LOST", "the lease was lost (cancelled or recovered elsewhere)")
            if outcome:
                _stop_process(proc)
                break
        if copier is not None:
            copier.join(timeout=10)
    tail = log_tail(log_path, settings)
    if outcome and outcome[0] == "LOST":
        report.status, report.error = "LOST", outcome[1]
        return report
    final_progress = _read_progress(out_dir)
    if final_progress and not in_job:  # the last progress the worker wrote stays on the request
        _renew(settings, store, request.path, owner, final_progress)
    if outcome:
        closed = close_run(settings, store, request.path, owner, outcome[0], error=outcome[1], log_tail=tail)
    elif proc.returncode == 0 and (out_dir / "results.json").exists():
        ours = _still_ours(store, request.path, owner) if in_job else _renew(settings, store, request.path, owner)
        if not ours:  # never publish a run whose lease is someone else's
            report.status, report.error = "LOST", "the lease was lost before the results were published"
            return report
        try:
            published = publish(store, request, out_dir, settings)
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


def tick(settings: Settings, store: Store, stop: threading.Event | None = None, owner: str | None = None) -> TickReport:
    """Recover expired leases, bring the board up to date, claim the oldest PENDING request and run it to the end.
    A store that cannot be read or written right now ends the tick with the reason (the next tick tries again)."""
    try:
        recovered = [r.path for r in queue.recover(store, settings.max_attempts)]
        rebuild_board(settings, store, only_if_stale=True)
        owner = owner or queue.worker_id()
        request = queue.claim(store, owner, settings.lease_seconds)
    except Exception as exc:  # noqa: BLE001 - an outage or a bug of ours: this tick does nothing, the next one tries
        error = settings.scrub(f"the store could not be read or written: {type(exc).__name__}: {exc}")
        log.warning("tick skipped: %s", error)
        return TickReport(error=error)
    if request is None:
        return TickReport(recovered=recovered)
    try:
        report = run_request(settings, store, request, owner, stop)
    except Exception as exc:  # no job is lost: an error of ours closes the request with its reason
        error = settings.scrub(f"the scheduler failed to run the worker: {type(exc).__name__}: {exc}")
        closed = close_run(settings, store, request.path, owner, queue.FAILED, error=error)
        report = TickReport(request=request.path, status=closed.status if closed else None, error=error)
    report.recovered = recovered
    return report


class Scheduler:
    """Ticks on an APScheduler BackgroundScheduler, one at a time; shutdown() returns work to the queue.

    With LEADERBOARD_EXECUTOR=hf-jobs a tick is the dispatcher's (leaderboard.job_dispatch): the evaluations run as
    Hugging Face Jobs, `jobs_api` (default: huggingface_hub.HfApi with HF_TOKEN) starts and watches them, and
    `dispatcher.live` says what each running request's Job is doing."""

    def __init__(self, settings: Settings, store: Store, jobs_api=None):
        self.settings, self.store = settings, store
        self.stop = threading.Event()
        self._scheduler = BackgroundScheduler(daemon=True)
        self.dispatcher = None
        if settings.executor == "hf-jobs":
            from leaderboard.job_dispatch import Dispatcher

            if jobs_api is None:
                from huggingface_hub import HfApi

                jobs_api = HfApi(token=settings.hf_token or None)
            self.dispatcher = Dispatcher(settings, store, jobs_api)

    def _tick(self) -> None:
        if self.stop.is_set():
            return
        if self.dispatcher is not None:
            report = self.dispatcher.tick()
            # a Job killed between closing its request and adding its row leaves the board behind: catch it up
            rebuild_board(self.settings, self.store, only_if_stale=True)
            for key in report.started:
                print(f"[dispatcher] {key}: Job started", flush=True)
            for key in report.returned + report.failed:
                print(f"[dispatcher] {key}: its Job ended; see the Queue tab", flush=True)
            return
        try:
            report = tick(self.settings, self.store, self.stop)
        except Exception as exc:  # noqa: BLE001 - the Space keeps serving; the next tick tries again
            log.exception("tick failed: %s", self.settings.scrub(str(exc)))
            return
        if report.request:
            print(f"[scheduler] {report.request}: {report.status} {report.error or ''}".rstrip(), flush=True)

    def start(self, first_tick_now: bool = True) -> None:
        first = datetime.now(timezone.utc) if first_tick_now else None
        self._scheduler.add_job(self._tick, "interval", seconds=self.settings.scheduler_interval, id="evaluate",
                                max_instances=1, coalesce=True, next_run_time=first)
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
