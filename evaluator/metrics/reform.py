"""ReForm-Eval metrics (see BENCHMARKS.md, "ReForm-Eval"): option marks, accuracy over repeats, format hit rate,
instability, OCR word accuracy and key-information extraction. Pure functions, no models.

Rules follow the official code (FudanDISC/ReForm-Eval: metrics/singlechoice.py, metrics/ocropenended.py,
run_eval.py ``metric_eval``, utils/run_utils.py ``entropy_calculation``):

* the chosen option is the FIRST ``\\([1-9A-Za-z]\\)`` mark of the output, mapped to its index in ``A..Z``,
  ``a..z`` or ``1..9`` ((A), (a), (1) -> 0);
* accuracy is the mean over every repeat of every sample (the official ``np.mean`` of the sample x repeat matrix);
* the format hit rate is the share of outputs that contain a mark at all (likelihood predictions always hit);
* instability is the mean over samples of the natural-log entropy of the repeats' predicted option *texts*
  (options are shuffled between repeats, so indices are not comparable); an output without a usable mark enters
  with its raw text, so a reply that is the bare text of an option counts as that option;
* OCR word accuracy joins a list of gold answers into one phrase (``OCROpenEndedMetric``);
* BLEU-4 / CIDEr live in ``evaluator.metrics.captions``.

The reference run in shared/data/reform_eval (TDIUC, likelihood, 11 samples x 5 repeats) gives accuracy
0.5818181818 and instability 0.7122099356 with these functions.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Sequence

from evaluator.metrics.vqa_normalize import normalize_answer

OPTION_MARK_RE = re.compile(r"\([1-9A-Za-z]\)")
_MARK_INDEX: dict[str, int] = {}
for _alphabet in ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "123456789"):
    _MARK_INDEX.update({c: i for i, c in enumerate(_alphabet)})

_NON_ALNUM_RE = re.compile(r"[^a-zA-Z0-9\s]")


# ----------------------------------------------------------------------------------------------- multiple choice
def find_option_mark(text: str) -> int | None:
    """Index of the FIRST ``(X)`` mark in ``text`` with no range check (exactly the official mapping), or None.

    ``(A)``/``(a)``/``(1)`` -> 0, ``(B)``/``(b)``/``(2)`` -> 1, ... ``(Z)``/``(z)`` -> 25, ``(9)`` -> 8.
    """
    if not isinstance(text, str):
        return None
    m = OPTION_MARK_RE.search(text)
    return _MARK_INDEX[m.group(0)[1]] if m else None


def extract_option(text: str, n_options: int, options: Sequence[str] | None = None) -> int | None:
    """The chosen option's index (0-based) from a generated answer, or None when there is no usable answer.

    The FIRST ``\\([1-9A-Za-z]\\)`` mark decides, even when a later mark names another option ("(B) no, (A)" -> 1).
    Only the first mark is looked at: if it lies beyond ``n_options`` (e.g. "(E)" with 4 options) the result is
    None; a later in-range mark is not used.

    Difference from the official code: ReForm-Eval's ``SingleChoiceMetric`` has no range check; it returns the
    out-of-range index (always scored wrong), counts the output as a format *hit*, and for instability falls back to
    the raw output text. Accuracy and instability are the same with None here; for the official format hit rate use
    ``format_hit`` / ``format_hit_rate`` (any mark counts).

    ``options``: when given and the text has no mark, an output equal to an option text selects it (the official
    fallback used in its multi-round dialogue; its ``metric_eval`` does not pass options, so the default is off).
    """
    idx = find_option_mark(text)
    if idx is None:
        if options is not None and isinstance(text, str):
            for i, opt in enumerate(options):
                if opt == text:
                    return i
        return None
    return idx if 0 <= idx < n_options else None


def format_hit(output: str | int | None) -> bool:
    """Official format hit: a likelihood prediction (int) always hits; a generated text hits when it has any mark."""
    if isinstance(output, bool):
        return False
    if isinstance(output, int):
        return True
    return find_option_mark(output) is not None


def format_hit_rate(outputs: Iterable[str | int | None]) -> float:
    """Share of outputs that are a format hit (see ``format_hit``); NaN for no outputs."""
    outs = list(outputs)
    if not outs:
        return math.nan
    return sum(format_hit(o) for o in outs) / len(outs)


def score_choice(output: str | int, answer: int, n_options: int,
                 options: Sequence[str] | None = None) -> tuple[bool, int | None]:
    """(correct, chosen index) for one generated text or likelihood index (an int is already the choice)."""
    if isinstance(output, int) and not isinstance(output, bool):
        idx = output if 0 <= output < n_options else None
    else:
        idx = extract_option(output, n_options, options)
    return (idx is not None and idx == int(answer)), idx


def choice_text(index: int | None, options: Sequence[str], raw_output: str | int) -> str:
    """The answer text entered into ``instability``: the chosen option's text, else the raw output (the official
    mapping: an unmarked reply equal to an option's text counts as that option). Always text: options that are not
    a list, or an option that is not text (a damaged stored row), never raise."""
    if not isinstance(options, (list, tuple)):
        options = []
    if isinstance(index, int) and 0 <= index < len(options):
        chosen = options[index]
        return chosen if isinstance(chosen, str) else repr(chosen)
    return str(raw_output)


def reform_accuracy(correct: Iterable[Iterable[bool | float]] | Iterable[bool | float]) -> float:
    """Accuracy over repeats: the mean over every repeat of every sample (a flat list is accepted too).

    With the same number of repeats per sample this is the official ``np.mean`` of the sample x repeat matrix.
    NaN when there is nothing to score.
    """
    flat: list[float] = []
    for item in correct:
        if isinstance(item, (list, tuple)):
            flat.extend(float(x) for x in item)
        else:
            flat.append(float(item))
    return sum(flat) / len(flat) if flat else math.nan


def answer_entropy(answers: Sequence[str]) -> float:
    """Natural-log entropy of the empirical distribution of ``answers`` (0 when all agree)."""
    n = len(answers)
    if n == 0:
        return math.nan
    counts = Counter(a if isinstance(a, str) else repr(a) for a in answers)  # a dict or list counts by its text
    return -sum((c / n) * math.log(c / n) for c in counts.values())


def instability(per_sample_answers: list[list[str]]) -> float:
    """Mean over samples of the entropy (natural log) of the repeats' predicted option texts.

    Each inner list holds one sample's N answers (option texts; an unparsable output as its raw text, see
    ``choice_text``). All equal -> 0; N different answers -> ln N. Samples with no answers are skipped;
    NaN when no sample remains.
    """
    ents = [answer_entropy(list(a)) for a in per_sample_answers if len(a) > 0]
    return sum(ents) / len(ents) if ents else math.nan


# ------------------------------------------------------------------------------------------------ OCR and KIE
def _clean_ocr(text: str) -> str:
    return _NON_ALNUM_RE.sub("", text).lower()


def _has_word(sentence: str, word: str) -> bool:
    return re.search(r"\b" + re.escape(word) + r"\b", sentence) is not None


def _as_list(answer: str | Sequence[str]) -> list[str]:
    return [answer] if isinstance(answer, str) else [str(a) for a in answer]


def ocr_word_accuracy(prediction: str, answer: str | list[str]) -> float:
    """1.0 if the ground truth, lower-cased and stripped of non-alphanumerics (whitespace kept), appears as a whole
    word/phrase (``\\b...\\b``) in the equally cleaned prediction, else 0.0.

    A list of answers is joined with spaces into one phrase first, as the official ``OCROpenEndedMetric`` does
    (["stop", "exit"] needs "stop exit"). As in the official code an answer that cleans to the empty string matches
    any prediction that has a word.
    """
    pred = _clean_ocr(str(prediction))
    return 1.0 if _has_word(pred, _clean_ocr(" ".join(_as_list(answer)))) else 0.0


def kie_accuracy(prediction: str, answers: str | list[str]) -> float:
    """Key-information extraction: 1.0 if a VQA-normalised answer appears as a whole word/phrase (``\\b...\\b``) in
    the VQA-normalised prediction (any of several answers), else 0.0.

    Both sides get the full VQA normalisation (``evaluator.metrics.vqa_normalize.normalize_answer``: punctuation
    rules, lower-case, number words to digits, articles dropped, contractions), as ReForm-Eval's
    ``KIEOpenEndedMetric`` does.
    """
    pred = normalize_answer(str(prediction))
    return 1.0 if any(_has_word(pred, normalize_answer(a)) for a in _as_list(answers)) else 0.0
