"""The few Hub calls the Hub store makes, through huggingface_hub's own client and HTTP session (its endpoint, token,
offline switch and retries): a repo's head commit, a folder's files, a few paths' files, one file's bytes in memory
(no copy in the Hub cache on disk), the newest commits of the history with the branch's length, a commit, and a
squash of the history.

A failure becomes HubStoreError, whose message never holds the token; a 429 becomes RateLimited with the seconds the
Hub asks to wait (its RateLimit header, else Retry-After). A missing file or folder is not an error (None, or no
files).
"""
from __future__ import annotations

from datetime import datetime
from typing import Callable

from huggingface_hub import hf_hub_url
from huggingface_hub.errors import RemoteEntryNotFoundError, RevisionNotFoundError
from huggingface_hub.utils import (build_hf_headers, get_session, hf_raise_for_status, http_backoff,
                                   parse_ratelimit_headers)

from evaluator.api import redact
from leaderboard.store.hub_picture import ROOT, Entry
from leaderboard.store.interface import HistoryGone

DEFAULT_RETRY_AFTER, MAX_RETRY_AFTER = 60.0, 3600.0  # seconds: a 429 without a usable header, and the longest wait
HISTORY_LIMIT_MAX = 1000  # the most commits the Hub lists in one page


class HubStoreError(OSError):
    """A Hub call failed for a reason other than "no such file" or a lost race. The message never holds the token."""

    def __init__(self, message: str, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code


class RevisionGone(HubStoreError, HistoryGone):
    """The commit a read was made at is no longer in the repo (its history was squashed meanwhile)."""


class RateLimited(HubStoreError):
    """The Hub answered 429: `retry_after` seconds to wait (within [1 s, an hour])."""

    def __init__(self, message: str, retry_after: float):
        super().__init__(message, 429)
        self.retry_after = retry_after


def status_of(exc: BaseException) -> int | None:
    return getattr(getattr(exc, "response", None), "status_code", None)


def retry_after(exc: BaseException) -> float:
    """Seconds a 429 asks to wait: its RateLimit header's reset, else Retry-After, else DEFAULT_RETRY_AFTER."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    info = parse_ratelimit_headers(headers)
    try:
        seconds = float(info.reset_in_seconds if info is not None else headers.get("Retry-After"))
    except (TypeError, ValueError):
        seconds = DEFAULT_RETRY_AFTER
    return min(max(seconds, 1.0), MAX_RETRY_AFTER)


def _entry(item) -> Entry:
    """A tree or paths-info item of huggingface_hub (RepoFile) as an Entry."""
    return Entry(item.blob_id, int(item.size or 0), item.lfs is not None)


class HubCalls:
    """The store's calls to the Hub for repos of `repo_type`, on `api` (huggingface_hub.HfApi: its endpoint and
    token). `scrub` removes secrets from a message."""

    def __init__(self, api, repo_type: str = "dataset", scrub: Callable[[str], str] | None = None):
        self.api, self.repo_type = api, repo_type
        self.scrub = scrub or (lambda text: redact(text, getattr(api, "token", None)))

    def error(self, action: str, repo: str, what: str, exc: BaseException) -> HubStoreError:
        detail = self.scrub(f"{type(exc).__name__}: {exc}")
        message = f"Hub store could not {action} {what} in {self.repo_type} repo {repo}: {detail}"
        if status_of(exc) == 429:
            return RateLimited(message, retry_after(exc))
        if isinstance(exc, RevisionNotFoundError):
            return RevisionGone(message, 404)
        return HubStoreError(message, status_of(exc))

    def _call(self, action: str, repo: str, what: str, call):
        try:
            return call()
        except HubStoreError:
            raise
        except Exception as exc:
            raise self.error(action, repo, what, exc) from None

    @property
    def _headers(self) -> dict[str, str]:
        return build_hf_headers(token=getattr(self.api, "token", None))

    def _url(self, repo: str, tail: str) -> str:
        return f"{self.api.endpoint}/api/{self.repo_type}s/{repo}/{tail}"

    # ------------------------------------------------------------------------------------------------ reading

    def head(self, repo: str) -> str:
        """The repo's head commit: one small call (only the `sha` property is asked for)."""
        return self._call("read", repo, "the head commit",
                          lambda: self.api.repo_info(repo, repo_type=self.repo_type, expand=["sha"]).sha)

    def folder(self, repo: str, folder: str, revision: str) -> dict[str, Entry]:
        """The files under `folder` at `revision` (ROOT: the root's own files only); none when it does not exist."""
        def listing():
            try:
                items = self.api.list_repo_tree(repo, path_in_repo=folder or None, recursive=folder != ROOT,
                                                repo_type=self.repo_type, revision=revision)
                return {item.path: _entry(item) for item in items if hasattr(item, "blob_id")}
            except RemoteEntryNotFoundError:
                return {}
        return self._call("list", repo, repr(folder or "/"), listing)

    def paths(self, repo: str, paths: list[str], revision: str) -> dict[str, Entry]:
        """The files among `paths` at `revision` (absent ones are left out)."""
        def info():
            found = {}
            for start in range(0, len(paths), 500):
                items = self.api.get_paths_info(repo, paths[start:start + 500], repo_type=self.repo_type,
                                                revision=revision)
                found.update({item.path: _entry(item) for item in items if hasattr(item, "blob_id")})
            return found
        return self._call("read", repo, f"{len(paths)} path(s)", info)

    def fetch(self, repo: str, path: str, revision: str) -> bytes | None:
        """The bytes of `path` at `revision`, in memory (an LFS file through the Hub's redirect); None when absent."""
        def get():
            url = hf_hub_url(repo, path, repo_type=self.repo_type, revision=revision, endpoint=self.api.endpoint)
            response = get_session().get(url, headers=self._headers, follow_redirects=True)
            try:
                hf_raise_for_status(response)
            except RemoteEntryNotFoundError:
                return None
            return response.content
        return self._call("read", repo, repr(path), get)

    def history(self, repo: str, limit: int, wait: bool = True) -> tuple[str, list[tuple[float, str]], int]:
        """The newest `limit` commits of the branch: (head, [(time, title and message)] newest first, length). A 429
        is waited out as huggingface_hub waits (its RateLimit header), unless `wait` is False (RateLimited)."""
        def listing():
            response = http_backoff("GET", self._url(repo, "commits/main"), headers=self._headers,
                                    params={"limit": max(1, min(limit, HISTORY_LIMIT_MAX))},
                                    max_retries=5 if wait else 0, retry_on_status_codes=(429, 500, 502, 503, 504))
            hf_raise_for_status(response)
            items = response.json()
            commits = [(datetime.fromisoformat(item["date"].replace("Z", "+00:00")).timestamp(),
                        f"{item.get('title') or ''}\n{item.get('message') or ''}") for item in items]
            total = int(response.headers.get("X-Total-Count") or len(items))
            return (items[0]["id"] if items else ""), commits, total
        return self._call("read", repo, "the history", listing)

    # ------------------------------------------------------------------------------------------------ writing

    def commit(self, repo: str, operations: list, message: str, parent: str | None) -> str:
        """One commit on `parent` (the Hub refuses it with 412 when the branch moved on); its oid. Errors pass as the
        client raised them (the store tells a lost race, a 429 and a failure apart)."""
        return self.api.create_commit(repo, operations=operations, commit_message=message,
                                      repo_type=self.repo_type, parent_commit=parent).oid

    def squash(self, repo: str, message: str) -> None:
        """The branch becomes one commit holding its files."""
        self._call("squash", repo, "the history", lambda: self.api.super_squash_history(
            repo, repo_type=self.repo_type, commit_message=message))
