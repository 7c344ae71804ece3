"""LAVE's judge playground mode (evaluator.benchmarks.lave.grader): the judge's messages, each verdict (with the
paper's fallback), and the questions it offers."""
from __future__ import annotations

import pytest

from evaluator.benchmarks.lave import CARD, grader
from evaluator.benchmarks.lave.rater import load_lave_prompts
from evaluator.benchmarks.spec import Grader, Verdict


def _prompt(question: str, gold: str, candidate: str) -> str:
    (message,) = grader.messages(question, gold, candidate)
    assert message["role"] == "user"
    return message["content"]


def test_the_card_carries_the_lave_grader():
    assert isinstance(CARD.grader, Grader) and CARD.grader is grader.GRADER
    assert CARD.grader.mode == "LAVE rating"
    assert CARD.grader.gold_label == "Reference answers (one per line)"
    assert CARD.grader.gold_field == "reference answers"
    assert CARD.grader.broken_label == "unrated: the judge's reply broke off"
    assert CARD.grader.help.startswith("**LAVE rating** (LLM-assisted VQA evaluation)")
    assert "**one per line**" in CARD.grader.help and "paper's fallback" in CARD.grader.help


def test_messages_for_a_general_question():
    prompts = load_lave_prompts()
    prompt = _prompt("How many circles are there?", "2\n two \n\n2\nthere are two circles", " two ")
    assert prompt.startswith(prompts.task)
    # the references: one per line, stripped, blank lines dropped, then sorted and single-quoted
    assert prompt.endswith("Question: 'How many circles are there?'\n"
                           "Reference answers: '2', '2', 'there are two circles', 'two'\n"
                           "Candidate answer: 'two'\nOutput:")
    assert prompt.count("Candidate answer: ") == 9  # 8 demonstrations, then the item
    assert all(demo["question"] in prompt for demo in prompts.demos[:8])
    assert prompts.demos[8]["question"] not in prompt
    assert not any(demo["question"] in prompt for demo in prompts.binary_demos)


def test_messages_for_a_yes_no_question():
    prompts = load_lave_prompts()
    prompt = _prompt(" Is it raining? ", "yes\nYes.\nno\nyes", "It is.")
    assert prompt.endswith("Question: 'Is it raining?'\n"
                           "Reference answers: 'Yes.', 'no', 'yes', 'yes'\nCandidate answer: 'It is.'\nOutput:")
    assert all(demo["question"] in prompt for demo in prompts.binary_demos[:8])
    assert not any(demo["question"] in prompt for demo in prompts.demos)


@pytest.mark.parametrize("reply, label, score, rationale", [
    ("Not what the experts said. So rating=1", "1 incorrect (score 0)", 0.0, "Not what the experts said."),
    ("Partly right. Rating: 2", "2 ambiguous or incomplete (score 0.5)", 0.5, "Partly right."),
    ("The candidate says two, matching the experts. So rating=3", "3 correct (score 1)", 1.0,
     "The candidate says two, matching the experts."),
    ("I am not sure what to say.", "2 (no rating in the judge's reply: the paper's fallback) (score 0.5)", 0.5,
     "I am not sure what to say."),
    ("3", "3 correct (score 1) (no rationale)", 1.0, ""),  # a bare rating counts, as the reference reads it
    ("So rating=1", "1 incorrect (score 0) (no rationale)", 0.0, ""),
])
def test_verdicts(reply, label, score, rationale):
    assert grader.verdict(reply) == Verdict(label=label, score=score, rationale=rationale)


def test_questions_are_always_the_sample_suite():
    for suite in ("sample", "full"):
        entries, note = grader.questions(suite, {"lave": "https://example.invalid/vqa.json"})
        assert len(entries) == 30 and len({e["question_id"] for e in entries}) == 30
        assert note == ("The LAVE sample suite (30 questions): the playground always uses the sample file shipped "
                        "with the project, whatever suite the leaderboard runs.")
    first = entries[0]
    assert {key: first[key] for key in ("question_id", "question", "gold")} == {
        "question_id": "lave-01", "question": "How many circles are there?",
        "gold": "2\n2\ntwo\n2\n2\nthere are two circles\n2\ntwo\n3\n2"}
    # each question carries its image reference, which the playground shows
    assert all(set(e) == {"question_id", "question", "gold", "image_ref"} and e["gold"].strip() and e["image_ref"]
               for e in entries)


def test_questions_when_the_sample_cannot_be_loaded(monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("LAVE item 3 of lave_sample.json: question is missing or empty")

    monkeypatch.setattr(grader, "load_vqa_file", broken)
    assert grader.questions("sample", {}) == (
        [], "The LAVE sample suite could not be loaded; type a question and its reference answers.")
