"""The benchmark registry: one line per benchmark module.

A benchmark module exposes NAME, NEEDS_IMAGES and run(model, ctx) -> BenchmarkResult (see base.py).
"""
from __future__ import annotations

import importlib
from types import ModuleType

REGISTRY: dict[str, str] = {
    "cure": "evaluator.benchmarks.cure",
    "lave": "evaluator.benchmarks.lave",
    "reform": "evaluator.benchmarks.reform",
    "simpleqa": "evaluator.benchmarks.simpleqa",
}


def get_benchmark(name: str) -> ModuleType:
    """The module of a registered benchmark; a clear error for an unknown name."""
    if name not in REGISTRY:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(sorted(REGISTRY))}")
    return importlib.import_module(REGISTRY[name])
