"""A served model or judge endpoint cannot hold a run: every call has a deadline for the whole of it (connecting,
sending, every byte of the answer, its retries) and a cap on the answer's bytes (evaluator.endpoints.limits,
evaluator.endpoints.bounded_http). Real servers on loopback trickle their answers a byte at a time, headers included, or
send one too large; the runs through the real command line end within the deadline plus a margin with one `error:` line,
and the journal keeps what was answered."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from evaluator.endpoints.chat_client import ChatClient, ChatError
from evaluator.endpoints.limits import DEADLINE, TOO_LARGE, Limits, limits_from_env
from evaluator.judge import JudgeError
from evaluator.judge.endpoint import EndpointJudge
from tests.conftest import PROJECT
from tests.judge_servers import Reply, ScriptedServer

ASK = {"messages": [{"role": "user", "content": "Say A."}], "max_tokens": 4}
DEADLINE_S = 2.0
# the deadline is checked at every socket operation, so it is met to the millisecond; the margin is for a busy machine
# (a slow machine is slow, not red), and each case would take a minute or more without the deadline
MARGIN_S = 20.0


def _client(server: ScriptedServer, limits: Limits, retries: int = 4) -> ChatClient:
    return ChatClient(server.base_url, "m", timeout=60, max_retries=retries, backoff=0.01, limits=limits)


@pytest.mark.slow  # seconds of waiting for the deadline
def test_a_trickled_answer_ends_at_the_deadline_and_is_not_asked_again():
    with ScriptedServer([Reply("A", trickle=0.5)]) as server:  # about 300 bytes: 2.5 minutes whole
        began = time.monotonic()
        with pytest.raises(ChatError) as caught:
            _client(server, Limits(deadline=DEADLINE_S)).call(ASK)
        took = time.monotonic() - began
        sent = len(server.requests)
    assert DEADLINE_S - 0.1 <= took < DEADLINE_S + MARGIN_S, took
    error = caught.value
    assert error.limit == DEADLINE and error.status is None and sent == 1  # past the deadline: nothing left to try
    assert "deadline of 2s" in str(error) and "LEADERBOARD_ENDPOINT_DEADLINE" in str(error)
    assert len(str(error).splitlines()) == 1


@pytest.mark.slow  # seconds of waiting for the deadline
def test_a_server_silent_after_its_headers_ends_at_the_deadline_not_its_read_timeout():
    # the per-read timeout (60 s) would wait on; the deadline cuts the read short
    with ScriptedServer([Reply("A", delay=90)]) as server:
        began = time.monotonic()
        with pytest.raises(ChatError) as caught:
            _client(server, Limits(deadline=DEADLINE_S)).call(ASK)
        took = time.monotonic() - began
    assert took < DEADLINE_S + MARGIN_S and caught.value.limit == DEADLINE


def test_an_answer_over_the_cap_is_refused_with_one_line_and_not_asked_again():
    huge = '{"choices": [{"message": {"content": "' + "x" * (3 * 1024 * 1024) + '"}}]}'
    with ScriptedServer([Reply(body=huge)]) as server:
        with pytest.raises(ChatError) as caught:
            _client(server, Limits(max_reply_bytes=1024 * 1024)).call(ASK)
        sent = len(server.requests)
    error = caught.value
    assert error.limit == TOO_LARGE and sent == 1
    assert "passed 1 MB" in str(error) and "LEADERBOARD_ENDPOINT_MAX_REPLY_MB" in str(error)
    # the same answer under the cap is a completion
    with ScriptedServer([Reply(body=huge)]) as server:
        body, attempts = _client(server, Limits(max_reply_bytes=8 * 1024 * 1024)).call(ASK)
    assert len(body["choices"][0]["message"]["content"]) == 3 * 1024 * 1024 and attempts == 1


@pytest.mark.slow  # seconds of waiting for the deadline
def test_the_deadline_covers_the_retries_of_one_call():
    # 503s, each answered after 0.8 s: a third attempt would start past the 2 s deadline (without it: 30 attempts)
    with ScriptedServer([Reply(status=503, delay=0.8)]) as server:
        began = time.monotonic()
        with pytest.raises(ChatError) as caught:
            _client(server, Limits(deadline=DEADLINE_S), retries=29).call(ASK)
        took = time.monotonic() - began
        sent = len(server.requests)
    assert took < DEADLINE_S + MARGIN_S and caught.value.limit == DEADLINE and 2 <= sent <= 4


@pytest.mark.slow  # seconds of waiting for the deadline
def test_a_streamed_judge_answer_is_bounded_too():
    # the headers and the first chunks at once, the rest a byte every 10 ms: the call returns, its stream stalls
    with ScriptedServer([Reply("A fine answer. " * 40, trickle=0.02, trickle_after=800)]) as server:
        judge = EndpointJudge(server.base_url, "j", limits=Limits(deadline=DEADLINE_S), max_retries=0)
        began = time.monotonic()
        pieces = []
        with pytest.raises(JudgeError) as caught:
            for piece in judge.stream([{"role": "user", "content": "Grade."}], max_tokens=8):
                pieces.append(piece)
        took = time.monotonic() - began
    assert took < DEADLINE_S + MARGIN_S and "deadline of 2s" in str(caught.value)
    assert pieces and "".join(pieces) != "A fine answer. " * 40  # it streamed, then stopped at the deadline


def test_the_limits_come_from_the_environment_and_bad_values_are_refused():
    assert limits_from_env({}) == Limits()
    limits = limits_from_env({"LEADERBOARD_ENDPOINT_DEADLINE": "45", "LEADERBOARD_ENDPOINT_MAX_REPLY_MB": "0.5"})
    assert limits.deadline == 45 and limits.max_reply_bytes == 512 * 1024
    for name, value in (("LEADERBOARD_ENDPOINT_DEADLINE", "0"), ("LEADERBOARD_ENDPOINT_DEADLINE", "soon"),
                        ("LEADERBOARD_ENDPOINT_MAX_REPLY_MB", "-1"), ("LEADERBOARD_ENDPOINT_MAX_REPLY_MB", "inf")):
        with pytest.raises(ValueError, match=name):
            limits_from_env({name: value})


# -- whole runs through the command line ------------------------------------------------------------------------------

def _run(*args: str, deadline: float) -> tuple[subprocess.CompletedProcess, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEADERBOARD_")}
    env["LEADERBOARD_ENDPOINT_DEADLINE"] = f"{deadline:g}"
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "evaluator", "run", *args], cwd=PROJECT, capture_output=True,
                          text=True, timeout=300, env=env)  # without the deadline it outlasts this: the test fails
    return done, time.monotonic() - began


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert done.returncode == 1 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return errors[0]


@pytest.mark.slow
def test_a_served_model_that_stalls_ends_the_run_within_the_deadline_and_keeps_its_journal(tmp_path):
    def reply(index: int, body: dict) -> Reply:
        return Reply("The answer is (A).") if index < 40 else Reply("The answer is (B).", trickle=1.0)

    responses = tmp_path / "responses"
    with ScriptedServer(reply) as server:
        done, took = _run("--model", f"endpoint:{server.base_url}|m", "--benchmarks", "reform", "--limit", "3",
                          "--batch-size", "1", "--responses", str(responses), "--out", str(tmp_path / "out"),
                          deadline=4)
    line = _one_error_line(done)
    assert "deadline of 4s" in line and "LEADERBOARD_ENDPOINT_DEADLINE" in line and server.base_url in line, line
    journaled = [json.loads(entry) for entry in (responses / "reform.jsonl").read_text().splitlines()]
    # the answers before the stall are journaled (each batch of them as it is done), the stalled one is not
    assert 1 <= len(journaled) <= 38 and all(entry["prediction"] == "The answer is (A)." for entry in journaled)
    assert not (tmp_path / "out" / "results.json").exists()
    assert took < 4 + 150, took  # the start-up, the answered items and one deadline; never the stalled answer's end


@pytest.mark.slow
def test_a_judge_that_stalls_ends_the_run_within_the_deadline_and_keeps_the_answers(tmp_path):
    def reply(index: int, body: dict) -> Reply:
        return Reply("A", trickle=1.0) if body["model"] == "judge" else Reply("Paris")

    responses = tmp_path / "responses"
    with ScriptedServer(reply) as server:
        done, took = _run("--model", f"endpoint:{server.base_url}|m", "--benchmarks", "simpleqa", "--limit", "3",
                          "--judge", f"endpoint:{server.base_url}|judge", "--responses", str(responses),
                          "--out", str(tmp_path / "out"), deadline=4)
        judged = [r for r in server.requests if r.body.get("model") == "judge"]
    line = _one_error_line(done)
    assert "judge" in line and "stalled" in line and "deadline of 4s" in line, line
    assert (responses / "simpleqa.jsonl").read_text().count("Paris") >= 3  # every answer kept for the retry
    assert 1 <= len(judged) <= 8  # one wave of calls in flight at most; none sent after the first missed its deadline
    assert took < 4 + 150, took  # the whole trickled answer would take about 7 minutes
