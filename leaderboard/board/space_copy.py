"""The Space's copy of the board (leaderboard.parquet: the store's listing of finished runs), read again at most every
`ttl` seconds and shared by the tabs.

Visitors name runs (the explorer's API, the board's per-run sections); a run that is not on the board is answered
from this copy, so naming unknown runs costs no store read per call (on the Hub store, no Hub request with the
Space's token per anonymous call): a name the copy lacks makes it read the board again only when the copy is older
than `recheck` seconds, so a run published a moment ago is found, and a flood of unknown names reads the board at
most once per `recheck` seconds. A copy that cannot be read again keeps the last one it had.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

import pandas as pd

from leaderboard.board.columns import Schema
from leaderboard.board.file import load_board
from leaderboard.store import Store

log = logging.getLogger(__name__)

BOARD_SECONDS = 10.0  # how long the copy answers before the board is read again
RECHECK_SECONDS = 2.0  # a name the copy lacks reads the board again once the copy is this old


class BoardCopy:
    """The board as of a read at most `ttl` seconds ago; `generation` changes with each read."""

    def __init__(self, store: Store, schema: Schema, ttl: float = BOARD_SECONDS, recheck: float = RECHECK_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.store, self.schema, self.ttl, self.recheck, self._clock = store, schema, ttl, recheck, clock
        self._frame: pd.DataFrame | None = None
        self._keys: frozenset[str] = frozenset()
        self._at: float | None = None
        self._lock = threading.Lock()
        self.generation = 0  # reads so far

    def frame(self, max_age: float | None = None) -> pd.DataFrame | None:
        """The raw board frame, read at most `max_age` (default: ttl) seconds ago; None until a read succeeded."""
        with self._lock:
            now = self._clock()
            if self._at is None or now - self._at >= (self.ttl if max_age is None else max_age):
                self._at, self.generation = now, self.generation + 1
                try:
                    self._frame = load_board(self.store, self.schema)
                    self._keys = frozenset(str(k) for k in self._frame.get("key", pd.Series(dtype=object)))
                except Exception as exc:  # noqa: BLE001 - a store outage keeps the last copy
                    log.warning("the board could not be read (%s: %s); keeping the last copy", type(exc).__name__,
                                str(exc)[:200])
            return self._frame

    def keys(self) -> frozenset[str]:
        """The keys of the runs on the board."""
        self.frame()
        with self._lock:
            return self._keys

    def has(self, key: str) -> bool:
        """Whether run `key` is on the board (read again for a key it lacks once the copy is `recheck` old)."""
        if key in self.keys():
            return True
        self.frame(max_age=self.recheck)
        with self._lock:
            return key in self._keys
