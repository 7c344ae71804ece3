"""SimpleQA decides as the reference grader (openai/simple-evals simpleqa_eval.py) does (issue 29): the grader prompt
states and illustrates each of the reference's decisions (one constructed case per decision, the prompt sent for it
checked for that rule's example), judge replies are read to the grade the reference's rule gives (also a grade
first, explained below it), --limit draws a seeded sample as the reference does, and calibration is binned as the
SimpleQA write-up bins it (30 equal-count bins)."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from evaluator.benchmarks.simpleqa import CARD, data, grader, planning, prompts
from evaluator.benchmarks.simpleqa.grading import apply_grade, grade_answers, reply_problem
from evaluator.benchmarks.spec import PlanContext, ScoreContext
from evaluator.judge import JudgeResult, parse_simpleqa_grade
from evaluator.judge.judgement import ERROR, REFUSAL
from tests.benchmark_runs import run_benchmark
from tests.conftest import PROJECT
from tests.test_simpleqa import ScriptedJudge, ScriptedModel

REPLIES = Path(__file__).resolve().parent / "golden" / "simpleqa_judge_replies.json"
DECISIONS = json.loads(REPLIES.read_text(encoding="utf-8"))
BY_RULE = {d["rule"]: d for d in DECISIONS}


class ReplyingJudge:
    """Answers every conversation with the same reply, and keeps the prompts it was sent."""

    identity = {"kind": "scripted", "model": "replying-judge"}

    def __init__(self, reply: str | None):
        self.reply = reply
        self.sent: list[str] = []

    def complete_many(self, conversations, **generation):
        self.sent.extend(conversation[-1]["content"] for conversation in conversations)
        return [JudgeResult(text=self.reply, error=None, attempts=1) for _ in conversations]


def _grade(decision: dict, reply: str, style: str = "reason") -> tuple[dict, ReplyingJudge]:
    """One constructed case graded the way scoring grades it (grade_answers); the row and the judge."""
    question = {"question_id": "case", "problem": decision["question"], "answer": decision["gold"],
                "topic": "Other", "answer_type": "Other"}
    row = planning.new_row(question, "answer", 0, decision["question"])
    judge = ReplyingJudge(reply)
    grade_answers(ScoreContext(judge=judge), prompts.load_prompts(style)["simpleqa_grader"],
                  [(row, decision["answer"])])
    return row, judge


# --------------------------------------------------------------------------------------------- the rules

def test_the_fixture_holds_each_decision_of_the_reference_once():
    # the reference's explicit decisions, including the three it decides where our old rubric did not (a, b, c)
    assert {"partial_answer_is_incorrect", "hedged_complete_answer_is_correct",
            "gold_holding_more_than_asked_needs_only_the_part_asked", "numbers_to_the_gold_s_last_significant_figure",
            "a_vague_number_is_not_attempted", "small_name_typos_are_fine",
            "what_the_question_makes_obvious_may_be_left_out", "hedged_contradiction_is_incorrect",
            "list_with_a_wrong_item_is_incorrect", "several_candidates_are_incorrect",
            "partial_answer_that_admits_the_rest_is_not_attempted", "a_false_statement_is_incorrect",
            "declining_or_asking_for_context_is_not_attempted", "meaning_only_counts"} <= set(BY_RULE)
    assert len(BY_RULE) == len(DECISIONS)
    assert BY_RULE["partial_answer_is_incorrect"]["grade"] == "B"  # (a) "Malia." for "Malia and Sasha"
    assert BY_RULE["hedged_complete_answer_is_correct"]["grade"] == "A"  # (b)
    assert BY_RULE["gold_holding_more_than_asked_needs_only_the_part_asked"]["grade"] == "A"  # (c)


@pytest.mark.parametrize("rule", list(BY_RULE))
def test_the_prompt_sent_for_a_case_carries_its_rule_s_example(rule):
    decision = BY_RULE[rule]
    for style in prompts.GRADER_STYLES:
        _, judge = _grade(decision, decision["replies"][0], style)
        (sent,) = judge.sent
        assert decision["example_in_prompt"] in sent
        # the case itself is what is graded, after the examples
        assert sent.rsplit("Question: ", 1)[1].startswith(decision["question"])
        assert f"Predicted answer: {decision['answer']}\n" in sent


@pytest.mark.parametrize("rule", list(BY_RULE))
def test_recorded_replies_read_to_the_reference_s_grade(rule):
    decision = BY_RULE[rule]
    assert len(decision["replies"]) >= 3
    for reply in decision["replies"]:
        row, _ = _grade(decision, reply)
        assert (row["grade"], row["judge_error"]) == (decision["grade"], "")
        assert row["correct"] is (decision["grade"] == "A")


def test_the_prompt_is_our_own_wording():
    """None of the reference grader's example answers or phrases is in our prompt."""
    text = prompts.load_prompts()["simpleqa_grader"]
    for phrase in ("Obama", "Malia", "Gold target", "Grey's Anatomy", "White Wedding", "Hyung Won", "Transformer",
                   "OpenAI", "NAACL", "Jason Wei", "fully contain the important information"):
        assert phrase not in text


# --------------------------------------------------------------------------------------------- reading a reply

@pytest.mark.parametrize("reply, grade, rationale", [
    ("A\n\nThe answer names both moons.", "A", "The answer names both moons."),
    ("B\nReason: it adds a wrong moon.\n\nThe second moon is not Titan.", "B",
     "it adds a wrong moon.\n\nThe second moon is not Titan."),
    ("**C**\n\nIt only asks which planet.", "C", "It only asks which planet."),
    ("Reason: it names both moons.\nA", "A", "it names both moons."),
])
def test_a_grade_first_with_its_explanation_below_is_that_grade(reply, grade, rationale):
    row = planning.new_row({"question_id": "q", "problem": "Q?", "answer": "G", "topic": "", "answer_type": ""},
                           "answer", 0, "Q?")
    apply_grade(row, JudgeResult(text=reply, error=None, attempts=1))
    assert (row["grade"], row["judge_rationale"], row["judge_error"]) == (grade, rationale, "")
    verdict = grader.verdict(reply)
    assert verdict.label.startswith(grade) and verdict.rationale == rationale


@pytest.mark.parametrize("reply, problem", [
    ("A\nRate limit: 3 requests per second exceeded", ERROR),
    ("B\n\nError: the upstream model timed out", ERROR),
    ("A\n\nI'm sorry, but I can't help with grading this.", REFUSAL),
    ("Error 502\nA", ERROR),
])
def test_an_error_or_a_refusal_beside_a_grade_is_never_a_grade(reply, problem):
    assert reply_problem(reply) == problem
    row, _ = _grade(BY_RULE["partial_answer_is_incorrect"], reply)
    assert row["grade"] == "" and math.isnan(row["score"]) and row["judge_error"].startswith("not a judgement")
    assert grader.verdict(reply).score is None


@pytest.mark.parametrize("reply", ["Here is a short poem about the sea.", "A\nThe answer names both.\nB",
                                   "The answer names both.\nA\nbut maybe not", "Grade: D"])
def test_unrelated_text_or_two_grades_is_no_grade(reply):
    assert parse_simpleqa_grade(reply) is None
    row, _ = _grade(BY_RULE["partial_answer_is_incorrect"], reply)
    assert row["grade"] == "" and row["judge_error"] == "unparsable grade"


# --------------------------------------------------------------------------------------------- --limit

def test_limit_draws_the_same_seeded_questions_not_the_first_n():
    whole = data.load_questions(data.SAMPLE_PATH)
    first = planning.plan(PlanContext(suite="sample", limit=5))
    random.seed(12345)
    random.random()  # the global random state plays no part
    again = planning.plan(PlanContext(suite="sample", limit=5, options={"simpleqa.seed": "9",
                                                                         "simpleqa.confidence": "off"}))
    assert first.items == again.items and len(first.items) == 5
    assert first.items != [q["question_id"] for q in whole[:5]]
    positions = sorted(random.Random(planning.LIMIT_SEED).sample(range(len(whole)), 5))
    assert first.items == [whole[i]["question_id"] for i in positions]  # in suite order
    assert first.suite_items == len(whole)
    assert planning.plan(PlanContext(suite="sample", limit=len(whole) + 5)).items == [q["question_id"] for q in whole]


def test_limit_draws_the_questions_the_reference_draws():
    """The reference: random.Random(0).sample(examples, num_examples) over the file's rows."""
    examples = [{"question_id": f"simpleqa-{i:04d}", "problem": f"Q{i}?"} for i in range(4326)]
    for n in (1, 10, 200):
        reference = random.Random(0).sample(examples, n)
        ours = planning.limited(examples, n)
        assert {q["question_id"] for q in ours} == {q["question_id"] for q in reference}
        assert ours == sorted(ours, key=lambda q: q["question_id"])
    assert planning.LIMIT_SEED == 0


def test_the_limit_seed_is_documented():
    assert any("LIMIT_SEED" in d and "random.Random(0).sample" in d for d in CARD.differences)
    page = (PROJECT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert "LIMIT_SEED" in page


# --------------------------------------------------------------------------------------------- calibration

def test_a_run_bins_its_stated_confidence_in_30_quantile_bins(tmp_path):
    """60 questions, stated confidences 0.400, 0.405, ..., 0.695; questions 4b and 4b+1 right, 4b+2 and 4b+3
    wrong. 30 equal-count bins of 2: bin b is all right (b even) or all wrong, its mean confidence
    m_b = 0.40 + (4b + 1) / 400, so ECE = (sum over even b of (1 - m_b) + sum over odd b of m_b) / 30
    = (2745 + 3315) / 400 / 30 = 0.505. Over 10 equal-width bins each bin is half right: ECE 0.0825."""
    meta = "\"{'topic': 'Art', 'answer_type': 'Other', 'urls': []}\""
    rows = [f"{meta},Question {i}?,Gold {i}" for i in range(60)]
    path = tmp_path / "full.csv"
    path.write_text("metadata,problem,answer\n" + "\n".join(rows) + "\n", encoding="utf-8")
    right = lambda i: (i // 2) % 2 == 0  # noqa: E731
    confidence = {f"Question {i}?": json.dumps({"answer": f"{'right' if right(i) else 'wrong'} {i}",
                                                "confidence": round(40 + i / 2, 1)}) for i in range(60)}
    model = ScriptedModel({f"Question {i}?": "x" for i in range(60)}, confidence=confidence)
    verdicts = {f"{'right' if right(i) else 'wrong'} {i}": "A" if right(i) else "B" for i in range(60)}
    res = run_benchmark("simpleqa", model, suite="full", sources={"simpleqa": str(path)},
                        options={"simpleqa.confidence": "on", "simpleqa.frequency": "off"},
                        judge=ScriptedJudge(verdicts, default="C"))
    assert res.scores["ece"] == pytest.approx(0.505)
    assert res.extra["ece_equal_width"] == pytest.approx(0.0825)
    assert [p["n"] for p in res.extra["reliability"]] == [2] * 30
    assert [p["n"] for p in res.extra["reliability_equal_width"]] == [20] * 3
    assert res.extra["calibration_bins"] == {"quantile": 30, "equal_width": 10}
