"""CURE's card: what it measures, its board columns, its data source and options, how a question is shown."""
from __future__ import annotations

from evaluator.benchmarks.cure import explore
from evaluator.benchmarks.cure.data import OFFICIAL_URL
from evaluator.benchmarks.item_tables import by_question
from evaluator.benchmarks.spec import RATIO, Card, ItemView, Metric, Option, Source

CARD = Card(
    name="cure",
    title="CURE",
    short_title="CURE",
    summary=(
        "Chain-of-thought visual reasoning and its consistency: each item has a high-level inference about a marked "
        "image region and a chain of 2-4 sub-questions leading to it, all 6-way multiple choice. How it runs here: "
        "the region is drawn on the full image as a thick red rectangle (not cropped, so the context stays "
        "visible); each question is answered by option likelihood, choosing the candidate with the highest mean "
        "log-likelihood per token (the choice by summed log-likelihood is kept in the details); a text-only model "
        "skips CURE; an image that cannot be fetched is counted and reported per item and left out of the scores."),
    paper="https://arxiv.org/abs/2309.04461",
    metrics=(
        Metric("Ro", "Ro", "Overall reasoning: share of items where the high-level inference AND every step of the "
               "chain are answered correctly (mean of h and s). The default ranking."),
        Metric("Rh", "Rh", "High-level reasoning: share of items whose high-level inference is answered correctly."),
        Metric("Rcot", "Rcot", "Chain-of-thought reasoning: share of items whose whole chain is answered correctly "
               "(all-or-nothing per item, not the per-step accuracy)."),
        Metric("Cf", "Cf", "Forward consistency, Ro / Rcot: P(high-level correct | whole chain correct). n/a when "
               "Rcot is 0.", kind=RATIO),
        Metric("Cb", "Cb", "Backward consistency, Ro / Rh: P(whole chain correct | high-level correct). n/a when Rh "
               "is 0.", kind=RATIO),
        Metric("step_accuracy", "step accuracy", "Mean per-step accuracy over all sub-questions of all chains."),
    ),
    default_metric="Ro",
    needs_images=True,
    needs_judge=False,
    sources=(Source("cure", "LEADERBOARD_CURE_FULL", OFFICIAL_URL,
                    "the full CURE suite: a URL, a local path or `hf://datasets/<org>/<name>/<file>`"),),
    options=(
        Option("cure.mode", "likelihood", "`likelihood` (each candidate scored as the reply; the highest mean "
               "log-likelihood per token wins) or `generation` (candidates listed as (A)-(F); the first letter in "
               "the reply)"),
        Option("cure.max_new_tokens", "16", "tokens the model may generate per answer in generation mode"),
    ),
    item_view=ItemView(question="question", grade="correct", image="image_url", group_by=explore.GROUP_BY,
                       key=by_question, items=explore.items, parts=explore.parts, picture=explore.picture),
)
