"""`python -m evaluator list-benchmarks`: one line per registered benchmark, saying what it measures, the modes it
can be asked in, whether it needs a judge, and how many items its sample and full suites have."""
from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from evaluator.benchmarks import REGISTRY, get_benchmark
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


def benchmark_line(name: str) -> str:
    """One benchmark in one line: name, what it measures, modes, judge, sample and full suite sizes."""
    benchmark = get_benchmark(name)
    card = benchmark.CARD
    judge = "needs a judge (--judge)" if card.needs_judge else "no judge"
    return (f"{name}: {what_it_measures(card)}. modes: {modes_text(card)}; {judge}; sample suite: "
            f"{_items(sample_items(benchmark))}; full suite: {_items(card.full_suite_items)}")


def benchmark_lines() -> list[str]:
    """Every registered benchmark's line, in registry order."""
    return [benchmark_line(name) for name in REGISTRY]
