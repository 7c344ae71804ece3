"""SimpleQA loader (real file in ../shared/data when present), the sample suite, confidence parsing, answer
grouping, and the run() wiring with a scripted model and a scripted stand-in for the judge."""
from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from evaluator.benchmarks import get_benchmark, simpleqa
from evaluator.benchmarks.base import BenchmarkContext
from evaluator.judge import JudgeResult

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "simpleqa" / \
    "simple_qa_test_set.opendeepsearch_copy.csv"
needs_real = pytest.mark.skipif(
    not REAL.is_file(), reason=f"real SimpleQA data not found at {REAL} (tests read it from ../shared/data; not shipped)")

TOPICS = {"Science and technology": 858, "Politics": 709, "Art": 550, "Other": 475, "Geography": 424,
          "Sports": 368, "Music": 341, "TV shows": 293, "History": 173, "Video games": 135}


# --------------------------------------------------------------------------------------------- stand-ins

class ScriptedModel:
    """generate(): greedy answers by question text, confidence replies by question text, samples in turn."""

    def __init__(self, answers: dict[str, str], confidence: dict[str, str] | None = None,
                 samples: dict[str, list[str]] | None = None):
        self.answers = answers
        self.confidence = confidence or {}
        self.samples = samples or {}
        self.calls: list[list] = []
        self._next: Counter = Counter()

    def generate(self, requests):
        self.calls.append(list(requests))
        out = []
        for r in requests:
            if '"confidence"' in r.text:
                question = next(q for q in self.confidence if q in r.text)
                out.append(self.confidence[question])
            elif r.temperature > 0:
                assert r.seed is not None
                i = self._next[r.text]
                self._next[r.text] += 1
                out.append(self.samples[r.text][i % len(self.samples[r.text])])
            else:
                out.append(self.answers[r.text])
        return out


class ScriptedJudge:
    """Replies by the predicted answer found in the grader prompt: "A"/"B"/"C" -> a reason and the letter,
    "fail" -> a failed call, anything else -> that text as the raw reply (e.g. an unparsable one)."""

    identity = {"kind": "scripted", "model": "test-judge"}

    def __init__(self, verdicts: dict[str, str], default: str = "B"):
        self.verdicts = verdicts
        self.default = default
        self.seen: list[str] = []

    def complete_many(self, conversations, **generation):
        results = []
        for conv in conversations:
            assert len(conv) == 1 and conv[0]["role"] == "user"
            content = conv[0]["content"]
            predicted = content.rsplit("Predicted answer:", 1)[1].split("\n", 1)[0].strip()
            self.seen.append(predicted)
            verdict = self.verdicts.get(predicted, self.default)
            if verdict == "fail":
                results.append(JudgeResult(text=None, error="HTTP 503 after 4 attempts", attempts=4))
            elif verdict in ("A", "B", "C"):
                results.append(JudgeResult(text=f"Reason: scripted verdict for {predicted}.\n{verdict}",
                                           error=None, attempts=1))
            else:
                results.append(JudgeResult(text=verdict, error=None, attempts=1))
        return results


def _sample():
    return simpleqa.load_questions(simpleqa.SAMPLE_PATH)


def _ctx(limit: int, **options) -> BenchmarkContext:
    opts = {"simpleqa.confidence": "off", "simpleqa.frequency": "off"}
    opts.update({f"simpleqa.{k}": str(v) for k, v in options.items()})
    return BenchmarkContext(suite="sample", limit=limit, options=opts, batch_size=2)


# --------------------------------------------------------------------------------------------- loading

@needs_real
def test_real_file_loads():
    qs = simpleqa.load_questions(REAL)
    assert len(qs) == 4326
    assert Counter(q["topic"] for q in qs) == TOPICS
    assert set(q["answer_type"] for q in qs) == {"Person", "Number", "Date", "Place", "Other"}
    assert qs[42]["question_id"] == "simpleqa-0042" and qs[42]["index"] == 42
    assert len({q["question_id"] for q in qs}) == 4326
    assert all(q["problem"] and q["answer"] for q in qs)
    assert all(isinstance(q["urls"], list) for q in qs) and qs[0]["urls"][0].startswith("http")


def test_sample_suite_loads():
    qs = _sample()
    assert 25 <= len(qs) <= 40
    assert set(q["topic"] for q in qs) == set(TOPICS)
    assert set(q["answer_type"] for q in qs) == {"Person", "Number", "Date", "Place", "Other"}
    assert len({q["question_id"] for q in qs}) == len(qs)
    assert all(q["urls"] and q["problem"].endswith("?") and q["answer"] for q in qs)


def test_both_column_namings_and_errors():
    meta = "\"{'topic': 'Art', 'answer_type': 'Person', 'urls': ['https://example.org/a']}\""
    official = f"metadata,problem,answer\n{meta},Who drew the test card?,Ada Example\n"
    renamed = f"metadata,question,true_answer\n{meta},Who drew the test card?,Ada Example\n"
    for text in (official, renamed, "\ufeff" + official):
        (q,) = simpleqa.parse_csv(text)
        assert q == {"question_id": "simpleqa-0000", "index": 0, "problem": "Who drew the test card?",
                     "answer": "Ada Example", "topic": "Art", "answer_type": "Person",
                     "urls": ["https://example.org/a"]}
    with pytest.raises(ValueError, match="columns"):
        simpleqa.parse_csv("metadata,prompt,answer\n{},x,y\n")
    with pytest.raises(ValueError, match="row 0"):
        simpleqa.parse_csv("metadata,problem,answer\n\"{not python\",x,y\n")
    with pytest.raises(ValueError, match="row 1.*empty answer"):
        simpleqa.parse_csv(f"metadata,problem,answer\n{meta},x?,y\n{meta},z?,\n")
    with pytest.raises(FileNotFoundError):
        simpleqa.load_questions("/nonexistent/simpleqa.csv")


def test_registered():
    mod = get_benchmark("simpleqa")
    assert mod is simpleqa and mod.NAME == "simpleqa" and mod.NEEDS_IMAGES is False and mod.NEEDS_JUDGE is True


# --------------------------------------------------------------------------------------------- parsing

@pytest.mark.parametrize("text, answer, confidence", [
    ('{"answer": "Canberra", "confidence": 80}', "Canberra", 0.8),
    ('Sure! Here it is:\n```json\n{"answer": "1889", "confidence": "65%"}\n```', "1889", 0.65),
    ("{'answer': 'Mozart', 'confidence': 100}", "Mozart", 1.0),
    ('{"answer": "Bosch", "confidence": 0.35}', "Bosch", 0.35),
    ('{"Answer": "W", "Confidence": 0}', "W", 0.0),
    ("Answer: Runnymede\nConfidence: 90%", "Runnymede", 0.9),
    ("My best guess is Augustus. Confidence: 75", None, 0.75),
    ('{"answer": "Yen", "confidence": 250}', "Yen", None),
    ('{"answer": "Yen", "confidence": "very high"}', "Yen", None),
    ("I really could not say.", None, None),
    ("", None, None),
])
def test_parse_confidence(text, answer, confidence):
    got_answer, got_conf = simpleqa.parse_confidence(text)
    assert got_answer == answer
    if confidence is None:
        assert got_conf is None
    else:
        assert got_conf == pytest.approx(confidence)


def test_normalize_and_group():
    assert simpleqa.normalize_answer("The Amazon River.") == "amazon river"
    assert simpleqa.normalize_answer("  an   Apple, a day ") == "apple day"
    top, raw, share = simpleqa.most_frequent(["Canberra.", "Sydney", "the Canberra", "canberra", "Sydney"])
    assert (top, raw, share) == ("canberra", "Canberra.", pytest.approx(0.6))
    # Ties go to the answer seen first.
    assert simpleqa.most_frequent(["B", "A", "a", "b"])[:2] == ("b", "B")
    assert simpleqa.most_frequent([])[0] == "" and math.isnan(simpleqa.most_frequent([])[2])


def test_split_judge_reply():
    assert simpleqa.split_judge_reply("Reason: It names iron.\n\nA\n", "A") == "It names iron."
    assert simpleqa.split_judge_reply("no letter here", None) == "no letter here"
    assert simpleqa.split_judge_reply(None, None) == ""


def test_grader_prompt_is_filled_once():
    prompts = simpleqa.load_prompts()
    text = simpleqa.grader_prompt(prompts["simpleqa_grader"], "Q {gold}?", "G", "P")
    assert "Question: Q {gold}?" in text and "Reference answer: G" in text and text.count("Predicted answer: P") == 1
    assert "{question}" not in text and "{predicted}" not in text
    assert text.rstrip().endswith("A, B or C.")


# --------------------------------------------------------------------------------------------- running

def test_no_judge_is_a_clear_error_before_generating():
    model = ScriptedModel({})
    with pytest.raises(ValueError, match="SimpleQA needs a judge: set LEADERBOARD_JUDGE / --judge"):
        simpleqa.run(model, _ctx(2))
    assert model.calls == []


def _five():
    qs = _sample()[:5]
    preds = ["right answer", "wrong answer", "I don't know", "judge breaks", "judge mumbles"]
    model = ScriptedModel({q["problem"]: p for q, p in zip(qs, preds)})
    judge = ScriptedJudge({"right answer": "A", "wrong answer": "B", "I don't know": "C",
                           "judge breaks": "fail", "judge mumbles": "Reason: hmm.\nprobably fine"})
    return qs, model, judge


def test_run_scores_and_ungraded():
    qs, model, judge = _five()
    seen = []
    ctx = _ctx(5)
    ctx.judge = judge
    ctx.progress = lambda done, total: seen.append((done, total))
    res = simpleqa.run(model, ctx)
    # 3 graded (A, B, C); 2 ungraded (failed call, unparsable reply): left out, not counted as wrong.
    assert res.counts == {"items": 5, "graded": 3, "ungraded": 2, "unparsable_confidence": 0}
    assert res.scores["correct"] == pytest.approx(1 / 3)
    assert res.scores["incorrect"] == pytest.approx(1 / 3)
    assert res.scores["not_attempted"] == pytest.approx(1 / 3)
    assert res.scores["correct_given_attempted"] == pytest.approx(0.5)
    assert res.scores["f_score"] == pytest.approx(0.4)  # 2 * (1/3) * (1/2) / (1/3 + 1/2)
    assert "ece" not in res.scores
    assert res.extra["calibration"] == {"confidence": False, "frequency": False}
    assert res.extra["judge"] == ScriptedJudge.identity
    assert set(res.prompts) == {"simpleqa_grader"}
    assert seen[-1] == (5, 5)
    rows = res.details
    assert [r["part"] for r in rows] == ["answer"] * 5
    assert [r["grade"] for r in rows] == ["A", "B", "C", "", ""]
    assert [r["correct"] for r in rows] == [True, False, False, False, False]
    assert rows[0]["score"] == 1.0 and rows[1]["score"] == 0.0 and rows[2]["score"] == 0.0
    assert math.isnan(rows[3]["score"]) and math.isnan(rows[4]["score"])
    assert rows[3]["judge_error"] == "HTTP 503 after 4 attempts" and rows[3]["judge_raw"] == ""
    assert rows[4]["judge_error"] == "unparsable grade" and rows[4]["judge_raw"].endswith("probably fine")
    assert rows[0]["judge_rationale"] == "scripted verdict for right answer."
    assert rows[0]["judge_raw"] == "Reason: scripted verdict for right answer.\nA"
    assert rows[0]["prompt"] == qs[0]["problem"] and rows[0]["gold"] == qs[0]["answer"]
    assert rows[0]["question_id"] == "simpleqa-0000" and rows[0]["topic"] == qs[0]["topic"]
    # The model got the bare question, greedy, with the default token budget, in chunks of batch_size.
    requests = [r for call in model.calls for r in call]
    assert [len(call) for call in model.calls] == [2, 2, 1]
    assert all(r.temperature == 0 and r.max_new_tokens == 48 and not r.images for r in requests)
    assert [r.text for r in requests] == [q["problem"] for q in qs]
    # Breakdowns count ungraded items too.
    topic = qs[0]["topic"]
    assert res.extra["by_topic"][topic]["n"] + res.extra["by_topic"][topic]["ungraded"] == \
        sum(1 for q in qs if q["topic"] == topic)
    assert sum(v["n"] for v in res.extra["by_answer_type"].values()) == 3


def test_batch_size_does_not_change_results():
    outs = []
    for batch in (1, 4):
        _, model, judge = _five()
        ctx = _ctx(5)
        ctx.batch_size = batch
        ctx.judge = judge
        res = simpleqa.run(model, ctx)
        outs.append([(r["question_id"], r["grade"], r["prediction"]) for r in res.details])
    assert outs[0] == outs[1]


def _five_ctx(**options):
    _, model, judge = _five()
    ctx = _ctx(5, **options)
    ctx.judge = judge
    return model, ctx


def test_max_new_tokens_option():
    model, ctx = _five_ctx(max_new_tokens=7)
    simpleqa.run(model, ctx)
    assert {r.max_new_tokens for call in model.calls for r in call} == {7}
    model, ctx = _five_ctx(confidence="maybe")
    with pytest.raises(ValueError, match="simpleqa.confidence"):
        simpleqa.run(model, ctx)


def test_grader_style_reason_or_letter_alone():
    reason = simpleqa.load_prompts()["simpleqa_grader"]
    letter = simpleqa.load_prompts(grader_style="letter")["simpleqa_grader"]
    assert "{answer_format}" not in reason and "{answer_format}" not in letter
    assert 'starting with "Reason:"' in reason and "letter of the grade only" not in reason
    assert "letter of the grade only" in letter and 'starting with "Reason:"' not in letter
    with pytest.raises(ValueError, match="simpleqa.grader"):
        simpleqa.load_prompts(grader_style="essay")

    model, ctx = _five_ctx(grader="letter")
    prompts_sent = []
    original = ctx.judge.complete_many
    ctx.judge.complete_many = lambda conversations, **g: (prompts_sent.extend(c[0]["content"] for c in conversations),
                                                           original(conversations, **g))[1]
    res = simpleqa.run(model, ctx)
    assert prompts_sent and all("letter of the grade only" in p for p in prompts_sent)
    assert res.prompts["simpleqa_grader"] == letter and res.counts["graded"] == 3


def test_confidence_calibration():
    qs = _sample()[:4]
    answers = {q["problem"]: "x" for q in qs}
    conf = {
        qs[0]["problem"]: '{"answer": "good one", "confidence": 90}',
        qs[1]["problem"]: 'Here you go: {"answer": "bad one", "confidence": 90}',
        qs[2]["problem"]: "Answer: good two\nConfidence: 30%",
        qs[3]["problem"]: '{"answer": "good three"} I have no idea how sure I am.',
    }
    model = ScriptedModel(answers, confidence=conf)
    judge = ScriptedJudge({"good one": "A", "good two": "A", "good three": "A", "bad one": "B", "x": "B"})
    ctx = _ctx(4, confidence="on")
    ctx.judge = judge
    res = simpleqa.run(model, ctx)
    assert res.extra["calibration"] == {"confidence": True, "frequency": False}
    assert res.counts["unparsable_confidence"] == 1
    assert set(res.prompts) == {"simpleqa_grader", "simpleqa_confidence"}
    rows = [r for r in res.details if r["part"] == "confidence"]
    assert [r["parsed_answer"] for r in rows] == ["good one", "bad one", "good two", "good three"]
    assert [r["grade"] for r in rows] == ["A", "B", "A", "A"]
    assert rows[0]["confidence"] == pytest.approx(0.9) and math.isnan(rows[3]["confidence"])
    assert "good three" in judge.seen  # graded even though its confidence was unreadable
    # ECE over the 3 usable items: bin 0.9 -> acc 0.5 vs 0.9 (n=2); bin 0.3 -> acc 1 vs 0.3 (n=1).
    assert res.scores["ece"] == pytest.approx((2 * 0.4 + 1 * 0.7) / 3)
    assert [(p["bin_low"], p["n"]) for p in res.extra["reliability"]] == [(0.3, 1), (0.9, 2)]
    # The main scores come from the bare answers only.
    assert res.scores["correct"] == 0.0 and res.scores["incorrect"] == 1.0
    # The confidence prompt carries the question; answer rows come first for each question.
    assert [r["part"] for r in res.details[:2]] == ["answer", "confidence"]
    assert qs[0]["problem"] in rows[0]["prompt"]


def test_frequency_calibration():
    qs = _sample()[:2]
    model = ScriptedModel(
        {q["problem"]: "x" for q in qs},
        samples={qs[0]["problem"]: ["Röntgen.", "Wilhelm Röntgen", "the röntgen", "Einstein", "röntgen"],
                 qs[1]["problem"]: ["206", "208", "212", "206 bones", "200"]})
    judge = ScriptedJudge({"Röntgen.": "A", "206": "A", "x": "C"})
    ctx = _ctx(2, frequency="on", samples=5)
    ctx.judge = judge
    res = simpleqa.run(model, ctx)
    assert res.extra["calibration"] == {"confidence": False, "frequency": True}
    parts = [r["part"] for r in res.details if r["question_id"] == "simpleqa-0000"]
    assert parts == ["answer", "sample1", "sample2", "sample3", "sample4", "sample5", "frequency"]
    freq = [r for r in res.details if r["part"] == "frequency"]
    assert [r["parsed_answer"] for r in freq] == ["röntgen", "206"]
    assert [r["prediction"] for r in freq] == ["Röntgen.", "206"]
    assert [r["confidence"] for r in freq] == [pytest.approx(0.6), pytest.approx(0.2)]
    assert [r["grade"] for r in freq] == ["A", "A"]
    samples = [r for r in res.details if r["part"].startswith("sample")]
    assert all(r["grade"] == "" and math.isnan(r["score"]) for r in samples)
    assert [r["repeat"] for r in samples[:5]] == [1, 2, 3, 4, 5]
    assert samples[0]["parsed_answer"] == "röntgen"
    # Samples: temperature 1, one seed per question (different questions, different seeds).
    sampled = [r for call in model.calls for r in call if r.temperature > 0]
    assert len(sampled) == 10 and {r.temperature for r in sampled} == {1.0}
    assert len({r.seed for r in sampled if r.text == qs[0]["problem"]}) == 1
    assert len({r.seed for r in sampled}) == 2
    pts = res.extra["frequency"]
    assert [(p["bin_low"], p["accuracy"], p["n"]) for p in pts] == [(0.2, 1.0, 1), (0.6, 1.0, 1)]
    assert res.scores["not_attempted"] == 1.0


def test_details_columns_are_uniform_and_sample_suite_defaults():
    qs = _sample()[:3]
    model = ScriptedModel({q["problem"]: "x" for q in qs},
                          confidence={q["problem"]: '{"answer": "x", "confidence": 50}' for q in qs},
                          samples={q["problem"]: ["x"] for q in qs})
    ctx = BenchmarkContext(suite="sample", limit=3, batch_size=2, judge=ScriptedJudge({}, default="C"))
    res = simpleqa.run(model, ctx)  # sample suite: both calibrations on by default
    assert res.extra["calibration"] == {"confidence": True, "frequency": True}
    assert len(res.details) == 3 * (1 + 1 + 5 + 1)
    for row in res.details:
        assert tuple(row) == simpleqa.DETAIL_COLUMNS
        assert row["benchmark"] == "simpleqa"
        assert isinstance(row["confidence"], float) and isinstance(row["score"], float)
        assert isinstance(row["correct"], bool) and isinstance(row["grade"], str)
    assert {r["extraction"] for r in res.details if r["part"] in ("answer", "confidence", "frequency")} == {"judge"}
    assert set(res.scores) == {"correct", "incorrect", "not_attempted", "correct_given_attempted", "f_score", "ece"}
    assert math.isnan(res.scores["ece"]) is False
    assert res.counts["items"] == 3


def test_full_suite_defaults_to_no_calibration(tmp_path):
    meta = "\"{'topic': 'Art', 'answer_type': 'Person', 'urls': []}\""
    path = tmp_path / "full.csv"
    path.write_text(f"metadata,question,true_answer\n{meta},Who?,Nobody\n", encoding="utf-8")
    model = ScriptedModel({"Who?": "Nobody"})
    ctx = BenchmarkContext(suite="full", sources={"simpleqa": str(path)}, judge=ScriptedJudge({"Nobody": "A"}))
    res = simpleqa.run(model, ctx)
    assert res.extra["calibration"] == {"confidence": False, "frequency": False}
    assert res.scores["correct"] == 1.0 and res.scores["f_score"] == 1.0


def test_full_suite_calibration_follows_the_cost_limit():
    full = lambda **o: BenchmarkContext(suite="full", options={f"simpleqa.{k}": str(v) for k, v in o.items()})
    assert simpleqa.calibration_defaults(full(), 5) == (False, False)  # 2x and 6x exceed the default 1.5x
    assert simpleqa.calibration_defaults(full(max_cost=2), 5) == (True, False)
    assert simpleqa.calibration_defaults(full(max_cost=6), 5) == (True, True)
    assert simpleqa.calibration_defaults(full(max_cost=6, frequency="off"), 5) == (True, False)
    assert simpleqa.calibration_defaults(full(confidence="on"), 5) == (True, False)
    sample = BenchmarkContext(suite="sample")
    assert simpleqa.calibration_defaults(sample, 5) == (True, True)
    with pytest.raises(ValueError, match="simpleqa.max_cost"):
        simpleqa.calibration_defaults(full(max_cost="lots"), 5)
