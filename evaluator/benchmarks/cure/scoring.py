"""CURE's scoring: read each answer (the likelihood choice, or the letter in the reply), then Rh, Rcot, Ro, Cf,
Cb and step accuracy over the instances whose image was fetched (evaluator.metrics.cure; BENCHMARKS.md).

- likelihood: the choice is the argmax of the per-token mean log-likelihood (length-normalised, since candidates
  are sentences of different lengths); the argmax of the summed log-likelihood is kept as `choice_sum`, and the
  scores under that rule go into extra["scores_sum_rule"].
- generation: the answer is the first "(X)" mark or standalone letter (extract_letter); none is wrong and counted
  as unparsed.
An instance whose image could not be fetched is counted (image_unavailable) and left out of every score.
"""
from __future__ import annotations

import json
import math
import re

from evaluator.benchmarks.cure.planning import mode_option
from evaluator.benchmarks.cure.prompts import LETTERS
from evaluator.benchmarks.spec import ScoreContext, Scored
from evaluator.metrics.basic import argmax
from evaluator.metrics.cure import cure_by_chain_length, cure_intervals, cure_scores, cure_step_accuracy

CHOICE_RULES = {
    "likelihood": "argmax of per-token mean log-likelihood over the 6 candidates (choice_sum: argmax of the sum)",
    "generation": "first (X) mark or standalone letter A-F in the reply; none = wrong (unparsed)",
}
REGION = "first bbox drawn as a thick red rectangle on the full image (not cropped)"

_MARK = re.compile(r"\(([A-Za-z])\)")
_STANDALONE = re.compile(r"(?<![A-Za-z0-9'])([A-Z])(?![A-Za-z0-9'])")
_ARTICLE = re.compile(r"A\s+[a-z]")


def extract_letter(text: str, n: int = len(LETTERS)) -> int | None:
    """Index of the first option mark "(X)" in `text`, else of the first standalone capital letter; None if none.

    Only the first `n` letters count. A capital "A" followed by a lower-case word ("A dog ...") is the article,
    not an answer.
    """
    valid = LETTERS[:n] if n <= len(LETTERS) else "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:n]
    for m in _MARK.finditer(text or ""):
        letter = m.group(1).upper()
        if letter in valid:
            return valid.index(letter)
    for m in _STANDALONE.finditer(text or ""):
        letter = m.group(1)
        if letter not in valid:
            continue
        if letter == "A" and _ARTICLE.match(text, m.start()):
            continue
        return valid.index(letter)
    return None


def read_answer(row: dict) -> None:
    """Fill a row's parsed answer (and choice_sum, and for likelihood the chosen candidate as the prediction)."""
    row["parsed_answer"], row["choice_sum"] = -1, -1
    if row["status"] != "ok":
        row["correct"], row["score"] = False, math.nan
        return
    if row["extraction"] == "likelihood":
        scores = json.loads(row["option_scores"])
        options = json.loads(row["options"])
        choice = argmax([s["mean"] for s in scores])
        row["parsed_answer"], row["choice_sum"] = choice, argmax([s["sum"] for s in scores])
        row["prediction"] = options[choice] if choice >= 0 else ""
    else:
        letter = extract_letter(row["prediction"], len(LETTERS))
        row["parsed_answer"] = -1 if letter is None else letter
    row["correct"] = row["parsed_answer"] == row["gold"]
    row["score"] = 1.0 if row["correct"] else 0.0


def _instances(rows: list[dict]) -> list[list[dict]]:
    """The rows grouped by instance, in order: the high-level row first, then the chain's steps."""
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row["question_id"], []).append(row)
    return list(grouped.values())


def score(rows: list[dict], ctx: ScoreContext) -> Scored:
    """Aggregate CURE scores over the instances whose image was fetched."""
    mode = mode_option(ctx.options)
    for row in rows:
        read_answer(row)
    instances = _instances(rows)
    scored = [inst for inst in instances if inst[0]["status"] == "ok"]
    high = [inst[0]["correct"] for inst in scored]
    chains = [[row["correct"] for row in inst[1:]] for inst in scored]
    scores = cure_scores(high, chains)
    scores["step_accuracy"] = cure_step_accuracy(chains)
    extra: dict = {
        "by_chain_length": {str(k): v for k, v in cure_by_chain_length(high, chains).items()},
        "mode": mode,
        "choice_rule": CHOICE_RULES[mode],
        "region": REGION,
    }
    if mode == "likelihood":
        high_sum = [inst[0]["choice_sum"] == inst[0]["gold"] for inst in scored]
        chains_sum = [[row["choice_sum"] == row["gold"] for row in inst[1:]] for inst in scored]
        extra["scores_sum_rule"] = {**cure_scores(high_sum, chains_sum),
                                    "step_accuracy": cure_step_accuracy(chains_sum)}
    counts = {
        "items": len(instances),
        "scored": len(scored),
        "image_unavailable": len(instances) - len(scored),
        "unparsed": sum(1 for inst in scored for row in inst if row["parsed_answer"] < 0) if mode == "generation"
        else 0,
        "sub_questions": sum(int(inst[0]["chain_length"]) for inst in instances),
    }
    return Scored(scores=scores, counts=counts, rows=rows, extra=extra, intervals=cure_intervals(high, chains))
