"""Caption metrics: BLEU-4 and CIDEr with pycocoevalcap, on the raw strings.

ReForm-Eval's ``GenerationMetric`` feeds pycocoevalcap's scorers the raw prediction and reference strings (no
PTBTokenizer: no lower-casing, punctuation stays attached to words, tokens are whitespace-split), as
``{key: [prediction]}`` and ``{key: references}``. ``caption_scores`` does the same with ``Bleu(4)`` (its fourth
score, corpus-level with the "closest" reference length) and ``Cider()`` (CIDEr-D style: 4-grams, sigma 6,
clipped, x10).

Note: CIDEr's IDF weights come from the reference set being evaluated, so a CIDEr value depends on which items are
scored together (a subset or a different batch gives different numbers; a single item always scores 0 because every
n-gram then has IDF log(1/1) = 0). Compare CIDEr only over the same item set. Scores are pycocoevalcap's raw values
(CIDEr is not bounded by 1).
"""
from __future__ import annotations

import contextlib
import io
import math


def _pycoco(predictions: dict[str, str], references: dict[str, list[str]]):
    """(keys, BLEU-4 corpus, BLEU-4 per item, CIDEr corpus, CIDEr per item) from pycocoevalcap on the raw strings."""
    if set(predictions) != set(references):
        missing = set(predictions) ^ set(references)
        raise ValueError(f"predictions and references must have the same keys; differing: {sorted(missing)[:5]}")
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider

    keys = sorted(predictions, key=str)
    res = {str(k): ["" if predictions[k] is None else str(predictions[k])] for k in keys}
    gts = {}
    for k in keys:
        refs = [str(r) for r in references[k]]
        if not refs:
            raise ValueError(f"item {k!r} has no reference caption")
        gts[str(k)] = refs
    with contextlib.redirect_stdout(io.StringIO()):  # Bleu prints its length statistics
        bleu, bleu_items = Bleu(4).compute_score(gts, res, verbose=0)
        cider, cider_items = Cider().compute_score(gts, res)
    return keys, float(bleu[3]), list(bleu_items[3]), float(cider), list(cider_items)


def caption_scores(predictions: dict[str, str], references: dict[str, list[str]]) -> dict[str, float]:
    """{"BLEU-4": float, "CIDEr": float} over the items of ``predictions`` (keys must match ``references``).

    Each item needs at least one reference. Empty input -> NaN for both. A None prediction counts as "".
    """
    if not predictions and not references:
        return {"BLEU-4": math.nan, "CIDEr": math.nan}
    _, bleu, _, cider, _ = _pycoco(predictions, references)
    return {"BLEU-4": bleu, "CIDEr": cider}


def caption_item_scores(predictions: dict[str, str], references: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Per item {"BLEU-4", "CIDEr"}: pycocoevalcap's sentence-level BLEU-4 and the item's CIDEr, both computed over
    the whole set given (CIDEr's IDF weights come from all its references; see the module docstring)."""
    if not predictions and not references:
        return {}
    keys, _, bleu_items, _, cider_items = _pycoco(predictions, references)
    return {k: {"BLEU-4": float(b), "CIDEr": float(c)} for k, b, c in zip(keys, bleu_items, cider_items)}
