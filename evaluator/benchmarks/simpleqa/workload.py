"""What a SimpleQA run asks, counted before it runs: per question a greedy answer of up to simpleqa.max_new_tokens,
with stated confidence a second greedy request, with answer frequency k samples (simpleqa.samples), and one judge
grade per graded answer (the answer, the confidence reply, the most frequent sample). Which calibrations run is
the options' rule (options.calibration_defaults: both on the sample suite; on the full and lite suites only those
that keep the run within simpleqa.max_cost). Text only.

The sample suite is counted from its own plan; the full and lite suites from the card's strata (the official file's
questions by topic, counted offline)."""
from __future__ import annotations

from evaluator.benchmarks import lite as lite_rule
from evaluator.benchmarks.simpleqa.data import LITE_SUBSET
from evaluator.benchmarks.simpleqa.options import RunSettings, read_settings
from evaluator.benchmarks.simpleqa.planning import plan
from evaluator.benchmarks.simpleqa.prompts import load_prompts
from evaluator.benchmarks.spec import LITE, SAMPLE, PlanContext
from evaluator.benchmarks.workloads import Calls, Workload, count_plan, limited, text_tokens

NAME = "simpleqa"
QUESTION_TOKENS = 24.0  # text tokens of a question: the official file's mean (4,326 questions, 4 characters a token)
JUDGE_DEFAULT_TOKENS = 512.0  # a grade's budget when simpleqa.judge_max_tokens is unset (the judge's own default)


def _judging(settings: RunSettings) -> tuple[float, float, float]:
    """(judge calls per question, text tokens of one grade's prompt, its reply's budget)."""
    calls = 1.0 + settings.confidence + settings.frequency
    prompt = text_tokens(load_prompts(settings.grader_style)["simpleqa_grader"]) + 2 * QUESTION_TOKENS
    return calls, prompt, float(settings.judge_max_tokens or JUDGE_DEFAULT_TOKENS)


def _how(settings: RunSettings) -> str:
    parts = [f"a greedy answer of up to {settings.max_new_tokens} tokens"]
    if settings.confidence:
        parts.append(f"a stated-confidence reply of up to {settings.confidence_max_new_tokens}")
    if settings.frequency:
        parts.append(f"{settings.samples} samples at temperature 1 (answer frequency)")
    calls = _judging(settings)[0]
    return f"{', '.join(parts)}; {calls:g} judge grade{'s' if calls != 1 else ''}; text only"


def workload(ctx: PlanContext) -> Workload:
    """The run's requests: counted from the sample's plan, else from the card's strata (lite: the rule's share)."""
    settings = read_settings(ctx.suite, ctx.options)
    judge_calls, judge_prompt, judge_new = _judging(settings)
    if ctx.suite == SAMPLE:
        return count_plan(plan(ctx), NAME, ctx.suite, "question", _how(settings), judge_calls, judge_prompt,
                          judge_new)
    strata = dict(LITE_SUBSET.strata)
    if ctx.suite == LITE:
        strata = lite_rule.sizes(LITE_SUBSET, strata)
    confidence_text = text_tokens(load_prompts(settings.grader_style)["simpleqa_confidence"])
    generations = 1.0 + settings.confidence + settings.samples * settings.frequency
    new_tokens = (settings.max_new_tokens * (1 + settings.samples * settings.frequency)
                  + settings.confidence_max_new_tokens * settings.confidence) / generations
    part = Calls(kind="question", items=sum(strata.values()), generations=generations, new_tokens=new_tokens,
                 prompt_tokens=QUESTION_TOKENS + confidence_text * settings.confidence / generations,
                 judge_calls=judge_calls, judge_prompt_tokens=judge_prompt, judge_new_tokens=judge_new,
                 how=_how(settings))
    basis = (f"the official file's {sum(dict(LITE_SUBSET.strata).values()):,} questions by topic, counted offline"
             + (f"; the lite rule's {part.items:,} of them" if ctx.suite == LITE else ""))
    return limited(Workload(NAME, ctx.suite, (part,), basis), ctx.limit)
