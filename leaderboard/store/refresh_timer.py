"""A timer that keeps a store's picture of its files current, so that what a visitor's page reads is never more than a
few seconds old and no page ever asks the Hub itself.

Every `seconds` it calls `store.refresh(max_age=seconds)` (a repo the scheduler's tick checked meanwhile is not asked
again). A 429 is waited out (the seconds the Hub asked for); any other failure is logged and the next round tries
again. `warm`, when given, runs once first: it reads what the pages read (the queue, the board), so that the first
visitor finds it held.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

from leaderboard.store.interface import Store

log = logging.getLogger(__name__)


class RefreshTimer:
    """Refreshes `store` every `seconds` on a daemon thread until stop()."""

    def __init__(self, store: Store, seconds: float, warm: Callable[[], object] | None = None):
        self.store, self.seconds, self.warm = store, seconds, warm
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="store-refresh", daemon=True)
        self.rounds = 0  # refreshes done (for tests)

    def start(self) -> "RefreshTimer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)

    def _run(self) -> None:
        if self.warm is not None:
            self._guarded(self.warm)
        while not self._stop.wait(self.seconds):
            self._guarded(lambda: self.store.refresh(max_age=self.seconds))
            self.rounds += 1

    def _guarded(self, step: Callable[[], object]) -> None:
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - an outage: the pages keep what they had, the next round tries
            wait = getattr(exc, "retry_after", None)
            log.warning("the store could not be refreshed (%s)%s", str(exc)[:300],
                        f"; waiting {wait:.0f} s as the Hub asked" if wait else "")
            if wait:
                self._stop.wait(wait)
