"""Evaluations as Hugging Face Jobs (LEADERBOARD_EXECUTOR=hf-jobs), on the loopback Hub (tests/hub_server.py):
the real huggingface_hub client starts, watches, reads and cancels the Jobs; each Job runs the real
`python -m leaderboard.running.job_run` as a subprocess, which evaluates a tiny local model and publishes to the Hub store
over HTTP, as a Job on the Hub would."""
from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from leaderboard.running import hf_jobs
from leaderboard.running.job_dispatch import Dispatcher, is_job_lease
from leaderboard.settings import Settings
from leaderboard.store.hub import HubStore
from leaderboard.submissions import records as q
from leaderboard.submissions.identity import Visitor
from leaderboard.ui.queue_tab import request_action
from tests.hub_server import HubServer, hub_client_online

PROJECT = Path(__file__).resolve().parents[1]
USER, ORG = "ada", "test-org"
TERMINAL = ("COMPLETED", "CANCELED", "ERROR", "DELETED")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """The loopback Hub; its Jobs run in a scratch folder with this project importable and the Hub reachable."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_TOKEN")}
    env.update(HF_HUB_OFFLINE="0", PYTHONPATH=str(PROJECT), OMP_NUM_THREADS="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    with HubServer(job_cwd=tmp_path_factory.mktemp("jobs"), job_env=env, kill_grace=2.0) as server, \
            hub_client_online():
        yield server


@pytest.fixture(scope="module")
def token(hub):
    return hub.issue_token(USER, orgs=[ORG])


@pytest.fixture
def world(hub, token, tmp_path, monkeypatch, tiny_llava):
    """Settings of a Space dispatching to Jobs, its Hub store, and a dispatcher."""
    monkeypatch.setenv("HF_ENDPOINT", hub.url)  # passed through to the Jobs, like a Hub mirror would be
    suffix = uuid.uuid4().hex[:6]
    settings = Settings.from_env({
        "LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": f"{ORG}/results-{suffix}",
        "LEADERBOARD_REQUESTS_REPO": f"{ORG}/requests-{suffix}", "HF_TOKEN": token,
        "LEADERBOARD_EXECUTOR": "hf-jobs", "LEADERBOARD_JOBS_IMAGE": "hf.co/spaces/test-org/leaderboard",
        "LEADERBOARD_JOBS_NAMESPACE": ORG, "LEADERBOARD_BENCHMARKS": "cure", "LEADERBOARD_LIMIT": "1",
        "LEADERBOARD_BATCH_SIZE": "2", "LEADERBOARD_HOME": str(tmp_path / "space"), "LEADERBOARD_MAX_ATTEMPTS": "2",
        "LEADERBOARD_MAX_RUN_SECONDS": "600", "LEADERBOARD_HEARTBEAT_SECONDS": "1", "LEADERBOARD_LEASE_SECONDS": "60"})
    api = HfApi(endpoint=hub.url, token=token)
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    return settings, store, Dispatcher(settings, store, api), tiny_llava.folder


def submit(store, folder: Path, n: int) -> list[q.Request]:
    requests = []
    for i in range(n):
        request = q.Request(model=f"tiny-org/tiny-llava-{i}", revision=f"{uuid.uuid4().hex}{i:08x}", source="local",
                            local_path=str(folder), params_billions=0.01, submitter=USER)
        q.save(store, request)
        requests.append(request)
    return requests


def job_of(hub, job_id: str):
    return next(j for j in hub.jobs if j.id == job_id)


def wait_until(condition, timeout: float, every: float = 0.5, tick=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if tick is not None:
            tick()
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("timed out")


def test_eight_requests_run_as_four_jobs_at_a_time_each_published_once(hub, world, token):
    settings, store, dispatcher, folder = world
    requests = submit(store, folder, 8)
    before = hub.commits[settings.requests_repo]
    hub.fail_next_commit(settings.requests_repo, status=429, retry_after=1)  # the Hub says: slow down
    most, reports = 0, []

    def tick():
        nonlocal most
        reports.append(dispatcher.tick())
        most = max(most, sum(1 for j in hub.jobs if j.stage in ("SCHEDULING", "RUNNING")))

    def all_done():
        return all(q.load(store, r.path).status in (q.FINISHED, q.FAILED) for r in requests)

    wait_until(all_done, timeout=600, every=1.0, tick=tick)
    assert not any(r.error for r in reports), [r.error for r in reports]
    final = [q.load(store, r.path) for r in requests]
    assert [r.status for r in final] == [q.FINISHED] * 8, [(r.status, r.error, r.log_tail) for r in final]
    assert all(r.attempts == 0 and r.job["id"] and r.job["flavor"] == "t4-small" for r in final)
    # 4 at once at most, and 4 at once indeed; one Job per request, each published once
    assert most == 4
    ours = [j for j in hub.jobs if j.labels.get(hf_jobs.LABEL_STORE) == hf_jobs.label(settings.results_repo)]
    assert sorted(j.labels[hf_jobs.LABEL_REQUEST] for j in ours) == sorted(hf_jobs.label(r.key) for r in requests)
    wait_until(lambda: all(job_of(hub, j.id).stage in TERMINAL for j in ours), timeout=30)
    assert all(job_of(hub, j.id).stage == "COMPLETED" and j.flavor == "t4-small" for j in ours)
    files = hub.files(settings.results_repo)
    assert all(f"results/{r.key}.json" in files and f"details/{r.key}/cure.parquet" in files for r in requests)
    # commits: the claims, the Job records and each Job's close; no heartbeat commits; the 429 was waited out
    starting_ticks = sum(1 for r in reports if r.started)
    spent = hub.commits[settings.requests_repo] - before
    assert spent <= 2 * starting_ticks + 8 and spent <= settings.commit_budget
    assert hub.repos.throttled[settings.requests_repo] >= 1
    # the token is a Job secret only: never in a command, an environment, a label or a log
    for job in ours:
        assert job.secret_names == ["HF_TOKEN"]
        said = " ".join([*job.command, *job.env.values(), *job.labels.values(), *hub.job_logs(job.id)])
        assert token not in said and "LEADERBOARD_PROGRESS" in said
        assert job.command[:3] == ["python", "-m", "leaderboard.running.job_run"] and job.env["LEADERBOARD_EXECUTOR"] == "local"


def _started(hub, dispatcher, store, request) -> str:
    """Tick until the request's Job is running and its evaluation has begun; its Job id."""
    dispatcher.tick()
    job_id = q.load(store, request.path).job["id"]
    wait_until(lambda: any("[job] evaluating" in line for line in hub.job_logs(job_id)), timeout=60)
    return job_id


def test_a_killed_job_is_retried_then_failed_with_its_log_tail(hub, world):
    settings, store, dispatcher, folder = world
    (request,) = submit(store, folder, 1)
    first = _started(hub, dispatcher, store, request)
    hub.kill_job(first)
    wait_until(lambda: job_of(hub, first).stage == "ERROR", timeout=20)
    dispatcher.tick()  # back to the queue (attempt 1 of 2), then a new Job
    again = q.load(store, request.path)
    assert again.attempts == 1
    assert again.status == q.RUNNING and again.job["id"] != first  # the same tick started the next attempt
    second = again.job["id"]
    wait_until(lambda: any("[job] evaluating" in line for line in hub.job_logs(second)), timeout=60)
    hub.kill_job(second)
    wait_until(lambda: job_of(hub, second).stage == "ERROR", timeout=20)
    dispatcher.tick()
    failed = q.load(store, request.path)
    assert failed.status == q.FAILED and failed.attempts == 2
    assert f"the Job {second} ended ERROR" in failed.error and "gave up after 2 attempt(s)" in failed.error
    assert "[job] evaluating" in failed.log_tail and "LEADERBOARD_PROGRESS" not in failed.log_tail
    assert len([j for j in hub.jobs if j.labels.get(hf_jobs.LABEL_REQUEST) == hf_jobs.label(request.key)]) == 2


def test_cancel_from_the_queue_tab_cancels_the_job(hub, world):
    settings, store, dispatcher, folder = world
    (request,) = submit(store, folder, 1)
    job_id = _started(hub, dispatcher, store, request)
    message = request_action(settings, store, request.key, "cancel", Visitor(USER),
                             jobs=dispatcher)
    assert message.startswith("Done")
    wait_until(lambda: job_of(hub, job_id).stage == "CANCELED", timeout=20)
    dispatcher.tick()
    assert q.load(store, request.path).status == q.CANCELLED and not dispatcher.live


def test_a_restarted_dispatcher_adopts_running_jobs(hub, world):
    settings, store, dispatcher, folder = world
    requests = submit(store, folder, 2)
    dispatcher.tick()  # both start
    assert all(q.load(store, r.path).job.get("id") for r in requests)
    jobs_before = len(hub.jobs)
    # a restart between starting a Job and recording it: the request holds no Job id
    lost = q.load(store, requests[1].path)
    lost.job = {}
    q.save(store, lost)
    restarted = Dispatcher(settings, store, dispatcher.api)
    report = restarted.tick()
    assert report.adopted == [requests[1].key] and report.started == [] and len(hub.jobs) == jobs_before
    assert set(restarted.live) == {r.key for r in requests}
    assert all(is_job_lease(q.load(store, r.path).lease_owner) and q.load(store, r.path).job.get("id")
               for r in requests)
    for request in requests:  # clean up: cancelled as an admin would
        request_action(settings, store, request.key, "cancel", Visitor("root", admin=True),
                       jobs=restarted)


def test_a_job_that_ends_without_publishing_fails_its_request_with_the_log_tail(hub, world):
    settings, store, dispatcher, folder = world
    dispatcher.settings = settings.with_(jobs_setup="echo preparing the image; exit 0")  # it never evaluates
    (request,) = submit(store, folder, 1)
    dispatcher.tick()
    job_id = q.load(store, request.path).job["id"]
    assert job_of(hub, job_id).command[:2] == ["bash", "-c"]
    wait_until(lambda: job_of(hub, job_id).stage == "COMPLETED", timeout=30)
    dispatcher.tick()
    failed = q.load(store, request.path)
    assert failed.status == q.FAILED and failed.error == "the Job finished but did not publish its results"
    assert "preparing the image" in failed.log_tail


def test_the_local_worker_on_the_hub_store_renews_its_lease_a_few_times_an_hour():
    from leaderboard.running.attempt import renewal_interval

    hub_store = Settings.from_env({"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": "o/r"})
    assert renewal_interval(hub_store) == 200  # a third of the 600 s lease: 18 commits an hour, not 60
    assert renewal_interval(Settings.from_env({})) == 5  # the local store: a file write, every heartbeat
