"""Small details of every benchmark written by hand, as a run's details files hold them, for the tests of two runs
compared (tests/test_compare_runs.py works out each comparison by hand; tests/test_cli.py runs the command on them)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from evaluator import api
from evaluator.runs.details import write_details

OPTIONS = json.dumps(["one", "two", "three", "four", "five", "six"])


# --------------------------------------------------------------------------------------------- details by hand

def cure_instance(qid: str, rights: list[bool], status: str = "ok") -> list[dict]:
    """An instance's rows: its chain's steps (all of `rights` but the last) then its high-level inference (the last)."""
    steps = len(rights) - 1
    parts = [f"step{k}" for k in range(1, steps + 1)] + ["high"]
    return [{"benchmark": "cure", "question_id": qid, "part": part, "repeat": 0, "question": f"{qid} {part}?",
             "parsed_answer": 0 if right else 1, "gold": 0, "correct": right, "score": float(right),
             "extraction": "likelihood", "status": status, "error": "", "chain_length": steps, "options": OPTIONS}
            for part, right in zip(parts, rights)]


def reform_question(qid: str, mode: str, rights: list[bool]) -> list[dict]:
    """A multiple-choice question's repeats (its wordings) in one mode."""
    extraction = "mark" if mode == "generation" else "likelihood"
    return [{"benchmark": "reform", "question_id": qid, "dataset": "ds", "dimension": "coarse_perception",
             "form": "multiple_choice", "mode": mode, "repeat": r, "question": f"{qid}?",
             "parsed_answer": "0" if right else "1", "gold": "0", "correct": right, "score": float(right),
             "extraction": extraction, "options": json.dumps(["yes", "no"])} for r, right in enumerate(rights)]


def reform_caption(qid: str) -> list[dict]:
    """A caption: scored with its dataset (CIDEr), no score of its own."""
    return [{"benchmark": "reform", "question_id": qid, "dataset": "caps", "dimension": "description",
             "form": "caption", "mode": "generation", "repeat": 0, "question": "Describe it.",
             "parsed_answer": "a cat", "gold": json.dumps(["a cat"]), "correct": False, "score": math.nan,
             "extraction": "caption", "options": "[]"}]


def simpleqa_question(qid: str, grade: str, samples: int = 0) -> list[dict]:
    """A question's graded answer (grade A, B, C, or "" ungraded) and its unscored samples."""
    score = {"A": 1.0, "B": 0.0, "C": 0.0}.get(grade, math.nan)
    answer = {"benchmark": "simpleqa", "question_id": qid, "part": "answer", "repeat": 0, "question": f"{qid}?",
              "parsed_answer": "an answer", "gold": "the gold", "correct": grade == "A", "score": score,
              "grade": grade, "extraction": "judge", "topic": "Art", "answer_type": "Person"}
    return [answer] + [{**answer, "part": f"sample{k}", "repeat": k, "grade": "", "score": math.nan,
                        "correct": False, "extraction": "normalised (not graded)"} for k in range(1, samples + 1)]


def lave_question(qid: str, rating: int | None) -> list[dict]:
    lave = (rating - 1) / 2 if rating else math.nan
    return [{"benchmark": "lave", "question_id": qid, "source": "sample", "kind": "what", "style": "vqa",
             "status": "ok", "error": "", "question": f"{qid}?", "parsed_answer": "an answer",
             "gold": json.dumps(["an answer"]), "rating": float(rating) if rating else math.nan, "lave": lave,
             "correct": rating == 3, "score": lave, "extraction": "judge"}]


def stored(rows: list[dict], benchmark: str, path: Path) -> pd.DataFrame:
    """The rows as a details file holds them (written with the card's schema, read back)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_details(path, rows, api.card(benchmark))
    return pd.read_parquet(path)


CURE_A = [*cure_instance("c1", [True, True, True]), *cure_instance("c2", [False, True, True]),
          *cure_instance("c3", [True, True]), *cure_instance("c4", [True, True], status="image_unavailable")]
CURE_B = [*cure_instance("c1", [True, True, True]), *cure_instance("c2", [True, True, True]),
          *cure_instance("c3", [True, False]), *cure_instance("c4", [True, True])]
REFORM_A = [*reform_question("q1", "generation", [True, True, False]), *reform_question("q1", "likelihood", [True] * 3),
            *reform_question("q2", "generation", [False] * 3), *reform_caption("cap")]
REFORM_B = [*reform_question("q1", "generation", [True] * 3), *reform_question("q1", "likelihood", [False] * 3),
            *reform_question("q2", "generation", [True] * 3), *reform_caption("cap")]
SIMPLEQA_A = [*simpleqa_question("s1", "A", samples=2), *simpleqa_question("s2", "C"), *simpleqa_question("s3", "B"),
              *simpleqa_question("s4", ""), *simpleqa_question("s5", "A")]
SIMPLEQA_B = [*simpleqa_question("s1", "B"), *simpleqa_question("s2", "A"), *simpleqa_question("s3", "B"),
              *simpleqa_question("s4", "A"), *simpleqa_question("s5", "A", samples=1)]
LAVE_A = [*lave_question("l1", 3), *lave_question("l2", 2), *lave_question("l3", 1), *lave_question("l4", 3)]
LAVE_B = [*lave_question("l1", 2), *lave_question("l2", 2), *lave_question("l3", 3)]
RUNS = {"cure": (CURE_A, CURE_B), "reform": (REFORM_A, REFORM_B), "simpleqa": (SIMPLEQA_A, SIMPLEQA_B),
        "lave": (LAVE_A, LAVE_B)}


def results_folder(root: Path, name: str, details: dict[str, list[dict]], suite: str = "sample", limit: int = 0,
                   revision: str | None = None) -> Path:
    folder = root / name
    for benchmark, rows in details.items():
        stored(rows, benchmark, folder / "details" / f"{benchmark}.parquet")
    results = {"model": f"org/{name}", "revision": revision, "run": {"suite": suite, "limit": limit},
               "benchmarks": {benchmark: {"scores": {}} for benchmark in details}}
    (folder / "results.json").write_text(json.dumps(results))
    return folder
