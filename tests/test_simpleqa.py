"""SimpleQA as a package: the loader (real file in ../shared/data when present), the sample suite, confidence
parsing, answer grouping, the plan, scoring with a scripted model and a scripted stand-in for the judge (run the
way the runner does, tests.benchmark_runs), scoring stored details again, the card and the playground's grader."""
from __future__ import annotations

import logging
import math
from collections import Counter
from pathlib import Path

import pytest

from evaluator.benchmarks import card_problems, get_benchmark
from evaluator.benchmarks.seeds import item_seed
from evaluator.benchmarks.simpleqa import CARD, plan, score
from evaluator.benchmarks.simpleqa import answers, data, grader, planning, prompts
from evaluator.benchmarks.simpleqa import options as simpleqa_options
from evaluator.benchmarks.simpleqa.views import calibration_figure
from evaluator.benchmarks.spec import COUNT, PlanContext, ScoreContext
from evaluator.judge import JudgeResult
from evaluator.runs.details import read_details, write_details
from tests.benchmark_runs import run_benchmark

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
    return data.load_questions(data.SAMPLE_PATH)


def _limited(n: int) -> list[dict]:
    """The sample suite's questions that a run with limit n runs: a seeded draw (planning.limited), not the first n."""
    return planning.limited(_sample(), n)


def _options(**options) -> dict[str, str]:
    opts = {"simpleqa.confidence": "off", "simpleqa.frequency": "off"}
    opts.update({f"simpleqa.{k}": str(v) for k, v in options.items()})
    return opts


def _run(model, judge, limit: int, batch_size: int = 2, progress=None, **options):
    return run_benchmark("simpleqa", model, limit=limit, options=_options(**options), judge=judge,
                         batch_size=batch_size, progress=progress)


# --------------------------------------------------------------------------------------------- loading

@needs_real
def test_real_file_loads():
    qs = data.load_questions(REAL)
    assert len(qs) == 4326
    assert Counter(q["topic"] for q in qs) == TOPICS
    assert set(q["answer_type"] for q in qs) == {"Person", "Number", "Date", "Place", "Other"}
    assert qs[42]["question_id"] == "simpleqa-0042" and qs[42]["index"] == 42
    assert len({q["question_id"] for q in qs}) == 4326
    assert all(q["problem"] and q["answer"] for q in qs)
    assert all(isinstance(q["urls"], list) for q in qs) and qs[0]["urls"][0].startswith("http")


def test_sample_suite_loads():
    qs = _sample()
    assert data.SAMPLE_PATH.parent.name == "sample" and data.SAMPLE_PATH.name == "simpleqa_sample.csv"
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
        (q,) = data.parse_csv(text)
        assert q == {"question_id": "simpleqa-0000", "index": 0, "problem": "Who drew the test card?",
                     "answer": "Ada Example", "topic": "Art", "answer_type": "Person",
                     "urls": ["https://example.org/a"]}
    with pytest.raises(ValueError, match="columns"):
        data.parse_csv("metadata,prompt,answer\n{},x,y\n")
    with pytest.raises(ValueError, match="row 0"):
        data.parse_csv("metadata,problem,answer\n\"{not python\",x,y\n")
    with pytest.raises(ValueError, match="row 1.*empty answer"):
        data.parse_csv(f"metadata,problem,answer\n{meta},x?,y\n{meta},z?,\n")
    with pytest.raises(FileNotFoundError):
        data.load_questions("/nonexistent/simpleqa.csv")


def test_registered():
    mod = get_benchmark("simpleqa")
    assert mod.CARD is CARD and mod.plan is plan and mod.score is score
    assert CARD.name == "simpleqa" and CARD.needs_images is False and CARD.needs_judge is True


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
    # one rule for numbers and texts: 1.0 and "1.0" are both the 0-1 scale, 1 and "1" both 1 %
    ('{"answer": "Yen", "confidence": 1.0}', "Yen", 1.0),
    ('{"answer": "Yen", "confidence": "1.0"}', "Yen", 1.0),
    ('{"answer": "Yen", "confidence": 1}', "Yen", 0.01),
    ('{"answer": "Yen", "confidence": "1"}', "Yen", 0.01),
    ('{"answer": "Yen", "confidence": "0.5%"}', "Yen", 0.005),
    ('{"answer": "Yen", "confidence_score": 0.8}', "Yen", 0.8),
    ("Answer: Yen\nConfidence: 1.0", "Yen", 1.0),
    ('{"answer": "Yen", "confidence": -0.5}', "Yen", None),
    ('{"answer": "Yen", "confidence": "very high"}', "Yen", None),
    ("I really could not say.", None, None),
    ("", None, None),
])
def test_parse_confidence(text, answer, confidence):
    got_answer, got_conf = answers.parse_confidence(text)
    assert got_answer == answer
    if confidence is None:
        assert got_conf is None
    else:
        assert got_conf == pytest.approx(confidence)


def test_normalize_and_group():
    assert answers.normalize_answer("The Amazon River.") == "amazon river"
    assert answers.normalize_answer("  an   Apple, a day ") == "apple day"
    top, raw, share = answers.most_frequent(["Canberra.", "Sydney", "the Canberra", "canberra", "Sydney"])
    assert (top, raw, share) == ("canberra", "Canberra.", pytest.approx(0.6))
    # Ties go to the answer seen first.
    assert answers.most_frequent(["B", "A", "a", "b"])[:2] == ("b", "B")
    assert answers.most_frequent([])[0] == "" and math.isnan(answers.most_frequent([])[2])


def test_split_judge_reply():
    assert answers.split_judge_reply("Reason: It names iron.\n\nA\n", "A") == "It names iron."
    assert answers.split_judge_reply("no letter here", None) == "no letter here"
    assert answers.split_judge_reply(None, None) == ""


def test_grader_prompt_is_filled_once():
    texts = prompts.load_prompts()
    text = prompts.grader_prompt(texts["simpleqa_grader"], "Q {gold}?", "G", "P")
    assert "Question: Q {gold}?" in text and "Reference answer: G" in text and text.count("Predicted answer: P") == 1
    assert "{question}" not in text and "{predicted}" not in text
    assert text.rstrip().endswith("A, B or C.")


# --------------------------------------------------------------------------------------------- planning

def test_plan_has_one_ask_per_request_in_the_old_order():
    qs = _limited(2)
    got = plan(PlanContext(suite="sample", limit=2, options={"simpleqa.samples": "3", "simpleqa.seed": "7"}))
    assert got.items == [q["question_id"] for q in qs]
    assert [a.item for a in got.asks] == [qs[0]["question_id"]] * 5 + [qs[1]["question_id"]] * 5
    assert [a.rows[0]["part"] for a in got.asks[:5]] == ["answer", "confidence", "sample1", "sample2", "sample3"]
    assert [a.rows[0] for a in got.asks] == got.rows  # one row per request, stored in request order
    answer, conf, *samples = [a.request for a in got.asks[:5]]
    budget = simpleqa_options.DEFAULT_MAX_NEW_TOKENS
    assert budget >= 256  # a verbose chat answer fits
    assert (answer.text, answer.max_new_tokens, answer.temperature, answer.seed) == (qs[0]["problem"], budget, 0.0,
                                                                                      None)
    assert qs[0]["problem"] in conf.text and conf.max_new_tokens == 96 and conf.temperature == 0.0
    assert {(s.text, s.temperature, s.max_new_tokens) for s in samples} == {(qs[0]["problem"], 1.0, budget)}
    # one seed per sample: from the base seed, the question and the sample's number
    assert [s.seed for s in samples] == [item_seed("simpleqa", 7, qs[0]["question_id"], j) for j in (1, 2, 3)]
    seeds = [a.request.seed for a in got.asks if a.request.temperature > 0]
    assert len(seeds) == 6 and len(set(seeds)) == 6
    again = plan(PlanContext(suite="sample", limit=2, options={"simpleqa.samples": "3", "simpleqa.seed": "7"}))
    assert [a.request.seed for a in again.asks if a.request.temperature > 0] == seeds  # the same in every run
    other = plan(PlanContext(suite="sample", limit=2, options={"simpleqa.samples": "3", "simpleqa.seed": "8"}))
    assert not set(seeds) & {a.request.seed for a in other.asks if a.request.temperature > 0}
    assert all(a.options is None and a.images is None for a in got.asks)
    assert set(got.prompts) == {"simpleqa_confidence"}
    assert got.prompts["simpleqa_confidence"] == prompts.load_prompts()["simpleqa_confidence"]
    assert all(tuple(row) == planning.DETAIL_COLUMNS and row["question"] == qs[0]["problem"] for row in got.rows[:5])
    assert not any(row["part"] == "frequency" for row in got.rows)  # derived when scoring
    plain = plan(PlanContext(suite="sample", limit=2, options=_options()))
    assert [a.rows[0]["part"] for a in plain.asks] == ["answer", "answer"] and plain.prompts == {}


def test_bad_options_fail_when_planning_before_any_model_call():
    for options in ({"simpleqa.confidence": "maybe"}, {"simpleqa.grader": "essay"}, {"simpleqa.samples": "0"},
                    {"simpleqa.judge_max_tokens": "0"}):
        with pytest.raises(ValueError, match=next(iter(options))):
            plan(PlanContext(suite="sample", limit=1, options=options))
    assert simpleqa_options.read_settings("sample", {"simpleqa.grader": " Letter "}).grader_style == "letter"


# --------------------------------------------------------------------------------------------- running

def test_no_judge_is_a_clear_error():
    # Changed on purpose: the judge is needed by score(), not by plan(), so in-process the model answers first and
    # scoring refuses; a real run refuses before the model loads (the runner's make_run_judge).
    model = ScriptedModel({q["problem"]: "x" for q in _limited(2)})
    with pytest.raises(ValueError, match="SimpleQA needs a judge: set LEADERBOARD_JUDGE / --judge"):
        _run(model, None, 2)
    with pytest.raises(ValueError, match="SimpleQA needs a judge: set LEADERBOARD_JUDGE / --judge"):
        score([], ScoreContext(suite="sample", options=_options()))
    from evaluator.runs.runner import make_run_judge

    with pytest.raises(ValueError, match="simpleqa needs a judge"):
        make_run_judge("", [get_benchmark("simpleqa")])


def _five():
    qs = _limited(5)
    preds = ["right answer", "wrong answer", "I don't know", "judge breaks", "judge mumbles"]
    model = ScriptedModel({q["problem"]: p for q, p in zip(qs, preds)})
    judge = ScriptedJudge({"right answer": "A", "wrong answer": "B", "I don't know": "C",
                           "judge breaks": "fail", "judge mumbles": "Reason: hmm.\nprobably fine"})
    return qs, model, judge


def test_run_scores_and_ungraded():
    qs, model, judge = _five()
    seen = []
    res = _run(model, judge, 5, progress=lambda done, total: seen.append((done, total)))
    # 3 graded (A, B, C); 2 ungraded (failed call, unparsable reply): left out, not counted as wrong.
    assert res.counts == {"items": 5, "scored": 3, "graded": 3, "ungraded": 2, "unparsable_confidence": 0,
                          "hit_token_limit": 0}  # this model does not say how a reply ended
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
    rows = res.rows
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
    assert rows[0]["question"] == qs[0]["problem"]
    assert rows[0]["question_id"] == qs[0]["question_id"] and rows[0]["topic"] == qs[0]["topic"]
    # The model got the bare question, greedy, with the default token budget, in chunks of batch_size.
    requests = [r for call in model.calls for r in call]
    assert [len(call) for call in model.calls] == [2, 2, 1]
    assert all(r.temperature == 0 and r.max_new_tokens == simpleqa_options.DEFAULT_MAX_NEW_TOKENS and not r.images
               for r in requests)
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
        res = _run(model, judge, 5, batch_size=batch)
        outs.append([(r["question_id"], r["grade"], r["prediction"]) for r in res.rows])
    assert outs[0] == outs[1]


def test_max_new_tokens_option():
    _, model, judge = _five()
    _run(model, judge, 5, max_new_tokens=7)
    assert {r.max_new_tokens for call in model.calls for r in call} == {7}
    _, model, judge = _five()
    with pytest.raises(ValueError, match="simpleqa.confidence"):
        _run(model, judge, 5, confidence="maybe")
    assert model.calls == []  # refused when planning, before any generation


def test_judge_max_tokens_option_reaches_the_judge():
    _, model, judge = _five()
    generations = []
    original = judge.complete_many
    judge.complete_many = lambda conversations, **g: (generations.append(g), original(conversations, **g))[1]
    _run(model, judge, 5, judge_max_tokens=64)
    assert generations and all(g == {"max_tokens": 64} for g in generations)
    _, model, judge = _five()
    generations.clear()
    original = judge.complete_many
    judge.complete_many = lambda conversations, **g: (generations.append(g), original(conversations, **g))[1]
    _run(model, judge, 5)
    assert generations and all(g == {} for g in generations)


def test_grader_style_reason_or_letter_alone():
    reason = prompts.load_prompts()["simpleqa_grader"]
    letter = prompts.load_prompts(grader_style="letter")["simpleqa_grader"]
    assert "{answer_format}" not in reason and "{answer_format}" not in letter
    assert 'starting with "Reason:"' in reason and "letter of the grade only" not in reason
    assert "letter of the grade only" in letter and 'starting with "Reason:"' not in letter
    with pytest.raises(ValueError, match="simpleqa.grader"):
        prompts.load_prompts(grader_style="essay")

    _, model, judge = _five()
    prompts_sent = []
    original = judge.complete_many
    judge.complete_many = lambda conversations, **g: (prompts_sent.extend(c[0]["content"] for c in conversations),
                                                      original(conversations, **g))[1]
    res = _run(model, judge, 5, grader="letter")
    assert prompts_sent and all("letter of the grade only" in p for p in prompts_sent)
    assert res.prompts["simpleqa_grader"] == letter and res.counts["graded"] == 3


def test_confidence_calibration():
    qs = _limited(4)
    conf = {
        qs[0]["problem"]: '{"answer": "good one", "confidence": 90}',
        qs[1]["problem"]: 'Here you go: {"answer": "bad one", "confidence": 90}',
        qs[2]["problem"]: "Answer: good two\nConfidence: 30%",
        qs[3]["problem"]: '{"answer": "good three"} I have no idea how sure I am.',
    }
    model = ScriptedModel({q["problem"]: "x" for q in qs}, confidence=conf)
    judge = ScriptedJudge({"good one": "A", "good two": "A", "good three": "A", "bad one": "B", "x": "B"})
    res = _run(model, judge, 4, confidence="on")
    assert res.extra["calibration"] == {"confidence": True, "frequency": False}
    assert res.counts["unparsable_confidence"] == 1
    assert set(res.prompts) == {"simpleqa_grader", "simpleqa_confidence"}
    rows = [r for r in res.rows if r["part"] == "confidence"]
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
    assert [r["part"] for r in res.rows[:2]] == ["answer", "confidence"]
    assert qs[0]["problem"] in rows[0]["prompt"] and rows[0]["question"] == qs[0]["problem"]


def test_frequency_calibration():
    qs = _limited(2)
    model = ScriptedModel(
        {q["problem"]: "x" for q in qs},
        samples={qs[0]["problem"]: ["Röntgen.", "Wilhelm Röntgen", "the röntgen", "Einstein", "röntgen"],
                 qs[1]["problem"]: ["206", "208", "212", "206 bones", "200"]})
    judge = ScriptedJudge({"Röntgen.": "A", "206": "A", "x": "C"})
    res = _run(model, judge, 2, frequency="on", samples=5)
    assert res.extra["calibration"] == {"confidence": False, "frequency": True}
    parts = [r["part"] for r in res.rows if r["question_id"] == qs[0]["question_id"]]
    assert parts == ["answer", "sample1", "sample2", "sample3", "sample4", "sample5", "frequency"]
    freq = [r for r in res.rows if r["part"] == "frequency"]
    assert [r["parsed_answer"] for r in freq] == ["röntgen", "206"]
    assert [r["prediction"] for r in freq] == ["Röntgen.", "206"]
    assert [r["confidence"] for r in freq] == [pytest.approx(0.6), pytest.approx(0.2)]
    assert [r["grade"] for r in freq] == ["A", "A"]
    assert all(r["extraction"] == "judge" and r["repeat"] == 0 for r in freq)
    samples = [r for r in res.rows if r["part"].startswith("sample")]
    assert all(r["grade"] == "" and math.isnan(r["score"]) for r in samples)
    assert [r["repeat"] for r in samples[:5]] == [1, 2, 3, 4, 5]
    assert samples[0]["parsed_answer"] == "röntgen"
    # Samples: temperature 1, one seed per sample (10 samples, 10 seeds).
    sampled = [r for call in model.calls for r in call if r.temperature > 0]
    assert len(sampled) == 10 and {r.temperature for r in sampled} == {1.0}
    assert len({r.seed for r in sampled}) == 10
    pts = res.extra["frequency"]
    assert [(p["bin_low"], p["accuracy"], p["n"]) for p in pts] == [(0.2, 1.0, 1), (0.6, 1.0, 1)]
    assert res.scores["not_attempted"] == 1.0


def test_details_columns_are_uniform_and_sample_suite_defaults():
    qs = _limited(3)
    model = ScriptedModel({q["problem"]: "x" for q in qs},
                          confidence={q["problem"]: '{"answer": "x", "confidence": 50}' for q in qs},
                          samples={q["problem"]: ["x"] for q in qs})
    res = run_benchmark("simpleqa", model, limit=3, batch_size=2, judge=ScriptedJudge({}, default="C"))
    assert res.extra["calibration"] == {"confidence": True, "frequency": True}  # sample suite: both on by default
    assert len(res.rows) == 3 * (1 + 1 + 5 + 1)
    for row in res.rows:  # changed on purpose: a "question" column (the bare question) joins the old ones
        assert tuple(row) == planning.DETAIL_COLUMNS
        assert row["benchmark"] == "simpleqa"
        assert isinstance(row["confidence"], float) and isinstance(row["score"], float)
        assert isinstance(row["correct"], bool) and isinstance(row["grade"], str)
    assert {r["extraction"] for r in res.rows if r["part"] in ("answer", "confidence", "frequency")} == {"judge"}
    assert set(res.scores) == {"correct", "incorrect", "not_attempted", "correct_given_attempted", "f_score", "ece"}
    assert math.isnan(res.scores["ece"]) is False
    assert res.counts["items"] == 3
    assert res.extra["settings"]["source"] == str(data.SAMPLE_PATH)


def test_full_suite_defaults_to_no_calibration(tmp_path):
    meta = "\"{'topic': 'Art', 'answer_type': 'Person', 'urls': []}\""
    path = tmp_path / "full.csv"
    path.write_text(f"metadata,question,true_answer\n{meta},Who?,Nobody\n", encoding="utf-8")
    model = ScriptedModel({"Who?": "Nobody"})
    res = run_benchmark("simpleqa", model, suite="full", sources={"simpleqa": str(path)},
                        judge=ScriptedJudge({"Nobody": "A"}))
    assert res.extra["calibration"] == {"confidence": False, "frequency": False}
    assert res.scores["correct"] == 1.0 and res.scores["f_score"] == 1.0
    assert res.extra["settings"]["source"] == str(path)


def test_full_suite_calibration_follows_the_cost_limit():
    full = lambda **o: {f"simpleqa.{k}": str(v) for k, v in o.items()}  # noqa: E731
    assert simpleqa_options.calibration_defaults("full", full(), 5) == (False, False)  # 2x and 6x exceed the default 1.5x
    assert simpleqa_options.calibration_defaults("full", full(max_cost=2), 5) == (True, False)
    assert simpleqa_options.calibration_defaults("full", full(max_cost=6), 5) == (True, True)
    assert simpleqa_options.calibration_defaults("full", full(max_cost=6, frequency="off"), 5) == (True, False)
    assert simpleqa_options.calibration_defaults("full", full(confidence="on"), 5) == (True, False)
    assert simpleqa_options.calibration_defaults("sample", {}, 5) == (True, True)
    with pytest.raises(ValueError, match="simpleqa.max_cost"):
        simpleqa_options.calibration_defaults("full", full(max_cost="lots"), 5)
    # plan and score decide with the same function: the full suite within max_cost runs both
    both = simpleqa_options.read_settings("full", full(max_cost=6))
    assert (both.confidence, both.frequency) == (True, True)


# --------------------------------------------------------------------------------------------- scoring again

def _calibrated_run(tmp_path, judge):
    qs = _limited(3)
    model = ScriptedModel({q["problem"]: "x" for q in qs},
                          confidence={q["problem"]: '{"answer": "y", "confidence": 70}' for q in qs},
                          samples={q["problem"]: ["x", "y", "x"] for q in qs})
    return run_benchmark("simpleqa", model, limit=3, judge=judge, folder=tmp_path / "run",
                         options={"simpleqa.samples": "3"})


def _rescore(rows, tmp_path, judge, progress=None):
    path = tmp_path / "stored" / "simpleqa.parquet"
    write_details(path, rows)
    ctx = ScoreContext(suite="sample", limit=3, options={"simpleqa.samples": "3"}, judge=judge)
    if progress is not None:
        ctx.progress = progress
    return score(read_details(path), ctx)


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def test_scoring_stored_scored_details_again_reproduces_everything(tmp_path):
    judge = ScriptedJudge({"x": "A", "y": "fail"})
    first = _calibrated_run(tmp_path, judge)
    assert sum(r["part"] == "frequency" for r in first.rows) == 3
    again = _rescore(first.rows, tmp_path, ScriptedJudge({"x": "A", "y": "fail"}))
    assert sum(r["part"] == "frequency" for r in again.rows) == 3  # dropped and derived again, not doubled
    assert _same(again.scores, first.scores) and _same(again.counts, first.counts)
    assert _same(again.extra, first.extra)
    assert _same(again.rows, read_details(_stored(first.rows, tmp_path)))
    assert again.prompts == {"simpleqa_grader": prompts.load_prompts()["simpleqa_grader"]}


def _stored(rows, tmp_path) -> Path:
    path = tmp_path / "first" / "simpleqa.parquet"
    write_details(path, rows)
    return path


def test_scoring_again_with_another_judge_replaces_every_grade(tmp_path):
    first = _calibrated_run(tmp_path, ScriptedJudge({"x": "A", "y": "fail"}))
    progress = []
    strict = _rescore(first.rows, tmp_path, ScriptedJudge({}, default="B"),
                      lambda done, total: progress.append((done, total)))
    graded = [r for r in strict.rows if r["part"] in ("answer", "confidence", "frequency")]
    assert len(graded) == 9 and all(r["grade"] == "B" and r["judge_error"] == "" for r in graded)
    assert strict.scores["incorrect"] == 1.0 and strict.counts["ungraded"] == 0
    assert strict.counts["confidence_ungraded"] == 0 and strict.counts["frequency_ungraded"] == 0
    assert progress[0] == (0, 9) and progress[-1] == (9, 9)  # judged answers done / in all
    assert [r["prediction"] for r in strict.rows] == [r["prediction"] for r in first.rows]


# --------------------------------------------------------------------------------------------- the card

def test_card_fits_the_contract_and_keeps_the_board_columns():
    assert card_problems(CARD, "simpleqa") == []
    assert [m.key for m in CARD.metrics] == ["correct", "not_attempted", "incorrect", "correct_given_attempted",
                                             "f_score", "ungraded", "hit_token_limit", "ece", "thought_unclosed"]
    labels = [f"{CARD.short_title} {m.label}" for m in CARD.metrics if m.shown]
    assert labels == ["SimpleQA correct", "SimpleQA not attempted", "SimpleQA incorrect",
                      "SimpleQA correct given attempted", "SimpleQA F-score", "SimpleQA ungraded"]
    assert CARD.default_metric == "f_score"
    # the model's, not the judge's
    assert [m.key for m in CARD.metrics if not m.judged] == ["hit_token_limit", "thought_unclosed"]
    cut = CARD.metric("hit_token_limit")
    assert cut.kind == COUNT and cut.where == ("counts", "hit_token_limit") and not cut.shown
    assert {o.key: o.default for o in CARD.options}["simpleqa.max_new_tokens"] == str(simpleqa_options.DEFAULT_MAX_NEW_TOKENS)
    assert len(CARD.differences) >= 5 and any("100" in d and "samples" in d for d in CARD.differences)
    ungraded, ece = CARD.metric("ungraded"), CARD.metric("ece")
    assert ungraded.kind == COUNT and ungraded.where == ("counts", "ungraded") and not ungraded.higher_is_better
    assert ece.where == ("scores", "ece") and not ece.shown and not ece.higher_is_better
    assert not CARD.metric("incorrect").higher_is_better
    assert (CARD.title, CARD.paper) == ("SimpleQA", "https://openai.com/index/introducing-simpleqa/")
    (source,) = CARD.sources
    assert (source.key, source.setting, source.default) == ("simpleqa", "LEADERBOARD_SIMPLEQA_FULL",
                                                            data.OFFICIAL_URL)
    assert {o.key for o in CARD.options} == {
        "simpleqa.grader", "simpleqa.confidence", "simpleqa.frequency", "simpleqa.samples", "simpleqa.seed",
        "simpleqa.max_new_tokens", "simpleqa.confidence_max_new_tokens", "simpleqa.judge_max_tokens",
        "simpleqa.max_cost"}
    assert CARD.item_view.main_rows == ("part", "answer") and CARD.item_view.question == "question"
    (section,) = CARD.sections
    assert (section.key, section.kind, section.needs) == ("calibration", "plot", "f_score")
    assert section.render is calibration_figure and section.render(None) is None
    assert CARD.grader is grader.GRADER


# --------------------------------------------------------------------------------------------- the playground

def test_grader_messages_use_the_default_grader_prompt():
    (message,) = grader.messages("  Who? ", " Ada ", " Bob\n")
    template = prompts.load_prompts()["simpleqa_grader"]
    assert message == {"role": "user", "content": prompts.grader_prompt(template, "Who?", "Ada", "Bob")}
    assert 'starting with "Reason:"' in message["content"]


@pytest.mark.parametrize("raw, label, value, rationale", [
    ("Reason: It matches.\nA", "A CORRECT", 1.0, "It matches."),
    ("Reason: Another person.\nB", "B INCORRECT", 0.0, "Another person."),
    ("Reason: It declines.\n\nC\n", "C NOT ATTEMPTED", 0.0, "It declines."),
    ("Reason: hmm.\nprobably fine", "ungraded: the judge's reply had no grade line", None, "hmm.\nprobably fine"),
    ("", "ungraded: an empty reply", None, ""),
    (None, "ungraded: an empty reply", None, ""),
    ("<html><body><h1>502 Bad Gateway</h1></body></html>", "ungraded: markup (a web page or an XML document), not a "
     "judgement", None, ""),
    ("Rate limit: 3 requests per second exceeded.\nA", "ungraded: an error message, not a judgement", None, ""),
    ("I'm sorry, but I can't help with that.", "ungraded: a refusal, not a judgement", None, ""),
])
def test_grader_verdicts(raw, label, value, rationale):
    verdict = grader.verdict(raw)
    assert (verdict.label, verdict.score, verdict.rationale) == (label, value, rationale)


def test_grader_labels():
    g = grader.GRADER
    assert (g.mode, g.gold_label, g.gold_field) == ("SimpleQA grade", "Gold answer", "gold answer")
    assert g.broken_label == "ungraded: the judge's reply had no grade line"
    assert g.help.startswith("**SimpleQA grade**") and "**C** not attempted" in g.help


def test_grader_questions_of_the_sample_suite():
    entries, note = grader.questions("sample", {"simpleqa": "/nonexistent.csv"})
    qs = _sample()
    assert entries == [{"question_id": q["question_id"], "question": q["problem"], "gold": q["answer"]} for q in qs]
    assert note == f"The SimpleQA sample suite ({len(qs)} questions)."


def test_grader_questions_of_the_full_suite(tmp_path):
    meta = "\"{'topic': 'Art', 'answer_type': 'Person', 'urls': []}\""
    path = tmp_path / "full.csv"
    path.write_text(f"metadata,problem,answer\n{meta},Who?,Nobody\n{meta},What?,Nothing\n", encoding="utf-8")
    entries, note = grader.questions("full", {"simpleqa": str(path)})
    assert entries == [{"question_id": "simpleqa-0000", "question": "Who?", "gold": "Nobody"},
                       {"question_id": "simpleqa-0001", "question": "What?", "gold": "Nothing"}]
    assert note == "The full SimpleQA suite (2 questions)."


def test_a_full_suite_that_fails_to_load_falls_back_to_the_sample(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="evaluator.benchmarks.simpleqa.grader"):
        entries, note = grader.questions("full", {"simpleqa": str(tmp_path / "missing.csv")})
    assert len(entries) == len(_sample()) and entries[0]["question_id"] == "simpleqa-0000"
    assert note == ("The full SimpleQA suite could not be loaded, so the questions below are the sample suite "
                    "shipped with the project.")
    assert any("could not be loaded" in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------------------------------------- a real model

@pytest.fixture(scope="module")
def llama(tiny_llama):
    from evaluator.models import load_model

    return load_model(tiny_llama.repo_id, revision=tiny_llama.sha, batch_size=1)


def test_samples_are_k_distinct_draws_whatever_the_batch_size(llama, one_torch_thread):
    """The tiny random model samples near-uniformly from its vocabulary: k samples with their own seeds are k
    different replies, and the batch size (smaller or larger than k) changes no reply."""
    qs = _limited(2)
    judge = ScriptedJudge({})
    runs = []
    for batch in (1, 4, 7):
        llama.batch_size = batch
        res = _run(llama, judge, 2, batch_size=batch, frequency="on", samples=5, max_new_tokens=8)
        runs.append([(r["question_id"], r["part"], r["prediction"]) for r in res.rows])
    llama.batch_size = 1
    assert runs[0] == runs[1] == runs[2]
    for q in qs:
        drawn = [p for item, part, p in runs[0] if item == q["question_id"] and part.startswith("sample")]
        assert len(drawn) == 5 and len(set(drawn)) == 5


def test_replies_that_hit_the_token_budget_are_recorded_and_counted(llama, one_torch_thread):
    judge = ScriptedJudge({})
    short = _run(llama, judge, 3, max_new_tokens=3, frequency="on", samples=2)
    answers_ = [r for r in short.rows if r["part"] == "answer"]
    # scored from the details file read back: every row says whether its reply hit the budget
    assert all(isinstance(r["hit_token_limit"], bool) for r in short.rows)
    assert short.counts["hit_token_limit"] == sum(r["hit_token_limit"] for r in answers_)
    assert short.counts["hit_token_limit"] >= 1  # 3 tokens from a random model rarely end on its end token
    samples = [r for r in short.rows if r["part"].startswith("sample")]
    assert short.counts["sample_hit_token_limit"] == sum(r["hit_token_limit"] for r in samples)


def test_ending_tells_a_cut_reply_from_a_finished_one():
    from evaluator.models.transformers_adapter import ending

    assert ending([5, 6, 2, 0, 0], 5, {2}) == (2, False)  # ended by its end token (then padding)
    assert ending([5, 6, 7], 3, {2}) == (3, True)  # ran out of budget
    assert ending([5, 6, 7, 8], 3, {2}) == (3, True)  # longer rows in the batch are cut at the request's budget
    assert ending([5, 2], 3, {2}) == (1, False)
    assert ending([5, 6, 2], 3, {2, 9}) == (2, False)
