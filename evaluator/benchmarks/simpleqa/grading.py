"""Asking the judge for SimpleQA grades: A = correct, B = incorrect, C = not attempted.

The judge gets one grader prompt per answer and ends its reply with the grade (read with
evaluator.judge.parse_simpleqa_grade from the last line, or from the first when the judge puts the grade first and
explains below it). A reply that is not a judgement at all (empty, a web page, an error or a refusal:
evaluator.judge.judgement; for a grade-first reply, also the text below the grade) is asked again. A call that fails, a
reply that never judged, or a reply without a grade line leaves the answer *ungraded*: shown and counted, left out
of the scores, never scored as wrong.
"""
from __future__ import annotations

import math

from evaluator.benchmarks.judging import ask_judge, require_judge
from evaluator.benchmarks.simpleqa.answers import split_judge_reply
from evaluator.benchmarks.simpleqa.prompts import grader_messages
from evaluator.benchmarks.spec import ScoreContext
from evaluator.judge import parse_simpleqa_grade
from evaluator.judge.judgement import not_a_judgement
from evaluator.judge.replies import split_simpleqa_reply

GRADES = ("A", "B", "C")
NO_JUDGE_MESSAGE = "SimpleQA needs a judge: set LEADERBOARD_JUDGE / --judge"
GRADE_RULE = ("final line of the judge reply (letter or grade word), else its first line when the explanation"
              " follows the grade, via evaluator.judge.parse_simpleqa_grade; anything else ungraded, left out of"
              " the scores")


def the_judge(ctx: ScoreContext):
    """The run's judge; ValueError when it has none."""
    return require_judge(ctx, NO_JUDGE_MESSAGE)


def clear_grade(row: dict) -> None:
    """Reset a row's judge columns to "not graded"."""
    row.update(correct=False, score=math.nan, grade="", judge_rationale="", judge_raw="", judge_error="")


def reply_problem(text: str | None) -> str | None:
    """Why a judge reply is not a SimpleQA judgement (evaluator.judge.judgement's one rule), or None when it is one.

    A grade on the first line with text below it counts only when that text is no error message, fault or refusal
    ("A\nRate limit exceeded" is no grade A)."""
    grade, rest = split_simpleqa_reply(text)
    problem = not_a_judgement(text, has_verdict=grade is not None)
    grade_first = grade is not None and rest and parse_simpleqa_grade(text.strip().splitlines()[-1]) is None
    return not_a_judgement(rest, has_verdict=False) if problem is None and grade_first else problem


def apply_grade(row: dict, result) -> None:
    """Fill a row's judge columns from one JudgeResult (text, or an error)."""
    text = getattr(result, "text", None)
    error = getattr(result, "error", None)
    grade = parse_simpleqa_grade(text) if text and not error else None
    if grade not in GRADES:
        grade = None
    row["judge_raw"] = text or ""
    if error:
        row["judge_error"] = str(error)
    elif grade is None:
        row["judge_error"] = "unparsable grade" if text else "empty judge reply"
    else:
        row["judge_error"] = ""
    row["judge_rationale"] = split_judge_reply(text, grade)
    row["grade"] = grade or ""
    row["correct"] = grade == "A"
    row["score"] = math.nan if grade is None else (1.0 if grade == "A" else 0.0)


def grade_answers(ctx: ScoreContext, template: str, jobs: list[tuple[dict, str]], max_tokens: int = 0) -> None:
    """Grade (row, answer) jobs against each row's question and gold answer; fills the rows' judge columns.

    max_tokens 0 leaves the judge's own limit.
    """
    conversations = [grader_messages(template, row["question"], row["gold"], answer) for row, answer in jobs]
    generation = {"max_tokens": max_tokens} if max_tokens else {}
    for (row, _), result in zip(jobs, ask_judge(ctx, conversations, check=reply_problem, **generation)):
        apply_grade(row, result)
