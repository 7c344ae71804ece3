"""What a queued run will probably take, from the earlier runs on the board (leaderboard.parquet's cost columns), and
when a pending request will probably start.

The estimate of a request is the median run time (GPU hours, or wall time on a CPU: the hardware is always the same
as the request's) and the median cost of the earlier runs that compare with it:
- their cost was recorded (a run published before costs were recorded never counts, as 0 or otherwise);
- the same suite, item limit and benchmarks (those the run has results of, and those it skipped) as this Space's
  settings;
- the same hardware: with hf-jobs the flavor the request's Job will get (job_flavors.flavor_for: size and
  precision); on the local executor this machine's, as its latest local run recorded it (the CPU with
  LEADERBOARD_DEVICE=cpu);
- a model within a factor of 2 in size (SIZE_FACTOR); a served request is compared with earlier served runs, of
  any size, by their tokens and cost (a served model uses no GPU time);
- a model that takes images as this one does, where its architecture tells and the Space runs a benchmark with
  images: a text model skips those benchmarks, so its run is compared with text models' runs only.
It says how many runs it rests on; with none, there is no estimate yet.

A pending request's expected start adds up the estimates of the requests ahead of it in the queue that run where it
will (the Jobs: LEADERBOARD_JOBS_MAX at once; the Space's own worker: one at a time), from when the runs now running
end; it is unknown when one of them has no time estimate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from evaluator import api
from leaderboard.board.columns import COST_RECORDED, Schema
from leaderboard.board.score_cells import ran
from leaderboard.formatting import as_float, format_billions, format_number, money
from leaderboard.running.job_flavors import TooLarge
from leaderboard.running.run_memory import planned_flavor
from leaderboard.settings import Settings
from leaderboard.store import DamagedFile, parse_json
from leaderboard.submissions import records as q
from leaderboard.submissions.views import duration_text

SIZE_FACTOR = 2.0  # earlier runs of models this many times smaller to this many times larger compare
SERVED = "served"  # the hardware of a served run (its cost column says so)
NO_ESTIMATE = "no estimate yet"


@dataclass(frozen=True)
class Estimate:
    """Medians over the `runs` earlier runs that compare (None: none of them recorded that value)."""

    runs: int = 0
    seconds: float | None = None
    usd: float | None = None
    prompt_tokens: float | None = None
    completion_tokens: float | None = None
    served: bool = False
    hardware: str | None = None  # where the request will run
    looked_for: str = ""  # which earlier runs compare, in words: "{s}" the plural's "s", "{a}" the singular's "a "

    def sentence(self) -> str:
        """The Submit tab's words: what the run will probably take, and what it rests on."""
        if not self.runs:
            return f"No estimate yet of its time and cost: no earlier {self._looked_for(1)}."
        parts = self._parts(long=True) or ["no time or cost was recorded"]
        runs = self._looked_for(self.runs)
        return f"Estimate: {' and '.join(parts)} (the median of {self.runs} earlier {runs})."

    def _looked_for(self, count: int) -> str:
        return self.looked_for.replace("{s}", "" if count == 1 else "s").replace("{a}", "a " if count == 1 else "")

    def cell(self) -> str:
        """The Queue's words: "0:44 · $0.01 (3 runs)", or "no estimate yet"."""
        if not self.runs:
            return NO_ESTIMATE
        parts = self._parts(long=False) or ["not recorded"]
        return f"{' · '.join(parts)} ({self.runs} run{'s' if self.runs != 1 else ''})"

    def _parts(self, long: bool) -> list[str]:
        parts = []
        if self.served and self.prompt_tokens is not None and self.completion_tokens is not None:
            parts.append(f"{'about ' if long else ''}{format_number(self.prompt_tokens)} prompt + "
                         f"{format_number(self.completion_tokens)} completion tokens")
        if not self.served and self.seconds is not None:
            where = f" on {self.hardware}" if long and self.hardware else ""
            parts.append(f"{'about ' if long else ''}{duration_text(self.seconds)}{where}")
        if self.usd is not None:
            parts.append(f"{'about ' if long else ''}{money(self.usd)}")
        return parts


def _benchmarks(raw: pd.DataFrame, schema: Schema) -> pd.Series:
    """Each run's benchmarks: those it has results of and those it skipped, as a frozenset."""
    has = {card.name: ran(raw, schema, card.name) for card in schema.cards}

    def skipped(text) -> set[str]:
        try:
            found = parse_json(text) if isinstance(text, str) and text else {}
        except DamagedFile:
            return set()
        return {str(name) for name in found} if isinstance(found, dict) else set()

    listed = raw["skipped"] if "skipped" in raw else pd.Series([None] * len(raw), index=raw.index)
    return pd.Series([frozenset({name for name, mask in has.items() if mask[i]} | skipped(listed[i]))
                      for i in raw.index], index=raw.index, dtype=object)


def comparable(settings: Settings, schema: Schema, raw: pd.DataFrame | None) -> pd.DataFrame:
    """The earlier runs with a recorded cost that ran this Space's suite, limit and benchmarks."""
    if raw is None or len(raw) == 0 or COST_RECORDED not in raw:
        return pd.DataFrame(columns=list(raw.columns) if raw is not None else [])
    runs = raw[raw[COST_RECORDED].notna()]
    limit = runs["limit"].map(as_float).fillna(0.0).clip(lower=0.0) if "limit" in runs else 0.0
    runs = runs[(runs["suite"] == settings.suite) & (limit == float(max(settings.limit, 0)))]
    if len(runs) == 0:
        return runs
    return runs[_benchmarks(runs, schema) == frozenset(settings.benchmarks)]


def local_hardware(settings: Settings, raw: pd.DataFrame | None) -> str | None:
    """This machine's hardware as the local executor's runs recorded it: the CPU with LEADERBOARD_DEVICE=cpu, else
    that of its latest local run of a model (None: it has none yet)."""
    if settings.device == "cpu":
        return "cpu"
    if raw is None or len(raw) == 0 or COST_RECORDED not in raw:
        return None
    local = raw[(raw[COST_RECORDED] == "local") & (raw["cost_flavor"].notna()) & (raw["cost_flavor"] != SERVED)]
    if len(local) == 0:
        return None
    latest = local.sort_values("finished_time", na_position="first", kind="stable").iloc[-1]
    return str(latest["cost_flavor"])


def where_it_runs(settings: Settings, request: q.Request, raw: pd.DataFrame | None) -> tuple[str, str | None]:
    """(executor, hardware) the request will run on; hardware None when it cannot be known yet."""
    if request.served:  # a served model runs on the Space itself, whatever the executor
        return "local", SERVED
    if settings.executor == "hf-jobs":
        try:
            return "hf-jobs", planned_flavor(settings, request)[0]
        except (TooLarge, ValueError):
            return "hf-jobs", None
    return "local", local_hardware(settings, raw)


def _median(values: pd.Series) -> float | None:
    found = pd.to_numeric(values, errors="coerce").dropna() if len(values) else values
    return float(found.median()) if len(found) else None


def estimate(settings: Settings, schema: Schema, request: q.Request, raw: pd.DataFrame | None,
             runs: pd.DataFrame | None = None) -> Estimate:
    """What `request` will probably take, from the board's earlier runs (`raw`: the raw board frame; `runs`: its
    comparable() rows, when the caller has them already)."""
    runs = comparable(settings, schema, raw) if runs is None else runs
    executor, hardware = where_it_runs(settings, request, raw)
    size = as_float(request.params_billions)
    if request.served:
        looked_for = "served run{s} with the same suite and benchmarks"
    elif hardware is None:
        looked_for = ("run{s} on this machine" if executor == "local" else "run{s} on hardware that fits this model") \
            + " with the same suite and benchmarks"
    else:
        low, high = format_billions(size / SIZE_FACTOR), format_billions(size * SIZE_FACTOR)  # as Params (B) shows
        sizes = "a known size" if math.isnan(size) else f"under {high[1:]} B" if high.startswith("<") \
            else f"{low}-{high} B"
        looked_for = f"run{{s}} of {{a}}model{{s}} of {sizes} on {hardware} with the same suite and benchmarks"
    base = Estimate(served=request.served, hardware=hardware, looked_for=looked_for)
    if hardware is None or len(runs) == 0:
        return base
    same = runs[(runs[COST_RECORDED] == executor) & (runs["cost_flavor"] == hardware)]
    if not request.served:
        if math.isnan(size) or size <= 0:
            return base
        params = same["params_billions"].map(as_float)
        same = same[(params >= size / SIZE_FACTOR) & (params <= size * SIZE_FACTOR)]
        same = _taking_images_as(same, schema, settings, api.architecture_has_vision(request.architecture))
    if len(same) == 0:
        return base
    seconds = _median(same["gpu_hours"].fillna(same["cpu_hours"]))
    return Estimate(runs=len(same), seconds=None if seconds is None else seconds * 3600, usd=_median(same["cost_usd"]),
                    prompt_tokens=_median(same["prompt_tokens"]), completion_tokens=_median(same["completion_tokens"]),
                    served=request.served, hardware=hardware, looked_for=looked_for)


def _taking_images_as(runs: pd.DataFrame, schema: Schema, settings: Settings, vision: bool | None) -> pd.DataFrame:
    """The runs whose image benchmarks ran (`vision`) or were skipped (not `vision`), judged on the first benchmark
    with images this Space runs; all of them when `vision` is None or it runs none."""
    images = [card.name for card in schema.cards if card.needs_images and card.name in settings.benchmarks]
    if vision is None or not images or len(runs) == 0:
        return runs
    return runs[ran(runs, schema, images[0]) == vision]


def _lane(settings: Settings, request: q.Request) -> tuple[str, int]:
    """Where a pending request waits and how many run there at once: the Jobs, or the Space's own worker."""
    if settings.executor == "hf-jobs" and not request.served:
        return "jobs", max(1, settings.jobs_max)
    return "space", 1


def queue_estimates(settings: Settings, schema: Schema, requests: Iterable[q.Request],
                    raw: pd.DataFrame | None) -> dict[str, tuple[str, str]]:
    """Pending request key -> (its estimate, its expected start), as the Queue's cells."""
    runs = comparable(settings, schema, raw)
    pending = sorted((r for r in requests if r.status == q.PENDING), key=lambda r: (r.submitted_time or "", r.path))
    ahead: dict[str, float | None] = {}  # lane -> seconds of the requests ahead so far (None: one has no estimate)
    found = {}
    for request in pending:
        guess = estimate(settings, schema, request, raw, runs)
        lane, parallel = _lane(settings, request)
        if lane not in ahead:
            start = "next"
        elif ahead[lane] is None:
            start = "unknown"
        else:
            start = f"in about {duration_text(ahead[lane] / parallel)}"
        found[request.key] = (guess.cell(), start)
        seconds = guess.seconds if guess.runs and not request.served else None
        ahead[lane] = None if seconds is None or ahead.get(lane, 0.0) is None else ahead.get(lane, 0.0) + seconds
    return found
