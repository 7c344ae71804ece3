"""LAVE read as the reference reads it (issue 29): our demonstrations follow mair-lab/lave's one to one, with
rationales in our own words; a bare rating counts as that rating, flagged no_rationale; the official VQA accuracy
only where a question has 10 answers, and the strict column elsewhere named for what it computes."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from evaluator.benchmarks.lave import CARD, scoring
from evaluator.benchmarks.lave.rater import build_lave_prompt, format_references, has_rationale, load_lave_prompts
from evaluator.benchmarks.lave.views import lave_agreement_frame
from evaluator.metrics.vqa import VQA_ANSWERS, exact_match, official_vqa_accuracy, vqa_accuracy
from leaderboard.board.columns import schema, value_at
from tests.test_lave import ANSWERS, ScriptedJudge, ScriptedModel, _docmatix_parquet, run_benchmark

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "lave"
FILES = [("lave_demos.json", "demos", 16), ("lave_demos_binary.json", "binary_demos", 8)]


def _reference(name: str) -> list[dict]:
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"the reference's demonstrations not found at {path} (tests read ../shared/data/lave; not shipped)")
    return json.loads(path.read_text(encoding="utf-8"))


def _runs(text: str, size: int = 5) -> set[tuple[str, ...]]:
    """Every run of `size` consecutive words of the text, lower-cased."""
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}


# --------------------------------------------------------------------------------------------- demonstrations

@pytest.mark.parametrize("name, field, count", FILES)
def test_demos_rule_same_items_ratings_and_order_as_the_reference(name, field, count):
    reference, ours = _reference(name), getattr(load_lave_prompts(), field)
    assert len(reference) == len(ours) == count
    for index, (theirs, mine) in enumerate(zip(reference, ours)):
        assert (mine["question"], mine["candidate"], mine["references"], mine["caption"], mine["rating"]) == (
            theirs["question"], theirs["prediction"], theirs["references"], theirs["caption"],
            int(theirs["output"])), f"{name}, demonstration {index}"


@pytest.mark.parametrize("name, field, count", FILES)
def test_demos_rule_rationales_are_our_own_words(name, field, count):
    for theirs, mine in zip(_reference(name), getattr(load_lave_prompts(), field)):
        assert mine["rationale"].strip() != theirs["explanation"].strip()
        assert not _runs(mine["rationale"]) & _runs(theirs["explanation"]), mine["rationale"]  # no 5 words in a row
        assert has_rationale(mine["rationale"]) and mine["rationale"].endswith(".")


@pytest.mark.parametrize("name, field, count", FILES)
def test_demos_rule_prompt_blocks_are_the_reference_s_but_for_the_rationale(name, field, count):
    """The shown blocks, as the reference's example_template writes them (references sorted, unfiltered)."""
    reference, prompts = _reference(name), load_lave_prompts()
    refs = ["yes"] * 10 if field == "binary_demos" else ["toast"] * 5
    prompt = build_lave_prompt(prompts, "Q?", refs, "c")
    for theirs, mine in zip(reference[:8], getattr(prompts, field)[:8]):
        block = (f"Question: '{theirs['question']}'\nReference answers: {format_references(theirs['references'])}\n"
                 f"Candidate answer: '{theirs['prediction']}'\nOutput: {mine['rationale']} So rating={theirs['output']}")
        assert f"\n\n{block}\n\n" in prompt


def test_demos_rule_the_policy_the_reference_teaches():
    """Without the shared files: a generic answer is rated 1 ("fruit" for apple), the majority side of a 6:4 yes/no
    split 2, both among the 8 shown."""
    prompts = load_lave_prompts()
    (fruit,) = [d for d in prompts.demos[:8] if d["candidate"] == "fruit"]
    assert fruit["references"] == ["apple"] and fruit["rating"] == 1
    split = [d for d in prompts.binary_demos[:8] if sorted(d["references"]).count("no") == 6]
    assert [(d["candidate"], d["rating"]) for d in split] == [("no", 2)]
    assert (len(prompts.demos), len(prompts.binary_demos)) == (16, 8)


# --------------------------------------------------------------------------------------------- a bare rating

REPLIES = {"two": "3", "5": "So rating=1", "3": "Matches. So rating=3", "many": "...",
           "4": "Error: model overloaded, retry in 3"}


def test_bare_rating_rule_counts_as_that_rating_flagged_no_rationale(tmp_path):
    res = run_benchmark("lave", ScriptedModel(ANSWERS), limit=5, judge=ScriptedJudge(REPLIES), folder=tmp_path)
    rows = {r["parsed_answer"]: r for r in res.rows}
    for answer, rating in (("two", 3.0), ("5", 1.0)):
        row = rows[answer]
        assert row["rating"] == rating and row["no_rationale"] and not row["rating_fallback"]
        assert row["judge_rationale"] == "" and not row["judge_error"]
    assert not rows["3"]["no_rationale"] and rows["3"]["judge_rationale"] == "Matches."
    assert res.counts["no_rationale"] == 2 and res.counts["rating_fallback"] == 0
    # neither a rating nor a word: asked again, then unrated, never the fallback
    assert math.isnan(rows["many"]["rating"]) and "neither a rating nor a rationale" in rows["many"]["judge_error"]
    assert "no_rationale" in scoring.RATING_RULE and "2 with no rationale" in lave_agreement_frame(
        {"benchmarks": {"lave": {"scores": res.scores, "counts": res.counts, "extra": res.extra}}}).iloc[0, 4]


def test_bare_rating_rule_never_reads_a_rating_out_of_an_error(tmp_path):
    judge = ScriptedJudge({"4": "Error: model overloaded, retry in 3", "there are four triangles": "3"})
    res = run_benchmark("lave", ScriptedModel(ANSWERS), limit=6, judge=judge, folder=tmp_path)
    rows = {r["parsed_answer"]: r for r in res.rows}
    assert math.isnan(rows["4"]["rating"]) and "error message" in rows["4"]["judge_error"]
    assert rows["there are four triangles"]["rating"] == 3.0 and rows["there are four triangles"]["no_rationale"]
    assert res.counts["unrated"] == 1


# --------------------------------------------------------------------------------------------- VQA accuracy

def test_vqa_rule_official_accuracy_only_with_10_answers():
    assert VQA_ANSWERS == 10
    assert official_vqa_accuracy("dog", ["dog"] * 3 + ["cat"] * 7) == vqa_accuracy("dog", ["dog"] * 3 + ["cat"] * 7)
    assert official_vqa_accuracy("dog", ["dog"] * 3 + ["cat"] * 7) == pytest.approx(0.9)
    for few in (["dog"], ["dog", "dog"], ["dog"] * 9):
        assert math.isnan(official_vqa_accuracy("dog", few)) and exact_match("dog", few) == 1.0
    with pytest.raises(ValueError):
        official_vqa_accuracy("dog", [])


def test_vqa_rule_docmatix_shows_exact_match_by_its_name_and_no_vqa_accuracy(tmp_path):
    parquet = _docmatix_parquet(tmp_path / "docmatix.parquet")
    model = ScriptedModel({"page 0": "The total is 0.50.", "page 1": "1.50"})
    res = run_benchmark("lave", model, suite="full", sources={"lave.docmatix": str(parquet)}, judge=ScriptedJudge({}),
                        folder=tmp_path / "run")
    answered = [r for r in res.rows if r["status"] == "ok"]
    assert all(math.isnan(r["vqa_accuracy"]) for r in answered)
    assert [r["exact_match"] for r in answered] == [1.0, 0.0] and res.scores["exact_match"] == 0.5
    assert math.isnan(res.scores["vqa_accuracy"]) and res.counts["vqa_accuracy_items"] == 0
    assert res.extra["agreement"]["vqa_accuracy"]["n"] == 0
    frame = lave_agreement_frame({"benchmarks": {"lave": {"scores": res.scores, "counts": res.counts,
                                                           "extra": res.extra}}})
    by_metric = {row[0]: row for row in frame.values.tolist()}
    assert by_metric["VQA accuracy"][1] == "n/a" and by_metric["exact match (VQA-normalised)"][1] == "50.0"


def test_vqa_rule_labels_are_declared_once_and_old_results_still_read():
    labels = {m.key: m.label for m in CARD.metrics}
    assert all(labels[key] == label for key, label in scoring.STRING_METRICS.items())
    assert labels["exact_match"] == "exact match (VQA-normalised)" and labels["vqa_accuracy"] == "VQA accuracy"
    assert "10" in next(m for m in CARD.metrics if m.key == "vqa_accuracy").description
    board = schema()
    assert board.column("lave_exact_match").label == "LAVE exact match (VQA-normalised)"
    # a results file written before these rules: same keys, no no_rationale / vqa_accuracy_items counts
    old = {"benchmarks": {"lave": {"scores": {"lave": 0.5, "vqa_accuracy": 0.25, "exact_match": 0.25},
                                   "counts": {"rated": 4, "unrated": 0, "rating_fallback": 1},
                                   "extra": {"ratings": {"1": 1, "2": 2, "3": 1}}}}}
    assert value_at(old, board.column("lave_vqa_accuracy").path) == 0.25
    assert value_at(old, board.column("lave_exact_match").path) == 0.25
    items = lave_agreement_frame(old).iloc[0, 4]
    assert items == "4 rated (1 rated 3, 2 rated 2, 1 rated 1; 1 without a rating counted as 2; 0 unrated)"
