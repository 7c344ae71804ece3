"""Git LFS and the read budgets of the loopback Hub (tests/hub_lfs.py, tests/hub_limits.py), driven by the REAL
`huggingface_hub` client: LFS files go through preupload, the batch endpoint, the storage's upload and a commit's
`lfsFile` lines, come back through /resolve/'s 302 to the storage, and the Hub's refusals hold; over a read budget
the Hub's 429 carries the RateLimit headers the client reads and waits out (paginated calls) or raises.

tests/conftest.py sets HF_HUB_DISABLE_XET=1, so the client takes the Git LFS path rather than Xet, which the
loopback Hub does not serve.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import uuid

import pytest
from huggingface_hub import HfApi, hf_hub_url
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import get_session, parse_ratelimit_headers

from tests.test_hub_http import ORG, commit


@pytest.fixture
def repo(api):
    repo_id = f"{ORG}/lfs-{uuid.uuid4().hex[:8]}"
    api.create_repo(repo_id, repo_type="dataset")
    return repo_id


def test_lfs_files_go_through_the_batch_endpoint_and_the_storage(api, hub, repo, tmp_path):
    data = b"PAR1" + os.urandom(3000) + b"PAR1"
    sha = hashlib.sha256(data).hexdigest()
    storage_before, start = hub.calls_by_bucket()["storage"], len(hub.requests)
    head = commit(api, repo, {"data/train.parquet": data, "blob.bin": b"\0\1" * 50, "notes.txt": b"hi"}).oid
    assert ("POST", f"/datasets/{repo}.git/info/lfs/objects/batch") in hub.requests[start:]
    assert ("PUT", f"/lfs-storage/upload/{sha}") in hub.requests[start:]
    assert hub.files(repo)["data/train.parquet"] == data
    assert hub.lfs_paths(repo) == {"data/train.parquet", "blob.bin"}  # *.parquet is tracked; blob.bin is binary
    assert hub.files(repo)[".gitattributes"].endswith(b"blob.bin filter=lfs diff=lfs merge=lfs -text\n")
    [entry] = api.get_paths_info(repo, ["data/train.parquet"], repo_type="dataset")
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(data)}\n".encode()
    assert (entry.lfs.sha256, entry.lfs.pointer_size, entry.size) == (sha, len(pointer), len(data))
    assert entry.blob_id == hashlib.sha1(b"blob %d\0" % len(pointer) + pointer).hexdigest()

    path = api.hf_hub_download(repo, "data/train.parquet", repo_type="dataset", cache_dir=tmp_path)
    assert open(path, "rb").read() == data
    url = hf_hub_url(repo, "data/train.parquet", repo_type="dataset", endpoint=hub.url)
    moved = get_session().head(url, follow_redirects=False)
    assert moved.status_code == 302 and moved.headers["Location"].startswith(hub.storage_url)
    assert (moved.headers["X-Linked-Etag"], moved.headers["X-Linked-Size"]) == (f'"{sha}"', str(len(data)))
    assert get_session().get(url, follow_redirects=True).content == data
    assert hub.calls_by_bucket()["storage"] > storage_before
    assert commit(api, repo, {"data/train.parquet": data}).oid == head and hub.commits[repo] == 1  # unchanged


def test_the_hub_refuses_what_is_not_lfs_as_it_should_be(api, hub, repo, token):
    auth = {"Authorization": f"Bearer {token}"}
    sample = {"sample": "UEFSMQ=="}
    modes = get_session().post(f"{hub.url}/api/datasets/{repo}/preupload/main", headers=auth, json={"files": [
        {"path": "a.parquet", "size": 4, **sample}, {"path": "big.txt", "size": 11 << 20, **sample},
        {"path": "empty.parquet", "size": 0, "sample": ""}, {"path": ".gitattributes", "size": 4, **sample}]}).json()
    assert [f["uploadMode"] for f in modes["files"]] == ["lfs", "lfs", "regular", "regular"]
    assert modes["files"][3]["oid"] == hashlib.sha1(b"blob %d\0" % len(hub.files(repo)[".gitattributes"])
                                                    + hub.files(repo)[".gitattributes"]).hexdigest()

    def raw_commit(line: dict):
        body = "\n".join(json.dumps(item) for item in [{"key": "header", "value": {"summary": "raw"}}, line])
        return get_session().post(f"{hub.url}/api/datasets/{repo}/commit/main", content=body, headers=auth)

    regular = raw_commit({"key": "file", "value": {"path": "x.parquet", "content": "aGk=", "encoding": "base64"}})
    missing = raw_commit({"key": "lfsFile", "value": {"path": "y.bin", "algo": "sha256", "oid": "0" * 64}})
    assert regular.status_code == missing.status_code == 400 and hub.commits[repo] == 0
    assert "LFS" in regular.json()["error"] and "does not exist" in missing.json()["error"]

    stored = b"stored bytes"
    commit(api, repo, {"stored.parquet": stored})
    other = b"other bytes"
    objects = [{"oid": hashlib.sha256(stored).hexdigest(), "size": len(stored)},
               {"oid": hashlib.sha256(other).hexdigest(), "size": len(other)}]
    known, fresh = get_session().post(f"{hub.url}/datasets/{repo}.git/info/lfs/objects/batch", headers=auth,
                                      json={"operation": "upload", "objects": objects}).json()["objects"]
    assert "actions" not in known and fresh["actions"]["upload"]["href"].startswith(hub.storage_url)
    upload, verify = fresh["actions"]["upload"]["href"], fresh["actions"]["verify"]["href"]
    assert get_session().put(upload, content=b"not it").status_code == 400
    assert get_session().post(verify, json=fresh, headers=auth).status_code == 404
    assert get_session().put(upload, content=other).status_code == 200
    assert get_session().post(verify, json=fresh, headers=auth).status_code == 200
    anonymous = get_session().post(f"{hub.url}/datasets/{repo}.git/info/lfs/objects/batch",
                                   json={"operation": "upload", "objects": objects})
    assert anonymous.status_code == 401


@pytest.mark.slow  # waits out read budgets
def test_read_budgets_answer_429_with_ratelimit_headers(hub, repo):
    grace = HfApi(endpoint=hub.url, token=hub.issue_token("grace"))
    time.sleep(2.0 - time.time() % 2.0 + 0.05)  # the start of a fresh 2-second window
    hub.set_read_budget(api=3, window_seconds=2.0)
    try:
        served = hub.calls_by_bucket()
        for _ in range(3):
            grace.repo_info(repo, repo_type="dataset")
        with pytest.raises(HfHubHTTPError) as throttled:
            grace.repo_info(repo, repo_type="dataset")
        response = throttled.value.response
        info = parse_ratelimit_headers(response.headers)
        assert response.status_code == 429 and (info.resource_type, info.remaining, info.limit) == ("api", 0, 3)
        assert info.window_seconds == 2 and 1 <= info.reset_in_seconds <= 2
        assert response.headers["Retry-After"] == str(info.reset_in_seconds) and "error" in response.json()
        assert HfApi(endpoint=hub.url, token=False).repo_info(repo, repo_type="dataset").sha  # per caller
        started, limited = time.monotonic(), hub.rate_limited()["api"]
        assert [f.path for f in grace.list_repo_tree(repo, repo_type="dataset")] == [".gitattributes"]
        assert hub.rate_limited()["api"] == limited + 1 and time.monotonic() - started >= 1  # waited it out
        ok = get_session().get(f"{hub.url}/api/datasets/{repo}")
        assert parse_ratelimit_headers(ok.headers).remaining >= 0 and "RateLimit-Policy" in ok.headers
        get_session().head(hf_hub_url(repo, ".gitattributes", repo_type="dataset", endpoint=hub.url))
        counted = hub.calls_by_bucket() - served
        assert counted["api"] == 3 + 1 + 1 + 2 + 1 and counted["resolvers"] == 1
    finally:
        hub.set_read_budget()
