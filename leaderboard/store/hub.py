"""The Hub store: the store layout kept in Hub dataset repo(s) through a few `huggingface_hub.HfApi` calls.

Paths under `requests/` live in the requests repo (the results repo when none is set); every other path
(results/, details/, leaderboard.parquet) lives in the results repo. Every write is one commit.

`lock()` is an optimistic transaction on the requests repo: it records the repo's head commit on entry, reads
inside it are made at that commit, and the first write inside commits with `parent_commit=<that commit>` (the
next one chains on the commit just made). When another writer moved the head meanwhile, the Hub refuses the
commit (HTTP 412) and the write raises `StoreConflict`; `leaderboard.queue.transact` then runs the step again.
The transaction state is per thread, so one HubStore may serve several threads.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from huggingface_hub import CommitOperationAdd, CommitOperationDelete
from huggingface_hub.errors import HfHubHTTPError, RemoteEntryNotFoundError

from evaluator.api import redact
from leaderboard.store import StoreConflict, backoff
from leaderboard.store.damage import DamagedFiles
from leaderboard.store.local import _safe_relative

log = logging.getLogger(__name__)

CONFLICT_STATUSES = (409, 412)  # 412: parent_commit is no longer the head; 409: a concurrent operation on the repo


class HubStoreError(OSError):
    """A Hub call failed for a reason other than "no such file" or a lost race. The message never holds the token."""

    def __init__(self, message: str, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


class HubStore:
    """DESIGN.md's store layout in Hub dataset repo(s); behaves like LocalStore."""

    def __init__(self, api, results_repo: str, requests_repo: str = "", repo_type: str = "dataset",
                 create: bool = True, write_retries: int = 5):
        if not results_repo:
            raise ValueError("the Hub store needs a results repo (LEADERBOARD_RESULTS_REPO)")
        self.api = api
        self.results_repo = results_repo
        self.requests_repo = requests_repo or results_repo
        self.repo_type = repo_type
        self.write_retries = write_retries  # attempts for a write outside lock() that meets a conflict
        self._local = threading.local()  # this thread's transaction: depth and the requests repo's sha
        self.damaged = DamagedFiles()  # files its readers met and skipped (see leaderboard.store.damage)
        if create:
            for repo in dict.fromkeys([self.results_repo, self.requests_repo]):
                try:
                    api.create_repo(repo, repo_type=repo_type, exist_ok=True)
                except Exception as exc:  # e.g. a read-only token: the repo may exist; later calls say clearly if not
                    log.warning("could not create or check %s repo %s: %s", repo_type, repo, self._scrub(str(exc)))

    # ------------------------------------------------------------------------------------------------ helpers

    def _scrub(self, text: str) -> str:
        return redact(text, getattr(self.api, "token", None))

    def _error(self, action: str, repo: str, what: str, exc: BaseException) -> HubStoreError:
        detail = self._scrub(f"{type(exc).__name__}: {exc}")
        return HubStoreError(f"Hub store could not {action} {what} in {self.repo_type} repo {repo}: {detail}",
                             _status(exc))

    def _route(self, path: str) -> tuple[str, str]:
        """(repo, path in repo) of a store path; refuses paths that leave the store."""
        rel = _safe_relative(path)
        repo = self.requests_repo if rel.parts[0] == "requests" else self.results_repo
        return repo, rel.as_posix()

    def _in_transaction(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    def _revision(self, repo: str) -> str | None:
        """Inside lock(), the requests repo is read at the transaction's commit; otherwise at the head."""
        if self._in_transaction() and repo == self.requests_repo:
            return self._local.sha
        return None

    def _head(self, repo: str) -> str | None:
        try:
            return self.api.repo_info(repo, repo_type=self.repo_type).sha
        except Exception as exc:
            raise self._error("read", repo, "the head commit", exc) from None

    def _commit(self, repo: str, make_operations, message: str) -> None:
        """One commit; inside lock() on the requests repo it must sit on the transaction's commit."""
        chained = self._in_transaction() and repo == self.requests_repo
        attempts = 1 if chained else max(1, self.write_retries)
        for attempt in range(attempts):
            parent = self._local.sha if chained else None
            try:
                info = self.api.create_commit(repo, operations=make_operations(), commit_message=message,
                                              repo_type=self.repo_type, parent_commit=parent)
            except HfHubHTTPError as exc:
                if _status(exc) not in CONFLICT_STATUSES:
                    raise
                if chained:
                    raise StoreConflict(f"{repo} moved on since commit {str(parent)[:12]} ({_status(exc)}); "
                                        "run the step again") from None
                if attempt == attempts - 1:
                    raise StoreConflict(f"{repo} kept refusing the commit {message!r} ({_status(exc)})") from None
                time.sleep(backoff(attempt, base=0.2))
                continue
            if chained:
                self._local.sha = info.oid
            return

    # ------------------------------------------------------------------------------------------------ reading

    def read_bytes(self, path: str) -> bytes | None:
        repo, name = self._route(path)
        try:
            local = self.api.hf_hub_download(repo, name, repo_type=self.repo_type, revision=self._revision(repo))
            return Path(local).read_bytes()
        except RemoteEntryNotFoundError:
            return None
        except Exception as exc:
            raise self._error("read", repo, repr(name), exc) from None

    def read_json(self, path: str) -> dict | None:
        data = self.read_bytes(path)
        return None if data is None else json.loads(data)

    def list(self, prefix: str, suffix: str = "") -> list[str]:
        """Files under the folder `prefix` whose name ends with `suffix` (names starting with "." are skipped)."""
        repo, base = self._route(prefix)
        try:
            files = self.api.list_repo_files(repo, repo_type=self.repo_type, revision=self._revision(repo))
        except Exception as exc:
            raise self._error("list", repo, repr(base), exc) from None
        found = []
        for name in files:
            leaf = name.rsplit("/", 1)[-1]
            if name.startswith(base + "/") and not leaf.startswith(".") and leaf.endswith(suffix):
                found.append(name)
        return sorted(found)

    # ------------------------------------------------------------------------------------------------ writing

    def write_bytes(self, path: str, data: bytes) -> None:
        self.write_many({path: data})

    def write_json(self, path: str, obj: dict) -> None:
        self.write_bytes(path, json.dumps(obj, indent=2, sort_keys=True, default=str).encode())

    def write_many(self, files: dict[str, bytes | None]) -> None:
        """Write (or, for None, delete) several files: one commit per repo (details and results go to the results
        repo together)."""
        by_repo: dict[str, dict[str, bytes | None]] = {}
        for path, data in files.items():
            repo, name = self._route(path)
            by_repo.setdefault(repo, {})[name] = None if data is None else bytes(data)
        for repo, batch in by_repo.items():
            names = sorted(batch)
            message = f"Update {names[0]}" if len(names) == 1 else f"Update {len(names)} files"

            def operations(batch=batch):
                return [CommitOperationDelete(path_in_repo=name) if data is None
                        else CommitOperationAdd(path_in_repo=name, path_or_fileobj=data) for name, data in batch.items()]

            try:
                self._commit(repo, operations, message)
            except (StoreConflict, HubStoreError):
                raise
            except Exception as exc:
                raise self._error("write", repo, ", ".join(names[:3]) + (" ..." if len(names) > 3 else ""),
                                  exc) from None

    def delete(self, path: str) -> None:
        repo, name = self._route(path)
        try:
            self._commit(repo, lambda: [CommitOperationDelete(path_in_repo=name)], f"Delete {name}")
        except RemoteEntryNotFoundError:
            return  # already absent
        except (StoreConflict, HubStoreError):
            raise
        except Exception as exc:
            raise self._error("delete", repo, repr(name), exc) from None

    # ------------------------------------------------------------------------------------------------ lock

    @contextmanager
    def lock(self) -> Iterator[None]:
        """An optimistic transaction on the requests repo (see the module docstring); nested use joins the outer one."""
        state = self._local
        if self._in_transaction():
            state.depth += 1
            try:
                yield
            finally:
                state.depth -= 1
            return
        state.sha = self._head(self.requests_repo)
        state.depth = 1
        try:
            yield
        finally:
            state.depth = 0
            state.sha = None
