"""The lite rule: a seeded, stratified subset chosen on each item's own key, the same in any order of the data, sized
by the cards; the lite plans of the real CURE and SimpleQA files; the downloaded suite checked against the cards'
tables."""
from __future__ import annotations

import csv
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from evaluator.benchmarks import BenchmarkError, check_benchmark, get_benchmark, lite
from evaluator.benchmarks.lite import EQUAL, PROPORTIONAL, Lite
from evaluator.benchmarks.spec import PlanContext
from evaluator.runs.summary import suite_check

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
CURE_FILE = SHARED / "cure" / "cot_consistency_eval.jsonl"
SIMPLEQA_FILE = SHARED / "simpleqa" / "simple_qa_test_set.opendeepsearch_copy.csv"
needs = pytest.mark.skipif  # each test below names the file it reads


def _rule(allocation: str, size: int, strata: dict[str, int]) -> Lite:
    return Lite(stratum="group", allocation=allocation, size=size, strata=tuple(strata.items()),
                strata_basis="a test's own table")


def test_equal_allocation_takes_the_size_of_each_stratum_or_all_of_a_smaller_one():
    rule = _rule(EQUAL, 20, {"a": 50, "b": 7, "c": 20})
    assert lite.sizes(rule, dict(rule.strata)) == {"a": 20, "b": 7, "c": 20}
    assert lite.planned_items(rule) == 47


def test_proportional_allocation_sums_to_its_size_by_largest_remainders():
    rule = _rule(PROPORTIONAL, 10, {"a": 5, "b": 3, "c": 2, "d": 1})  # quotas 4.55, 2.73, 1.82, 0.91
    assert lite.sizes(rule, dict(rule.strata)) == {"a": 4, "b": 3, "c": 2, "d": 1}
    assert sum(lite.sizes(_rule(PROPORTIONAL, 333, {"x": 858, "y": 709, "z": 17}),
                          {"x": 858, "y": 709, "z": 17}).values()) == 333
    assert lite.sizes(_rule(PROPORTIONAL, 500, {"a": 3, "b": 4}), {"a": 3, "b": 4}) == {"a": 3, "b": 4}  # all


def test_the_choice_depends_on_each_items_key_alone_never_on_the_order():
    items = [{"id": f"q{i}", "group": "ab"[i % 2]} for i in range(200)]
    rule = _rule(EQUAL, 10, {"a": 100, "b": 100})
    chosen = lite.select(items, "toy", rule, lambda x: x["id"], lambda x: x["group"])
    shuffled = items[:]
    random.Random(7).shuffle(shuffled)
    again = lite.select(shuffled, "toy", rule, lambda x: x["id"], lambda x: x["group"])
    assert {x["id"] for x in chosen} == {x["id"] for x in again}
    assert Counter(x["group"] for x in chosen) == {"a": 10, "b": 10}
    assert [x["id"] for x in chosen] == sorted((x["id"] for x in chosen), key=lambda k: int(k[1:]))  # suite order
    # the rank is a hash of the rule's version, the benchmark and the key: another benchmark draws other items
    other = lite.select(items, "another", rule, lambda x: x["id"], lambda x: x["group"])
    assert {x["id"] for x in other} != {x["id"] for x in chosen}
    assert lite.rank("toy", "q1") == lite.rank("toy", "q1") != lite.rank("toy", "q2")


def test_every_card_has_a_lite_rule_whose_plan_counts_its_size():
    for name in ("cure", "simpleqa", "reform", "lave"):
        benchmark = get_benchmark(name)
        rule = benchmark.CARD.lite
        assert rule is not None and rule.strata_basis and lite.describe(rule)
        assert benchmark.workload(PlanContext(suite="lite")).items == lite.planned_items(rule), name
        assert benchmark.workload(PlanContext(suite="full")).items == sum(n for _, n in rule.strata), name
        assert benchmark.CARD.full_suite_items == sum(n for _, n in rule.strata), name


def test_a_card_with_a_malformed_lite_rule_is_refused_by_the_registry():
    import dataclasses
    import types

    module = get_benchmark("lave")
    broken = types.SimpleNamespace(CARD=dataclasses.replace(module.CARD, lite=_rule("most", 0, {"a": 0})),
                                   plan=module.plan, score=module.score, __name__="broken")
    with pytest.raises(BenchmarkError) as caught:
        check_benchmark(broken, "lave")
    said = str(caught.value)
    assert "allocation must be equal or proportional" in said and "size must be a positive" in said
    assert "strata must list each stratum once" in said


@needs(not CURE_FILE.is_file(), reason=f"real CURE data not found at {CURE_FILE} (read from ../shared/data)")
def test_cures_lite_plan_of_the_real_file_is_its_cards_size_by_stratum_in_any_order(tmp_path):
    benchmark = get_benchmark("cure")
    plan = benchmark.plan(PlanContext(suite="lite", sources={"cure": str(CURE_FILE)}))
    assert len(plan.items) == plan.suite_items == 500
    assert plan.strata == dict(benchmark.CARD.lite.strata)  # the card's table is the real file's, counted offline
    assert suite_check(benchmark.CARD, plan.strata) == {"matches": True, "differs": {}}
    assert len(plan.asks) == benchmark.workload(PlanContext(suite="lite")).total("scorings")  # 1,956
    records = json.loads(CURE_FILE.read_text(encoding="utf-8"))
    random.Random(3).shuffle(records)  # a copy in another order: the same instances (the file has no ids)
    shuffled = tmp_path / "shuffled.json"
    shuffled.write_text(json.dumps(records), encoding="utf-8")
    again = benchmark.plan(PlanContext(suite="lite", sources={"cure": str(shuffled)}))
    content = {(r["image_url"], r["region"], r["question"]) for r in plan.rows}
    assert content == {(r["image_url"], r["region"], r["question"]) for r in again.rows}


@needs(not SIMPLEQA_FILE.is_file(), reason=f"real SimpleQA data not found at {SIMPLEQA_FILE} (read from ../shared)")
def test_simpleqas_lite_plan_of_the_real_file_keeps_each_topics_share():
    benchmark = get_benchmark("simpleqa")
    plan = benchmark.plan(PlanContext(suite="lite", sources={"simpleqa": str(SIMPLEQA_FILE)}))
    assert len(plan.items) == 1000 and plan.strata == dict(benchmark.CARD.lite.strata)
    topics = Counter(row["topic"] for row in plan.rows if row["part"] == "answer")
    assert topics == lite.sizes(benchmark.CARD.lite, dict(benchmark.CARD.lite.strata))
    assert topics["Science and technology"] == 198 and topics["Video games"] == 31  # 858 and 135 of 4,326
    counted = benchmark.workload(PlanContext(suite="lite"))
    assert len(plan.asks) == counted.total("generations") == 1000  # no calibration on a lite run, as on the full
    with open(SIMPLEQA_FILE, encoding="utf-8") as handle:  # the card's strata are the file's own topics
        assert len(list(csv.DictReader(handle))) == sum(n for _, n in benchmark.CARD.lite.strata)


def test_a_downloaded_suite_that_differs_from_the_cards_table_is_said_and_recorded(capsys):
    card = get_benchmark("lave").CARD
    found = suite_check(card, {"docmatix": 180, "vqa": 25})
    assert found == {"matches": False, "differs": {"docmatix": [200, 180], "vqa": [0, 25]}}
    said = capsys.readouterr().err
    assert said.startswith("WARNING: lave's downloaded suite differs from the card's table of its sources")
    assert "docmatix: 200 in the table, 180 read" in said and "vqa: 0 in the table, 25 read" in said


def test_a_lite_run_records_its_rule_and_checks_the_suite_it_read(tiny_llava, tmp_path, capsys, monkeypatch):
    from evaluator.__main__ import main
    from evaluator.benchmarks.cure.data import SAMPLE_PATH

    monkeypatch.delenv("LEADERBOARD_PARENT_PID", raising=False)
    out = tmp_path / "out"
    # our sample file read as a downloaded suite: its images are local, its strata are not the official file's
    assert main(["run", "--model", str(tiny_llava.folder), "--benchmarks", "cure", "--suite", "lite", "--source",
                 f"cure={SAMPLE_PATH}", "--limit", "2", "--out", str(out), "--images-dir", str(tmp_path / "img")]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["run"]["suite"] == "lite" and results["run"]["lite_rule"] == lite.RULE == "lite-v1"
    check = results["benchmarks"]["cure"]["suite_check"]
    assert check["matches"] is False and check["differs"]["Visual Genome, 3 steps"] == [690, 0]
    assert "WARNING: cure's downloaded suite differs from the card's table" in capsys.readouterr().err
    assert results["benchmarks"]["cure"]["coverage"]["suite_items"] == 20  # 500 of 20: all of them
