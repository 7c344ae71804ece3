"""Where requests, results and details live: one small interface, chosen by settings.

Paths are POSIX paths relative to the store's root and follow DESIGN.md's layout:
requests/<org>/<model>/<sha12>_<precision>.json, results/<org>/<model>/<sha12>_<precision>.json,
details/<org>/<model>/<sha12>_<precision>/<benchmark>.parquet and leaderboard.parquet.
"""
from __future__ import annotations

from leaderboard.settings import Settings
from leaderboard.store.damage import MAX_JSON_BYTES, DamagedFile, DamagedFiles, parse_json
from leaderboard.store.interface import HistoryGone, PathRefused, Store, StoreBusy, StoreConflict, backoff

__all__ = ["MAX_JSON_BYTES", "DamagedFile", "DamagedFiles", "HistoryGone", "PathRefused", "Store", "StoreBusy",
           "StoreConflict", "backoff", "open_store", "parse_json"]


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
        return HubStore(api, settings.results_repo, settings.requests_repo, commit_budget=settings.commit_budget,
                        cache_mb=settings.hub_cache_mb)
    raise ValueError(f"unknown store backend {settings.store_backend!r}")
