"""Where requests, results and details live: one small interface, chosen by settings.

Paths are POSIX paths relative to the store's root and follow DESIGN.md's layout:
requests/<org>/<model>/<sha12>_<precision>.json, results/<org>/<model>/<sha12>_<precision>.json,
details/<org>/<model>/<sha12>_<precision>/<benchmark>.parquet and leaderboard.parquet.
"""
from __future__ import annotations

import random
from typing import ContextManager, Protocol

from leaderboard.settings import Settings
from leaderboard.store.damage import MAX_JSON_BYTES, DamagedFile, DamagedFiles, parse_json

__all__ = ["MAX_JSON_BYTES", "DamagedFile", "DamagedFiles", "PathRefused", "Store", "StoreConflict", "backoff",
           "open_store", "parse_json"]


BACKOFF_BASE, BACKOFF_CAP = 0.05, 2.0  # seconds: the first wait's scale, and the longest wait, between two attempts


def backoff(attempt: int, base: float = BACKOFF_BASE, cap: float = BACKOFF_CAP) -> float:
    """A wait before attempt `attempt + 1` of a write that lost a race: exponential with full jitter, so racing
    writers spread out."""
    return random.uniform(0, min(cap, base * 2 ** attempt))


class StoreConflict(RuntimeError):
    """A write inside `lock()` lost a race (the Hub store's commit found a newer parent); run the whole step again."""


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


def open_store(settings: Settings, api=None) -> Store:
    """The store named by settings.store_backend. `api` stands in for huggingface_hub.HfApi (tests pass a fake)."""
    if settings.store_backend == "local":
        from leaderboard.store.local import LocalStore

        return LocalStore(settings.home / "store")
    if settings.store_backend == "hub":
        from leaderboard.store.hub import HubStore

        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=settings.hf_token or None)
        return HubStore(api, settings.results_repo, settings.requests_repo, commit_budget=settings.commit_budget)
    raise ValueError(f"unknown store backend {settings.store_backend!r}")
