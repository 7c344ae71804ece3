"""`python -m evaluator list-benchmarks`: one line per registered benchmark, saying what it measures, the modes it
can be asked in, whether it needs a judge, and how many items its sample, lite and full suites have; then, for each
mode, the model and judge calls one item of its full suite makes (its workload's words)."""
from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from evaluator.benchmarks import REGISTRY, get_benchmark
from evaluator.benchmarks.lite import planned_items
from evaluator.benchmarks.modes import GENERATION, scoring_mode
from evaluator.benchmarks.spec import Card, PlanContext


def what_it_measures(card: Card) -> str:
    """The card's few words on what it measures, else its summary's first clause."""
    if card.measures.strip():
        return " ".join(card.measures.split())
    return " ".join(card.summary.split(":")[0].split(".")[0].split())


def modes_text(card: Card) -> str:
    """"likelihood (default), generation", or "generation" for a benchmark that only generates."""
    if not card.mode_option or not card.modes:
        return GENERATION
    default = scoring_mode(card, {})
    return ", ".join(f"{mode} (default)" if mode == default else mode for mode in card.modes)


def sample_items(benchmark) -> int | None:
    """How many items the sample suite shipped with the benchmark has (its plan, nothing downloaded: images are
    fetched only when asked); None when it cannot be planned here."""
    with TemporaryDirectory() as images:
        try:
            plan = benchmark.plan(PlanContext(suite="sample", images_dir=Path(images)))
        except Exception:  # noqa: BLE001 - a benchmark without a shipped sample suite: not known
            return None
    count = plan.suite_items if plan.suite_items is not None else len(plan.items)
    return count if isinstance(count, int) else None


def _items(count: int | None) -> str:
    return f"{count:,} items" if count is not None else "not known"


def calls_per_item(name: str) -> list[tuple[str, str]]:
    """(mode, the calls one item of the full suite makes in it, in words) for each mode the benchmark takes; empty
    for a benchmark without a workload."""
    benchmark = get_benchmark(name)
    card = benchmark.CARD
    if not hasattr(benchmark, "workload"):
        return []
    modes = card.modes if card.mode_option else (GENERATION,)
    found = []
    for mode in modes:
        options = {card.mode_option: mode} if card.mode_option else {}
        parts = benchmark.workload(PlanContext(suite="full", options=options)).parts
        found.append((mode, parts[0].how if parts else "no request"))
    return found


def benchmark_line(name: str) -> str:
    """One benchmark in one line: name, what it measures, modes, judge, sample, lite and full suite sizes."""
    benchmark = get_benchmark(name)
    card = benchmark.CARD
    judge = "needs a judge (--judge)" if card.needs_judge else "no judge"
    lite = _items(planned_items(card.lite)) if card.lite is not None else "the full suite"
    return (f"{name}: {what_it_measures(card)}. modes: {modes_text(card)}; {judge}; sample suite: "
            f"{_items(sample_items(benchmark))}; lite suite: {lite}; full suite: {_items(card.full_suite_items)}")


def benchmark_lines() -> list[str]:
    """Every registered benchmark's line, in registry order, each followed by its calls per item in each mode."""
    lines = []
    for name in REGISTRY:
        lines.append(benchmark_line(name))
        lines += [f"  per item ({mode}): {how}" for mode, how in calls_per_item(name)]
    return lines
