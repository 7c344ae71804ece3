"""LAVE's board section (evaluator.benchmarks.lave.views.lave_agreement_frame): one run's LAVE beside each strict
string metric, as text."""
from __future__ import annotations

import math

from evaluator.benchmarks.lave import CARD
from evaluator.benchmarks.lave.views import HEADERS, lave_agreement_frame

METRICS = ("vqa_accuracy", "anls", "exact_match", "bleu4", "cider")


def _result(**block) -> dict:
    lave = {
        "scores": {"lave": 0.75, "vqa_accuracy": 0.3, "anls": 0.4, "exact_match": 0.25, "bleu4": 0.01, "cider": 1.234},
        "counts": {"items": 4, "answered": 4, "rated": 4, "unrated": 0, "rating_fallback": 1, "image_unavailable": 0},
        "extra": {"ratings": {"1": 1, "2": 0, "3": 3},
                  "agreement": {m: {"n": 4, "agreement": 0.5, "spearman": 0.25, "rule": "x"} for m in METRICS}},
    }
    lave.update(block)
    return {"model": "tiny-org/tiny-llava", "benchmarks": {"lave": lave}}


def test_one_row_for_lave_then_one_per_strict_metric():
    frame = lave_agreement_frame(_result())
    assert list(frame.columns) == ["Metric", "Score", "Agrees with LAVE", "Spearman", "Items"] == HEADERS
    by_metric = {row[0]: row for row in frame.values.tolist()}
    assert list(by_metric) == ["LAVE", "VQA accuracy", "ANLS", "exact match (VQA-normalised)", "BLEU-4", "CIDEr"]
    assert by_metric["LAVE"] == ["LAVE", "75.0", "-", "-",
                                 "4 rated (3 rated 3, 0 rated 2, 1 rated 1; 1 without a rating counted as 2; "
                                 "0 unrated)"]
    assert by_metric["exact match (VQA-normalised)"] == ["exact match (VQA-normalised)", "25.0", "50.0", "0.250", "4"]
    assert by_metric["BLEU-4"][1] == "1.0"
    assert by_metric["CIDEr"] == ["CIDEr", "1.234", "50.0", "0.250", "4"]  # a plain number, not a percentage
    assert all(isinstance(value, str) for row in frame.values.tolist() for value in row)


def test_undefined_and_missing_values_read_n_a():
    agreement = {"exact_match": {"n": 3, "agreement": math.nan, "spearman": None}}
    frame = lave_agreement_frame(_result(scores={"lave": math.nan, "anls": 0.5, "cider": True},
                                         counts={}, extra={"agreement": agreement}))
    by_metric = {row[0]: row for row in frame.values.tolist()}
    assert by_metric["LAVE"][1] == "n/a"
    assert by_metric["LAVE"][4] == ("0 rated (0 rated 3, 0 rated 2, 0 rated 1; 0 without a rating counted as 2; "
                                    "0 unrated)")
    assert by_metric["exact match (VQA-normalised)"] == ["exact match (VQA-normalised)", "n/a", "n/a", "n/a", "3"]
    assert by_metric["ANLS"] == ["ANLS", "50.0", "n/a", "n/a", "0"]  # no agreement recorded: 0 items compared
    assert by_metric["CIDEr"][1] == "n/a"  # a bool is not a score


def test_a_run_without_lave_gives_an_empty_table():
    for result in (None, {}, {"benchmarks": {}}, {"benchmarks": {"cure": {"scores": {"Ro": 0.5}}}},
                   {"benchmarks": {"lave": {"scores": {}}}}):
        frame = lave_agreement_frame(result)
        assert list(frame.columns) == HEADERS and len(frame) == 0


def test_the_card_shows_it_as_the_lave_section():
    (section,) = CARD.sections
    assert section.key == "lave_agreement" and section.kind == "table" and section.needs == "lave"
    assert section.title == "LAVE against strict metrics" and section.render is lave_agreement_frame
    assert section.description.startswith("The same free-form answers scored by the LLM judge (LAVE)")
    assert len(section.render(None)) == 0
