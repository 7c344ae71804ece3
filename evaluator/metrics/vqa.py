"""String metrics for free-form VQA answers: VQA accuracy, ANLS and exact match. Pure functions, scores in 0..1.

VQA accuracy (the official VQA v2 evaluation, GT-Vision-Lab/VQA ``vqaEval.py``, as BENCHMARKS.md states it):

1. the prediction gets the full answer normalisation (``vqa_normalize.normalize_answer``: whitespace, punctuation,
   lower-case, number words to digits, articles dropped, contractions restored);
2. every reference (ground-truth) answer gets only whitespace cleanup and the punctuation step
   (``normalize_punctuation``): VQA v2's published answers are already normalised, so "two" or "Yes" in a
   reference stays as written and does not match a prediction normalised to "2" or "yes";
3. for each of the N references (normally 10): leave it out, count the others equal to the prediction,
   acc = min(1, matches / 3); the score is the mean over the N leave-one-out subsets. With 10 references:
   1 match -> 0.3, 2 -> 0.6, 3 -> 0.9, 4 or more -> 1.0.

Notes on versions: the official code's later revision normalises both sides fully, and only when the references
disagree; we keep the rule of BENCHMARKS.md (the widely used one). On VQA v2 data the two agree almost everywhere.

Fewer references (Docmatix style, 1-3): the same leave-one-out formula applies (2 references, one matching ->
1/6; 2 identical references, matching -> 1/3). A *single* reference leaves zero others, which the official code
would always score 0: here it is defined as exact match after the full normalisation of both sides (1.0 / 0.0).
Neither is the official accuracy: ``official_vqa_accuracy`` gives it only where a question has the official 10
answers (NaN otherwise), and LAVE reports that; ``exact_match`` is the strict metric for the other questions.

ANLS (Average Normalized Levenshtein Similarity, ST-VQA / DocVQA): both sides lower-cased, stripped and with
internal whitespace runs collapsed to one space; NL = Levenshtein distance / max(len(a), len(b));
score = 1 - NL if NL < threshold else 0; the best reference counts. The ``evaluate`` library's ANLS is wrong and is
not used.
"""
from __future__ import annotations

import math

from rapidfuzz.distance import Levenshtein

from evaluator.metrics.vqa_normalize import clean_whitespace, normalize_answer, normalize_punctuation

VQA_ANSWERS = 10  # human answers per question in the official VQA evaluation (its 10 leave-one-out subsets)


def _text(value: object) -> str:
    """None becomes ""; anything else is its str()."""
    return "" if value is None else str(value)


def _check_answers(answers: list[str]) -> list[str]:
    if isinstance(answers, str):
        raise TypeError("answers must be a list of strings, not a single string")
    answers = [_text(a) for a in answers]
    if not answers:
        raise ValueError("at least one reference answer is needed")
    return answers


def vqa_accuracy(prediction: str, answers: list[str]) -> float:
    """Official VQA v2 accuracy of one prediction against its N human answers (see the module docstring)."""
    refs = _check_answers(answers)
    pred = normalize_answer(_text(prediction))
    if len(refs) == 1:
        return 1.0 if pred == normalize_answer(refs[0]) else 0.0
    gts = [normalize_punctuation(clean_whitespace(a)) for a in refs]
    matches_total = sum(1 for a in gts if a == pred)
    total = 0.0
    for left_out in gts:
        matches = matches_total - (1 if left_out == pred else 0)
        total += min(1.0, matches / 3)
    return total / len(gts)


def official_vqa_accuracy(prediction: str, answers: list[str]) -> float:
    """``vqa_accuracy`` where the question has at least VQA_ANSWERS (10) answers, as the official evaluation has;
    NaN with fewer (the formula is not the official one there: ``exact_match`` names what strict scoring does)."""
    refs = _check_answers(answers)
    return vqa_accuracy(prediction, refs) if len(refs) >= VQA_ANSWERS else math.nan


def _anls_text(text: str) -> str:
    return " ".join(text.lower().split())


def anls(prediction: str, answers: list[str], threshold: float = 0.5) -> float:
    """ANLS of one prediction: best 1 - NL over the references, 0 when NL >= threshold (see the module docstring).

    Two empty strings are identical (1.0); exactly one empty side gives 0.0.
    """
    refs = [_anls_text(a) for a in _check_answers(answers)]
    pred = _anls_text(_text(prediction))
    best = 0.0
    for ref in refs:
        longest = max(len(pred), len(ref))
        if longest == 0:
            return 1.0
        nl = Levenshtein.distance(pred, ref) / longest
        score = 1.0 - nl if nl < threshold else 0.0
        best = max(best, score)
    return best


def exact_match(prediction: str, answers: list[str]) -> float:
    """1.0 when ``normalize_answer`` of the prediction equals ``normalize_answer`` of any reference, else 0.0."""
    refs = {normalize_answer(a) for a in _check_answers(answers)}
    return 1.0 if normalize_answer(_text(prediction)) in refs else 0.0
