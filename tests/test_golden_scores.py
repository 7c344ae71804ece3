"""The sample-suite numbers of every benchmark on the tiny models (and the scripted judges) never move.

tests/golden/sample_scores.json was recorded from the code before the benchmarks became packages. Each case's run
is the whole evaluator in-process (evaluator.runs.runner.run: real model loading, the real judge client against a
judge server on loopback); the case compares every score, count and breakdown, and every details row's answer, parse and
grade, with the recording. Two things are left out because they name this machine, not the evaluation: the judge
server's address (a random port) and the folder the sample file was read from.

Every case reads its benchmark's block and details from the explorer's finished runs (tests/explorer_runs.py, made
once per session: the same model, suite, limit, batch size, options and scripted judge as the case, with the
model's other benchmarks in the same run); each checks that the run is the case's before it compares. SimpleQA's is
the text run, replies of at most 16 tokens (tests.explorer_runs.TEXT_OPTIONS): at the default budgets (256 / 96) the
tiny random model, which never stops early, took a minute and a half on its own, for the same code (issue 70).

Record again (only when a change is meant to move a number; say why in the commit):
    GOLDEN_RECORD=1 .venv/bin/python -m pytest tests/test_golden_scores.py
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from tests import scripted_judges
from tests.explorer_runs import JUDGES, TEXT_OPTIONS

GOLDEN = Path(__file__).resolve().parent / "golden" / "sample_scores.json"
RECORD = os.environ.get("GOLDEN_RECORD") == "1"

# (case, model fixture, benchmark, options, limit, scripted judge)
CASES = {
    "cure_likelihood": ("tiny_llava", "cure", {}, 0, None),
    "cure_generation": ("tiny_llava", "cure", {"cure.mode": "generation"}, 0, None),
    "simpleqa": ("tiny_llama", "simpleqa", TEXT_OPTIONS, 0, scripted_judges.simpleqa_grades),
    "reform": ("tiny_llava", "reform", {}, 0, None),
    "lave": ("tiny_llava", "lave", {}, 0, scripted_judges.lave_ratings),
}
# details columns that hold what the model answered and how it was read and graded
ROW_KEYS = ("question_id", "part", "mode", "repeat", "extraction")
ROW_VALUES = ("prediction", "parsed_answer", "gold", "correct", "score", "grade", "judge_raw", "judge_rationale",
              "confidence", "choice_sum", "status", "rating", "lave", "rating_fallback", "vqa_accuracy", "anls",
              "exact_match", "bleu4", "cider", "dataset", "dimension", "form", "template_id", "mark_style", "options")
PROMPTS_AS_SENT = {"reform", "lave"}  # their prompt column was already the chat-templated text
# each case's run among the explorer's finished runs (the finished_runs fixture)
FINISHED_RUN = {"cure_likelihood": "vision-a", "cure_generation": "vision-b", "simpleqa": "text", "reform": "vision-a",
                "lave": "vision-a"}


def _plain(value):
    """JSON-comparable: NaN -> None, numpy scalars -> Python, floats rounded to 9 places."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 9)
    return value


def _scrub(obj, judge_url: str | None):
    """Drop what names this machine: the judge server's URL and the sample file's folder."""
    if isinstance(obj, dict):
        return {k: _scrub(v, judge_url) for k, v in obj.items() if k != "source" or not isinstance(v, str)}
    if isinstance(obj, list):
        return [_scrub(v, judge_url) for v in obj]
    if isinstance(obj, str) and judge_url:
        return obj.replace(judge_url, "<judge>")
    return _plain(obj)


def _rows(details: pd.DataFrame, benchmark: str) -> list[dict]:
    keep = [c for c in (*ROW_KEYS, *ROW_VALUES) if c in details.columns]
    if benchmark in PROMPTS_AS_SENT:
        keep.append("prompt")
    rows = [{c: _plain(row[c]) for c in keep} for _, row in details.iterrows()]
    return sorted(rows, key=lambda r: json.dumps([r.get(k) for k in ROW_KEYS], default=str))


def _read(out: Path, results: dict, benchmark: str, url: str | None) -> dict:
    block = results["benchmarks"][benchmark]
    details = pd.read_parquet(out / "details" / f"{benchmark}.parquet")
    return {"scores": _scrub(block["scores"], url), "counts": _scrub(block["counts"], url),
            "extra": _scrub(block["extra"], url), "rows": _scrub(_rows(details, benchmark), url)}


def _finished(case: str, request: pytest.FixtureRequest, finished_runs: dict) -> dict:
    """The case's numbers from the explorer's finished run, once that run is checked to be the case's run."""
    fixture, benchmark, options, limit, script = CASES[case]
    model = request.getfixturevalue(fixture)
    finished = finished_runs[FINISHED_RUN[case]]
    results = json.loads((finished.out_dir / "results.json").read_text())
    run = results["run"]
    assert (results["model"], results["revision"]) == (model.repo_id, model.sha)
    assert benchmark in results["benchmarks"] and run["suite"] == "sample" and run["limit"] == limit
    assert run["batch_size"] == 4 and run["judge"]["model"] == "scripted-judge"
    mine = {k: v for k, v in run["options"].items() if k.startswith(f"{benchmark}.")}
    assert mine == options, (case, run["options"])  # the others are options of the run's other benchmarks
    if script is not None:  # the same scripted judge: the explorer's plan (tests/explorer_runs.make_runs) names it
        assert JUDGES[FINISHED_RUN[case]] is script
    return _read(finished.out_dir, results, benchmark, run["judge"]["base_url"])


@pytest.mark.slow  # whole sample suites (finished_runs)
@pytest.mark.parametrize("case", list(CASES))
def test_sample_scores_match_the_recording(case, request, finished_runs):
    got = json.loads(json.dumps(_finished(case, request, finished_runs)))
    if RECORD:
        recorded = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
        recorded[case] = got
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        return
    expected = json.loads(GOLDEN.read_text())[case]
    assert got["scores"] == expected["scores"]
    assert got["counts"] == expected["counts"]
    assert got["extra"] == expected["extra"]
    assert len(got["rows"]) == len(expected["rows"])
    for mine, theirs in zip(got["rows"], expected["rows"]):
        assert mine == theirs
