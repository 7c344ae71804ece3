"""SimpleQA's run options, read once and the same way by plan and score (so both agree on what ran)."""
from __future__ import annotations

from dataclasses import dataclass

from evaluator.benchmarks.run_options import flag_option, float_option, int_option
from evaluator.benchmarks.simpleqa.prompts import GRADER_STYLES

DEFAULT_MAX_NEW_TOKENS = 256  # a verbose chat answer fits; a reply that does not is counted (hit_token_limit)
DEFAULT_CONFIDENCE_MAX_NEW_TOKENS = 96
DEFAULT_SAMPLES = 5
DEFAULT_SEED = 0
DEFAULT_FULL_SUITE_MAX_COST = 1.5  # option simpleqa.max_cost: run-time factor calibration may add on the full suite
SAMPLE_TEMPERATURE = 1.0


@dataclass(frozen=True)
class RunSettings:
    """What a SimpleQA run does, from its suite and options."""

    max_new_tokens: int
    confidence_max_new_tokens: int
    samples: int
    seed: int
    judge_max_tokens: int  # 0: the judge's own default
    grader_style: str
    confidence: bool  # stated-confidence calibration runs
    frequency: bool  # answer-frequency calibration runs


def calibration_defaults(suite: str, options: dict[str, str], n_samples: int) -> tuple[bool, bool]:
    """Whether to run (stated confidence, answer frequency) calibration.

    Explicit options win ("simpleqa.confidence" / "simpleqa.frequency" = on / off). Otherwise both run on the sample
    suite; on the full suite each runs only if it keeps the run within "simpleqa.max_cost" times the plain run
    (default 1.5): stated confidence costs 2x (a second generation per question), answer frequency (1 + k)x.
    """
    if suite == "sample":
        return (flag_option(options, "simpleqa.confidence", True),
                flag_option(options, "simpleqa.frequency", True))
    max_cost = float_option(options, "simpleqa.max_cost", DEFAULT_FULL_SUITE_MAX_COST)
    return (flag_option(options, "simpleqa.confidence", 2.0 <= max_cost),
            flag_option(options, "simpleqa.frequency", 1.0 + n_samples <= max_cost))


def grader_style(options: dict[str, str]) -> str:
    """Option simpleqa.grader, any case ("reason" when unset); ValueError for anything else."""
    style = str(options.get("simpleqa.grader") or "reason").strip().lower()
    if style not in GRADER_STYLES:
        raise ValueError(f"simpleqa.grader must be one of {', '.join(GRADER_STYLES)}, not {style!r}")
    return style


def read_settings(suite: str, options: dict[str, str]) -> RunSettings:
    """Every SimpleQA option of a run, checked (in the old order); ValueError naming the first that does not fit."""
    max_new_tokens = int_option(options, "simpleqa.max_new_tokens", DEFAULT_MAX_NEW_TOKENS, 1)
    confidence_max_new_tokens = int_option(options, "simpleqa.confidence_max_new_tokens",
                                           DEFAULT_CONFIDENCE_MAX_NEW_TOKENS, 1)
    samples = int_option(options, "simpleqa.samples", DEFAULT_SAMPLES, 1)
    seed = int_option(options, "simpleqa.seed", DEFAULT_SEED, 0)
    judge_max_tokens = int_option(options, "simpleqa.judge_max_tokens", 0, 1)
    confidence, frequency = calibration_defaults(suite, options, samples)
    return RunSettings(max_new_tokens=max_new_tokens, confidence_max_new_tokens=confidence_max_new_tokens,
                    samples=samples, seed=seed, judge_max_tokens=judge_max_tokens,
                    grader_style=grader_style(options), confidence=confidence, frequency=frequency)
