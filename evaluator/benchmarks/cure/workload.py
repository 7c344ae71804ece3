"""What a CURE run asks, counted before it runs: every question of an instance (the high-level inference, then each
step of its chain) is one model request about its one marked image, an option scoring over six candidates
(likelihood, the default) or a generation of up to cure.max_new_tokens (generation); no judge.

The sample suite is counted from its own plan; the full and lite suites from the card's strata (the official file's
instances by image source and chain length, counted offline), so the plan needs no download."""
from __future__ import annotations

from collections import Counter

from evaluator.benchmarks import lite as lite_rule
from evaluator.benchmarks.cure.data import LITE_SUBSET, N_OPTIONS, stratum_chain
from evaluator.benchmarks.cure.planning import GENERATION_MAX_NEW_TOKENS, mode_option, plan
from evaluator.benchmarks.run_options import int_option
from evaluator.benchmarks.spec import LITE, SAMPLE, PlanContext
from evaluator.benchmarks.workloads import Calls, Workload, count_plan, limited

NAME = "cure"
# text tokens of one question's prompt, by mode: the sample suite's mean (workloads.count_plan, four characters a
# token); the full suite's questions are of the same kind
PROMPT_TOKENS = {"likelihood": 53.0, "generation": 98.0}


def _how(mode: str, max_new_tokens: int) -> str:
    what = (f"an option scoring over its {N_OPTIONS} candidates" if mode == "likelihood" else
            f"a generation of up to {max_new_tokens} tokens naming a letter")
    return f"one request per question (the inference, then each step of the chain), {what}; one image; no judge"


def _calls(chain_length: int, items: int, mode: str, max_new_tokens: int) -> Calls:
    questions = chain_length + 1
    scored = mode == "likelihood"
    return Calls(kind=f"instance of {chain_length} steps", items=items,
                 generations=0.0 if scored else questions, new_tokens=0.0 if scored else max_new_tokens,
                 scorings=questions if scored else 0.0, options=N_OPTIONS if scored else 0.0,
                 prompt_tokens=PROMPT_TOKENS[mode], images=1.0, how=_how(mode, max_new_tokens))


def workload(ctx: PlanContext) -> Workload:
    """The run's requests: counted from the sample's plan, else from the card's strata (lite: the rule's share)."""
    mode = mode_option(ctx.options)
    max_new_tokens = int_option(ctx.options, "cure.max_new_tokens", GENERATION_MAX_NEW_TOKENS, 1)
    if ctx.suite == SAMPLE:
        return count_plan(plan(ctx), NAME, ctx.suite, "instance", _how(mode, max_new_tokens))
    strata = dict(LITE_SUBSET.strata)
    if ctx.suite == LITE:
        strata = lite_rule.sizes(LITE_SUBSET, strata)
    by_length: Counter = Counter()
    for name, count in strata.items():
        by_length[stratum_chain(name)] += count
    parts = tuple(_calls(length, count, mode, max_new_tokens) for length, count in sorted(by_length.items()))
    basis = (f"the official file's {sum(dict(LITE_SUBSET.strata).values()):,} instances by chain length, counted "
             "offline" + (f"; the lite rule's {sum(strata.values()):,} of them" if ctx.suite == LITE else ""))
    return limited(Workload(NAME, ctx.suite, parts, basis), ctx.limit)
