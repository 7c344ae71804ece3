"""The loopback stand-in for served models (tests/served_servers.py) refuses what vLLM / OpenAI / the HF router refuse
and answers what they answer, seen through the real `openai` client; and a real `transformers serve` starts on a tiny
LLaVA (slow)."""
from __future__ import annotations

import base64
import json
import threading

import openai
import pytest
import requests

from tests.conftest import wait_for
from tests.served_servers import DEFAULT_ANSWER, Fault, StandInServer, TransformersServe, image_data_url

USER = [{"role": "user", "content": "What colour is the ball?"}]


def _png(size=(8, 8), colour=(200, 30, 30)) -> str:
    from PIL import Image

    return image_data_url(Image.new("RGB", size, colour))


def _image_message(*urls: str, text: str = "What is in the picture?") -> list[dict]:
    parts = [{"type": "image_url", "image_url": {"url": url}} for url in urls]
    return [{"role": "user", "content": [*parts, {"type": "text", "text": text}]}]


def _client(server: StandInServer, api_key: str = "unused", **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=api_key, max_retries=0, **kwargs)


def _post(server: StandInServer, body, headers: dict | None = None, raw: bytes | None = None) -> requests.Response:
    headers = {"Content-Type": "application/json", **(headers or {})}
    data = raw if raw is not None else json.dumps(body).encode()
    return requests.post(f"{server.base_url}/chat/completions", data=data, headers=headers, timeout=10)


@pytest.fixture(scope="module")
def server():
    with StandInServer(model="org/vlm") as s:
        yield s


# ---- what it answers ------------------------------------------------------------------------------------------

def test_models_health_and_a_plain_answer(server):
    client = _client(server)
    assert [m.id for m in client.models.list().data] == ["org/vlm"]
    assert requests.get(server.base_url.removesuffix("/v1") + "/health", timeout=5).status_code == 200
    reply = client.chat.completions.create(model="org/vlm", messages=USER, max_tokens=16, temperature=0, seed=3)
    assert reply.model == "org/vlm" and reply.object == "chat.completion"
    assert [c.message.content for c in reply.choices] == [DEFAULT_ANSWER]
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage.completion_tokens == 4
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_an_image_request_is_answered_and_counted_in_usage(server):
    client = _client(server)
    text_only = client.chat.completions.create(model="org/vlm", messages=_image_message(text="Describe it."))
    with_image = client.chat.completions.create(model="org/vlm", messages=_image_message(_png(), text="Describe it."))
    assert with_image.usage.prompt_tokens == text_only.usage.prompt_tokens + server.image_tokens
    http_url = client.chat.completions.create(model="org/vlm",
                                              messages=_image_message("https://example.org/cat.png"))
    assert http_url.choices[0].message.content == DEFAULT_ANSWER


def test_n_stop_max_tokens_and_the_served_id():
    seen = []

    def answer(messages, body):
        seen.append(messages[-1]["content"])
        return "Paris is the capital. Rome is too."

    with StandInServer(model="org/vlm", served_id="/models/vlm@main", answer=answer) as server:
        client = _client(server)
        two = client.chat.completions.create(model="org/vlm", messages=USER, n=2)
        assert [c.index for c in two.choices] == [0, 1] and two.model == "/models/vlm@main"
        assert seen == [USER[0]["content"]] * 2
        stopped = client.chat.completions.create(model="org/vlm", messages=USER, stop=[" Rome", "capital"])
        assert stopped.choices[0].message.content == "Paris is the "
        assert stopped.choices[0].finish_reason == "stop"
        cut = client.chat.completions.create(model="org/vlm", messages=USER, max_tokens=3)
        assert cut.choices[0].message.content == "Paris is the"
        assert cut.choices[0].finish_reason == "length" and cut.usage.completion_tokens == 3
        # the stop string lies beyond the length cut: a real server never generates it
        beyond = client.chat.completions.create(model="org/vlm", messages=USER, max_tokens=2, stop=["Rome"])
        assert (beyond.choices[0].message.content, beyond.choices[0].finish_reason) == ("Paris is", "length")
        newer = client.chat.completions.create(model="org/vlm", messages=USER, max_completion_tokens=1)
        assert newer.choices[0].message.content == "Paris"


def test_streaming_gives_the_same_text(server):
    stream = _client(server).chat.completions.create(model="org/vlm", messages=USER, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == DEFAULT_ANSWER


def test_requests_are_recorded_with_headers_and_body():
    with StandInServer(model="m", token="tok") as server:
        _client(server, api_key="tok").chat.completions.create(model="m", messages=USER, temperature=0.0)
        (recorded,) = server.chat_requests
        assert recorded.headers["authorization"] == "Bearer tok"
        assert recorded.body["messages"] == USER and recorded.body["temperature"] == 0.0
        assert recorded.status == 200


def test_max_inflight_counts_concurrent_requests():
    with StandInServer(model="m", latency=0.3) as server:
        client = _client(server)
        threads = [threading.Thread(target=client.chat.completions.create,
                                    kwargs=dict(model="m", messages=USER)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # six in flight at once: answered side by side, not one after another (no clock read: a busy machine is slow);
        # the server counts a reply done just after sending it, so the last count may lag the client by a moment
        assert server.max_inflight == 6
        wait_for(lambda: server.inflight == 0, timeout=10)


# ---- what it refuses -------------------------------------------------------------------------------------------

def test_unknown_model_is_404_with_vllms_error_body(server):
    with pytest.raises(openai.NotFoundError) as caught:
        _client(server).chat.completions.create(model="org/other", messages=USER)
    assert caught.value.body == {"message": "The model `org/other` does not exist.", "type": "NotFoundError",
                                 "param": "model", "code": 404}
    assert caught.value.response.json()["error"]["code"] == 404


def test_legacy_error_body():
    with StandInServer(model="m", legacy_errors=True) as server:
        response = _post(server, {"model": "x", "messages": USER})
        assert response.status_code == 404
        assert response.json() == {"object": "error", "message": "The model `x` does not exist.",
                                   "type": "NotFoundError", "param": "model", "code": 404}


def test_token_missing_or_wrong_is_401_and_health_stays_open():
    with StandInServer(model="m", token="right") as server:
        for key in ("wrong", "right-but-longer"):
            with pytest.raises(openai.AuthenticationError) as caught:
                _client(server, api_key=key).chat.completions.create(model="m", messages=USER)
            assert caught.value.response.json() == {"error": "Unauthorized"}
        assert _post(server, {"model": "m", "messages": USER}).status_code == 401  # no header at all
        assert _post(server, {"model": "m", "messages": USER}, {"Authorization": "Token right"}).status_code == 401
        with pytest.raises(openai.AuthenticationError):
            _client(server, api_key="wrong").models.list()
        assert requests.get(server.base_url.removesuffix("/v1") + "/health", timeout=5).status_code == 200
        ok = _client(server, api_key="right").chat.completions.create(model="m", messages=USER)
        assert ok.choices[0].message.content == DEFAULT_ANSWER
        assert _post(server, {"model": "m", "messages": USER}, {"Authorization": "bearer right"}).status_code == 200


def test_forbidden_is_403():
    with StandInServer(model="m", forbidden=True) as server:
        with pytest.raises(openai.PermissionDeniedError) as caught:
            _client(server).chat.completions.create(model="m", messages=USER)
        assert "sufficient permissions" in caught.value.response.json()["error"]


def test_image_on_a_text_only_server_is_400():
    with StandInServer(model="org/text", vision=False) as server:
        client = _client(server)
        assert client.chat.completions.create(model="org/text", messages=USER).choices
        with pytest.raises(openai.BadRequestError, match="org/text is not a multimodal model"):
            client.chat.completions.create(model="org/text", messages=_image_message(_png()))


def test_more_images_than_the_limit_is_400():
    with StandInServer(model="m", max_images=1) as server:
        client = _client(server)
        assert client.chat.completions.create(model="m", messages=_image_message(_png())).choices
        with pytest.raises(openai.BadRequestError, match=r"At most 1 image\(s\) may be provided in one prompt"):
            client.chat.completions.create(model="m", messages=_image_message(_png(), _png()))
        # counted over the whole conversation, as vLLM counts per prompt
        history = _image_message(_png()) + [{"role": "assistant", "content": "A"}] + _image_message(_png())
        with pytest.raises(openai.BadRequestError, match="At most 1 image"):
            client.chat.completions.create(model="m", messages=history)


NOT_AN_IMAGE = base64.b64encode(b"hello, not a picture").decode()


@pytest.mark.parametrize("url, message", [
    ("data:image/png;base64" + _png().partition(",")[2], "missing ',' separator"),
    ("data:image/png," + NOT_AN_IMAGE, "Only base64 data URLs are supported"),
    ("data:image/png;base64,@@not base64@@", "Invalid base64"),
    ("data:image/png;base64," + NOT_AN_IMAGE, "cannot identify image file"),
    ("data:text/plain;base64," + _png().partition(",")[2], "expected image/"),
    ("file:///etc/passwd", "allowed-local-media-path"),
    ("ftp://example.org/cat.png", "must be either a HTTP, data or file URL"),
])
def test_malformed_image_urls_are_400(server, url, message):
    with pytest.raises(openai.BadRequestError, match=message):
        _client(server).chat.completions.create(model="org/vlm", messages=_image_message(url))


@pytest.mark.parametrize("body, param", [
    ({"model": "org/vlm"}, "messages"),
    ({"model": "org/vlm", "messages": []}, "messages"),
    ({"model": "org/vlm", "messages": "hello"}, "messages"),
    ({"messages": USER}, "model"),
    ({"model": "org/vlm", "messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
    ({"model": "org/vlm", "messages": [{"role": "user"}]}, "messages[0].content"),
    ({"model": "org/vlm", "messages": [{"role": "user", "content": [
        {"type": "audio_url", "audio_url": {"url": "x"}}]}]}, "type"),
    ({"model": "org/vlm", "messages": [{"role": "user", "content": [{"type": "text"}]}]},
     "messages[0].content[0].text"),
    ({"model": "org/vlm", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "data:x"}]}]},
     "messages[0].content[0].image_url"),
    ({"model": "org/vlm", "messages": [{"role": "system", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}]}]}, "messages[0]"),
    ({"model": "org/vlm", "messages": USER, "max_tokens": 0}, "max_tokens"),
    ({"model": "org/vlm", "messages": USER, "max_tokens": 2.5}, "max_tokens"),
    ({"model": "org/vlm", "messages": USER, "max_completion_tokens": -1}, "max_completion_tokens"),
    ({"model": "org/vlm", "messages": USER, "temperature": 2.5}, "temperature"),
    ({"model": "org/vlm", "messages": USER, "temperature": -0.1}, "temperature"),
    ({"model": "org/vlm", "messages": USER, "temperature": "hot"}, "temperature"),
    ({"model": "org/vlm", "messages": USER, "top_p": 0}, "top_p"),
    ({"model": "org/vlm", "messages": USER, "n": 0}, "n"),
    ({"model": "org/vlm", "messages": USER, "n": 1.5}, "n"),
    ({"model": "org/vlm", "messages": USER, "seed": 1.5}, "seed"),
    ({"model": "org/vlm", "messages": USER, "seed": "3"}, "seed"),
    ({"model": "org/vlm", "messages": USER, "stop": [""]}, "stop"),
    ({"model": "org/vlm", "messages": USER, "stop": [3]}, "stop"),
])
def test_malformed_requests_are_400(server, body, param):
    response = _post(server, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == 400 and error["param"] == param and error["message"]


def test_malformed_requests_through_the_client_are_bad_request_errors(server):
    client = _client(server)
    with pytest.raises(openai.BadRequestError, match=r"temperature must be in \[0, 2\]"):
        client.chat.completions.create(model="org/vlm", messages=USER, temperature=3)
    with pytest.raises(openai.BadRequestError, match="n must be at least 1"):
        client.chat.completions.create(model="org/vlm", messages=USER, n=0)
    with pytest.raises(openai.BadRequestError, match="Unsupported chat content part type: 'video_url'"):
        client.chat.completions.create(model="org/vlm", messages=[
            {"role": "user", "content": [{"type": "video_url", "video_url": {"url": "https://example.org/v.mp4"}}]}])


def test_not_json_is_400(server):
    assert _post(server, None, raw=b"{not json").status_code == 400
    assert _post(server, None, {"Content-Type": "text/plain"}, raw=json.dumps(
        {"model": "org/vlm", "messages": USER}).encode()).status_code == 400
    assert requests.get(f"{server.base_url}/chat/completions", timeout=5).status_code == 405
    assert requests.post(f"{server.base_url}/completions", json={}, timeout=5).status_code == 404


def test_unknown_fields_refused_only_when_strict(server):
    assert _client(server).chat.completions.create(model="org/vlm", messages=USER,
                                                   extra_body={"top_k": 1}).choices  # vLLM ignores them
    with StandInServer(model="m", strict_fields=True) as strict:
        with pytest.raises(openai.BadRequestError, match="Unrecognized request argument supplied: top_k"):
            _client(strict).chat.completions.create(model="m", messages=USER, extra_body={"top_k": 1})
        assert _client(strict).chat.completions.create(model="m", messages=USER, seed=1, n=1, stop="x").choices


def test_max_stop():
    with StandInServer(model="m", max_stop=4) as server:
        with pytest.raises(openai.BadRequestError, match="maximum length 4"):
            _client(server).chat.completions.create(model="m", messages=USER, stop=list("abcde"))


# ---- faults ----------------------------------------------------------------------------------------------------

def test_scripted_faults_then_normal_answers():
    faults = [Fault.rate_limited(retry_after=2), Fault.server_error(502), Fault.server_error(503), Fault(status=500)]
    with StandInServer(model="m", faults=faults) as server:
        client = _client(server)
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="m", messages=USER)
        assert caught.value.response.headers["retry-after"] == "2"
        for status in (502, 503, 500):
            with pytest.raises(openai.InternalServerError) as caught:
                client.chat.completions.create(model="m", messages=USER)
            assert caught.value.status_code == status
        assert client.chat.completions.create(model="m", messages=USER).choices[0].message.content == DEFAULT_ANSWER
        assert [r.status for r in server.chat_requests] == [429, 502, 503, 500, 200]


def test_html_and_non_completion_bodies_with_status_200():
    with StandInServer(model="m", faults=[Fault.html_page(), Fault.not_a_completion(),
                                          Fault.not_a_completion({"object": "chat.completion"})]) as server:
        html = _post(server, {"model": "m", "messages": USER})
        assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
        assert "<html>" in html.text
        empty = _post(server, {"model": "m", "messages": USER})
        assert empty.status_code == 200 and empty.json() == {}
        # what the openai client makes of it: no error, a completion without choices
        reply = _client(server).chat.completions.create(model="m", messages=USER)
        assert reply.choices is None


def test_a_callable_script_sees_the_index_and_body():
    seen = []

    def script(index, body):
        seen.append((index, body["messages"][0]["content"]))
        return Fault.server_error(503) if index % 2 == 0 else None

    with StandInServer(model="m", faults=script) as server:
        client = _client(server)
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="m", messages=USER)
        assert client.chat.completions.create(model="m", messages=USER).choices
    assert seen == [(0, USER[0]["content"]), (1, USER[0]["content"])]


def test_slow_answers_and_dropped_connections():
    with StandInServer(model="m", faults=[Fault.slow(0.5), Fault.slow(0.2), Fault.dropped()]) as server:
        client = _client(server, timeout=0.2)
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="m", messages=USER)
        patient = _client(server, timeout=5)
        assert patient.chat.completions.create(model="m", messages=USER).choices  # slow, then answered
        with pytest.raises(openai.APIConnectionError):
            patient.chat.completions.create(model="m", messages=USER)
        assert server.chat_requests[2].status is None


# ---- a real transformers serve ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_transformers_serve_on_a_tiny_llava(tmp_path):
    from PIL import Image

    from tests.tiny_models import build_tiny_llava

    folder = build_tiny_llava(tmp_path / "tiny-llava")
    with TransformersServe(folder) as serve:
        assert serve.base_url == f"http://127.0.0.1:{serve.port}/v1" and serve.model == str(folder)
        body = {"model": serve.model, "max_tokens": 4, "temperature": 0,
                "messages": _image_message(image_data_url(Image.new("RGB", (32, 32), (0, 90, 200))))}
        response = requests.post(f"{serve.base_url}/chat/completions", json=body, timeout=60)
        assert response.status_code == 200, response.text
        reply = response.json()
        assert reply["model"] == f"{serve.model}@main"
        assert reply["usage"]["prompt_tokens"] > 0 and reply["usage"]["completion_tokens"] > 0
        assert reply["choices"][0]["finish_reason"] in ("stop", "length")
        wrong = requests.post(f"{serve.base_url}/chat/completions", json={**body, "model": "org/other"}, timeout=60)
        assert wrong.status_code == 400 and "pinned" in wrong.text
        process = serve.process
    assert process.poll() is not None  # stopped on exit
