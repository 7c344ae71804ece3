"""What a ReForm-Eval run asks, counted before it runs: a multiple-choice item is asked reform.repeats times, each
repeat by a sampled generation of up to reform.max_new_tokens (mode generation or both) and by an option scoring
(mode likelihood or both); an OCR, key-information or caption item once, by a greedy generation of up to
reform.free_max_new_tokens. Every request carries the item's image; no judge.

The sample suite is counted from its own plan; the full and lite suites from the dataset table (counts.py: each of
the 61 datasets' items and where that number comes from), so the plan needs no download, and a first download says
where the table was wrong (the run's suite_check)."""
from __future__ import annotations

from evaluator.benchmarks import lite as lite_rule
from evaluator.benchmarks.reform.counts import COUNTS
from evaluator.benchmarks.reform.datasets import ACCURACY_DIMENSIONS, CAPTION, DATASETS_BY_NAME, MC
from evaluator.benchmarks.reform.options import RunSettings, run_settings
from evaluator.benchmarks.reform.planning import plan
from evaluator.benchmarks.reform.suite import LITE_SUBSET
from evaluator.benchmarks.spec import LITE, SAMPLE, PlanContext
from evaluator.benchmarks.workloads import Calls, Workload, count_plan

NAME = "reform"
# the sample suite's means (workloads.count_plan, four characters a token): text tokens of a multiple-choice request
# asked by generation (instruction, options listed, the one-shot example and any dialogue history) and by likelihood,
# and of a free-form one; options per multiple-choice question
GENERATION_PROMPT_TOKENS, LIKELIHOOD_PROMPT_TOKENS, FREE_PROMPT_TOKENS = 102.0, 72.0, 23.0
OPTIONS_PER_QUESTION = 3.3


def _how(settings: RunSettings) -> str:
    generation = f"a sampled generation of up to {settings.max_new_tokens} tokens"
    asked = {"both": f"{generation} and an option scoring", "generation": generation,
             "likelihood": "an option scoring"}[settings.mode]
    return (f"multiple choice: {settings.repeats} repeats (reform.repeats), each in its own wording and option order, "
            f"{asked}; OCR, key information and captions: one greedy generation of up to "
            f"{settings.free_max_new_tokens} tokens; one image each; no judge")


def parts(counts: dict[str, int], settings: RunSettings) -> tuple[Calls, ...]:
    """The calls of `counts` (dataset -> items) by form: multiple choice, then free-form."""
    mc = sum(n for name, n in counts.items() if DATASETS_BY_NAME[name].form == MC)
    captions = sum(n for name, n in counts.items() if DATASETS_BY_NAME[name].form == CAPTION)
    free = sum(counts.values()) - mc - captions
    gen, lik = settings.do_gen, settings.do_lik
    how = _how(settings)
    prompt = ((GENERATION_PROMPT_TOKENS if gen else 0.0) + (LIKELIHOOD_PROMPT_TOKENS if lik else 0.0)) / (gen + lik)
    found = [Calls(kind="multiple-choice item", items=mc, generations=settings.repeats * gen,
                   new_tokens=settings.max_new_tokens if gen else 0.0, scorings=settings.repeats * lik,
                   options=OPTIONS_PER_QUESTION if lik else 0.0, prompt_tokens=prompt, images=1.0, how=how)]
    for kind, n in (("OCR or key-information item", free), ("caption item", captions)):
        found.append(Calls(kind=kind, items=n, generations=1.0, new_tokens=settings.free_max_new_tokens,
                           prompt_tokens=FREE_PROMPT_TOKENS, images=1.0, how=how))
    return tuple(part for part in found if part.items)


def table_counts(names: list[str] | None = None) -> dict[str, int]:
    """The dataset table's items per dataset (`names`: the datasets a run's source keeps; None: all 61)."""
    return {c.name: c.items for c in COUNTS if names is None or c.name in names}


def per_dimension(counts: dict[str, int], limit: int) -> dict[str, int]:
    """`counts` cut as a limit cuts a run (planning.select: `limit` items per dimension, taken round-robin over its
    datasets)."""
    if not limit or limit <= 0:
        return dict(counts)
    taken = {name: 0 for name in counts}
    by_dimension: dict[str, list[str]] = {}
    for name in counts:
        by_dimension.setdefault(DATASETS_BY_NAME[name].dimension, []).append(name)
    for names in by_dimension.values():
        left = min(limit, sum(counts[n] for n in names))
        while left > 0:
            for name in names:
                if left > 0 and taken[name] < counts[name]:
                    taken[name] += 1
                    left -= 1
    return taken


def workload(ctx: PlanContext) -> Workload:
    """The run's requests: counted from the sample's plan, else from the dataset table (lite: the rule's share)."""
    settings = run_settings(ctx.options)
    if ctx.suite == SAMPLE:
        return count_plan(plan(ctx), NAME, ctx.suite, "item", _how(settings))
    chosen = ctx.sources.get(NAME)
    counts = table_counts([n.strip() for n in chosen.split(",") if n.strip()] if chosen else None)
    full = sum(counts.values())
    if ctx.suite == LITE:
        counts = lite_rule.sizes(LITE_SUBSET, counts)
    bases = sorted({c.basis for c in COUNTS if c.name in counts})
    basis = (f"the dataset table's {full:,} items in {len(counts)} datasets ({', '.join(bases)}: counts.py says "
             "where each comes from; a first download confirms them)"
             + (f"; the lite rule's {sum(counts.values()):,} of them" if ctx.suite == LITE else ""))
    if ctx.limit and ctx.limit > 0:
        counts = per_dimension(counts, ctx.limit)
        basis += f"; {ctx.limit} per dimension (the limit)"
    confirmed = all(c.basis == "counted" for c in COUNTS if c.name in counts)
    return Workload(NAME, ctx.suite, parts(counts, settings), basis, confirmed)


def headline_weights(strata: dict[str, int]) -> dict[str, float]:
    """Each dataset's weight in gen_overall (the headline): the mean over the accuracy dimensions of the mean over
    each one's datasets; the caption datasets (visual description, scored by CIDEr) weigh nothing."""
    by_dimension: dict[str, list[str]] = {}
    for name in strata:
        dimension = DATASETS_BY_NAME[name].dimension
        if dimension in ACCURACY_DIMENSIONS:
            by_dimension.setdefault(dimension, []).append(name)
    return {name: (1.0 / (len(by_dimension) * len(by_dimension[DATASETS_BY_NAME[name].dimension]))
                   if DATASETS_BY_NAME[name].dimension in by_dimension else 0.0) for name in strata}
