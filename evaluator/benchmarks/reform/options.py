"""ReForm-Eval's run options ("reform.<name>"), read and checked once for planning and scoring."""
from __future__ import annotations

from dataclasses import dataclass

from evaluator.benchmarks.reform.prompts import MARK_STYLES
from evaluator.benchmarks.run_options import choice_option, int_option

MODES = ("both", "generation", "likelihood")
MARK_MODES = ("random", *MARK_STYLES)
DEFAULT_REPEATS = 5
TEMPERATURE = 0.2  # generation samples multiple choice at this temperature (a seed per item and repeat)
MC_MAX_NEW_TOKENS = 16
FREE_MAX_NEW_TOKENS = 32
ANY_SEED = -(2 ** 63)  # a seed may be any integer


@dataclass(frozen=True)
class RunSettings:
    mode: str
    repeats: int
    marks: str
    seed: int
    max_new_tokens: int
    free_max_new_tokens: int

    @property
    def do_gen(self) -> bool:
        return self.mode in ("both", "generation")

    @property
    def do_lik(self) -> bool:
        return self.mode in ("both", "likelihood")


def run_settings(options: dict[str, str]) -> RunSettings:
    """The run's settings from its options; ValueError naming an option that does not fit."""
    return RunSettings(
        mode=choice_option(options, "reform.mode", "both", MODES),
        repeats=int_option(options, "reform.repeats", DEFAULT_REPEATS, 1),
        marks=choice_option(options, "reform.marks", "random", MARK_MODES),
        seed=int_option(options, "reform.seed", 0, ANY_SEED),
        max_new_tokens=int_option(options, "reform.max_new_tokens", MC_MAX_NEW_TOKENS, 1),
        free_max_new_tokens=int_option(options, "reform.free_max_new_tokens", FREE_MAX_NEW_TOKENS, 1),
    )
