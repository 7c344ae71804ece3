"""Served runs through the real command line: `python -m evaluator run --model "endpoint:<base url>|<name>"` against
OpenAI-compatible servers on loopback. Generation modes only (a likelihood mode is refused before any request), an
endpoint that refuses images is text-only (image benchmarks skipped, not failed), an endpoint that cannot run the
evaluation ends it at once with one line, a run that fails midway resumes from its journal, and the token is
nowhere but the bearer header."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from evaluator.runs.details import details_metadata
from tests.conftest import PROJECT
from tests.judge_servers import Reply, ScriptedServer
from tests.served_servers import Fault, StandInServer

pytestmark = pytest.mark.slow  # each test starts `python -m evaluator run`

TOKEN = "sk-served-test-token-98765"


def evaluator(*args: str, token: str | None = None, timeout: float = 300,
              imports: bool = False) -> subprocess.CompletedProcess:
    """`python -m evaluator run ARGS`; with `imports`, Python's import times on stderr too (see imported)."""
    env = {k: v for k, v in os.environ.items() if k != "LEADERBOARD_MODEL_TOKEN"}
    if imports:
        env["PYTHONPROFILEIMPORTTIME"] = "1"
    if token:
        env["LEADERBOARD_MODEL_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "evaluator", "run", *args], cwd=PROJECT, capture_output=True,
                          text=True, timeout=timeout, env=env)


def imported(done: subprocess.CompletedProcess) -> set[str]:
    """The modules a run imported, from its import times."""
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    errors = [line for line in lines if line.startswith("error: ")]
    assert done.returncode == 1 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert errors[0] == "\n".join(lines).strip().splitlines()[-1]
    return errors[0]


def _everything_written(out: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file())


def test_the_cli_line_runs_cure_and_reform_by_generation(tmp_path):
    out = tmp_path / "out"
    with ScriptedServer([Reply("The answer is (A).")]) as server:
        done = evaluator("--model", f"endpoint:{server.base_url}|any-chat-model", "--benchmarks", "cure,reform",
                         "--limit", "2", "--out", str(out), token=TOKEN)
        sent = server.requests
    assert done.returncode == 0, done.stderr[-3000:]
    cure = pd.read_parquet(out / "details" / "cure.parquet")
    assert len(cure) and set(cure["parsed_answer"]) == {0} and set(cure["extraction"]) == {"letter"}  # every one A
    reform = pd.read_parquet(out / "details" / "reform.parquet")
    assert set(reform["mode"]) == {"generation"}
    results = json.loads((out / "results.json").read_text())
    assert results["served"] is True and results["model"] == "any-chat-model" and results["revision"] is None
    assert results["run"]["modes"] == {"cure": "generation", "reform": "generation"}
    assert results["run"]["options"] == {"cure.mode": "generation", "reform.mode": "generation"}
    served = results["run"]["served"]
    assert served["base_url"] == server.base_url and served["model"] == "any-chat-model"
    assert served["server_model"] == "any-chat-model" and results["run"]["scoring_path"] == "none"
    assert details_metadata(out / "details" / "cure.parquet")["base_url"] == server.base_url
    assert details_metadata(out / "details" / "reform.parquet")["served"] is True
    # the token: the bearer header of every request, and nowhere else
    assert {r.headers["Authorization"] for r in sent} == {f"Bearer {TOKEN}"}
    assert TOKEN.encode() not in _everything_written(out) and TOKEN not in done.stdout + done.stderr
    assert all(r.body.get("max_tokens") for r in sent)
    # prompt log-probabilities are asked once, by the probe, which found none: no benchmark request asks for them
    asked = [r for r in sent if "prompt_logprobs" in r.body]
    assert len(asked) == 1 and asked[0].body["max_tokens"] == 1 and served["option_scoring"] == "none"
    assert "no prompt log-probabilities" in served["option_scoring_refused"]
    assert "gives no prompt log-probabilities" in done.stdout and "asked by generation" in done.stdout


def test_a_likelihood_mode_is_refused_before_any_benchmark_request(tmp_path):
    """A server without prompt log-probabilities (its probe says so) cannot score options: a run that asks for
    them ends after the probe's tiny requests, before any benchmark's, with one line."""
    with ScriptedServer([Reply("OK")]) as server:
        for option in ("cure.mode=likelihood", "reform.mode=both"):
            done = evaluator("--model", f"endpoint:{server.base_url}|m", "--benchmarks", "cure,reform",
                             "--option", option, "--out", str(tmp_path / "out"))
            line = _one_error_line(done)
            assert option in line and "served model" in line and "generation" in line, line
            assert "no prompt log-probabilities" in line, line
        assert server.requests and all(r.body["max_tokens"] == 1 for r in server.requests)  # the probes alone
    assert not (tmp_path / "out" / "results.json").exists()


def test_an_endpoint_that_cannot_run_the_evaluation_ends_it_at_once(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    closed = evaluator("--model", f"endpoint:http://127.0.0.1:{port}/v1|m", "--out", str(tmp_path / "a"), imports=True)
    line = _one_error_line(closed)
    assert time.monotonic() - started < 120  # a retry storm on a closed port would take minutes
    assert not {"torch", "transformers"} & imported(closed)  # a served run never loads them (some 5 s of a CPU)
    assert f"the endpoint http://127.0.0.1:{port}/v1 could not be reached" in line
    for status, expected in ((401, "refused the token"), (404, "does not know the model 'm'")):
        with ScriptedServer([Reply(status=status, body='{"error": "no"}')]) as server:
            line = _one_error_line(evaluator("--model", f"endpoint:{server.base_url}|m", "--out", str(tmp_path / "b"),
                                             token=TOKEN))
            assert len(server.requests) == 1  # no retry storm
        assert expected in line and server.base_url in line and f"HTTP {status}" in line and TOKEN not in line
    bad = _one_error_line(evaluator("--model", "endpoint:https://user:pw@host.example/v1|m", "--out", str(tmp_path)))
    assert "no user or password" in bad and "pw@" not in bad


def test_an_endpoint_that_refuses_images_runs_the_text_benchmarks(tmp_path):
    def reply(index: int, body: dict) -> Reply:
        if isinstance(body["messages"][-1]["content"], list):
            return Reply(status=400, body='{"object": "error", "message": "m is not a multimodal model"}')
        return Reply("A" if body["model"] == "judge" else "Paris")

    out = tmp_path / "out"
    with ScriptedServer(reply) as server:
        done = evaluator("--model", f"endpoint:{server.base_url}|m", "--benchmarks", "cure,simpleqa", "--limit", "2",
                         "--judge", f"endpoint:{server.base_url}|judge", "--out", str(out), imports=True)
        image_requests = [r for r in server.requests if isinstance(r.body["messages"][-1]["content"], list)]
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert list(results["benchmarks"]) == ["simpleqa"] and results["run"]["has_vision"] is False
    assert results["skipped"]["cure"].startswith("needs image input; the endpoint refused an image (HTTP 400")
    assert len(image_requests) == 1  # the probe's; never per item
    assert results["run"]["served"]["vision_refused"].startswith("the endpoint refused an image")
    assert not {"torch", "transformers"} & imported(done) and "evaluator.runs.executor" in imported(done)


def test_a_run_that_fails_midway_resumes_from_its_journal(tmp_path):
    responses, out = tmp_path / "responses", tmp_path / "out"
    args = ["--benchmarks", "reform", "--limit", "3", "--batch-size", "2", "--responses", str(responses)]

    healthy = {"from": 14}  # the endpoint fails from its 15th request on, until it is back up
    soon = {"retry-after-ms": "5"}  # a 503 that says when to ask again, as a proxy in front of vLLM may: no 7.5 s wait

    def failing(index: int, body: dict) -> Reply:
        return Reply("The answer is (B).") if index < healthy["from"] else Reply(status=503, headers=soon)

    with ScriptedServer(failing) as server:
        first = evaluator("--model", f"endpoint:{server.base_url}|m", *args, "--out", str(out))
        line = _one_error_line(first)
        assert "HTTP 503" in line and "failed a request of model m" in line
        journaled = (responses / "reform.jsonl").read_text().splitlines()
        assert journaled and not (out / "results.json").exists()
        before = len(server.requests)
        healthy["from"] = 10**9  # back up
        second = evaluator("--model", f"endpoint:{server.base_url}|m", *args, "--out", str(out))
        asked = len(server.requests) - before - 3  # less the probes (text, prompt log-probabilities, image)
    assert second.returncode == 0, second.stderr[-2000:]
    resumed = json.loads((out / "results.json").read_text())["run"]["resumed"]["reform"]
    assert resumed["reused"] > 0 and resumed["model_requests"] == asked
    assert asked + len(journaled) == len(pd.read_parquet(out / "details" / "reform.parquet"))


def test_a_queue_request_for_a_served_model_runs_its_endpoint(tmp_path):
    with ScriptedServer([Reply("The answer is (A).")]) as server:
        request = {"model": "served--127.0.0.1-1/m", "revision": "0" * 40, "precision": "auto",
                   "model_type": "instruction-tuned", "source": "served", "display_name": "My served model",
                   "endpoint": {"base_url": server.base_url, "model": "m"}}
        path = tmp_path / "request.json"
        path.write_text(json.dumps(request))
        done = evaluator("--request", str(path), "--limit", "1", "--out", str(tmp_path / "out"))
        assert done.returncode == 0, done.stderr[-2000:]
        assert server.requests and all(r.body["model"] == "m" for r in server.requests)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["model"] == "served--127.0.0.1-1/m" and results["display_name"] == "My served model"
    assert results["served"] is True and results["revision"] == "0" * 40


def results_line(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())["run"]["served"]


def test_against_a_strict_stand_in_every_request_is_one_a_vllm_server_takes(tmp_path):
    """The stand-in refuses what vLLM and OpenAI refuse (unknown fields, a second image, a bad data URL, ...), wants
    the token, names itself otherwise than the request does, and rate-limits, drops and garbles a few answers."""
    faults = {3: Fault.rate_limited(0), 7: Fault.html_page(), 11: Fault.not_a_completion(), 15: Fault.dropped()}
    out = tmp_path / "out"
    with StandInServer("org/vlm", served_id="org/vlm@deployed", token=TOKEN, max_images=1, strict_fields=True,
                       max_stop=4, faults=lambda index, body: faults.get(index)) as server:
        done = evaluator("--model", f"endpoint:{server.base_url}|org/vlm", "--benchmarks", "cure,reform",
                         "--limit", "2", "--out", str(out), token=TOKEN)
        statuses = [r.status for r in server.chat_requests if "prompt_logprobs" not in (r.body or {})]
        probed = [r.status for r in server.chat_requests if "prompt_logprobs" in (r.body or {})]
    assert done.returncode == 0, done.stderr[-3000:]
    assert 400 not in statuses and 401 not in statuses and statuses.count(200) > 20, statuses
    assert probed == [400] and results_line(out)["option_scoring"] == "none"  # strict: unknown fields refused
    results = json.loads((out / "results.json").read_text())
    assert set(pd.read_parquet(out / "details" / "cure.parquet")["parsed_answer"]) == {0}
    assert results["run"]["served"]["server_model"] == "org/vlm@deployed"
    usage = results["run"]["served"]["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0 and usage["requests"] > 20


def test_a_text_only_stand_in_and_a_forbidden_token(tmp_path):
    with StandInServer("org/llm", vision=False) as server:
        done = evaluator("--model", f"endpoint:{server.base_url}|org/llm", "--benchmarks", "cure",
                         "--out", str(tmp_path / "a"))
    assert _one_error_line(done) == ("error: no benchmark ran (cure: needs image input; the endpoint refused an image "
                                     "(HTTP 400: {\"error\": {\"message\": \"org/llm is not a multimodal model\", "
                                     "\"type\": \"BadRequestError\", \"param\": null, \"code\": 400}}))")
    with StandInServer("org/vlm", token=TOKEN, forbidden=True) as server:
        line = _one_error_line(evaluator("--model", f"endpoint:{server.base_url}|org/vlm", "--out",
                                         str(tmp_path / "b"), token=TOKEN))
    assert "refused the token (LEADERBOARD_MODEL_TOKEN)" in line and "HTTP 403" in line and TOKEN not in line
