"""CURE in the explorer: one question per instance (its high-level inference and its chain), scored as Ro scores it
(right only when the inference and every step are right); opened, each question with its six options."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from PIL import Image

from evaluator.benchmarks.cure.data import SAMPLE_PATH
from evaluator.benchmarks.cure.region import mark_region
from evaluator.benchmarks.item_tables import (LETTERS, item_table, json_list, open_image, outcomes,
                                              prompt_and_output, text, yes_no)
from evaluator.benchmarks.spec import ROW_IMAGE_UNAVAILABLE, ItemPart

GROUP_BY = ("chain_length",)


def _option(options: list, index) -> str:
    """"(B) the option's text" for an option's index ("no answer" for anything else, a damaged value included)."""
    try:
        i = int(index) if index == index else -1
    except (TypeError, ValueError, OverflowError):
        i = -1
    return f"({LETTERS[i]}) {options[i]}" if 0 <= i < len(options) else "no answer"


def items(details: pd.DataFrame) -> pd.DataFrame:
    """One row per instance: the inference chosen and the gold one; score 1 only when the whole chain and the
    inference are right; partly correct when some of its questions are."""
    grouped = details.groupby("item", sort=False)
    high = details[details["part"] == "high"].drop_duplicates("item").set_index("item")
    steps = details[details["part"] != "high"]
    first_step = steps.drop_duplicates("item").set_index("item")["question"]
    unavailable = (details["status"] == ROW_IMAGE_UNAVAILABLE).groupby(details["item"], sort=False).any()
    right = details["correct"].astype(bool).groupby(details["item"], sort=False)
    all_right, any_right = right.all(), right.any()
    ro = all_right.astype(float).where(~unavailable)  # the table's score: 1 only when everything is right
    partial = ro.where(~(~all_right & any_right), 0.5)  # some of its questions right: partly correct
    no_mark = ((details["extraction"] == "letter") & (details["parsed_answer"] < 0)).groupby(details["item"],
                                                                                          sort=False).any()
    index = grouped.size().index
    options = high["options"].map(json_list).reindex(index)
    return item_table({
        "item": index,
        "question": first_step.reindex(index).fillna(""),
        "answer": [_option(o, a) for o, a in zip(options, high["parsed_answer"].reindex(index))],
        "gold": [_option(o, g) for o, g in zip(options, high["gold"].reindex(index))],
        "score": ro.reindex(index),
        "outcome": outcomes(partial, unavailable=unavailable).reindex(index),
        "grade": [f"{int(n)}/{int(t)} right" for n, t in zip(right.sum().reindex(index), grouped.size())],
        "no_mark": no_mark.reindex(index),
        "chain_length": high["chain_length"].reindex(index),
    }, GROUP_BY)


def _likelihood(scores: list, index: int, key: str, digits: int) -> str:
    """An option's stored log-likelihood (`mean` or `sum`) as text; "" when the stored scores do not have it."""
    entry = scores[index] if index < len(scores) else None
    value = entry.get(key) if isinstance(entry, dict) else None
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else ""


def _question_part(row: dict, title: str) -> ItemPart:
    options = json_list(row.get("options"))
    scores = json_list(row.get("option_scores"))
    choice, gold = row.get("parsed_answer", -1), row.get("gold", -1)
    table = []
    for i, option in enumerate(options):
        entry = {"mark": f"({LETTERS[i]})", "option": text(option),
                 "model's choice": "◀ chosen" if i == choice else "", "gold": "✓ gold" if i == gold else ""}
        if scores:
            entry["mean log-likelihood"] = _likelihood(scores, i, "mean", 3)
            entry["summed log-likelihood"] = _likelihood(scores, i, "sum", 2)
        table.append(entry)
    how = {"likelihood": "likelihood: the highest mean log-likelihood per token",
           "letter": "generation: the first (X) mark or standalone letter in the reply"}
    facts = [("question", text(row.get("question"))), ("model's choice", _option(options, choice)),
             ("gold", _option(options, gold)), ("right", yes_no(row.get("correct"))),
             ("how the answer was read", how.get(row.get("extraction"), text(row.get("extraction"))))]
    if scores:
        facts.append(("choice by summed log-likelihood", _option(options, row.get("choice_sum", -1))))
    if row.get("status") != "ok":
        facts.append(("status", f"{text(row.get('status'))}: {text(row.get('error'))}"))
    return ItemPart(title=title, facts=tuple(facts), table=tuple(table), texts=prompt_and_output(row))


def parts(rows: list[dict]) -> list[ItemPart]:
    """The chain's questions in order, then the high-level inference, then what the instance counts toward."""
    high = next((r for r in rows if r.get("part") == "high"), rows[0])
    steps = [r for r in rows if r.get("part") != "high"]
    chain_right = all(bool(r.get("correct")) for r in steps)
    high_right = bool(high.get("correct"))
    scored = high.get("status") == "ok"
    summary = ItemPart(title="This instance", facts=(
        ("chain length", text(high.get("chain_length"))),
        ("whole chain right", yes_no(chain_right)),
        ("high-level inference right", yes_no(high_right)),
        ("counts toward Ro (both right)", yes_no(scored and chain_right and high_right)),
        ("in Cf's denominator (chain right)", yes_no(scored and chain_right)),
        ("in Cb's denominator (inference right)", yes_no(scored and high_right)),
        ("scored", "yes" if scored else "no: its image could not be fetched"),
        ("marked region", "drawn on the image as the model saw it" if high.get("region")
         else "not recorded in this run's details (an older run): the image is shown unmarked"),
    ))
    chain = [_question_part(r, f"Step {k}") for k, r in enumerate(steps, 1)]
    return [summary, *chain, _question_part(high, "High-level inference")]


def picture(row: dict, images_dir: Path) -> Image.Image:
    """The image with its region drawn as the model saw it, read where the run read it (its release file, else
    its URL or sample file); ImageUnavailable when it cannot be read."""
    image = open_image(text(row.get("image_file")) or text(row.get("image_url")), SAMPLE_PATH.parent, images_dir)
    region = json.loads(row["region"]) if isinstance(row.get("region"), str) and row["region"] else None
    if not region:
        return image
    return mark_region(image, region, (region["image_width"], region["image_height"]))

