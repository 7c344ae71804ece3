"""The benchmark registry: one line per benchmark package (see spec.py for what a package exposes).

Order matters: it is the order of the benchmarks' columns on the board and of their texts on the About tab.
A package is imported and checked (`check_benchmark`) the first time it is asked for; a package that does not
fit the contract raises BenchmarkError naming what is missing.

This room (the registry, spec.py, one package per benchmark and what they share) may import the models room
(the request and answer types), metrics, judge and inputs; never runs/, which runs the benchmarks.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from evaluator.benchmarks.spec import (DETAIL_TYPES, EQUAL, HUB_EVAL_SCALES, METRIC_KINDS, PROPORTIONAL, Benchmark,
                                       Card, DetailColumn, Grader, HubEval, ItemView, Lite, Section)
from evaluator.inputs.model_ids import model_id_problem

REGISTRY: dict[str, str] = {
    "cure": "evaluator.benchmarks.cure",
    "simpleqa": "evaluator.benchmarks.simpleqa",
    "reform": "evaluator.benchmarks.reform",
    "lave": "evaluator.benchmarks.lave",
}
# what runs when nothing is chosen (LEADERBOARD_BENCHMARKS, --benchmarks): needs neither a judge nor a download
DEFAULT_BENCHMARKS: tuple[str, ...] = ("cure",)


class BenchmarkError(TypeError):
    """A registered package does not fit the benchmark contract."""


def get_benchmark(name: str) -> Benchmark:
    """The checked package of a registered benchmark; ValueError for an unknown name."""
    if name not in REGISTRY:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(REGISTRY)}")
    module = importlib.import_module(REGISTRY[name])
    check_benchmark(module, name)
    return module  # type: ignore[return-value]


def cards() -> tuple[Card, ...]:
    """Every registered benchmark's card, in registry order."""
    return tuple(get_benchmark(name).CARD for name in REGISTRY)


def check_benchmark(module: ModuleType, name: str) -> None:
    """Raise BenchmarkError naming everything `module` lacks to be the benchmark `name`."""
    where = f"benchmark {name!r} ({module.__name__})"
    missing = [attr for attr in ("CARD", "plan", "score") if not hasattr(module, attr)]
    if missing:
        raise BenchmarkError(f"{where} lacks {', '.join(missing)} (see evaluator/benchmarks/spec.py)")
    not_callable = [attr for attr in ("plan", "score", "workload") if hasattr(module, attr)
                    and not callable(getattr(module, attr))]
    if not_callable:
        raise BenchmarkError(f"{where}: {', '.join(not_callable)} must be a function")
    if not isinstance(module.CARD, Card):
        raise BenchmarkError(f"{where}: CARD must be an evaluator.benchmarks.spec.Card, not "
                             f"{type(module.CARD).__name__}")
    problems = card_problems(module.CARD, name)
    if problems:
        raise BenchmarkError(f"{where}: " + "; ".join(problems))


def card_problems(card: Card, name: str) -> list[str]:
    """What is wrong with a card, as sentences (empty when nothing is)."""
    problems = []
    if card.name != name:
        problems.append(f"CARD.name is {card.name!r}, registered as {name!r}")
    for attr in ("title", "short_title", "summary"):
        if not str(getattr(card, attr) or "").strip():
            problems.append(f"CARD.{attr} is empty")
    keys = [m.key for m in card.metrics]
    if not keys:
        problems.append("CARD.metrics is empty")
    if len(set(keys)) != len(keys):
        problems.append("CARD.metrics repeats a key")
    for metric in card.metrics:
        if metric.kind not in METRIC_KINDS:
            problems.append(f"metric {metric.key!r} has kind {metric.kind!r}, not one of {', '.join(METRIC_KINDS)}")
        if not metric.label.strip() or not metric.description.strip():
            problems.append(f"metric {metric.key!r} needs a label and a description")
    if card.default_metric not in keys:
        problems.append(f"CARD.default_metric {card.default_metric!r} is not one of its metrics")
    for key in card.dimensions:
        if key not in keys:
            problems.append(f"CARD.dimensions names {key!r}, which is not one of its metrics")
    for source in card.sources:
        if source.key != name and not source.key.startswith(f"{name}."):
            problems.append(f"source key {source.key!r} must be {name!r} or start with '{name}.'")
        if not source.setting.isupper() or not source.setting.replace("_", "").isalnum():
            problems.append(f"source setting {source.setting!r} must be an upper-case environment variable name")
    for option in card.options:
        if not option.key.startswith(f"{name}."):
            problems.append(f"option key {option.key!r} must start with '{name}.'")
    if card.mode_option and card.mode_option not in {option.key for option in card.options}:
        problems.append(f"CARD.mode_option {card.mode_option!r} is not one of its options")
    problems.extend(mode_problems(card))
    problems.extend(full_suite_problems(card))
    problems.extend(lite_problems(card))
    problems.extend(hub_eval_problems(card))
    if not isinstance(card.item_view, ItemView):
        problems.append("CARD.item_view must be an ItemView")
    for section in card.sections:
        if not isinstance(section, Section) or section.kind not in ("plot", "table") or not callable(section.render):
            problems.append(f"section {getattr(section, 'key', section)!r} must be a Section of kind plot or table")
        elif section.needs not in keys:
            problems.append(f"section {section.key!r} needs {section.needs!r}, which is not one of its metrics")
    if card.grader is not None and not isinstance(card.grader, Grader):
        problems.append("CARD.grader must be a Grader")
    if card.grader is not None and not card.needs_judge:
        problems.append("a card with a grader must need a judge")
    problems.extend(details_problems(card))
    return problems


def mode_problems(card: Card) -> list[str]:
    """What is wrong with a card's modes: a mode option without the values it takes, modes without a mode option, or
    a mode option whose default is not one of them."""
    if not card.mode_option:
        return ["CARD.modes needs a CARD.mode_option"] if card.modes else []
    if not card.modes or not all(isinstance(mode, str) and mode.strip() for mode in card.modes):
        return [f"CARD.modes must name the values {card.mode_option} takes"]
    defaults = [option.default for option in card.options if option.key == card.mode_option]
    if defaults and defaults[0] not in card.modes:
        return [f"{card.mode_option}'s default {defaults[0]!r} is not one of CARD.modes"]
    return []


def hub_eval_problems(card: Card) -> list[str]:
    """What is wrong with a card's Hub benchmark dataset: an id that is not `<owner>/<name>`, no task, a metric that
    is not one of its own, a scale that is not percent or fraction, or no word on where the task comes from."""
    found = card.hub_eval
    if found is None:
        return []
    problems = []
    if not isinstance(found, HubEval):
        return ["CARD.hub_eval must be a HubEval"]
    if model_id_problem(found.dataset) or "/" not in found.dataset:
        problems.append(f"CARD.hub_eval.dataset {found.dataset!r} must be a Hub dataset id, <owner>/<name>")
    if not found.task_id.strip():
        problems.append("CARD.hub_eval.task_id is empty")
    if found.metric not in {m.key for m in card.metrics}:
        problems.append(f"CARD.hub_eval.metric {found.metric!r} is not one of its metrics")
    if found.scale not in HUB_EVAL_SCALES:
        problems.append(f"CARD.hub_eval.scale must be one of {', '.join(HUB_EVAL_SCALES)}, not {found.scale!r}")
    if not found.note.strip():
        problems.append("CARD.hub_eval.note must say where its task and scale come from")
    return problems


def full_suite_problems(card: Card) -> list[str]:
    """What is wrong with a card's full-suite size: a count that is not a positive whole number, or one that does not
    say where it comes from."""
    count = card.full_suite_items
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        return [f"CARD.full_suite_items must be a positive whole number or None (not known), not {count!r}"]
    if count is not None and not str(card.full_suite_note or "").strip():
        return ["CARD.full_suite_note must say where CARD.full_suite_items comes from"]
    return []


def lite_problems(card: Card) -> list[str]:
    """What is wrong with a card's lite rule: not a Lite, an allocation other than equal or proportional, a size that
    is not a positive whole number, strata that are not (name, positive count) pairs or repeat a name, or no word on
    where their sizes come from."""
    lite = card.lite
    if lite is None:
        return []
    if not isinstance(lite, Lite):
        return ["CARD.lite must be an evaluator.benchmarks.spec.Lite"]
    problems = []
    if lite.allocation not in (EQUAL, PROPORTIONAL):
        problems.append(f"CARD.lite.allocation must be {EQUAL} or {PROPORTIONAL}, not {lite.allocation!r}")
    if isinstance(lite.size, bool) or not isinstance(lite.size, int) or lite.size < 1:
        problems.append(f"CARD.lite.size must be a positive whole number, not {lite.size!r}")
    names = [entry[0] for entry in lite.strata if isinstance(entry, tuple) and len(entry) == 2]
    if not lite.strata or len(names) != len(lite.strata) or len(set(names)) != len(names) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for _, n in lite.strata):
        problems.append("CARD.lite.strata must list each stratum once as (name, its size in the full suite)")
    if not str(lite.stratum or "").strip() or not str(lite.strata_basis or "").strip():
        problems.append("CARD.lite must say what a stratum is and where the strata's sizes come from")
    return problems


def details_problems(card: Card) -> list[str]:
    """What is wrong with a card's details columns, as sentences: none declared, one that is not a DetailColumn,
    a repeated name, an unknown type, an empty description, or a column the item view names that is not declared."""
    if not card.details:
        return ["CARD.details is empty: declare every column of the details rows (DetailColumn)"]
    problems = []
    names = []
    for column in card.details:
        if not isinstance(column, DetailColumn):
            problems.append(f"details column {column!r} must be a DetailColumn")
            continue
        names.append(column.name)
        if not isinstance(column.name, str) or not column.name.strip():
            problems.append("a details column has no name")
        if column.type not in DETAIL_TYPES:
            problems.append(f"details column {column.name!r} has type {column.type!r}, not one of "
                            f"{', '.join(DETAIL_TYPES)}")
        if not isinstance(column.description, str) or not column.description.strip():
            problems.append(f"details column {column.name!r} needs a description")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        problems.append(f"CARD.details repeats {', '.join(map(repr, repeated))}")
    view = card.item_view
    if isinstance(view, ItemView):
        named = [view.question, view.grade, view.rationale, view.image, *view.group_by,
                 view.main_rows[0] if view.main_rows else None, view.cluster]
        undeclared = [name for name in named if name and name not in names]
        if undeclared:
            problems.append(f"the item view reads {', '.join(map(repr, undeclared))}, not among CARD.details")
    return problems
