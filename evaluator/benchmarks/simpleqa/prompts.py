"""SimpleQA prompts (our own wording, in prompts/): the grader (with its answer format filled in) and the
stated-confidence question."""
from __future__ import annotations

import re

from evaluator.inputs.prompt_files import prompts_dir, read_prompts

PROMPT_FILES = ("simpleqa_grader", "simpleqa_confidence", "simpleqa_format_reason", "simpleqa_format_letter")
PROMPTS_DIR = prompts_dir(__file__)
GRADER_STYLES = ("reason", "letter")  # option simpleqa.grader: a reason then the letter (default), or the letter alone


def load_prompts(grader_style: str = "reason") -> dict[str, str]:
    """The SimpleQA prompt templates, by name.

    "simpleqa_grader" comes with its answer format filled in: a one-sentence reason then a final line holding only
    the letter ("reason", the default), or the letter alone ("letter", as the reference grader asks).
    """
    if grader_style not in GRADER_STYLES:
        raise ValueError(f"simpleqa.grader must be one of {', '.join(GRADER_STYLES)}, not {grader_style!r}")
    prompts = read_prompts(PROMPTS_DIR, PROMPT_FILES)
    answer_format = prompts[f"simpleqa_format_{grader_style}"].strip()
    prompts["simpleqa_grader"] = prompts["simpleqa_grader"].replace("{answer_format}", answer_format)
    return prompts


_FIELD = re.compile(r"\{(question|gold|predicted)\}")


def fill(template: str, **values: str) -> str:
    """Replace {question} / {gold} / {predicted} in one pass (a value holding "{gold}" is left alone)."""
    return _FIELD.sub(lambda m: values.get(m.group(1), m.group(0)), template).strip()


def grader_prompt(template: str, question: str, gold: str, predicted: str) -> str:
    """The grader template filled with one question, its gold answer and the answer to grade."""
    return fill(template, question=question, gold=gold, predicted=predicted)


def grader_messages(template: str, question: str, gold: str, predicted: str) -> list[dict]:
    """The judge's conversation for one answer: a single user message."""
    return [{"role": "user", "content": grader_prompt(template, question, gold, predicted)}]
