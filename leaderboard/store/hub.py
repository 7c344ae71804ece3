"""The Hub store: the store layout kept in Hub dataset repo(s), read from an in-process picture of each repo.

Paths under `requests/` live in the requests repo (the results repo when none is set); every other path (results/,
details/, leaderboard.parquet) lives in the results repo.

**Reads follow the head commit.** Each repo has a `Picture` (leaderboard.store.hub_picture): its head commit, the
paths and blob ids of the folders listed so far, and the bytes of the files read, kept by blob id. Reads and listings
answer from it and never ask the Hub whether it is current: `refresh()` does (the scheduler's tick and a timer call
it). A refresh is one call (the head commit) when nothing changed; when the head moved, it lists again the folders the
picture holds and fetches, in memory, only the small files whose blob id changed (large ones, such as details parquet
files, are fetched when first read, once per blob id, and kept in a cache bounded in bytes). The store's own commits
update the picture without reading anything again. The Hub is asked about a path the picture does not know yet (a
folder never listed, one file) once.

**Writes** are one commit each, on the picture's head (`parent_commit`): a commit that finds the branch moved on is
refused (412); a plain write then refreshes and commits again, a transaction raises `StoreConflict`. Every commit
carries a fresh `.transaction` mark, so huggingface_hub never skips one as empty (it would answer the head without
checking the parent).

`lock()` is an optimistic transaction on the requests repo: reads inside are made at the picture's head as it was on
entry, writes and deletes are buffered (reads inside see them) and land as ONE commit on that head when the outermost
lock() exits without an exception (an exception discards them). When another writer moved the head meanwhile, the
commit is refused, the store refreshes, and lock() raises StoreConflict; `leaderboard.submissions.records.transact`
runs the step again. Transactions are per thread, so one HubStore serves several threads.

**One commit budget per repo, for every writer** (leaderboard.store.hub_budget): before a commit the store knows how
many commits the repo received in the last `budget_window` seconds from the repo's own history and stays within
`commit_budget`, waiting when needed, or, inside `without_waiting()`, raising StoreBusy with the wait. A 429 is
waited out (or, inside without_waiting(), StoreBusy) and the same commit is tried again on the same parent.
"""
from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from contextlib import contextmanager
from typing import Callable, Iterator

from huggingface_hub import CommitOperationAdd, CommitOperationDelete
from huggingface_hub.errors import HfHubHTTPError

from leaderboard.store.damage import MAX_JSON_BYTES, DamagedFile, DamagedFiles, parse_json
from leaderboard.store.hub_budget import CommitBudget, squash_message
from leaderboard.store.hub_calls import (DEFAULT_RETRY_AFTER, MAX_RETRY_AFTER, HubCalls, HubStoreError,  # noqa: F401
                                         RateLimited, RevisionGone, retry_after, status_of)
from leaderboard.store.hub_picture import ROOT, Entry, Picture, top_folder
from leaderboard.store.hub_pictures import Pictures
from leaderboard.store.interface import StoreBusy, StoreConflict, backoff
from leaderboard.store.local import _safe_relative

log = logging.getLogger(__name__)

CONFLICT_STATUSES = (409, 412)  # 412: parent_commit is no longer the head; 409: a concurrent operation on the repo
RATE_LIMITED = 429
READ_ATTEMPTS = 6  # a read squashed away under it is made again at the new head, up to this many times in all
WRITE_RETRIES = 30  # a plain write that lost a race is committed again on the new head, up to this many times
# (waits with full jitter up to WRITE_BACKOFF_CAP: about a minute in all), so Jobs that finish together all publish
WRITE_BACKOFF_BASE, WRITE_BACKOFF_CAP = 0.25, 5.0
TRANSACTION_MARK = ".transaction"  # a fresh value in every commit (see the module docstring); a dot name: never listed


class HubStore:
    """DESIGN.md's store layout in Hub dataset repo(s); behaves like LocalStore. `api` is a huggingface_hub.HfApi.
    `cache_mb`: the cache of large files (MB); `clock` (epoch seconds) and `sleep` are the budget's and the 429
    waits' (tests pass fakes)."""

    def __init__(self, api, results_repo: str, requests_repo: str = "", repo_type: str = "dataset",
                 create: bool = True, write_retries: int = WRITE_RETRIES, commit_budget: int = 100,
                 budget_window: float = 3600.0, cache_mb: float = 256.0, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep):
        if not results_repo:
            raise ValueError("the Hub store needs a results repo (LEADERBOARD_RESULTS_REPO)")
        self.api = api
        self.results_repo = results_repo
        self.requests_repo = requests_repo or results_repo
        self.repo_type = repo_type
        self.write_retries = write_retries  # attempts of a write outside lock() that meets a conflict
        self.budget = CommitBudget(commit_budget, budget_window, clock=clock)
        self.calls = HubCalls(api, repo_type, self._scrub)
        self._repos = list(dict.fromkeys([self.results_repo, self.requests_repo]))
        self.pictures = Pictures(self.calls, self._repos, int(cache_mb * 1024 * 1024))
        self._sleep = sleep
        self._local = threading.local()  # this thread's transaction (depth, picture, pending) and no-wait flag
        self._open = 0  # transactions open in this process (a squash waits for a tick with none)
        self._open_lock = threading.Lock()
        self.damaged = DamagedFiles()  # files its readers met and skipped (see leaderboard.store.damage)
        if create:
            for repo in self._repos:
                try:
                    api.create_repo(repo, repo_type=repo_type, exist_ok=True)
                except Exception as exc:  # e.g. a read-only token: the repo may exist; later calls say clearly if not
                    log.warning("could not create or check %s repo %s: %s", repo_type, repo, self._scrub(str(exc)))

    @property
    def commit_budget(self) -> int:
        return self.budget.budget

    @property
    def budget_window(self) -> float:
        return self.budget.window

    def _scrub(self, text: str) -> str:
        from evaluator.api import redact

        return redact(text, getattr(self.api, "token", None))

    def _route(self, path: str) -> tuple[str, str]:
        """(repo, path in repo) of a store path; refuses paths that leave the store."""
        rel = _safe_relative(path)
        repo = self.requests_repo if rel.parts[0] == "requests" else self.results_repo
        return repo, rel.as_posix()

    # ------------------------------------------------------------------------------------------------ reading

    def _transaction(self, repo: str):
        """This thread's open transaction when `repo` is the requests repo (else None)."""
        state = self._local
        return state if getattr(state, "depth", 0) > 0 and repo == self.requests_repo else None

    def _picture(self, repo: str) -> Picture:
        """What reads of `repo` answer from: the transaction's picture, else the current one."""
        state = self._transaction(repo)
        return state.picture if state is not None else self.pictures.current(repo)

    def _learn(self, repo: str, picture: Picture, folders: tuple[str, ...] = (), singles: tuple[str, ...] = ()) \
            -> Picture:
        learned = self.pictures.learn(repo, picture, folders, singles)
        state = self._transaction(repo)
        if state is not None and state.picture is picture:
            state.picture = learned
        return learned

    def _entry(self, repo: str, name: str) -> tuple[Picture, Entry | None]:
        """The picture reads of `repo` answer from, and what it says is at `name` (asked once when unknown)."""
        picture = self._picture(repo)
        if not picture.knows(name):
            picture = self._learn(repo, picture, singles=(name,))
        return picture, picture.files.get(name)

    def _at_head(self, repo: str, read: Callable[[], object]):
        """read(), made again at the new head when its own is squashed away meanwhile (READ_ATTEMPTS in all: squashes
        may follow each other); inside a transaction, the step is run again (StoreConflict), as on a moved head."""
        for attempt in range(READ_ATTEMPTS):
            try:
                return read()
            except RevisionGone:
                if attempt == READ_ATTEMPTS - 1:
                    raise
                try:
                    self.pictures.refresh_repo(repo)
                except RevisionGone:
                    pass  # squashed again during the refresh: the next read fails at once and refreshes again
                if self._transaction(repo) is not None:
                    raise StoreConflict(f"{repo} was squashed meanwhile; run the step again") from None

    def _bytes(self, repo: str, name: str) -> tuple[bool, bytes | None]:
        """(whether the file exists, its bytes) as the picture says, fetched once per blob id."""
        def read():
            picture, entry = self._entry(repo, name)
            return (False, None) if entry is None else (True, self.pictures.bytes(repo, name, picture, entry))
        return self._at_head(repo, read)

    def refresh(self, max_age: float = 0.0) -> None:
        """Bring each repo's picture to its head commit (a repo checked within `max_age` seconds is skipped): one
        call per repo when nothing changed. Raises HubStoreError (RateLimited on a 429) when the Hub cannot answer."""
        self.pictures.refresh(max_age)

    def head(self, repo: str) -> str | None:
        """The head commit the picture of `repo` is at (None before its first use)."""
        return self.pictures.head(repo)

    def read_bytes(self, path: str) -> bytes | None:
        repo, name = self._route(path)
        state = self._transaction(repo)
        if state is not None and name in state.pending:
            return state.pending[name]
        return self._bytes(repo, name)[1]

    def read_json(self, path: str) -> dict | None:
        """The JSON value of the file at `path` (None when there is none); DamagedFile when it cannot be parsed, a
        file over the size limit refused by its size before it is fetched."""
        repo, name = self._route(path)
        state = self._transaction(repo)
        if state is not None and name in state.pending:
            data = state.pending[name]
            return None if data is None else parse_json(data)
        _, entry = self._at_head(repo, lambda: self._entry(repo, name))
        if entry is not None and entry.size > MAX_JSON_BYTES:
            raise DamagedFile(f"{entry.size} bytes, over the {MAX_JSON_BYTES}-byte limit of a JSON file of the store")
        found, data = self._bytes(repo, name)
        return None if data is None else parse_json(data)

    def list(self, prefix: str, suffix: str = "") -> list[str]:
        """Files under the folder `prefix` whose name ends with `suffix` (names starting with "." are skipped). A
        top-level folder is listed once, then known; a deeper one the picture does not hold is listed for this call."""
        repo, base = self._route(prefix)

        def listing() -> set[str]:
            picture = self._picture(repo)
            if picture.lists(base):
                return set(picture.under(base))
            if "/" not in base:
                return set(self._learn(repo, picture, folders=(base,)).under(base))
            return set(self.calls.folder(repo, base, picture.head))

        files = self._at_head(repo, listing)
        state = self._transaction(repo)
        for name, data in (state.pending.items() if state is not None else ()):
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
            state = self._transaction(repo)
            if state is not None:
                state.pending.update(batch)
            else:
                self._write(repo, batch)

    def delete(self, path: str) -> None:
        """Remove the file at `path`; absent is fine (no commit)."""
        self.write_many({path: None})

    def _present(self, repo: str, picture: Picture, batch: dict[str, bytes | None]) -> tuple[Picture, dict]:
        """The batch without deletes of files absent from the picture (the Hub refuses those)."""
        unknown = tuple(name for name, data in batch.items() if data is None and not picture.knows(name))
        if unknown:
            try:
                picture = self._learn(repo, picture, singles=unknown)
            except RevisionGone:
                self.pictures.refresh_repo(repo)
                raise StoreConflict(f"{repo} was squashed meanwhile; run the step again") from None
        return picture, {name: data for name, data in batch.items() if data is not None or name in picture.files}

    def _write(self, repo: str, batch: dict[str, bytes | None]) -> None:
        """Commit `batch` outside a transaction: on the current picture's head, again on the new head when another
        writer moved it (write_retries attempts)."""
        for attempt in range(max(1, self.write_retries)):
            picture, present = self._present(repo, self._picture(repo), batch)
            if not present:
                return
            try:
                self._commit(repo, picture, present)
                return
            except StoreConflict:
                if attempt == max(1, self.write_retries) - 1:
                    raise StoreConflict(f"{repo} kept refusing the commit of {len(batch)} file(s)") from None
                self._sleep(backoff(attempt, base=WRITE_BACKOFF_BASE, cap=WRITE_BACKOFF_CAP))

    def _commit(self, repo: str, picture: Picture, batch: dict[str, bytes | None]) -> None:
        """One commit of `batch` on `picture.head` within the budget (429s waited out); on success the picture moves
        to the new commit. A moved branch: refresh, then StoreConflict."""
        names = sorted(batch)
        message = f"Update {names[0]}" if len(names) == 1 else f"Update {len(names)} files"
        while True:
            self._take_budget(repo, picture.head)
            operations = [CommitOperationDelete(path_in_repo=name) if data is None
                          else CommitOperationAdd(path_in_repo=name, path_or_fileobj=data)
                          for name, data in {**batch, TRANSACTION_MARK: uuid.uuid4().hex.encode()}.items()]
            try:
                oid = self.calls.commit(repo, operations, message, parent=picture.head)
            except BaseException as exc:
                self.budget.released(repo)
                status = status_of(exc) if isinstance(exc, HfHubHTTPError) else None
                if status == RATE_LIMITED:
                    self._wait(repo, retry_after(exc), "answered 429 (rate limited)")
                    continue
                if status in CONFLICT_STATUSES:
                    self.pictures.refresh_repo(repo)
                    raise StoreConflict(f"{repo} moved on since commit {picture.head[:12]} ({status}); "
                                        "run the step again") from None
                if isinstance(exc, Exception):
                    what = ", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
                    raise self.calls.error("write", repo, what, exc) from None
                raise
            self.budget.landed(repo, picture.head, oid)
            lfs = {op.path_in_repo for op in operations if getattr(op, "_upload_mode", None) == "lfs"}
            self.pictures.committed(repo, picture, oid, {op.path_in_repo: None if isinstance(
                op, CommitOperationDelete) else op.path_or_fileobj for op in operations
                if op.path_in_repo != TRANSACTION_MARK}, lfs)
            return

    # ------------------------------------------------------------------------------------------------ waiting

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        """Writes on this thread inside never wait for the budget or a 429: StoreBusy instead (nothing written)."""
        before = getattr(self._local, "no_wait", False)
        self._local.no_wait = True
        try:
            yield
        finally:
            self._local.no_wait = before

    def _wait(self, repo: str, seconds: float, why: str) -> None:
        """Wait `seconds` before the next attempt of a commit to `repo`, or raise StoreBusy inside without_waiting()."""
        if getattr(self._local, "no_wait", False):
            raise StoreBusy(seconds)
        log.warning("Hub store: %s %s; waiting %.1f s, then committing", repo, why, seconds)
        self._sleep(seconds)

    def _take_budget(self, repo: str, head: str) -> None:
        """Wait until one more commit to `repo` keeps within the budget (the history read when not known at `head`)."""
        waiting = not getattr(self._local, "no_wait", False)
        while True:
            if not self.budget.knows(repo, head):
                try:
                    self.budget.learn(repo, *self.calls.history(repo, self.budget.budget + 1, wait=waiting))
                except RateLimited as limited:
                    raise StoreBusy(limited.retry_after) from None
            wait = self.budget.wait(repo, waiting=waiting)
            if wait <= 0:
                return
            self._wait(repo, wait, f"received {len(self.budget.times(repo))} commits within "
                                   f"{self.budget.window:.0f} s (the commit budget)")

    def commits_in_window(self, repo: str) -> int:
        """The commits to `repo` within the budget's window, as last known (whoever made them)."""
        return len(self.budget.times(repo))

    # ------------------------------------------------------------------------------------------------ history

    def commits_on_branch(self, repo: str) -> int:
        """The length of `repo`'s history: read from the Hub when the picture's head is not where the store's
        knowledge of the history ends (another writer committed since), else known."""
        total = self.budget.total(repo)
        if total is None or not self.budget.knows(repo, self.pictures.head(repo)):
            head, commits, total = self.calls.history(repo, self.budget.budget + 1)
            self.budget.learn(repo, head, commits, total)
        return total

    def squash_history(self, after_commits: int) -> bool:
        """Squash the requests repo's history into one commit (files unchanged) once it has more than
        `after_commits` commits and no transaction of this process is open; True when it did. A writer elsewhere
        whose transaction meets the squash has its commit refused (412) and runs its step again."""
        repo = self.requests_repo
        if self.commits_on_branch(repo) <= after_commits:
            return False
        with self._open_lock:
            if self._open:
                return False
        self.calls.squash(repo, squash_message(self.budget.times(repo)))
        self.pictures.refresh_repo(repo)
        self.budget.squashed(repo, self.pictures.head(repo))
        log.info("Hub store: squashed the history of %s", repo)
        return True

    # ------------------------------------------------------------------------------------------------ lock

    @contextmanager
    def lock(self) -> Iterator[None]:
        """An optimistic transaction on the requests repo (see the module docstring); nested use joins the outer one."""
        state = self._local
        if getattr(state, "depth", 0) > 0:
            state.depth += 1
            try:
                yield
            finally:
                state.depth -= 1
            return
        picture = self._picture(self.requests_repo)
        with self._open_lock:
            self._open += 1
        state.picture, state.pending, state.depth = picture, {}, 1
        try:
            yield
            pending, picture = state.pending, state.picture
            if pending:
                picture, pending = self._present(self.requests_repo, picture, pending)
            if pending:
                self._commit(self.requests_repo, picture, pending)
        finally:
            state.depth, state.picture, state.pending = 0, None, {}
            with self._open_lock:
                self._open -= 1


__all__ = ["HubStore", "HubStoreError", "RateLimited", "StoreBusy", "TRANSACTION_MARK", "DEFAULT_RETRY_AFTER",
           "MAX_RETRY_AFTER", "ROOT", "top_folder"]
