"""The judge playground's SimpleQA mode: grade one candidate answer to one question with the leaderboard's grader
prompt (the default "reason" style), and the questions to pick from (the run's suite, as the board runs it)."""
from __future__ import annotations

import logging

from evaluator.benchmarks.simpleqa.answers import split_judge_reply
from evaluator.benchmarks.simpleqa.data import OFFICIAL_URL, SAMPLE_PATH, load_questions
from evaluator.benchmarks.simpleqa.grading import reply_problem
from evaluator.benchmarks.simpleqa.prompts import grader_messages, load_prompts
from evaluator.benchmarks.spec import Grader, Verdict
from evaluator.judge import parse_simpleqa_grade

log = logging.getLogger(__name__)

VERDICTS = {"A": "A CORRECT", "B": "B INCORRECT", "C": "C NOT ATTEMPTED"}
SCORES = {"A": 1.0, "B": 0.0, "C": 0.0}
UNGRADED = "ungraded: the judge's reply had no grade line"
HELP = ("**SimpleQA grade**: a SimpleQA question and its gold answer. The judge grades the candidate answer with the "
        "same prompt the leaderboard uses: **A** correct, **B** incorrect, **C** not attempted.")
FULL_FAILED = ("The full SimpleQA suite could not be loaded, so the questions below are the sample suite shipped "
               "with the project.")


def messages(question: str, gold: str, candidate: str) -> list[dict]:
    """The judge's conversation: one user message, the default grader prompt filled with the stripped texts."""
    template = load_prompts()["simpleqa_grader"]
    return grader_messages(template, question.strip(), gold.strip(), candidate.strip())


def verdict(raw: str | None) -> Verdict:
    """The grade read from the judge's reply (its last line, or its first with the explanation below it);
    ungraded (score None) when there is none or the reply is no judgement."""
    problem = reply_problem(raw)
    if problem:
        return Verdict(label=f"ungraded: {problem}", score=None, rationale="")
    letter = parse_simpleqa_grade(raw)
    letter = letter if letter in VERDICTS else None
    return Verdict(label=VERDICTS.get(letter or "", UNGRADED), score=SCORES.get(letter or ""),
                   rationale=split_judge_reply(raw, letter))


def questions(suite: str, sources: dict) -> tuple[list[dict], str]:
    """The suite's questions as [{question_id, question, gold}] and a note saying where they come from: the full
    suite (the source setting, else the official file) when suite is "full" or "lite" and it loads, else the sample."""
    note, loaded = "", None
    if suite != "sample":
        try:
            loaded = load_questions((sources or {}).get("simpleqa") or OFFICIAL_URL)
            note = f"The full SimpleQA suite ({len(loaded):,} questions)."
        except Exception as exc:  # noqa: BLE001 - any failure falls back to the sample
            log.warning("playground: the full SimpleQA suite could not be loaded: %s", exc)
            loaded, note = None, FULL_FAILED
    if loaded is None:
        loaded = load_questions(SAMPLE_PATH)
        note = note or f"The SimpleQA sample suite ({len(loaded)} questions)."
    return [{"question_id": q["question_id"], "question": q["problem"], "gold": q["answer"]} for q in loaded], note


GRADER = Grader(mode="SimpleQA grade", help=HELP, gold_label="Gold answer", gold_field="gold answer",
                messages=messages, verdict=verdict, questions=questions, broken_label=UNGRADED)
