"""The LLM judge against real servers on 127.0.0.1: llm-katan (echo backend, with its failure injection), a scripted
OpenAI-compatible server of ours, and the local backend on the tiny Llama model. Plus SimpleQA grade parsing."""
from __future__ import annotations

import time

import pytest

from evaluator.judge import JudgeError, JudgeResult, make_judge, parse_simpleqa_grade, prompt_hash
from tests.conftest import free_port
from tests.judge_servers import Reply, ScriptedServer, start_llm_katans

TOKEN = "hf_SECRETtoken1234567890"
MESSAGES = [{"role": "system", "content": "You grade answers."}, {"role": "user", "content": "Is 2+2=4? Say A."}]


# ------------------------------------------------------------------------------------------------------------------
# llm-katan


def katan_test(test):
    """Slow (llm-katan servers are processes: five, some 5 CPU-seconds each), and in one xdist group: on one test
    worker, which starts them once (xdist spread these tests over both workers, and each started its own)."""
    return pytest.mark.slow(pytest.mark.xdist_group("katan")(test))


@pytest.fixture(scope="session")
def katan(tmp_path_factory):
    """llm-katan echo servers: healthy; 50% HTTP 500s; 500 on every call; 429 after the first request; slow (1 s)."""
    configs = {
        "ok": [],
        "flaky": ["--error-rate", "0.5"],
        "broken": ["--error-rate", "1.0"],
        "limited": ["--rate-limit-after", "1"],
        "slow": ["--latency-ms", "1000"],
    }
    servers = start_llm_katans(configs, tmp_path_factory.mktemp("llm-katan"), free_port)
    try:
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def _katan_judge(server, **options):
    options.setdefault("backoff", 0.01)
    return make_judge(f"endpoint:{server.base_url}|{server.model}", TOKEN, **options)


@katan_test
def test_katan_complete_returns_the_echo(katan):
    judge = _katan_judge(katan["ok"])
    text = judge.complete(MESSAGES, max_tokens=16)
    assert "[echo] model=echo-judge" in text and "max_tokens=16" in text and "temperature=0" in text
    assert "User: Is 2+2=4? Say A." in text and "messages=2" in text
    assert judge.identity == {"kind": "endpoint", "base_url": katan["ok"].base_url, "model": "echo-judge"}
    assert "".join(judge.stream(MESSAGES)).startswith("[echo] model=echo-judge")


@katan_test
def test_katan_retries_injected_500s_and_succeeds(katan, monkeypatch):
    # the openai client waits 0.5 s doubling to 8 s between its retries of a 500 that names no Retry-After; up to 20
    # retries of 12 requests at 50 % errors waited ~15 s here. Its waits are its own: shortened, the retries are not.
    import openai._base_client

    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.01)
    monkeypatch.setattr(openai._base_client, "MAX_RETRY_DELAY", 0.05)
    judge = _katan_judge(katan["flaky"], max_retries=20, concurrency=4)
    results = judge.complete_many([[{"role": "user", "content": f"q{i}"}] for i in range(12)])
    assert all(r.error is None for r in results), results
    assert [r.text.splitlines()[-1] for r in results] == [f"User: q{i}" for i in range(12)]  # order kept
    assert any(r.attempts > 1 for r in results)  # p(no 500 in 12 first attempts) = 1/4096


@katan_test
def test_katan_failure_on_every_call(katan):
    judge = _katan_judge(katan["broken"], max_retries=2)
    results = judge.complete_many([MESSAGES, MESSAGES])
    assert [(r.text, r.attempts) for r in results] == [(None, 3), (None, 3)]
    assert all("HTTP 500" in r.error and "3 attempts" in r.error and TOKEN not in r.error for r in results)
    with pytest.raises(JudgeError) as caught:
        judge.complete(MESSAGES)
    assert caught.value.attempts == 3 and TOKEN not in str(caught.value)


@katan_test
def test_katan_persistent_429_fails_after_retries(katan):
    judge = _katan_judge(katan["limited"], max_retries=2)
    assert judge.complete(MESSAGES).startswith("[echo]")  # the first request passes
    with pytest.raises(JudgeError, match="HTTP 429") as caught:
        judge.complete(MESSAGES)
    assert caught.value.attempts == 3


@katan_test
def test_katan_latency_beyond_timeout(katan):
    judge = _katan_judge(katan["slow"], timeout=0.3, max_retries=1)
    start = time.monotonic()
    [result] = judge.complete_many([MESSAGES])
    assert result.text is None and "timed out" in result.error and result.attempts == 2
    assert time.monotonic() - start < 60  # two 0.3 s timeouts, not the server's latency
    assert _katan_judge(katan["slow"], timeout=10).complete(MESSAGES).startswith("[echo]")


# ------------------------------------------------------------------------------------------------------------------
# Our scripted server


def _judge(server, **options):
    options.setdefault("backoff", 0.01)
    return make_judge(f"endpoint:{server.base_url}|judge-model", TOKEN, **options)


def test_verdict_texts_and_bearer_token_never_leaked():
    with ScriptedServer([Reply("The answer matches.\nA"), Reply("**Grade: B**")]) as server:
        judge = _judge(server)
        assert [parse_simpleqa_grade(judge.complete(MESSAGES)) for _ in range(2)] == ["A", "B"]
        request = server.requests[0]
        assert request.path == "/v1/chat/completions"
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        assert request.body["model"] == "judge-model" and request.body["messages"] == MESSAGES
        assert request.body["temperature"] == 0 and request.body["stream"] is False
        assert TOKEN not in repr(judge) and TOKEN not in str(judge.identity)


def test_token_not_in_errors_even_when_the_server_echoes_it(caplog):
    bad = Reply(status=401, body=f'{{"error": "bad key {TOKEN}"}}')
    with ScriptedServer([bad]) as server, caplog.at_level("DEBUG"):
        with pytest.raises(JudgeError) as caught:
            _judge(server).complete(MESSAGES)
        assert "HTTP 401" in str(caught.value) and TOKEN not in str(caught.value)
        assert caught.value.attempts == 1 and len(server.requests) == 1  # 4xx other than 429: no retry
    with ScriptedServer([Reply(status=503, body=f"down {TOKEN}")]) as server, caplog.at_level("DEBUG"):
        [result] = _judge(server, max_retries=1).complete_many([MESSAGES])
        assert result.text is None and "HTTP 503" in result.error and TOKEN not in result.error
    assert caplog.records and TOKEN not in caplog.text


@pytest.mark.slow  # waits out real retries and backoffs, seconds
def test_429_with_retry_after_is_honoured():
    replies = [Reply(status=429, headers={"Retry-After": "1"}), Reply(status=500), Reply("C")]
    with ScriptedServer(replies) as server:
        start = time.monotonic()
        [result] = _judge(server).complete_many([MESSAGES])
        assert result == JudgeResult(text="C", error=None, attempts=3)
        assert time.monotonic() - start >= 0.95  # waited for Retry-After, not the 10 ms backoff


@pytest.mark.slow  # a slow scripted server, seconds
def test_concurrency_is_bounded_and_order_kept():
    def reply(index, body):
        return Reply(content=body["messages"][-1]["content"].upper(), delay=0.15)

    with ScriptedServer(reply) as server:
        results = _judge(server, concurrency=3).complete_many([[{"role": "user", "content": f"x{i}"}]
                                                               for i in range(10)])
        assert [r.text for r in results] == [f"X{i}" for i in range(10)]
        assert server.max_inflight == 3
    with ScriptedServer(lambda i, b: Reply("A", delay=0.1)) as server:
        _judge(server, concurrency=1).complete_many([MESSAGES] * 4)
        assert server.max_inflight == 1


def test_stream_yields_pieces():
    with ScriptedServer([Reply(status=500), Reply("Reason: matches the target.\nA")]) as server:
        pieces = list(_judge(server).stream(MESSAGES, max_tokens=32))
        assert len(pieces) > 1 and "".join(pieces) == "Reason: matches the target.\nA"
        assert server.requests[-1].body["stream"] is True and server.requests[-1].body["max_tokens"] == 32


NOT_COMPLETIONS = [Reply(body="<html><body><h1>502 Bad Gateway</h1></body></html>"), Reply(body=""),
                   Reply(body='{"choices": [{"message": {"content": null}}]}'), Reply(body='{"object": "error"}')]


@pytest.mark.slow  # waits out real retries and backoffs, seconds
def test_a_200_that_is_not_a_chat_completion_is_asked_again_and_never_graded():
    with ScriptedServer(NOT_COMPLETIONS + [Reply("Reason.\nA")]) as server:
        [result] = _judge(server).complete_many([MESSAGES])
        assert result == JudgeResult(text="Reason.\nA", error=None, attempts=5) and len(server.requests) == 5
    with ScriptedServer(NOT_COMPLETIONS[:1]) as server:  # it keeps happening: a failure, within the same budget
        [result] = _judge(server, max_retries=2).complete_many([MESSAGES])
        assert result.text is None and "not a chat completion" in result.error and result.attempts == 3
        with pytest.raises(JudgeError) as caught:
            next(_judge(server, max_retries=1).stream(MESSAGES))
        assert caught.value.attempts == 2 and len(server.requests) == 5
    replies = [Reply(status=500), Reply(body="<html></html>"), Reply(status=503), Reply("B")]
    with ScriptedServer(replies) as server:  # HTTP retries and asking again share max_retries
        [result] = _judge(server, max_retries=2).complete_many([MESSAGES])
        assert result.text is None and "HTTP 503" in result.error and result.attempts == 3
        assert len(server.requests) == 3


def test_a_server_that_ignores_stream_true_is_read_whole():
    completion = '{"choices": [{"index": 0, "message": {"role": "assistant", "content": "Whole reply.\\nA"}}]}'
    with ScriptedServer([Reply(body=completion)]) as server:
        assert list(_judge(server).stream(MESSAGES)) == ["Whole reply.\nA"]
        assert server.requests[0].body["stream"] is True


def test_without_a_token_no_credential_is_sent(monkeypatch):
    """No token: no Authorization header at all; the openai client's ambient settings never reach the judge's host."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ambient-key")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-ambient")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-ambient")
    with ScriptedServer([Reply("A")]) as server:
        assert make_judge(f"endpoint:{server.base_url}|m").complete(MESSAGES) == "A"
        sent = server.requests[0].headers
        assert "Authorization" not in sent and "OpenAI-Organization" not in sent and "OpenAI-Project" not in sent
        assert "ambient" not in str(dict(sent))
    with ScriptedServer([Reply("A")]) as server:
        assert make_judge(f"endpoint:{server.base_url}|m", TOKEN).complete(MESSAGES) == "A"
        assert server.requests[0].headers["Authorization"] == f"Bearer {TOKEN}"
        assert "ambient" not in str(dict(server.requests[0].headers))


def test_connection_refused_is_retried_then_reported():
    judge = make_judge(f"endpoint:http://127.0.0.1:{free_port()}/v1|m", TOKEN, max_retries=2, backoff=0.01)
    [result] = judge.complete_many([MESSAGES])
    assert result.text is None and "connection error" in result.error and result.attempts == 3


# ------------------------------------------------------------------------------------------------------------------
# Local backend


def test_local_judge_on_tiny_llama(tiny_llama):
    judge = make_judge(f"local:{tiny_llama.repo_id}@{tiny_llama.sha}")
    assert judge.identity == {"kind": "local", "model": "tiny-org/tiny-llama", "revision": tiny_llama.sha}
    conversation = MESSAGES + [{"role": "assistant", "content": "A"}, {"role": "user", "content": "Sure?"}]
    text = judge.complete(conversation, max_tokens=4)
    assert isinstance(text, str)
    results = judge.complete_many([MESSAGES, conversation, []], max_tokens=4)
    assert [r.text for r in results[:2]] == [judge.complete(MESSAGES, max_tokens=4), text]  # greedy, order kept
    assert results[2].text is None and results[2].error
    assert "".join(judge.stream(MESSAGES, max_tokens=4)) == results[0].text


# ------------------------------------------------------------------------------------------------------------------
# make_judge specs, prompt_hash, grade parsing


@pytest.mark.parametrize("spec", [
    "", "   ", "tiny-org/tiny-llama", "remote:foo|bar", "local:", "local:org/name@", "local:@abc",
    "local:not a model id", "endpoint:", "endpoint:http://127.0.0.1:1/v1", "endpoint:http://127.0.0.1:1/v1|",
    "endpoint:|model", "endpoint:ftp://host/v1|m", "endpoint:127.0.0.1:8000/v1|m",
    "endpoint:https://user:pw@host/v1|m",
])
def test_bad_specs(spec):
    with pytest.raises(ValueError):
        make_judge(spec)


CREDENTIAL = "s3cr3t-in-the-url"


@pytest.mark.parametrize("spec", [
    f"endpoint:https://user:{CREDENTIAL}@host.example/v1",  # no |model: the probe's case, echoed whole before
    f"endpoint:https://user:{CREDENTIAL}@host.example/v1|m",
    f"endpoint:https://{CREDENTIAL}@host.example/v1|m",
    f"endpoint:https://host.example/v1?api_key={CREDENTIAL}|m",
    f"endpoint:https://host.example/v1?api_key={CREDENTIAL}",
    f"endpoint:https://host.example/v1#{CREDENTIAL}|m",
    f"endpiont:https://user:{CREDENTIAL}@host.example/v1|m",  # a misspelt kind
    f"endpoint:https://user:{CREDENTIAL}@host.example:port/v1|m",  # and an unreadable port
])
def test_a_spec_with_credentials_in_its_url_is_refused_without_echoing_them(spec):
    from evaluator.judge import parse_judge_spec

    for build in (parse_judge_spec, make_judge):
        with pytest.raises(ValueError) as caught:
            build(spec)
        assert CREDENTIAL not in str(caught.value) and "user:" not in str(caught.value)
        assert "host.example" in str(caught.value) or "unknown judge spec" in str(caught.value) \
            or "unreadable" in str(caught.value)


def test_a_judge_is_named_by_scheme_host_path_and_model_only():
    from evaluator.judge import judge_name, public_url

    judge = make_judge("endpoint:https://Host.Example:8443/v1/|judge-model")
    assert judge.identity == {"kind": "endpoint", "base_url": "https://host.example:8443/v1", "model": "judge-model"}
    stored = {"kind": "endpoint", "base_url": f"https://user:{CREDENTIAL}@host.example/v1?api_key={CREDENTIAL}",
              "model": "m"}  # an identity stored before URLs were checked
    assert judge_name(stored) == "m (endpoint https://host.example/v1)"
    assert CREDENTIAL not in judge_name({"kind": "other", "url": f"https://u:{CREDENTIAL}@h/x?token={CREDENTIAL}"})
    assert public_url("not a url") == "<unreadable url>"


def test_the_redactor_masks_url_credentials_everywhere():
    from evaluator.endpoints.redaction import redact

    text = (f"failed: POST https://user:{CREDENTIAL}@host.example/v1/chat/completions?api_key={CREDENTIAL}&x=1 "
            f"and http://h/v1?access_token={CREDENTIAL}#f and https://h/s?X-Amz-Signature={CREDENTIAL}")
    masked = redact(text)
    assert CREDENTIAL not in masked
    assert "https://***@host.example/v1/chat/completions?api_key=***&x=1" in masked
    kept = "see https://huggingface.co/org/model?revision=main or mail ada@example.com"
    assert redact(kept) == kept  # ordinary URLs, parameters and addresses are left alone


def test_bad_options_and_token_in_spec():
    with pytest.raises(ValueError):
        make_judge("endpoint:http://127.0.0.1:1/v1|m", concurrency=0)
    with pytest.raises(ValueError) as caught:
        make_judge(f"endpoint:http://127.0.0.1:1/{TOKEN}|m", TOKEN)
    assert TOKEN not in str(caught.value)


@pytest.mark.slow  # waits out real retries and backoffs, seconds
def test_retry_after_is_waited_then_the_call_succeeds():
    """The openai client reads Retry-After itself: a 429 asking for 1 s is waited, then answered; a date in the past
    means the client's own short backoff; one over the client's limit (120 s) is not waited for but reported."""
    with ScriptedServer([Reply(status=429, headers={"Retry-After": "1"}), Reply("A")]) as server:
        start = time.monotonic()
        [result] = _judge(server).complete_many([MESSAGES])
        assert result == JudgeResult(text="A", error=None, attempts=2)
        assert 0.95 <= time.monotonic() - start < 60  # waited for Retry-After (1 s), never its cap (120 s)
    with ScriptedServer([Reply(status=429, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}),
                         Reply("B")]) as server:
        start = time.monotonic()
        assert _judge(server).complete(MESSAGES) == "B" and len(server.requests) == 2
        assert time.monotonic() - start < 60  # a date in the past: no wait (a misread one waits 120 s)
    with ScriptedServer([Reply(status=429, headers={"Retry-After": "3600"}), Reply("C")]) as server:
        start = time.monotonic()
        with pytest.raises(JudgeError, match="HTTP 429") as caught:
            _judge(server).complete(MESSAGES)
        assert caught.value.attempts == 1 and len(server.requests) == 1 and time.monotonic() - start < 60  # not 1 h


def test_prompt_hash():
    assert prompt_hash("") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert prompt_hash("a") != prompt_hash("b")


@pytest.mark.parametrize("reply, grade", [
    ("A", "A"), ("B", "B"), ("C", "C"), ("a", "A"), ("c", "C"),
    ("CORRECT", "A"), ("INCORRECT", "B"), ("NOT_ATTEMPTED", "C"), ("not attempted", "C"), ("Correct", "A"),
    ("incorrect", "B"),
    ("The predicted answer names the same person as the gold target.\nA", "A"),
    ("Reason: it hedges between two answers.\n\nB\n\n", "B"),
    ("**A**", "A"), ("Grade: B", "B"), ("**Grade:** C", "C"), ("Final answer: A.", "A"), ("A.", "A"),
    ("A) CORRECT", "A"), ("A: correct", "A"), ("B - INCORRECT", "B"), ("(C) NOT_ATTEMPTED", "C"), ('"B"', "B"),
    ("`C`", "C"), ("Final grade: NOT ATTEMPTED", "C"),
    ("", None), ("   \n \n", None), (None, None), ("I am not sure.", None), ("A or B", None),
    ("A) INCORRECT", None), ("B: correct", None), ("CORRECT INCORRECT", None), ("D", None),
    ("ABC", None), ("CORRECTLY", None), ("INCORRECT.", "B"),
    ("The answer is correct because", None),
    # issue 29: the grade first, explained below it, is that grade; two different grades, or one only in the middle,
    # are none
    ("A\nThe grade is obviously debatable", "A"), ("A\n\nThe answer names both moons.", "A"),
    ("**B**\n\nReason: it adds a wrong moon.\n", "B"), ("A\nThe answer names both.\nB", None),
    ("The answer names both.\nA\nor maybe not", None), ("A\nReason: it names both.\nCorrect.", "A"),
])
def test_parse_simpleqa_grade(reply, grade):
    assert parse_simpleqa_grade(reply) == grade
