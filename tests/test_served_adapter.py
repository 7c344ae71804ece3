"""The served-model adapter against real HTTP servers on loopback: what a request becomes (messages, images as data
URLs in order, generation settings), many requests in flight with answers in order, the client's retries, a 200 that
is no completion asked again and never scored, usage and finish_reason, the probe's one-line failures, and a token
that is sent only as a bearer header and never shown."""
from __future__ import annotations

import base64
import io
import json
import logging
import socket
import time

import pytest
from PIL import Image

from evaluator.endpoints.names import parse_model_spec
from evaluator.models.base import GenerationRequest
from evaluator.models.served import ServedAdapter, ServedError, image_url, load_served
from tests.judge_servers import Reply, ScriptedServer


def _image(colour: tuple[int, int, int], size=(24, 16)) -> Image.Image:
    return Image.new("RGB", size, colour)


def _decoded(url: str) -> Image.Image:
    assert url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def _completion(text: str, finish: str = "stop", usage: dict | None = None, model: str = "server-side-id") -> str:
    body = {"object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("spec, fragment, names_the_setting", [
    ("endpoint:https://user:secret@host.example/v1|m", "no user or password", True),
    ("endpoint:https://host.example/v1?api_key=secret|m", "no query or fragment", True),
    ("endpoint:https://host.example/v1#secret|m", "no query or fragment", True),
    ("endpoint:https://host.example/v1", "expected 'endpoint:<base url>|<model>'", False),
    ("endpoint:ftp://host.example/v1|m", "must be http(s)", False),
    ("endpoint:https://host.example/v1|a b", "whitespace", False),
])
def test_a_bad_model_spec_is_refused_without_echoing_a_secret(spec, fragment, names_the_setting):
    with pytest.raises(ValueError) as refused:
        parse_model_spec(spec)
    message = str(refused.value)
    assert message.startswith("bad endpoint model spec") and fragment in message and "secret" not in message
    assert ("LEADERBOARD_MODEL_TOKEN" in message) is names_the_setting


def test_a_request_becomes_one_chat_completion_with_its_images_in_order():
    with ScriptedServer([Reply("fine")]) as server:
        adapter = ServedAdapter(server.base_url, "org/vlm")
        red, blue = _image((255, 0, 0)), _image((0, 0, 255), (8, 8))
        request = GenerationRequest("Which is red?", images=[red, blue], max_new_tokens=7, temperature=0.7, seed=11,
                                    stop=["\n\n"], system="Be brief.",
                                    history=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
        assert adapter.generate([request, GenerationRequest("plain")]) == ["fine", "fine"]
        first, second = sorted((r.body for r in server.requests), key=lambda b: isinstance(b["messages"][-1]["content"],
                                                                                            str))
    assert first["model"] == "org/vlm" and first["max_tokens"] == 7 and first["temperature"] == 0.7
    assert first["seed"] == 11 and first["stop"] == ["\n\n"] and first["stream"] is False
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant", "user"]
    assert first["messages"][0]["content"] == "Be brief." and first["messages"][2]["content"] == "yo"
    parts = first["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"] and parts[2]["text"] == "Which is red?"
    shown = [_decoded(p["image_url"]["url"]) for p in parts[:2]]
    assert shown[0].size == (24, 16) and shown[0].getpixel((0, 0)) == (255, 0, 0)
    assert shown[1].size == (8, 8) and shown[1].getpixel((0, 0)) == (0, 0, 255)
    # a text-only request is a plain string turn; nothing unasked is sent (no seed, no stop)
    assert second["messages"] == [{"role": "user", "content": "plain"}]
    assert "seed" not in second and "stop" not in second
    assert second["temperature"] == 0.0


def test_the_prompt_as_recorded_holds_no_image_bytes():
    adapter = ServedAdapter("http://127.0.0.1:9/v1", "m")
    shown = adapter.build_prompt(GenerationRequest("q", images=[_image((1, 2, 3))]))
    assert "<image 1>" in shown and "base64" not in shown and json.loads(shown)[-1]["content"][-1]["text"] == "q"
    assert image_url(Image.new("RGBA", (4, 4))).startswith("data:image/png;base64,")


def test_many_requests_are_in_flight_at_once_and_answers_come_back_in_order():
    def reply(index: int, body: dict) -> Reply:
        text = body["messages"][-1]["content"]
        return Reply(f"answer to {text}", delay=0.3 if text.endswith("0") else 0.05)

    with ScriptedServer(reply) as server:
        adapter = ServedAdapter(server.base_url, "m", batch_size=4)
        heard: list[int] = []
        requests = [GenerationRequest(f"q{i}") for i in range(12)]
        started = time.monotonic()
        results = adapter.generate_results(requests, on_answered=heard.extend)
        took = time.monotonic() - started
    assert [r.text for r in results] == [f"answer to q{i}" for i in range(12)]
    assert server.max_inflight == 4  # bounded by batch_size, and used
    assert sorted(heard) == list(range(12)) and heard != list(range(12))  # told as they arrive, not in order
    assert took < 60  # 12 requests of up to 0.3 s, 4 at a time: the in-flight count above shows it; this, a hang


def test_usage_and_finish_reason_say_how_an_answer_ended():
    replies = [Reply(body=_completion("cut off here", "length", {"prompt_tokens": 40, "completion_tokens": 3}),
                     headers={"Content-Type": "application/json"}),
               Reply(body=_completion("done", "stop", {"prompt_tokens": 12, "completion_tokens": 1}))]
    with ScriptedServer(replies) as server:
        adapter = ServedAdapter(server.base_url, "m", batch_size=1)
        long, short = adapter.generate_results([GenerationRequest("a", max_new_tokens=3), GenerationRequest("b")])
    assert (long.text, long.n_tokens, long.prompt_tokens, long.hit_limit) == ("cut off here", 3, 40, True)
    assert (short.text, short.n_tokens, short.prompt_tokens, short.hit_limit) == ("done", 1, 12, False)
    assert adapter.server_models == ["server-side-id"]


def test_stop_strings_are_applied_here_too():
    with ScriptedServer([Reply("first part###second part")]) as server:
        result = ServedAdapter(server.base_url, "m").generate_results([GenerationRequest("x", stop=["###"])])[0]
    assert result.text == "first part" and result.hit_limit is False


def test_429_with_retry_after_and_a_200_that_is_no_completion_are_asked_again_never_scored():
    replies = [Reply(status=429, headers={"Retry-After": "0"}),
               Reply(body="<html><body>502 Bad Gateway</body></html>", headers={"Content-Type": "text/html"}),
               Reply(body="{}"),
               Reply("real answer")]
    with ScriptedServer(replies) as server:
        adapter = ServedAdapter(server.base_url, "m", batch_size=1, backoff=0.0)
        assert adapter.generate([GenerationRequest("x")]) == ["real answer"]
        assert len(server.requests) == 4


def test_a_request_that_keeps_failing_ends_the_call_with_one_line():
    with ScriptedServer([Reply(status=503)]) as server:
        adapter = ServedAdapter(server.base_url, "m", batch_size=2, max_retries=1, backoff=0.0)
        with pytest.raises(ServedError) as failed:
            adapter.generate([GenerationRequest(f"q{i}") for i in range(6)])
        asked = len(server.requests)
    message = str(failed.value)
    assert "\n" not in message and server.base_url in message and "HTTP 503" in message and "2 attempts" in message
    assert asked < 12  # the requests not yet sent were not sent


@pytest.mark.slow  # waits out real retries and backoffs, seconds
def test_probe_failures_are_one_line_each_and_quick(monkeypatch):
    cases = [(Reply(status=401, body='{"error": "Unauthorized"}'), "refused the token (LEADERBOARD_MODEL_TOKEN)"),
             (Reply(status=403, body='{"error": "Forbidden"}'), "refused the token"),
             (Reply(status=404, body='{"message": "The model `m` does not exist."}'), "does not know the model 'm'"),
             (Reply(status=400, body='{"detail": "Server is pinned to x"}'), "refused the first request")]
    for reply, expected in cases:
        with ScriptedServer([reply]) as server:
            with pytest.raises(ServedError) as failed:
                ServedAdapter(server.base_url, "m").probe(images=False)
            assert len(server.requests) == 1  # 4xx: not asked again
        assert expected in str(failed.value) and "\n" not in str(failed.value)
    port = _closed_port()
    started = time.monotonic()
    with pytest.raises(ServedError) as unreachable:
        load_served(f"endpoint:http://127.0.0.1:{port}/v1|m")
    assert f"http://127.0.0.1:{port}/v1 could not be reached" in str(unreachable.value)
    assert time.monotonic() - started < 60  # one retry at most: no retry storm (the client's 4 retries, a minute)


def test_an_endpoint_that_refuses_images_makes_the_model_text_only():
    def reply(index: int, body: dict) -> Reply:
        if isinstance(body["messages"][-1]["content"], list):
            return Reply(status=400, body='{"message": "qwen3 is not a multimodal model"}')
        return Reply("OK")

    with ScriptedServer(reply) as server:
        adapter = load_served(f"endpoint:{server.base_url}|text-only", needs_images=True)
        assert len(server.requests) == 3  # the probes: text, prompt log-probabilities, image
        assert adapter.has_vision is False and "refused an image (HTTP 400" in adapter.vision_refusal
        with pytest.raises(ValueError, match="text-only"):
            adapter.generate([GenerationRequest("q", images=[_image((0, 0, 0))])])
        assert len(server.requests) == 3  # never asked again per item


def test_the_token_goes_only_in_the_bearer_header(monkeypatch, caplog):
    token = "sk-served-secret-123456"
    with ScriptedServer([Reply(status=401, body=f'{{"error": "bad key {token}"}}')]) as server:
        monkeypatch.setenv("LEADERBOARD_MODEL_TOKEN", token)
        monkeypatch.setenv("HF_TOKEN", "hf_NeverSentToAnEndpoint123")
        with caplog.at_level(logging.DEBUG), pytest.raises(ServedError) as failed:
            load_served(f"endpoint:{server.base_url}|m")
        sent = server.requests[0].headers
    assert sent["Authorization"] == f"Bearer {token}"
    assert token not in str(failed.value) and token not in caplog.text
    assert "hf_NeverSentToAnEndpoint123" not in json.dumps(dict(sent))
    monkeypatch.delenv("LEADERBOARD_MODEL_TOKEN")
    with ScriptedServer([Reply("OK")]) as server:
        adapter = load_served(f"endpoint:{server.base_url}|m")
        assert "Authorization" not in server.requests[0].headers  # no token, no header
    assert token not in repr(adapter)


@pytest.mark.parametrize("host, puny", [
    ("r\u043euter.huggingface.co", "xn--ruter-jye.huggingface.co"),  # a Cyrillic o
    ("127.0.0.1\uff0e1", "127.0.0.1.1"),  # a full-width dot
])
def test_a_look_alike_host_is_refused_for_a_served_model_and_a_judge_with_its_punycode(host, puny):
    from evaluator.judge import parse_judge_spec

    for parse, what in ((parse_model_spec, "model"), (parse_judge_spec, "judge")):
        with pytest.raises(ValueError) as refused:
            parse(f"endpoint:https://{host}/v1|m")
        message = str(refused.value)
        assert message.startswith(f"bad endpoint {what} spec: the host") and "not plain ASCII" in message
        assert f"its punycode form is {puny}" in message and len(message.splitlines()) == 1
    assert parse_model_spec(f"endpoint:https://{puny}/v1|m").host == puny  # the ASCII form, written out, is taken
