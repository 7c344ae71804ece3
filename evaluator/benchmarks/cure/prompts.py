"""CURE prompts (our own wording, in prompts/): the high-level question, a chain step, and the answer format."""
from __future__ import annotations

from evaluator.inputs.prompt_files import prompts_dir, read_prompts

LETTERS = "ABCDEF"
PROMPT_FILES = ("cure_high", "cure_step", "cure_choices", "cure_reply")
PROMPTS_DIR = prompts_dir(__file__)
HIGH_LEVEL = "What is the most reasonable inference about the marked region?"  # the question column of "high" rows


def load_prompts() -> dict[str, str]:
    """The CURE prompt templates, by name."""
    return read_prompts(PROMPTS_DIR, PROMPT_FILES)


def used_prompts(mode: str) -> tuple[str, ...]:
    """The templates a mode sends: the options listed (generation) or a one-sentence reply (likelihood)."""
    return ("cure_high", "cure_step", "cure_choices" if mode == "generation" else "cure_reply")


def build_prompt(prompts: dict[str, str], question: str | None, options: list[str], mode: str) -> str:
    """The text sent with the marked image. `question` None means the high-level question."""
    if mode == "generation":
        listed = "\n".join(f"({LETTERS[i]}) {opt}" for i, opt in enumerate(options))
        answer_format = prompts["cure_choices"].replace("{listed}", listed)
    else:
        answer_format = prompts["cure_reply"]
    template = prompts["cure_high"] if question is None else prompts["cure_step"].replace("{question}", question)
    return template.replace("{answer_format}", answer_format.strip()).strip()
