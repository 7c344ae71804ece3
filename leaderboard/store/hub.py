"""The Hub store: the store layout kept in Hub dataset repo(s) through a few `huggingface_hub.HfApi` calls.

Paths under `requests/` live in the requests repo (the results repo when none is set); every other path
(results/, details/, leaderboard.parquet) lives in the results repo. Outside lock(), every write is one commit.

`lock()` is an optimistic transaction on the requests repo: it records the repo's head commit on entry and reads
inside it are made at that commit. Writes and deletes to the requests repo are buffered (reads inside see them, as
if committed) and land as ONE commit with `parent_commit=<that commit>` when the outermost lock() exits without an
exception (an exception discards them; a transaction that wrote nothing commits nothing). When another writer moved
the head meanwhile, the Hub refuses the commit (HTTP 412/409) and lock() raises `StoreConflict`;
`leaderboard.submissions.records.transact` then runs the step again. Writes to the results repo go straight out. The
transaction state is per thread, so one HubStore may serve several threads.

The Hub allows about 128 commits per repo per hour. The store keeps its own commits to each repo within
`commit_budget` per rolling `budget_window` seconds: a commit that would go over waits (a warning says how long)
until the oldest one leaves the window. A 429 answer is waited out (its Retry-After seconds, default 60 s, at most
an hour) and the same commit is tried again, on the same parent; it never fails the write.
"""
from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from huggingface_hub import CommitOperationAdd, CommitOperationDelete
from huggingface_hub.errors import HfHubHTTPError, RemoteEntryNotFoundError

from evaluator.api import redact
from leaderboard.store.damage import DamagedFiles, parse_json, read_json_file
from leaderboard.store.interface import StoreConflict, backoff
from leaderboard.store.local import _safe_relative

log = logging.getLogger(__name__)

CONFLICT_STATUSES = (409, 412)  # 412: parent_commit is no longer the head; 409: a concurrent operation on the repo
RATE_LIMITED = 429
# Written with a new value by every transaction's commit. huggingface_hub's create_commit skips a commit whose files
# all equal the head's (and answers the head, without checking parent_commit): a transaction that read a stale
# commit and wrote what another writer had just written would "succeed" on stale reads (a lost update). With the
# mark, the commit is never empty, so parent_commit is always checked. A dot name: no listing of the store shows it.
TRANSACTION_MARK = ".transaction"
DEFAULT_RETRY_AFTER, MAX_RETRY_AFTER = 60.0, 3600.0  # seconds: a 429 without Retry-After, and the longest wait


class HubStoreError(OSError):
    """A Hub call failed for a reason other than "no such file" or a lost race. The message never holds the token."""

    def __init__(self, message: str, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def retry_after(exc: BaseException) -> float:
    """Seconds a 429 asks to wait: its Retry-After (seconds), else DEFAULT_RETRY_AFTER; within [1 s, an hour]."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        seconds = float(headers.get("Retry-After"))
    except (TypeError, ValueError):
        seconds = DEFAULT_RETRY_AFTER
    return min(max(seconds, 1.0), MAX_RETRY_AFTER)


class HubStore:
    """DESIGN.md's store layout in Hub dataset repo(s); behaves like LocalStore. `clock` and `sleep` (seconds) are
    the budget's and the 429 waits' (tests pass fakes)."""

    def __init__(self, api, results_repo: str, requests_repo: str = "", repo_type: str = "dataset",
                 create: bool = True, write_retries: int = 5, commit_budget: int = 100, budget_window: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        if not results_repo:
            raise ValueError("the Hub store needs a results repo (LEADERBOARD_RESULTS_REPO)")
        if commit_budget < 1:
            raise ValueError("the commit budget must be at least 1")
        self.api = api
        self.results_repo = results_repo
        self.requests_repo = requests_repo or results_repo
        self.repo_type = repo_type
        self.write_retries = write_retries  # attempts for a write outside lock() that meets a conflict
        self.commit_budget, self.budget_window = commit_budget, budget_window
        self._clock, self._sleep = clock, sleep
        self._commit_times: dict[str, list[float]] = {}  # repo -> when its commits (in flight: started) ended
        self._budget_lock = threading.Lock()
        self._local = threading.local()  # this thread's transaction: depth, the requests repo's sha, buffered writes
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

    def _buffer(self, repo: str) -> dict[str, bytes | None] | None:
        """Inside lock(), the buffered writes (None: deletes) to the requests repo; None for other repos or outside."""
        return self._local.pending if self._in_transaction() and repo == self.requests_repo else None

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

    # ------------------------------------------------------------------------------------------------ the budget

    def _recent(self, repo: str, now: float) -> list[float]:
        times = self._commit_times.setdefault(repo, [])
        times[:] = [t for t in times if t > now - self.budget_window]
        return times

    def commits_in_window(self, repo: str) -> int:
        """This store's commits to `repo` (in flight included) within the last `budget_window` seconds."""
        with self._budget_lock:
            return len(self._recent(repo, self._clock()))

    def _take_slot(self, repo: str) -> float:
        """Wait until one more commit to `repo` keeps within the budget, and count it (returns its start time)."""
        while True:
            with self._budget_lock:
                now = self._clock()
                times = self._recent(repo, now)
                if len(times) < self.commit_budget:
                    times.append(now)
                    return now
                wait = min(times) + self.budget_window - now
            log.warning("Hub store: %d commits to %s within %.0f s (the commit budget); waiting %.1f s",
                        len(times), repo, self.budget_window, wait)
            self._sleep(wait)

    def _end_slot(self, repo: str, started: float, landed: bool) -> None:
        """A commit ended: it counts from now (the Hub saw it before now), or not at all when it did not land."""
        with self._budget_lock:
            times = self._commit_times.setdefault(repo, [])
            if started in times:
                times.remove(started)
            if landed:
                times.append(self._clock())

    # ------------------------------------------------------------------------------------------------ commits

    def _commit(self, repo: str, make_operations, message: str, parent: str | None = None) -> None:
        """One commit (on `parent` when given: a lost race raises StoreConflict), within the budget; waits out 429s;
        without a parent, a conflict is tried again (write_retries attempts)."""
        conflicts = 0
        while True:
            started = self._take_slot(repo)
            try:
                self.api.create_commit(repo, operations=make_operations(), commit_message=message,
                                       repo_type=self.repo_type, parent_commit=parent)
            except BaseException as exc:
                self._end_slot(repo, started, landed=False)
                status = _status(exc) if isinstance(exc, HfHubHTTPError) else None
                if status == RATE_LIMITED:
                    wait = retry_after(exc)
                    log.warning("Hub store: %s answered 429 (rate limited); waiting %.0f s, then committing again",
                                repo, wait)
                    self._sleep(wait)
                    continue
                if status not in CONFLICT_STATUSES:
                    raise
                if parent is not None:
                    raise StoreConflict(f"{repo} moved on since commit {parent[:12]} ({status}); "
                                        "run the step again") from None
                conflicts += 1
                if conflicts >= max(1, self.write_retries):
                    raise StoreConflict(f"{repo} kept refusing the commit {message!r} ({status})") from None
                self._sleep(backoff(conflicts - 1, base=0.2))
                continue
            self._end_slot(repo, started, landed=True)
            return

    def _write(self, repo: str, batch: dict[str, bytes | None], parent: str | None = None) -> None:
        """Commit `batch` (None: delete) to `repo`; errors become HubStoreError (StoreConflict passes through)."""
        names = sorted(batch)
        message = f"Update {names[0]}" if len(names) == 1 else f"Update {len(names)} files"

        def operations():
            return [CommitOperationDelete(path_in_repo=name) if data is None
                    else CommitOperationAdd(path_in_repo=name, path_or_fileobj=data) for name, data in batch.items()]

        try:
            self._commit(repo, operations, message, parent)
        except (StoreConflict, HubStoreError):
            raise
        except Exception as exc:
            raise self._error("write", repo, ", ".join(names[:3]) + (" ..." if len(names) > 3 else ""),
                              exc) from None

    # ------------------------------------------------------------------------------------------------ reading

    def _source(self, path: str) -> bytes | Path | None:
        """What the store holds at `path`: the bytes a transaction buffered, the downloaded file, or None."""
        repo, name = self._route(path)
        pending = self._buffer(repo)
        if pending is not None and name in pending:
            return pending[name]
        try:
            return Path(self.api.hf_hub_download(repo, name, repo_type=self.repo_type, revision=self._revision(repo)))
        except RemoteEntryNotFoundError:
            return None
        except Exception as exc:
            raise self._error("read", repo, repr(name), exc) from None

    def _read_local(self, path: str, file: Path, read: Callable[[Path], object]):
        """read(file) of a downloaded file; an error of the disk becomes HubStoreError."""
        try:
            return read(file)
        except OSError as exc:
            repo, name = self._route(path)
            raise self._error("read", repo, repr(name), exc) from None

    def read_bytes(self, path: str) -> bytes | None:
        found = self._source(path)
        return self._read_local(path, found, Path.read_bytes) if isinstance(found, Path) else found

    def read_json(self, path: str) -> dict | None:
        """The JSON value of the file at `path` (None when there is none); DamagedFile when it cannot be parsed, a
        downloaded file over the size limit refused by its size before it is read."""
        found = self._source(path)
        if isinstance(found, Path):
            return self._read_local(path, found, read_json_file)
        return None if found is None else parse_json(found)

    def _files(self, repo: str, base: str) -> list[str]:
        try:
            return self.api.list_repo_files(repo, repo_type=self.repo_type, revision=self._revision(repo))
        except Exception as exc:
            raise self._error("list", repo, repr(base), exc) from None

    def list(self, prefix: str, suffix: str = "") -> list[str]:
        """Files under the folder `prefix` whose name ends with `suffix` (names starting with "." are skipped)."""
        repo, base = self._route(prefix)
        files = set(self._files(repo, base))
        for name, data in (self._buffer(repo) or {}).items():
            (files.discard if data is None else files.add)(name)
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
        repo together); inside lock(), the requests repo's share is buffered."""
        by_repo: dict[str, dict[str, bytes | None]] = {}
        for path, data in files.items():
            repo, name = self._route(path)
            by_repo.setdefault(repo, {})[name] = None if data is None else bytes(data)
        for repo, batch in by_repo.items():
            pending = self._buffer(repo)
            if pending is not None:
                pending.update(batch)
            else:
                self._write(repo, batch)

    def delete(self, path: str) -> None:
        repo, name = self._route(path)
        pending = self._buffer(repo)
        if pending is not None:
            pending[name] = None
            return
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
        state.sha, state.pending = self._head(self.requests_repo), {}
        state.depth = 1
        try:
            yield
            self._flush(state.pending)
        finally:
            state.depth, state.sha, state.pending = 0, None, {}

    def _flush(self, pending: dict[str, bytes | None]) -> None:
        """The transaction's one commit, on its sha (deletes of files absent at that sha are dropped)."""
        if any(data is None for data in pending.values()):
            present = set(self._files(self.requests_repo, "requests"))
            pending = {name: data for name, data in pending.items() if data is not None or name in present}
        if pending:  # with a fresh mark, so that the commit is never an empty one the client would skip
            self._write(self.requests_repo, {**pending, TRANSACTION_MARK: uuid.uuid4().hex.encode()},
                        parent=self._local.sha)
