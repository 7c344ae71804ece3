"""A run's progress: DIR/progress.json (the scheduler copies it into the request) and a tqdm bar in the log.

progress.json: {"benchmark", "stage" ("loading" | "answering" | "grading"), "done", "total" (null while loading),
"benchmark_index" (1-based), "benchmarks" (how many the run has), "requests" ({"done", "total"}: the answering
stage's model requests, reported as each batch is answered, so the count moves inside a chunk of items; null in other
stages), "rate" (items/s over the last WINDOW_S seconds of updates, measured on the requests where they are counted;
null until two updates exist), "eta_s" (remaining / rate; null when unknown), "at" (ISO UTC time of the write),
"resumed": {"reused": items filled from earlier attempts' responses, "items": items planned, both over the benchmarks
planned so far}}. The log gets one tqdm line per printed state: a stage's first, then at most one per BAR_INTERVAL_S,
and its last when it closes.
"""
from __future__ import annotations

import json
import sys
import time
from collections import deque
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from evaluator.run_files import utc_now, write_atomic

LOADING, ANSWERING, GRADING = "loading", "answering", "grading"
WINDOW_S = 60.0  # the rate is measured over the updates of the last minute
MIN_INTERVAL_S = 0.5  # updates closer than this are not all written (a stage's first, a new total, the last are)
BAR_INTERVAL_S = 1.0  # the log's tqdm line is printed at most this often (a new total and the closing line aside)


def window_rate(points: deque, window: float = WINDOW_S) -> float | None:
    """Items per second between the oldest and newest (time, done) point, the oldest kept being the last one at or
    before `window` seconds ago (so a slow stage keeps a rate); None for fewer than two points."""
    while len(points) > 2 and points[1][0] <= points[-1][0] - window:
        points.popleft()
    if len(points) < 2 or points[-1][0] <= points[0][0]:
        return None
    return max(0.0, (points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0]))


class Progress:
    """Writes DIR/progress.json and drives a tqdm bar per benchmark and counting stage ("answering", "grading").

    A benchmark goes start(name, LOADING) (written at once, no total yet), planned(reused, items), then
    start(name, ANSWERING) and maybe start(name, GRADING); a counting stage is written at its first update, which
    always carries its total, and every update whose total changed or that finishes the stage is written too."""

    def __init__(self, out_dir: Path, benchmarks: tuple[str, ...], clock: Callable[[], float] = time.monotonic):
        self.path = out_dir / "progress.json"
        self.benchmarks = tuple(benchmarks)
        self.clock = clock
        self.bar: tqdm | None = None
        self.name = ""
        self.stage = ""
        self.total: int | None = None
        self.requests: tuple[int, int] | None = None  # (answered, planned) model requests of the answering stage
        self.base = 0  # items done at the stage's first update (reused ones): the requests cover the rest
        self.points: deque = deque()  # (time, requests answered) where requests are counted, else (time, items done)
        self.first = True  # the stage's next write is its first
        self.last_write = 0.0
        self.last_print = 0.0
        self.reused = 0
        self.items = 0

    def start(self, name: str, stage: str) -> None:
        """Begin a stage of a benchmark; "loading" is written at once, a counting stage at its first update."""
        self.close()
        self.name, self.stage, self.total, self.requests, self.first = name, stage, None, None, True
        self.points.clear()
        if stage == LOADING:
            self._write(0, None)

    def planned(self, reused: int, items: int) -> None:
        """A benchmark's plan: `items` items, `reused` of them answered by earlier attempts (the journal)."""
        self.reused += int(reused)
        self.items += int(items)

    def update(self, done: int, total: int, force: bool = False, requests: tuple[int, int] | None = None) -> None:
        """The stage's count: `done` of `total` items and, while answering, (answered, planned) model requests."""
        now = self.clock()
        if self.first:
            self.base = done
        changed = total != self.total
        self.total, self.requests = total, requests
        self.points.append((now, done if requests is None else requests[0]))
        self._show(done, total, changed, now)
        if not (force or self.first or changed or done >= total) and now - self.last_write < MIN_INTERVAL_S:
            return
        self._write(done, total)

    def _show(self, done: int, total: int, changed: bool, now: float) -> None:
        """The log's tqdm line: printed when the bar opens, when the total changes and at most once per
        BAR_INTERVAL_S; a finished count is left to close(), which prints it once."""
        if self.stage == LOADING:
            return
        counted = f"{self.requests[0]}/{self.requests[1]} requests" if self.requests is not None else ""
        if self.bar is None:
            self.bar = tqdm(total=total, initial=done, desc=f"{self.name} {self.stage}", unit="item", file=sys.stdout,
                            mininterval=BAR_INTERVAL_S, ascii=True, postfix=counted or None)
            self.last_print = now
            return
        self.bar.total, self.bar.n = total, done
        if counted:
            self.bar.set_postfix_str(counted, refresh=False)
        if changed or (done < total and now - self.last_print >= BAR_INTERVAL_S):
            self.bar.refresh()
            self.last_print = now

    def _rates(self, done: int, total: int | None) -> tuple[float | None, float | None]:
        """(items/s, seconds left) over the window: from the requests where they are counted, else the items."""
        rate = window_rate(self.points)
        if rate is None or total is None:
            return rate, None
        if self.requests is None:
            per_point, left = 1.0, total - done
        else:
            answered, planned = self.requests
            per_point, left = ((total - self.base) / planned if planned > 0 else 0.0), planned - answered
        return rate * per_point, (left / rate if rate and left >= 0 else None)

    def _write(self, done: int, total: int | None) -> None:
        self.first, self.last_write = False, self.clock()
        rate, eta = self._rates(done, total)
        requests = None if self.requests is None else {"done": self.requests[0], "total": self.requests[1]}
        state = {"benchmark": self.name, "stage": self.stage, "done": done, "total": total,
                 "benchmark_index": self.benchmarks.index(self.name) + 1 if self.name in self.benchmarks else 0,
                 "benchmarks": len(self.benchmarks), "requests": requests,
                 "rate": None if rate is None else round(rate, 3),
                 "eta_s": None if eta is None else round(eta, 1),
                 "at": utc_now(),
                 "resumed": {"reused": self.reused, "items": self.items}}
        write_atomic(self.path, json.dumps(state).encode())

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
