"""What a benchmark module receives and returns. A benchmark module exposes NAME, NEEDS_IMAGES and run()."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


@dataclass
class BenchmarkContext:
    """Everything a benchmark needs besides the model."""

    suite: str = "sample"  # "sample" (shipped in evaluator/data) or "full" (downloaded)
    limit: int = 0  # items to run (0: all)
    images_dir: Path = Path(".cache/images")  # on-disk cache of downloaded images
    sources: dict[str, str] = field(default_factory=dict)  # full-suite locations, e.g. {"cure": URL or path}
    options: dict[str, str] = field(default_factory=dict)  # benchmark options, e.g. {"cure.mode": "likelihood"}
    batch_size: int = 4
    progress: Callable[[int, int], None] = lambda done, total: None  # items done, items in all
    judge: object | None = None  # an evaluator.judge.Judge for benchmarks with NEEDS_JUDGE


@dataclass
class BenchmarkResult:
    """Aggregate scores (fractions 0..1, NaN when undefined), one details row per question, and counts."""

    scores: dict[str, float]
    details: list[dict]
    counts: dict[str, int]
    prompts: dict[str, str] = field(default_factory=dict)  # template name -> template text (the runner hashes them)
    extra: dict = field(default_factory=dict)  # breakdowns (e.g. accuracy by chain length), settings used


def argmax(values: list[float]) -> int:
    """First index of the largest value; NaN never wins; -1 when there is none (the option-choice rule)."""
    best, best_val = -1, -math.inf
    for i, v in enumerate(values):
        if not math.isnan(v) and (best < 0 or v > best_val):
            best, best_val = i, v
    return best


def prompt_as_sent(model, request) -> str:
    """The prompt text the model receives for a request (its chat template applied), for the details rows."""
    build = getattr(model, "build_prompt", None)
    return build(request) if callable(build) else request.text


def int_option(ctx: BenchmarkContext, key: str, default: int, minimum: int) -> int:
    """An integer benchmark option (ctx.options[key]); `default` when unset or empty; a ValueError naming the option
    when it is not an integer or below `minimum`."""
    raw = ctx.options.get(key)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"option {key} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"option {key} must be at least {minimum}, got {value}")
    return value


def nan_mean(values) -> float:
    """The mean of the defined values (NaN ones skipped); NaN when none is defined."""
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan
