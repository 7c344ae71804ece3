"""One run's details of one benchmark, read through the store once and kept in a bounded cache.

An entry holds the details frame (with each row's question in an "item" column), the card's item table built from
it, and where each question's rows are; the explorer filters, sorts and pages that table and never reads the store
again for the same run and benchmark (on the Hub store that would be one parquet download per click). Given the
Space's copy of the board (leaderboard.board.space_copy), a run that is not on it is answered from it, and a file that
could not be read is not read again until the board is read again: a visitor naming unknown or damaged runs costs no
store read per call.
"""
from __future__ import annotations

import io
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import pandas as pd

from evaluator import api
from leaderboard.store import Store
from leaderboard.submissions.records import is_request_key

log = logging.getLogger(__name__)
MEASURED = 32  # metric values kept per entry


@dataclass(frozen=True)
class RunDetails:
    """A run's details of one benchmark: the rows, the item table, and each item's row positions."""

    key: str
    benchmark: str
    details: pd.DataFrame
    items: pd.DataFrame
    rows_of: dict[str, list[int]]
    measured: dict = field(default_factory=dict, compare=False, repr=False)  # (metric, its questions) -> value

    def measure(self, metric: str, items: tuple[str, ...], compute: Callable[[pd.DataFrame], float]) -> float:
        """A board metric on these questions' rows, computed once per (metric, questions) for this entry (the last
        MEASURED of them kept): paging or reopening the same list never scores it again."""
        key = (metric, items)
        if key not in self.measured:
            if len(self.measured) >= MEASURED:
                self.measured.pop(next(iter(self.measured)), None)
            self.measured[key] = compute(self.details[self.details["item"].isin(items)])
        return self.measured[key]

    @cached_property
    def scores(self) -> api.QuestionScores:
        """Each question's score and unit, for comparing with another run (built once per entry); ValueError when
        the details do not fit the card's question view."""
        return api.question_scores(api.card(self.benchmark), self.details, self.items)

    def item_rows(self, item: str) -> list[dict]:
        """The details rows of one question, as plain dicts (empty for an unknown item)."""
        positions = self.rows_of.get(item, [])
        return self.details.iloc[positions].to_dict("records") if positions else []


class DetailsError(ValueError):
    """Why a run's details cannot be shown (unknown run, no details for the benchmark, a damaged file)."""


def details_path(key: str, benchmark: str) -> str:
    return f"details/{key}/{benchmark}.parquet"


def details_link(key: str, benchmark: str) -> str:
    """The address of a run's details file on the Space itself (leaderboard.ui.downloads serves it on the local
    store), relative to the Space's root so that it works under any mount path."""
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

    def __init__(self, store: Store, size: int = 8, board=None):
        """`board`: a leaderboard.board.space_copy.BoardCopy; with it, only runs on the board are read."""
        self.store, self.size, self.board = store, max(1, int(size)), board
        self._entries: OrderedDict[tuple[str, str], RunDetails] = OrderedDict()
        self._failed: dict[tuple[str, str], tuple[int, DetailsError]] = {}  # -> (board generation, why)
        self._lock = threading.Lock()
        self.reads = 0  # store reads so far (the bench and the tests count them)

    def get(self, key: str, benchmark: str) -> RunDetails:
        """The details of run `key` for `benchmark`; DetailsError saying why they cannot be shown."""
        if not key:
            raise DetailsError("no run given: name a run by its key, <org>/<model>/<sha12>_<precision>")
        if not is_request_key(key):
            raise DetailsError(f"{str(key)[:120]!r} is not a run's key (<org>/<model>/<sha12>_<precision>)")
        if benchmark not in api.benchmark_names():
            raise DetailsError(f"unknown benchmark {str(benchmark)[:60]!r}")
        with self._lock:
            found = self._entries.get((key, benchmark))
            if found is not None:
                self._entries.move_to_end((key, benchmark))
                return found
        if self.board is not None and not self.board.has(key):
            raise DetailsError(f"no run with key {key!r} on the board")
        generation = self.board.generation if self.board is not None else None
        with self._lock:
            failed = self._failed.get((key, benchmark))
        if failed is not None and failed[0] == generation:
            raise failed[1]
        try:
            entry = self._read(key, benchmark, details_path(key, benchmark))
        except DetailsError as why:
            if generation is not None:  # not read again until the board is
                with self._lock:
                    self._failed[(key, benchmark)] = (generation, why)
            raise
        with self._lock:
            self._failed.pop((key, benchmark), None)
            self._entries[(key, benchmark)] = entry
            self._entries.move_to_end((key, benchmark))
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return entry

    def _read(self, key: str, benchmark: str, path: str) -> RunDetails:
        """Read and build one run's details (one store read); a damaged file is reported to the store's ledger."""
        data = self.store.read_bytes(path)
        self.reads += 1
        if data is None:
            raise DetailsError(f"{key} has no {api.card(benchmark).title} details (the benchmark did not run for it)")
        try:
            entry = build_details(key, benchmark, data)
        except DetailsError as damage:
            self.store.damaged.report(path, damage)
            raise
        self.store.damaged.clear(path)
        return entry
