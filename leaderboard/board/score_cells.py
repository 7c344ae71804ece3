"""What a board cell says beyond its value: a score's 95% interval ("55.6 ± 11.2", and on hover the interval, n,
standard error and method), whether a missing score is undefined (n/a) or was not run, a sample suite's nature, a
lite suite's rule and size beside the full suite's, and the line above the first row of a group.
leaderboard.board.frames draws the tables with these."""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

import pandas as pd

from evaluator import api
from leaderboard.board.columns import COST_RECORDED, INTERVAL, NUMBER, SCORE, Column, Schema, interval_name
from leaderboard.formatting import as_float, escape_markdown, format_measure, format_score

SAMPLE = "sample"  # the suite of the project's own drawn items
SAMPLE_SHOWN = "sample (synthetic)"  # how the board names it
LITE = api.LITE  # a seeded, stratified subset of each full suite (its rule's version: the lite_rule column)
NOT_RUN = "not run"  # a score of a benchmark the run did not run (skipped, or not asked for); n/a: undefined
SEPARATOR = "border-top: 3px solid var(--body-text-color-subdued);"  # the first row of a group


def ran(raw: pd.DataFrame, schema: Schema, benchmark: str) -> pd.Series:
    """Which runs have results of `benchmark` (any of its columns has a value)."""
    names = [c.name for c in schema.benchmark_columns(benchmark) if c.name in raw]
    if not names:
        return pd.Series(False, index=raw.index)
    return raw[names].notna().any(axis=1)


@dataclass(frozen=True)
class Cells:
    """What one row's cells say beyond their values: its rank's group and worst place, whether its cost was recorded,
    its suite (and a lite run's rule), each score's interval by column name (low, high, n, stderr, method) and the
    benchmarks it ran, and whether it starts a group."""

    group: str = ""
    worst: float = math.nan
    recorded: bool = True
    suite: str = ""
    lite_rule: str = ""
    intervals: dict = field(default_factory=dict)
    ran: frozenset = frozenset()
    group_start: bool = False


def interval_of(rows: pd.DataFrame, column: str) -> list[tuple | None]:
    """Each row's interval of a score column as (low, high, n, stderr, method); None where it has none."""
    names = [interval_name(column, part) for part in ("low", "high", "n", "stderr", "method")]
    if names[0] not in rows:
        return [None] * len(rows)
    found = []
    for low, high, n, stderr, method in zip(*(rows[name] if name in rows else [None] * len(rows) for name in names)):
        low, high = as_float(low), as_float(high)
        found.append(None if math.isnan(low) or math.isnan(high)
                     else (low, high, as_float(n), as_float(stderr), method if isinstance(method, str) else ""))
    return found


def row_cells(rows: pd.DataFrame, schema: Schema, cols: list[Column]) -> list[Cells]:
    """Each row's Cells, for the columns shown."""
    scores = {c.interval_of if c.kind == INTERVAL else c.name for c in cols
              if c.kind == INTERVAL or (c.kind in (SCORE, NUMBER) and is_score(c, schema))}
    intervals = {name: interval_of(rows, name) for name in scores}
    ran_by = {card.name: ran(rows, schema, card.name).tolist() for card in schema.cards} if len(rows) else {}
    column = (lambda name, default: rows[name].tolist() if name in rows else [default] * len(rows))
    recorded = rows[COST_RECORDED].notna().tolist() if COST_RECORDED in rows else [False] * len(rows)
    out = []
    for i, (group, worst, suite, rule, start) in enumerate(zip(
            column("rank_group", ""), column("rank_worst", math.nan), column("suite", ""), column("lite_rule", ""),
            column("group_start", False))):
        out.append(Cells(group=str(group or ""), worst=as_float(worst), recorded=recorded[i],
                         suite=suite if isinstance(suite, str) else "",
                         lite_rule=rule if isinstance(rule, str) else "",
                         intervals={name: found[i] for name, found in intervals.items() if found[i] is not None},
                         ran=frozenset(name for name, flags in ran_by.items() if flags[i]), group_start=bool(start)))
    return out


def is_score(c: Column, schema: Schema) -> bool:
    """A score with an interval: the overall score or a benchmark's metric (not its coverage or counts)."""
    return not c.interval_of and (c.name == "overall" or (schema.card(c.group) is not None
                                                          and not c.name.endswith("_coverage")))


def _value(c: Column, value: float) -> str:
    """A score or a number of a benchmark as the board shows it."""
    return format_score(value) if c.kind == SCORE else format_measure(value)


def interval_text(score: Column, interval: tuple | None) -> str:
    """A score's 95% interval and n as text, on its board scale ("45.0-67.3 (n 20)"); "" without one."""
    if interval is None:
        return ""
    low, high, n = interval[:3]
    return f"{_value(score, low)}-{_value(score, high)}" + (f" (n {int(n)})" if not math.isnan(n) else "")


@lru_cache(maxsize=1)
def lite_sizes() -> dict[str, tuple[int, int]]:
    """Each benchmark's lite suite's size and its full suite's, by the current rule (api.expected_widths)."""
    return {w.benchmark: (w.lite_items, w.full_items) for w in api.expected_widths()}


def lite_text(rule: str, benchmarks: Iterable[str]) -> str:
    """A lite row's suite in words: "lite (lite-v1: 500 items of the full suite's 1,622)" for one benchmark, each
    benchmark's sizes by its short title for several; a rule other than this Space's names itself alone (its sizes are
    not known here), and a missing one says so."""
    if not rule:
        return f"{LITE} (its rule not recorded)"
    if rule != api.LITE_RULE:
        return f"{LITE} ({rule}, not this Space's {api.LITE_RULE}: its sizes are not known here)"
    sizes = [(name, *lite_sizes()[name]) for name in benchmarks if name in lite_sizes()]
    if not sizes:
        return f"{LITE} ({rule}: a seeded, stratified subset of each benchmark's full suite)"
    if len(sizes) == 1:
        return f"{LITE} ({rule}: {sizes[0][1]:,} items of the full suite's {sizes[0][2]:,})"
    listed = "; ".join(f"{api.card(name).short_title} {n:,} items of the full suite's {m:,}" if i == 0 else
                       f"{api.card(name).short_title} {n:,} of {m:,}" for i, (name, n, m) in enumerate(sizes))
    return f"{LITE} ({rule}: {listed})"


def suite_note(suite: str, rule: str = "", benchmarks: Iterable[str] = ()) -> str:
    """What a row's suite is, for a hover title: a sample suite's nature, a lite suite's rule and sizes (of
    `benchmarks`), nothing for the full suite."""
    if suite == SAMPLE:
        return f"suite: {SAMPLE_SHOWN}, the project's own drawn items, not the paper's data"
    if suite == LITE:
        return f"suite: {lite_text(rule, benchmarks)}"
    return ""


def score_title(score: Column, interval: tuple | None, suite: str, cells: Cells | None = None) -> str:
    """What hovering a score says: its interval, n, standard error and method, and a sample or lite suite's nature
    (a lite one's sizes are the score's benchmark's, or for another column those of the benchmarks the row ran)."""
    parts = []
    if interval is not None:
        low, high, n, stderr, method = interval
        parts.append(f"95% interval {interval_text(score, interval)}"
                     + (f", standard error {_value(score, stderr)}" if not math.isnan(stderr) else "")
                     + (f" ({method})" if method else ""))
    cells = cells or Cells(suite=suite)
    benchmarks = [score.group] if of_benchmark(score) else sorted(cells.ran, key=_registry_order)
    note = suite_note(suite, cells.lite_rule, benchmarks)
    if note:
        parts.append(note)
    return "; ".join(parts)


def _registry_order(name: str) -> int:
    names = list(api.benchmark_names())
    return names.index(name) if name in names else len(names)


def score_text(c: Column, value: Any, cells: Cells) -> str:
    """A score cell: "55.6 ± 11.2" (± half its 95% interval's width), "n/a" when undefined, "not run" when the run
    did not run its benchmark."""
    if value is None or math.isnan(value):
        return NOT_RUN if of_benchmark(c) and c.group not in cells.ran else format_score(None)
    shown = format_score(value / 100) if c.kind == SCORE else format_measure(value)
    interval = cells.intervals.get(c.name)
    if interval is None:
        return shown
    return f"{shown} ± {_value(c, (interval[1] - interval[0]) / 2)}"


def of_benchmark(c: Column) -> bool:
    return c.group not in ("model", "run", "board")


def with_title(text: str, title: str) -> str:
    """A cell's Markdown: its text with a hover title (both escaped: no Markdown or HTML of theirs survives)."""
    shown = escape_markdown(text, limit=None)
    return f'<span title="{html.escape(title, quote=True)}">{shown}</span>' if title else shown
