"""A run's progress: DIR/progress.json (the scheduler copies it into the request) and a tqdm bar in the log.

progress.json: {"benchmark", "stage" ("loading" | "answering" | "grading"), "done", "total" (null while loading),
"benchmark_index" (1-based), "benchmarks" (how many the run has), "requests" ({"done", "total"}: the answering
stage's model requests, reported as each batch is answered, so the count moves inside a chunk of items; null in other
stages), "unit" ("requests" where they are counted, else "items": the unit of "rate" and "eta_s"), "rate" (units per
second, 1 / the pace below; null until the count moved), "eta_s" (seconds left; null until it rests on enough of
the stage), "eta_sure" (the pace is steady: the Queue shows "ETA 0:33", else "ETA ~4 min"), "at" (ISO UTC time of
the write), "moved_at" (ISO UTC time the count, done or requests, last moved; a stage's first count is a move),
"resumed": {"reused": items filled from earlier attempts' responses, "items": items planned, both over the
benchmarks planned so far}}. The log gets one tqdm line per printed state: a stage's first, then at most one per
BAR_INTERVAL_S, and its last when it closes.

The ETA's rule. The pace is the seconds per unit over the later half of what the stage has counted so far: from the
last count at or before that half-way mark up to now. A slow start (a warm-up, a first batch that waits for the
model) drops out of it as the stage goes on, and the window grows with the stage, so fast and slow batches average
out instead of swinging the estimate. eta_s = units left x pace. It is given once the stage has counted SHOW_SHARE of
its units (at least SHOW_MIN, at most SHOW_MAX) over SHOW_SECONDS or more, and only while the window's two halves
(the last two quarters counted, each with a move) ran at paces within a factor SHOW_STEADY of each other (else the
pace is changing and no estimate is honest); it is sure when they are within a factor STEADY.
"""
from __future__ import annotations

import json
import sys
import time
from collections import deque
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from evaluator.runs.files import utc_now, write_atomic

LOADING, ANSWERING, GRADING = "loading", "answering", "grading"
MIN_INTERVAL_S = 0.5  # updates closer than this are not all written (a stage's first, a new total, the last are)
BAR_INTERVAL_S = 1.0  # the log's tqdm line is printed at most this often (a new total and the closing line aside)
SHOW_SHARE, SHOW_MIN, SHOW_MAX = 0.1, 5, 200  # an ETA rests on 10 % of the stage's units, at least 5, at most 200
SHOW_SECONDS = 10.0  # ... counted over this many seconds or more
SHOW_STEADY = 2.0  # ... while the last two quarters' paces are within this factor of each other
STEADY = 1.25  # sure: those paces are within this factor of each other


def later_half_pace(points: deque, start: int, count: int, now: float) -> tuple[float | None, float | None]:
    """(seconds per unit over the later half, the pace of its first half / that of its second) from a stage's
    (time, count) points at each move (the first: the stage's start, at count `start`), for `count` at `now`.
    Points older than the window are dropped. (None, None) before the count moved; the ratio is None while either
    half of the window has no move in it."""
    if count <= start:
        return None, None
    while len(points) > 1 and points[1][1] <= start + (count - start) / 2:
        points.popleft()
    since, counted = points[0]
    if now <= since or count <= counted:
        return None, None
    seconds = (now - since) / (count - counted)
    middle = [p for p in points if p[1] <= start + 3 * (count - start) / 4][-1]
    if not (counted < middle[1] < count and since < middle[0] < now):
        return seconds, None
    return seconds, ((middle[0] - since) / (middle[1] - counted)) / ((now - middle[0]) / (count - middle[1]))


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
        self.points: deque = deque()  # (time, count) at the stage's start and each move: requests where counted
        self.start_at = 0.0  # the stage's first update: its time and its count
        self.start_count = 0
        self.counted = (0, None)  # the last update's (done, requests): a change is a move
        self.moved_at = ""
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
            self.moved_at = utc_now()
            self._write(0, None)

    def planned(self, reused: int, items: int) -> None:
        """A benchmark's plan: `items` items, `reused` of them answered by earlier attempts (the journal)."""
        self.reused += int(reused)
        self.items += int(items)

    def update(self, done: int, total: int, force: bool = False, requests: tuple[int, int] | None = None) -> None:
        """The stage's count: `done` of `total` items and, while answering, (answered, planned) model requests."""
        now = self.clock()
        requests = None if requests is None else (int(requests[0]), int(requests[1]))
        count = done if requests is None else requests[0]
        if self.first or (requests is None) != (self.requests is None):  # a stage's count (or its unit) begins
            self.points, self.start_at, self.start_count = deque([(now, count)]), now, count
            self.moved_at = utc_now()
        elif (done, requests) != self.counted:
            self.moved_at = utc_now()
            if count > self.points[-1][1]:
                self.points.append((now, count))
        self.counted = (done, requests)
        changed = total != self.total
        self.total, self.requests = total, requests
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

    def _estimate(self, done: int, total: int | None) -> tuple[float | None, float | None, bool]:
        """(units per second, seconds left, sure) by the module's rule; the units are requests where counted."""
        if total is None or self.first:
            return None, None, False
        now = self.clock()
        count, whole = (done, total) if self.requests is None else self.requests
        seconds, ratio = later_half_pace(self.points, self.start_count, count, now)
        if seconds is None:
            return None, None, False
        rate = 1 / seconds if seconds > 0 else None
        enough = min(max(SHOW_SHARE * (whole - self.start_count), SHOW_MIN), SHOW_MAX)
        if rate is None or ratio is None or not 1 / SHOW_STEADY <= ratio <= SHOW_STEADY or whole < count \
                or count - self.start_count < enough or now - self.start_at < SHOW_SECONDS:
            return rate, None, False
        return rate, (whole - count) * seconds, 1 / STEADY <= ratio <= STEADY

    def _write(self, done: int, total: int | None) -> None:
        rate, eta, sure = self._estimate(done, total)
        self.first, self.last_write = False, self.clock()
        requests = None if self.requests is None else {"done": self.requests[0], "total": self.requests[1]}
        state = {"benchmark": self.name, "stage": self.stage, "done": done, "total": total,
                 "benchmark_index": self.benchmarks.index(self.name) + 1 if self.name in self.benchmarks else 0,
                 "benchmarks": len(self.benchmarks), "requests": requests,
                 "unit": "items" if self.requests is None else "requests",
                 "rate": None if rate is None else round(rate, 3),
                 "eta_s": None if eta is None else round(eta, 1), "eta_sure": sure,
                 "at": utc_now(), "moved_at": self.moved_at,
                 "resumed": {"reused": self.reused, "items": self.items}}
        write_atomic(self.path, json.dumps(state).encode())

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
