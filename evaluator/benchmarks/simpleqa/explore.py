"""SimpleQA in the explorer: one question per question id, shown by its graded answer; opened, the answer and its
grade with the judge's reply, the stated confidence and its grade, and the sampled answers with the most frequent
one and its share."""
from __future__ import annotations

import pandas as pd

from evaluator.benchmarks.item_tables import item_table, outcomes, percent, prompt_and_output, text
from evaluator.benchmarks.spec import CORRECT, NOT_ATTEMPTED, UNGRADED, WRONG, ItemPart

GROUP_BY = ("topic", "answer_type")
GRADE_NAMES = {"A": CORRECT, "B": WRONG, "C": NOT_ATTEMPTED}


def grade_name(grade) -> str:
    return GRADE_NAMES.get(text(grade), UNGRADED)


def items(details: pd.DataFrame) -> pd.DataFrame:
    """One row per question: its graded answer (part "answer"), the gold answer and the judge's grade."""
    answers = details[details["part"] == "answer"].drop_duplicates("item")
    grade = answers["grade"].map(text)
    score = answers["score"].where(grade != "")
    outcome = outcomes(score)
    outcome[grade == "C"] = NOT_ATTEMPTED
    return item_table({
        "item": answers["item"], "question": answers["question"], "answer": answers["parsed_answer"],
        "gold": answers["gold"], "score": score, "outcome": outcome,
        "grade": [f"{g} ({grade_name(g)})" if g else UNGRADED for g in grade],
        "topic": answers["topic"], "answer_type": answers["answer_type"],
    }, GROUP_BY)


def _graded(row: dict, title: str, extra: tuple[tuple[str, str], ...] = ()) -> ItemPart:
    grade = text(row.get("grade"))
    facts = (("answer", text(row.get("parsed_answer"))),
             ("how the answer was read", "the reply as written, graded against the gold answer by the judge"), *extra,
             ("grade", f"{grade} ({grade_name(grade)})" if grade else UNGRADED),
             ("judge's reason", text(row.get("judge_rationale"))))
    if text(row.get("judge_error")):
        facts += (("judge error", text(row.get("judge_error"))),)
    return ItemPart(title=title, facts=facts,
                    texts=(*prompt_and_output(row), ("Judge's raw output", text(row.get("judge_raw")))))


def parts(rows: list[dict]) -> list[ItemPart]:
    """The graded answer, then the stated-confidence reply and the samples when those calibrations ran."""
    by_part = {r.get("part"): r for r in rows}
    answer = by_part.get("answer", rows[0])
    out = [ItemPart(title="Question", facts=(("question", text(answer.get("question"))),
                                             ("gold", text(answer.get("gold"))),
                                             ("topic", text(answer.get("topic"))),
                                             ("answer type", text(answer.get("answer_type")))))]
    out.append(_graded(answer, "Answer (graded by the judge)"))
    confidence = by_part.get("confidence")
    if confidence is not None:
        out.append(_graded(confidence, "Stated confidence: best guess and 0-100 confidence",
                           (("stated confidence", percent(confidence.get("confidence"))),)))
    samples = [r for r in rows if str(r.get("part", "")).startswith("sample")]
    frequency = by_part.get("frequency")
    if samples:
        table = tuple({"sample": text(r.get("part")), "reply": text(r.get("prediction")),
                       "normalised": text(r.get("parsed_answer"))} for r in samples)
        facts: tuple = ()
        if frequency is not None:
            facts = (("most frequent answer", text(frequency.get("parsed_answer"))),
                     ("its share of the samples", percent(frequency.get("confidence"))),
                     ("its grade", grade_name(frequency.get("grade"))),
                     ("judge's reason", text(frequency.get("judge_rationale"))))
        out.append(ItemPart(title="Sampled answers (temperature 1)", facts=facts, table=table))
    return out
