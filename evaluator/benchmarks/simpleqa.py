"""SimpleQA: short fact-seeking questions graded by an LLM judge (OpenAI, 4,326 questions). See BENCHMARKS.md.

The model gets the bare question as one user message (greedy). The judge (ctx.judge; required) grades every answer
with our grader prompt (evaluator/prompts/simpleqa_grader.txt): A = correct, B = incorrect, C = not attempted. The
judge is asked for a one-sentence reason and then a final line holding only the letter; the grade is read with
evaluator.judge.parse_simpleqa_grade. A judge call that fails or a reply that cannot be parsed leaves the item
*ungraded*: it is shown and counted, and left out of the scores (never scored as wrong).

Calibration (options "simpleqa.confidence" / "simpleqa.frequency", "on" or "off"; on by default for the sample
suite, off for the full suite):
- stated confidence: a second prompt (simpleqa_confidence.txt) asks for the best guess and a 0-100 confidence as
  JSON; parse_confidence reads JSON anywhere in the reply or a "confidence: 80%" phrase. The guess is graded by the
  judge too; ECE over 10 equal-width bins and the reliability points go into the result.
- answer frequency: k samples (option "simpleqa.samples", default 5) at temperature 1, seeded per question;
  answers are normalised (normalize_answer) and grouped; the most frequent one is graded by the judge and
  plotted: its accuracy against its frequency (share of the k samples).

Details rows (same columns for every row; DETAIL_COLUMNS): part "answer" (the scored answer), "confidence" (the
stated-confidence reply), "sample1".."sampleK" (the raw samples; not graded), "frequency" (the most frequent
sampled answer, graded, with its frequency in the confidence column).
"""
from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
import string
from collections import Counter
from pathlib import Path

from evaluator.benchmarks.base import BenchmarkContext, BenchmarkResult, int_option
from evaluator.metrics.simpleqa import (
    expected_calibration_error,
    frequency_points,
    reliability_points,
    simpleqa_breakdown,
    simpleqa_scores,
)
from evaluator.models.base import GenerationRequest
from evaluator.sources import hf_download, http_text, parse_hf

NAME = "simpleqa"
NEEDS_IMAGES = False
NEEDS_JUDGE = True

SAMPLE_PATH = Path(__file__).resolve().parent.parent / "data" / "simpleqa_sample.csv"
PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
PROMPT_FILES = ("simpleqa_grader", "simpleqa_confidence", "simpleqa_format_reason", "simpleqa_format_letter")
GRADER_STYLES = ("reason", "letter")  # option simpleqa.grader: a reason then the letter (default), or the letter alone
# Where the full suite is read from when ctx.sources has no "simpleqa" entry (the official public file).
OFFICIAL_URL = "https://openaipublic.blob.core.windows.net/simple-evals/simple_qa_test_set.csv"
DEFAULT_MAX_NEW_TOKENS = 48
DEFAULT_CONFIDENCE_MAX_NEW_TOKENS = 96
DEFAULT_SAMPLES = 5
DEFAULT_SEED = 0
N_BINS = 10
NO_JUDGE_MESSAGE = "SimpleQA needs a judge: set LEADERBOARD_JUDGE / --judge"

DETAIL_COLUMNS = (
    "benchmark", "question_id", "part", "repeat", "prompt", "prediction", "parsed_answer", "gold", "correct",
    "score", "grade", "judge_rationale", "judge_raw", "judge_error", "extraction", "topic", "answer_type",
    "confidence",
)


# --------------------------------------------------------------------------------------------- loading

def load_questions(source: str | Path) -> list[dict]:
    """Read SimpleQA questions from a local CSV, an http(s) URL or hf://datasets/<org>/<name>[@rev]/<file>.

    Accepts the official columns (metadata, problem, answer) and the renamed ones (metadata, question,
    true_answer). `metadata` is a Python-literal dict (ast.literal_eval) with topic, answer_type and urls.
    Each returned dict: question_id ("simpleqa-0042" from the row index), index, problem, answer, topic,
    answer_type, urls. Raises ValueError naming the row of a malformed record.
    """
    from evaluator.images import is_url

    source = str(source)
    if source.startswith("hf://"):
        repo_id, revision, filename = parse_hf(source)
        text = Path(hf_download(repo_id, filename, revision)).read_text(encoding="utf-8-sig")
    elif is_url(source):
        text = http_text(source, "SimpleQA data", timeout=60)
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"SimpleQA data not found: {path}")
        text = path.read_text(encoding="utf-8-sig")
    return parse_csv(text, source)


def parse_csv(text: str, source: str = "<text>") -> list[dict]:
    """Parse the CSV text of a SimpleQA file (see load_questions)."""
    text = text.lstrip("\ufeff")
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip() for f in (reader.fieldnames or [])]
    reader.fieldnames = fields
    q_col = "problem" if "problem" in fields else "question" if "question" in fields else None
    a_col = "answer" if "answer" in fields else "true_answer" if "true_answer" in fields else None
    if q_col is None or a_col is None or "metadata" not in fields:
        raise ValueError(f"{source}: expected columns metadata, problem, answer (or metadata, question, "
                         f"true_answer); found {', '.join(fields) or 'none'}")
    questions = []
    for index, row in enumerate(reader):
        where = f"{source}: SimpleQA row {index}"
        problem = (row.get(q_col) or "").strip()
        answer = (row.get(a_col) or "").strip()
        if not problem:
            raise ValueError(f"{where}: empty question")
        if not answer:
            raise ValueError(f"{where}: empty answer")
        try:
            meta = ast.literal_eval((row.get("metadata") or "").strip() or "{}")
        except (ValueError, SyntaxError):
            raise ValueError(f"{where}: metadata is not a Python-literal dict") from None
        if not isinstance(meta, dict):
            raise ValueError(f"{where}: metadata is not a dict")
        urls = meta.get("urls") or []
        questions.append({
            "question_id": f"simpleqa-{index:04d}",
            "index": index,
            "problem": problem,
            "answer": answer,
            "topic": str(meta.get("topic") or ""),
            "answer_type": str(meta.get("answer_type") or ""),
            "urls": [str(u) for u in urls] if isinstance(urls, (list, tuple)) else [str(urls)],
        })
    return questions


# --------------------------------------------------------------------------------------------- prompts

def load_prompts(directory: Path = PROMPTS_DIR, grader_style: str = "reason") -> dict[str, str]:
    """The SimpleQA prompt templates (our own wording), by name.

    "simpleqa_grader" comes with its answer format filled in: a one-sentence reason then a final line holding only
    the letter ("reason", the default), or the letter alone ("letter", as the reference grader asks).
    """
    if grader_style not in GRADER_STYLES:
        raise ValueError(f"simpleqa.grader must be one of {', '.join(GRADER_STYLES)}, not {grader_style!r}")
    prompts = {name: (Path(directory) / f"{name}.txt").read_text(encoding="utf-8") for name in PROMPT_FILES}
    answer_format = prompts[f"simpleqa_format_{grader_style}"].strip()
    prompts["simpleqa_grader"] = prompts["simpleqa_grader"].replace("{answer_format}", answer_format)
    return prompts


_FIELD = re.compile(r"\{(question|gold|predicted)\}")


def fill(template: str, **values: str) -> str:
    """Replace {question} / {gold} / {predicted} in one pass (a value holding "{gold}" is left alone)."""
    return _FIELD.sub(lambda m: values.get(m.group(1), m.group(0)), template).strip()


def grader_prompt(template: str, question: str, gold: str, predicted: str) -> str:
    return fill(template, question=question, gold=gold, predicted=predicted)


# --------------------------------------------------------------------------------------------- parsing

_JSON_OBJ = re.compile(r"\{[^{}]*\}", re.S)
_CONF_PHRASE = re.compile(r"confidence\W{0,3}\s*(?:is|of|level)?\s*[:=]?\s*\"?(\d{1,3}(?:\.\d+)?)\s*(%)?", re.I)
_ANSWER_PHRASE = re.compile(r"(?:best\s+guess|answer)\s*\"?\s*[:=]\s*\"?([^\"\n]+?)\"?\s*(?:,|\n|$)", re.I)
_ANSWER_KEYS = ("answer", "best_guess", "guess", "best guess", "final_answer")


def _to_confidence(value) -> float | None:
    """A 0-100 value (or a "80%" string) as a fraction 0..1; a float in 0..1 with a decimal point is a fraction."""
    if isinstance(value, bool) or value is None:
        return None
    percent = False
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d{1,3}(?:\.\d+)?)\s*(%)?\s*", value)
        if not m:
            return None
        percent = bool(m.group(2))
        text = m.group(1)
        value = float(text)
        is_fraction = (not percent) and "." in text and value <= 1.0
    elif isinstance(value, (int, float)):
        is_fraction = isinstance(value, float) and value <= 1.0 and not float(value).is_integer()
        value = float(value)
    else:
        return None
    if not math.isfinite(value) or value < 0:
        return None
    if is_fraction:
        return value
    if value > 100:
        return None
    return value / 100.0


def _json_candidates(text: str) -> list[dict]:
    out = []
    for m in _JSON_OBJ.finditer(text):
        chunk = m.group(0)
        obj = None
        try:
            obj = json.loads(chunk)
        except json.JSONDecodeError:
            try:
                obj = ast.literal_eval(chunk)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                obj = None
        if isinstance(obj, dict):
            out.append({str(k).strip().lower(): v for k, v in obj.items()})
    return out


def parse_confidence(text: str) -> tuple[str | None, float | None]:
    """(answer, confidence 0..1) from a stated-confidence reply; None for what cannot be read.

    Looks for a JSON object anywhere in the text (also single-quoted, Python style) with "answer" and
    "confidence"; else for phrases "answer: ..." and "confidence: 80%". Confidence is a number 0-100 (or a
    fraction like 0.8); anything out of range is unreadable.
    """
    text = text or ""
    answer: str | None = None
    confidence: float | None = None
    for obj in _json_candidates(text):
        if answer is None:
            for key in _ANSWER_KEYS:
                if key in obj and obj[key] is not None and str(obj[key]).strip():
                    answer = str(obj[key]).strip()
                    break
        if confidence is None:
            for key in ("confidence", "confidence_percent", "confidence (%)", "probability"):
                if key in obj:
                    confidence = _to_confidence(obj[key])
                    if confidence is not None:
                        break
        if answer is not None and confidence is not None:
            break
    if confidence is None:
        m = _CONF_PHRASE.search(text)
        if m:
            confidence = _to_confidence(m.group(1) + (m.group(2) or ""))
    if answer is None:
        m = _ANSWER_PHRASE.search(text)
        if m and m.group(1).strip():
            answer = m.group(1).strip()
    return answer, confidence


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation})


def normalize_answer(text: str) -> str:
    """Lower case, punctuation and the articles a/an/the removed, whitespace collapsed."""
    text = (text or "").lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def most_frequent(answers: list[str]) -> tuple[str, str, float]:
    """(normalised top answer, the first raw answer in that group, its share of all answers).

    Ties go to the group seen first. An empty list gives ("", "", nan).
    """
    if not answers:
        return "", "", math.nan
    norms = [normalize_answer(a) for a in answers]
    counts = Counter(norms)
    best = max(counts.values())
    top = next(n for n in norms if counts[n] == best)
    raw = answers[norms.index(top)]
    return top, raw, best / len(answers)


def split_judge_reply(text: str | None, grade: str | None) -> str:
    """The judge's rationale: its reply without the final grade line (when a grade was read) and "Reason:"."""
    lines = (text or "").strip().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if grade is not None and lines:
        lines = lines[:-1]
    rationale = "\n".join(lines).strip()
    return re.sub(r"^\s*reason\s*:\s*", "", rationale, flags=re.I)


# --------------------------------------------------------------------------------------------- running

DEFAULT_FULL_SUITE_MAX_COST = 1.5  # option simpleqa.max_cost: run-time factor calibration may add on the full suite


def calibration_defaults(ctx: BenchmarkContext, n_samples: int) -> tuple[bool, bool]:
    """Whether to run (stated confidence, answer frequency) calibration.

    Explicit options win ("simpleqa.confidence" / "simpleqa.frequency" = on / off). Otherwise both run on the sample
    suite; on the full suite each runs only if it keeps the run within "simpleqa.max_cost" times the plain run
    (default 1.5): stated confidence costs 2x (a second generation per question), answer frequency (1 + k)x.
    """
    if ctx.suite == "sample":
        return _flag(ctx, "simpleqa.confidence", True), _flag(ctx, "simpleqa.frequency", True)
    try:
        max_cost = float(ctx.options.get("simpleqa.max_cost", DEFAULT_FULL_SUITE_MAX_COST))
    except ValueError:
        raise ValueError(f"simpleqa.max_cost must be a number, not {ctx.options.get('simpleqa.max_cost')!r}") from None
    return (_flag(ctx, "simpleqa.confidence", 2.0 <= max_cost),
            _flag(ctx, "simpleqa.frequency", 1.0 + n_samples <= max_cost))


def _flag(ctx: BenchmarkContext, key: str, default: bool) -> bool:
    value = str(ctx.options.get(key, "on" if default else "off")).strip().lower()
    if value in ("on", "true", "1", "yes"):
        return True
    if value in ("off", "false", "0", "no"):
        return False
    raise ValueError(f"{key} must be 'on' or 'off', got {value!r}")


def _row(q: dict, part: str, repeat: int, prompt: str) -> dict:
    """A details row with every column, filled as for an ungraded reply."""
    return {
        "benchmark": NAME,
        "question_id": q["question_id"],
        "part": part,
        "repeat": repeat,
        "prompt": prompt,
        "prediction": "",
        "parsed_answer": "",
        "gold": q["answer"],
        "correct": False,
        "score": math.nan,
        "grade": "",
        "judge_rationale": "",
        "judge_raw": "",
        "judge_error": "",
        "extraction": "judge",
        "topic": q["topic"],
        "answer_type": q["answer_type"],
        "confidence": math.nan,
    }


def _generate(model, requests: list[GenerationRequest]) -> list[str]:
    if not requests:
        return []
    outputs = model.generate(requests)
    if len(outputs) != len(requests):
        raise RuntimeError(f"the model returned {len(outputs)} completions for {len(requests)} prompts")
    return [o if isinstance(o, str) else "" for o in outputs]


def _grade(judge, template: str, jobs: list[tuple[dict, str, str]], **generation) -> None:
    """Grade (row, question, answer) jobs with one judge.complete_many call; fills the row's judge columns."""
    if not jobs:
        return
    from evaluator.judge import parse_simpleqa_grade  # lazy: the judge module pulls in its backends

    conversations = [[{"role": "user", "content": grader_prompt(template, question, row["gold"], answer)}]
                     for row, question, answer in jobs]
    results = judge.complete_many(conversations, **generation)
    if len(results) != len(jobs):
        raise RuntimeError(f"the judge returned {len(results)} results for {len(jobs)} conversations")
    for (row, _, _), res in zip(jobs, results):
        text = getattr(res, "text", None)
        error = getattr(res, "error", None)
        row["judge_raw"] = text or ""
        grade = parse_simpleqa_grade(text) if text else None
        if grade not in ("A", "B", "C"):
            grade = None
        if error:
            row["judge_error"] = str(error)
        elif grade is None:
            row["judge_error"] = "unparsable grade" if text else "empty judge reply"
        row["judge_rationale"] = split_judge_reply(text, grade)
        row["grade"] = grade or ""
        row["correct"] = grade == "A"
        row["score"] = math.nan if grade is None else (1.0 if grade == "A" else 0.0)


def run(model, ctx: BenchmarkContext) -> BenchmarkResult:
    """Answer every question, have the judge grade it, and optionally measure calibration."""
    judge = getattr(ctx, "judge", None)
    if judge is None:
        raise ValueError(NO_JUDGE_MESSAGE)
    max_new_tokens = int_option(ctx, "simpleqa.max_new_tokens", DEFAULT_MAX_NEW_TOKENS, 1)
    conf_max_new_tokens = int_option(ctx, "simpleqa.confidence_max_new_tokens",
                                      DEFAULT_CONFIDENCE_MAX_NEW_TOKENS, 1)
    n_samples = int_option(ctx, "simpleqa.samples", DEFAULT_SAMPLES, 1)
    seed = int_option(ctx, "simpleqa.seed", DEFAULT_SEED, 0)
    judge_generation = {}
    if ctx.options.get("simpleqa.judge_max_tokens"):
        judge_generation["max_tokens"] = int_option(ctx, "simpleqa.judge_max_tokens", 0, 1)
    use_confidence, use_frequency = calibration_defaults(ctx, n_samples)

    source = SAMPLE_PATH if ctx.suite == "sample" else (ctx.sources.get(NAME) or OFFICIAL_URL)
    questions = load_questions(source)
    if ctx.limit and ctx.limit > 0:
        questions = questions[: ctx.limit]
    prompts = load_prompts(grader_style=str(ctx.options.get("simpleqa.grader", "reason")).strip().lower())
    grader = prompts["simpleqa_grader"]

    details: list[dict] = []
    answer_rows: list[dict] = []
    conf_rows: list[dict] = []
    freq_rows: list[dict] = []
    n_unparsable_conf = 0
    total = len(questions)
    chunk_size = max(1, int(ctx.batch_size or 1))
    ctx.progress(0, total)
    for start in range(0, total, chunk_size):
        chunk = questions[start: start + chunk_size]
        requests: list[GenerationRequest] = []
        targets: list[dict] = []
        per_q: list[dict] = []
        for q in chunk:
            rows: dict = {"answer": _row(q, "answer", 0, q["problem"])}
            requests.append(GenerationRequest(text=q["problem"], max_new_tokens=max_new_tokens, temperature=0.0))
            targets.append(rows["answer"])
            if use_confidence:
                text = fill(prompts["simpleqa_confidence"], question=q["problem"])
                rows["confidence"] = _row(q, "confidence", 0, text)
                requests.append(GenerationRequest(text=text, max_new_tokens=conf_max_new_tokens, temperature=0.0))
                targets.append(rows["confidence"])
            if use_frequency:
                rows["samples"] = []
                for j in range(1, n_samples + 1):
                    row = _row(q, f"sample{j}", j, q["problem"])
                    row["extraction"] = "normalised (not graded)"
                    rows["samples"].append(row)
                    requests.append(GenerationRequest(text=q["problem"], max_new_tokens=max_new_tokens,
                                                      temperature=1.0, seed=seed + q["index"]))
                    targets.append(row)
            per_q.append(rows)
        for row, text in zip(targets, _generate(model, requests)):
            row["prediction"] = text
        jobs: list[tuple[dict, str, str]] = []
        for q, rows in zip(chunk, per_q):
            ans = rows["answer"]
            ans["parsed_answer"] = ans["prediction"].strip()
            jobs.append((ans, q["problem"], ans["parsed_answer"]))
            if use_confidence:
                crow = rows["confidence"]
                guess, conf = parse_confidence(crow["prediction"])
                if conf is None:
                    n_unparsable_conf += 1
                crow["confidence"] = math.nan if conf is None else conf
                crow["parsed_answer"] = guess if guess is not None else crow["prediction"].strip()
                jobs.append((crow, q["problem"], crow["parsed_answer"]))
            if use_frequency:
                for srow in rows["samples"]:
                    srow["parsed_answer"] = normalize_answer(srow["prediction"])
                top, raw, share = most_frequent([s["prediction"] for s in rows["samples"]])
                frow = _row(q, "frequency", 0, q["problem"])
                frow["prediction"] = raw
                frow["parsed_answer"] = top
                frow["confidence"] = share
                rows["frequency"] = frow
                jobs.append((frow, q["problem"], raw.strip()))
        _grade(judge, grader, jobs, **judge_generation)
        for rows in per_q:
            details.append(rows["answer"])
            answer_rows.append(rows["answer"])
            if use_confidence:
                details.append(rows["confidence"])
                conf_rows.append(rows["confidence"])
            if use_frequency:
                details.extend(rows["samples"])
                details.append(rows["frequency"])
                freq_rows.append(rows["frequency"])
        ctx.progress(min(start + len(chunk), total), total)

    grades = [r["grade"] or None for r in answer_rows]
    summary = simpleqa_scores(grades)
    scores = {key: summary[key] for key in
              ("correct", "incorrect", "not_attempted", "correct_given_attempted", "f_score")}
    extra: dict = {
        "by_topic": simpleqa_breakdown(grades, [r["topic"] for r in answer_rows]),
        "by_answer_type": simpleqa_breakdown(grades, [r["answer_type"] for r in answer_rows]),
        "attempted": summary["attempted"],
        "calibration": {"confidence": use_confidence, "frequency": use_frequency},
        "judge": dict(getattr(judge, "identity", {}) or {}),
        "settings": {"max_new_tokens": max_new_tokens, "suite": ctx.suite, "source": str(source)},
        "grade_rule": "final line of the judge reply (letter or grade word) via evaluator.judge.parse_simpleqa_grade;"
                      " anything else ungraded, left out of the scores",
    }
    counts = {
        "items": total,
        "graded": summary["n"],
        "ungraded": summary["ungraded"],
        "unparsable_confidence": n_unparsable_conf,
    }
    if use_confidence:
        usable = [r for r in conf_rows if r["grade"] and not math.isnan(r["confidence"])]
        conf_list = [r["confidence"] for r in usable]
        correct_list = [r["grade"] == "A" for r in usable]
        scores["ece"] = expected_calibration_error(conf_list, correct_list, N_BINS)
        extra["reliability"] = reliability_points(conf_list, correct_list, N_BINS)
        extra["confidence_scores"] = simpleqa_scores([r["grade"] or None for r in conf_rows])
        extra["settings"]["confidence_max_new_tokens"] = conf_max_new_tokens
        counts["confidence_ungraded"] = sum(1 for r in conf_rows if not r["grade"])
    if use_frequency:
        usable = [r for r in freq_rows if r["grade"]]
        extra["frequency"] = frequency_points([r["confidence"] for r in usable],
                                              [r["grade"] == "A" for r in usable], N_BINS)
        extra["frequency_scores"] = simpleqa_scores([r["grade"] or None for r in freq_rows])
        extra["settings"].update(samples=n_samples, sample_temperature=1.0, seed=seed)
        counts["frequency_ungraded"] = sum(1 for r in freq_rows if not r["grade"])
    used = ("simpleqa_grader", "simpleqa_confidence") if use_confidence else ("simpleqa_grader",)
    return BenchmarkResult(scores=scores, details=details, counts=counts,
                           prompts={name: prompts[name] for name in used}, extra=extra)
