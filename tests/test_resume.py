"""A run that stops part-way resumes where it stopped: every model response is journaled as it comes, and a run of
the same request reuses it, in process (a model that dies after K calls) and through the scheduler (a worker
killed with SIGKILL, its request back to PENDING, the next tick finishing it)."""
from __future__ import annotations

import json
import os
import signal
import threading

import pandas as pd
import pytest

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.spec import PlanContext, ScoreContext
from evaluator.runs.journal import Journal, read_entries
from evaluator.runs.runner import evaluate
from leaderboard.running import evaluator_process
from leaderboard.running import scheduler
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request
from leaderboard.submissions.views import progress_text, queue_frame
from tests.conftest import wait_for

IDENTITY = {"model": "tiny-org/tiny-llava", "revision": "0" * 40, "precision": "auto", "suite": "sample"}
ANSWER_COLUMNS = ("question_id", "part", "prompt", "prediction", "option_scores", "parsed_answer", "correct")


class Counting:
    """The model, counting its requests (each generate request and each option-scoring call); with `crash_after`,
    it raises instead of making a request past that many, as a killed worker would stop."""

    def __init__(self, model, crash_after: int | None = None):
        self.model, self.crash_after, self.requests = model, crash_after, 0

    def __getattr__(self, name):
        return getattr(self.model, name)

    def _count(self, n: int) -> None:
        if self.crash_after is not None and self.requests + n > self.crash_after:
            raise RuntimeError("the worker died")
        self.requests += n

    def generate(self, requests):
        self._count(len(requests))
        return self.model.generate(requests)

    def generate_results(self, requests):
        self._count(len(requests))
        return self.model.generate_results(requests)

    def score_options(self, request, options):
        self._count(1)
        return self.model.score_options(request, options)

    def score_options_many(self, asks):
        self._count(len(asks))
        return self.model.score_options_many(asks)


@pytest.fixture(scope="module")
def llava(tiny_llava, one_torch_thread):
    from evaluator.models import load_model

    return load_model(str(tiny_llava.folder), batch_size=1)


def _evaluate(model, folder, options: dict, journal: Journal | None = None, limit: int = 5):
    plan_ctx = PlanContext(limit=limit, images_dir=folder.parent / "images", options=options)
    score_ctx = ScoreContext(limit=limit, options=options)
    done = evaluate(get_benchmark("cure"), model, plan_ctx, score_ctx, 1, folder / "cure.parquet", None, journal)
    return done, pd.read_parquet(folder / "cure.parquet")


@pytest.mark.parametrize("mode", ["likelihood", "generation"])
def test_a_run_that_died_resumes_with_only_the_missing_requests(llava, tmp_path, mode):
    options = {"cure.mode": mode}
    whole = Counting(llava)
    reference, expected = _evaluate(whole, tmp_path / "whole", options)
    total = whole.requests
    assert reference.answered.model_requests == total and reference.answered.reused == 0

    responses = tmp_path / "responses"
    with pytest.raises(RuntimeError, match="died"):
        _evaluate(Counting(llava, crash_after=7), tmp_path / "crashed", options, Journal(responses, "cure", IDENTITY))
    journaled = read_entries(responses / "cure.jsonl")
    assert 0 < len(journaled) <= 7
    assert not (tmp_path / "crashed" / "cure.parquet").exists()  # nothing of the crashed run was stored

    again = Counting(llava)
    resumed, details = _evaluate(again, tmp_path / "resumed", options, Journal(responses, "cure", IDENTITY))
    assert resumed.answered.reused >= 1 and resumed.answered.items == 5
    assert again.requests == resumed.answered.model_requests == total - len(journaled)
    # a resumed run's answers are those of a run that never stopped
    columns = [c for c in ANSWER_COLUMNS if c in expected.columns]
    pd.testing.assert_frame_equal(details[columns], expected[columns])
    assert resumed.scored.scores == pytest.approx(reference.scored.scores, nan_ok=True)
    # the journal now holds every response: a third run asks the model nothing
    third = Counting(llava)
    done, again_details = _evaluate(third, tmp_path / "third", options, Journal(responses, "cure", IDENTITY))
    assert third.requests == 0 and done.answered.reused == 5
    pd.testing.assert_frame_equal(again_details[columns], expected[columns])


def test_changed_settings_or_identity_are_not_reused(llava, tmp_path):
    responses = tmp_path / "responses"
    options = {"cure.mode": "generation", "cure.max_new_tokens": "4"}
    first = Counting(llava)
    _evaluate(first, tmp_path / "a", options, Journal(responses, "cure", IDENTITY), limit=2)
    for changed_options, identity in (({**options, "cure.max_new_tokens": "5"}, IDENTITY),  # a generation setting
                                      (options, {**IDENTITY, "precision": "float32"}),  # another request
                                      ({"cure.mode": "likelihood"}, IDENTITY)):  # option scoring, not generation
        other = Counting(llava)
        done, _ = _evaluate(other, tmp_path / "b", changed_options, Journal(responses, "cure", identity), limit=2)
        assert done.answered.reused == 0 and other.requests > 0
    same = Counting(llava)
    done, _ = _evaluate(same, tmp_path / "c", options, Journal(responses, "cure", IDENTITY), limit=2)
    assert done.answered.reused == 2 and same.requests == 0


def test_a_cut_off_last_line_is_skipped_and_the_journal_goes_on(tmp_path):
    journal = Journal(tmp_path, "cure", IDENTITY)
    journal.append([{"key": "k1", "item": "a", "prediction": "A", "prompt": "p1"}])
    with open(journal.path, "ab") as handle:
        handle.write(b'{"key": "k2", "item": "b", "predic')  # a kill in the middle of a write
    reread = Journal(tmp_path, "cure", IDENTITY)
    assert set(reread.entries) == {"k1"}
    reread.append([{"key": "k3", "item": "c", "option_scores": "[]", "prompt": "p3"}])
    assert set(read_entries(journal.path)) == {"k1", "k3"}
    lines = journal.path.read_bytes().splitlines()
    assert json.loads(lines[-1])["key"] == "k3" and len(lines) == 3
    assert read_entries(tmp_path / "absent.jsonl") == {}


def _start_tick(settings, store):
    box: dict = {}
    thread = threading.Thread(target=lambda: box.setdefault("report", scheduler.tick(settings, store)))
    thread.start()
    return thread, box




@pytest.mark.slow  # the tick runs the evaluator as a process
def test_a_killed_worker_resumes_on_the_next_tick(settings, store, tiny_llava, monkeypatch):
    # one item per chunk (each journaled as it finishes), 20 sample instances; one thread for the worker's torch
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    settings = settings.with_(batch_size="1", options=("cure.mode=generation",))
    request = Request(model=tiny_llava.repo_id, revision=tiny_llava.sha, architecture="test")
    queue.save(store, request)
    responses = evaluator_process.responses_dir(settings, request)
    journal = responses / "cure.jsonl"
    command = evaluator_process.worker_command(settings, responses.parent / "request.json", responses.parent / "out",
                                       responses)
    assert command[command.index("--responses") + 1] == str(responses)

    thread, box = _start_tick(settings, store)
    wait_for(lambda: journal.exists() and journal.read_bytes().count(b"\n") >= 1, timeout=180)
    pid = int(next(settings.runs_dir.rglob("worker.pid")).read_text())
    os.killpg(pid, signal.SIGKILL)
    thread.join(timeout=120)
    assert box["report"].status == queue.PENDING, box["report"].error
    stored = queue.load(store, request.path)
    assert stored.status == queue.PENDING and stored.attempts == 1 and "SIGKILL" in stored.error
    assert not list(settings.runs_dir.rglob("results.json")), "the worker finished before it was killed"
    journaled = len(read_entries(journal))
    assert journaled >= 1

    report = scheduler.tick(settings, store)
    assert report.status == queue.FINISHED, report.error
    results = store.read_json(f"results/{request.key}.json")
    resumed = results["run"]["resumed"]["cure"]
    details = pd.read_parquet(store.root / "details" / request.key / "cure.parquet")
    asks = details.groupby("question_id", sort=False).size()  # one generation request per row, in plan order
    reused = resumed["reused"]
    assert reused > 0 and resumed["items"] == 20 and len(asks) == 20
    assert resumed["model_requests"] == len(details) - asks.iloc[:reused].sum()  # total - reused requests
    assert asks.iloc[:reused].sum() <= journaled  # only fully journaled items were reused
    assert not responses.exists()  # finished: the details hold every response, the journal is gone

    finished = queue.load(store, request.path)
    note = f"resumed: {reused} of 20 items reused"
    assert finished.status == queue.FINISHED and finished.attempts == 1
    assert list(queue_frame([finished], queue.FINISHED)["Note"]) == [note]
    assert note in progress_text(finished.progress)
