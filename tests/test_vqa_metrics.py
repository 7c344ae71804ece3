"""VQA accuracy, ANLS, exact match and LAVE helpers: hand-checked cases."""
from __future__ import annotations

import math

import pytest

from evaluator.metrics import anls, exact_match, lave_agreement, lave_score, vqa_accuracy


def tens(match: str, n_match: int, other: str = "cat") -> list[str]:
    """Ten annotator answers: `n_match` copies of `match`, the rest `other`."""
    return [match] * n_match + [other] * (10 - n_match)


# ----------------------------------------------------------------------------------------------- VQA accuracy

@pytest.mark.parametrize(
    ("n_match", "expected"),
    [(0, 0.0), (1, 0.3), (2, 0.6), (3, 0.9), (4, 1.0), (5, 1.0), (9, 1.0)],
)
def test_vqa_accuracy_annotator_counts(n_match, expected):
    # 3 matching: leave out a match (x3) -> 2/3, leave out another (x7) -> 1; (2 + 7) / 10 = 0.9
    assert vqa_accuracy("dog", tens("dog", n_match)) == pytest.approx(expected)


def test_vqa_accuracy_all_ten_agree():
    assert vqa_accuracy("dog", ["dog"] * 10) == 1.0
    assert vqa_accuracy("  dog\n", ["dog"] * 10) == 1.0  # whitespace cleanup is always done


def test_vqa_accuracy_articles():
    assert vqa_accuracy("a dog", tens("dog", 9)) == 1.0
    assert vqa_accuracy("The dog", tens("dog", 3)) == pytest.approx(0.9)


def test_vqa_accuracy_number_words():
    assert vqa_accuracy("two", tens("2", 4, "3")) == 1.0
    assert vqa_accuracy("Two", tens("2", 2, "3")) == pytest.approx(0.6)
    # references get only the punctuation step: a reference "two" stays "two" (VQA v2's answers are normalised)
    assert vqa_accuracy("2", tens("two", 3, "3")) == 0.0


@pytest.mark.parametrize("prediction", ["yes.", "yes!", "Yes", "yes?"])
def test_vqa_accuracy_punctuation(prediction):
    assert vqa_accuracy(prediction, tens("yes", 9, "no")) == 1.0


def test_vqa_accuracy_punctuation_inside():
    assert vqa_accuracy("dog,", tens("dog", 3)) == pytest.approx(0.9)
    assert vqa_accuracy("yes", tens("yes.", 3, "no")) == pytest.approx(0.9)  # the period rule, on both sides
    assert vqa_accuracy("yes", tens("yes!", 3, "no")) == 0.0  # official quirk: a reference "yes!" becomes "yes "
    assert vqa_accuracy("hot-dog", tens("hot dog", 4)) == 1.0  # '-' touching no space becomes a space


def test_vqa_accuracy_contractions():
    assert vqa_accuracy("dont", tens("don't", 4, "no")) == 1.0
    assert vqa_accuracy("don't", tens("dont", 1, "no")) == 0.0  # references keep their spelling


def test_vqa_accuracy_normalises_the_prediction_not_the_references():
    assert vqa_accuracy("a dog", ["dog"] * 10) == 1.0
    assert vqa_accuracy("Dog", ["dog"] * 10) == 1.0
    assert vqa_accuracy("yes.", ["yes"] * 10) == 1.0
    assert vqa_accuracy("dog", ["Dog"] * 10) == 0.0  # a reference is not lower-cased
    assert vqa_accuracy("the dog", ["the dog"] * 10) == 0.0  # nor stripped of its article


def test_vqa_accuracy_few_answers():
    # two different references, one matching: leave out "cat" -> 0, leave out "dog" -> 1/3
    assert vqa_accuracy("cat", ["cat", "dog"]) == pytest.approx(1 / 6)
    # identical pair: each subset holds one match
    assert vqa_accuracy("cat", ["cat", "cat"]) == pytest.approx(1 / 3)
    # red, blue, blue; prediction blue: (2/3 + 1/3 + 1/3) / 3
    assert vqa_accuracy("blue", ["red", "blue", "blue"]) == pytest.approx(4 / 9)


def test_vqa_accuracy_single_answer_is_normalised_exact_match():
    assert vqa_accuracy("The Dog.", ["dog"]) == 1.0
    assert vqa_accuracy("two", ["2"]) == 1.0
    assert vqa_accuracy("dogs", ["dog"]) == 0.0
    assert vqa_accuracy("", [""]) == 1.0


def test_vqa_accuracy_none_prediction():
    assert vqa_accuracy(None, tens("yes", 9, "no")) == 0.0
    assert vqa_accuracy(None, ["yes"]) == 0.0


def test_vqa_accuracy_empty_answers_raises():
    with pytest.raises(ValueError):
        vqa_accuracy("yes", [])


# ----------------------------------------------------------------------------------------------- ANLS

def test_anls_exact():
    assert anls("hello", ["hello"]) == 1.0


def test_anls_near_match():
    assert anls("hello wrld", ["hello world"]) == pytest.approx(1 - 1 / 11)


def test_anls_threshold_boundary():
    # 10 chars, 4 substitutions: NL 0.4 < 0.5 -> 0.6
    assert anls("abcdefXXXX", ["abcdefghij"]) == pytest.approx(0.6)
    # 5 substitutions: NL 0.5 is not below the threshold -> 0
    assert anls("abcdeXXXXX", ["abcdefghij"]) == 0.0
    assert anls("abcd", ["abxy"]) == 0.0
    assert anls("abcd", ["abxy"], threshold=0.6) == pytest.approx(0.5)


def test_anls_case_and_spacing():
    assert anls("  HeLLo  ", ["hello"]) == 1.0
    assert anls("hello \n  world", ["Hello World"]) == 1.0


def test_anls_best_reference():
    # "hello wrl": distance 1 over 10 -> 0.9; "hello world": 1 - 1/11 ~ 0.909 wins
    assert anls("hello wrld", ["xyz", "hello world", "hello wrl"]) == pytest.approx(1 - 1 / 11)
    assert anls("hello wrld", ["xyz", "hello wrl"]) == pytest.approx(0.9)


def test_anls_empty_strings():
    assert anls("", [""]) == 1.0
    assert anls("   ", [""]) == 1.0
    assert anls("", ["abc"]) == 0.0
    assert anls("abc", [""]) == 0.0
    assert anls(None, ["abc"]) == 0.0


def test_anls_empty_answers_raises():
    with pytest.raises(ValueError):
        anls("x", [])


# ----------------------------------------------------------------------------------------------- exact match

def test_exact_match():
    assert exact_match("The Dog.", ["dog"]) == 1.0
    assert exact_match("two", ["2"]) == 1.0
    assert exact_match("dont", ["don't"]) == 1.0
    assert exact_match("cats", ["cat"]) == 0.0
    assert exact_match("blue", ["red", "Blue!"]) == 1.0
    assert exact_match(None, ["x"]) == 0.0
    with pytest.raises(ValueError):
        exact_match("x", [])


# ----------------------------------------------------------------------------------------------- LAVE

def test_lave_score():
    assert lave_score(1) == 0.0
    assert lave_score(2) == 0.5
    assert lave_score(3) == 1.0


@pytest.mark.parametrize("rating", [0, 4, -1, 2.5, "3", None, True])
def test_lave_score_rejects(rating):
    with pytest.raises(ValueError):
        lave_score(rating)


def test_lave_agreement_hand_checked():
    nan = math.nan
    lave = [1.0, 0.5, 0.0, 1.0, nan, 0.0]
    other = [1.0, 1.0, 0.0, 0.3, 0.9, nan]
    # kept: lave [1, .5, 0, 1], other [1, 1, 0, .3]
    # correct: lave (rating 3) [T, F, F, T], other (>= .5) [T, T, F, F] -> agree on items 1 and 3 -> 0.5
    # ranks: lave [3.5, 2, 1, 3.5], other [3.5, 3.5, 1, 2]; centred dot 2.25, norms 4.5 -> rho 0.5
    out = lave_agreement(lave, other)
    assert out["n"] == 4
    assert out["agreement"] == pytest.approx(0.5)
    assert out["spearman"] == pytest.approx(0.5)
    assert "rating 3" in out["rule"]


def test_lave_agreement_threshold_and_order():
    out = lave_agreement([0.0, 0.5, 1.0], [0.1, 0.2, 0.3], threshold=0.25)
    assert out["agreement"] == pytest.approx(1.0)  # lave [F, F, T], other [F, F, T]
    assert out["spearman"] == pytest.approx(1.0)
    assert lave_agreement([0.0, 0.5, 1.0], [0.3, 0.2, 0.1])["spearman"] == pytest.approx(-1.0)


def test_lave_agreement_constant_and_small():
    out = lave_agreement([1.0, 1.0, 1.0], [0.2, 0.5, 0.9])
    assert out["n"] == 3
    assert out["agreement"] == pytest.approx(2 / 3)
    assert math.isnan(out["spearman"])
    one = lave_agreement([1.0, None], [1.0, 0.0])
    assert one["n"] == 1 and one["agreement"] == 1.0 and math.isnan(one["spearman"])
    empty = lave_agreement([], [])
    assert empty["n"] == 0 and math.isnan(empty["agreement"]) and math.isnan(empty["spearman"])


def test_lave_agreement_length_mismatch():
    with pytest.raises(ValueError):
        lave_agreement([1.0], [1.0, 0.0])
