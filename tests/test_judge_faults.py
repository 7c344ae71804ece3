"""Judge faults never become scores: a reply that is not a judgement (empty, an HTML page, an error or rate-limit
message, a refusal, a LAVE reply with neither a rating nor a word) is asked again and then counted ungraded or
unrated; a bare LAVE rating is a judgement (flagged no_rationale); a LAVE rating is read only where the rater's format
puts it; the paper's fallback of 2 is for real judgements only. The
judge is a real HTTP server on loopback that fails 30 % of the calls (500, 429, timeouts, 200 with garbage)."""
from __future__ import annotations

import math

import pytest

from evaluator.benchmarks.judging import until_judged
from evaluator.benchmarks.lave import grader as lave_grader
from evaluator.benchmarks.lave.rater import NOTHING
from evaluator.benchmarks.lave.rater import reply_problem as lave_problem
from evaluator.benchmarks.simpleqa.grading import reply_problem as simpleqa_problem
from evaluator.judge import EndpointJudge, JudgeResult, parse_lave_rating
from evaluator.judge.judgement import EMPTY, ERROR, MARKUP, REFUSAL
from tests import scripted_judges
from tests.judge_servers import Reply, ScriptedServer
from tests.test_lave import ANSWERS as LAVE_ANSWERS, ScriptedModel, run_benchmark


@pytest.mark.parametrize("text, expected", [
    ("Rate limit: 3 requests per second exceeded", None),  # a digit in an error is never a rating
    ("3 of the references agree with the candidate, so it is right", None),  # nor a digit mid-text
    ("The colour matches; so 3.", 3),  # the final character, as the reference reads it
    ("Matches the references. So rating=2 (not 3)", 2),  # a labelled rating wins
    ("Close, but not the same: 2**", 2),
    ("It is off by 13", None),
])
def test_a_rating_is_read_only_where_the_format_puts_it(text, expected):
    assert parse_lave_rating(text) == expected


@pytest.mark.parametrize("text, problem", [
    ("", EMPTY), ("   \n", EMPTY), (None, EMPTY),
    ("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", MARKUP),
    ("502 Bad Gateway", ERROR),
    ("Rate limit: 3 requests per second exceeded", ERROR),
    ('{"error": "overloaded"}', ERROR),
    ("Error: upstream timed out. So rating=3", ERROR),
    ("The service is overloaded, please try again later", ERROR),
    ("I'm sorry, but I can't help with that.", REFUSAL),
    ("As an AI, I cannot evaluate this.", REFUSAL),
    ("3", None), ("So rating=1", None),  # a bare rating is a judgement, as the reference reads it
    ("...", NOTHING), ("5", NOTHING),  # neither a rating nor a word
    ("Error: model overloaded, retry in 3", ERROR),  # an error ending in a digit: never a rating
    ("The answer is vague.", None),  # a real judgement without a rating: the paper's fallback applies
    ("I cannot tell from the references.", None),
    ("The candidate's count is an error, not 5. So rating=1", None),
])
def test_what_is_not_a_lave_judgement(text, problem):
    assert lave_problem(text) == problem


def test_simpleqa_keeps_the_same_rule_without_asking_for_a_rationale():
    assert simpleqa_problem("B") is None and simpleqa_problem("Reason: wrong year.\nB") is None
    assert simpleqa_problem("<html><body>oops</body></html>") == MARKUP
    assert simpleqa_problem("Rate limit: 3 requests per second exceeded") == ERROR
    assert simpleqa_problem("I'm sorry, I cannot help with that.") == REFUSAL


def test_the_playground_never_shows_a_score_for_a_non_judgement():
    for raw in ("", "<html><body>502</body></html>", "Rate limit: 3 requests per second exceeded", "..."):
        shown = lave_grader.verdict(raw)
        assert shown.score is None and shown.label.startswith("unrated: "), raw
    bare = lave_grader.verdict("3")  # a bare rating counts as it reads, marked
    assert bare.score == 1.0 and bare.label == "3 correct (score 1) (no rationale)" and bare.rationale == ""
    fallback = lave_grader.verdict("The answer is vague.")
    assert fallback.score == 0.5 and "fallback" in fallback.label


class Replies:
    """A judge whose n-th call for a conversation gets the n-th reply of its list (the last repeats)."""

    def __init__(self, script: dict[str, list[str]]):
        self.script, self.calls = script, {}

    def complete_many(self, conversations, **generation):
        out = []
        for conv in conversations:
            key = conv[0]["content"]
            n = self.calls[key] = self.calls.get(key, 0) + 1
            replies = self.script[key]
            out.append(JudgeResult(text=replies[min(n, len(replies)) - 1], error=None, attempts=1))
        return out


def test_a_non_judgement_is_asked_again_and_then_reported_as_an_error():
    judge = Replies({"a": ["", "Fine. So rating=3"], "b": ["Rate limit: 3 per second"], "c": ["Good. So rating=2"]})
    convs = [[{"role": "user", "content": k}] for k in "abc"]
    first = judge.complete_many(convs)
    got = until_judged(judge, convs, first, lave_problem, {})
    assert [r.text for r in got] == ["Fine. So rating=3", "Rate limit: 3 per second", "Good. So rating=2"]
    assert got[0].error is None and got[2].error is None and judge.calls == {"a": 2, "b": 3, "c": 1}
    assert got[1].error == f"not a judgement after 3 replies: {ERROR}"


def _true_rating(candidate: str) -> int:
    return 1 + len(candidate) % 3


def _lave_judge(index: int, body: dict) -> Reply:
    candidate = body["messages"][-1]["content"].rsplit("Candidate answer: '", 1)[1].rsplit("'\nOutput:", 1)[0]
    return Reply(content=f"Compared with the references. So rating={_true_rating(candidate)}")


@pytest.mark.slow  # waits out real retries and backoffs, seconds
@pytest.mark.parametrize("seed", [1, 2])
def test_a_judge_failing_30_percent_never_turns_a_fault_into_a_rating(tmp_path, seed):
    script = scripted_judges.faulty(_lave_judge, share=0.3, seed=seed)
    with ScriptedServer(script) as server:
        judge = EndpointJudge(server.base_url, "faulty-judge", timeout=0.5, max_retries=2, backoff=0.0)
        res = run_benchmark("lave", ScriptedModel(LAVE_ANSWERS), limit=0, judge=judge, batch_size=4,
                            folder=tmp_path)
    rated = [r for r in res.rows if not math.isnan(r["rating"])]
    unrated = [r for r in res.rows if r["status"] == "ok" and math.isnan(r["rating"])]
    assert len(res.rows) == 30 and script.served["faults"] >= 5  # the whole sample suite; faults really served
    misgraded = [r for r in rated if r["rating"] != _true_rating(r["parsed_answer"]) or r["rating_fallback"]]
    assert misgraded == []
    assert res.counts["rated"] == len(rated) and res.counts["unrated"] == len(unrated)
    assert len(rated) >= 0.8 * len(res.rows)  # asking again recovers most faults
    assert all(r["judge_error"] for r in unrated)
