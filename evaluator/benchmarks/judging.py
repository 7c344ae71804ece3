"""Asking the judge for a benchmark's grades: one place that requires a judge, sends the conversations in chunks
(so the run's progress moves while grading) and never lets a failed call pass for a grade."""
from __future__ import annotations

from evaluator.benchmarks.spec import ScoreContext

CHUNK = 64  # conversations per complete_many call; the judge runs each chunk concurrently


def require_judge(ctx: ScoreContext, message: str):
    """The context's judge; ValueError(message) when the run has none."""
    if ctx.judge is None:
        raise ValueError(message)
    return ctx.judge


def ask_judge(ctx: ScoreContext, conversations: list[list[dict]], **generation) -> list:
    """One JudgeResult (text or error) per conversation, in order; progress is reported after each chunk."""
    judge = ctx.judge
    results: list = []
    total = len(conversations)
    ctx.progress(0, total)
    for start in range(0, total, CHUNK):
        part = conversations[start:start + CHUNK]
        got = judge.complete_many(part, **generation)
        if len(got) != len(part):
            raise RuntimeError(f"the judge returned {len(got)} results for {len(part)} conversations")
        results.extend(got)
        ctx.progress(len(results), total)
    return results
