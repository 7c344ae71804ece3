"""vLLM as a Job's engine (LEADERBOARD_ENGINE=vllm): the Job's image, command and `vllm serve` line, the settings that
refuse it where it cannot run, and the Job's wrapper (leaderboard.running.engine_job) for real on this machine with a
FAKE `vllm` on PATH: a small script that either serves the loopback stand-in (tests/served_servers.py) on the port it
is given, stays silent, or exits with a last log line. The Jobs run on the loopback Hub (tests/hub_server.py), each
Job's command a real subprocess, as in tests/test_hf_jobs.py."""
from __future__ import annotations

import json
import re
import shlex
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from evaluator import api
from leaderboard.running import engine_args, engine_job, hf_jobs
from leaderboard.running.job_dispatch import Dispatcher
from leaderboard.settings import Settings
from leaderboard.store.hub import HubStore
from leaderboard.submissions import records as q
from tests.conftest import PROJECT
from tests.served_servers import free_port

USER, ORG = "ada", "test-org"
SHA = "0123456789abcdef0123456789abcdef01234567"
TERMINAL = ("COMPLETED", "CANCELED", "ERROR", "DELETED")
LAST_LINE = "ValueError: the fake engine cannot load Tiny-Org/Tiny-VLM on this machine"
PLAN = {"flavor": "l40sx1", "batch_size": 4, "choice": "smaller batch", "weights_gb": 16.0, "kv_gb": 20.0,
        "image_cache_gb": 1.07, "total_gb": 37.1, "gpu_gb": 48.0, "tokens": 8448, "thinking_tokens": 4096}
VLLM_SETTINGS = {"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": "o/r", "LEADERBOARD_EXECUTOR": "hf-jobs",
                 "LEADERBOARD_ENGINE": "vllm", "SPACE_ID": "o/leaderboard", "LEADERBOARD_BENCHMARKS": "cure,simpleqa"}

FAKE_VLLM = '''#!{python}
"""A fake `vllm`: records its arguments, then {mode}s."""
import json, os, signal, sys, threading, time
RECORD, MODE = {record!r}, {mode!r}
args = sys.argv[1:]
value = lambda flag, default=None: args[args.index(flag) + 1] if flag in args else default
def note(**what):
    with open(RECORD, "a") as out:
        out.write(json.dumps(what) + "\\n")
note(argv=args, hf_token=bool(os.environ.get("HF_TOKEN")), judge_token="LEADERBOARD_JUDGE_TOKEN" in os.environ)
print("INFO 11-29 04:00:00 [api_server.py:1] vLLM API server version 0.11.0 (fake)", flush=True)
if MODE == "exit":
    print({last!r}, flush=True)
    sys.exit(3)
parent, served = os.getppid(), []
def on_term(*_):
    note(stopped=True, chats=len(served[0].chat_requests) if served else 0)
    os._exit(0)
signal.signal(signal.SIGTERM, on_term)
def orphaned():  # a real container ends with its Job; here the fake ends with its parent
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)
threading.Thread(target=orphaned, daemon=True).start()
if MODE == "stay silent":
    while True:
        time.sleep(1)
sys.path.insert(0, {project!r})
from tests.served_servers import StandInServer, _HTTPServer
stand_in = StandInServer(value("--served-model-name"), max_images=json.loads(value("--limit-mm-per-prompt"))["image"])
stand_in._httpd.server_close()
served.append(stand_in)
time.sleep(1.0)  # loading: /health does not answer yet
print("INFO Starting vLLM API server on http://127.0.0.1:" + value("--port"), flush=True)
_HTTPServer(("127.0.0.1", int(value("--port"))), stand_in._handler_class()).serve_forever()
'''


def fake_vllm(folder: Path, mode: str) -> tuple[Path, Path]:
    """A folder holding a fake `vllm` that serves ("serve"), exits ("exit") or "stay silent"s; and its record."""
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "record.jsonl"
    script = folder / "vllm"
    script.write_text(FAKE_VLLM.format(python=sys.executable, mode=mode, record=str(record), last=LAST_LINE,
                                      project=str(PROJECT)))
    script.chmod(0o755)
    return folder, record


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def request(i: int = 0, **changes) -> q.Request:
    fields = dict(model=f"Tiny-Org/Tiny-VLM-{i}", revision=SHA, precision="bfloat16", params_billions=0.01,
                  architecture="Qwen3VLForConditionalGeneration", run_plan=dict(PLAN), submitter=USER)
    return q.Request(**{**fields, **changes})


# ---------------------------------------------------------------------------------------- the Job's spec, offline

def test_the_vllm_engine_runs_the_pinned_image_and_serves_at_the_pinned_revision():
    settings = Settings.from_env(VLLM_SETTINGS)
    assert engine_args.job_image(settings) == api.VLLM_IMAGE  # one pin: the version docs/models.md is read for
    assert re.fullmatch(r"vllm/vllm-openai:v\d+\.\d+\.\d+", api.VLLM_IMAGE)  # a release, never `latest`
    assert engine_args.job_image(settings.with_(engine="transformers", jobs_image="img")) == "img"
    args = engine_args.vllm_serve_args(settings, request(), "l40sx4", 4)
    said = " ".join(args)
    assert args[:3] == ["vllm", "serve", "Tiny-Org/Tiny-VLM-0"] and f"--revision {SHA}" in said
    assert "--host 127.0.0.1" in said and "--served-model-name Tiny-Org/Tiny-VLM-0" in said
    assert "--dtype bfloat16" in said and "--max-model-len 8448" in said and "--max-num-seqs 4" in said
    assert args[args.index("--limit-mm-per-prompt") + 1] == '{"image":1}'  # one image per prompt in every benchmark
    assert "--reasoning-parser qwen3" in said and "--tensor-parallel-size 4" in said
    assert "--generation-config vllm" in said and "trust-remote-code" not in said


def test_the_serve_line_follows_the_model_and_the_plan():
    settings = Settings.from_env({**VLLM_SETTINGS, "LEADERBOARD_THINKING_BUDGET": "1000"})
    text_only = engine_args.vllm_serve_args(settings, request(architecture="LlamaForCausalLM", precision="auto",
                                                              run_plan={}), "t4-small")
    said = " ".join(text_only)
    assert "--limit-mm-per-prompt" not in said and "--reasoning-parser" not in said  # no images, no thought
    assert "--tensor-parallel-size" not in said and "--dtype auto" in said
    assert "--max-model-len 5376" in said  # no plan recorded: 4096 + 256 + the thinking budget, in 256s
    assert "--max-num-seqs 64" in said  # no planned batch and an auto batch size: the plan's GPU batch
    glm = engine_args.vllm_serve_args(settings, request(architecture="Glm4vMoeForConditionalGeneration"))
    assert glm[glm.index("--reasoning-parser") + 1] == "glm45"


def test_the_job_command_sets_up_the_project_then_wraps_the_server(monkeypatch):
    settings = Settings.from_env({**VLLM_SETTINGS, "HF_TOKEN": "hf_notarealtokenbutshaped0123456789"})
    command = hf_jobs.job_command(settings, request(), "hf-job:0123456789ab", "l40sx1", 4)
    assert command[:2] == ["bash", "-c"]
    setup, _, run = command[2].partition(" && exec ")
    assert "hf download --repo-type space o/leaderboard" in setup and "-r requirements.txt" in setup
    run = shlex.split(run)
    assert run[:3] == ["python", "-m", "leaderboard.running.engine_job"]
    assert run[run.index("--") + 1:] == engine_args.vllm_serve_args(settings, request(), "l40sx1", 4)
    custom = hf_jobs.job_command(settings.with_(jobs_setup="pip install leaderboard"), request(), "o", "l40sx1")
    assert custom[2].startswith("pip install leaderboard && exec python -m leaderboard.running.engine_job")
    env = hf_jobs.job_env(settings, "l40sx1", 4)
    assert env["LEADERBOARD_BATCH_SIZE"] == "4" and "LEADERBOARD_ENGINE" not in env  # the Job's own run is local
    assert settings.hf_token not in " ".join([*command, *env.values()])
    plain = hf_jobs.job_command(settings.with_(engine="transformers"), request(), "o")
    assert plain[:3] == ["python", "-m", "leaderboard.running.job_run"]


@pytest.mark.parametrize("changes, said", [
    ({"LEADERBOARD_EXECUTOR": "local", "LEADERBOARD_STORE": "local"}, "LEADERBOARD_ENGINE=vllm .* needs "
                                                                        "LEADERBOARD_EXECUTOR=hf-jobs"),
    ({"LEADERBOARD_JOBS_FLAVORS": "1=cpu-upgrade,70=l40sx4"}, "LEADERBOARD_ENGINE=vllm .* cpu-upgrade has none"),
    ({"SPACE_ID": ""}, "LEADERBOARD_ENGINE=vllm needs LEADERBOARD_JOBS_SETUP .* or SPACE_ID"),
])
def test_settings_refuse_the_vllm_engine_where_it_cannot_run(changes, said):
    with pytest.raises(ValueError, match=said):
        Settings.from_env({**VLLM_SETTINGS, **changes})
    assert Settings.from_env({**VLLM_SETTINGS, "SPACE_ID": "", "LEADERBOARD_JOBS_SETUP": "true"}).engine == "vllm"


def test_the_evaluator_takes_a_served_spec_beside_a_request_and_nothing_else(tmp_path, capsys):
    from evaluator.__main__ import main

    path = tmp_path / "request.json"
    path.write_text(json.dumps(request().to_dict()))
    assert main(["run", "--request", str(path), "--model", "Other/model", "--out", str(tmp_path / "out")]) == 1
    assert "--model beside --request must be a served model's spec" in capsys.readouterr().err


def test_the_plans_length_is_cut_to_the_models_own_positions():
    command = ["vllm", "serve", "m", "--max-model-len", "8448", "--dtype", "auto"]
    cut, said = engine_job.capped(command, {"text_config": {"max_position_embeddings": 4096}})
    assert cut == ["vllm", "serve", "m", "--max-model-len", "4096", "--dtype", "auto"] and "cut to 4096" in said
    assert engine_job.capped(command, {"max_position_embeddings": 32768}) == (command, "")
    assert engine_job.capped(command, None) == (command, "")  # config.json unread: vLLM judges
    assert engine_job.model_positions({"n_positions": 2048, "seq_length": 1024}) == 1024


def test_a_run_its_jobs_engine_served_costs_the_jobs_time_with_its_tokens_beside():
    from datetime import datetime, timedelta, timezone

    from leaderboard.board.costs import JOB_MEASURE, JobSeen, run_cost

    results = {"served": False, "run": {"device": "served", "engine": "vllm", "served": {
        "base_url": "http://127.0.0.1:8000/v1", "usage": {"prompt_tokens": 1000, "completion_tokens": 50}}}}
    started = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
    settings = Settings().with_(model_price_per_mtok=("1", "1"))  # a served model's price: not this run's
    cost = run_cost(results, settings, JobSeen(id="j", flavor="l40sx1", started_at=started, usd_per_hour=1.8),
                    now=started + timedelta(minutes=40))
    assert cost == {"executor": "hf-jobs", "flavor": "l40sx1", "gpu": None, "device": "cuda", "seconds": 2400.0,
                    "measured": JOB_MEASURE, "usd": 1.2, "price": {"usd_per_hour": 1.8}, "prompt_tokens": 1000,
                    "completion_tokens": 50}
    served = {**results, "served": True, "run": {**results["run"], "engine": "endpoint"}}
    alone = run_cost(served, settings, None)  # a served model's run on the Space: its tokens, priced per token
    assert alone["device"] == "served" and alone["seconds"] is None and alone["usd"] == 0.00105


# ------------------------------------------------------------------------- the wrapper's server, on this machine

def test_a_healthy_server_is_waited_for_then_stopped(tmp_path):
    folder, record = fake_vllm(tmp_path / "bin", "serve")
    port = free_port()
    server = engine_job.start_server([str(folder / "vllm"), "serve", "m", "--port", str(port),
                                      "--served-model-name", "m", "--limit-mm-per-prompt", '{"image":1}'])
    try:
        state, why = engine_job.wait_healthy(server, f"http://127.0.0.1:{port}/health", 30, threading.Event())
        assert (state, why) == (engine_job.HEALTHY, "")
    finally:
        engine_job.stop_server(server, grace=5)
    assert server.proc.returncode is not None and records(record)[-1]["stopped"] is True
    assert "Starting vLLM API server" in server.last_line()


def test_a_server_that_exits_or_never_answers_is_a_failure_with_its_last_line(tmp_path):
    folder, _ = fake_vllm(tmp_path / "exits", "exit")
    server = engine_job.start_server([str(folder / "vllm"), "serve", "m"])
    state, why = engine_job.wait_healthy(server, f"http://127.0.0.1:{free_port()}/health", 30, threading.Event())
    assert state == engine_job.FAILED and why.startswith("it exited with code 3")
    assert server.last_line() == LAST_LINE
    folder, record = fake_vllm(tmp_path / "silent", "stay silent")
    server = engine_job.start_server([str(folder / "vllm"), "serve", "m"])
    started = time.monotonic()
    try:
        state, why = engine_job.wait_healthy(server, f"http://127.0.0.1:{free_port()}/health", 1.5,
                                             threading.Event())
        assert state == engine_job.FAILED and "within 2 s" in why and time.monotonic() - started < 10
        assert server.proc.poll() is None and "vLLM API server version" in server.last_line()
    finally:
        engine_job.stop_server(server, grace=5)
    assert server.proc.returncode is not None and records(record)[-1] == {"stopped": True, "chats": 0}


# ----------------------------------------------------------------------------- whole Jobs, on the loopback Hub

@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    from tests.hub_server import jobs_running_here

    with jobs_running_here(tmp_path_factory.mktemp("jobs")) as server:
        yield server


@pytest.fixture
def jobs_world(hub, tmp_path, monkeypatch):
    """A Space dispatching to Jobs with the vLLM engine (its port free on this machine), its Hub store, a dispatcher
    and its token."""
    token = hub.issue_token(USER, orgs=[ORG])
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setattr(engine_args, "PORT", free_port())  # two Jobs of two test processes never share one
    suffix = uuid.uuid4().hex[:6]
    settings = Settings.from_env({
        "LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": f"{ORG}/results-{suffix}",
        "LEADERBOARD_REQUESTS_REPO": f"{ORG}/requests-{suffix}", "HF_TOKEN": token, "LEADERBOARD_EXECUTOR": "hf-jobs",
        "LEADERBOARD_ENGINE": "vllm", "LEADERBOARD_JOBS_SETUP": "true", "LEADERBOARD_JOBS_NAMESPACE": ORG,
        "LEADERBOARD_BENCHMARKS": "cure", "LEADERBOARD_LIMIT": "1", "LEADERBOARD_HOME": str(tmp_path / "space"),
        "LEADERBOARD_MAX_RUN_SECONDS": "600", "LEADERBOARD_JOBS_FLAVORS": "1=l40sx1,70=l40sx4"})
    api = HfApi(endpoint=hub.url, token=token)
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    return settings, store, Dispatcher(settings, store, api), token


def _run_job(hub, dispatcher, store, submitted: q.Request, bin_folder: Path, timeout: float):
    """Start the request's Job with the fake `vllm` first on its PATH; wait for its end; the Job and the request."""
    dispatcher.settings = dispatcher.settings.with_(jobs_setup=f"export PATH={shlex.quote(str(bin_folder))}:$PATH")
    q.save(store, submitted)
    report = dispatcher.tick()
    assert report.started == [submitted.key], report
    job_id = q.load(store, submitted.path).job["id"]
    deadline = time.monotonic() + timeout
    while next(j for j in hub.jobs if j.id == job_id).stage not in TERMINAL and time.monotonic() < deadline:
        time.sleep(0.5)
    store.refresh()
    return next(j for j in hub.jobs if j.id == job_id), q.load(store, submitted.path)


def _assert_spec(job, settings, token: str, port: int) -> list[str]:
    """The Job's spec: vLLM's image, the wrapper around the serve line, the token a secret only; the serve line."""
    assert job.image == engine_args.VLLM_IMAGE and job.flavor == "l40sx1"
    run = shlex.split(job.command[2].partition(" && exec ")[2])
    assert run[:3] == ["python", "-m", "leaderboard.running.engine_job"]
    serve = run[run.index("--") + 1:]
    assert serve[:3] == ["vllm", "serve", "Tiny-Org/Tiny-VLM-0"] and serve[serve.index("--revision") + 1] == SHA
    for flag, value in (("--port", str(port)), ("--max-model-len", "8448"), ("--limit-mm-per-prompt", '{"image":1}'),
                        ("--reasoning-parser", "qwen3"), ("--max-num-seqs", "4"), ("--dtype", "bfloat16")):
        assert serve[serve.index(flag) + 1] == value, flag
    assert not any("trust-remote-code" in part for part in job.command)
    assert job.secret_names == ["HF_TOKEN"] and job.env["LEADERBOARD_BATCH_SIZE"] == "4"
    assert token not in " ".join([*job.command, *job.env.values(), *job.labels.values()])
    return serve


@pytest.mark.slow  # a Job on the loopback Hub, its evaluator asking the fake vLLM
def test_a_job_serves_the_model_with_vllm_evaluates_against_it_and_stops_it(hub, jobs_world, tmp_path):
    settings, store, dispatcher, token = jobs_world
    folder, record = fake_vllm(tmp_path / "bin", "serve")
    job, done = _run_job(hub, dispatcher, store, request(), folder, timeout=240)
    logs = hub.job_logs(job.id)
    assert done.status == q.FINISHED and job.stage == "COMPLETED", (done.status, done.error, logs[-30:])
    _assert_spec(job, settings, token, engine_args.PORT)
    asked, *_, stopped = records(record)
    assert asked["argv"][:2] == ["serve", "Tiny-Org/Tiny-VLM-0"] and asked["hf_token"] and not asked["judge_token"]
    assert stopped["stopped"] is True and stopped["chats"] >= 2  # the probe and at least one question
    results = json.loads(hub.files(settings.results_repo)[f"results/{done.key}.json"])
    assert results["model"] == "Tiny-Org/Tiny-VLM-0" and results["revision"] == SHA  # the request's, not the server's
    assert results["run"]["served"]["base_url"] == f"http://127.0.0.1:{engine_args.PORT}/v1"
    assert results["run"]["engine"] == "vllm" and results["served"] is False  # the Hub model, not a served row
    assert results["run"]["batch_size"] == 4  # the plan's batch, as requests in flight
    cost = results["run"]["cost"]  # the Job's GPU time, not a served model's tokens alone
    assert (cost["executor"], cost["flavor"], cost["device"]) == ("hf-jobs", "l40sx1", "cuda") and cost["seconds"]
    assert any(line.startswith("[vllm] INFO Starting vLLM API server") for line in logs)
    assert "[job] the vLLM server was stopped" in logs and token not in " ".join(logs)


# a Job on the loopback Hub (a few seconds: the fake exits at once)
def test_a_server_that_does_not_come_up_fails_the_request_with_its_last_log_line(hub, jobs_world, tmp_path):
    settings, store, dispatcher, token = jobs_world
    folder, record = fake_vllm(tmp_path / "bin", "exit")
    job, failed = _run_job(hub, dispatcher, store, request(), folder, timeout=120)
    assert failed.status == q.FAILED and failed.attempts == 0, (failed.status, failed.error)
    assert failed.error.startswith("the vLLM server did not come up: it exited with code 3 before answering")
    assert failed.error.endswith(f"its last log line: {LAST_LINE}")
    assert LAST_LINE in failed.log_tail and "vLLM API server version" in failed.log_tail
    _assert_spec(job, settings, token, engine_args.PORT)
    assert [r["argv"][:2] for r in records(record)] == [["serve", "Tiny-Org/Tiny-VLM-0"]]
    assert dispatcher.tick().started == []  # FAILED, not retried
