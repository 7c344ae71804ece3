"""ReForm-Eval in the explorer: one question per item and mode ("<id>/gen", "<id>/lik"), scored as the share of its
repeats answered right; opened, every repeat with its instruction template, option order and marks, output and
extracted answer, and the entropy of the repeats' answers (the item's instability)."""
from __future__ import annotations

import pandas as pd

from evaluator.benchmarks.item_tables import (LETTERS, gold_text, item_table, json_list, near_ties_text, outcomes,
                                             percent, text, thought_text)
from evaluator.benchmarks.reform.scoring import answer_text
from evaluator.benchmarks.spec import ItemPart
from evaluator.metrics.reform import answer_entropy

GROUP_BY = ("dimension", "dataset", "form", "mode")
MODE_KEYS = {"generation": "gen", "likelihood": "lik"}
MAIN_EXTRACTIONS = ("mark", "likelihood", "ocr", "kie", "caption")  # likelihood_mean rows are the per-token variant
MULTIPLE_CHOICE = "multiple_choice"
PER_DATASET = "scored with its dataset (CIDEr)"  # a caption's grade: no score or outcome of its own
HOW_READ = {
    "mark": "generation: the first option mark, such as (A), (a) or (1), in the output; none is wrong",
    "likelihood": "likelihood: the option with the highest summed log-likelihood as the reply",
    "ocr": "the whole output and the gold, lower-cased and stripped of non-alphanumerics: right when the gold appears "
           "as whole words (the reference's OCR rule)",
    "kie": "the whole output and the gold, after the VQA answer normalisation: right when the gold appears as whole "
           "words (the reference's key-information rule)",
    "caption": "the whole output, scored with its dataset by CIDEr",
}


def key(details: pd.DataFrame) -> pd.Series:
    """"<question id>/gen" or "<question id>/lik": the two modes are two questions, as on the board."""
    return details["question_id"].astype(str) + "/" + details["mode"].map(MODE_KEYS).fillna("gen")


def _chosen(row) -> str:
    """The option text a multiple-choice row chose ("no mark" when none); a free-form row's answer."""
    if row["form"] != MULTIPLE_CHOICE:
        return text(row["parsed_answer"])
    options = json_list(row["options"])
    try:
        index = int(row["parsed_answer"])
    except (TypeError, ValueError):
        index = -1
    return text(options[index]) if 0 <= index < len(options) else "no mark"


def _gold(row) -> str:
    if row["form"] != MULTIPLE_CHOICE:
        return gold_text(row["gold"])
    options = json_list(row["options"])
    index = int(row["gold"]) if str(row["gold"]).lstrip("-").isdecimal() else -1
    return text(options[index]) if 0 <= index < len(options) else text(row["gold"])


def items(details: pd.DataFrame) -> pd.DataFrame:
    """One row per question and mode: the most frequent answer over its repeats, the gold option, the share of
    repeats right (a caption's score is its dataset's CIDEr, so none of its own)."""
    main = details[details["extraction"].isin(MAIN_EXTRACTIONS)].copy()
    main["chosen"] = [_chosen(r) for r in main[["form", "options", "parsed_answer"]].to_dict("records")]
    grouped = main.groupby("item", sort=False)
    first = grouped.first()
    score = grouped["score"].mean()
    no_mark = ((main["extraction"] == "mark") & (main["parsed_answer"].astype(str) == "-1")).groupby(
        main["item"], sort=False).any()
    right = main["correct"].astype(bool).groupby(main["item"], sort=False)
    index = first.index
    outcome = outcomes(score).reindex(index)
    outcome[first["form"] == "caption"] = ""  # not an outcome a filter offers: its grade says why
    return item_table({
        "item": index, "question": first["question"],
        "answer": grouped["chosen"].agg(lambda s: s.value_counts().index[0]).reindex(index),
        "gold": [_gold(r) for r in first[["form", "options", "gold"]].to_dict("records")],
        "score": score.reindex(index), "outcome": outcome,
        "grade": [f"{int(n)}/{int(t)} repeats right" if f == MULTIPLE_CHOICE else PER_DATASET if f == "caption"
                  else "" for n, t, f in zip(right.sum().reindex(index), right.size().reindex(index), first["form"])],
        "no_mark": no_mark.reindex(index),
        "dimension": first["dimension"], "dataset": first["dataset"], "form": first["form"], "mode": first["mode"],
    }, GROUP_BY)


def _marked(options: list, style: str) -> str:
    marks = {"lower": LETTERS.lower(), "number": "123456789"}.get(style, LETTERS)
    return "; ".join(f"({marks[i]}) {o}" if i < len(marks) else str(o) for i, o in enumerate(options))


def parts(rows: list[dict]) -> list[ItemPart]:
    """The question, then every repeat (its template, option order and marks, output and answer), then the
    entropy of the repeats' answers; the per-token likelihood variant beside the summed one."""
    main = [r for r in rows if r.get("extraction") in MAIN_EXTRACTIONS]
    first = main[0] if main else rows[0]
    mc = first.get("form") == MULTIPLE_CHOICE
    facts = [("question", text(first.get("question"))), ("dataset", text(first.get("dataset"))),
             ("dimension", text(first.get("dimension"))), ("form", text(first.get("form"))),
             ("mode", text(first.get("mode"))), ("gold", _gold(first)),
             ("how the answer was read", HOW_READ.get(text(first.get("extraction")), text(first.get("extraction"))))]
    if mc:
        answers = [answer_text(dict(r)) for r in main]
        right = sum(bool(r.get("correct")) for r in main)
        facts += [("repeats right", f"{right} of {len(main)} ({percent(right / len(main) if main else None)})"),
                  ("entropy of the repeats' answers (instability)", f"{answer_entropy(answers):.3f} (0: always the "
                   f"same; ln {len(main)} = every repeat different)")]
    else:
        score = first.get("score")
        facts.append(("score", "the dataset's CIDEr (a caption has no score of its own)"
                      if first.get("form") == "caption" else f"{score:.3f}" if isinstance(score, (int, float))
                      else text(score)))
    per_token = {r.get("repeat"): r for r in rows if r.get("extraction") == "likelihood_mean"}
    table = []
    for r in main:
        entry = {"repeat": text(r.get("repeat")), "template": text(r.get("template_id")),
                 "options as shown": _marked(json_list(r.get("options")), text(r.get("mark_style")))
                 if mc else "", "output": text(r.get("prediction")), "answer": _chosen(r),
                 "right": "yes" if r.get("correct") else "no"}
        if r.get("repeat") in per_token:
            entry["answer by per-token likelihood"] = _chosen(per_token[r["repeat"]])
        table.append(entry)
    prompts = tuple((f"Prompt as sent, repeat {text(r.get('repeat'))}", text(r.get("prompt"))) for r in main)
    for shown in (thought_text, near_ties_text):
        prompts += tuple(found for r in main if (found := shown(r, f", repeat {text(r.get('repeat'))}")))
    return [ItemPart(title="Question", facts=tuple(facts)),
            ItemPart(title="Repeats", table=tuple(table), texts=prompts)]
