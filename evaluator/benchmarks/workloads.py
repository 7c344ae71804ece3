"""What a benchmark's run will ask, counted before it runs (spec.Workload): helpers every benchmark's `workload`
shares.

- `count_plan` counts a plan's Asks exactly (the sample suite, shipped with the project, is counted so);
- `limited` scales a workload counted from a card's tables to a run's item limit (which items a limit keeps is known
  only once the data is read, so the kinds keep their shares);
- `text_tokens` estimates the tokens of a text without a tokenizer (CHARS_PER_TOKEN: an estimate, said as one).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from evaluator.benchmarks.spec import Plan

@dataclass(frozen=True)
class Calls:
    """What the items of one kind ask in a run, counted before it runs (evaluator.plans): how many items, and per
    item its model requests, their budgets and its judge calls. Token counts are budgets (a reply that stops early
    spends fewer) before any thinking budget, which the plan adds per generation; prompt tokens are text tokens
    (the images' tokens depend on the model, and the plan adds them)."""

    kind: str  # the items, in words ("multiple-choice instance")
    items: int
    generations: float = 0.0  # generate requests per item
    new_tokens: float = 0.0  # each one's answer budget (max_new_tokens)
    scorings: float = 0.0  # option-scoring requests per item
    options: float = 0.0  # options per scoring request
    prompt_tokens: float = 0.0  # text tokens of one request's prompt, typical
    images: float = 0.0  # images per request
    judge_calls: float = 0.0  # judge requests per item
    judge_prompt_tokens: float = 0.0  # text tokens of one judge request
    judge_new_tokens: float = 0.0  # each judge reply's budget
    how: str = ""  # the calls of one item in words ("5 repeats (reform.repeats): a sampled generation and ...")


@dataclass(frozen=True)
class Workload:
    """Everything one benchmark's run will ask, before it runs: its items by kind and what each asks. `basis` says
    where the item counts come from; `confirmed` is False where they come from a table of the card that a first
    download must confirm (ReForm-Eval's derived dataset sizes)."""

    benchmark: str
    suite: str
    parts: tuple[Calls, ...]
    basis: str
    confirmed: bool = True

    def total(self, field_name: str) -> float:
        """A per-item figure summed over every item (`field_name`: "generations", "scorings", "judge_calls") or a
        per-request one over every request ("new_tokens": over generations; "options": over scorings;
        "prompt_tokens": over both; "judge_prompt_tokens", "judge_new_tokens": over judge calls)."""
        per_request = {"new_tokens": ("generations",), "options": ("scorings",),
                       "prompt_tokens": ("generations", "scorings"), "judge_prompt_tokens": ("judge_calls",),
                       "judge_new_tokens": ("judge_calls",)}
        if field_name == "items":
            return float(sum(part.items for part in self.parts))
        if field_name in per_request:
            return float(sum(part.items * getattr(part, field_name) * sum(getattr(part, n) for n in
                                                                          per_request[field_name])
                             for part in self.parts))
        return float(sum(part.items * getattr(part, field_name) for part in self.parts))

    @property
    def items(self) -> int:
        return int(self.total("items"))


CHARS_PER_TOKEN = 4.0  # English prose in a BPE vocabulary: about four characters a token (an estimate, not counted)


def text_tokens(text: str | None) -> float:
    """About how many tokens `text` takes (CHARS_PER_TOKEN characters a token)."""
    return len(text or "") / CHARS_PER_TOKEN


def count_plan(plan: Plan, benchmark: str, suite: str, kind: str, how: str, judge_calls: float = 0.0,
               judge_prompt_tokens: float = 0.0, judge_new_tokens: float = 0.0) -> Workload:
    """A plan's Asks counted exactly, as one kind of item with per-item means (`judge_*`: per item, as the benchmark
    knows its grading; the Asks do not hold it)."""
    items = max(1, len(plan.items))
    generations = [ask for ask in plan.asks if ask.options is None]
    scorings = [ask for ask in plan.asks if ask.options is not None]
    requests = max(1, len(plan.asks))
    text = sum(text_tokens(ask.request.text) + sum(text_tokens(turn.get("content") if isinstance(turn, dict)
                                                                 else str(turn))
                                                     for turn in (ask.request.history or []))
               for ask in plan.asks)
    part = Calls(kind=kind, items=len(plan.items),
                 generations=len(generations) / items,
                 new_tokens=sum(ask.request.max_new_tokens for ask in generations) / max(1, len(generations)),
                 scorings=len(scorings) / items,
                 options=sum(len(ask.options or ()) for ask in scorings) / max(1, len(scorings)),
                 prompt_tokens=text / requests,
                 images=sum(1 for ask in plan.asks if ask.images is not None) / requests,
                 judge_calls=judge_calls, judge_prompt_tokens=judge_prompt_tokens, judge_new_tokens=judge_new_tokens,
                 how=how)
    return Workload(benchmark, suite, (part,), f"counted from the {suite} suite's own plan ({len(plan.items)} items)")


def limited(workload: Workload, limit: int) -> Workload:
    """`workload` cut to a run's item limit (0: all), each kind keeping its share of the items (rounded; at least
    one item of a kind that had any, so a limit never hides a kind)."""
    total = workload.items
    if not limit or limit <= 0 or limit >= total:
        return workload
    parts = tuple(replace(part, items=max(1 if part.items else 0, round(part.items * limit / total)))
                  for part in workload.parts)
    return replace(workload, parts=parts, basis=f"{workload.basis}; cut to the first {limit} items")
