"""ReForm-Eval prompts (our own wording, in prompts/) and how each repeat of an item is asked.

- generation: an instruction template (reform_gen_templates.txt) lists the options after the question as
  "(A) x; (B) y; ..."; a fixed text-only one-shot example turn (reform_example.txt, answered "(B)") comes first.
- likelihood: a template without the options (reform_lik_templates.txt), after the same one-shot example turn (as
  the reference keeps its in-context sample in likelihood mode); each option is scored as the reply.
- OCR, key-information extraction and captioning: one short instruction each (reform_ocr / _kie / _caption).

Repeat r of an item uses template (base + r) mod T with the base drawn per item, a shuffled option order and, in
generation, a mark style; all drawn from a random.Random seeded by (seed, question_id, repeat).
"""
from __future__ import annotations

import random

from evaluator.benchmarks.reform.datasets import CAPTION, OCR
from evaluator.inputs.prompt_files import prompts_dir, read_prompt, read_prompts

PROMPTS_DIR = prompts_dir(__file__)
PROMPT_FILES = ("reform_gen_templates", "reform_lik_templates", "reform_example", "reform_example_answer",
                "reform_ocr", "reform_kie", "reform_caption")
FULL_SUITE_FILES = ("reform_dataset_questions.json", "reform_mocheg.txt")  # question wording of the full suite
MARK_STYLES = ("upper", "lower", "number")
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def load_prompts() -> dict[str, str]:
    """The ReForm prompt files (our own wording), by name."""
    return read_prompts(PROMPTS_DIR, PROMPT_FILES)


def split_templates(text: str) -> list[str]:
    """Templates separated by blank lines."""
    return [block.strip() for block in text.strip().split("\n\n") if block.strip()]


def used_prompts(prompts: dict[str, str], do_gen: bool, do_lik: bool, suite: str) -> dict[str, str]:
    """The texts a run sends, by name (hashed into the results): the free-form instructions, the one-shot example
    (both modes), the generation or likelihood templates, and for the full suite our question wording for datasets
    that have none."""
    used = ["reform_ocr", "reform_kie", "reform_caption", "reform_example", "reform_example_answer"]
    if do_gen:
        used.append("reform_gen_templates")
    if do_lik:
        used.append("reform_lik_templates")
    shown = {name: prompts[name] for name in used}
    if suite != "sample":
        for name in FULL_SUITE_FILES:
            shown[name.rsplit(".", 1)[0]] = read_prompt(PROMPTS_DIR, name)
    return shown


def marks(style: str, n: int) -> list[str]:
    """The n option marks of a style: upper "(A)", lower "(a)" or number "(1)"."""
    if style == "upper":
        chars = _UPPER
    elif style == "lower":
        chars = _UPPER.lower()
    elif style == "number":
        chars = "123456789"
    else:
        raise ValueError(f"mark style must be one of {', '.join(MARK_STYLES)}, got {style!r}")
    if n > len(chars):
        raise ValueError(f"{n} options do not fit the {style} mark style")
    return [f"({c})" for c in chars[:n]]


def list_options(options: list[str], style: str) -> str:
    """"(A) x; (B) y; ..." in the given mark style."""
    return "; ".join(f"{m} {opt}" for m, opt in zip(marks(style, len(options)), options))


def repeat_rng(seed: int, question_id: str, repeat: int) -> random.Random:
    return random.Random(f"reform|{seed}|{question_id}|{repeat}")


def plan_repeat(question_id: str, options: list[str], repeat: int, n_templates: int, *, seed: int = 0,
                mark_mode: str = "random") -> dict:
    """How repeat `repeat` of an item is asked: template_id, order (indices into the original options), mark_style.

    The template is (base + repeat) mod n_templates with base drawn per item, so the repeats of one item use
    different templates while repeats <= n_templates.
    """
    base = repeat_rng(seed, question_id, -1).randrange(n_templates)
    rng = repeat_rng(seed, question_id, repeat)
    order = list(range(len(options)))
    rng.shuffle(order)
    style = rng.choice(MARK_STYLES) if mark_mode == "random" else mark_mode
    if style not in MARK_STYLES:
        raise ValueError(f"reform.marks must be random or one of {', '.join(MARK_STYLES)}, got {mark_mode!r}")
    return {"template_id": (base + repeat) % n_templates, "order": order, "mark_style": style}


def generation_text(template: str, question: str, options: list[str], style: str) -> str:
    return template.replace("{question}", question.strip()).replace("{options}", list_options(options, style))


def likelihood_text(template: str, question: str) -> str:
    return template.replace("{question}", question.strip())


def dialogue_history(item: dict) -> list[dict]:
    """The item's earlier dialogue turns as chat history [{"role", "content"}]."""
    return [{"role": "assistant" if t.get("from") in ("assistant", "gpt") else "user", "content": t.get("value", "")}
            for t in item.get("history") or []]


def example_history(prompts: dict[str, str]) -> list[dict]:
    """The fixed one-shot format example as two earlier turns (text only)."""
    return [{"role": "user", "content": prompts["reform_example"].strip()},
            {"role": "assistant", "content": prompts["reform_example_answer"].strip()}]


def free_text(prompts: dict[str, str], item: dict) -> str:
    """The instruction for an OCR / KIE / caption item."""
    if item["form"] == CAPTION:
        return prompts["reform_caption"].strip()
    name = "reform_ocr" if item["form"] == OCR else "reform_kie"
    question = item["question"].strip() or "What is written in the image?"
    return prompts[name].replace("{question}", question).strip()
