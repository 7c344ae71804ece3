"""The scheduler tick end to end on the real worker subprocess and tiny models from the offline Hub cache."""
from __future__ import annotations

import json
import os
import signal
import threading
import time

import pandas as pd
import pytest

from evaluator.models.devices import pick_device_dtype, resolve_batch_size
from leaderboard.submissions import records as queue

from leaderboard.board.columns import schema
from leaderboard.board.file import load_board
from leaderboard.running import evaluator_process
from leaderboard.running import scheduler
from leaderboard.submissions.records import Request
from tests.conftest import wait_for


def _request(model, precision="auto", **extra) -> Request:
    return Request(model=model.repo_id, revision=model.sha, precision=precision, architecture="test", **extra)




@pytest.mark.slow  # the tick runs the evaluator as a process
def test_tick_runs_the_worker_and_publishes(settings, store, tiny_llava):
    settings = settings.with_(limit=3)
    request = _request(tiny_llava)
    queue.save(store, request)
    report = scheduler.tick(settings, store)
    assert report.request == request.path and report.status == queue.FINISHED, report.error
    stored = queue.load(store, request.path)
    assert stored.status == queue.FINISHED and stored.finished_time and stored.lease_owner is None
    assert "wrote" in stored.log_tail
    results = store.read_json(f"results/{request.key}.json")
    assert results["model"] == "tiny-org/tiny-llava" and results["revision"] == tiny_llava.sha
    assert set(results["benchmarks"]["cure"]["scores"]) >= {"Rh", "Rcot", "Ro", "Cf", "Cb", "step_accuracy"}
    run = results["run"]
    device, dtype = pick_device_dtype("auto")  # what "auto" picks on this machine: CPU + float32 without a GPU
    assert run["device"] == device and run["dtype"] == str(dtype).removeprefix("torch.") and run["suite"] == "sample"
    assert run["hardware"]["device"] == device and run["hardware"]["dtype"] == run["dtype"]
    assert run["item_counts"]["cure"] == 3 and run["prompt_hashes"] and run["versions"]["torch"]
    assert run["scoring_path"] == "shared_prefix" and run["batch_size"] == resolve_batch_size("auto", device)
    details = pd.read_parquet(store.root / "details" / request.key / "cure.parquet")
    assert {"question_id", "prompt", "prediction", "parsed_answer", "gold", "correct"} <= set(details.columns)
    assert details["question_id"].nunique() == 3
    board = pd.read_parquet(store.root / "leaderboard.parquet")
    assert list(board["model"]) == ["tiny-org/tiny-llava"]
    # an empty queue: the next tick does nothing
    assert scheduler.tick(settings, store).request is None


@pytest.mark.slow  # the tick runs the evaluator as a process
def test_a_text_only_model_on_image_benchmarks_alone_fails_saying_why(settings, store, tiny_llama):
    """Every benchmark skipped: the evaluator exits non-zero, so nothing is published and the reason is shown."""
    request = _request(tiny_llama)
    queue.save(store, request)
    report = scheduler.tick(settings, store)
    assert report.status == queue.FAILED
    assert report.error.startswith(f"{tiny_llama.repo_id} is text-only (its config.json: LlamaForCausalLM, no vision "
                                   "part) and cure needs image input: nothing would run"), report.error
    assert store.list("results") == []


@pytest.mark.slow  # the tick runs the evaluator as a process
def test_failed_run_records_the_reason_and_log_tail(settings, store, tiny_llava):
    request = Request(model=tiny_llava.repo_id, revision="0" * 40)  # a commit the cache does not hold
    queue.save(store, request)
    report = scheduler.tick(settings, store)
    assert report.status == queue.FAILED
    stored = queue.load(store, request.path)
    assert stored.error and "\n" not in stored.error and "exited with code" not in stored.error
    assert "error: " in stored.log_tail and len(stored.log_tail.splitlines()) <= queue.LOG_TAIL_LINES
    assert store.list("results") == [] and store.list("details") == []


@pytest.mark.slow  # the tick runs the evaluator as a process
def test_token_never_reaches_the_log_tail(settings, store, tiny_llava, monkeypatch):
    token = "hf_SECRETTOKEN1234567890"
    monkeypatch.setenv("HF_TOKEN", token)
    settings = settings.with_(hf_token=token)
    queue.save(store, Request(model=tiny_llava.repo_id, revision="1" * 40))
    scheduler.tick(settings, store)
    stored = queue.all_requests(store)[0]
    assert stored.status == queue.FAILED
    assert token not in (stored.log_tail or "") and token not in (stored.error or "")
    assert token not in json.dumps(store.read_json(stored.path))


def _start_tick_in_thread(settings, store, stop=None):
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("report", scheduler.tick(settings, store, stop)))
    thread.start()
    return thread, box


def _running_worker(settings):
    pid_files = list(settings.runs_dir.rglob("worker.pid"))
    progress = list(settings.runs_dir.rglob("progress.json"))
    return int(pid_files[0].read_text()) if pid_files and progress else None


@pytest.mark.slow  # the tick runs the evaluator as a process
def test_worker_killed_mid_run_publishes_nothing_and_is_retried(settings, store, tiny_llava):
    request = _request(tiny_llava)
    queue.save(store, request)
    thread, box = _start_tick_in_thread(settings, store)
    pid = wait_for(lambda: _running_worker(settings))
    os.kill(pid, signal.SIGKILL)
    thread.join(timeout=120)
    assert box["report"].status == queue.PENDING
    stored = queue.load(store, request.path)
    assert stored.status == queue.PENDING and stored.attempts == 1 and "SIGKILL" in stored.error
    assert store.list("results") == [] and store.list("details") == []
    assert load_board(store, schema()).empty  # the tick keeps leaderboard.parquet current: an empty board


@pytest.mark.slow  # the tick runs the evaluator as a process
def test_progress_reaches_the_request_while_running(settings, store, tiny_llava):
    queue.save(store, _request(tiny_llava))
    stop = threading.Event()
    thread, box = _start_tick_in_thread(settings, store, stop)
    progress = wait_for(lambda: queue.all_requests(store)[0].progress.get("total"), timeout=180)
    stop.set()  # clean shutdown: the run stops and the request goes back to the queue, no attempt counted
    thread.join(timeout=60)
    stored = queue.all_requests(store)[0]
    assert progress > 0
    assert stored.status == queue.PENDING and stored.attempts == 0 and "shut down" in stored.error
    assert store.list("results") == []


def test_scheduler_object_runs_ticks_and_shuts_down_cleanly(settings, store):
    sched = scheduler.Scheduler(settings.with_(scheduler_interval=0.2), store)
    sched.start()
    time.sleep(0.5)
    sched.shutdown()
    assert not sched._scheduler.running


def test_the_standalone_worker_runs_the_loop_on_the_spaces_store_until_a_signal(tmp_path, monkeypatch, capsys):
    """`python -m leaderboard.running.worker` called in process (tests/test_cli.py and tests/test_run_lifecycle.py
    start the real one): the Space's settings and store, the worker loop until SIGTERM or Ctrl-C, a line at each end."""
    import signal

    from leaderboard.running import worker

    monkeypatch.setenv("LEADERBOARD_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(worker, "console_logging", lambda: None)  # leaves the test run's logging as it is
    seen = {}

    def loop(settings, store, stop):
        seen.update(home=settings.home, files=store.list("requests"), stop=stop)
        return 0

    monkeypatch.setattr(worker, "run_worker_loop", loop)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        assert worker.main() == 0
        assert not seen["stop"].is_set()
        signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # what a SIGTERM does: the loop is asked to stop
        assert seen["stop"].is_set()
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert seen["home"] == tmp_path / "home" and seen["files"] == []
    out = capsys.readouterr().out
    assert "[worker] store: local" in out and "[worker] stopped after 0 run(s)" in out, out


@pytest.mark.slow  # the tick runs the evaluator as a process
def test_worker_loop_processes_the_queue(settings, store, tiny_llava):
    queue.save(store, _request(tiny_llava, precision="float32"))
    runs = scheduler.run_worker_loop(settings.with_(scheduler_interval=0.01, limit=2), store, threading.Event(),
                                     max_ticks=2)
    assert runs == 1 and queue.all_requests(store)[0].status == queue.FINISHED


def test_judge_token_is_not_on_the_worker_command_line(settings, tmp_path):
    settings = settings.with_(judge="endpoint:http://127.0.0.1:9/v1|m", judge_token="sk-judge-secret-123",
                              options=("simpleqa.grader=letter",))
    command = evaluator_process.worker_command(settings, tmp_path / "request.json", tmp_path / "out")
    assert command[command.index("--option") + 1] == "simpleqa.grader=letter"
    assert "--judge" in command and "endpoint:http://127.0.0.1:9/v1|m" in command
    assert not any("sk-judge-secret-123" in part for part in command)
    assert "sk-judge-secret-123" not in settings.scrub("failed: sk-judge-secret-123")
