"""The loopback Hub's repos (used by tests/hub_server.py): a git-like history per repo, in memory and thread-safe,
and the JSON the Hub's repo endpoints answer. Nothing here speaks HTTP: `HubError` (tests/hub_http.py) carries the
status, the `X-Error-Code` and extra headers the server turns into the Hub's error answer.

What it mirrors (huggingface_hub 2.4 reads exactly these fields):
- a repo is made with one commit holding `.gitattributes` (authored by "system"); its only branch is `main`;
- a revision is `main` (or `refs/heads/main`), a pull request's `refs/pr/N` (tests/hub_discussions.py) or a full
  commit oid, anything else is `RevisionNotFound`; a missing repo `RepoNotFound`,
  a missing file `EntryNotFound` (with `X-Repo-Commit`, which the client uses to cache the absence);
- repo info answers only the `expand`ed properties (plus `_id` and `id`) when asked; an unknown one is a 400;
- a regular file's oid and ETag are its git blob sha1; an LFS file's (tests/hub_lfs.py) are the blob sha1 of its
  pointer, with `lfs: {oid: sha256, size, pointerSize}`. Preupload answers the `oid` of an existing file as the
  client computes its own (sha256 for LFS, blob sha1 otherwise), so the client's "unchanged file" check skips a
  commit whose additions are all unchanged and answers the head, as with the real Hub;
- a commit whose `parentCommit` is not the branch head is refused with 412; each commit records its author (the
  token's user), its title (the header's summary) and message (its description);
- the commit listing is newest first, with the branch's length; a super-squash makes the branch one new commit
  holding the head's files, and the older oids stop resolving (but those a pull request's ref reaches);
- each repo has its access settings (tests/hub_access.py) and its discussions (tests/hub_discussions.py), changed
  under the store's lock (`locked`);
- failures a test injects (`fail_next`) and a rolling commit budget per repo (`set_budget`, tests/hub_limits.py)
  answer 429 with `Retry-After`, before the parent is checked.
"""
from __future__ import annotations

import base64
import hashlib
import html
import secrets
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterator

from tests.hub_access import Access
from tests.hub_http import HubError
from tests.hub_lfs import (NOT_REGULAR, LfsLine, LfsStorage, blob_entry, git_blob_oid, gitattributes_with, lfs_patterns,
                           must_be_lfs, sha256_hex, upload_mode)
from tests.hub_limits import QUOTA_MESSAGE, CommitLimits

__all__ = ["BRANCH", "QUOTA_MESSAGE", "Commit", "HubError", "RepoStore", "git_blob_oid", "iso_time"]  # + re-exports

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
BRANCH = "main"
SYSTEM = "system"  # the author of a repo's initial commit
REPO_TYPES = ("model", "dataset", "space")
_COMMON = "author cardData createdAt disabled lastModified likes private resourceGroup sha siblings tags " \
          "trendingScore usedStorage"
EXPANDABLE = {  # the `expand` properties the Hub knows (huggingface_hub's Expand*Property_T)
    "model": set(f"{_COMMON} baseModels childrenModelCount config downloads downloadsAllTime evalResults gated gguf "
                 "inference inferenceProviderMapping library_name mask_token model-index pipeline_tag safetensors "
                 "spaces transformersInfo widgetData".split()),
    "dataset": set(f"{_COMMON} citation description downloads downloadsAllTime gated mainSize "
                   "paperswithcode_id".split()),
    "space": set(f"{_COMMON} datasets models region runtime sdk subdomain".split()),
}
_DEFAULT_INFO = ("_id", "id", "author", "sha", "lastModified", "createdAt", "private", "gated", "disabled",
                 "downloads", "likes", "tags", "siblings")


def iso_time(ts: float) -> str:
    """The Hub's timestamp format, e.g. 2025-07-22T16:06:31.079Z."""
    moment = datetime.fromtimestamp(ts, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class Commit:
    oid: str
    files: dict[str, bytes]  # path -> the file's real bytes (an LFS file's content, not its pointer)
    message: str  # the title: the commit header's summary
    parent: str | None
    at: float = field(default_factory=time.time)
    lfs: frozenset[str] = frozenset()  # the paths stored with Git LFS
    author: str = SYSTEM
    description: str = ""


class Repo:
    def __init__(self, repo_type: str, repo_id: str, access: Access = Access()):
        self.repo_type, self.repo_id = repo_type, repo_id
        self.created_at = time.time()
        self.commits: dict[str, Commit] = {}
        self.head: str = ""
        self.refs: dict[str, str] = {}  # a pull request's ref ("refs/pr/N") -> its commit
        self.discussions: list = []  # tests/hub_discussions.py's Discussion, by number - 1
        self.access = access  # who may see it, open pull requests (tests/hub_access.py)
        self.add_commit({".gitattributes": GITATTRIBUTES}, "initial commit")

    def add_commit(self, files: dict[str, bytes], message: str, lfs: frozenset[str] = frozenset(),
                   author: str = SYSTEM, description: str = "", ref: str | None = None,
                   parent: str | None = None) -> Commit:
        """A commit on the branch, or (`ref`) a pull request's commit on `parent`, the branch unchanged."""
        commit = Commit(secrets.token_hex(20), files, message, parent if ref else self.head or None,  # random oids:
                        lfs=frozenset(lfs), author=author, description=description)  # no stale client cache
        self.commits[commit.oid] = commit
        if ref:
            self.refs[ref] = commit.oid
        else:
            self.head = commit.oid
        return commit

    def at(self, revision: str | None) -> Commit:
        oid = self.head if revision in (None, "", BRANCH, f"refs/heads/{BRANCH}") else self.refs.get(revision, revision)
        if oid not in self.commits:
            raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return self.commits[oid]

    def history(self, revision: str | None) -> list[Commit]:
        """The commits reachable from `revision`, newest first."""
        commits, commit = [], self.at(revision)
        while commit is not None:
            commits.append(commit)
            commit = self.commits.get(commit.parent) if commit.parent else None
        return commits

    def squash(self, message: str, author: str) -> Commit:
        head = self.commits[self.head]
        commit = Commit(secrets.token_hex(20), dict(head.files), message, None, lfs=head.lfs, author=author)
        kept = {old.oid: old for ref in self.refs.values() for old in self.history(ref)}
        self.commits, self.head = {**kept, commit.oid: commit}, commit.oid
        return commit


def file_entry(commit: Commit, path: str) -> dict:
    return blob_entry(path, commit.files[path], path in commit.lfs)


def folder_entry(path: str) -> dict:
    return {"type": "directory", "oid": hashlib.sha1(path.encode()).hexdigest(), "size": 0, "path": path}


def changed_paths(commit: Commit, parent: Commit | None) -> set[str]:
    """The paths a commit added, changed or removed."""
    if parent is None:
        return set(commit.files)
    paths = set(commit.files) | set(parent.files)
    return {p for p in paths if commit.files.get(p) != parent.files.get(p) or (p in commit.lfs) != (p in parent.lfs)}


class RepoStore:
    """Every repo of the loopback Hub, and the LFS objects (`storage`). Counters: `commits` (repo id -> commits
    landed, the initial one excluded), `squashes`, `rejected` (412s for a stale parent), `throttled` (429s)."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.commits: Counter = Counter()
        self.squashes: Counter = Counter()
        self.rejected: Counter = Counter()
        self.throttled: Counter = Counter()
        self.limits = CommitLimits()
        self.storage = LfsStorage()
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

    @contextmanager
    def locked(self, repo_type: str, repo_id: str) -> Iterator[Repo]:
        """The repo, with the store's lock held (404 when there is none)."""
        with self._lock:
            yield self._repo(repo_type, repo_id)

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

    # ------------------------------------------------------------------------------------------------ reading

    def create(self, repo_type: str, repo_id: str, private: bool = False) -> tuple[int, dict]:
        """POST /api/repos/create: 200, or 409 with the url when it exists (the client's exist_ok reads both)."""
        if repo_type not in REPO_TYPES:
            raise HubError(400, f"Invalid repo type: {repo_type}")
        url = self.url(repo_type, repo_id)
        with self._lock:
            if (repo_type, repo_id) in self._repos:
                return 409, {"error": f"You already created this {repo_type} repo", "url": url}
            self._repos[(repo_type, repo_id)] = Repo(repo_type, repo_id, Access(private=bool(private)))
        return 200, {"url": url, "name": repo_id, "id": repo_id}

    def info(self, repo_type: str, repo_id: str, revision: str | None, expand: list[str] | None = None) -> dict:
        """GET /api/{type}s/{repo}[/revision/{rev}][?expand=...]."""
        unknown = sorted(set(expand or ()) - EXPANDABLE[repo_type])
        if unknown:
            raise HubError(400, f'"expand" must be among the {repo_type} properties '
                                f'{sorted(EXPANDABLE[repo_type])}; got {unknown}')
        with self._lock:
            repo = self._repo(repo_type, repo_id)
            commit = repo.at(revision)
            created, access = repo.created_at, repo.access
        full = {"_id": commit.oid[:24], "id": repo_id, "author": repo_id.split("/")[0], "sha": commit.oid,
                "lastModified": iso_time(commit.at), "createdAt": iso_time(created), "private": access.private,
                "gated": access.gated, "disabled": False, "downloads": 0, "downloadsAllTime": 0, "likes": 0,
                "trendingScore": 0, "tags": [], "siblings": [{"rfilename": path} for path in sorted(commit.files)],
                "usedStorage": sum(len(data) for data in commit.files.values())}
        keys = ["_id", "id", *expand] if expand else _DEFAULT_INFO
        return {key: full[key] for key in keys if key in full}

    def tree(self, repo_type: str, repo_id: str, revision: str | None, folder: str, recursive: bool) -> list[dict]:
        """GET /api/{type}s/{repo}/tree/{rev}[/{path}]: files and folders under `folder` (every one; the endpoint
        pages them)."""
        commit = self.snapshot(repo_type, repo_id, revision)
        base = folder.strip("/")
        prefix = base + "/" if base else ""
        entries: dict[str, dict] = {}
        for path in sorted(commit.files):
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix):].split("/")
            depth = len(parts) if recursive else 1
            for i in range(1, min(depth, len(parts) - 1) + 1):  # the folders on the way
                name = prefix + "/".join(parts[:i])
                entries.setdefault(name, folder_entry(name))
            if recursive or len(parts) == 1:
                entries[path] = file_entry(commit, path)
        if base and not entries:
            raise HubError(404, f"Entry not found: {base}", "EntryNotFound")
        return list(entries.values())

    def paths_info(self, repo_type: str, repo_id: str, revision: str | None, paths: list[str]) -> list[dict]:
        """POST /api/{type}s/{repo}/paths-info/{rev}: the entries of the paths that exist (files or folders)."""
        commit = self.snapshot(repo_type, repo_id, revision)
        folders = {name.rsplit("/", i)[0] for name in commit.files for i in range(1, name.count("/") + 1)}
        entries = []
        for path in dict.fromkeys(p.strip("/") for p in paths):
            if path in commit.files:
                entries.append(file_entry(commit, path))
            elif path in folders:
                entries.append(folder_entry(path))
        return entries

    def with_last_commits(self, repo_type: str, repo_id: str, revision: str | None, entries: list[dict]) -> list:
        """`entries` with `lastCommit` ({id, title, date}: the newest commit that changed the file, or something in
        the folder), what the Hub adds with `expand=true`."""
        with self._lock:
            history = self._repo(repo_type, repo_id).history(revision)
        pending = {entry["path"]: entry for entry in entries}
        for commit, parent in zip(history, history[1:] + [None]):
            changed = changed_paths(commit, parent)
            for path in [p for p in pending if any(c == p or c.startswith(p + "/") for c in changed)]:
                pending.pop(path)["lastCommit"] = {"id": commit.oid, "title": commit.message,
                                                   "date": iso_time(commit.at)}
            if not pending:
                break
        return entries

    def history(self, repo_type: str, repo_id: str, revision: str | None, page: int, limit: int,
                formatted: bool = False) -> tuple[list[dict], int]:
        """GET /api/{type}s/{repo}/commits/{rev}: one page of commits, newest first, and how many there are."""
        with self._lock:
            commits = self._repo(repo_type, repo_id).history(revision)
        items = []
        for commit in commits[page * limit:(page + 1) * limit]:
            item = {"id": commit.oid, "title": commit.message, "message": commit.description,
                    "authors": [{"user": commit.author, "avatar": None}], "date": iso_time(commit.at)}
            if formatted:
                item["formatted"] = {"title": html.escape(commit.message), "message": html.escape(commit.description)}
            items.append(item)
        return items, len(commits)

    def file(self, repo_type: str, repo_id: str, revision: str | None, path: str) -> tuple[str, bytes, bool]:
        """/resolve/: (commit oid, bytes, stored with LFS); a missing file is EntryNotFound carrying X-Repo-Commit."""
        commit = self.snapshot(repo_type, repo_id, revision)
        if path not in commit.files:
            raise HubError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": commit.oid})
        return commit.oid, commit.files[path], path in commit.lfs

    # ------------------------------------------------------------------------------------------------ writing

    def preupload(self, repo_type: str, repo_id: str, revision: str | None, files: list[dict]) -> dict:
        """POST /api/{type}s/{repo}/preupload/{rev}: "lfs" or "regular" for each file (tests/hub_lfs.py), and the
        `oid` of the ones already there, of the kind the client compares it with."""
        commit = self.snapshot(repo_type, repo_id, revision)
        patterns = lfs_patterns(commit.files.get(".gitattributes"))
        answers = []
        for entry in files:
            path, size = entry.get("path"), entry.get("size")
            if not isinstance(path, str) or not isinstance(size, int):
                raise HubError(400, "each file needs a `path` and a `size`")
            sample = base64.b64decode(entry.get("sample") or "")
            answer = {"path": path, "uploadMode": upload_mode(path, size, sample, patterns), "shouldIgnore": False}
            if path in commit.files:
                data = commit.files[path]
                answer["oid"] = sha256_hex(data) if path in commit.lfs else git_blob_oid(data)
            answers.append(answer)
        return {"files": answers, "commitOid": commit.oid}

    def commit(self, repo_type: str, repo_id: str, revision: str | None, header: dict,
               lines: list[tuple[str, bytes | LfsLine | None]], author: str = SYSTEM) -> dict:
        """POST /api/{type}s/{repo}/commit/{rev}: the header's value and the changes of the NDJSON lines
        ([(path, bytes, an LfsLine, or None for a deletion; a folder's ends with "/")]), by `author`."""
        if revision not in (None, "", BRANCH):
            raise HubError(404, f"Invalid rev id: {revision} (the test Hub commits to {BRANCH} only)",
                           "RevisionNotFound")
        now = time.monotonic()
        with self._lock:
            repo = self._repo(repo_type, repo_id)
            head = repo.commits[repo.head]
            changes = self.resolve_lines(lines, lfs_patterns(head.files.get(".gitattributes")))
            self.take_quota(repo_id, now)
            if all(data is not None and head.files.get(path) == data and (path in head.lfs) == lfs
                   for path, data, lfs in changes):
                return self._commit_answer(repo, head)  # nothing changed: the head, parent not checked
            parent = header.get("parentCommit")
            if parent is not None and parent != repo.head:
                self.rejected[repo_id] += 1
                raise HubError(412, "A commit has happened since. Please refresh and try again.")
            files, lfs = apply_changes(head.files, head.lfs, changes)
            commit = repo.add_commit(files, header.get("summary", ""), lfs, author, header.get("description") or "")
            self.landed(repo_id, now)
            return self._commit_answer(repo, commit)

    def take_quota(self, repo_id: str, now: float) -> None:
        """Before a commit (the lock held): an injected failure, or a 429 over the commit budget."""
        try:
            self.limits.check(repo_id, now)
        except HubError as exc:
            if exc.status == 429:
                self.throttled[repo_id] += 1
            raise

    def landed(self, repo_id: str, now: float, on_branch: bool = True) -> None:
        """A commit made (the lock held): counted in the budget, and in `commits` when on the branch."""
        self.limits.landed(repo_id, now)
        if on_branch:
            self.commits[repo_id] += 1

    def resolve_lines(self, lines: list[tuple[str, bytes | LfsLine | None]],
                      patterns: list[str]) -> list[tuple[str, bytes | None, bool]]:
        """(path, bytes or None for a deletion, stored with LFS): LFS objects looked up, regular files checked."""
        changes = []
        for path, value in lines:
            if isinstance(value, LfsLine):
                changes.append((path, self.storage.resolve(value.oid, value.size, path), True))
            elif value is not None and must_be_lfs(path, value, patterns):
                raise HubError(400, NOT_REGULAR.format(path=path))
            else:
                changes.append((path, value, False))
        return changes

    def squash(self, repo_type: str, repo_id: str, branch: str, message: str, author: str) -> Commit:
        """POST /api/{type}s/{repo}/super-squash/{branch}: the branch becomes one commit holding the head's files."""
        if branch != BRANCH:
            raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
        with self._lock:
            commit = self._repo(repo_type, repo_id).squash(message, author)
            self.squashes[repo_id] += 1
        return commit

    def _commit_answer(self, repo: Repo, commit: Commit) -> dict:
        return {"success": True, "commitOid": commit.oid, "hookOutput": "",
                "commitUrl": f"{self.url(repo.repo_type, repo.repo_id)}/commit/{commit.oid}"}


def apply_changes(files: dict[str, bytes], lfs: frozenset[str],
                  changes: list[tuple[str, bytes | None, bool]]) -> tuple[dict[str, bytes], frozenset[str]]:
    result, stored = dict(files), set(lfs)
    for path, data, is_lfs in changes:
        if data is not None:
            result[path] = data
            (stored.add if is_lfs else stored.discard)(path)
        elif path.endswith("/"):
            inside = [name for name in result if name.startswith(path)]
            if not inside:
                raise HubError(404, "A folder with this name doesn't exist", "EntryNotFound")
            for name in inside:
                del result[name]
                stored.discard(name)
        elif path in result:
            del result[path]
            stored.discard(path)
        else:
            raise HubError(404, "A file with this name doesn't exist", "EntryNotFound")
    added = [path for path, data, is_lfs in changes if data is not None and is_lfs]
    if added and ".gitattributes" not in stored:  # the Hub tracks an LFS file no pattern covers
        result[".gitattributes"] = gitattributes_with(result.get(".gitattributes", b""), added)
    return result, frozenset(stored)
