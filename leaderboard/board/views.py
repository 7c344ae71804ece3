"""What makes two rows comparable, and the board-only columns that say it: rank, flag, notes and details links.

- A run is **flagged** when the admins hid it (their reason is the flag), when it used an item limit, when a trial
  judge graded it (run.judge_trial: a local judge under 7B parameters, for trying the machinery), or when it scored
  fewer than the coverage threshold of the items of a benchmark (every benchmark it ran in the Overview; the view's
  benchmark in a benchmark's view). Flagged runs are not ranked and are hidden unless asked for (or unless
  no complete run matches: a quick trial's runs are shown, unranked). The **#** of every run that is not ranked says
  "unranked", and those runs come after the ranked ones grouped like cohorts (by the benchmarks they were scored on),
  so that a list of flagged runs never reads as a ranking.
- **Ranks** are given within cohorts of comparable runs: the same suite (full, lite or sample, each its own cohort;
  lite runs of the same rule version only, `lite_rule`: two lite rules ask different items), each benchmark asked
  the same way (the `modes` column: by generation alone, or also by option likelihood; a served model is asked by
  generation only, so it is ranked with in-process runs asked by generation, never against runs scored by
  likelihood) and, in the Overview, an overall score over the same benchmarks (so a text-only model that could run
  SimpleQA alone is ranked among runs scored on SimpleQA alone, and a vision model is never averaged with a zero for
  a benchmark it did not run). Cohorts with more benchmarks come first, the full suite before the lite one and the
  lite before the sample. How a run ran (dtype, device, GPU, batch size, attention implementation, generation path,
  torch and transformers versions) is shown in Run details and never splits a cohort: a batch size or a generation
  path never changes an answer, and the rounding of a dtype is measured and said in the About tab.
- **Notes** say what the scores leave out: benchmarks skipped and why, benchmarks asked otherwise than by their
  default, answers the judge could not grade or rate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from evaluator import api
from leaderboard.board.columns import Schema, View, headline
from leaderboard.board.frames import board_frame, board_text, filter_runs
from leaderboard.board.score_cells import LITE, NOT_RUN, SAMPLE, SAMPLE_SHOWN, ran
from leaderboard.formatting import as_float, format_number, format_percent
from leaderboard.store import DamagedFile, parse_json

DEFAULT_COVERAGE = 0.95
TRIAL_JUDGE = "trial judge"
TRIAL_JUDGE_NOTE = f" — {TRIAL_JUDGE}, not for scores"  # after the judge's name in the Judge column
SUITE_ORDER = {"full": 0, LITE: 1, SAMPLE: 2}  # the cohorts' order; another suite's come last


@dataclass(frozen=True)
class Shown:
    """The rows a view shows (raw columns plus the board-only ones, in board order) and what was left out."""

    rows: pd.DataFrame
    runs: int  # runs on the board
    matching: int  # runs that match the search and filters
    hidden_flagged: int  # of those, flagged runs left out
    without_benchmark: int  # of those, runs that did not run the view's benchmark
    only_flagged: bool = False  # no complete run matched: its flagged runs (a quick trial's) are shown, unranked


def _limit(row: dict) -> float:
    value = as_float(row.get("limit"))
    return value if not math.isnan(value) and value > 0 else 0.0


def _in_scope(schema: Schema, view: View, ran_here: dict[str, bool]) -> list[api.Card]:
    """The benchmarks a row's flag, notes and links are about: the view's, or (Overview) every one the run ran."""
    if view.benchmark is not None:
        return [schema.card(view.benchmark)]
    return [card for card in schema.cards if ran_here[card.name]]


def trial_judge(row: dict) -> bool:
    """Whether a trial judge graded the run (the `judge_trial` column; a row without it: no)."""
    return row.get("judge_trial") == "true"


def flag_text(row: dict, cards: list[api.Card], threshold: float) -> str:
    """Why a run is not ranked with complete ones ("" when it is): the admins' reason for hiding it, a trial judge,
    its limit, and its coverage under the threshold."""
    hidden = row.get("hidden")
    parts = [f"hidden by the admins: {hidden}"] if isinstance(hidden, str) and hidden else []
    if trial_judge(row):
        parts.append(f"{TRIAL_JUDGE}: graded by a local judge under 7B parameters")
    limit = _limit(row)
    if limit:
        parts.append(f"limit: {format_number(limit)} items per benchmark")
    low = [f"{card.short_title} {format_percent(row.get(f'{card.name}_coverage'))}" for card in cards
           if as_float(row.get(f"{card.name}_coverage")) < threshold]
    if low:
        parts.append(f"coverage under {format_percent(threshold)}: " + ", ".join(low))
    return "; ".join(parts)


def _skipped(row: dict, schema: Schema) -> dict[str, str]:
    text = row.get("skipped")
    try:  # a cell of the stored leaderboard.parquet
        skipped = parse_json(text) if isinstance(text, str) and text else {}
    except DamagedFile:
        return {}
    return {str(k): str(v) for k, v in skipped.items()} if isinstance(skipped, dict) else {}


def modes_of(row: dict) -> dict[str, str]:
    """The row's `modes` cell ("name=mode,...") as {benchmark: mode}."""
    text = row.get("modes")
    pairs = [pair.split("=", 1) for pair in text.split(",") if "=" in pair] if isinstance(text, str) else []
    return {name.strip(): mode.strip() for name, mode in pairs}


def modes_note(row: dict, cards: list[api.Card]) -> str:
    """Which benchmarks in scope were asked otherwise than by their default, e.g. "asked by generation only: A, B
    (ranked with runs asked the same way)"; "" when none was."""
    modes, by_mode = modes_of(row), {}
    for card in cards:
        mode = modes.get(card.name)
        if card.mode_option and mode and mode != api.default_mode(card):
            by_mode.setdefault(mode, []).append(card.short_title)
    return "; ".join(f"asked {'by generation only' if mode == api.GENERATION else f'in {mode} mode'}: "
                     f"{', '.join(titles)} (ranked with runs asked the same way)" for mode, titles in by_mode.items())


def notes_text(row: dict, schema: Schema, cards: list[api.Card], overview: bool) -> str:
    """Skipped benchmarks with their reason (Overview), benchmarks asked otherwise than by default, answers left out
    of the scores (counts), undefined headline scores."""
    parts = [note] if (note := modes_note(row, cards)) else []
    if overview:
        by_reason: dict[str, list[str]] = {}
        skipped = _skipped(row, schema)
        order = [c.name for c in schema.cards]
        for name in sorted(skipped, key=lambda n: (order.index(n) if n in order else len(order), n)):
            card = schema.card(name)
            by_reason.setdefault(skipped[name], []).append(card.short_title if card else name)
        parts += [f"skipped {', '.join(names)}: {reason}" for reason, names in by_reason.items()]
    for card in cards:
        for metric in card.metrics:
            count = as_float(row.get(f"{card.name}_{metric.key}")) if metric.kind == api.COUNT else math.nan
            if count > 0:
                parts.append(f"{card.short_title}: {format_number(count)} {metric.label}")
        if overview and math.isnan(as_float(row.get(f"{card.name}_{card.default_metric}"))):
            parts.append(f"{card.short_title} {headline(card).label} undefined: not in the overall score")
    return "; ".join(parts)


def details_links(row: dict, cards: list[api.Card], url: Callable[[str, str], str | None]) -> str:
    """Markdown links to the run's details files, one per benchmark ("" when there is no link)."""
    links = []
    for card in cards:
        target = url(str(row.get("key") or ""), card.name)
        if target:
            links.append(f"[{card.short_title}]({target})")
    return " · ".join(links)


def _cohort(row: dict, view: View) -> tuple:
    """Runs with the same cohort compare: the suite (a lite run's with its rule), how the benchmarks ranked on were
    asked and (Overview) which benchmarks the overall score is over."""
    suite = str(row.get("suite") or "")
    order = SUITE_ORDER.get(suite, len(SUITE_ORDER))
    if suite == LITE:  # a lite rule is a set of items: runs of different rules never compare (this Space's first)
        rule = row.get("lite_rule") if isinstance(row.get("lite_rule"), str) else ""
        order += 0 if rule == api.LITE_RULE else 0.5
        suite = f"{LITE} ({rule or 'rule not recorded'})"
    modes = modes_of(row)
    if view.benchmark is not None:
        return (0, order, suite, modes.get(view.benchmark, ""))
    scored = [s for s in str(row.get("scored_on") or "").split(",") if s]
    asked = ",".join(f"{name}={modes.get(name, '')}" for name in scored)
    return (-len(scored), order, suite, ",".join(scored), asked)


def _cohort_label(cohort: tuple, varying: dict[int, set], view: View, titles: dict[str, str]) -> str:
    """What sets a cohort apart from the others shown, in words: its suite, the benchmarks its overall score is over,
    how the benchmarks asked differently in other cohorts were asked (only the parts that differ)."""
    parts = []
    if 2 in varying:
        rules = {c for c in varying[2] if c.startswith(f"{LITE} (")}
        suite = LITE if cohort[2] in rules and len(rules) == 1 else cohort[2]  # the rule only where lite ones differ
        parts.append(f"{suite or '?'} suite")
    if view.benchmark is None:
        scored = [n for n in cohort[3].split(",") if n]
        if 3 in varying:
            parts.append(f"on all {len(scored)}" if titles and set(scored) == set(titles) else
                         "on " + ", ".join(titles.get(n, n) for n in scored))
        asked = [pair.split("=", 1) for pair in cohort[4].split(",") if "=" in pair]
        asked = [(n, mode or "?") for n, mode in asked if n in varying.get(4, set())]
        if len({mode for _, mode in asked}) == 1:
            parts.append(f"by {asked[0][1]}")
        elif asked:
            parts.append(", ".join(f"{titles.get(n, n)} by {mode}" for n, mode in asked))
    elif 3 in varying:
        parts.append(f"by {cohort[3] or '?'}")
    return "; ".join(parts)


def _varying(cohorts: list[tuple], view: View) -> dict[int, set]:
    """Which parts of the cohorts differ (suite 2, benchmarks 3, modes 4), and for the Overview's modes, which
    benchmarks were asked differently from one cohort to another."""
    found: dict[int, set] = {k: {c[k] for c in cohorts} for k in (2, 3) if len({c[k] for c in cohorts}) > 1}
    if view.benchmark is not None:
        return found
    modes: dict[str, set] = {}
    for cohort in cohorts:
        for pair in cohort[4].split(","):
            name, _, mode = pair.partition("=")
            modes.setdefault(name, set()).add(mode)
    differing = {name for name, seen in modes.items() if name and len(seen) > 1}
    if differing:
        found[4] = differing
    return found


def _bounds(rows: pd.DataFrame, column: str, scores: list[float]) -> list[tuple[float, float]]:
    """Each row's 95% interval of `column` (its raw _low and _high columns); a row without one (published before
    intervals were recorded, or undefined) counts its own score as both ends."""
    lows = [as_float(v) for v in rows[f"{column}_low"]] if f"{column}_low" in rows else [math.nan] * len(rows)
    highs = [as_float(v) for v in rows[f"{column}_high"]] if f"{column}_high" in rows else [math.nan] * len(rows)
    return [(low, high) if not (math.isnan(low) or math.isnan(high)) else (score, score)
            for low, high, score in zip(lows, highs, scores)]


def ranked(rows: pd.DataFrame, view: View, higher_is_better: bool,
           titles: dict[str, str] | None = None) -> pd.DataFrame:
    """`rows` with a "rank" column (within each cohort: one plus the number of runs whose 95% interval lies wholly
    above the run's own, Chatbot Arena's rule; NaN for flagged runs and runs without a score) and "rank_worst" (the
    last place the run could take: the cohort's size less the runs whose interval lies wholly below its own), ordered:
    ranked runs cohort by cohort, best score first, then the others by score. "rank_group" says, beside each place,
    how many share its cohort and what sets the cohort apart ("of 2 · by generation") when the ranked runs fall in
    more than one cohort, and beside "unranked" which group an unranked run is in when those fall in more than one;
    else it is empty. "group_start" marks the first row of each group when there are several (a line separates
    them)."""
    rows = rows.reset_index(drop=True)
    scores = [as_float(v) for v in rows[view.rank_by]]
    better = [(s if higher_is_better else -s) for s in scores]
    bounds = _bounds(rows, view.rank_by, scores)
    eligible = [flag == "" and not math.isnan(s) for flag, s in zip(rows["flag"], scores)]
    facts = [c for c in ("suite", "lite_rule", "scored_on", "modes") if c in rows]
    cohorts = [_cohort(row, view) for row in rows[facts].to_dict("records")]
    rank, worst = [math.nan] * len(rows), [math.nan] * len(rows)
    members: dict[tuple, list[int]] = {}
    others: dict[tuple, list[int]] = {}
    for i, ok in enumerate(eligible):
        (members if ok else others).setdefault(cohorts[i], []).append(i)
    for cohort in members.values():
        inside = [bounds[i] for i in cohort]
        best = api.interval_ranks(inside, higher_is_better)
        below = api.interval_ranks(inside, not higher_is_better)  # 1 + the runs wholly below
        for i, place, under in zip(cohort, best, below):
            rank[i], worst[i] = place, len(cohort) + 1 - under
    rows["rank"], rows["rank_worst"] = rank, worst
    group = [""] * len(rows)
    for groups in (members, others):
        if len(groups) > 1:
            varying = _varying(list(groups), view)
            for cohort, indices in groups.items():
                label = _cohort_label(cohort, varying, view, titles or {})
                for i in indices:
                    group[i] = (f"of {len(indices)}" + (f" · {label}" if label else "") if groups is members
                                else f"· {label}" if label else "")
    rows["rank_group"] = group
    models = [str(m) for m in rows["model"]]

    def order(i: int) -> tuple:  # the runs not ranked: grouped like cohorts (never one list by score)
        missing = math.isnan(better[i])
        if eligible[i]:
            return (0, cohorts[i], -better[i], rank[i], models[i])
        return (1, cohorts[i], (missing, -better[i] if not missing else 0.0), models[i])

    placed = sorted(range(len(rows)), key=order)
    shown = rows.iloc[placed].reset_index(drop=True)
    keys = [(eligible[i], cohorts[i]) for i in placed]
    several = len(set(keys)) > 1
    shown["group_start"] = [several and at > 0 and keys[at] != keys[at - 1] for at in range(len(keys))]
    return shown


def _row_columns(schema: Schema) -> list[str]:
    """The raw columns that flags, notes and links read."""
    per_card = [f"{card.name}_{m.key}" for card in schema.cards for m in card.metrics
                if m.kind == api.COUNT or m.key == card.default_metric]
    return ["key", "limit", "skipped", "hidden", "modes", "judge_trial",
            *(f"{card.name}_coverage" for card in schema.cards), *per_card]


def shown_rows(raw: pd.DataFrame, schema: Schema, view: View, threshold: float = DEFAULT_COVERAGE,
               show_flagged: bool = False, search: str = "", model_types=(), sizes=(),
               details_url: Callable[[str, str], str | None] = lambda key, name: None) -> Shown:
    """The rows of `view`: filtered, scoped to runs of the view's benchmark, flagged runs hidden unless asked for,
    with rank, flag, notes and details filled in, in board order. When no complete run matches, its flagged runs
    are shown anyway (unranked; not those the admins hid), so that a quick trial's runs are on the board."""
    matching = filter_runs(raw, search, model_types or (), sizes or ())
    has = {card.name: ran(matching, schema, card.name) for card in schema.cards}
    rows = matching
    without = 0
    if view.benchmark is not None:
        rows = matching[has[view.benchmark]]
        without = len(matching) - len(rows)
    rows = rows.copy()
    records = rows[[name for name in _row_columns(schema) if name in rows]].to_dict("records")
    ran_rows = [{name: bool(v) for name, v in zip(has, flags)}
                for flags in zip(*(has[name].loc[rows.index].tolist() for name in has))] or [{}] * len(records)
    scopes = [_in_scope(schema, view, here) for here in ran_rows]
    rows["flag"] = [flag_text(row, cards, threshold) for row, cards in zip(records, scopes)]
    rows["notes"] = [notes_text(row, schema, cards, view.benchmark is None) for row, cards in zip(records, scopes)]
    rows["details"] = [details_links(row, cards, details_url) for row, cards in zip(records, scopes)]
    if "judge" in rows:  # the Judge column says plainly that a trial judge's grades are not for scores
        rows["judge"] = [f"{judge}{TRIAL_JUDGE_NOTE}" if isinstance(judge, str) and judge and trial_judge(row)
                         else judge for judge, row in zip(rows["judge"], records)]
    hidden, only_flagged = 0, False
    if not show_flagged:
        keep = rows["flag"] == ""
        if len(rows) and not keep.any():  # no complete run (a quick trial's): its flagged runs, not the admins' hidden
            hidden_by_admins = [isinstance(v, str) and bool(v) for v in rows.get("hidden", [None] * len(rows))]
            keep = pd.Series([not h for h in hidden_by_admins], index=rows.index, dtype=bool)
            only_flagged = bool(keep.any())
        hidden = int((~keep).sum())
        rows = rows[keep]
    higher = schema.column(view.rank_by).higher_is_better
    titles = {card.name: card.short_title for card in schema.cards}
    return Shown(rows=ranked(rows, view, higher, titles), runs=len(raw), matching=len(matching), hidden_flagged=hidden,
                 without_benchmark=without, only_flagged=only_flagged)


def status_text(shown: Shown, schema: Schema, view: View) -> str:
    """The line above the table: how the view ranks, how many runs it shows and what it leaves out, and why."""
    rank_by = schema.column(view.rank_by).label
    scope = ("runs of the same suite scored on the same benchmarks, each asked the same way" if view.benchmark is None
             else "runs of the same suite that asked it the same way")
    parts = [f"Ranked by **{rank_by}** among {scope}; {len(shown.rows)} of {shown.runs} runs shown"]
    if shown.without_benchmark:
        parts.append(f"{shown.without_benchmark} without {view.label} (skipped or not run: see their notes in "
                     "the Overview)")
    if shown.only_flagged:
        parts.append(f"no complete run yet, so the {len(shown.rows)} flagged run(s) (limited or partial, such as a "
                     "quick trial with LEADERBOARD_LIMIT) are shown, unranked: the **Flag** column says why")
    if shown.hidden_flagged:
        parts.append(f"{shown.hidden_flagged} flagged run(s) (limited, partial, graded by a trial judge or hidden by "
                     "the admins) left out: tick **Show flagged runs** to see them, unranked")
    return "; ".join(parts) + ".\n\n" + legend_text(shown)


def legend_text(shown: Shown) -> str:
    """The legend under the status line, short enough for a phone's first screen: how a score and a place read, the
    two kinds of missing score, and what a sample or a lite suite is when a row shown was scored on one."""
    parts = ["**55.6 ± 11.2**: a score ± half its 95% interval (hover it for the interval, n and method)",
             "runs whose intervals overlap share a place (**1-2**)", "**n/a**: undefined",
             f"**{NOT_RUN}**: the benchmark was not run"]
    suites = shown.rows["suite"].tolist() if "suite" in shown.rows else []
    if SAMPLE in suites:
        parts.append(f"**{SAMPLE_SHOWN}**: the project's own drawn items, not the papers' data")
    if LITE in suites:
        parts.append(f"**{LITE}**: a seeded, stratified subset of each full suite (wider intervals; hover its suite "
                     "for the sizes), never ranked with full runs")
    return " · ".join(parts) + "."


def empty_text(shown: Shown, view: View) -> str | None:
    """Why the view's table is empty (None when it is not)."""
    if len(shown.rows):
        return None
    if shown.runs == 0:
        return None  # the board's own empty state explains how to submit
    if shown.matching == 0:
        return "No run matches the search and filters."
    if view.benchmark is not None and shown.without_benchmark == shown.matching:
        return (f"No finished run has {view.label} yet"
                + (" (the runs on the board skipped it or did not run it; their notes in the Overview say why)."
                   if shown.without_benchmark else "."))
    return ("Every matching run is flagged: limited, partial, graded by a trial judge or hidden by the admins (see "
            "the status line): tick **Show flagged runs** to see them.")


def view_board(raw: pd.DataFrame, schema: Schema, view_key: str | None = None, **options) -> tuple[Shown, pd.DataFrame]:
    """The view named `view_key` (the Overview by default): what it shows (see shown_rows for `options`) and its
    typed board frame (board_frames.board_frame)."""
    view = schema.view(view_key)
    shown = shown_rows(raw, schema, view, **options)
    return shown, board_frame(shown.rows, schema, view)


def view_text(raw: pd.DataFrame, schema: Schema, view_key: str | None = None, **options) -> pd.DataFrame:
    """The view as plain text, as the board shows it (see view_board)."""
    return board_text(view_board(raw, schema, view_key, **options)[1], schema)
