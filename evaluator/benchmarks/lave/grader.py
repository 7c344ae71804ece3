"""LAVE in the judge playground: a question, its reference answers (one per line in the gold box) and a candidate
answer, rated 1-3 by the judge with the benchmark's own prompt (8 demonstrations, the yes/no ones for a yes/no
question). The questions offered are always the LAVE sample suite (the judge sees text only, never the image)."""
from __future__ import annotations

import logging

from evaluator.benchmarks.lave.data import SAMPLE_PATH, load_vqa_file
from evaluator.benchmarks.lave.rater import (build_lave_prompt, has_rationale, lave_messages, load_lave_prompts,
                                             reply_problem, split_lave_reply)
from evaluator.benchmarks.spec import Grader, Verdict
from evaluator.judge import parse_lave_rating
from evaluator.metrics.lave import lave_score

log = logging.getLogger(__name__)

SHOTS = 8
LAVE_WORDS = {1: "incorrect", 2: "ambiguous or incomplete", 3: "correct"}
LAVE_FALLBACK = "no rating in the judge's reply: the paper's fallback"
LAVE_UNRATED = "unrated: the judge's reply broke off"
NO_RATIONALE = "no rationale"
HELP = ("**LAVE rating** (LLM-assisted VQA evaluation): a question about an image and its reference answers, "
        "**one per line**. The judge rates the candidate answer **1** (incorrect or irrelevant), **2** (ambiguous "
        "or incomplete) or **3** (correct) after its rationale, as the leaderboard's LAVE benchmark "
        "does; the score is 0, 0.5 or 1. A reply without a rating counts as 2 (the paper's fallback); a bare rating "
        "counts, marked \"no rationale\"; a reply that is not a judgement (empty, an error page, a refusal) is "
        "unrated. The judge sees text only: the image is not shown to it.")
SAMPLE_NOTE = ("The LAVE sample suite ({n} questions): the playground always uses the sample file shipped with the "
               "project, whatever suite the leaderboard runs.")
NO_SAMPLE_NOTE = "The LAVE sample suite could not be loaded; type a question and its reference answers."


def reference_lines(text: str | None) -> list[str]:
    """The reference answers of the gold box: one per line, each stripped, blank lines ignored."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def lave_verdict(rating: int | None) -> str:
    """"3 correct (score 1)", ...; None (no rating in the reply) -> the paper's fallback 2, flagged."""
    if rating is None:
        return f"2 ({LAVE_FALLBACK}) (score {lave_score(2):g})"
    return f"{rating} {LAVE_WORDS[rating]} (score {lave_score(rating):g})"


def messages(question: str, gold: str, candidate: str) -> list[dict]:
    """The judge's messages: the LAVE prompt with 8 shots for the gold box's reference answers."""
    prompt = build_lave_prompt(load_lave_prompts(), question.strip(), reference_lines(gold), candidate.strip(),
                               shots=SHOTS)
    return lave_messages(prompt)


def verdict(raw: str | None) -> Verdict:
    """The rating in the judge's reply (none: 2, the paper's fallback; a bare rating is marked "no rationale"), its
    score and the rationale; a reply that is not a judgement (rater.reply_problem) is unrated, with no score."""
    problem = reply_problem(raw)
    if problem:
        return Verdict(label=f"unrated: {problem}", score=None, rationale="")
    rating = parse_lave_rating(raw)
    label = lave_verdict(rating) + ("" if has_rationale(raw) else f" ({NO_RATIONALE})")
    return Verdict(label=label, score=lave_score(rating or 2), rationale=split_lave_reply(raw))


def questions(suite: str, sources: dict) -> tuple[list[dict], str]:
    """The LAVE sample suite's questions, whatever the suite (the gold: its answers one per line; image_ref: the
    image, shown to the visitor beside the question), and a note."""
    try:
        items = load_vqa_file(SAMPLE_PATH, "sample")
    except Exception as exc:  # noqa: BLE001 - the playground works without the suite (typed questions)
        log.warning("playground: the LAVE sample suite could not be loaded: %s", exc)
        return [], NO_SAMPLE_NOTE
    entries = [{"question_id": item["question_id"], "question": item["question"], "image_ref": item["image_ref"],
                "gold": "\n".join(a.strip() for a in item["answers"] if a.strip())} for item in items]
    return entries, SAMPLE_NOTE.format(n=len(entries))


GRADER = Grader(
    mode="LAVE rating",
    help=HELP,
    gold_label="Reference answers (one per line)",
    gold_field="reference answers",
    messages=messages,
    verdict=verdict,
    questions=questions,
    broken_label=LAVE_UNRATED,
)
