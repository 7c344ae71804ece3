"""A details schema that stays loadable: every details file of a benchmark has the columns its card declares
(Card.details), in their order, of their declared types, whatever the run's options, limit or outcome, so the files
of many runs load as one dataset (`datasets.load_dataset("parquet", data_files=[...])`, a Hub config of every run).

For each benchmark, two runs with different options and limits (tiny LLaVA for CURE and ReForm-Eval, scripted
stand-ins for SimpleQA and LAVE, as their own tests use) write details with the same arrow schema, and `datasets`
loads both as one split. Grading again (rescore) writes the same schema, also from an older file written with
inferred types. A column the card does not declare, or a value not of its column's type, is refused naming the
column and the benchmark; every declared column says what it holds.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.benchmarks import REGISTRY, card_problems, get_benchmark
from evaluator.benchmarks.spec import DETAIL_TYPES, INT, STRING, DetailColumn, PlanContext
from evaluator.inputs.images import ImageUnavailable
from evaluator.models.base import GenerationResult
from evaluator.runs.details import DETAIL_DTYPES, DetailsError, details_schema, read_details, write_details
from tests.benchmark_runs import run_benchmark
from tests.test_lave import ANSWERS as LAVE_ANSWERS, REPLIES as LAVE_REPLIES
from tests.test_lave import ScriptedJudge as LaveJudge, ScriptedModel as LaveModel
from tests.test_simpleqa import ScriptedJudge as SimpleQAJudge, ScriptedModel as SimpleQAModel


def _details(folder: Path, name: str) -> Path:
    return folder / "details" / f"{name}.parquet"


def _loads_as_one(paths: list[Path], name: str, cache: Path) -> None:
    """The files have the card's schema, the same one, and `datasets` loads them as one split with every row."""
    import datasets

    expected = details_schema(name)
    schemas = [pq.read_schema(path) for path in paths]
    for path, schema in zip(paths, schemas):
        assert schema.remove_metadata().equals(expected), f"{path}:\n{schema}\n!=\n{expected}"
        assert schema.equals(schemas[0], check_metadata=True)
    loaded = datasets.load_dataset("parquet", data_files={"train": [str(p) for p in paths]}, split="train",
                                   cache_dir=str(cache))
    card = get_benchmark(name).CARD
    assert loaded.column_names == [column.name for column in card.details]
    assert {column.name: loaded.features[column.name].dtype for column in card.details} == \
        {column.name: DETAIL_DTYPES[column.type] for column in card.details}
    counts = [pq.read_metadata(path).num_rows for path in paths]
    assert all(counts) and loaded.num_rows == sum(counts)
    first = read_details(paths[0])
    assert loaded[0]["question_id"] == first[0]["question_id"]


def _rows_in_card_order(rows: list[dict], name: str) -> None:
    """What the run produced: every row's columns are the card's, in its order (none undeclared, none left out)."""
    names = [column.name for column in get_benchmark(name).CARD.details]
    assert all(list(row) == names for row in rows), (list(rows[0]), names)


# --------------------------------------------------------------------------------------------- the four benchmarks

@pytest.fixture(scope="module")
def llava(tiny_folder, one_torch_thread):
    from evaluator.models import load_model

    return load_model(str(tiny_folder("llava")))


def test_cure_runs_with_other_modes_and_an_unreadable_image_load_as_one(llava, tmp_path, monkeypatch):
    a = run_benchmark("cure", llava, limit=1, folder=tmp_path / "a")
    from evaluator.benchmarks.cure import planning

    drawn = planning.marked_image

    def second_unreadable(inst, images_dir):
        if inst["question_id"] != a.rows[0]["question_id"]:
            raise ImageUnavailable(inst["image"]["url"], "scripted: not readable")
        return drawn(inst, images_dir)

    monkeypatch.setattr(planning, "marked_image", second_unreadable)
    b = run_benchmark("cure", llava, limit=2, options={"cure.mode": "generation", "cure.max_new_tokens": "4"},
                      folder=tmp_path / "b")
    assert b.counts["image_unavailable"] == 1 and {r["extraction"] for r in b.rows} == {"letter"}
    unreadable = [r for r in b.rows if r["status"] == "image_unavailable"]
    assert unreadable and all(math.isnan(r["score"]) and r["option_scores"] == "" for r in unreadable)
    for result in (a, b):
        _rows_in_card_order(result.rows, "cure")
    _loads_as_one([_details(tmp_path / "a", "cure"), _details(tmp_path / "b", "cure")], "cure", tmp_path / "cache")


class ReportingModel(SimpleQAModel):
    """The SimpleQA stand-in through generate_results: says which replies used up their token budget."""

    def generate_results(self, requests):
        return [GenerationResult(text, hit_limit=len(text) > 1) for text in self.generate(requests)]


def test_simpleqa_runs_with_and_without_calibration_and_token_limits_load_as_one(tmp_path):
    from evaluator.benchmarks.simpleqa.data import SAMPLE_PATH, load_questions
    from evaluator.benchmarks.simpleqa.planning import limited

    qs = limited(load_questions(SAMPLE_PATH), 2)  # the questions a limit of 2 runs (a seeded draw)
    off = {"simpleqa.confidence": "off", "simpleqa.frequency": "off"}
    one = limited(load_questions(SAMPLE_PATH), 1)[0]
    a = run_benchmark("simpleqa", SimpleQAModel({one["problem"]: "x"}), limit=1, options=off,
                      judge=SimpleQAJudge({"x": "A"}), folder=tmp_path / "a")
    assert [r["hit_token_limit"] for r in a.rows] == [None]  # the model does not say: a column of nulls
    model = ReportingModel({q["problem"]: "x" for q in qs},
                           confidence={q["problem"]: '{"answer": "yy", "confidence": 70}' for q in qs},
                           samples={q["problem"]: ["x", "yy"] for q in qs})
    b = run_benchmark("simpleqa", model, limit=2, options={"simpleqa.samples": "2"},
                      judge=SimpleQAJudge({"x": "A", "yy": "fail"}), folder=tmp_path / "b")
    assert {r["part"] for r in b.rows} == {"answer", "confidence", "sample1", "sample2", "frequency"}
    assert {r["hit_token_limit"] for r in b.rows} == {True, False}
    for result in (a, b):
        _rows_in_card_order(result.rows, "simpleqa")
    _loads_as_one([_details(tmp_path / "a", "simpleqa"), _details(tmp_path / "b", "simpleqa")], "simpleqa",
                  tmp_path / "cache")
    stored = read_details(_details(tmp_path / "a", "simpleqa"))
    assert stored[0]["hit_token_limit"] is None and stored[0]["grade"] == "A"


def test_reform_runs_in_other_modes_and_repeats_load_as_one(llava, tmp_path):
    a = run_benchmark("reform", llava, limit=1, options={"reform.mode": "generation", "reform.repeats": "1"},
                      folder=tmp_path / "a")
    b = run_benchmark("reform", llava, limit=1, options={"reform.mode": "likelihood", "reform.repeats": "2",
                                                         "reform.marks": "number"}, folder=tmp_path / "b")
    assert {r["mode"] for r in a.rows} == {"generation"} and "likelihood_mean" in {r["extraction"] for r in b.rows}
    for result in (a, b):
        _rows_in_card_order(result.rows, "reform")
    _loads_as_one([_details(tmp_path / "a", "reform"), _details(tmp_path / "b", "reform")], "reform",
                  tmp_path / "cache")


def test_lave_runs_with_an_unreadable_image_and_other_options_load_as_one(tmp_path):
    from PIL import Image

    a = run_benchmark("lave", LaveModel(LAVE_ANSWERS), limit=2, judge=LaveJudge(LAVE_REPLIES), folder=tmp_path / "a")
    Image.new("RGB", (8, 8)).save(tmp_path / "ok.png")
    items = [{"question_id": "q1", "image": "ok.png", "question": "How many circles are there?", "answers": ["2"]},
             {"question_id": "q2", "image": "missing.png", "question": "Is there a triangle?", "answers": ["yes"]}]
    (tmp_path / "s.json").write_text(json.dumps(items), encoding="utf-8")
    b = run_benchmark("lave", LaveModel(LAVE_ANSWERS), suite="full",
                      options={"lave.docmatix": "off", "lave.shots": "1", "lave.max_new_tokens": "8"},
                      sources={"lave": str(tmp_path / "s.json")}, images_dir=tmp_path / "cache-images",
                      judge=LaveJudge(LAVE_REPLIES), folder=tmp_path / "b")
    assert b.counts["image_unavailable"] == 1
    for result in (a, b):
        _rows_in_card_order(result.rows, "lave")
    _loads_as_one([_details(tmp_path / "a", "lave"), _details(tmp_path / "b", "lave")], "lave", tmp_path / "cache")


# --------------------------------------------------------------------------------------------- grading again

def test_rescore_writes_the_same_schema_also_from_an_older_file(tmp_path):
    """A run graded again writes its details as the card declares them, also when the stored file is an older one,
    written with types inferred per file (here: no hit_token_limit column, and an all-empty column of nulls)."""
    from evaluator.runs.rescore import rescore

    from evaluator.benchmarks.simpleqa.data import SAMPLE_PATH, load_questions
    from evaluator.benchmarks.simpleqa.planning import limited

    options = {"simpleqa.confidence": "off", "simpleqa.frequency": "off"}
    model = SimpleQAModel({q["problem"]: "x" for q in limited(load_questions(SAMPLE_PATH), 2)})
    first = run_benchmark("simpleqa", model, limit=2, options=options,
                          judge=SimpleQAJudge({}, default="B"), folder=tmp_path / "a")
    results = {"benchmarks": {"simpleqa": {"scores": first.scores, "counts": first.counts, "extra": {}}},
               "run": {"suite": "sample", "limit": 2, "options": options, "sources": {}}}
    (tmp_path / "a" / "results.json").write_text(json.dumps(results, default=str), encoding="utf-8")

    old = tmp_path / "old"
    (old / "details").mkdir(parents=True)
    (old / "results.json").write_text(json.dumps(results, default=str), encoding="utf-8")
    frame = pd.DataFrame([{k: v for k, v in row.items() if k != "hit_token_limit"} for row in first.rows])
    frame["judge_error"] = None
    frame.to_parquet(_details(old, "simpleqa"), index=False)  # how details were written before
    assert pq.read_schema(_details(old, "simpleqa")).field("judge_error").type == pa.null()
    assert read_details(_details(old, "simpleqa"))[0]["judge_error"] is None  # older files read as they did

    for run_dir in (tmp_path / "a", old):
        rescore(run_dir, run_dir, SimpleQAJudge({}, default="A"))
        rows = read_details(_details(run_dir, "simpleqa"))
        assert [r["grade"] for r in rows] == ["A", "A"]
    _loads_as_one([_details(tmp_path / "a", "simpleqa"), _details(old, "simpleqa")], "simpleqa", tmp_path / "cache")


# --------------------------------------------------------------------------------------------- what is refused

def _cure_rows() -> list[dict]:
    """The planned rows of CURE's first sample instance, as the runner first writes them."""
    return get_benchmark("cure").plan(PlanContext(limit=1)).rows


def test_an_undeclared_column_is_refused_naming_it_and_the_benchmark(tmp_path):
    rows = _cure_rows()
    write_details(tmp_path / "ok.parquet", rows, "cure")
    rows[1]["seconds"] = 1.5
    with pytest.raises(DetailsError, match=r"'seconds' is not declared on the card of benchmark 'cure'"):
        write_details(tmp_path / "cure.parquet", rows)
    assert not (tmp_path / "cure.parquet").exists()
    del rows[1]["seconds"]
    rows[0]["gold"] = "2"  # a text in an int column
    with pytest.raises(DetailsError, match=r"cure details: column 'gold' is declared int, but row 0 holds str '2'"):
        write_details(tmp_path / "cure.parquet", rows, "cure")


def test_values_are_stored_as_their_declared_types(tmp_path):
    """Missing columns are nulls, NaN stays NaN, numpy scalars are plain, whole floats in an int column are ints,
    lists in a json column are JSON texts; the file reads back as the same rows."""
    import numpy as np

    rows = _cure_rows()
    rows[0].update(score=np.float32(0.5), parsed_answer=np.int64(3), chain_length=2.0, correct=np.bool_(True),
                   options=["a", "b"])
    rows[1]["score"] = math.nan
    del rows[2]["image_file"]
    path = tmp_path / "cure.parquet"
    write_details(path, rows)
    table = pq.read_table(path)
    assert table.schema.equals(details_schema("cure"))
    assert table.column("score").null_count == 0 and math.isnan(table.column("score")[1].as_py())
    assert table.column("image_file").null_count == 1
    back = read_details(path)
    assert back[0]["score"] == 0.5 and back[0]["parsed_answer"] == 3 and back[0]["chain_length"] == 2
    assert back[0]["correct"] is True and json.loads(back[0]["options"]) == ["a", "b"]
    assert pd.isna(back[2]["image_file"]) and back[1]["image_file"] == ""  # a null reads as missing, as before


def test_rows_of_no_known_benchmark_are_refused(tmp_path):
    with pytest.raises(DetailsError, match="cannot tell whose details"):
        write_details(tmp_path / "mystery.parquet", [{"question_id": "q"}])


# --------------------------------------------------------------------------------------------- the cards

@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_declared_column_says_what_it_holds(name):
    card = get_benchmark(name).CARD
    assert card.details and card_problems(card, name) == []
    for column in card.details:
        assert isinstance(column, DetailColumn) and column.type in DETAIL_TYPES
        assert column.description.strip() and re.fullmatch(r"[a-z][a-z0-9_]*", column.name), column
    assert [c.name for c in card.details][:2] == ["benchmark", "question_id"]
    planning = __import__(f"evaluator.benchmarks.{name}.planning", fromlist=["planning"])
    if hasattr(planning, "DETAIL_COLUMNS"):  # the rows' own list of columns, where the package keeps one
        assert tuple(c.name for c in card.details) == planning.DETAIL_COLUMNS


def test_a_card_without_details_or_with_repeated_or_undescribed_columns_is_refused():
    from dataclasses import replace

    card = get_benchmark("cure").CARD
    assert "CARD.details is empty" in " ".join(card_problems(replace(card, details=()), "cure"))
    twice = (*card.details, DetailColumn("gold", INT, "again"))
    assert "CARD.details repeats 'gold'" in card_problems(replace(card, details=twice), "cure")
    blank = (*card.details, DetailColumn("note", STRING, " "), DetailColumn("when", "date", "A date."))
    problems = " ".join(card_problems(replace(card, details=blank), "cure"))
    assert "details column 'note' needs a description" in problems and "'when' has type 'date'" in problems
    unshown = tuple(c for c in card.details if c.name != "chain_length")
    assert "the item view reads 'chain_length', not among CARD.details" in card_problems(
        replace(card, details=unshown), "cure")


def test_a_stand_in_card_without_details_writes_as_before_and_one_with_details_is_checked(tmp_path):
    """The registry refuses a card without details; a hand-made stand-in outside it (tests/test_coverage.py) has
    nothing to check against and is written with inferred types. A card-like object with details is checked."""
    from types import SimpleNamespace

    rows = [{"question_id": "a", "prediction": "x"}]
    write_details(tmp_path / "toy.parquet", rows, SimpleNamespace(name="toy"))
    assert read_details(tmp_path / "toy.parquet") == rows
    toy = SimpleNamespace(name="toy", details=(DetailColumn("question_id", STRING, "The item."),))
    with pytest.raises(DetailsError, match=r"'prediction' is not declared on the card of benchmark 'toy'"):
        write_details(tmp_path / "toy.parquet", rows, toy)
