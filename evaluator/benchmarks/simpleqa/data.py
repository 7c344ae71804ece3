"""SimpleQA data: the questions file (the official CSV, or our sample suite), read and checked."""
from __future__ import annotations

import ast
import csv
import io
from pathlib import Path

from evaluator.benchmarks.spec import PROPORTIONAL, Lite
from evaluator.inputs.sources import read_source

SAMPLE_PATH = Path(__file__).resolve().parent / "sample" / "simpleqa_sample.csv"
# Where the full suite is read from when the run's sources have no "simpleqa" entry (the official public file).
OFFICIAL_URL = "https://openaipublic.blob.core.windows.net/simple-evals/simple_qa_test_set.csv"


def suite_location(suite: str, sources: dict[str, str]) -> str | Path:
    """Our sample file, or the full suite's location (the source setting, else the official file)."""
    return SAMPLE_PATH if suite == "sample" else (sources.get("simpleqa") or OFFICIAL_URL)


def load_questions(source: str | Path) -> list[dict]:
    """Read SimpleQA questions from a local CSV, an http(s) URL or hf://datasets/<org>/<name>[@rev]/<file>.

    Accepts the official columns (metadata, problem, answer) and the renamed ones (metadata, question,
    true_answer). `metadata` is a Python-literal dict (ast.literal_eval) with topic, answer_type and urls.
    Each returned dict: question_id ("simpleqa-0042" from the row index), index, problem, answer, topic,
    answer_type, urls. Raises ValueError naming the row of a malformed record.
    """
    text, _ = read_source(str(source), "SimpleQA data")
    return parse_csv(text, str(source))


def _columns(fields: list[str], source: str) -> tuple[str, str]:
    """The question and answer columns of either naming; ValueError listing what was found."""
    q_col = "problem" if "problem" in fields else "question" if "question" in fields else None
    a_col = "answer" if "answer" in fields else "true_answer" if "true_answer" in fields else None
    if q_col is None or a_col is None or "metadata" not in fields:
        raise ValueError(f"{source}: expected columns metadata, problem, answer (or metadata, question, "
                         f"true_answer); found {', '.join(fields) or 'none'}")
    return q_col, a_col


def _metadata(raw: str, where: str) -> dict:
    try:
        meta = ast.literal_eval(raw.strip() or "{}")
    except (ValueError, SyntaxError):
        raise ValueError(f"{where}: metadata is not a Python-literal dict") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: metadata is not a dict")
    return meta


def parse_csv(text: str, source: str = "<text>") -> list[dict]:
    """Parse the CSV text of a SimpleQA file (see load_questions)."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    fields = [f.strip() for f in (reader.fieldnames or [])]
    reader.fieldnames = fields
    q_col, a_col = _columns(fields, source)
    questions = []
    for index, row in enumerate(reader):
        where = f"{source}: SimpleQA row {index}"
        problem = (row.get(q_col) or "").strip()
        answer = (row.get(a_col) or "").strip()
        if not problem:
            raise ValueError(f"{where}: empty question")
        if not answer:
            raise ValueError(f"{where}: empty answer")
        meta = _metadata(row.get("metadata") or "", where)
        urls = meta.get("urls") or []
        questions.append({
            "question_id": f"simpleqa-{index:04d}",
            "index": index,
            "problem": problem,
            "answer": answer,
            "topic": str(meta.get("topic") or ""),
            "answer_type": str(meta.get("answer_type") or ""),
            "urls": [str(u) for u in urls] if isinstance(urls, (list, tuple)) else [str(urls)],
        })
    return questions


# the full suite's strata for the lite rule: the official file's 4,326 questions by topic (its metadata), counted
# offline from OpenAI's simple_qa_test_set.csv
LITE_SUBSET = Lite(stratum="topic", allocation=PROPORTIONAL, size=1000,
                   strata=(("Science and technology", 858), ("Politics", 709), ("Art", 550), ("Other", 475),
                           ("Geography", 424), ("Sports", 368), ("Music", 341), ("TV shows", 293), ("History", 173),
                           ("Video games", 135)),
                   strata_basis="the official file's 4,326 questions by topic (its metadata column), counted offline",
                   key="its question text (the file has no ids)")
