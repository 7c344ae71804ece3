"""The store's interface, below every backend: the operations (Store), the three errors (StoreConflict, StoreBusy,
PathRefused) and the wait between two attempts of a write that lost a race (backoff)."""
from __future__ import annotations

import math
import random
from typing import ContextManager, Protocol

from leaderboard.store.damage import DamagedFiles

BACKOFF_BASE, BACKOFF_CAP = 0.05, 2.0  # seconds: the first wait's scale, and the longest wait, between two attempts


def backoff(attempt: int, base: float = BACKOFF_BASE, cap: float = BACKOFF_CAP) -> float:
    """A wait before attempt `attempt + 1` of a write that lost a race: exponential with full jitter, so racing
    writers spread out."""
    return random.uniform(0, min(cap, base * 2 ** attempt))


class StoreConflict(RuntimeError):
    """A write inside `lock()` lost a race (the Hub store's commit found a newer parent); run the whole step again."""


class HistoryGone(OSError):
    """A read made outside `lock()` met a history rewritten under it (the Hub store's squash) more than once: the
    same read made again, or under the lock, sees the new history."""


class StoreBusy(RuntimeError):
    """A write inside `without_waiting()` would have had to wait (the repo's commit budget is spent, or the Hub asked
    to slow down): nothing was written. `retry_after`: seconds until it can be written."""

    def __init__(self, retry_after: float):
        self.retry_after = max(1.0, float(retry_after))
        super().__init__(f"the leaderboard is busy; try again in {self.minutes} minute"
                         f"{'s' if self.minutes != 1 else ''}")

    @property
    def minutes(self) -> int:
        return max(1, math.ceil(self.retry_after / 60))


class PathRefused(ValueError):
    """A path that is not one of the store's: absolute, empty, with "..", or (locally) led out of the store's folder
    by a symbolic link. A caller's error, raised to it: it names no stored file, so it is never listed as damaged."""


class Store(Protocol):
    """The operations the queue, the scheduler and the UI need, and the ledger of damaged files its readers met."""

    damaged: DamagedFiles

    def read_bytes(self, path: str) -> bytes | None: ...
    def write_bytes(self, path: str, data: bytes) -> None: ...
    def read_json(self, path: str) -> dict | None:
        """The JSON value of the file at `path` (None when there is none); DamagedFile, with the reason, when it
        cannot be parsed (see leaderboard.store.damage.parse_json)."""
        ...
    def write_json(self, path: str, obj: dict) -> None: ...
    def write_many(self, files: dict[str, bytes | None]) -> None: ...  # None deletes
    def delete(self, path: str) -> None: ...
    def list(self, prefix: str, suffix: str = "") -> list[str]: ...
    def lock(self) -> ContextManager[None]:
        """Reads and writes inside are one atomic step: a file lock locally, a parent_commit check on the Hub
        (which raises StoreConflict when another writer got there first)."""
        ...
    def without_waiting(self) -> ContextManager[None]:
        """Writes inside (on this thread) never wait for the commit budget or a rate limit: they raise StoreBusy,
        having written nothing. For what a person waits on (a submission, an action in the Queue tab)."""
        ...
    def refresh(self, max_age: float = 0.0) -> None:
        """Bring what the store knows of its files up to date (the Hub store: its picture of each repo, one cheap
        call when nothing changed; the local store: nothing to do). Reads never do it themselves."""
        ...
