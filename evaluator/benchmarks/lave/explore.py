"""LAVE in the explorer: one question per row; opened, the judge's rating and rationale beside this answer's strict
metrics, and whether each strict metric agrees with the judge on correct vs not."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from PIL import Image

from evaluator.benchmarks.item_tables import gold_text, item_table, open_image, outcomes, prompt_and_output, text, \
    yes_no
from evaluator.benchmarks.lave.data import SAMPLE_PATH
from evaluator.benchmarks.lave.scoring import AGREEMENT_THRESHOLDS, STRING_METRICS
from evaluator.benchmarks.spec import ROW_IMAGE_UNAVAILABLE, ItemPart

GROUP_BY = ("kind", "source")
RATINGS = {1: "1 (incorrect)", 2: "2 (ambiguous or incomplete)", 3: "3 (correct)"}


def rating_name(value) -> str:
    try:
        return RATINGS.get(int(value), text(value))
    except (TypeError, ValueError):
        return "unrated"


def items(details: pd.DataFrame) -> pd.DataFrame:
    """One row per question: the answer, the references, the judge's rating (LAVE score = (rating - 1) / 2)."""
    rows = details.drop_duplicates("item")
    unavailable = rows["status"] == ROW_IMAGE_UNAVAILABLE
    return item_table({
        "item": rows["item"], "question": rows["question"], "answer": rows["parsed_answer"],
        "gold": rows["gold"].map(gold_text), "score": rows["lave"],
        "outcome": outcomes(rows["lave"], unavailable=unavailable),
        "grade": rows["rating"].map(rating_name), "kind": rows["kind"], "source": rows["source"],
    }, GROUP_BY)


def parts(rows: list[dict]) -> list[ItemPart]:
    """The rating and rationale, then the strict metrics of this answer and their agreement with the judge."""
    row = rows[0]
    rated = row.get("lave") == row.get("lave")  # not NaN
    judge_correct = rated and row.get("rating") == 3
    facts = [("question", text(row.get("question"))), ("references", gold_text(row.get("gold"))),
             ("answer (first line of the output)", text(row.get("parsed_answer"))),
             ("rating", rating_name(row.get("rating"))), ("judge's rationale", text(row.get("judge_rationale")))]
    if row.get("rating_fallback"):
        facts.append(("rating fallback", "the reply had no rating: counted as 2 (the paper's rule)"))
    if row.get("no_rationale"):
        facts.append(("no rationale", "the reply was a bare rating: counted as it reads (the reference's rule)"))
    if text(row.get("judge_error")):
        facts.append(("judge error", text(row.get("judge_error"))))
    if row.get("status") != "ok":
        facts.append(("status", f"{text(row.get('status'))}: {text(row.get('error'))}"))
    table = []
    for metric, label in STRING_METRICS.items():
        value = row.get(metric)
        if value is None or value != value:
            continue
        correct = value >= AGREEMENT_THRESHOLDS[metric]
        table.append({"metric": label, "this answer": f"{value:.3f}",
                      "correct by it": f"{yes_no(correct)} (at or above {AGREEMENT_THRESHOLDS[metric]:g})",
                      "agrees with the judge": yes_no(correct == judge_correct) if rated else "n/a (unrated)"})
    return [ItemPart(title="Answer and rating", facts=tuple(facts)),
            ItemPart(title="Strict metrics on this answer", table=tuple(table)),
            ItemPart(title="What was sent", texts=(*prompt_and_output(row),
                                                   ("Judge prompt", text(row.get("judge_prompt"))),
                                                   ("Judge's raw output", text(row.get("judge_raw")))))]


def picture(row: dict, images_dir: Path) -> Image.Image:
    """The question's image (ImageUnavailable when it cannot be read)."""
    return open_image(text(row.get("image_ref")), SAMPLE_PATH.parent, images_dir)
