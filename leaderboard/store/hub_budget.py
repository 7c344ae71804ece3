"""The commit budget of each Hub repo, one for every writer (the Space, its workers, every Job): how many commits the
repo received in the last hour, read from the repo's own history.

The Hub allows about 128 commits per repo per hour. The history listing (one call, its newest commits with their
dates) says how many landed within the window, whoever made them; the store keeps that count exact afterwards with
its own commits, as long as each lands on the commit the history was read at (or on its own previous one). A commit
by anyone else makes the cached history stale, and the next commit reads it again.

A squash of the history (HubStore.squash_history) would hide the hour's commits from the other writers' next
reading: its commit message carries their times (`squash_message`), and `recent_times` reads them back.
"""
from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

SQUASH_TITLE = "Squash the history"
_TIMES = re.compile(r"commits in the hour before: ([0-9, ]*)")


def squash_message(times: list[float]) -> str:
    """The message of a squash commit: a title, then the times (epoch seconds) of the commits of the last hour."""
    return f"{SQUASH_TITLE} (the leaderboard's store)\n\ncommits in the hour before: " + \
        ", ".join(str(int(t)) for t in sorted(times))


def recent_times(commits: list[tuple[float, str]], since: float) -> list[float]:
    """The times after `since` of a history listing's commits ((time, title + message) newest first), with those a
    squash commit carries."""
    found = []
    for at, text in commits:
        if text.startswith(SQUASH_TITLE):
            match = _TIMES.search(text)
            found += [float(t) for t in (match.group(1).split(",") if match else []) if t.strip()]
        found.append(at)
    return sorted(t for t in found if t > since)


@dataclass
class History:
    """What the store knows of a repo's commits: the commit its knowledge ends at, the times of the commits within
    the window (oldest first), and the branch's length."""

    head: str
    times: list[float] = field(default_factory=list)
    total: int = 0


class CommitBudget:
    """Commits per repo within a rolling `window` (seconds), at most `budget`; a writer that must not wait stops
    `reserve` commits short of it, so background work (closing an evaluation) keeps room. `clock`: epoch seconds."""

    def __init__(self, budget: int, window: float = 3600.0, reserve: int | None = None,
                 clock: Callable[[], float] = time.time):
        if budget < 1:
            raise ValueError("the commit budget must be at least 1")
        self.budget, self.window, self.clock = budget, window, clock
        self.reserve = max(1, budget // 10) if reserve is None else reserve
        self._histories: dict[str, History] = {}
        self._in_flight: dict[str, int] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------------------ knowledge

    def knows(self, repo: str, head: str | None) -> bool:
        """Whether the cached history of `repo` ends at `head` (nothing landed since that the store did not see)."""
        with self._lock:
            history = self._histories.get(repo)
            return history is not None and head is not None and history.head == head

    def learn(self, repo: str, head: str, commits: list[tuple[float, str]], total: int) -> None:
        """A history listing read at `head`: its commits (time, text), newest first, and the branch's length. The
        branch's first commit made the repo (or is a squash): it is not counted, the times a squash carries are."""
        commits = list(commits)
        if commits and len(commits) >= total:
            commits[-1] = (float("-inf"), commits[-1][1])
        with self._lock:
            self._histories[repo] = History(head, recent_times(commits, self.clock() - self.window), total)

    def forget(self, repo: str) -> None:
        with self._lock:
            self._histories.pop(repo, None)

    def total(self, repo: str) -> int | None:
        """The branch's length as last known (None: never read)."""
        with self._lock:
            history = self._histories.get(repo)
            return None if history is None else history.total

    def times(self, repo: str) -> list[float]:
        """The times of the commits within the window, as last known."""
        with self._lock:
            history = self._histories.get(repo)
            return [] if history is None else self._recent(history)

    def _recent(self, history: History) -> list[float]:
        since = self.clock() - self.window
        history.times = [t for t in history.times if t > since]
        return list(history.times)

    # ------------------------------------------------------------------------------------------------ commits

    def wait(self, repo: str, waiting: bool = True) -> float:
        """Seconds until one more commit to `repo` keeps within the budget (0: now; it is then counted in flight
        until `landed` or `released`). `waiting=False`: a writer that will not wait, held `reserve` short."""
        with self._lock:
            history = self._histories.get(repo)
            times = self._recent(history) if history is not None else []
            limit = self.budget if waiting else max(1, self.budget - self.reserve)
            used = len(times) + self._in_flight.get(repo, 0)
            if used < limit:
                self._in_flight[repo] = self._in_flight.get(repo, 0) + 1
                return 0.0
            if not times:  # only commits in flight: they land in seconds
                return 1.0
            over = used - limit  # the commits that must leave the window first
            return max(1.0, times[min(over, len(times) - 1)] + self.window - self.clock())

    def released(self, repo: str) -> None:
        """A counted commit did not land."""
        with self._lock:
            self._in_flight[repo] = max(0, self._in_flight.get(repo, 0) - 1)

    def landed(self, repo: str, parent: str | None, head: str) -> None:
        """A counted commit landed as `head` on `parent`: the history stays exact when it ended at `parent`."""
        with self._lock:
            self._in_flight[repo] = max(0, self._in_flight.get(repo, 0) - 1)
            history = self._histories.get(repo)
            if history is None:
                return
            if parent is not None and history.head == parent:
                history.head, history.total = head, history.total + 1
                history.times.append(self.clock())
            else:  # someone else's commits may sit between: keep the count (a floor), read it again before the next
                history.head = ""
                history.times.append(self.clock())

    def squashed(self, repo: str, head: str) -> None:
        """The branch became one commit, `head` (its message carries the window's times)."""
        with self._lock:
            history = self._histories.get(repo)
            times = self._recent(history) if history is not None else []
            self._histories[repo] = History(head, times, 1)


def minutes(seconds: float) -> int:
    """Whole minutes, rounded up, at least 1: what a person is told to wait."""
    return max(1, math.ceil(seconds / 60))
