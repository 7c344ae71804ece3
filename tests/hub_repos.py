"""The loopback Hub's repos (used by tests/hub_server.py): a git-like history per repo, in memory and thread-safe,
and the JSON the Hub's repo endpoints answer. Nothing here speaks HTTP: `HubError` carries the status, the
`X-Error-Code` and extra headers the server turns into the Hub's error answer.

What it mirrors (huggingface_hub 2.4 reads exactly these fields):
- a repo is made with one commit holding `.gitattributes`; its only branch is `main`;
- a revision is `main` or a full commit oid, anything else is `RevisionNotFound`; a missing repo `RepoNotFound`,
  a missing file `EntryNotFound` (with `X-Repo-Commit`, which the client uses to cache the absence);
- a file's oid and ETag are its git blob sha1, so the client's own "unchanged file" check (preupload `oid` vs the
  local git hash) skips a commit whose additions are all unchanged and answers the head, as with the real Hub;
- a commit whose `parentCommit` is not the branch head is refused with 412;
- failures a test injects (`fail_next`) and a rolling commit budget per repo (`set_budget`) answer 429 with
  `Retry-After`, before the parent is checked.
"""
from __future__ import annotations

import base64
import hashlib
import math
import secrets
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime, timezone

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
BRANCH = "main"
QUOTA_MESSAGE = "You have exceeded our hourly quotas for action: commit. We invite you to retry later."
REPO_TYPES = ("model", "dataset", "space")


class HubError(Exception):
    """A Hub error answer: status, message (the JSON `error`), optional X-Error-Code and extra headers."""

    def __init__(self, status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.headers = status, message, code, dict(headers or {})


def iso_time(ts: float) -> str:
    """The Hub's timestamp format, e.g. 2025-07-22T16:06:31.079Z."""
    moment = datetime.fromtimestamp(ts, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Commit:
    oid: str
    files: dict[str, bytes]
    message: str
    parent: str | None
    at: float = field(default_factory=time.time)


class Repo:
    def __init__(self, repo_type: str, repo_id: str):
        self.repo_type, self.repo_id = repo_type, repo_id
        self.created_at = time.time()
        self.commits: dict[str, Commit] = {}
        self.head: str = ""
        self.add_commit({".gitattributes": GITATTRIBUTES}, "initial commit")

    def add_commit(self, files: dict[str, bytes], message: str) -> Commit:
        commit = Commit(secrets.token_hex(20), files, message, self.head or None)  # random: no stale client cache
        self.commits[commit.oid] = commit
        self.head = commit.oid
        return commit

    def at(self, revision: str | None) -> Commit:
        oid = self.head if revision in (None, "", BRANCH) else revision
        if oid not in self.commits:
            raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return self.commits[oid]


class CommitLimits:
    """Per-repo 429s: the next commit failing on demand, and a budget of N commits in a rolling window."""

    def __init__(self):
        self._next_failure: dict[str, HubError] = {}
        self._budgets: dict[str | None, tuple[int, float]] = {}  # repo (None: every repo) -> (max, window s)
        self._landed: dict[str, deque[float]] = {}

    def fail_next(self, repo_id: str, status: int, message: str, retry_after: float | None) -> None:
        headers = {"Retry-After": str(math.ceil(retry_after))} if retry_after is not None else {}
        self._next_failure[repo_id] = HubError(status, message, headers=headers)

    def set_budget(self, max_commits: int, window_seconds: float, repo_id: str | None = None) -> None:
        self._budgets[repo_id] = (max_commits, window_seconds)

    def check(self, repo_id: str, now: float) -> None:
        """Raise the injected failure, or a 429 when one more commit would go over the budget."""
        failure = self._next_failure.pop(repo_id, None)
        if failure is not None:
            raise failure
        budget = self._budgets.get(repo_id, self._budgets.get(None))
        if budget is None:
            return
        max_commits, window = budget
        landed = self._landed.setdefault(repo_id, deque())
        while landed and landed[0] <= now - window:
            landed.popleft()
        if len(landed) >= max_commits:
            wait = max(1, math.ceil(landed[0] + window - now))
            raise HubError(429, QUOTA_MESSAGE, headers={"Retry-After": str(wait)})

    def landed(self, repo_id: str, now: float) -> None:
        self._landed.setdefault(repo_id, deque()).append(now)


class RepoStore:
    """Every repo of the loopback Hub. Counters: `commits` (repo id -> commits landed, the initial one excluded),
    `rejected` (412s for a stale parent), `throttled` (429s)."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.commits: Counter = Counter()
        self.rejected: Counter = Counter()
        self.throttled: Counter = Counter()
        self.limits = CommitLimits()
        self._repos: dict[tuple[str, str], Repo] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------------------ helpers

    def url(self, repo_type: str, repo_id: str) -> str:
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        return f"{self.base_url}/{prefix}{repo_id}"

    def _repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = self._repos.get((repo_type, repo_id))
        if repo is None:
            raise HubError(404, "Repository not found", "RepoNotFound")
        return repo

    def snapshot(self, repo_type: str, repo_id: str, revision: str | None = None) -> Commit:
        """The commit at `revision` (default: the head); raises HubError like the endpoints."""
        with self._lock:
            return self._repo(repo_type, repo_id).at(revision)

    def fail_next(self, repo_id: str, status: int, message: str, retry_after: float | None) -> None:
        with self._lock:
            self.limits.fail_next(repo_id, status, message, retry_after)

    def set_budget(self, max_commits: int, window_seconds: float, repo_id: str | None = None) -> None:
        with self._lock:
            self.limits.set_budget(max_commits, window_seconds, repo_id)

    # ------------------------------------------------------------------------------------------------ endpoints

    def create(self, repo_type: str, repo_id: str) -> tuple[int, dict]:
        """POST /api/repos/create: 200, or 409 with the url when it exists (the client's exist_ok reads both)."""
        if repo_type not in REPO_TYPES:
            raise HubError(400, f"Invalid repo type: {repo_type}")
        url = self.url(repo_type, repo_id)
        with self._lock:
            if (repo_type, repo_id) in self._repos:
                return 409, {"error": f"You already created this {repo_type} repo", "url": url}
            self._repos[(repo_type, repo_id)] = Repo(repo_type, repo_id)
        return 200, {"url": url, "name": repo_id, "id": repo_id}

    def info(self, repo_type: str, repo_id: str, revision: str | None) -> dict:
        """GET /api/{type}s/{repo}[/revision/{rev}]."""
        with self._lock:
            repo = self._repo(repo_type, repo_id)
            commit = repo.at(revision)
            created = repo.created_at
        return {"_id": commit.oid[:24], "id": repo_id, "author": repo_id.split("/")[0], "sha": commit.oid,
                "lastModified": iso_time(commit.at), "createdAt": iso_time(created), "private": False,
                "gated": False, "disabled": False, "downloads": 0, "likes": 0, "tags": [],
                "siblings": [{"rfilename": path} for path in sorted(commit.files)]}

    def tree(self, repo_type: str, repo_id: str, revision: str | None, folder: str, recursive: bool) -> list[dict]:
        """GET /api/{type}s/{repo}/tree/{rev}[/{path}]: files and folders under `folder`."""
        files = self.snapshot(repo_type, repo_id, revision).files
        base = folder.strip("/")
        prefix = base + "/" if base else ""
        entries: dict[str, dict] = {}
        for path in sorted(files):
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix):].split("/")
            depth = len(parts) if recursive else 1
            for i in range(1, min(depth, len(parts) - 1) + 1):  # the folders on the way
                name = prefix + "/".join(parts[:i])
                entries.setdefault(name, {"type": "directory", "oid": hashlib.sha1(name.encode()).hexdigest(),
                                          "size": 0, "path": name})
            if recursive or len(parts) == 1:
                data = files[path]
                entries[path] = {"type": "file", "oid": git_blob_oid(data), "size": len(data), "path": path}
        if base and not entries:
            raise HubError(404, f"Entry not found: {base}", "EntryNotFound")
        return list(entries.values())

    def file(self, repo_type: str, repo_id: str, revision: str | None, path: str) -> tuple[str, bytes]:
        """/resolve/: (commit oid, bytes); a missing file is EntryNotFound carrying X-Repo-Commit."""
        commit = self.snapshot(repo_type, repo_id, revision)
        if path not in commit.files:
            raise HubError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": commit.oid})
        return commit.oid, commit.files[path]

    def preupload(self, repo_type: str, repo_id: str, revision: str | None, files: list[dict]) -> dict:
        """POST /api/{type}s/{repo}/preupload/{rev}: every file is "regular"; `oid` of the ones already there."""
        commit = self.snapshot(repo_type, repo_id, revision)
        answers = []
        for entry in files:
            answer = {"path": entry["path"], "uploadMode": "regular", "shouldIgnore": False}
            if entry["path"] in commit.files:
                answer["oid"] = git_blob_oid(commit.files[entry["path"]])
            answers.append(answer)
        return {"files": answers, "commitOid": commit.oid}

    def commit(self, repo_type: str, repo_id: str, revision: str | None, lines: list[dict]) -> dict:
        """POST /api/{type}s/{repo}/commit/{rev} with the client's NDJSON lines (header, file, deletedFile...)."""
        if revision not in (None, "", BRANCH):
            raise HubError(404, f"Invalid rev id: {revision} (the test Hub commits to {BRANCH} only)",
                           "RevisionNotFound")
        header, changes = _parse_commit(lines)
        now = time.monotonic()
        with self._lock:
            repo = self._repo(repo_type, repo_id)
            try:
                self.limits.check(repo_id, now)
            except HubError as exc:
                if exc.status == 429:
                    self.throttled[repo_id] += 1
                raise
            head = repo.commits[repo.head]
            if all(data is not None and head.files.get(path) == data for path, data in changes):
                return self._commit_answer(repo, head)  # nothing changed: the head, parent not checked
            parent = header.get("parentCommit")
            if parent is not None and parent != repo.head:
                self.rejected[repo_id] += 1
                raise HubError(412, "A commit has happened since. Please refresh and try again.")
            commit = repo.add_commit(_apply(head.files, changes), header.get("summary", ""))
            self.commits[repo_id] += 1
            self.limits.landed(repo_id, now)
            return self._commit_answer(repo, commit)

    def _commit_answer(self, repo: Repo, commit: Commit) -> dict:
        return {"success": True, "commitOid": commit.oid, "hookOutput": "",
                "commitUrl": f"{self.url(repo.repo_type, repo.repo_id)}/commit/{commit.oid}"}


def _parse_commit(lines: list[dict]) -> tuple[dict, list[tuple[str, bytes | None]]]:
    """(header value, [(path, bytes or None for a deletion; a folder deletion ends with "/")])."""
    header: dict = {}
    changes: list[tuple[str, bytes | None]] = []
    for line in lines:
        key, value = line.get("key"), line.get("value") or {}
        if key == "header":
            header = value
        elif key == "file":
            if value.get("encoding") != "base64":
                raise HubError(400, f"unsupported encoding {value.get('encoding')!r}")
            changes.append((value["path"], base64.b64decode(value["content"])))
        elif key == "deletedFile":
            changes.append((value["path"], None))
        elif key == "deletedFolder":
            changes.append((value["path"].rstrip("/") + "/", None))
        else:
            raise HubError(400, f"the test Hub does not support {key!r} commit operations (LFS or copies)")
    if not header.get("summary"):
        raise HubError(400, "A commit summary is required")
    return header, changes


def _apply(files: dict[str, bytes], changes: list[tuple[str, bytes | None]]) -> dict[str, bytes]:
    result = dict(files)
    for path, data in changes:
        if data is not None:
            result[path] = data
        elif path.endswith("/"):
            inside = [name for name in result if name.startswith(path)]
            if not inside:
                raise HubError(404, "A folder with this name doesn't exist", "EntryNotFound")
            for name in inside:
                del result[name]
        elif path in result:
            del result[path]
        else:
            raise HubError(404, "A file with this name doesn't exist", "EntryNotFound")
    return result
