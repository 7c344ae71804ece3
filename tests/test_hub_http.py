"""The loopback Hub (tests/hub_server.py) answers the REAL `huggingface_hub.HfApi` client over HTTP: dataset repos
(create, read, list with pages, paths-info, commit with parent_commit, 412 and 429 answers, the commit listing,
super-squash) and Jobs, whose commands run here as local subprocesses (env and secrets, logs, cancel, kill,
timeout, labels, hardware). Git LFS and the read budgets: tests/test_hub_lfs.py.

tests/conftest.py sets HF_HUB_OFFLINE=1, which makes huggingface_hub refuse every request (its HTTP client checks
`constants.HF_HUB_OFFLINE` on each one): the `hub` fixture lifts it with `hub_client_online()` for this module,
and a Job's subprocess that calls the server gets HF_HUB_OFFLINE=0 in its env. It also sets HF_HUB_DISABLE_XET=1:
the client uploads LFS files with the Git LFS protocol, which the loopback Hub serves, rather than Xet.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
import uuid

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import (BadRequestError, HfHubHTTPError, RemoteEntryNotFoundError,
                                    RepositoryNotFoundError, RevisionNotFoundError)
from huggingface_hub.hf_api import RepoFile, RepoFolder
from huggingface_hub.utils import get_session

from tests.conftest import HUB_ORG, HUB_USER, wait_for
from tests.hub_server import HubServer, hub_client_online

USER, ORG = HUB_USER, HUB_ORG
TERMINAL = ("COMPLETED", "CANCELED", "ERROR", "DELETED")


@pytest.fixture(scope="module")
def hub():
    with HubServer(kill_grace=1.0) as server, hub_client_online():
        yield server


@pytest.fixture
def repo(api):
    """A new dataset repo of the org."""
    repo_id = f"{ORG}/results-{uuid.uuid4().hex[:8]}"
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
    return repo_id


def commit(api, repo_id, files: dict[str, bytes | None], parent: str | None = None):
    operations = [CommitOperationDelete(path) if data is None else CommitOperationAdd(path, data)
                  for path, data in files.items()]
    return api.create_commit(repo_id, operations=operations, commit_message=f"Update {len(files)} files",
                             repo_type="dataset", parent_commit=parent)


def stage_of(api, job_id: str, namespace: str = USER) -> str:
    return api.inspect_job(job_id=job_id, namespace=namespace).status.stage


def wait_stage(api, job_id: str, namespace: str = USER, timeout: float = 10.0):
    """The Job once it reached a terminal stage."""
    return wait_for(lambda: (job := api.inspect_job(job_id=job_id, namespace=namespace)).status.stage in TERMINAL
                    and job, timeout=timeout)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is gone too
    except FileNotFoundError:
        return False


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


# ------------------------------------------------------------------------------------------------ repos

def test_create_commit_and_read_back(api, hub, tmp_path):
    repo_id = f"{ORG}/board-{uuid.uuid4().hex[:8]}"
    url = api.create_repo(repo_id, repo_type="dataset")
    assert url.repo_id == repo_id and url.repo_type == "dataset"
    assert api.create_repo(repo_id, repo_type="dataset", exist_ok=True).repo_id == repo_id  # 409 taken as "exists"
    with pytest.raises(HfHubHTTPError) as exists:
        api.create_repo(repo_id, repo_type="dataset")
    assert exists.value.response.status_code == 409

    first = api.repo_info(repo_id, repo_type="dataset").sha
    info = commit(api, repo_id, {"results/a.json": b'{"score": 1}', "requests/b.json": b"{}"}, parent=first)
    assert info.oid != first and api.repo_info(repo_id, repo_type="dataset").sha == info.oid
    assert hub.commits[repo_id] == 1 and hub.head(repo_id) == info.oid
    assert sorted(api.list_repo_files(repo_id, repo_type="dataset")) == [".gitattributes", "requests/b.json",
                                                                          "results/a.json"]
    assert [f.path for f in api.list_repo_tree(repo_id, repo_type="dataset")] == [".gitattributes", "requests",
                                                                                  "results"]
    path = api.hf_hub_download(repo_id, "results/a.json", repo_type="dataset", cache_dir=tmp_path)
    assert open(path, "rb").read() == b'{"score": 1}'

    second = commit(api, repo_id, {"results/a.json": b'{"score": 2}', "requests/b.json": None})
    assert hub.commits[repo_id] == 2 and set(hub.files(repo_id)) == {".gitattributes", "results/a.json"}
    path = api.hf_hub_download(repo_id, "results/a.json", repo_type="dataset", cache_dir=tmp_path)
    assert open(path, "rb").read() == b'{"score": 2}'
    old = api.hf_hub_download(repo_id, "requests/b.json", repo_type="dataset", revision=info.oid, cache_dir=tmp_path)
    assert open(old, "rb").read() == b"{}"  # an older commit stays readable
    assert api.repo_info(repo_id, repo_type="dataset", revision=info.oid).sha == info.oid != second.oid

    with pytest.raises(RemoteEntryNotFoundError):
        api.hf_hub_download(repo_id, "requests/b.json", repo_type="dataset", cache_dir=tmp_path)
    with pytest.raises(RevisionNotFoundError):
        api.hf_hub_download(repo_id, "results/a.json", repo_type="dataset", revision="f" * 40, cache_dir=tmp_path)
    with pytest.raises(RepositoryNotFoundError):
        api.hf_hub_download(f"{ORG}/missing", "a.json", repo_type="dataset", cache_dir=tmp_path)
    with pytest.raises(RepositoryNotFoundError):
        api.repo_info(f"{ORG}/missing", repo_type="dataset")
    with pytest.raises(RemoteEntryNotFoundError):  # deleting what is not there
        commit(api, repo_id, {"requests/b.json": None})


def test_a_stale_parent_commit_is_refused_with_412(api, hub, repo):
    start = api.repo_info(repo, repo_type="dataset").sha
    moved = commit(api, repo, {"a.json": b"1"}, parent=start).oid
    with pytest.raises(HfHubHTTPError) as refused:
        commit(api, repo, {"a.json": b"2"}, parent=start)
    assert refused.value.response.status_code == 412
    assert hub.repos.rejected[repo] == 1 and hub.head(repo) == moved and hub.commits[repo] == 1
    # additions all unchanged: the client skips the commit and answers the head, parent_commit unchecked
    assert commit(api, repo, {"a.json": b"1"}, parent=start).oid == moved and hub.commits[repo] == 1


def test_an_injected_429_carries_retry_after(api, hub, repo):
    hub.fail_next_commit(repo, status=429, retry_after=2)
    with pytest.raises(HfHubHTTPError) as throttled:
        commit(api, repo, {"a.json": b"1"})
    response = throttled.value.response
    assert response.status_code == 429 and response.headers["Retry-After"] == "2"
    assert "quotas" in response.json()["error"] and hub.commits[repo] == 0 and hub.repos.throttled[repo] == 1
    commit(api, repo, {"a.json": b"1"})  # only the next one failed
    assert hub.commits[repo] == 1

    hub.fail_next_commit(repo, status=500, retry_after=None)
    with pytest.raises(HfHubHTTPError) as failed:
        commit(api, repo, {"a.json": b"2"})
    assert failed.value.response.status_code == 500 and "Retry-After" not in failed.value.response.headers


def test_a_commit_budget_answers_429_within_its_window(api, hub, repo):
    other = f"{ORG}/other-{uuid.uuid4().hex[:8]}"
    api.create_repo(other, repo_type="dataset")
    hub.set_commit_budget(2, window_seconds=0.6, repo_id=repo)
    commit(api, repo, {"a.json": b"1"})
    commit(api, repo, {"a.json": b"2"})
    with pytest.raises(HfHubHTTPError) as throttled:
        commit(api, repo, {"a.json": b"3"})
    assert throttled.value.response.status_code == 429 and throttled.value.response.headers["Retry-After"] == "1"
    for n in range(3):  # another repo has no budget
        commit(api, other, {"a.json": str(n).encode()})
    wait_for(lambda: _commits_again(api, repo), timeout=3, step=0.1)  # the window rolls on
    assert hub.commits[repo] == 3 and hub.commits[other] == 3


def _commits_again(api, repo) -> bool:
    try:
        commit(api, repo, {"a.json": b"3"})
        return True
    except HfHubHTTPError as exc:
        assert exc.response.status_code == 429
        return False


def test_writes_need_a_token_of_the_namespace(api, hub, repo, token):
    anonymous = HfApi(endpoint=hub.url, token=False)
    assert anonymous.repo_info(repo, repo_type="dataset").sha == hub.head(repo)  # reads are public
    with pytest.raises(HfHubHTTPError) as refused:
        commit(anonymous, repo, {"a.json": b"1"})
    assert refused.value.response.status_code == 401
    with pytest.raises(HfHubHTTPError) as unknown:
        HfApi(endpoint=hub.url, token="hf_not_a_token").repo_info(repo, repo_type="dataset")
    assert unknown.value.response.status_code == 401
    stranger = HfApi(endpoint=hub.url, token=hub.issue_token("mallory"))
    with pytest.raises(HfHubHTTPError) as forbidden:
        commit(stranger, repo, {"a.json": b"1"})
    assert forbidden.value.response.status_code == 403 and hub.commits[repo] == 0
    assert token in hub.tokens_used and api.whoami()["name"] == USER
    assert [org["name"] for org in api.whoami()["orgs"]] == [ORG]


def test_the_hub_store_runs_on_the_real_client(api, hub):
    from leaderboard.store import StoreConflict
    from leaderboard.store.hub import HubStore

    results, requests = f"{ORG}/lb-results-{uuid.uuid4().hex[:6]}", f"{ORG}/lb-requests-{uuid.uuid4().hex[:6]}"
    store = HubStore(api, results, requests)
    store.write_json("results/org/m/run.json", {"score": 1})
    store.write_json("requests/org/m/req.json", {"status": "PENDING"})
    assert store.read_json("results/org/m/run.json") == {"score": 1}
    assert store.list("requests", suffix=".json") == ["requests/org/m/req.json"]
    with pytest.raises(StoreConflict):
        with store.lock():
            HubStore(api, results, requests, create=False).write_json("requests/org/m/other.json", {})
            store.write_json("requests/org/m/req.json", {"status": "RUNNING"})
    store.delete("results/org/m/run.json")
    assert store.read_json("results/org/m/run.json") is None
    assert hub.commits[results] == 2 and hub.commits[requests] == 2 and hub.repos.rejected[requests] == 1


def test_repo_info_answers_only_the_expanded_properties(api, hub, repo):
    info = api.dataset_info(repo, expand=["sha"])
    assert info.sha == hub.head(repo) and info.siblings is None and info.last_modified is None
    raw = get_session().get(f"{hub.url}/api/datasets/{repo}", params={"expand": ["sha", "lastModified"]}).json()
    assert set(raw) == {"_id", "id", "sha", "lastModified"}
    with pytest.raises(BadRequestError):  # a model's property
        api.dataset_info(repo, expand=["sha", "safetensors"])


def test_a_tree_pages_through_link_headers_and_paths_info_finds_entries(api, hub, repo):
    files = {f"runs/{n // 100:02d}/{n:04d}.json": str(n).encode() for n in range(2500)}
    head = api.create_commit(repo, operations=[CommitOperationAdd(p, d) for p, d in files.items()],
                             commit_message="2,500 files", repo_type="dataset").oid
    start = len(hub.requests)
    listed = list(api.list_repo_tree(repo, repo_type="dataset", recursive=True))
    assert len([path for _, path in hub.requests[start:] if "/tree/" in path]) == 3  # 1,000 entries a page
    assert {f.path for f in listed if isinstance(f, RepoFile)} == {*files, ".gitattributes"}
    assert len([f for f in listed if isinstance(f, RepoFolder)]) == 1 + 25 and len(listed) == 2527
    first = get_session().get(f"{hub.url}/api/datasets/{repo}/tree/main", params={"recursive": True})
    assert first.links["next"]["url"].startswith(f"{hub.url}/api/datasets/{repo}/tree/main?recursive=true&cursor=")
    start = len(hub.requests)
    expanded = list(api.list_repo_tree(repo, "runs/07", repo_type="dataset", expand=True))  # 50 a page
    assert len(expanded) == 100 and len(hub.requests) - start == 2
    assert {f.last_commit.oid for f in expanded} == {head} and expanded[0].last_commit.title == "2,500 files"

    found = api.get_paths_info(repo, ["runs/00/0001.json", "runs/24", "missing.json"], repo_type="dataset")
    assert [(type(f), f.path) for f in found] == [(RepoFile, "runs/00/0001.json"), (RepoFolder, "runs/24")]
    assert found[0].blob_id == hashlib.sha1(b"blob 1\0" + b"1").hexdigest() and found[0].lfs is None


def test_the_commit_listing_pages_newest_first_with_its_length(api, hub, repo, token):
    oids = [commit(api, repo, {"a.json": str(n).encode()}).oid for n in range(51)]
    listed = api.list_repo_commits(repo, repo_type="dataset")  # 50 a page: two pages, through Link
    assert [c.commit_id for c in listed[:51]] == oids[::-1] and len(listed) == 52
    assert (listed[-1].authors, listed[-1].title, listed[0].authors) == (["system"], "initial commit", [USER])
    url, headers = f"{hub.url}/api/datasets/{repo}/commits/main", {"Authorization": f"Bearer {token}"}
    five = get_session().get(url, params={"limit": 5}, headers=headers)
    assert five.headers["X-Total-Count"] == "52" and [c["id"] for c in five.json()] == oids[::-1][:5]
    assert five.links["next"]["url"].endswith("limit=5&p=1")
    assert get_session().get(url, params={"limit": 1001}, headers=headers).status_code == 400


def test_super_squash_leaves_one_commit_and_forgets_the_old_ones(api, hub, repo):
    commit(api, repo, {"a.json": b"1"})
    old = commit(api, repo, {"b.json": b"2"}).oid
    api.super_squash_history(repo, repo_type="dataset", commit_message="Squash it")
    head = hub.head(repo)
    assert head != old and hub.squashes[repo] == 1 and hub.commits[repo] == 2
    [only] = api.list_repo_commits(repo, repo_type="dataset")
    assert (only.commit_id, only.title, only.authors) == (head, "Squash it", [USER])
    assert hub.repos.snapshot("dataset", repo).parent is None and set(hub.files(repo)) == {".gitattributes",
                                                                                           "a.json", "b.json"}
    with pytest.raises(RevisionNotFoundError):
        api.repo_info(repo, repo_type="dataset", revision=old)
    with pytest.raises(HfHubHTTPError) as stale:
        commit(api, repo, {"c.json": b"3"}, parent=old)
    assert stale.value.response.status_code == 412
    assert get_session().get(f"{hub.url}/api/datasets/{repo}/commits/main").headers["X-Total-Count"] == "1"
    with pytest.raises(HfHubHTTPError) as anonymous:
        HfApi(endpoint=hub.url, token=False).super_squash_history(repo, repo_type="dataset")
    assert anonymous.value.response.status_code == 401 and hub.squashes[repo] == 1


# ------------------------------------------------------------------------------------------------ jobs

@pytest.mark.slow  # Jobs (processes) on the loopback Hub
def test_a_job_runs_with_env_and_secrets_and_logs(api, hub, token):
    job = api.run_job(image="python:3.12", command=python(
        "print('hello'); import os; print(os.environ['GREETING']); print(len(os.environ['HF_TOKEN']))"),
        env={"GREETING": "bonjour"}, secrets={"HF_TOKEN": token}, flavor="t4-small", timeout=60,
        labels={"benchmark": "reform"}, namespace=USER)
    assert job.status.stage in ("RUNNING", "COMPLETED") and job.owner.name == USER
    done = wait_stage(api, job.id)
    assert done.status.stage == "COMPLETED" and done.flavor == "t4-small" and done.labels["benchmark"] == "reform"
    assert done.environment == {"GREETING": "bonjour"} and list(done.secrets) == ["HF_TOKEN"]
    assert done.started_at and done.finished_at and done.finished_at >= done.started_at
    logs = list(api.fetch_job_logs(job_id=job.id, namespace=USER))
    assert logs == ["hello", "bonjour", str(len(token))] == hub.job_logs(job.id)

    record = next(r for r in hub.jobs if r.id == job.id)
    assert (record.namespace, record.flavor, record.env, record.secret_names) == (USER, "t4-small",
                                                                                  {"GREETING": "bonjour"}, ["HF_TOKEN"])
    assert record.command[0] == sys.executable and record.timeout == 60 and record.stage == "COMPLETED"
    assert token not in repr(hub.jobs) and token not in repr(done) and token not in "\n".join(logs)
    assert token in hub.tokens_used


@pytest.mark.slow  # Jobs on the loopback Hub
def test_follow_streams_the_logs_until_the_job_ends(api):
    job = api.run_job(image="python:3.12", namespace=USER, command=python(
        "import time\nfor i in range(3):\n    print('line', i, flush=True); time.sleep(0.3)"))
    assert list(api.fetch_job_logs(job_id=job.id, namespace=USER, follow=True)) == ["line 0", "line 1", "line 2"]
    assert stage_of(api, job.id) == "COMPLETED"


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_failing_command_ends_in_error(api, hub):
    job = api.run_job(image="python:3.12", command=python("import sys; print('boom'); sys.exit(3)"),
                      namespace=USER)
    done = wait_stage(api, job.id)
    assert done.status.stage == "ERROR" and "exit code: 3" in done.status.message
    assert hub.job_logs(job.id) == ["boom"]


@pytest.mark.slow  # Jobs on the loopback Hub
def test_cancel_kills_the_process_group(api, hub):
    job = api.run_job(image="python:3.12", namespace=USER, command=python(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True); time.sleep(60)"))
    child = int(wait_for(lambda: hub.job_logs(job.id), timeout=5)[0])
    pid = next(r.pid for r in hub.jobs if r.id == job.id)
    assert stage_of(api, job.id) == "RUNNING" and alive(pid) and alive(child)
    api.cancel_job(job_id=job.id, namespace=USER)
    assert wait_stage(api, job.id).status.stage == "CANCELED"
    assert not alive(pid)
    wait_for(lambda: not alive(child), timeout=3)


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_killed_job_ends_in_error(api, hub):
    job = api.run_job(image="python:3.12", command=python("import time; time.sleep(60)"), namespace=USER)
    hub.kill_job(job.id)
    done = wait_stage(api, job.id)
    assert done.status.stage == "ERROR" and "killed" in done.status.message
    assert not alive(next(r.pid for r in hub.jobs if r.id == job.id))


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_job_past_its_timeout_ends_in_error(api, hub):
    job = api.run_job(image="python:3.12", command=python("import time; time.sleep(60)"), timeout=1,
                      namespace=USER)
    done = wait_stage(api, job.id, timeout=5)
    assert done.status.stage == "ERROR" and "timeout" in done.status.message.lower()
    assert 1 <= (done.finished_at - done.started_at).total_seconds() < 50  # stopped at its timeout, not the 60 s
    assert done.durations.running_secs >= 1


@pytest.mark.slow  # Jobs on the loopback Hub
def test_list_jobs_filters_on_labels_and_stage(api):
    run_id = uuid.uuid4().hex[:8]
    started = [api.run_job(image="python:3.12", command=python("print(1)"), namespace=ORG,
                           labels={"run": run_id, "benchmark": name}) for name in ("reform", "simpleqa")]
    for job in started:
        wait_stage(api, job.id, namespace=ORG)
    listed = list(api.list_jobs(namespace=ORG, labels={"run": run_id}))  # namespace= : see tests/hub_server.py
    assert {job.id for job in listed} == {job.id for job in started}
    assert {job.labels["benchmark"] for job in listed} == {"reform", "simpleqa"}
    reform = list(api.list_jobs(namespace=ORG, labels={"run": run_id, "benchmark": "reform"}))
    assert [job.id for job in reform] == [started[0].id] and reform[0].owner.type == "org"
    assert len(list(api.list_jobs(namespace=ORG, labels={"run": run_id}, status="COMPLETED"))) == 2
    assert list(api.list_jobs(namespace=ORG, labels={"run": run_id}, status="RUNNING")) == []


def test_jobs_refuse_a_bad_flavor_and_another_namespace(api, hub):
    with pytest.raises(BadRequestError):
        api.run_job(image="python:3.12", command=python("print(1)"), flavor="tpu-v5", namespace=USER)
    with pytest.raises(HfHubHTTPError) as forbidden:
        api.run_job(image="python:3.12", command=python("print(1)"), namespace="someone-else")
    assert forbidden.value.response.status_code == 403
    with pytest.raises(HfHubHTTPError) as anonymous:
        HfApi(endpoint=hub.url, token=False).inspect_job(job_id="0" * 24, namespace=USER)
    assert anonymous.value.response.status_code == 401


def test_list_jobs_hardware_parses(api):
    """The hardware list is exactly huggingface_hub's own JobHardware names, read from the installed client."""
    from huggingface_hub import JobHardware

    hardware = {row.name: row for row in api.list_jobs_hardware()}
    assert set(hardware) == {item.value for item in JobHardware} and "l40sx4" in hardware and "h100x8" not in hardware
    assert hardware["cpu-basic"].accelerator is None and hardware["cpu-basic"].unit_label == "minute"
    assert hardware["a100x8"].accelerator.model == "A100" and hardware["a100x8"].accelerator.quantity == "8"
    assert hardware["t4-small"].accelerator.model == "T4" and hardware["l40sx4"].accelerator.quantity == "4"
    costs = [hardware[name].unit_cost_usd for name in ("cpu-basic", "t4-small", "a100-large", "a100x8")]
    assert costs == sorted(costs) and costs[0] > 0


@pytest.mark.parametrize("labels", [{"request": "Qwen--Qwen2.5-VL-7B"}, {"model": "org/name"}, {"k": ""},
                                    {"k": "x" * 64}, {"bad key": "v"}, {"k": "é"}])
def test_jobs_refuse_label_values_the_api_refuses(api, labels):
    with pytest.raises(BadRequestError, match="label"):
        api.run_job(image="python:3.12", command=python("print(1)"), namespace=USER, labels=labels)
    ok = api.run_job(image="python:3.12", command=python("print(1)"), namespace=USER,
                     labels={"leaderboard-request": "Qwen--Qwen2_5-VL-7B_" + "a" * 20, "k": "x" * 63})
    assert wait_stage(api, ok.id).status.stage == "COMPLETED"


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_job_waits_in_scheduling_then_runs_and_can_be_cancelled_there(api, hub):
    hub.runner.scheduling_seconds = 1.0
    try:
        job = api.run_job(image="python:3.12", command=python("print('ran')"), namespace=USER, timeout=30)
        waiting = api.run_job(image="python:3.12", command=python("print('never')"), namespace=USER)
        assert stage_of(api, job.id) == "SCHEDULING" and hub.job_logs(job.id) == []
        assert [j.id for j in api.list_jobs(namespace=USER, status="SCHEDULING")][:2] == [waiting.id, job.id]
        api.cancel_job(job_id=waiting.id, namespace=USER)
        assert stage_of(api, waiting.id) == "CANCELED"
        done = wait_stage(api, job.id, timeout=10)
        assert done.status.stage == "COMPLETED" and hub.job_logs(job.id) == ["ran"]
        assert done.durations.scheduling_secs >= 1 and (done.started_at - done.created_at).total_seconds() >= 0.9
        time.sleep(1.2)
        assert hub.job_logs(waiting.id) == [] and stage_of(api, waiting.id) == "CANCELED"  # it never started
    finally:
        hub.runner.scheduling_seconds = 0.0


@pytest.mark.slow  # Jobs on the loopback Hub
def test_logs_answer_tail(api, hub):
    job = api.run_job(image="python:3.12", command=python("for i in range(30): print('line', i)"), namespace=USER)
    wait_stage(api, job.id)
    assert list(api.fetch_job_logs(job_id=job.id, namespace=USER, tail=3)) == ["line 27", "line 28", "line 29"]


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_job_uses_the_hub_over_http(api, hub, token, repo):
    """What a real Job does: its own huggingface_hub, pointed at the Hub by HF_ENDPOINT, with HF_TOKEN a secret."""
    script = ("import sys\nfrom huggingface_hub import CommitOperationAdd, HfApi\n"
              f"HfApi().create_commit({repo!r}, repo_type='dataset', commit_message='from a Job',"
              " operations=[CommitOperationAdd('job/out.txt', b'done')])\nprint('committed')")
    job = api.run_job(image="python:3.12", command=python(script), namespace=USER,
                      env={"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0"}, secrets={"HF_TOKEN": token})
    done = wait_stage(api, job.id, timeout=20)
    assert done.status.stage == "COMPLETED", hub.job_logs(job.id)
    assert hub.files(repo)["job/out.txt"] == b"done" and hub.commits[repo] == 1
    assert token not in repr(hub.jobs) and token not in "\n".join(hub.job_logs(job.id))
