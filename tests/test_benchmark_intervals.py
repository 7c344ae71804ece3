"""Error bars on real scoring output: every score a benchmark's card shows (not a count) that is not null has its
interval in results.json (benchmarks.<name>.intervals.<metric key>), when a run is scored and when it is graded
again; each interval holds its score and its method names the benchmark's unit (CURE: instance and chain; ReForm-Eval:
instance; SimpleQA and LAVE: question). The four benchmarks run in-process on their sample suites with a scripted
stand-in for the model and for the judge, as the runner runs them."""
from __future__ import annotations

import json
import math
import zlib

import pytest

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.cure import data as cure_data
from evaluator.benchmarks.spec import COUNT, FRACTION
from evaluator.judge import JudgeResult
from evaluator.models.base import OptionScore
from evaluator.runs.details import write_details
from evaluator.runs.rescore import rescore
from evaluator.runs.runner import interval_records
from tests.benchmark_runs import run_benchmark

# on one test worker: the module's `runs` (every benchmark scored, some 5 s) made once, where xdist spread the tests
# over both workers and each made its own
pytestmark = pytest.mark.xdist_group("benchmark_intervals")
BENCHMARKS = ("cure", "reform", "simpleqa", "lave")
OPTIONS = {"simpleqa": {"simpleqa.confidence": "on", "simpleqa.frequency": "off"}}
# the units a benchmark's methods may name: "... by <unit>" (clustered) or "... over <unit>s" (each item one unit)
UNITS = {"cure": ("instance", "chain"), "reform": ("instance",), "simpleqa": ("question",), "lave": ("question",)}
ALL_UNITS = ("instance", "chain", "question", "cluster")


def _pick(text: str, n: int) -> int:
    """A fixed choice among n for a text (the same on every run)."""
    return zlib.crc32(text.encode()) % n


def _cure_golds() -> dict[tuple, int]:
    """CURE's sample suite: each question's candidates -> its right answer."""
    golds = {}
    for record in json.loads(cure_data.SAMPLE_PATH.read_text(encoding="utf-8")):
        for block in (record["inference"], *record["cot_inference"]["chain"]):
            golds[tuple(block["candidate"])] = block["gt"]
    return golds


class MixedModel:
    """Right on some questions and wrong on others: scores a CURE question's right candidate best three times in four
    (another benchmark's: one chosen by its prompt), and replies one of a few short answers (a confidence reply: a
    guess and a confidence)."""

    model_id, revision, dtype, device = "scripted", None, "none", "cpu"
    has_vision, batch_size, scoring_path = True, 4, "reference"
    REPLIES = ("(A)", "(B) two", "yes", "2", "The answer is (C).", "no idea")

    def __init__(self):
        self.golds = _cure_golds()

    def generate(self, requests):
        out = []
        for r in requests:
            if '"confidence"' in r.text:
                out.append(json.dumps({"answer": self.REPLIES[_pick(r.text, 6)], "confidence": 10 * _pick(r.text, 11)}))
            else:
                out.append(self.REPLIES[_pick(r.text, len(self.REPLIES))])
        return out

    def score_options(self, request, options):
        gold = self.golds.get(tuple(options))
        best = gold if gold is not None and _pick(request.text, 4) else _pick(request.text, len(options))
        return [OptionScore(-1.0 if k == best else -3.0, -1.0 if k == best else -3.0, 2) for k in range(len(options))]


class MixedJudge:
    """LAVE: a rating 1-3 chosen by the prompt; SimpleQA: a grade A-C chosen by the prompt."""

    identity = {"kind": "scripted", "model": "mixed-judge"}

    def complete_many(self, conversations, **generation):
        out = []
        for conversation in conversations:
            text = conversation[0]["content"]
            reply = (f"Compared with the references. So rating={1 + _pick(text, 3)}" if "Candidate answer" in text
                     else f"Reason: scripted.\n{'ABC'[_pick(text, 3)]}")
            out.append(JudgeResult(text=reply, error=None, attempts=1))
        return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """Each benchmark scored once, as the runner scores it (details written, then read back and scored)."""
    return {name: run_benchmark(name, MixedModel(), judge=MixedJudge(), options=OPTIONS.get(name),
                                folder=tmp_path_factory.mktemp(name))
            for name in BENCHMARKS}


def shown_values(name: str, block: dict) -> dict:
    """Each card metric's value in a results block (the board reads it at metric.where), counts left out."""
    values = {}
    for metric in get_benchmark(name).CARD.metrics:
        if metric.kind == COUNT:
            continue
        value = block
        for step in metric.where:
            value = value.get(step) if isinstance(value, dict) else None
        values[metric.key] = value
    return values


def _kinds(name: str) -> dict[str, str]:
    return {metric.key: metric.kind for metric in get_benchmark(name).CARD.metrics}


def _defined(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_shown_score_that_is_not_null_has_its_interval(name, runs):
    scored = runs[name]
    block = {"scores": scored.scores, "counts": scored.counts, "extra": scored.extra}
    records = interval_records(scored)
    values = shown_values(name, block)
    defined = {key for key, value in values.items() if _defined(value)}
    assert len(defined) >= 5  # the run scored most of what the board shows
    assert sorted(defined - set(records)) == []
    assert not {key for key, value in values.items() if not _defined(value)} & set(records)  # a null score: none
    for key in defined:
        record = records[key]
        assert set(record) == {"stderr", "low", "high", "n", "method"} and record["n"] > 0, key
        assert record["low"] - 1e-9 <= values[key] <= record["high"] + 1e-9, (key, values[key], record)
        if _kinds(name)[key] == FRACTION:  # a share's interval stays inside 0..1
            assert 0.0 <= record["low"] <= record["high"] <= 1.0, (key, record)


def test_the_runs_cover_every_kind_of_interval(runs):
    """The runs above are not degenerate: CURE's Cf and SimpleQA's ECE are defined, LAVE has its five agreements."""
    assert _defined(runs["cure"].scores["Cf"]) and _defined(runs["simpleqa"].scores["ece"])
    lave = interval_records(runs["lave"])
    assert {f"agree_{m}" for m in ("vqa_accuracy", "anls", "exact_match", "bleu4", "cider")} <= set(lave)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_each_method_names_the_benchmarks_unit(name, runs):
    methods = {key: record["method"] for key, record in interval_records(runs[name]).items()}
    for key, method in methods.items():
        named = [unit for unit in ALL_UNITS if f"by {unit}" in method or f"over {unit}s" in method]
        assert named and set(named) <= set(UNITS[name]), (key, method)


def test_the_units_each_score_rests_on(runs):
    cure = interval_records(runs["cure"])
    assert cure["Rh"]["method"] == cure["Ro"]["method"] == "wilson, clt over instances"
    # a bootstrap whose draws all agree says so after its draws (evaluator.metrics.intervals.range_wilson)
    assert cure["Cf"]["method"].startswith("bootstrap over instances, 1000 draws, seed 0")
    assert cure["step_accuracy"]["method"] == "wilson, clustered clt by chain"
    assert cure["Rh"]["n"] == cure["step_accuracy"]["n"] == runs["cure"].counts["scored"]  # n counts chains
    reform = interval_records(runs["reform"])
    assert reform["gen_mc_accuracy"]["method"] == "wilson, clustered clt by instance"
    assert reform["gen_overall"]["method"].startswith("bootstrap over instances, 400 draws, seed 0")
    assert reform["instability"]["method"].endswith("clt over instances")
    simpleqa = interval_records(runs["simpleqa"])
    assert simpleqa["correct"]["method"] == "wilson, clt over questions"
    assert all(simpleqa[key]["method"].startswith("bootstrap over questions, 1000 draws, seed 0")
               for key in ("f_score", "ece"))
    lave = interval_records(runs["lave"])
    assert lave["lave"]["method"] == "clt over questions" and lave["cider"]["method"].startswith("bootstrap over q")
    assert lave["agree_anls"]["method"] == "wilson, clt over questions"
    assert lave["agree_vqa_accuracy"]["n"] == runs["lave"].extra["agreement"]["vqa_accuracy"]["n"]


def test_laves_agreement_intervals_rest_on_the_agreement_itself(runs):
    """agree_<metric>: Wilson's interval of the very share the results report, over the answers both scored."""
    from evaluator.metrics.intervals import wilson

    scored = runs["lave"]
    for metric, found in scored.extra["agreement"].items():
        interval = scored.intervals[f"agree_{metric}"]
        agreed = round(found["agreement"] * found["n"])
        assert interval.n == found["n"] and (interval.low, interval.high) == pytest.approx(wilson(agreed, found["n"]))


def test_grading_again_keeps_the_agreement_intervals(runs, tmp_path):
    """rescore (evaluator.runs.rescore) writes the intervals as the runner does, agree_<metric> included."""
    scored = runs["lave"]
    run_dir = tmp_path / "run"
    (run_dir / "details").mkdir(parents=True)
    write_details(run_dir / "details" / "lave.parquet", scored.rows, get_benchmark("lave").CARD)
    results = {"run": {"suite": "sample"}, "benchmarks": {"lave": {"scores": {}, "counts": {}, "extra": {}}}}
    (run_dir / "results.json").write_text(json.dumps(results), encoding="utf-8")
    again = rescore(run_dir, tmp_path / "out", MixedJudge())["benchmarks"]["lave"]
    values = shown_values("lave", again)
    assert {key for key, value in values.items() if _defined(value)} <= set(again["intervals"])
    assert again["intervals"]["agree_exact_match"] == interval_records(scored)["agree_exact_match"]
