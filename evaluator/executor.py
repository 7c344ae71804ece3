"""The one executor: runs a benchmark's Asks on the model and writes the raw answers into its details rows.

Items run in chunks of `batch_size` items, in the plan's order. For each chunk the items' images are fetched, the
option-scoring Asks are scored one by one, and every generation Ask of the chunk goes to the model in one
generate() call, which the adapter splits into batches of requests that share temperature and seed (and backs off
by halving the batch on out-of-memory). The same batch size therefore gives the same batches, and a greedy
answer never depends on its batch. Progress is reported after each chunk, in items.

An item whose images cannot be fetched is not dropped: its rows get status "image_unavailable" and the reason,
and the benchmark's score counts them and leaves them out.
"""
from __future__ import annotations

import json
from typing import Callable

from evaluator.benchmarks.spec import Ask, Plan
from evaluator.images import ImageUnavailable
from evaluator.models.base import OptionScore

UNAVAILABLE = "image_unavailable"


def prompt_as_sent(model, request) -> str:
    """The prompt text the model receives for a request (its chat template applied)."""
    build = getattr(model, "build_prompt", None)
    return build(request) if callable(build) else request.text


def option_scores_json(scores: list[OptionScore]) -> str:
    """The details column "option_scores": every option's summed and per-token mean log-likelihood."""
    return json.dumps([{"sum": s.sum_logprob, "mean": s.mean_logprob, "n_tokens": s.n_tokens} for s in scores])


def _by_item(asks: list[Ask]) -> dict[str, list[Ask]]:
    grouped: dict[str, list[Ask]] = {}
    for ask in asks:
        grouped.setdefault(ask.item, []).append(ask)
    return grouped


def _mark_unavailable(plan: Plan, item: str, reason: str) -> None:
    for row in plan.rows:
        if row.get("question_id") == item:
            row["status"], row["error"] = UNAVAILABLE, reason


def _fetch_images(asks: list[Ask]) -> None:
    """Fill each Ask's request images (one fetch per loader); ImageUnavailable propagates."""
    fetched: dict[int, list] = {}
    for ask in asks:
        if ask.images is not None:
            if id(ask.images) not in fetched:
                fetched[id(ask.images)] = ask.images()
            ask.request.images = list(fetched[id(ask.images)])


def _score(model, ask: Ask) -> None:
    scores = model.score_options(ask.request, ask.options)
    if len(scores) != len(ask.options):
        raise RuntimeError(f"the model scored {len(scores)} options of {len(ask.options)}")
    text = option_scores_json(scores)
    prompt = prompt_as_sent(model, ask.request)
    for row in ask.rows:
        row["option_scores"], row["prompt"] = text, prompt


def _generate(model, asks: list[Ask]) -> None:
    if not asks:
        return
    outputs = model.generate([ask.request for ask in asks])
    if len(outputs) != len(asks):
        raise RuntimeError(f"the model returned {len(outputs)} completions for {len(asks)} prompts")
    for ask, text in zip(asks, outputs):
        prompt = prompt_as_sent(model, ask.request)
        for row in ask.rows:
            row["prediction"], row["prompt"] = text if isinstance(text, str) else "", prompt


def execute(model, plan: Plan, batch_size: int, progress: Callable[[int, int], None] = lambda d, t: None) -> None:
    """Run every Ask of `plan` on `model`, filling the plan's rows in place."""
    grouped = _by_item(plan.asks)
    total = len(plan.items)
    size = max(1, int(batch_size or 1))
    progress(0, total)
    for start in range(0, total, size):
        chunk: list[Ask] = []
        for item in plan.items[start:start + size]:
            asks = grouped.get(item, [])
            try:
                _fetch_images(asks)
            except ImageUnavailable as exc:
                _mark_unavailable(plan, item, exc.reason)
                continue
            chunk.extend(asks)
        for ask in chunk:
            if ask.options is not None:
                _score(model, ask)
        _generate(model, [ask for ask in chunk if ask.options is None])
        for ask in chunk:
            if ask.images is not None:
                ask.request.images = []  # the chunk is done: let its images go
        progress(min(start + size, total), total)
