"""LAVE's plan: one details row per item, and one greedy generation request that answers it freely about its
image, with our short-answer instruction (prompts/lave_answer.txt). The image is read when the item's turn comes."""
from __future__ import annotations

import json
import math
from pathlib import Path

from evaluator.benchmarks import lite
from evaluator.benchmarks.lave.data import LITE_SUBSET, item_image, load_suite
from evaluator.benchmarks.run_options import int_option
from evaluator.benchmarks.spec import Ask, Plan, PlanContext
from evaluator.inputs.prompt_files import prompts_dir, read_prompt
from evaluator.models.base import GenerationRequest

NAME = "lave"
ANSWER_PROMPT = "lave_answer"
DEFAULT_MAX_NEW_TOKENS = 32

# every column of a details row, in order
DETAIL_COLUMNS = (
    "benchmark", "question_id", "source", "kind", "style", "status", "error", "question", "prompt", "prediction",
    "reasoning", "reasoning_tokens", "thought_unclosed", "near_ties", "parsed_answer", "gold", "rating", "lave",
    "rating_fallback", "no_rationale", "correct", "score", "vqa_accuracy", "anls", "exact_match", "bleu4", "cider",
    "judge_prompt", "judge_rationale", "judge_raw", "judge_error", "extraction", "image_ref",
)


def max_new_tokens_option(options: dict[str, str]) -> int:
    return int_option(options, "lave.max_new_tokens", DEFAULT_MAX_NEW_TOKENS, 1)


def answer_template() -> str:
    """Our short-answer instruction; "{question}" stands for the item's question."""
    return read_prompt(prompts_dir(__file__), ANSWER_PROMPT)


def unscored() -> dict:
    """The columns score() fills, as they are before any answer is read or rated."""
    return {
        "parsed_answer": "", "rating": math.nan, "lave": math.nan, "rating_fallback": False, "no_rationale": False,
        "correct": False, "score": math.nan, "vqa_accuracy": math.nan, "anls": math.nan, "exact_match": math.nan,
        "bleu4": math.nan, "cider": math.nan, "judge_prompt": "", "judge_rationale": "", "judge_raw": "",
        "judge_error": "", "extraction": "judge",
    }


def _row(item: dict) -> dict:
    """A details row with every column, filled as for an unanswered question."""
    row = {
        "benchmark": NAME, "question_id": item["question_id"], "source": item["source"], "kind": item["kind"],
        "style": item["style"], "status": "ok", "error": "", "question": item["question"], "prompt": "",
        "prediction": "", "reasoning": None, "reasoning_tokens": None, "thought_unclosed": None, "near_ties": "",
        "gold": json.dumps(item["answers"], ensure_ascii=False), "image_ref": item["image_shown"],
        **unscored(),
    }
    return {column: row[column] for column in DETAIL_COLUMNS}


def lite_key(item: dict) -> str:
    """An item's own key in the lite rule: its source, question and image reference (the Docmatix split has no ids:
    its question_id is its row's position)."""
    return f"{item['source']}|{item['question']}|{item['image_shown']}"


def plan(ctx: PlanContext) -> Plan:
    """One row and one answer request per item of the suite (all, or the first ctx.limit; a lite run: the lite rule's
    items of the full suite)."""
    max_new_tokens = max_new_tokens_option(ctx.options)
    template = answer_template()
    items = load_suite(ctx)
    looked_for = dict(LITE_SUBSET.strata)  # every stratum of the official data
    strata = lite.strata_counts(items, lambda item: item["source"], looked_for) if ctx.suite != "sample" else None
    if ctx.suite == "lite":  # the card's lite rule, on each item's source, question and image
        items = lite.select(items, NAME, LITE_SUBSET, lite_key, lambda item: item["source"])
    suite_items = len(items)
    if ctx.limit and ctx.limit > 0:
        items = items[: ctx.limit]
    images_dir = Path(ctx.images_dir)
    rows, asks = [], []
    for item in items:
        row = _row(item)
        rows.append(row)
        request = GenerationRequest(text=template.replace("{question}", item["question"]).strip(),
                                    max_new_tokens=max_new_tokens, temperature=0.0)
        asks.append(Ask(item["question_id"], request, [row],
                        images=lambda item=item: [item_image(item, images_dir)]))
    return Plan(rows=rows, items=[item["question_id"] for item in items], asks=asks,
                prompts={ANSWER_PROMPT: template}, suite_items=suite_items,
                strata=strata)
