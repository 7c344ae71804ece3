"""SimpleQA's scoring: read the replies, derive each question's most frequent sampled answer, have the judge grade
the answers, and aggregate (evaluator.metrics.simpleqa; BENCHMARKS.md).

- "answer" rows: the reply as it is, graded; the scores and breakdowns come from these alone.
- "confidence" rows: the best guess and the 0-100 confidence read from the reply (parse_confidence); the guess is
  graded; the ECE and the reliability points over 30 equal-count (quantile) bins, as the SimpleQA write-up bins
  its calibration, go into the result, and beside them the same over 10 equal-width bins ("_equal_width").
- "sample1".."sampleK" rows: normalised (normalize_answer), not graded.
- "frequency" rows (derived here, placed right after the question's samples): the most frequent normalised
  sample, graded, with its share of the k samples in the confidence column (and the hit_token_limit of the
  sample whose reply it shows).
Replies that used up their token budget (hit_token_limit) are counted: counts["hit_token_limit"] for the answers,
"confidence_hit_token_limit" and "sample_hit_token_limit" for the calibration replies.
A stored details file already holds "frequency" rows: they are dropped and derived again, and every reading and
grading column is reset, so scoring stored details gives what scoring fresh ones does.
"""
from __future__ import annotations

import copy
import math

from evaluator.benchmarks.simpleqa.answers import most_frequent, normalize_answer, parse_confidence
from evaluator.benchmarks.simpleqa.data import suite_location
from evaluator.benchmarks.simpleqa.grading import GRADE_RULE, clear_grade, grade_answers, the_judge
from evaluator.benchmarks.simpleqa.prompts import load_prompts
from evaluator.benchmarks.simpleqa.options import SAMPLE_TEMPERATURE, RunSettings, read_settings
from evaluator.benchmarks.spec import ScoreContext, Scored
from evaluator.metrics.intervals import bootstrap_interval, bootstrap_intervals, mean_interval
from evaluator.metrics.simpleqa import (
    EQUAL_WIDTH_BINS,
    GRADES,
    QUANTILE_BINS,
    expected_calibration_error,
    frequency_points,
    reliability_points,
    simpleqa_breakdown,
    simpleqa_scores,
)

MAIN_SCORES = ("correct", "incorrect", "not_attempted", "correct_given_attempted", "f_score")
GRADED_PARTS = ("answer", "confidence", "frequency")


def _is_sample(row: dict) -> bool:
    return str(row["part"]).startswith("sample")


def read_reply(row: dict) -> bool:
    """Reset a row's reading and grading columns and read its reply; False for an unreadable confidence."""
    clear_grade(row)
    prediction = row["prediction"] or ""
    row["confidence"], row["parsed_answer"] = math.nan, ""
    if row["part"] == "answer":
        row["parsed_answer"] = prediction.strip()
    elif row["part"] == "confidence":
        guess, confidence = parse_confidence(prediction)
        row["confidence"] = math.nan if confidence is None else confidence
        row["parsed_answer"] = guess if guess is not None else prediction.strip()
        return confidence is not None
    elif _is_sample(row):
        row["parsed_answer"] = normalize_answer(prediction)
    return True


def frequency_row(samples: list[dict]) -> dict:
    """A question's "frequency" row: its most frequent sampled answer and that answer's share of the samples, built
    from the sample whose reply it shows."""
    top, raw, share = most_frequent([s["prediction"] or "" for s in samples])
    shown = next(s for s in samples if (s["prediction"] or "") == raw)
    row = copy.deepcopy(shown)
    clear_grade(row)
    row.update(part="frequency", repeat=0, prediction=raw, parsed_answer=top, confidence=share, extraction="judge")
    return row


def with_frequency_rows(rows: list[dict]) -> list[dict]:
    """The rows with each question's frequency row placed right after its last sample."""
    samples: dict[str, list[dict]] = {}
    for row in rows:
        if _is_sample(row):
            samples.setdefault(row["question_id"], []).append(row)
    out = []
    for row in rows:
        out.append(row)
        if _is_sample(row) and row is samples[row["question_id"]][-1]:
            out.append(frequency_row(samples[row["question_id"]]))
    return out


def _graded_answer(row: dict) -> str:
    """The text the judge grades: the parsed reply, or the raw most frequent sample."""
    return row["prediction"].strip() if row["part"] == "frequency" else row["parsed_answer"]


def _grades(rows: list[dict]) -> list[str | None]:
    return [r["grade"] or None for r in rows]


def hit_limit_count(rows: list[dict]) -> int:
    """How many of the rows' replies used up their token budget (hit_token_limit True; None: not reported)."""
    return sum(1 for r in rows if r.get("hit_token_limit") is True)


def usable_confidence(row: dict) -> bool:
    """Whether a "confidence" row enters the calibration: its guess was graded and its confidence read."""
    return bool(row["grade"]) and not math.isnan(row["confidence"])


def confidence_ece(conf_rows: list[dict]) -> float:
    """The ECE of the stated confidences over 30 quantile bins (the headline "ece"), on the usable rows."""
    usable = [r for r in conf_rows if usable_confidence(r)]
    return expected_calibration_error([r["confidence"] for r in usable], [r["grade"] == "A" for r in usable],
                                      QUANTILE_BINS, quantile=True)


def _confidence_block(conf_rows: list[dict], settings: RunSettings, scores: dict, extra: dict,
                      counts: dict) -> None:
    usable = [r for r in conf_rows if usable_confidence(r)]
    confidences = [r["confidence"] for r in usable]
    correct = [r["grade"] == "A" for r in usable]
    scores["ece"] = confidence_ece(conf_rows)
    extra["reliability"] = reliability_points(confidences, correct, QUANTILE_BINS, quantile=True)
    extra["ece_equal_width"] = expected_calibration_error(confidences, correct, EQUAL_WIDTH_BINS)
    extra["reliability_equal_width"] = reliability_points(confidences, correct, EQUAL_WIDTH_BINS)
    extra["confidence_scores"] = simpleqa_scores(_grades(conf_rows))
    extra["settings"]["confidence_max_new_tokens"] = settings.confidence_max_new_tokens
    counts["confidence_ungraded"] = sum(1 for r in conf_rows if not r["grade"])
    counts["confidence_hit_token_limit"] = hit_limit_count(conf_rows)


def _frequency_block(freq_rows: list[dict], settings: RunSettings, extra: dict, counts: dict) -> None:
    usable = [r for r in freq_rows if r["grade"]]
    shares, correct = [r["confidence"] for r in usable], [r["grade"] == "A" for r in usable]
    extra["frequency"] = frequency_points(shares, correct, QUANTILE_BINS, quantile=True)
    extra["frequency_equal_width"] = frequency_points(shares, correct, EQUAL_WIDTH_BINS)
    extra["frequency_scores"] = simpleqa_scores(_grades(freq_rows))
    extra["settings"].update(samples=settings.samples, sample_temperature=SAMPLE_TEMPERATURE, seed=settings.seed)
    counts["frequency_ungraded"] = sum(1 for r in freq_rows if not r["grade"])


def aggregate(rows: list[dict], settings: RunSettings, ctx: ScoreContext,
              unparsable: int) -> tuple[dict, dict, dict]:
    """(scores, counts, extra) from the graded rows."""
    answers = [r for r in rows if r["part"] == "answer"]
    grades = _grades(answers)
    summary = simpleqa_scores(grades)
    scores = {key: summary[key] for key in MAIN_SCORES}
    extra: dict = {
        "by_topic": simpleqa_breakdown(grades, [r["topic"] for r in answers]),
        "by_answer_type": simpleqa_breakdown(grades, [r["answer_type"] for r in answers]),
        "attempted": summary["attempted"],
        "calibration": {"confidence": settings.confidence, "frequency": settings.frequency},
        "judge": dict(getattr(ctx.judge, "identity", {}) or {}),
        "settings": {"max_new_tokens": settings.max_new_tokens, "suite": ctx.suite,
                     "source": str(suite_location(ctx.suite, ctx.sources))},
        "grade_rule": GRADE_RULE,
    }
    # scored: the answers the judge graded, the only ones the headline fractions count (ungraded ones are left out)
    counts = {"items": len(answers), "scored": summary["n"], "graded": summary["n"], "ungraded": summary["ungraded"],
              "unparsable_confidence": unparsable, "hit_token_limit": hit_limit_count(answers)}
    if settings.confidence or settings.frequency:
        extra["calibration_bins"] = {"quantile": QUANTILE_BINS, "equal_width": EQUAL_WIDTH_BINS}
    if settings.confidence:
        _confidence_block([r for r in rows if r["part"] == "confidence"], settings, scores, extra, counts)
    if settings.frequency:
        _frequency_block([r for r in rows if r["part"] == "frequency"], settings, extra, counts)
        counts["sample_hit_token_limit"] = hit_limit_count([r for r in rows if _is_sample(r)])
    return scores, counts, extra


def score(rows: list[dict], ctx: ScoreContext) -> Scored:
    """Read, derive, grade and aggregate; the rows come back in their stored order with the frequency rows."""
    the_judge(ctx)
    settings = read_settings(ctx.suite, ctx.options)
    template = load_prompts(settings.grader_style)["simpleqa_grader"]
    rows = [row for row in rows if row["part"] != "frequency"]
    unparsable = sum(1 for row in rows if not read_reply(row))
    if settings.frequency:
        rows = with_frequency_rows(rows)
    jobs = [(row, _graded_answer(row)) for row in rows if row["part"] in GRADED_PARTS]
    grade_answers(ctx, template, jobs, settings.judge_max_tokens)
    scores, counts, extra = aggregate(rows, settings, ctx, unparsable)
    return Scored(scores=scores, counts=counts, rows=rows, extra=extra,
                  prompts={"simpleqa_grader": template}, intervals=score_intervals(rows, settings))


def score_intervals(rows: list[dict], settings: RunSettings) -> dict:
    """Each score's interval (evaluator.metrics.intervals), a question being the unit (one graded answer each):
    the shares of correct, incorrect and not attempted by Wilson over the graded answers; correct given attempted,
    the F score and the ECE by the bootstrap over questions."""
    answers = [r for r in rows if r["part"] == "answer" and r["grade"] in GRADES]
    found = {key: mean_interval([1.0 if r["grade"] == grade else 0.0 for r in answers], unit="question")
             for key, grade in (("correct", "A"), ("incorrect", "B"), ("not_attempted", "C"))}
    by_question = {str(r["question_id"]): r["grade"] for r in answers}

    def ratios(drawn: list[str]) -> dict[str, float]:
        summary = simpleqa_scores([by_question[q] for q in drawn])
        return {"correct_given_attempted": summary["correct_given_attempted"], "f_score": summary["f_score"]}

    found.update(bootstrap_intervals(list(by_question), ratios, unit="question",
                                     within={"correct_given_attempted": (0.0, 1.0), "f_score": (0.0, 1.0)}))
    if settings.confidence:
        usable = {str(r["question_id"]): r for r in rows if r["part"] == "confidence" and usable_confidence(r)}
        found["ece"] = bootstrap_interval(list(usable), lambda drawn: confidence_ece([usable[q] for q in drawn]),
                                          unit="question", within=(0.0, 1.0))
    return found
