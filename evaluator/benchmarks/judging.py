"""Asking the judge for a benchmark's grades: one place that requires a judge, sends the conversations in chunks
(so the run's progress moves while grading), asks again when a reply is not a judgement, and never lets a failed
call or a non-judgement pass for a grade."""
from __future__ import annotations

from typing import Callable

from evaluator.benchmarks.spec import ScoreContext
from evaluator.judge import JudgeResult

CHUNK = 64  # at most this many conversations per complete_many call; the judge runs each chunk concurrently
# replies asked for one conversation when the first ones are not judgements (evaluator.judge.judgement)
REPLY_ATTEMPTS = 3


def chunk_size(judge) -> int:
    """Conversations per complete_many call: what the judge works on at once (a local judge's batch, an endpoint's
    concurrency), at most CHUNK, so the run's progress moves after every batch of grades."""
    parallel = getattr(judge, "parallel", None)
    return CHUNK if not isinstance(parallel, int) or parallel < 1 else min(CHUNK, parallel)


def reply_attempts(judge, generation: dict) -> int:
    """Replies asked for one conversation: one where the judge is repeatable and greedy (a local model at temperature
    0 gives the same reply again, so asking again only costs time), else REPLY_ATTEMPTS."""
    greedy = not float(generation.get("temperature") or 0)
    return 1 if getattr(judge, "repeatable", False) is True and greedy else REPLY_ATTEMPTS


def require_judge(ctx: ScoreContext, message: str):
    """The context's judge; ValueError(message) when the run has none."""
    if ctx.judge is None:
        raise ValueError(message)
    return ctx.judge


def _complete(judge, conversations: list[list[dict]], generation: dict) -> list:
    got = judge.complete_many(conversations, **generation)
    if len(got) != len(conversations):
        raise RuntimeError(f"the judge returned {len(got)} results for {len(conversations)} conversations")
    return list(got)


def until_judged(judge, conversations: list[list[dict]], results: list, check: Callable[[str], str | None],
                 generation: dict, replies: int = REPLY_ATTEMPTS) -> list:
    """`results` where each reply that `check` says is not a judgement (evaluator.judge.judgement) was asked again, up
    to `replies` replies in all; one that never judged keeps its last reply as text and gets an error saying why, so it
    is counted ungraded or unrated and never read as a grade."""
    results = list(results)
    for attempt in range(1, replies + 1):
        faulty = [i for i, r in enumerate(results) if r.error is None and check(r.text) is not None]
        if not faulty:
            break
        if attempt == replies:
            for i in faulty:
                r = results[i]
                asked = "1 reply" if replies == 1 else f"{replies} replies"
                results[i] = JudgeResult(text=r.text, error=f"not a judgement after {asked}: {check(r.text)}",
                                         attempts=r.attempts)
            break
        again = _complete(judge, [conversations[i] for i in faulty], generation)
        for i, new in zip(faulty, again):
            results[i] = JudgeResult(text=new.text, error=new.error, attempts=results[i].attempts + new.attempts)
    return results


def ask_judge(ctx: ScoreContext, conversations: list[list[dict]], check: Callable[[str], str | None] | None = None,
              **generation) -> list:
    """One JudgeResult (text or error) per conversation, in order; progress is reported after each chunk. With
    `check`, a reply that is not a judgement is asked again and at last reported as an error (until_judged)."""
    judge = ctx.judge
    results: list = []
    total = len(conversations)
    ctx.progress(0, total)
    step, replies = chunk_size(judge), reply_attempts(judge, generation)
    for start in range(0, total, step):
        part = conversations[start:start + step]
        got = _complete(judge, part, generation)
        if check is not None:
            got = until_judged(judge, part, got, check, generation, replies)
        results.extend(got)
        ctx.progress(len(results), total)
    return results
