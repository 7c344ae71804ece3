"""SimpleQA's plan: the details rows of every question and the model requests that fill them.

Per question, in this order: the bare question, greedy ("answer"); with stated confidence on, the confidence
prompt, greedy ("confidence"); with answer frequency on, k samples of the bare question at temperature 1
("sample1".."sampleK"). The "frequency" row is derived from the samples when scoring.

Each sample has its own seed (evaluator.benchmarks.seeds: from the base seed, the question id and the sample's
number), so the k samples are k independent draws and a rerun or a resumed run draws them again. The adapter samples
each request from its own seed, so samples batch with any other request and no batch size or neighbour changes them.
Every row records whether its reply used up its max_new_tokens budget ("hit_token_limit": True or False, filled by
the executor from the adapter's generation result; None when the model does not report it).

A limit (--limit N) draws N questions at random with the fixed seed LIMIT_SEED, as the reference does
(random.Random(0).sample over the file's questions): the same N questions in every run, kept in suite order.
"""
from __future__ import annotations

import math
import random

from evaluator.benchmarks import lite
from evaluator.benchmarks.simpleqa.data import LITE_SUBSET, load_questions, suite_location
from evaluator.benchmarks.simpleqa.prompts import fill, load_prompts
from evaluator.benchmarks.simpleqa.options import SAMPLE_TEMPERATURE, RunSettings, read_settings
from evaluator.benchmarks.seeds import item_seed
from evaluator.benchmarks.spec import Ask, Plan, PlanContext
from evaluator.models.base import GenerationRequest

NAME = "simpleqa"
# every details row has these columns, in this order
DETAIL_COLUMNS = (
    "benchmark", "question_id", "part", "repeat", "question", "prompt", "prediction", "reasoning", "reasoning_tokens",
    "thought_unclosed", "near_ties", "parsed_answer", "gold", "correct", "score", "grade", "judge_rationale",
    "judge_raw", "judge_error", "extraction", "topic", "answer_type", "confidence", "hit_token_limit",
)
SAMPLE_EXTRACTION = "normalised (not graded)"
LIMIT_SEED = 0  # the reference's seed: --limit N runs the N questions random.Random(0).sample draws from the suite


def new_row(q: dict, part: str, repeat: int, prompt: str) -> dict:
    """A details row with every column, filled as for an unanswered, ungraded question."""
    return {
        "benchmark": NAME,
        "question_id": q["question_id"],
        "part": part,
        "repeat": repeat,
        "question": q["problem"],
        "prompt": prompt,
        "prediction": "",
        "reasoning": None, "reasoning_tokens": None, "thought_unclosed": None, "near_ties": "",
        "parsed_answer": "",
        "gold": q["answer"],
        "correct": False,
        "score": math.nan,
        "grade": "",
        "judge_rationale": "",
        "judge_raw": "",
        "judge_error": "",
        "extraction": SAMPLE_EXTRACTION if part.startswith("sample") else "judge",
        "topic": q["topic"],
        "answer_type": q["answer_type"],
        "confidence": math.nan,
        "hit_token_limit": None,
    }


def _asks(q: dict, settings: RunSettings, confidence_template: str) -> list[Ask]:
    """One question's requests, each with the row it fills, in the order the model gets them."""
    problem, item = q["problem"], q["question_id"]
    asks = [Ask(item, GenerationRequest(text=problem, max_new_tokens=settings.max_new_tokens, temperature=0.0),
                [new_row(q, "answer", 0, problem)])]
    if settings.confidence:
        text = fill(confidence_template, question=problem)
        asks.append(Ask(item, GenerationRequest(text=text, max_new_tokens=settings.confidence_max_new_tokens,
                                                temperature=0.0), [new_row(q, "confidence", 0, text)]))
    if settings.frequency:
        for j in range(1, settings.samples + 1):
            request = GenerationRequest(text=problem, max_new_tokens=settings.max_new_tokens,
                                        temperature=SAMPLE_TEMPERATURE, seed=item_seed(NAME, settings.seed, item, j))
            asks.append(Ask(item, request, [new_row(q, f"sample{j}", j, problem)]))
    return asks


def limited(questions: list[dict], limit: int) -> list[dict]:
    """All the questions (limit 0, or at least their number), else `limit` of them drawn at random with LIMIT_SEED
    (the positions random.Random(LIMIT_SEED).sample draws, as the reference's num_examples), in suite order."""
    if not limit or limit <= 0 or limit >= len(questions):
        return questions
    chosen = random.Random(LIMIT_SEED).sample(range(len(questions)), limit)
    return [questions[i] for i in sorted(chosen)]


def plan(ctx: PlanContext) -> Plan:
    """Every question (all, or ctx.limit of them: limited; a lite run: the lite rule's questions of the full file),
    with the calibration requests the options call for."""
    settings = read_settings(ctx.suite, ctx.options)
    questions = load_questions(suite_location(ctx.suite, ctx.sources))
    looked_for = dict(LITE_SUBSET.strata)  # every stratum of the official data
    strata = lite.strata_counts(questions, lambda q: q["topic"], looked_for) if ctx.suite != "sample" else None
    if ctx.suite == "lite":  # the card's lite rule, on the questions' own text
        questions = lite.select(questions, NAME, LITE_SUBSET, lambda q: q["problem"], lambda q: q["topic"])
    suite_items = len(questions)
    questions = limited(questions, ctx.limit)
    prompts = load_prompts(settings.grader_style)
    asks = [ask for q in questions for ask in _asks(q, settings, prompts["simpleqa_confidence"])]
    used = {"simpleqa_confidence": prompts["simpleqa_confidence"]} if settings.confidence else {}
    return Plan(rows=[row for ask in asks for row in ask.rows], items=[q["question_id"] for q in questions],
                asks=asks, prompts=used, suite_items=suite_items,
                strata=strata)
