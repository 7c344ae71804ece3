"""Reading replies: the stated-confidence reply, sampled answers grouped by their normalised text, and the judge's
rationale."""
from __future__ import annotations

import ast
import json
import math
import re
import string
from collections import Counter

from evaluator.judge.replies import split_simpleqa_reply

_JSON_OBJ = re.compile(r"\{[^{}]*\}", re.S)
_CONF_PHRASE = re.compile(r"confidence\W{0,3}\s*(?:is|of|level)?\s*[:=]?\s*\"?(\d{1,3}(?:\.\d+)?)\s*(%)?", re.I)
_ANSWER_PHRASE = re.compile(r"(?:best\s+guess|answer)\s*\"?\s*[:=]\s*\"?([^\"\n]+?)\"?\s*(?:,|\n|$)", re.I)
_ANSWER_KEYS = ("answer", "best_guess", "guess", "best guess", "final_answer")
_CONFIDENCE_KEYS = ("confidence", "confidence_score", "confidence score", "confidence_percent", "confidence (%)",
                    "probability")


_CONF_TEXT = re.compile(r"\s*(\d{1,3}(?:\.\d+)?)\s*(%)?\s*")


def _confidence_parts(value) -> tuple[float, bool, bool] | None:
    """(the number, written with a decimal point, followed by "%") of a JSON / Python value or of a text such as
    "80", "0.8" or "80%"; None for anything else. A JSON or Python float (1.0, 0.8) was written with a decimal
    point, an int (1, 80) without one."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        m = _CONF_TEXT.fullmatch(value)
        return (float(m.group(1)), "." in m.group(1), bool(m.group(2))) if m else None
    if isinstance(value, int):
        return float(value), False, False
    if isinstance(value, float):
        return value, True, False
    return None


def to_confidence(value) -> float | None:
    """A stated confidence as a fraction 0..1, or None when it cannot be read. One rule for numbers and texts:

    - the prompt asks for a whole number from 0 to 100 (as the SimpleQA paper asks for a 0-100 % score), so a
      number is a percentage: 80, "80", "80%" and "0.5%" give 0.8, 0.8, 0.8 and 0.005, and 1 or "1" gives 0.01;
    - except a number at most 1 written with a decimal point and no "%": a model that writes 0.8, "0.8", 1.0 or
      "1.0" has answered on the 0-1 scale (no whole-number percentage is written that way), so it is that fraction
      (0.8, 0.8, 1.0, 1.0);
    - a negative number, one above 100 %, or anything that is not a number is unreadable (None).
    """
    parts = _confidence_parts(value)
    if parts is None:
        return None
    number, decimal, percent = parts
    if not math.isfinite(number) or number < 0:
        return None
    if decimal and not percent and number <= 1.0:
        return number
    return number / 100.0 if number <= 100 else None


def _json_candidates(text: str) -> list[dict]:
    """Every {...} in the text that reads as a dict (JSON, or a Python literal), its keys lower-cased."""
    out = []
    for m in _JSON_OBJ.finditer(text):
        chunk = m.group(0)
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


def _from_json(text: str) -> tuple[str | None, float | None]:
    answer: str | None = None
    confidence: float | None = None
    for obj in _json_candidates(text):
        if answer is None:
            for key in _ANSWER_KEYS:
                if key in obj and obj[key] is not None and str(obj[key]).strip():
                    answer = str(obj[key]).strip()
                    break
        if confidence is None:
            for key in _CONFIDENCE_KEYS:
                if key in obj:
                    confidence = to_confidence(obj[key])
                    if confidence is not None:
                        break
        if answer is not None and confidence is not None:
            break
    return answer, confidence


def parse_confidence(text: str) -> tuple[str | None, float | None]:
    """(answer, confidence 0..1) from a stated-confidence reply; None for what cannot be read.

    Looks for a JSON object anywhere in the text (also single-quoted, Python style) with "answer" and
    "confidence" (or the paper's "confidence_score"); else for phrases "answer: ..." and "confidence: 80%". The
    confidence is read by to_confidence, one rule for JSON numbers and texts.
    """
    text = text or ""
    answer, confidence = _from_json(text)
    if confidence is None:
        m = _CONF_PHRASE.search(text)
        if m:
            confidence = to_confidence(m.group(1) + (m.group(2) or ""))
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
    """The judge's rationale: its reply without the grade line (the last line, or the first when the grade came
    first: evaluator.judge.replies.split_simpleqa_reply) when a grade was read, and without "Reason:"."""
    rationale = split_simpleqa_reply(text)[1] if grade is not None else (text or "").strip()
    return re.sub(r"^\s*reason\s*:\s*", "", rationale, flags=re.I)
