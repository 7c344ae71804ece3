"""Run one benchmark in-process on any model object (a tiny model, or a scripted stand-in) the way the runner does:
plan, execute, write the raw rows to a details file, score from what is read back."""
from __future__ import annotations

import tempfile
from pathlib import Path

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.spec import PlanContext, ScoreContext, Scored
from evaluator.details import read_details, write_details
from evaluator.executor import execute


def run_benchmark(name: str, model, *, suite: str = "sample", limit: int = 0, options: dict | None = None,
                  sources: dict | None = None, judge=None, batch_size: int = 4, images_dir: Path | None = None,
                  progress=None, folder: Path | None = None) -> Scored:
    """The Scored result of `name` on `model`; its `prompts` hold the model-side and judge-side prompts."""
    benchmark = get_benchmark(name)
    folder = Path(folder or tempfile.mkdtemp(prefix=f"{name}-run-"))
    options, sources = dict(options or {}), dict(sources or {})
    plan = benchmark.plan(PlanContext(suite=suite, limit=limit, images_dir=images_dir or folder / "images",
                                      sources=sources, options=options))
    execute(model, plan, batch_size, progress or (lambda done, total: None))
    path = folder / "details" / f"{name}.parquet"
    write_details(path, plan.rows)
    scored = benchmark.score(read_details(path), ScoreContext(suite=suite, limit=limit, sources=sources,
                                                              options=options, judge=judge))
    scored.prompts = {**plan.prompts, **scored.prompts}
    return scored
