"""Two runs compared on the questions both scored: the Explorer's compare view and `python -m evaluator compare A B`.

    question_scores(card, details[, items])    one run's score per question (the Explorer's item table) and the
                                               unit each question belongs to (ItemView.cluster)
    paired_scores(a, b[, subset])              A - B over the questions both scored (evaluator.metrics.intervals)
    compare_details(card, details_a, details_b[, subset])   both steps, from two details DataFrames
    compare_folders(a_dir, b_dir[, names])     the lines `python -m evaluator compare` prints for two results folders
    protocol(results), protocol_differences(a, b, benchmarks)   what each run was asked (suite, limit, modes,
                                               thinking, judge) and a sentence for each difference, which `compare`
                                               prints as a warning and the Explorer's paired sentence says too

A question is what the Explorer lists (each card's ItemView.key and .items): a CURE instance (its chain and its
inference, right only when all are), a ReForm-Eval question in one mode (the share of its wordings answered right;
its generation and likelihood questions share their instance, ItemView.cluster), a SimpleQA question (its graded
answer; its samples are not scored on their own), a LAVE question (its rating).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pandas as pd

from evaluator.benchmarks import REGISTRY, get_benchmark
from evaluator.benchmarks.spec import Card
from evaluator.judge import judge_name
from evaluator.metrics.intervals import Paired, paired_difference


class CompareError(ValueError):
    """Why two runs cannot be compared (a folder that is missing or damaged, an unknown benchmark): its one line."""


@dataclass(frozen=True)
class QuestionScores:
    """One run's questions: the score of each (0..1, NaN when not scored), the unit each belongs to (None: every
    question its own unit), and what a unit is called in the interval's method ("question", "instance")."""

    scores: dict[str, float]
    clusters: dict[str, str] | None
    unit: str


def question_scores(card: Card, details: pd.DataFrame, items: pd.DataFrame | None = None) -> QuestionScores:
    """A run's score per question, as the Explorer's item table has it. `items`: that table when already built
    (then `details` carries its "item" column, as the Explorer's cache keeps it); else it is built here from the
    details as the parquet file holds them. ValueError when the card has no question view or the details do not
    fit it (a damaged or foreign file)."""
    view = card.item_view
    if view.key is None or view.items is None:
        raise ValueError(f"{card.title} has no per-question view: its runs cannot be compared question by question")
    try:
        if items is None or "item" not in details:
            details = details.assign(item=view.key(details).astype(str).to_numpy())
            items = view.items(details)
        values = pd.to_numeric(items["score"], errors="coerce")
        scores = {str(item): float(score) for item, score in zip(items["item"], values)}
        clusters = None
        if view.cluster:
            units = details[view.cluster].astype(str).groupby(details["item"].astype(str), sort=False).first()
            clusters = {str(item): str(unit) for item, unit in units.items()}
    except Exception as exc:  # noqa: BLE001 - details are data from outside: one line, never a traceback
        raise ValueError(f"the {card.title} details do not fit its question view ({damage(exc)})") from None
    return QuestionScores(scores, clusters, view.cluster_unit)


def paired_scores(a: QuestionScores, b: QuestionScores, subset: Iterable[str] | None = None) -> Paired:
    """A - B on the questions both scored (only those in `subset` when given), clustered by the questions' units
    (A's; B's for a question A does not have)."""
    wanted = None if subset is None else {str(item) for item in subset}
    scores_a = a.scores if wanted is None else {q: s for q, s in a.scores.items() if q in wanted}
    clusters = None
    if a.clusters is not None or b.clusters is not None:
        clusters = {**(b.clusters or {}), **(a.clusters or {})}
    return paired_difference(scores_a, b.scores, clusters, unit=a.unit or b.unit)


def compare_details(card: Card, details_a: pd.DataFrame, details_b: pd.DataFrame,
                    subset: Iterable[str] | None = None) -> Paired:
    """Two runs of one benchmark compared on the questions both scored (only those in `subset` when given), from
    their details as the parquet files hold them; ValueError when either does not fit the card's question view."""
    return paired_scores(question_scores(card, details_a), question_scores(card, details_b), subset)


def paired_record(paired: Paired) -> dict:
    """The paired numbers as plain data (fractions; None where undefined): difference, low, high, stderr, shared,
    a_only_right, b_only_right, method and the sentence (text)."""
    def number(value: float) -> float | None:
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None

    return {"difference": number(paired.difference), "low": number(paired.interval.low),
            "high": number(paired.interval.high), "stderr": number(paired.interval.stderr), "shared": paired.shared,
            "a_only_right": paired.a_only_right, "b_only_right": paired.b_only_right,
            "method": paired.interval.method, "text": paired.text()}


# --------------------------------------------------------------------------------------------- two results folders

def _one_line(value: object, limit: int = 200) -> str:
    return " ".join(str(value).split())[:limit]


def damage(exc: BaseException) -> str:
    """What is wrong with a file (or the data read from it), in words, from the error reading it raised."""
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg.lower()} at line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deep to read"
    if isinstance(exc, KeyError):
        return f"no {_one_line(exc.args[0] if exc.args else '?', 60)!r} column"
    if isinstance(exc, OSError) and exc.strerror:
        return f"it could not be read: {exc.strerror.lower()}"
    said = _one_line(exc, 120)
    return said if " " in said else f"unreadable{f' ({said})' if said else ''}"


def read_results(folder: Path, name: str) -> dict:
    """A results folder's results.json (`name`: "A" or "B", for the message); CompareError saying why it cannot be
    read."""
    if not folder.exists():
        raise CompareError(f"{name}: {folder} does not exist")
    if not folder.is_dir():
        raise CompareError(f"{name}: {folder} is not a folder")
    path = folder / "results.json"
    if not path.is_file():
        raise CompareError(f"{name}: no results.json in {folder}: not a finished run")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CompareError(f"{name}: {path} is damaged ({damage(exc)})") from None
    if not isinstance(results, dict) or not isinstance(results.get("benchmarks"), dict):
        raise CompareError(f"{name}: {path} is not a results file (it has no benchmarks)")
    return results


def _run(results: dict) -> dict:
    return results["run"] if isinstance(results.get("run"), dict) else {}


def run_label(results: dict) -> str:
    """"org/model @ 0123456789ab, sample suite" (", limit 2" after a limited run's; no revision for a local
    folder's)."""
    model = _one_line(results.get("display_name") or results.get("model") or "unknown model")
    revision = results.get("revision")
    label = f"{model} @ {_one_line(revision)[:12]}" if isinstance(revision, str) and revision.strip() else model
    label += f", {_one_line(_run(results).get('suite') or 'unknown', 40)} suite"
    limit = _run(results).get("limit")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        label += f", limit {limit}"
    return label


def _limit_text(limit: object) -> str:
    return f"at most {_one_line(limit, 20)} items per benchmark" if limit else "every item"


THINKING = {"on": "with thinking on", "off": "with thinking off", "may": "with thinking left to the model"}
PROTOCOLS = "so A - B is partly a difference of protocols, not of models alone"


def protocol(results: dict) -> dict:
    """What a run was asked, from its results.json: {"suite", "limit" (0: every item), "modes" ({benchmark: mode}),
    "thinking" (on, off, may; anything else is not compared: a model without thought markers, or a run from before
    it was recorded), "judge" (its name; None: none)}."""
    run = _run(results)
    thinking = run.get("thinking") if isinstance(run.get("thinking"), dict) else {}
    mode = results.get("thinking") if isinstance(results.get("thinking"), str) else thinking.get("mode")
    judge = run.get("judge")
    named = judge_name(judge) if isinstance(judge, dict) and judge else run.get("judge_name")
    modes = run.get("modes") if isinstance(run.get("modes"), dict) else {}
    return {"suite": run.get("suite"), "limit": run.get("limit") or 0, "modes": {str(k): str(v) for k, v in
            modes.items()}, "thinking": mode,
            "judge": _one_line(named, 120) if isinstance(named, str) and named else None}


def protocol_differences(a: dict, b: dict, benchmarks: Iterable[str]) -> list[str]:
    """A sentence for each way two runs (their `protocol`s) were asked differently on `benchmarks`: suite, limit,
    each benchmark's mode, thinking, and the judge where one of them needs a judge."""
    benchmarks = [name for name in benchmarks if name in REGISTRY]
    lines = []
    if a["suite"] != b["suite"]:
        lines.append(f"A ran the {_one_line(a['suite'], 40)} suite and B the {_one_line(b['suite'], 40)} suite; the "
                     "questions both scored are still compared")
    if a["limit"] != b["limit"]:
        lines.append(f"A ran {_limit_text(a['limit'])} and B {_limit_text(b['limit'])}; the questions both scored "
                     "are still compared")
    for name in benchmarks:
        mode_a, mode_b = a["modes"].get(name), b["modes"].get(name)
        if mode_a and mode_b and mode_a != mode_b:
            lines.append(f"A asked {get_benchmark(name).CARD.title} by {_one_line(mode_a, 20)} and B by "
                         f"{_one_line(mode_b, 20)}, {PROTOCOLS}")
    thinking_a, thinking_b = THINKING.get(a["thinking"]), THINKING.get(b["thinking"])
    if thinking_a and thinking_b and thinking_a != thinking_b:
        lines.append(f"A ran {thinking_a} and B {thinking_b}, {PROTOCOLS}")
    if a["judge"] != b["judge"] and any(get_benchmark(name).CARD.needs_judge for name in benchmarks):
        lines.append(f"A was graded by {a['judge'] or 'no judge'} and B by {b['judge'] or 'no judge'}, {PROTOCOLS}")
    return lines


def _folder_scores(folder: Path, name: str, card: Card) -> QuestionScores:
    path = folder / "details" / f"{card.name}.parquet"
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - a damaged file is one line
        raise CompareError(f"{name}: {path} is damaged ({damage(exc)})") from None
    try:
        return question_scores(card, frame)
    except ValueError as exc:
        raise CompareError(f"{name}: {path}: {exc}") from None


def compare_folders(a_dir: Path, b_dir: Path, names: Iterable[str] | None = None) -> list[str]:
    """The lines `python -m evaluator compare A B` prints: one naming both runs, a warning for each way they were
    asked differently, then one per benchmark (registry order; only `names` when given): A - B on its shared
    questions, or which run lacks its details. Everything is read before a line is given: CompareError (one line)
    for a folder that is missing or damaged (its results.json or a details file), an unknown benchmark name, or
    two runs with no benchmark's details in common."""
    a_dir, b_dir = Path(a_dir), Path(b_dir)
    chosen = list(dict.fromkeys(names)) if names is not None else list(REGISTRY)
    unknown = [name for name in chosen if name not in REGISTRY]
    if unknown or not chosen:
        said = f"unknown benchmark {', '.join(map(repr, unknown))}" if unknown else "no benchmark named"
        raise CompareError(f"{said}; known: {', '.join(REGISTRY)}")
    a, b = read_results(a_dir, "A"), read_results(b_dir, "B")
    both = [name for name in chosen if name in a["benchmarks"] and name in b["benchmarks"]]
    lines = [f"A = {run_label(a)}; B = {run_label(b)}",
             *(f"warning: {line}" for line in protocol_differences(protocol(a), protocol(b), both))]
    compared, lacking = 0, []
    for name in chosen:
        card = get_benchmark(name).CARD
        has_a = (a_dir / "details" / f"{name}.parquet").is_file()
        has_b = (b_dir / "details" / f"{name}.parquet").is_file()
        if has_a and has_b:
            paired = paired_scores(_folder_scores(a_dir, "A", card), _folder_scores(b_dir, "B", card))
            lines.append(f"{card.title}: {paired.text()}")
            compared += 1
        elif has_a or has_b or names is not None:
            lacking.append(f"{card.title} {'only in A' if has_a else 'only in B' if has_b else 'in neither run'}")
            lines.append(f"{card.title}: {'only in A' if has_a else 'only in B' if has_b else 'in neither run'}, "
                         "not compared")
    if not compared:
        raise CompareError("the two runs have no benchmark's details in common"
                           + (f" ({'; '.join(lacking)})" if lacking else ""))
    return lines
