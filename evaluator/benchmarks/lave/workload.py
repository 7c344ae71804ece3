"""What a LAVE run asks, counted before it runs: per item one greedy answer of up to lave.max_new_tokens about its
one image, and one judge rating (our task text, lave.shots demonstrations, the item).

The sample suite is counted from its own plan; the full and lite suites from the card's strata (the Docmatix
zero-shot test split's 200 rows, from its dataset card), so the plan needs no download. A VQA file a deployer adds
(LEADERBOARD_LAVE_VQA) is not counted before it is read."""
from __future__ import annotations

from evaluator.benchmarks import lite as lite_rule
from evaluator.benchmarks.lave.data import LITE_SUBSET
from evaluator.benchmarks.lave.planning import answer_template, max_new_tokens_option, plan
from evaluator.benchmarks.lave.rater import DEFAULT_SHOTS, build_lave_prompt, load_lave_prompts
from evaluator.benchmarks.run_options import int_option
from evaluator.benchmarks.spec import LITE, SAMPLE, PlanContext
from evaluator.benchmarks.workloads import Calls, Workload, count_plan, limited, text_tokens

NAME = "lave"
QUESTION_TOKENS = 12.0  # text tokens of a question (a Docmatix question, about fifty characters)
JUDGE_DEFAULT_TOKENS = 512.0  # a rating's budget when lave.judge_max_tokens is unset (the judge's own default)


def _judging(options: dict[str, str]) -> tuple[float, float]:
    """(text tokens of one rating's prompt, its reply's budget)."""
    shots = int_option(options, "lave.shots", DEFAULT_SHOTS, 0)
    prompt = build_lave_prompt(load_lave_prompts(), "What is the total amount on this receipt?", ["12.50"], "12.50",
                               shots=shots)
    budget = int_option(options, "lave.judge_max_tokens", 0, 1)
    return text_tokens(prompt), float(budget or JUDGE_DEFAULT_TOKENS)


def workload(ctx: PlanContext) -> Workload:
    """The run's requests: counted from the sample's plan, else from the card's strata (lite: the rule's share)."""
    max_new_tokens = max_new_tokens_option(ctx.options)
    judge_prompt, judge_new = _judging(ctx.options)
    how = f"one greedy answer of up to {max_new_tokens} tokens about its image; one judge rating"
    if ctx.suite == SAMPLE:
        return count_plan(plan(ctx), NAME, ctx.suite, "question", how, 1.0, judge_prompt, judge_new)
    strata = dict(LITE_SUBSET.strata)
    if ctx.suite == LITE:
        strata = lite_rule.sizes(LITE_SUBSET, strata)
    part = Calls(kind="question", items=sum(strata.values()), generations=1.0, new_tokens=max_new_tokens,
                 prompt_tokens=text_tokens(answer_template()) + QUESTION_TOKENS, images=1.0, judge_calls=1.0,
                 judge_prompt_tokens=judge_prompt, judge_new_tokens=judge_new, how=how)
    basis = ("the Docmatix zero-shot test split's 200 rows (its dataset card's split sizes)"
             + (f"; the lite rule's {part.items:,} of them" if ctx.suite == LITE else ""))
    return limited(Workload(NAME, ctx.suite, (part,), basis), ctx.limit)
