"""What a run costs (issue 37): every published run records `run.cost` (a local run, a Hugging Face Job through the
loopback Hub's Jobs API, a served model), the board and the results dataset show it ("not recorded" for older runs,
never 0), and a request gets an estimate before it runs, in the Submit tab's answer and in the Queue."""
from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
from huggingface_hub import HfApi

from leaderboard.board import publish as publishing
from leaderboard.board.columns import schema
from leaderboard.board.costs import JOB_MEASURE, LOCAL_MEASURE, NOT_RECORDED, JobSeen, run_cost
from leaderboard.board.estimates import estimate, queue_estimates
from leaderboard.board.file import load_board, rebuild_leaderboard
from leaderboard.board.frames import board_table, leaderboard_frame
from leaderboard.board.space_copy import BoardCopy
from leaderboard.board.views import view_board, view_text
from leaderboard.running import hf_jobs
from leaderboard.running.job_clock import job_seen
from leaderboard.running.job_flavors import hardware_rates
from leaderboard.settings import Settings
from leaderboard.submissions import records as q
from leaderboard.submissions.served import served_request
from leaderboard.submissions.views import queue_frame
from tests.published_runs import finished_output, publish_finished
from tests.results_files import board_result, write_result

USER, ORG = "ada", "test-org"
BENCHMARK = Settings().benchmarks[0]  # the default benchmark, as every run below ran it


def _out(tmp_path: Path, name: str, **run) -> Path:
    """A worker's output folder whose results.json says `run` (device, hardware, wall time ...)."""
    out = finished_output(tmp_path / name, name, {BENCHMARK: 0.5})
    results = json.loads((out / "results.json").read_text())
    results["run"].update(run)
    (out / "results.json").write_text(json.dumps(results))
    return out


# -- every run records its cost ---------------------------------------------------------------------------------

def test_a_local_gpu_run_records_its_wall_time_and_is_priced_only_when_a_price_is_set(settings, store, tmp_path):
    gpu = {"device": "cuda", "wall_time_s": 5400.0, "hardware": {"device": "cuda", "gpu_name": "NVIDIA L4"}}
    _, unpriced = publish_finished(settings, store, _out(tmp_path, "a", **gpu), "org/unpriced")
    assert unpriced["run"]["cost"] == {
        "executor": "local", "flavor": None, "gpu": "NVIDIA L4", "device": "cuda", "seconds": 5400.0,
        "measured": LOCAL_MEASURE, "usd": None, "price": None, "prompt_tokens": None, "completion_tokens": None}
    priced_settings = settings.with_(gpu_price_per_hour=0.8)
    _, priced = publish_finished(priced_settings, store, _out(tmp_path, "b", **gpu), "org/priced")
    assert priced["run"]["cost"]["price"] == {"usd_per_hour": 0.8} and priced["run"]["cost"]["usd"] == 1.2
    assert store.read_json("results/org/priced/" + "a" * 12 + "_auto.json")["run"]["cost"]["usd"] == 1.2  # stored
    # on the CPU: the seconds, no GPU (even when the machine has one) and no cost, whatever the GPU price
    cpu = {"device": "cpu", "wall_time_s": 12.5, "hardware": {"device": "cpu", "gpu_name": "NVIDIA L4"}}
    _, on_cpu = publish_finished(priced_settings, store, _out(tmp_path, "c", **cpu), "org/cpu")
    cost = on_cpu["run"]["cost"]
    assert (cost["device"], cost["gpu"], cost["seconds"], cost["usd"], cost["price"]) == ("cpu", None, 12.5, None, None)
    raw = load_board(store, schema(settings.benchmarks)).set_index("model")
    assert raw.loc["org/priced", "cost_usd"] == 1.2 and raw.loc["org/priced", "gpu_hours"] == 1.5
    assert raw.loc["org/priced", "cost_flavor"] == "NVIDIA L4" and raw.loc["org/cpu", "cost_flavor"] == "cpu"
    assert raw.loc["org/unpriced", "cost_executor"] == "local" and pd.isna(raw.loc["org/unpriced", "cost_usd"])


def test_the_dollars_follow_from_the_seconds_as_published():
    """A reader who multiplies the published seconds by the published price gets the published dollars: 19.7449 s
    is published as 19.74 s, and its dollars are those of 19.74 s (those of 19.7449 s round the other way)."""
    results = {"run": {"device": "cuda", "wall_time_s": 19.7449, "hardware": {"device": "cuda", "gpu_name": "L4"}}}
    cost = run_cost(results, Settings().with_(gpu_price_per_hour=0.03), None)
    assert cost["seconds"] == 19.74 and cost["usd"] == round(0.03 * 19.74 / 3600, 6) == 0.000164
    assert round(0.03 * 19.7449 / 3600, 6) == 0.000165  # what it published before


def test_a_served_run_records_its_tokens_and_is_priced_only_when_token_prices_are_set(settings, store, tmp_path):
    def served_out(name: str) -> Path:
        out = _out(tmp_path, name, device="served", wall_time_s=40.0,
                   served={"base_url": "https://router.example/v1", "host": "router.example", "model": "m/served",
                           "usage": {"prompt_tokens": 2_000_000, "completion_tokens": 500_000, "requests": 30}})
        results = json.loads((out / "results.json").read_text())
        (out / "results.json").write_text(json.dumps({**results, "served": True}))
        return out

    def publish(settings_, name: str) -> dict:
        request = served_request("https://router.example/v1", f"m/{name}", name)
        request.status, request.lease_owner = q.RUNNING, "w"
        q.save(store, request)
        return publishing.publish(store, request, served_out(name), settings_)["run"]["cost"]

    unpriced = publish(settings, "unpriced")
    assert unpriced == {"executor": "local", "flavor": None, "gpu": None, "device": "served", "seconds": None,
                        "measured": None, "usd": None, "price": None, "prompt_tokens": 2_000_000,
                        "completion_tokens": 500_000}
    priced = publish(settings.with_(model_price_per_mtok=("0.5", "2"), gpu_price_per_hour=9.0), "priced")
    assert priced["price"] == {"usd_per_mtok_input": 0.5, "usd_per_mtok_output": 2.0}
    assert priced["usd"] == 2.0 and priced["seconds"] is None  # 2M x $0.5 + 0.5M x $2; no GPU time, no GPU price


def test_the_two_prices_are_settings_refused_when_they_do_not_read():
    settings = Settings.from_env({"LEADERBOARD_GPU_PRICE_PER_HOUR": "2.5", "LEADERBOARD_MODEL_PRICE_PER_MTOK": "0.4, 1.6"})
    assert settings.gpu_price_per_hour == 2.5 and settings.model_prices == (0.4, 1.6)
    assert Settings.from_env(settings.as_env()).model_prices == (0.4, 1.6)  # a Job reads them back
    assert Settings.from_env({}).gpu_price_per_hour is None and Settings.from_env({}).model_prices is None
    for env, name in (({"LEADERBOARD_MODEL_PRICE_PER_MTOK": "1"}, "LEADERBOARD_MODEL_PRICE_PER_MTOK"),
                      ({"LEADERBOARD_MODEL_PRICE_PER_MTOK": "a,b"}, "LEADERBOARD_MODEL_PRICE_PER_MTOK"),
                      ({"LEADERBOARD_MODEL_PRICE_PER_MTOK": "-1,2"}, "LEADERBOARD_MODEL_PRICE_PER_MTOK"),
                      ({"LEADERBOARD_GPU_PRICE_PER_HOUR": "-1"}, "LEADERBOARD_GPU_PRICE_PER_HOUR"),
                      ({"LEADERBOARD_GPU_PRICE_PER_HOUR": "nan"}, "LEADERBOARD_GPU_PRICE_PER_HOUR"),
                      ({"LEADERBOARD_GPU_PRICE_PER_HOUR": "cheap"}, "LEADERBOARD_GPU_PRICE_PER_HOUR")):
        with pytest.raises(ValueError, match=name):
            Settings.from_env(env)


def test_a_job_cost_is_now_minus_the_apis_started_at_and_a_failed_lookup_fails_nothing(settings, store, tmp_path):
    results = json.loads((_out(tmp_path, "a", device="cuda", hardware={"gpu_name": "NVIDIA L40S"}) /
                          "results.json").read_text())
    started = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
    seen = JobSeen(id="j1", flavor="l40sx1", started_at=started, usd_per_hour=1.8)
    cost = run_cost(results, settings, seen, now=started + timedelta(minutes=40))
    assert cost == {"executor": "hf-jobs", "flavor": "l40sx1", "gpu": "NVIDIA L40S", "device": "cuda",
                    "seconds": 2400.0, "measured": JOB_MEASURE, "usd": 1.2, "price": {"usd_per_hour": 1.8},
                    "prompt_tokens": None, "completion_tokens": None}

    class Down:  # a Jobs API that cannot answer
        def inspect_job(self, **_):
            raise ConnectionError("the Hub is down")

        list_jobs = list_jobs_hardware = inspect_job

    request = q.Request(model="org/m", revision="b" * 40, status=q.RUNNING, lease_owner="hf-job:x",
                        job={"id": "j1", "namespace": ORG, "flavor": "l40sx1"})
    q.save(store, request)
    lost = job_seen(settings, store, request, "hf-job:x", api=Down())
    assert lost == JobSeen(id="j1", flavor="l40sx1", started_at=None, usd_per_hour=None)
    out = _out(tmp_path, "b", device="cuda")
    published = publishing.publish(store, request, out, settings, job=lost)["run"]["cost"]
    assert (published["executor"], published["flavor"], published["seconds"], published["usd"]) == \
        ("hf-jobs", "l40sx1", None, None)


@pytest.fixture(scope="module")
def jobs_hub(tmp_path_factory):
    """The loopback Hub, whose Jobs run here with this project importable and the Hub reachable."""
    from tests.hub_server import jobs_running_here

    with jobs_running_here(tmp_path_factory.mktemp("jobs")) as server:
        yield server


def _jobs_world(hub, tmp_path, monkeypatch):
    from leaderboard.store.hub import HubStore

    token = hub.issue_token(USER, orgs=[ORG])
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    suffix = uuid.uuid4().hex[:6]
    settings = Settings.from_env({
        "LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": f"{ORG}/results-{suffix}",
        "LEADERBOARD_REQUESTS_REPO": f"{ORG}/requests-{suffix}", "HF_TOKEN": token,
        "LEADERBOARD_EXECUTOR": "hf-jobs", "LEADERBOARD_JOBS_IMAGE": "hf.co/spaces/test-org/leaderboard",
        "LEADERBOARD_JOBS_NAMESPACE": ORG, "LEADERBOARD_LIMIT": "1", "LEADERBOARD_BATCH_SIZE": "2",
        "LEADERBOARD_HOME": str(tmp_path / "space"), "LEADERBOARD_MAX_RUN_SECONDS": "600",
        "LEADERBOARD_HEARTBEAT_SECONDS": "1", "LEADERBOARD_LEASE_SECONDS": "60",
        "LEADERBOARD_JOBS_FLAVORS": "1=cpu-upgrade,70=l40sx4"})  # the tests' Jobs run on this machine's CPU
    api = HfApi(endpoint=hub.url, token=token)
    return settings, HubStore(api, settings.results_repo, settings.requests_repo), api


@pytest.mark.slow  # Jobs on the loopback Hub
def test_job_seen_reads_the_recorded_job_or_finds_it_by_its_labels(jobs_hub, tmp_path, monkeypatch):
    settings, store, api = _jobs_world(jobs_hub, tmp_path, monkeypatch)
    request = q.Request(model="org/m", revision="c" * 40, status=q.RUNNING, lease_owner="hf-job:abc")
    q.save(store, request)
    job = api.run_job(image="x", command=["sleep", "60"], flavor="t4-small", namespace=ORG,
                      labels=hf_jobs.job_labels(settings, request, request.lease_owner))
    try:
        deadline = time.monotonic() + 20
        while api.inspect_job(job_id=job.id, namespace=ORG).started_at is None and time.monotonic() < deadline:
            time.sleep(0.2)
        rate = hardware_rates(api)["t4-small"]
        by_labels = job_seen(settings, store, request, request.lease_owner, api=api)  # no Job recorded yet
        assert (by_labels.id, by_labels.flavor, by_labels.usd_per_hour) == (job.id, "t4-small", rate)
        assert by_labels.started_at == api.inspect_job(job_id=job.id, namespace=ORG).started_at
        request.job = {"id": job.id, "namespace": ORG, "flavor": "t4-small"}
        q.save(store, request)
        recorded = job_seen(settings, store, q.Request(**{**request.to_dict(), "job": {}}), request.lease_owner,
                            api=api)  # the request as the Job was given it: the store's record is read again
        assert recorded == by_labels
    finally:
        api.cancel_job(job_id=job.id, namespace=ORG)


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_job_records_its_flavor_its_seconds_from_the_jobs_api_and_its_price(jobs_hub, tmp_path, monkeypatch,
                                                                              tiny_llava):
    from leaderboard.running.job_dispatch import Dispatcher

    settings, store, api = _jobs_world(jobs_hub, tmp_path, monkeypatch)
    request = q.Request(model="Tiny-Org/Tiny-LLaVA-1.5", revision=uuid.uuid4().hex + "0" * 8, source="local",
                        local_path=str(tiny_llava.folder), params_billions=0.01, submitter=USER)
    q.save(store, request)
    dispatcher = Dispatcher(settings, store, api)
    deadline = time.monotonic() + 600
    while q.load(store, request.path).status not in (q.FINISHED, q.FAILED) and time.monotonic() < deadline:
        dispatcher.tick()
        time.sleep(1)
    done = q.load(store, request.path)
    assert done.status == q.FINISHED, (done.error, done.log_tail)
    info = api.inspect_job(job_id=done.job["id"], namespace=ORG)
    cost = store.read_json(f"results/{request.key}.json")["run"]["cost"]
    rate = hardware_rates(api)["cpu-upgrade"]
    assert (cost["executor"], cost["flavor"], cost["device"], cost["gpu"], cost["measured"]) == \
        ("hf-jobs", "cpu-upgrade", "cpu", None, JOB_MEASURE)
    deadline = time.monotonic() + 30
    while hf_jobs.running_seconds(info) is None and time.monotonic() < deadline:  # the Job ends after publishing
        time.sleep(0.5)
        info = api.inspect_job(job_id=done.job["id"], namespace=ORG)
    assert 0 < cost["seconds"] <= hf_jobs.running_seconds(info) + 1  # RUNNING to publish: within RUNNING to end
    assert cost["price"] == {"usd_per_hour": rate} and cost["usd"] == round(rate * cost["seconds"] / 3600, 6)
    raw = load_board(store, schema(settings.benchmarks))
    assert list(raw["cost_flavor"]) == ["cpu-upgrade"] and raw["cpu_hours"][0] == pytest.approx(cost["seconds"] / 3600)
    assert raw["gpu_hours"].isna().all()  # a CPU flavor's hours are never GPU hours


# -- the board and the dataset show it ---------------------------------------------------------------------------

def _costed(model: str, params: float, seconds: float | None, usd: float | None, flavor: str = "l40sx1",
            executor: str = "hf-jobs", suite: str = "sample", benchmarks: tuple[str, ...] = (BENCHMARK,),
            served: bool = False, tokens: tuple[int, int] | None = None, finished: str = "2026-01-01T00:00:00+00:00",
            sha: str = "a" * 40) -> dict:
    """A results file with a recorded cost."""
    res = board_result(model, {name: 0.5 for name in benchmarks}, suite=suite, params=params, sha=sha)
    res["finished_time"] = finished
    res["served"] = served
    res["run"]["cost"] = {"executor": executor, "flavor": flavor if executor == "hf-jobs" else None,
                          "gpu": flavor if executor == "local" and flavor not in ("cpu", "served") else None,
                          "device": "served" if served else "cpu" if flavor.startswith("cpu") else "cuda",
                          "seconds": seconds, "usd": usd,
                          "measured": None, "price": None, "prompt_tokens": tokens[0] if tokens else None,
                          "completion_tokens": tokens[1] if tokens else None}
    return res


def test_older_runs_read_not_recorded_on_the_board_and_in_the_dataset_never_0(settings, store):
    board = schema(settings.benchmarks)
    write_result(store, board_result("org/older", {BENCHMARK: 0.4}))  # published before costs were recorded
    write_result(store, _costed("org/newer", 7, 3600, None, sha="b" * 40))  # recorded, no price known
    raw = rebuild_leaderboard(store, board).set_index("model")
    assert raw.loc["org/older", ["cost_executor", "cost_flavor"]].isna().all()
    assert raw.loc["org/older", ["gpu_hours", "cost_usd"]].isna().all()  # null in leaderboard.parquet, not 0
    shown = view_text(load_board(store, board), board, "runs").set_index("Model")
    columns = ["Hardware", "Hours (GPU)", "Hours (CPU, wall)", "Cost (USD)"]
    assert list(shown.loc["org/older", columns]) == [NOT_RECORDED] * 4
    assert list(shown.loc["org/newer", columns]) == ["l40sx1", "1", "n/a", "n/a"]
    _, frame = view_board(load_board(store, board), board, "runs")
    table = board_table(frame, board)
    cost = table["headers"].index("Cost (USD)")
    by_model = {row[1]: (data[cost], row[cost]) for row, data in zip(table["metadata"]["display_value"], table["data"])}
    assert by_model["[org/older](https://huggingface.co/org/older)"] == (None, NOT_RECORDED)
    # the dataset's card describes the columns, saying what empty means
    from leaderboard.board.dataset_card import card_text

    text = card_text(board, [BENCHMARK])
    assert all(f"| `{name}` |" in text for name in ("cost_flavor", "gpu_hours", "cost_usd", "prompt_tokens"))
    assert "not recorded, never 0" in text


def test_a_cpu_runs_wall_time_is_never_called_gpu_hours(settings, store):
    """Issue 52, point 2: a CPU run showed `Hardware cpu · GPU hours 0.0577`, its wall time, which a reader adding up
    GPU spend would count."""
    board = schema(settings.benchmarks)
    write_result(store, _costed("org/on-cpu", 0.5, 207.7, None, flavor="cpu", executor="local"))
    write_result(store, _costed("org/on-gpu", 0.5, 3600, None, flavor="L4", executor="local", sha="b" * 40,
                                finished="2025-12-01T00:00:00+00:00"))  # the latest local run is the CPU one
    shown = view_text(rebuild_leaderboard(store, board), board, "runs").set_index("Model")
    columns = ["Hardware", "Hours (GPU)", "Hours (CPU, wall)"]
    assert list(shown.loc["org/on-cpu", columns]) == ["cpu", "n/a", "0.0577"]
    assert list(shown.loc["org/on-gpu", columns]) == ["L4", "1", "n/a"]
    request = q.Request(model="org/next", revision="c" * 40, params_billions=0.5)
    said = estimate(settings, board, request, load_board(store, board)).sentence()
    assert said.startswith("Estimate: about 3:28 on cpu (the median of 1 earlier run"), said  # the CPU run's time


# -- an estimate before you submit -------------------------------------------------------------------------------

JOBS = Settings().with_(executor="hf-jobs")  # default flavors: up to 3 B on t4-small, up to 15 B on l40sx1


def _frame(results: list[dict], settings: Settings = JOBS) -> pd.DataFrame:
    return leaderboard_frame(results, schema(settings.benchmarks))


def test_the_estimate_is_the_median_of_runs_within_a_factor_of_2_on_the_same_flavor_suite_and_benchmarks():
    others = [b for b in schema().cards if b.name != BENCHMARK][0].name
    history = _frame([
        _costed("org/a7", 7, 3600, 1.8), _costed("org/a4", 4, 1800, 0.9), _costed("org/a14", 14, 7200, 3.6),
        _costed("org/small", 3, 60, 0.03),  # under 7 / 2
        _costed("org/large", 15, 99999, 50),  # over 7 x 2
        _costed("org/other-flavor", 7, 99999, 50, flavor="a100-large"),
        _costed("org/full", 7, 99999, 50, suite="full"),
        _costed("org/more", 7, 99999, 50, benchmarks=(BENCHMARK, others)),
        _costed("org/local", 7, 99999, 50, executor="local", flavor="NVIDIA L40S"),
        {**board_result("org/older", {BENCHMARK: 0.5}, params=7)},  # not recorded: never counted
    ])
    request = q.Request(model="org/new", revision="d" * 40, params_billions=7.0)
    guess = estimate(JOBS, schema(JOBS.benchmarks), request, history)
    assert (guess.runs, guess.seconds, guess.usd, guess.hardware) == (3, 3600.0, 1.8, "l40sx1")
    assert guess.sentence() == ("Estimate: about 1:00:00 on l40sx1 and about $1.80 (the median of 3 earlier runs of "
                                "models of 3.5-14 B on l40sx1 with the same suite and benchmarks).")
    assert guess.cell() == "1:00:00 · $1.80 (3 runs)"
    # float32 counts double: 8 B runs on another flavor, where only the run on that flavor compares
    doubled = estimate(JOBS, schema(JOBS.benchmarks), q.Request(model="org/new", revision="d" * 40,
                                                                 params_billions=8.0, precision="float32"), history)
    assert (doubled.runs, doubled.hardware, doubled.seconds) == (1, "a100-large", 99999.0)
    tiny = estimate(JOBS, schema(JOBS.benchmarks), q.Request(model="org/new", revision="d" * 40, params_billions=1.0),
                    history)
    assert tiny.runs == 0 and tiny.hardware == "t4-small" and tiny.cell() == "no estimate yet"


def test_without_history_there_is_no_estimate_yet():
    request = q.Request(model="org/new", revision="d" * 40, params_billions=7.0)
    for history in (None, _frame([]), _frame([board_result("org/older", {BENCHMARK: 0.5}, params=7)])):
        guess = estimate(JOBS, schema(JOBS.benchmarks), request, history)
        assert guess.runs == 0 and guess.sentence().startswith("No estimate yet")
    local = Settings()  # the local executor: this machine's hardware, from its latest local run
    assert "on this machine" in estimate(local, schema(local.benchmarks), request, None).sentence()
    history = _frame([_costed("org/gone", 7, 100, None, executor="local", flavor="NVIDIA T4",
                              finished="2025-01-01T00:00:00+00:00"),
                      _costed("org/last", 6, 300, 0.1, executor="local", flavor="NVIDIA L4", sha="b" * 40)], local)
    here = estimate(local, schema(local.benchmarks), request, history)
    assert (here.runs, here.hardware, here.seconds) == (1, "NVIDIA L4", 300.0)
    on_cpu = local.with_(device="cpu")
    assert estimate(on_cpu, schema(local.benchmarks), request, history).hardware == "cpu"


def test_a_served_request_is_estimated_from_earlier_served_runs_tokens():
    history = _frame([_costed("served--h/a", None, None, 0.2, executor="local", flavor="served", served=True,
                              tokens=(1000, 300)),
                      _costed("served--h/b", None, None, 0.4, executor="local", flavor="served", served=True,
                              tokens=(3000, 500), sha="b" * 40),
                      _costed("org/a7", 7, 3600, 1.8)])
    request = served_request("https://router.example/v1", "m/new", "New")
    guess = estimate(JOBS, schema(JOBS.benchmarks), request, history)
    assert (guess.runs, guess.seconds, guess.usd) == (2, None, pytest.approx(0.3))
    assert guess.cell() == "2000 prompt + 400 completion tokens · $0.30 (2 runs)"
    assert "earlier served runs" in guess.sentence()
    assert estimate(JOBS, schema(JOBS.benchmarks), request, None).cell() == "no estimate yet"


def test_the_submit_answer_adds_the_estimate(settings, store, monkeypatch):
    from leaderboard.submissions import checks
    from leaderboard.submissions.identity import Visitor
    from leaderboard.ui.submit import submit_message

    board = schema(settings.benchmarks)
    write_result(store, _costed("org/before", 0.5, 120, 0.01, executor="local", flavor="NVIDIA L4"))
    rebuild_leaderboard(store, board)
    request = q.Request(model="org/new", revision="d" * 40, params_billions=0.6)
    monkeypatch.setattr(checks, "submit", lambda *a, **k: checks.Outcome(
        True, "Queued org/new: position 1 in the queue.", request=request, position=1))
    message = submit_message(settings, store, "org/new", by=Visitor("ada"), copy=BoardCopy(store, board))
    assert message.startswith("Queued org/new: position 1 in the queue. Estimate: about 2:00 on NVIDIA L4")
    assert "the median of 1 earlier run of a model of 0.3-1.2 B" in message
    assert "No estimate yet" in submit_message(settings, store, "org/new", by=Visitor("ada"), copy=None)  # no board


# -- the Queue shows it ------------------------------------------------------------------------------------------

def _pending(n: int, params: float = 7.0, start: int = 0) -> list[q.Request]:
    return [q.Request(model=f"org/p{i}", revision=f"{i:040x}", params_billions=params,
                      submitted_time=f"2026-02-01T00:00:{i:02d}+00:00") for i in range(start, start + n)]


def test_the_queue_shows_each_pending_requests_estimate_and_expected_start():
    history = _frame([_costed("org/a7", 7, 3600, 1.8)])
    board = schema(JOBS.benchmarks)
    jobs = JOBS.with_(jobs_max=2)
    known = _pending(3)
    unknown = _pending(1, params=0.5, start=3)  # t4-small: nothing ran there
    last = _pending(1, start=4)
    found = queue_estimates(jobs, board, [*known, *unknown, *last], history)
    assert [found[r.key][1] for r in [*known, *unknown, *last]] == [
        "next", "in about 30:00", "in about 1:00:00", "in about 1:30:00", "unknown"]  # 1 h each, 2 at once
    assert found[known[0].key][0] == "1:00:00 · $1.80 (1 run)" and found[unknown[0].key][0] == "no estimate yet"
    local = Settings()  # one at a time; a served request ahead has no time estimate
    history = _frame([_costed("org/a7", 7, 600, None, executor="local", flavor="NVIDIA L4")], local)
    served = served_request("https://router.example/v1", "m/s", "S")
    served.submitted_time = "2026-02-01T00:00:01+00:00"
    requests = [_pending(1)[0], served, *_pending(1, start=2)]
    found = queue_estimates(local, board, requests, history)
    assert [found[r.key][1] for r in requests] == ["next", "in about 10:00", "unknown"]
    table = queue_frame(requests, q.PENDING, estimates=found)
    assert list(table["Estimate"]) == ["10:00 (1 run)", "no estimate yet", "10:00 (1 run)"]
    assert list(table["Expected start"]) == ["next", "in about 10:00", "unknown"]
    assert list(queue_frame(requests, q.PENDING)["Expected start"]) == ["unknown"] * 3  # no estimates given


def test_the_queue_tab_reads_the_estimates_from_the_spaces_copy_of_the_board(settings, store):
    from leaderboard.ui.queue_tab import pending_estimates

    board = schema(settings.benchmarks)
    write_result(store, _costed("org/before", 0.5, 120, None, executor="local", flavor="NVIDIA L4"))
    rebuild_leaderboard(store, board)
    (request,) = _pending(1, params=0.5)
    q.save(store, request)
    found = pending_estimates(settings, q.all_requests(store), BoardCopy(store, board), board)
    assert found == {request.key: ("2:00 (1 run)", "next")}

    class Broken:
        def frame(self):
            raise OSError("the store is down")

    assert pending_estimates(settings, [request], Broken(), board) == {}  # the queue shows, without estimates


def test_a_toy_models_size_band_reads_as_the_board_writes_it(settings, store):
    """Issue 52, point 6: Submit's size band was raw billions with 7 decimals (0.0000222-0.0000886 B)."""
    board = schema(settings.benchmarks)
    write_result(store, _costed("org/toy", 0.0000443, 60, None, flavor="cpu", executor="local"))
    toy = q.Request(model="org/next-toy", revision="c" * 40, params_billions=0.0000443)
    said = estimate(settings, board, toy, load_board(store, board)).sentence()
    assert "of a model of under 0.01 B on cpu" in said and "0.0000" not in said, said
    small = q.Request(model="org/small", revision="d" * 40, params_billions=0.5)
    assert "0.25-1 B" in estimate(settings, board, small, load_board(store, board)).sentence()


def test_a_text_models_estimate_counts_text_models_runs_only(settings, store):
    """Issue 52, point 6: the median mixed a vision run (its image benchmarks ran) with a text-only run (it skipped
    them) for a text model."""
    board = schema(settings.benchmarks)
    vision = _costed("org/vision", 0.5, 600, None, flavor="cpu", executor="local", finished="2025-12-01T00:00:00+00:00")
    text = _costed("org/text", 0.5, 60, None, flavor="cpu", executor="local", sha="b" * 40)
    text["benchmarks"], text["skipped"] = {}, {name: "needs image input; the model is text-only"
                                               for name in settings.benchmarks}
    write_result(store, vision)
    write_result(store, text)
    raw = load_board(store, board)
    for architecture, said in (("LlamaForCausalLM", "about 1:00"), ("LlavaForConditionalGeneration", "about 10:00")):
        request = q.Request(model="org/next", revision="c" * 40, params_billions=0.5, architecture=architecture)
        sentence = estimate(settings, board, request, raw).sentence()
        assert sentence.startswith(f"Estimate: {said} on cpu (the median of 1 earlier run"), (architecture, sentence)
