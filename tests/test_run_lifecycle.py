"""A run's life from claim to board: an evaluator never outlives its worker, two runs of one request never overlap,
a run reaches the board only once its request is FINISHED, and a run published again replaces the earlier one.

The worker and the evaluator are real processes (`python -m leaderboard.running.worker`, `python -m evaluator run`) on the
tiny LLaVA from the offline Hub cache; the fake evaluator of the lease test is a short script standing in for the
subprocess, so that the lease can change hands at the exact moment a run ends.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import pytest

from leaderboard.board import publish as publishing
from leaderboard.board.columns import schema
from leaderboard.board.file import board_is_current, load_board
from leaderboard.running import attempt
from leaderboard.running import evaluator_process
from leaderboard.running import scheduler
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request
from tests.conftest import PROJECT, wait_for


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _worker_env(settings) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEADERBOARD_")}
    env.update({"LEADERBOARD_HOME": str(settings.home), "LEADERBOARD_SCHEDULER_INTERVAL": "0.2",
                "LEADERBOARD_BATCH_SIZE": "1", "LEADERBOARD_OPTIONS": "cure.mode=generation",
                "LEADERBOARD_HEARTBEAT_SECONDS": "0.5", "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})
    return env


def _evaluator_pid(settings) -> int:
    """The pid of the evaluator the worker started, once it is answering (its progress file says so)."""
    def started():
        for pid_file in settings.runs_dir.rglob("worker.pid"):
            progress = pid_file.parent / "out" / "progress.json"
            if progress.exists() and '"answering"' in progress.read_text():
                return int(pid_file.read_text())
        return None

    return wait_for(started, timeout=180, step=0.1)


@pytest.mark.slow  # starts the worker process
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_killed_worker_leaves_no_evaluator_running(settings, store, tiny_llava):
    request = Request(model=tiny_llava.repo_id, revision=tiny_llava.sha)
    queue.save(store, request)
    worker = subprocess.Popen([sys.executable, "-m", "leaderboard.running.worker"], cwd=PROJECT, env=_worker_env(settings),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        evaluator = _evaluator_pid(settings)
        assert alive(evaluator)
        worker.kill()  # SIGKILL: no handler of ours runs
        worker.wait(30)
        wait_for(lambda: not alive(evaluator), timeout=5)  # the kernel's parent-death signal, not a lease expiry
    finally:
        worker.kill()
    assert not list(settings.runs_dir.rglob("results.json"))
    assert queue.load(store, request.path).status == queue.RUNNING  # its lease expires; recovery takes it back


@pytest.mark.slow  # starts evaluator processes
def test_an_earlier_live_run_of_the_request_is_stopped_before_a_new_attempt(settings, tiny_llava, tmp_path):
    request = Request(model=tiny_llava.repo_id, revision=tiny_llava.sha)
    earlier = evaluator_process.request_dir(settings, request) / "20260101T000000000000"
    earlier.mkdir(parents=True)
    command = [sys.executable, "-m", "evaluator", "run", "--model", str(tiny_llava.folder), "--benchmarks", "cure",
               "--batch-size", "1", "--option", "cure.mode=generation", "--out", str(earlier / "out")]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("LEADERBOARD_PARENT_PID", None)
    log = earlier / "orphan.log"
    with open(log, "wb") as out:
        orphan = subprocess.Popen(command, cwd=PROJECT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        (earlier / "worker.pid").write_text(str(orphan.pid))
        # Popen can return before the kernel has set the new program's arguments (an empty /proc/<pid>/cmdline for a
        # moment); an earlier attempt's evaluator is long past that, so wait until the orphan looks like one
        wait_for(lambda: b"evaluator" in Path(f"/proc/{orphan.pid}/cmdline").read_bytes(), timeout=60)
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # not an evaluator of it
        wait_for(lambda: b"time.sleep" in Path(f"/proc/{other.pid}/cmdline").read_bytes(), timeout=60)
        (earlier.parent / "x").mkdir()
        (earlier.parent / "x" / "worker.pid").write_text(str(other.pid))
        stopped = evaluator_process.stop_earlier_runs(evaluator_process.request_dir(settings, request))
        assert stopped == [orphan.pid], (orphan.poll(), log.read_text(errors="replace")[-2000:])
        assert orphan.wait(5) == -signal.SIGKILL
        assert other.poll() is None  # a process that is not this request's evaluator is left alone
        other.kill()
    finally:
        orphan.kill()


FAKE_EVALUATOR = textwrap.dedent('''
    """Stands in for `python -m evaluator run`: another worker takes the lease over, then the run "finishes"."""
    import json, sys
    from pathlib import Path
    from leaderboard.settings import Settings
    from leaderboard.store import open_store
    from leaderboard.submissions import records as queue

    args = sys.argv[1:]
    request = json.loads(Path(args[args.index("--request") + 1]).read_text())
    out = Path(args[args.index("--out") + 1])
    store = open_store(Settings.from_env())
    def steal():
        taken = queue.load(store, "requests/" + request["model"] + "/" + request["revision"][:12] + "_auto.json")
        taken.lease_owner = "another-worker"
        queue.save(store, taken)
    queue.transact(store, steal)
    (out / "details").mkdir(parents=True)
    (out / "results.json").write_text(json.dumps({"run": {}, "benchmarks": {}, "skipped": {}}))
''')


def test_a_run_whose_lease_changed_hands_is_not_published(settings, store, tmp_path, monkeypatch):
    script = tmp_path / "fake_evaluator.py"
    script.write_text(FAKE_EVALUATOR)
    monkeypatch.setenv("LEADERBOARD_HOME", str(settings.home))
    monkeypatch.setenv("PYTHONPATH", str(PROJECT))
    monkeypatch.setattr(attempt, "worker_command", lambda s, request_file, out_dir, responses=None, served=False, **_: [
        sys.executable, str(script), "--request", str(request_file), "--out", str(out_dir)])
    request = Request(model="org/m", revision="a" * 40)
    queue.save(store, request)
    report = scheduler.tick(settings, store)
    assert report.status == "LOST" and "lease" in report.error
    assert store.list("results") == [] and load_board(store, schema()).empty
    assert queue.load(store, request.path).lease_owner == "another-worker"


def _out(tmp_path: Path, name: str, benchmarks: dict[str, float]) -> Path:
    """A finished run's output folder: results.json and one details file per benchmark."""
    import pandas as pd

    out = tmp_path / name
    (out / "details").mkdir(parents=True)
    results = {"run": {"suite": "sample"}, "skipped": {},
               "benchmarks": {b: {"scores": {"Ro": score}, "counts": {"items": 1}} for b, score in benchmarks.items()}}
    (out / "results.json").write_text(json.dumps(results))
    for b in benchmarks:
        pd.DataFrame({"question_id": ["q1"], "run": [name]}).to_parquet(out / "details" / f"{b}.parquet")
    return out


def test_results_reach_the_board_only_once_the_request_is_finished(settings, store, tmp_path):
    request = Request(model="org/m", revision="b" * 40)
    queue.save(store, request)
    claimed = queue.claim(store, "w1", 60)
    # killed after publishing, before closing the request: the results are stored, the board does not show them
    publishing.publish(store, claimed, _out(tmp_path, "first", {"cure": 0.25, "lave": 0.5}))
    publishing.rebuild_board(settings, store)
    assert load_board(store, schema()).empty and board_is_current(store)
    # the lease expires; the request goes back to the queue and is run again; the second run replaces the first
    assert [r.path for r in queue.recover(store, 3, at=queue.now() + timedelta(seconds=61))] == [request.path]
    again = queue.claim(store, "w2", 60)
    publishing.publish(store, again, _out(tmp_path, "second", {"cure": 0.75}))
    assert queue.finish(store, request.path, "w2", queue.FINISHED).status == queue.FINISHED
    # killed after closing the request, before rebuilding the board: the next tick rebuilds it
    assert not board_is_current(store)
    assert scheduler.tick(settings, store).request is None
    assert board_is_current(store)
    board = load_board(store, schema())
    assert list(board["key"]) == [request.key] and list(board["cure_Ro"]) == [0.75]
    assert store.list(f"details/{request.key}") == [f"details/{request.key}/cure.parquet"]  # LAVE's is gone
    assert not publishing.rebuild_board(settings, store, only_if_stale=True)  # current: not rebuilt again


QUICK_EVALUATOR = textwrap.dedent('''
    """Stands in for `python -m evaluator run`: a finished run with nothing in it, at once."""
    import json, sys
    from pathlib import Path

    args = sys.argv[1:]
    out = Path(args[args.index("--out") + 1])
    (out / "details").mkdir(parents=True)
    (out / "results.json").write_text(json.dumps({"run": {}, "benchmarks": {}, "skipped": {}}))
''')


@pytest.mark.slow  # seconds of a slow publish
def test_a_publish_slower_than_the_lease_keeps_the_lease(settings, store, tmp_path, monkeypatch):
    """Issue 51, cause 6: no heartbeat ran while a worker published (several commits, each may lose races and wait),
    so a slow publish let the lease lapse while its worker lived, and another worker recovered and ran the request
    again. The lease is renewed in the background while the worker publishes."""
    settings = settings.with_(lease_seconds=1.5, heartbeat_seconds=0.2)
    script = tmp_path / "quick_evaluator.py"
    script.write_text(QUICK_EVALUATOR)
    monkeypatch.setattr(attempt, "worker_command", lambda s, request_file, out_dir, responses=None, served=False, **_: [
        sys.executable, str(script), "--request", str(request_file), "--out", str(out_dir)])
    recovered = []
    real_publish = attempt.publish

    def slow_publish(*args, **kwargs):
        for _ in range(8):  # 4 s, past two whole leases; another worker's recovery looks meanwhile
            time.sleep(0.5)
            recovered.extend(queue.recover(store, max_attempts=3))
        return real_publish(*args, **kwargs)

    monkeypatch.setattr(attempt, "publish", slow_publish)
    request = Request(model="org/m", revision="a" * 40)
    queue.save(store, request)
    report = scheduler.tick(settings, store)
    assert recovered == [] and report.status == queue.FINISHED, (recovered, report)
    assert queue.load(store, request.path).status == queue.FINISHED
