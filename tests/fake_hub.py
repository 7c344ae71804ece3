"""An in-process fake of the few HfApi calls the Hub store makes (the Hub itself is the edge tests cannot reach).

Each repo keeps its history (commit oid -> {path: bytes}) and a head. Errors are the ones the real client raises:
they are produced by huggingface_hub's own `hf_raise_for_status` on a response shaped like the Hub's, so a commit
whose `parent_commit` is not the head raises an `HfHubHTTPError` with status 412, a missing file a
`RemoteEntryNotFoundError` (404, X-Error-Code EntryNotFound), a missing repo a `RepositoryNotFoundError` and a
missing revision a `RevisionNotFoundError`. Like the real `create_commit`, a commit whose additions are all
unchanged is skipped and answered with the head (without checking `parent_commit`).
"""
from __future__ import annotations

import hashlib
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx2
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, constants
from huggingface_hub.hf_api import CommitInfo, DatasetInfo, ModelInfo
from huggingface_hub.utils import hf_raise_for_status

ENDPOINT = "https://huggingface.co"


def _prefix(repo_type: str | None) -> str:
    return "" if repo_type in (None, "model") else f"{repo_type}s/"


def raise_like_the_hub(status: int, url: str, *, method: str = "GET", error_code: str | None = None,
                       message: str = "", endpoint_name: str | None = None) -> None:
    """Raise what huggingface_hub raises for this Hub answer."""
    headers = {"X-Error-Code": error_code} if error_code else {}
    response = httpx2.Response(status, headers=headers, json={"error": message} if message else {},
                               request=httpx2.Request(method, url))
    hf_raise_for_status(response, endpoint_name=endpoint_name)
    raise AssertionError(f"status {status} did not raise")  # pragma: no cover


class _Repo:
    def __init__(self):
        self.commits: dict[str, dict[str, bytes]] = {}
        self.head: str | None = None


class FakeHfApi:
    """repo_info, list_repo_files, hf_hub_download, create_commit and create_repo, in memory and thread-safe.

    Counters for tests: `calls` (method name -> count), `commits` (repo -> commits made, the initial one excluded),
    `rejected` (commits refused because parent_commit was not the head). `commit_latency` seconds are spent in
    every create_commit before the parent is checked, like the round trip to the Hub, so concurrent writers overlap.
    `fail_next(method, status, message)` makes the next call of `method` fail with that Hub answer.
    """

    def __init__(self, token: str | None = None, root: Path | None = None, commit_latency: float = 0.0):
        self.token = token
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="fake-hub-"))
        self.commit_latency = commit_latency
        self.calls: Counter = Counter()
        self.commits: Counter = Counter()
        self.rejected = 0
        self._repos: dict[tuple[str, str], _Repo] = {}
        self._failures: dict[str, tuple[int, str]] = {}
        self._serial = 0
        self._lock = threading.Lock()

    # -------------------------------------------------------------------------------------------- test helpers

    def fail_next(self, method: str, status: int, message: str = "") -> None:
        with self._lock:
            self._failures[method] = (status, message)

    def files(self, repo_id: str, repo_type: str = "dataset", revision: str | None = None) -> dict[str, bytes]:
        """The files of a repo at a revision (default: the head), for assertions."""
        with self._lock:
            repo = self._repos[(repo_type, repo_id)]
            return dict(repo.commits[revision or repo.head])

    def _begin(self, method: str, url: str, http_method: str = "GET") -> None:
        self.calls[method] += 1
        failure = self._failures.pop(method, None)
        if failure:
            raise_like_the_hub(failure[0], url, method=http_method, message=failure[1])

    def _repo(self, repo_id: str, repo_type: str | None, url: str, method: str = "GET") -> _Repo:
        repo = self._repos.get((repo_type or "model", repo_id))
        if repo is None:
            raise_like_the_hub(404, url, method=method, error_code="RepoNotFound", message="Repository not found")
        return repo

    def _at(self, repo: _Repo, revision: str | None, url: str) -> tuple[str, dict[str, bytes]]:
        oid = repo.head if revision in (None, constants.DEFAULT_REVISION) else revision
        if oid not in repo.commits:
            raise_like_the_hub(404, url, error_code="RevisionNotFound", message=f"Invalid rev id: {revision}")
        return oid, repo.commits[oid]

    def _new_commit(self, repo: _Repo, files: dict[str, bytes]) -> str:
        self._serial += 1
        oid = hashlib.sha1(f"{self._serial}:{id(repo)}:{sorted(files)}".encode()).hexdigest()
        repo.commits[oid] = files
        repo.head = oid
        return oid

    # -------------------------------------------------------------------------------------------- HfApi calls

    def create_repo(self, repo_id: str, *, repo_type: str | None = None, exist_ok: bool = False, **_):
        url = f"{ENDPOINT}/api/repos/create"
        with self._lock:
            self._begin("create_repo", url, "POST")
            key = (repo_type or "model", repo_id)
            if key in self._repos:
                if not exist_ok:
                    raise_like_the_hub(409, url, method="POST", message="You already created this dataset repo")
            else:
                repo = self._repos[key] = _Repo()
                self._new_commit(repo, {".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"})
        return f"{ENDPOINT}/{_prefix(repo_type)}{repo_id}"

    def repo_info(self, repo_id: str, *, repo_type: str | None = None, revision: str | None = None, **_):
        url = f"{ENDPOINT}/api/{_prefix(repo_type) or 'models/'}{repo_id}"
        with self._lock:
            self._begin("repo_info", url)
            oid, _files = self._at(self._repo(repo_id, repo_type, url), revision, url)
        info = DatasetInfo if repo_type == "dataset" else ModelInfo
        return info(id=repo_id, sha=oid)

    def list_repo_files(self, repo_id: str, *, revision: str | None = None, repo_type: str | None = None,
                        **_) -> list[str]:
        url = f"{ENDPOINT}/api/{_prefix(repo_type) or 'models/'}{repo_id}/tree/{revision or 'main'}"
        with self._lock:
            self._begin("list_repo_files", url)
            _oid, files = self._at(self._repo(repo_id, repo_type, url), revision, url)
            return list(files)

    def hf_hub_download(self, repo_id: str, filename: str, *, repo_type: str | None = None,
                        revision: str | None = None, **_) -> str:
        url = f"{ENDPOINT}/{_prefix(repo_type)}{repo_id}/resolve/{revision or 'main'}/{filename}"
        with self._lock:
            self._begin("hf_hub_download", url, "HEAD")
            oid, files = self._at(self._repo(repo_id, repo_type, url), revision, url)
            if filename not in files:
                raise_like_the_hub(404, url, method="HEAD", error_code="EntryNotFound", message="Entry not found")
            target = self.root / (repo_type or "model") / repo_id / oid / filename
            if not target.exists():  # a file at a commit never changes: write it once, like the cache
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f".tmp-{target.name}")
                tmp.write_bytes(files[filename])
                tmp.replace(target)
            return str(target)

    def create_commit(self, repo_id: str, operations, *, commit_message: str, repo_type: str | None = None,
                      revision: str | None = None, parent_commit: str | None = None, **_) -> CommitInfo:
        url = f"{ENDPOINT}/api/{_prefix(repo_type) or 'models/'}{repo_id}/commit/{revision or 'main'}"
        if parent_commit is not None and not constants.REGEX_COMMIT_OID.fullmatch(parent_commit):
            raise ValueError("`parent_commit` is not a valid commit OID.")
        if not commit_message:
            raise ValueError("`commit_message` can't be empty, please pass a value.")
        contents = []
        for op in operations:
            if isinstance(op, CommitOperationAdd):
                with op.as_file() as handle:
                    contents.append((op.path_in_repo, handle.read()))
            elif isinstance(op, CommitOperationDelete):
                contents.append((op.path_in_repo, None))
            else:
                raise TypeError(f"the fake Hub does not support {type(op).__name__}")
        if self.commit_latency:
            time.sleep(self.commit_latency)  # the upload's round trip, outside the lock: writers overlap here
        with self._lock:
            self._begin("create_commit", url, "POST")
            repo = self._repo(repo_id, repo_type, url, "POST")
            head_files = repo.commits[repo.head]
            if all(data is not None and head_files.get(path) == data for path, data in contents):
                oid = repo.head  # nothing changed: the real client skips the commit and answers with the head
            else:
                if parent_commit is not None and parent_commit != repo.head:
                    self.rejected += 1
                    raise_like_the_hub(412, url, method="POST", endpoint_name="commit",
                                       message="A commit has happened since. Please refresh and try again.")
                files = dict(head_files)
                for path, data in contents:
                    if data is None:
                        if path not in files:
                            raise_like_the_hub(404, url, method="POST", error_code="EntryNotFound",
                                               message="A file with this name doesn't exist")
                        del files[path]
                    else:
                        files[path] = data
                oid = self._new_commit(repo, files)
                self.commits[repo_id] += 1
        return CommitInfo(commit_url=f"{ENDPOINT}/{_prefix(repo_type)}{repo_id}/commit/{oid}",
                          commit_message=commit_message, commit_description="", oid=oid)
