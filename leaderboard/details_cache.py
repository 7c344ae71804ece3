"""One run's details of one benchmark, read through the store once and kept in a bounded cache.

An entry holds the details frame (with each row's question in an "item" column), the card's item table built from
it, and where each question's rows are; the explorer filters, sorts and pages that table and never reads the store
again for the same run and benchmark (on the Hub store that would be one parquet download per click).
"""
from __future__ import annotations

import io
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pandas as pd

from evaluator import api
from leaderboard.request_queue import is_request_key
from leaderboard.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunDetails:
    """A run's details of one benchmark: the rows, the item table, and each item's row positions."""

    key: str
    benchmark: str
    details: pd.DataFrame
    items: pd.DataFrame
    rows_of: dict[str, list[int]]

    def item_rows(self, item: str) -> list[dict]:
        """The details rows of one question, as plain dicts (empty for an unknown item)."""
        positions = self.rows_of.get(item, [])
        return self.details.iloc[positions].to_dict("records") if positions else []


class DetailsError(ValueError):
    """Why a run's details cannot be shown (unknown run, no details for the benchmark, a damaged file)."""


def details_path(key: str, benchmark: str) -> str:
    return f"details/{key}/{benchmark}.parquet"


def build_details(key: str, benchmark: str, data: bytes) -> RunDetails:
    """Parse a details parquet and build its item table through the benchmark's card; DetailsError when damaged."""
    view = api.card(benchmark).item_view
    if view.items is None or view.key is None:
        raise DetailsError(f"{benchmark} has no explorer view")
    try:
        frame = pd.read_parquet(io.BytesIO(data))
        frame["item"] = view.key(frame).astype(str).to_numpy()
        items = view.items(frame)
    except Exception as exc:  # a damaged or foreign file must not break the tab
        log.warning("details %s of %s unreadable: %s", benchmark, key, exc)
        raise DetailsError(f"the {benchmark} details of {key} could not be read ({type(exc).__name__})") from None
    frame = frame.reset_index(drop=True)
    rows_of = {str(k): list(v) for k, v in frame.groupby("item", sort=False).indices.items()}
    return RunDetails(key, benchmark, frame, items, rows_of)


class DetailsCache:
    """At most `size` runs' details, least recently used dropped first; safe to share between sessions."""

    def __init__(self, store: Store, size: int = 8):
        self.store, self.size = store, max(1, int(size))
        self._entries: OrderedDict[tuple[str, str], RunDetails] = OrderedDict()
        self._lock = threading.Lock()
        self.reads = 0  # store reads so far (the bench and the tests count them)

    def get(self, key: str, benchmark: str) -> RunDetails:
        """The details of run `key` for `benchmark`; DetailsError saying why they cannot be shown."""
        if not key or not is_request_key(key):
            raise DetailsError("pick a run")
        if benchmark not in api.benchmark_names():
            raise DetailsError(f"unknown benchmark {benchmark!r}")
        with self._lock:
            found = self._entries.get((key, benchmark))
            if found is not None:
                self._entries.move_to_end((key, benchmark))
                return found
        data = self.store.read_bytes(details_path(key, benchmark))
        self.reads += 1
        if data is None:
            raise DetailsError(f"{key} has no {api.card(benchmark).title} details (the benchmark did not run for it)")
        try:
            entry = build_details(key, benchmark, data)
        except DetailsError as damage:
            self.store.damaged.report(details_path(key, benchmark), damage)
            raise
        self.store.damaged.clear(details_path(key, benchmark))
        with self._lock:
            self._entries[(key, benchmark)] = entry
            self._entries.move_to_end((key, benchmark))
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return entry
