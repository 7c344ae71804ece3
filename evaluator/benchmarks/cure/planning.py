"""CURE's plan: one details row per question of every instance, and the model request that answers it.

mode "likelihood" (default): the prompt does not list the candidates; each candidate is scored as the reply.
mode "generation": the candidates are listed as "(A) ...", and the model is asked for the letter.
Every question of an instance is asked about the same marked image, fetched when the instance's turn comes: in a
full run with the `cure.images` source set, from the VG and VCR releases (cure/images.py), else from its URL.
"""
from __future__ import annotations

import json
import math

from evaluator.benchmarks import lite
from evaluator.benchmarks.cure.data import (LITE_SUBSET, OFFICIAL_URL, SAMPLE_PATH, lite_key, lite_stratum,
                                           load_instances, questions)
from evaluator.benchmarks.cure.images import SOURCE as IMAGES_SOURCE, resolve_images
from evaluator.benchmarks.cure.prompts import HIGH_LEVEL, build_prompt, load_prompts, used_prompts
from evaluator.benchmarks.cure.region import marked_image
from evaluator.benchmarks.run_options import choice_option, int_option
from evaluator.benchmarks.spec import Ask, Plan, PlanContext
from evaluator.models.base import GenerationRequest

NAME = "cure"
MODES = ("likelihood", "generation")
GENERATION_MAX_NEW_TOKENS = 16


def mode_option(options: dict[str, str]) -> str:
    return choice_option(options, "cure.mode", "likelihood", MODES)


def suite_location(ctx: PlanContext):
    """Our sample file, or the full suite's location (the source setting, else the official file)."""
    return SAMPLE_PATH if ctx.suite == "sample" else (ctx.sources.get(NAME) or OFFICIAL_URL)


def _row(inst: dict, part: str, question: str | None, prompt: str, options: list[str], gold: int,
         mode: str) -> dict:
    """A details row with every column, filled as for an unanswered question."""
    return {
        "benchmark": NAME,
        "question_id": inst["question_id"],
        "part": part,
        "repeat": 0,
        "question": HIGH_LEVEL if question is None else question,
        "prompt": prompt,
        "prediction": "",
        "reasoning": None, "reasoning_tokens": None, "thought_unclosed": None, "near_ties": "",
        "parsed_answer": -1,
        "gold": int(gold),
        "correct": False,
        "score": math.nan,
        "extraction": "likelihood" if mode == "likelihood" else "letter",
        "option_scores": "",
        "choice_sum": -1,
        "status": "ok",
        "error": "",
        "chain_length": int(inst["chain_length"]),
        "options": json.dumps(options, ensure_ascii=False),
        "image_url": inst["image"]["url"],
        "image_file": inst["image_ref"] if inst.get("release_path") else "",  # read from the releases instead
        "region": json.dumps({**{k: inst["bboxes"][0][k] for k in ("left", "top", "width", "height")},
                              "image_width": inst["image"]["width"], "image_height": inst["image"]["height"]}),
    }


def plan(ctx: PlanContext) -> Plan:
    """Every question of every instance (all, or the first ctx.limit instances; a lite run: the lite rule's instances
    of the full file), likelihood or generation."""
    mode = mode_option(ctx.options)
    max_new_tokens = int_option(ctx.options, "cure.max_new_tokens", GENERATION_MAX_NEW_TOKENS, 1)
    instances = load_instances(suite_location(ctx))
    looked_for = dict(LITE_SUBSET.strata)  # every stratum of the official data
    strata = lite.strata_counts(instances, lite_stratum, looked_for) if ctx.suite != "sample" else None
    if ctx.suite == "lite":  # the card's lite rule, on the instances' own keys
        instances = lite.select(instances, NAME, LITE_SUBSET, lite_key, lite_stratum)
    suite_items = len(instances)
    if ctx.limit and ctx.limit > 0:
        instances = instances[: ctx.limit]
    if ctx.suite != "sample":  # the sample suite ships its own images
        resolve_images(instances, ctx.sources.get(IMAGES_SOURCE, ""))
    prompts = load_prompts()
    rows: list[dict] = []
    asks: list[Ask] = []
    for inst in instances:
        image = (lambda inst=inst: [marked_image(inst, ctx.images_dir)])  # one fetch for all its questions
        for part, question, options, gold in questions(inst):
            text = build_prompt(prompts, question, options, mode)
            row = _row(inst, part, question, text, options, gold, mode)
            rows.append(row)
            if mode == "likelihood":
                asks.append(Ask(inst["question_id"], GenerationRequest(text=text), [row], options=options,
                                images=image))
            else:
                asks.append(Ask(inst["question_id"], GenerationRequest(text=text, max_new_tokens=max_new_tokens),
                                [row], images=image))
    return Plan(rows=rows, items=[inst["question_id"] for inst in instances], asks=asks,
                prompts={name: prompts[name] for name in used_prompts(mode)}, suite_items=suite_items,
                strata=strata)
