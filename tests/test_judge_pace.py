"""How fast grading goes and how it shows: a greedy local judge is asked once per conversation (the same reply would
come again), grading reports its count after every batch or so of grades, and a local judge under 7B is a trial
judge whose replies stop at TRIAL_MAX_TOKENS and whose runs say so."""
from __future__ import annotations

import json

import pytest

from evaluator.benchmarks.judging import CHUNK, REPLY_ATTEMPTS, ask_judge, chunk_size, reply_attempts
from evaluator.benchmarks.spec import ScoreContext
from evaluator.judge import JudgeResult, make_judge
from evaluator.judge.base import TRIAL_MAX_TOKENS

MESSAGES = [{"role": "user", "content": "Grade: is 52 x 4 = 20?"}]


class CountingJudge:
    """A judge that replies "not a grade" to everything, counting the conversations it is asked."""

    def __init__(self, parallel: int, repeatable: bool):
        self.parallel, self.repeatable, self.asked, self.calls = parallel, repeatable, 0, []

    def complete_many(self, conversations, **generation):
        self.asked += len(conversations)
        self.calls.append(len(conversations))
        return [JudgeResult(text="I think so.", error=None, attempts=1) for _ in conversations]


def _never_a_grade(text):
    return "no grade line"


@pytest.mark.parametrize("repeatable,temperature,asked", [(True, 0.0, 1), (True, None, 1), (True, 0.7, 3),
                                                         (False, 0.0, 3)])
def test_a_greedy_local_judge_is_not_asked_again_for_the_same_reply(repeatable, temperature, asked):
    judge = CountingJudge(parallel=4, repeatable=repeatable)
    ctx = ScoreContext(judge=judge)
    generation = {} if temperature is None else {"temperature": temperature}
    results = ask_judge(ctx, [MESSAGES] * 5, check=_never_a_grade, **generation)
    assert judge.asked == 5 * asked
    assert reply_attempts(judge, generation) == asked
    said = "1 reply" if asked == 1 else f"{REPLY_ATTEMPTS} replies"
    assert all(r.error == f"not a judgement after {said}: no grade line" for r in results)  # never read as a grade


def test_grading_reports_its_count_after_every_batch():
    judge, counts = CountingJudge(parallel=4, repeatable=True), []
    ctx = ScoreContext(judge=judge, progress=lambda done, total: counts.append((done, total)))
    ask_judge(ctx, [MESSAGES] * 6)
    assert judge.calls == [4, 2] and counts == [(0, 6), (4, 6), (6, 6)]  # "grading 4/6" before the last batch
    assert chunk_size(CountingJudge(parallel=100, repeatable=False)) == CHUNK
    assert chunk_size(object()) == CHUNK  # a judge that does not say


def test_a_small_local_judge_is_a_trial_judge_with_short_replies(tiny_llama, one_torch_thread):
    judge = make_judge(f"local:{tiny_llama.repo_id}@{tiny_llama.sha}")
    assert judge.trial is True and judge.repeatable is True and 0 < judge.parameters < 7_000_000_000
    asked = []
    real = judge._adapter.generate
    judge._adapter.generate = lambda requests: asked.extend(requests) or real(requests)
    judge.complete_many([MESSAGES, MESSAGES], max_tokens=512)
    judge.complete(MESSAGES, max_tokens=16)
    assert [r.max_new_tokens for r in asked] == [TRIAL_MAX_TOKENS, TRIAL_MAX_TOKENS, 16]
    endpoint = make_judge("endpoint:http://127.0.0.1:9/v1|m")
    assert endpoint.trial is False and endpoint.parameters is None and endpoint.repeatable is False


QUESTIONS = 6


@pytest.mark.slow
def test_a_local_judge_grades_the_simpleqa_sample_as_a_trial_judge(tiny_llama, one_torch_thread, tmp_path):
    """The quick trial's grading: SimpleQA sample questions (answers given; the first QUESTIONS of them, as the tiny
    judge's every reply runs to its token limit) graded by the tests' tiny local judge finishes, and the results say
    the judge was a trial one. How long it takes is bench/judge_pace.py's to measure, never a test's to bound (a busy
    machine is slow, not red)."""
    from evaluator.benchmarks import get_benchmark
    from evaluator.runs.runner import judge_record

    bench = get_benchmark("simpleqa")
    from evaluator.benchmarks.spec import PlanContext
    plan = bench.plan(PlanContext(suite="sample", limit=0, images_dir=tmp_path, options={}))
    first = list(dict.fromkeys(row["question_id"] for row in plan.rows))[:QUESTIONS]
    rows = [dict(row, answer="20", response="20") for row in plan.rows if row["question_id"] in first]
    judge = make_judge(f"local:{tiny_llama.repo_id}@{tiny_llama.sha}")
    scored = bench.score(rows, ScoreContext(judge=judge))
    assert {r["question_id"] for r in scored.rows} == set(first) and len(first) == QUESTIONS
    assert all(isinstance(r.get("judge_error"), str) for r in scored.rows)
    record = judge_record(judge)
    assert record["judge_trial"] is True and record["judge_parameters"] == judge.parameters
    json.dumps(record)
