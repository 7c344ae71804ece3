"""LAVE's scoring: every answer read and scored five ways on the same text, and how far the strict metrics agree
with the judge.

- The answer is the first non-empty line of the reply, whitespace collapsed.
- LAVE: the judge (required) rates it 1-3 from the prompt built by rater.build_lave_prompt (our task text and
  demonstrations; the yes/no switch; the 25% reference filter; sorted, quoted references). The rating is read only
  where the format puts it: a labelled rating, else the reply's final character (evaluator.judge.parse_lave_rating).
  A bare rating ("3") counts, as the reference reads the last token, and the row is flagged (no_rationale).
  A reply that is not a judgement (empty, markup, an error or refusal: evaluator.judge.judgement) is asked
  again and, if it never judges, leaves the item unrated (NaN, counted), like a judge call that fails: never scored.
  A real judgement without a rating gets 2, the paper's rule, and the row is flagged (rating_fallback).
  Item score = (r - 1) / 2; LAVE = the mean over rated items.
- VQA accuracy (the official one: only for questions with 10 answers, NaN otherwise), ANLS and exact match after
  the VQA normalisation (evaluator.metrics.vqa), per item and averaged over the items each one scores;
- BLEU-4 and CIDEr with pycocoevalcap on the raw strings (evaluator.metrics.captions): corpus values over all
  answered items, and each item's sentence BLEU-4 and CIDEr in its row.
For each string metric, the agreement with LAVE (evaluator.metrics.lave_agreement: the share of items where both
call the answer correct or both not, and the Spearman correlation of the per-item scores).
An item whose image could not be read keeps its status and error, and stays out of every score.
"""
from __future__ import annotations

import json
import math
from collections import Counter

from evaluator.benchmarks.judging import ask_judge, require_judge
from evaluator.benchmarks.lave.planning import max_new_tokens_option, unscored
from evaluator.benchmarks.lave.rater import (LavePrompts, build_lave_prompt, has_rationale, lave_messages,
                                             load_lave_prompts, prompt_texts, reply_problem, split_lave_reply)
from evaluator.benchmarks.run_options import int_option
from evaluator.benchmarks.spec import ROW_IMAGE_UNAVAILABLE, ScoreContext, Scored
from evaluator.judge import parse_lave_rating
from evaluator.metrics.basic import nan_mean
from evaluator.metrics.captions import caption_item_scores, caption_scores
from evaluator.metrics.intervals import affordable_draws, bootstrap_intervals, mean_interval
from evaluator.metrics.lave import lave_agreement, lave_score
from evaluator.metrics.vqa import anls, exact_match, official_vqa_accuracy

NO_JUDGE_MESSAGE = "LAVE needs a judge: set LEADERBOARD_JUDGE / --judge"
DEFAULT_SHOTS = 8
REFERENCE_FILTER = 0.25  # rater.filter_references' share
# the strict string metrics LAVE is compared with, and their names for people
STRING_METRICS = {"vqa_accuracy": "VQA accuracy", "anls": "ANLS", "exact_match": "exact match (VQA-normalised)",
                  "bleu4": "BLEU-4", "cider": "CIDEr"}
ITEM_METRICS = ("vqa_accuracy", "anls", "exact_match")  # the per-item means reported as scores and breakdowns
# An item counts as correct for a string metric at or above this score (CIDEr is not bounded by 1).
AGREEMENT_THRESHOLDS = {"vqa_accuracy": 0.5, "anls": 0.5, "exact_match": 0.5, "bleu4": 0.5, "cider": 1.0}
RATING_RULE = ("a labelled rating, else the reply's final character, 1/2/3 (evaluator.judge.parse_lave_rating); a "
               "bare rating counts, the row flagged no_rationale (the reference reads the last token); a reply that "
               "is not a judgement (empty, markup, an error or refusal: evaluator.judgement) is asked again, then "
               "unrated; a real judgement without a rating -> 2 and the row flagged rating_fallback (the paper's "
               "rule); a failed judge call -> unrated, left out of LAVE")


def parse_answer(text: str | None) -> str:
    """The scored answer: the first non-empty line of the reply, whitespace collapsed."""
    for line in (text or "").splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


def _judge_settings(options: dict[str, str]) -> tuple[int, dict]:
    """The shots shown to the judge, and its generation settings (max_tokens when lave.judge_max_tokens is set)."""
    shots = int_option(options, "lave.shots", DEFAULT_SHOTS, 0)
    max_tokens = int_option(options, "lave.judge_max_tokens", 0, 1)
    return shots, ({"max_tokens": max_tokens} if max_tokens else {})


def _read(row: dict) -> None:
    """Reset the row's scoring columns, then read its answer (an unreadable image: no answer, no extraction)."""
    row.update(unscored())
    if row["status"] == "ok":
        row["parsed_answer"] = parse_answer(row["prediction"])
    else:
        row["extraction"] = ""


def _rate(ctx: ScoreContext, prompts: LavePrompts, rows: list[dict], shots: int, **generation) -> None:
    """Rate the answered rows with the judge; fills their LAVE columns."""
    if not rows:
        return
    texts = [build_lave_prompt(prompts, row["question"], json.loads(row["gold"]), row["parsed_answer"], shots=shots)
             for row in rows]
    results = ask_judge(ctx, [lave_messages(text) for text in texts], check=reply_problem, **generation)
    for row, text, res in zip(rows, texts, results):
        reply, error = getattr(res, "text", None), getattr(res, "error", None)
        row["judge_prompt"], row["judge_raw"] = text, reply or ""
        if error or reply is None:
            row["judge_error"] = str(error or "empty judge reply")
            continue
        rating = parse_lave_rating(reply)
        if rating is None:
            rating, row["rating_fallback"] = 2, True
        row["rating"] = float(rating)
        row["lave"] = row["score"] = lave_score(rating)
        row["correct"] = rating == 3
        row["judge_rationale"] = split_lave_reply(reply)
        row["no_rationale"] = not has_rationale(reply)


def _string_metrics(rows: list[dict]) -> None:
    """Fill each answered row's string metrics (BLEU-4 and CIDEr per item, against the whole set's statistics)."""
    if not rows:
        return
    for row in rows:
        answers = json.loads(row["gold"])
        row["vqa_accuracy"] = official_vqa_accuracy(row["parsed_answer"], answers)
        row["anls"] = anls(row["parsed_answer"], answers)
        row["exact_match"] = exact_match(row["parsed_answer"], answers)
    predictions = {row["question_id"]: row["parsed_answer"] for row in rows}
    references = {row["question_id"]: json.loads(row["gold"]) for row in rows}
    per_item = caption_item_scores(predictions, references)
    for row in rows:
        row["bleu4"] = per_item[row["question_id"]]["BLEU-4"]
        row["cider"] = per_item[row["question_id"]]["CIDEr"]


def headline_scores(answered: list[dict]) -> dict[str, float]:
    """The board's scores of answered rows whose ratings and string metrics are filled: LAVE over the rated ones,
    the per-item metrics' means, and corpus BLEU-4 and CIDEr (NaN where undefined)."""
    rated = [r for r in answered if not math.isnan(r["lave"])]
    scores = {"lave": nan_mean([r["lave"] for r in rated])}
    scores.update({m: nan_mean([r[m] for r in answered]) for m in ITEM_METRICS})
    if not answered:
        return {**scores, "bleu4": math.nan, "cider": math.nan}
    corpus = caption_scores({r["question_id"]: r["parsed_answer"] for r in answered},
                            {r["question_id"]: json.loads(r["gold"]) for r in answered})
    return {**scores, "bleu4": corpus["BLEU-4"], "cider": corpus["CIDEr"]}


def agreement(answered: list[dict], metric: str) -> dict:
    """How far the judge's LAVE and one string metric agree on these answers (evaluator.metrics.lave_agreement)."""
    return lave_agreement([r["lave"] for r in answered], [r[metric] for r in answered], AGREEMENT_THRESHOLDS[metric])


def agreement_outcomes(answered: list[dict], metric: str) -> list[float]:
    """Each answer's agreement with LAVE as a 0/1 outcome, over the answers where both are defined (the items
    lave_agreement counts, by its rule: LAVE correct at rating 3, the metric at or above its threshold); their mean
    is the agreement."""
    threshold = AGREEMENT_THRESHOLDS[metric]
    return [float((r["lave"] >= 1.0) == (r[metric] >= threshold)) for r in answered
            if not math.isnan(r["lave"]) and not math.isnan(r[metric])]


def _breakdown(rows: list[dict], key: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for group in sorted({r[key] for r in rows}):
        sub = [r for r in rows if r[key] == group]
        out[group or "(none)"] = {"n": len(sub), "lave": nan_mean([r["lave"] for r in sub]),
                                  **{m: nan_mean([r[m] for r in sub]) for m in ITEM_METRICS}}
    return out


def _counts(rows: list[dict], answered: list[dict], rated: list[dict]) -> dict[str, int]:
    return {
        "items": len(rows),
        "scored": len(rated),  # LAVE, the headline, is the mean over the answers the judge rated
        "answered": len(answered),
        "rated": len(rated),
        "unrated": len(answered) - len(rated),
        "rating_fallback": sum(1 for r in rated if r["rating_fallback"]),
        "no_rationale": sum(1 for r in rated if r["no_rationale"]),
        "vqa_accuracy_items": sum(1 for r in answered if not math.isnan(r["vqa_accuracy"])),  # with 10 answers
        "image_unavailable": sum(1 for r in rows if r["status"] == ROW_IMAGE_UNAVAILABLE),
    }


def score(rows: list[dict], ctx: ScoreContext) -> Scored:
    """Read every answer, rate it with the LAVE judge, score it with the string metrics, and aggregate."""
    judge = require_judge(ctx, NO_JUDGE_MESSAGE)
    max_new_tokens = max_new_tokens_option(ctx.options)
    shots, generation = _judge_settings(ctx.options)
    prompts = load_lave_prompts()
    for row in rows:
        _read(row)
    answered = [r for r in rows if r["status"] == "ok"]
    _rate(ctx, prompts, answered, shots, **generation)
    _string_metrics(answered)
    rated = [r for r in answered if not math.isnan(r["lave"])]
    scores = headline_scores(answered)
    ratings = Counter(int(r["rating"]) for r in rated)
    extra = {
        "agreement": {m: agreement(answered, m) for m in STRING_METRICS},
        "ratings": {str(k): ratings.get(k, 0) for k in (1, 2, 3)},
        "by_kind": _breakdown(answered, "kind"),
        "by_source": _breakdown(answered, "source"),
        "judge": dict(getattr(judge, "identity", {}) or {}),
        "rating_rule": RATING_RULE,
        "agreement_thresholds": dict(AGREEMENT_THRESHOLDS),
        "settings": {"suite": ctx.suite, "max_new_tokens": max_new_tokens, "shots": shots,
                     "reference_filter": REFERENCE_FILTER, "answer": "first non-empty line of the reply"},
    }
    return Scored(scores=scores, counts=_counts(rows, answered, rated), rows=rows, extra=extra,
                  prompts=prompt_texts(prompts), intervals=score_intervals(answered))


CORPUS_DRAWS = 200  # bootstrap draws for corpus BLEU-4 and CIDEr: each draw scores the whole corpus again


def score_intervals(answered: list[dict]) -> dict:
    """Each score's interval (evaluator.metrics.intervals), a question being the unit (one answer each): LAVE and
    the per-item metrics as means over questions (exact match, a 0/1 outcome, by Wilson); corpus BLEU-4 and CIDEr by
    the bootstrap over questions; each agreement with LAVE (agree_<metric>, the card's key), a share of the answers
    both score, by Wilson over those answers (only where it is defined)."""
    found = {"lave": mean_interval([r["lave"] for r in answered], unit="question", proportion=False,
                                   within=(0.0, 1.0))}
    found.update({m: mean_interval([r[m] for r in answered], unit="question", proportion=m == "exact_match",
                                   within=(0.0, 1.0)) for m in ITEM_METRICS})
    for metric in STRING_METRICS:
        outcomes = agreement_outcomes(answered, metric)
        if outcomes:
            found[f"agree_{metric}"] = mean_interval(outcomes, unit="question")
    by_question = {str(r["question_id"]): r for r in answered}

    def corpus(drawn: list[str]) -> dict[str, float]:
        # a question drawn twice is two documents: its answer and references are counted twice
        predictions = {f"{q}#{i}": by_question[q]["parsed_answer"] for i, q in enumerate(drawn)}
        references = {f"{q}#{i}": json.loads(by_question[q]["gold"]) for i, q in enumerate(drawn)}
        found_ = caption_scores(predictions, references)
        return {"bleu4": found_["BLEU-4"], "cider": found_["CIDEr"]}

    found.update(bootstrap_intervals(list(by_question), corpus, iters=affordable_draws(len(by_question), CORPUS_DRAWS),
                                     unit="question", within={"bleu4": (0.0, 1.0)}))
    return found
