"""A compressed answer is bounded by what it decodes to (evaluator.endpoints.decoding): a few kB of gzip-in-gzip
decode to gigabytes, so LEADERBOARD_ENDPOINT_MAX_REPLY_MB counts the decoded bytes, streamed or not, and a coding the
client cannot decode under that cap is refused with one line. Real servers on loopback send a valid chat completion
followed by megabytes of JSON whitespace, compressed, to every door that reads an endpoint's answer: the client both
share, the endpoint judge, the served model (in process and through the command line) and the Playground's judge in
the Space's own process."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tracemalloc
import zlib

import pytest

from evaluator.endpoints.chat_client import ChatClient, ChatError
from evaluator.endpoints.decoding import ASKED, REFUSED_ENCODING
from evaluator.endpoints.limits import MB, TOO_LARGE, Limits
from evaluator.judge import JudgeError
from evaluator.judge.endpoint import EndpointJudge
from evaluator.models.base import GenerationRequest
from evaluator.models.served import ServedAdapter, ServedError
from tests.conftest import PROJECT
from tests.judge_servers import Reply, ScriptedServer
from tests.served_servers import Fault, StandInServer

ASK = {"messages": [{"role": "user", "content": "Say A."}], "max_tokens": 4}
CAP = Limits(max_reply_bytes=1 * MB)
TAIL = 4 * MB  # JSON whitespace after the completion: four times the cap once decoded, a few kB on the wire


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


# Content-Encoding -> how the body is compressed ("deflate" is zlib-wrapped; some servers send it raw)
ENCODERS = {
    "gzip": lambda data: gzip.compress(data, 9),
    "deflate": lambda data: zlib.compress(data, 9),
    "gzip, gzip": lambda data: gzip.compress(gzip.compress(data, 9), 9),
}
SENT_AS = {"raw deflate": "deflate"}  # a case's name -> the Content-Encoding it is sent with
ENCODERS_TOO = {**ENCODERS, "raw deflate": _raw_deflate}


def completion(content: str = "A") -> bytes:
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}]}).encode()


def events(content: str, tail: int = 0) -> bytes:
    """A streamed answer as server-sent events, with `tail` blank lines before its end."""
    chunks = [{"choices": [{"index": 0, "delta": {"content": content[i:i + 3]}}]} for i in range(0, len(content), 3)]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    text = "".join(f"data: {json.dumps({'object': 'chat.completion.chunk', 'model': 'm', **c})}\n\n" for c in chunks)
    return text.encode() + b"\n" * tail + b"data: [DONE]\n\n"


def compressed(case: str, data: bytes, stream: bool = False) -> Reply:
    return Reply(raw=ENCODERS_TOO[case](data), headers={"Content-Encoding": SENT_AS.get(case, case)},
                 content_type="text/event-stream" if stream else "application/json")


def _client(server: ScriptedServer, limits: Limits = CAP) -> ChatClient:
    return ChatClient(server.base_url, "m", timeout=60, max_retries=4, backoff=0.01, limits=limits)


def _one_line_over_the_cap(error: Exception) -> None:
    text = str(error)
    assert "passed 1 MB" in text and "LEADERBOARD_ENDPOINT_MAX_REPLY_MB" in text, text
    assert len(text.splitlines()) == 1 and "Traceback" not in text and "Error:" not in text, text


# -- the client the judge and the served model share -------------------------------------------------------------------

@pytest.mark.parametrize("case", list(ENCODERS_TOO))
def test_a_compressed_answer_that_decodes_past_the_cap_is_refused_with_one_line(case):
    reply = compressed(case, completion() + b" " * TAIL)
    assert len(reply.raw) < 64 * 1024  # on the wire, far under the cap
    with ScriptedServer([reply]) as server:
        with pytest.raises(ChatError) as caught:
            _client(server).call(ASK)
        sent = len(server.requests)
    assert caught.value.limit == TOO_LARGE and sent == 1  # never parsed as a completion, never asked again
    _one_line_over_the_cap(caught.value)


@pytest.mark.parametrize("case", list(ENCODERS_TOO))
def test_a_compressed_answer_under_the_cap_is_a_completion(case):
    with ScriptedServer([compressed(case, completion("B") + b" " * (MB // 2))]) as server:
        body, attempts = _client(server).call(ASK)
        asked = server.requests[0].headers.get("Accept-Encoding")
    assert body["choices"][0]["message"]["content"] == "B" and attempts == 1
    assert asked == ASKED  # only codings the client decodes under the cap


def test_a_compressed_stream_is_counted_as_it_decodes():
    with ScriptedServer([compressed("gzip, gzip", events("A fine answer.", tail=TAIL), stream=True)]) as server:
        stream, _ = _client(server).call(ASK, stream=True)
        with pytest.raises(ChatError) as caught:
            for _ in stream:
                pass
    assert caught.value.limit == TOO_LARGE
    _one_line_over_the_cap(caught.value)
    with ScriptedServer([compressed("gzip", events("A fine answer.", tail=1000), stream=True)]) as server:
        stream, _ = _client(server).call(ASK, stream=True)
        pieces = [chunk.choices[0].delta.content or "" for chunk in stream]
    assert "".join(pieces) == "A fine answer."


def test_an_error_body_is_bounded_too():
    # a 400 is not asked again, and the client reads its body for the message
    reply = compressed("gzip, gzip", b'{"error": {"message": "no"}}' + b" " * TAIL)
    reply.status = 400
    with ScriptedServer([reply]) as server:
        with pytest.raises(ChatError) as caught:
            _client(server).call(ASK)
    assert caught.value.limit == TOO_LARGE
    _one_line_over_the_cap(caught.value)


@pytest.mark.parametrize("coding", ["br", "zstd", "compress", "gzip, gzip, gzip, gzip, gzip, gzip"])
def test_a_coding_the_client_cannot_bound_is_refused_with_one_line_whatever_its_size(coding):
    with ScriptedServer([Reply(raw=completion("A"), headers={"Content-Encoding": coding})]) as server:
        with pytest.raises(ChatError) as caught:
            _client(server).call(ASK)
        sent = len(server.requests)
    text = str(caught.value)
    assert caught.value.limit == REFUSED_ENCODING and sent == 1, text
    assert "Content-Encoding" in text and coding.split(",")[0] in text and len(text.splitlines()) == 1, text
    assert "not asked again" in text


def test_a_hostile_coding_name_is_cut_in_the_refusal():
    coding = "x" * 5000 + "<img src=x>"
    with ScriptedServer([Reply(raw=completion("A"), headers={"Content-Encoding": coding})]) as server:
        with pytest.raises(ChatError) as caught:
            _client(server).call(ASK)
    assert len(str(caught.value)) < 400 and "<img" not in str(caught.value)


def test_a_bomb_never_holds_much_more_than_the_cap_in_memory():
    decoded = 48 * MB
    reply = compressed("gzip, gzip", completion() + b" " * decoded)
    with ScriptedServer([reply]) as server:
        client = _client(server)
        tracemalloc.start()
        try:
            with pytest.raises(ChatError):
                client.call(ASK)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 4 * MB, peak  # the cap, one decoded piece in flight and the client's own; not the 48 MB


# -- every door: the endpoint judge, the served model, the Playground's judge in the Space's process -------------------

def test_the_endpoint_judge_refuses_a_compressed_answer_past_the_cap():
    with ScriptedServer([compressed("deflate", completion() + b" " * TAIL)]) as server:
        judge = EndpointJudge(server.base_url, "j", limits=CAP, max_retries=0)
        result = judge.complete_many([[{"role": "user", "content": "Grade."}]], max_tokens=8)[0]
        with pytest.raises(JudgeError) as caught:
            list(judge.stream([{"role": "user", "content": "Grade."}], max_tokens=8))
    assert result.text is None
    _one_line_over_the_cap(result.error)
    _one_line_over_the_cap(caught.value)


def test_the_served_model_refuses_a_compressed_answer_past_the_cap():
    bomb = Fault(body=ENCODERS["gzip, gzip"](completion() + b" " * TAIL),
                 headers={"Content-Encoding": "gzip, gzip"})
    with StandInServer("org/vlm", faults=[bomb]) as server:
        adapter = ServedAdapter(server.base_url, "org/vlm", limits=CAP, batch_size=1)
        with pytest.raises(ServedError) as caught:
            adapter.generate([GenerationRequest("Say A.", max_new_tokens=4)])
        sent = len(server.chat_requests)
        assert adapter.generate([GenerationRequest("Say A.", max_new_tokens=4)])  # a plain answer: still read
    _one_line_over_the_cap(caught.value)
    assert sent == 1


def test_the_playground_judge_in_the_space_refuses_a_compressed_stream_past_the_cap(settings, store):
    from tests.test_playground import call, grade_handler

    bomb = compressed("gzip, gzip", events("Reason.\nA", tail=TAIL), stream=True)
    with ScriptedServer([bomb]) as server:
        handler = grade_handler(settings.with_(judge=f"endpoint:{server.base_url}|j", endpoint_max_reply_mb=1.0),
                                store)
        out = call(handler, None, "203.0.113.7")
    assert "passed 1 MB" in out["message"] and "LEADERBOARD_ENDPOINT_MAX_REPLY_MB" in out["message"], out
    assert out["verdict"].startswith("ungraded")  # what came before the cap is shown, never graded


@pytest.mark.slow  # starts the evaluator's command line
def test_a_served_run_given_a_compressed_bomb_ends_with_one_error_line(tmp_path):
    bomb = compressed("gzip, gzip", completion("The answer is (A).") + b" " * TAIL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEADERBOARD_")}
    env["LEADERBOARD_ENDPOINT_MAX_REPLY_MB"] = "1"
    with ScriptedServer([bomb]) as server:
        done = subprocess.run([sys.executable, "-m", "evaluator", "run", "--model", f"endpoint:{server.base_url}|m",
                               "--benchmarks", "reform", "--limit", "1", "--batch-size", "1",
                               "--out", str(tmp_path / "out")], cwd=PROJECT, capture_output=True, text=True,
                              timeout=300, env=env)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert done.returncode == 1 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "passed 1 MB" in errors[0] and "LEADERBOARD_ENDPOINT_MAX_REPLY_MB" in errors[0], errors[0]
    assert not (tmp_path / "out" / "results.json").exists()
