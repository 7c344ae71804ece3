"""Run one benchmark in-process on any model object (a tiny model, or a scripted stand-in) the way the runner does
(evaluator.runs.runner.evaluate: plan, execute, write the raw rows to a details file, score from what is read back)."""
from __future__ import annotations

import tempfile
from pathlib import Path

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.spec import PlanContext, ScoreContext, Scored
from evaluator.runs.runner import evaluate


def run_benchmark(name: str, model, *, suite: str = "sample", limit: int = 0, options: dict | None = None,
                  sources: dict | None = None, judge=None, batch_size: int = 4, images_dir: Path | None = None,
                  progress=None, folder: Path | None = None) -> Scored:
    """The Scored result of `name` on `model`; its `prompts` hold the model-side and judge-side prompts.
    `progress(done, total)` sees the executor's progress."""
    benchmark = get_benchmark(name)
    folder = Path(folder or tempfile.mkdtemp(prefix=f"{name}-run-"))
    options, sources = dict(options or {}), dict(sources or {})
    plan_ctx = PlanContext(suite=suite, limit=limit, images_dir=images_dir or folder / "images", sources=sources,
                           options=options)
    score_ctx = ScoreContext(suite=suite, limit=limit, sources=sources, options=options, judge=judge)
    watched = _Watched(progress) if progress is not None else None
    done = evaluate(benchmark, model, plan_ctx, score_ctx, batch_size, folder / "details" / f"{name}.parquet",
                    watched)
    done.scored.prompts = done.prompts
    return done.scored


class _Watched:
    """A stand-in for evaluator.runs.progress.Progress that passes the answering stage's updates to a callback."""

    def __init__(self, callback):
        self.callback, self.stage = callback, ""

    def start(self, name: str, stage: str) -> None:
        self.stage = stage

    def planned(self, reused: int, items: int) -> None:
        pass

    def update(self, done: int, total: int, requests: tuple[int, int] | None = None) -> None:
        if self.stage == "answering":
            self.callback(done, total)

    def close(self) -> None:
        pass
