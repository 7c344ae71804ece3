"""Results -> pandas DataFrames. The column schema is declared here, once.

Every column of the board (and of `leaderboard.parquet`) is one `Column`: where its value lives in a
results file, what kind of value it is, and what it means. The Leaderboard tab, the parquet file and the
About tab all read `COLUMNS`. Adding a benchmark's columns is one `benchmark_columns(...)` entry in `COLUMNS`.

Scores are fractions in 0..1 here (`leaderboard_frame`, the parquet file); `display_frame` turns them into
percentages with one decimal, and undefined scores (null / NaN) into "n/a", sorted last.
"""
from __future__ import annotations

import io
import json
import logging
import math
from datetime import timezone
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from leaderboard import queue as q
from leaderboard.store import Store

log = logging.getLogger(__name__)

# kinds of column
TEXT = "text"        # shown as is
SHA = "sha"          # a commit sha: full in the raw frame, 12 characters on the board
NUMBER = "number"    # a plain number (parameters in billions)
SCORE = "score"      # a fraction in 0..1 (or null), shown as a percentage
TIME = "time"        # an ISO timestamp

NA = "n/a"
LEADERBOARD_PATH = "leaderboard.parquet"


@dataclass(frozen=True)
class Column:
    """One column of the board.

    name: machine name (the raw frame and the parquet file); label: header shown on the board;
    path: keys leading to the value in a results file; group: "model", "run" or a benchmark's name;
    shown: False for columns that are only in the raw frame / parquet file.
    """

    name: str
    label: str
    path: tuple[str, ...]
    kind: str
    description: str
    group: str = "model"
    shown: bool = True


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's place on the board: its group name, title and a one-line summary for the About tab."""

    name: str
    title: str
    summary: str


METRIC_LABELS = {  # where "<metric> with spaces" reads badly
    "f_score": "F-score", "lave": "score", "vqa_accuracy": "VQA accuracy", "anls": "ANLS", "bleu4": "BLEU-4",
}


def benchmark_columns(benchmark: str, title: str, metrics: Sequence[tuple[str, str]]) -> list[Column]:
    """Score columns of one benchmark: `metrics` lists (metric key in results["benchmarks"][benchmark]["scores"],
    description). Labels are "<title> <metric>" (METRIC_LABELS can rename a metric), names "<benchmark>_<metric>"."""
    return [
        Column(name=f"{benchmark}_{metric}", label=f"{title} {METRIC_LABELS.get(metric, metric.replace('_', ' '))}",
               path=("benchmarks", benchmark, "scores", metric), kind=SCORE, description=description,
               group=benchmark)
        for metric, description in metrics
    ]


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("cure", "CURE", "Chain-of-thought visual reasoning and its consistency (arXiv 2309.04461): each item "
              "has a high-level inference about a marked image region and a chain of 2-4 sub-questions leading to it, "
              "all 6-way multiple choice. How it runs here: the region is drawn on the full image as a thick red "
              "rectangle (not cropped, so the context stays visible); each question is answered by option "
              "likelihood, choosing the candidate with the highest mean log-likelihood per token (the choice by "
              "summed log-likelihood is kept in the details); a text-only model skips CURE; an image that cannot be "
              "fetched is counted and reported per item and left out of the scores."),
    Benchmark("simpleqa", "SimpleQA", "Short-form factuality (OpenAI): the model gets the bare question; an LLM judge "
              "grades each answer against the gold answer as correct, incorrect (contradicts it, even hedged) or not "
              "attempted. Fractions are of the graded answers; an answer the judge could not grade is counted and "
              "shown, never scored as wrong. The judge's identity and the grader prompt's hash are in each results "
              "file."),
    Benchmark("reform", "ReForm", "ReForm-Eval (arXiv 2310.02569): existing vision-language datasets re-formulated "
              "into multiple choice, OCR, key-information extraction and captioning, in 8 dimensions (coarse and "
              "fine perception, scene text, grounded reasoning, spatial, cross-modal inference, description, "
              "multi-turn dialogue). Multiple choice is asked 5 times per item with our own varied instructions, "
              "shuffled options and mark styles, both by generation (first (X) mark; format hit rate reported) and "
              "by option likelihood; instability is the entropy of the repeated answers. Per-dimension scores are "
              "in the results files."),
    Benchmark("lave", "LAVE", "LLM-assisted VQA evaluation (arXiv 2310.02567): the model answers questions about "
              "images freely; an LLM judge rates each answer 1-3 against the reference answers, with a one-sentence "
              "rationale, from our own task text and demonstrations (yes/no questions get yes/no demonstrations; "
              "rare reference answers are filtered out). The same answers are scored by VQA accuracy, ANLS, exact "
              "match, BLEU-4 and CIDEr, and the results say how often each strict metric agrees with LAVE: on the "
              "Docmatix zero-shot study, strict metrics scored near zero where LAVE gave 0.58."),
)

# ReForm-Eval per-dimension scores (generation and likelihood): hidden by default, selectable on the board.
REFORM_DIMENSIONS = {
    "coarse_perception": "coarse perception", "fine_perception": "fine perception", "scene_text": "scene text",
    "visual_reasoning": "visual reasoning", "spatial": "spatial", "cross_modal_inference": "cross-modal inference",
    "description": "description", "multi_turn_dialogue": "multi-turn dialogue",
}
REFORM_DIMENSION_COLUMNS: tuple[Column, ...] = tuple(
    Column(f"reform_{mode}_{dim}", f"ReForm {mode} {label}", ("benchmarks", "reform", "scores", f"{mode}_{dim}"),
           SCORE, f"ReForm-Eval {label} ({'generation' if mode == 'gen' else 'likelihood'} mode): the mean of the "
           "dimension's dataset scores (accuracy over the repeats; captioning: CIDEr).", group="reform", shown=False)
    for mode in ("gen", "lik") for dim, label in REFORM_DIMENSIONS.items())
# How often LAVE and each strict string metric agree on correct vs not: hidden by default, selectable on the board.
LAVE_STRING_METRICS = {"vqa_accuracy": "VQA accuracy", "anls": "ANLS", "exact_match": "exact match",
                       "bleu4": "BLEU-4", "cider": "CIDEr"}
LAVE_AGREEMENT_COLUMNS: tuple[Column, ...] = tuple(
    Column(f"lave_agree_{metric}", f"LAVE agrees with {label}",
           ("benchmarks", "lave", "extra", "agreement", metric, "agreement"), SCORE,
           f"Share of answered items where LAVE and {label} agree on correct vs not (LAVE correct = rating 3; "
           f"{label} correct at or above its threshold in the results file). The rest is what one of them misses; "
           "the Spearman correlation of the per-item scores is in the results file.", group="lave", shown=False)
    for metric, label in LAVE_STRING_METRICS.items())
EXTRA_COLUMNS: tuple[Column, ...] = REFORM_DIMENSION_COLUMNS + LAVE_AGREEMENT_COLUMNS


def lave_agreement_frame(result: dict | None) -> pd.DataFrame:
    """One run's LAVE beside each strict metric: its score, how often it agrees with LAVE on correct vs not, the
    Spearman correlation of the per-item scores and the items compared (empty when the run has no LAVE)."""
    headers = ["Metric", "Score", "Agrees with LAVE", "Spearman", "Items"]
    lave = ((result or {}).get("benchmarks") or {}).get("lave") or {}
    if not lave.get("scores"):
        return pd.DataFrame(columns=headers)

    def number(value, percent: bool) -> str:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
            return NA
        return f"{100 * value:.1f}" if percent else f"{value:.3f}"

    counts = lave.get("counts") or {}
    ratings = (lave.get("extra") or {}).get("ratings") or {}
    spread = ", ".join(f"{ratings.get(k, 0)} rated {k}" for k in ("3", "2", "1"))
    rows = [["LAVE", number(lave["scores"].get("lave"), True), "-", "-",
             f"{counts.get('rated', 0)} rated ({spread}; {counts.get('rating_fallback', 0)} without a rating "
             f"counted as 2; {counts.get('unrated', 0)} unrated)"]]
    agreement = (lave.get("extra") or {}).get("agreement") or {}
    for metric, label in LAVE_STRING_METRICS.items():
        agree = agreement.get(metric) or {}
        rows.append([label, number(lave["scores"].get(metric), metric != "cider"),
                     number(agree.get("agreement"), True), number(agree.get("spearman"), False),
                     str(agree.get("n", 0))])
    return pd.DataFrame(rows, columns=headers)
OPTIONAL_COLUMNS: tuple[str, ...] = tuple(c.name for c in EXTRA_COLUMNS)  # addable to the board

COLUMNS: tuple[Column, ...] = (
    Column("model", "Model", ("model",), TEXT, "The Hugging Face Hub model id (or local folder) that was evaluated."),
    Column("revision", "Revision", ("revision",), SHA,
           "The commit the model was pinned to (first 12 characters of the sha on the board)."),
    Column("precision", "Precision", ("precision",), TEXT, "The precision requested at submission (auto: bfloat16 on GPU, float32 on CPU)."),
    Column("model_type", "Type", ("model_type",), TEXT, "The model type given at submission: " + ", ".join(q.MODEL_TYPES) + "."),
    Column("params_billions", "Params (B)", ("params_billions",), NUMBER, "Number of parameters, in billions."),
    *benchmark_columns("cure", "CURE", [
        ("Ro", "Overall reasoning: share of items where the high-level inference AND every step of the chain are "
               "answered correctly (mean of h and s). The default ranking."),
        ("Rh", "High-level reasoning: share of items whose high-level inference is answered correctly."),
        ("Rcot", "Chain-of-thought reasoning: share of items whose whole chain is answered correctly (all-or-nothing "
                 "per item, not the per-step accuracy)."),
        ("Cf", "Forward consistency, Ro / Rcot: P(high-level correct | whole chain correct). n/a when Rcot is 0."),
        ("Cb", "Backward consistency, Ro / Rh: P(whole chain correct | high-level correct). n/a when Rh is 0."),
        ("step_accuracy", "Mean per-step accuracy over all sub-questions of all chains."),
    ]),
    *benchmark_columns("simpleqa", "SimpleQA", [
        ("correct", "Share of graded answers that give the gold answer without contradicting it."),
        ("not_attempted", "Share of graded answers that give no answer and contradict nothing (\"I don't know\")."),
        ("incorrect", "Share of graded answers that contradict the gold answer."),
        ("correct_given_attempted", "Correct / (correct + incorrect): accuracy when the model does answer (0 when it "
                                    "never does)."),
        ("f_score", "Harmonic mean of correct and correct given attempted."),
    ]),
    Column("simpleqa_ungraded", "SimpleQA ungraded", ("benchmarks", "simpleqa", "counts", "ungraded"), NUMBER,
           "Answers the judge could not grade (it failed after its retries, or its reply had no grade line): "
           "counted here and left out of the fractions, never scored as wrong.", group="simpleqa"),
    *benchmark_columns("reform", "ReForm", [
        ("gen_overall", "Generation (black-box) score: options listed as (A) x; (B) y; ... after a one-shot format "
                        "example, the answer is the first (X) mark; 5 repeats per item with varied instruction, "
                        "option order and mark style. Mean over the 8 dimensions of the mean over their datasets "
                        "(accuracy; captioning: CIDEr; OCR / key-information extraction: word accuracy)."),
        ("lik_overall", "Likelihood (white-box) score: options not listed; each option text is scored as the reply "
                        "and the highest summed log-likelihood is the choice; 5 repeats with varied instruction and "
                        "option order. Averaged over dimensions as for generation (the free-form dimensions are "
                        "answered by generation)."),
    ]),
    Column("reform_instability", "ReForm instability", ("benchmarks", "reform", "scores", "instability"), NUMBER,
           "Generation mode: mean over multiple-choice items of the entropy (natural log) of the 5 repeats' chosen "
           "option texts; 0 = always the same answer, ln 5 = 1.609 = a different answer every time. An output "
           "without a mark counts as its own answer. Not a percentage.", group="reform"),
    *benchmark_columns("reform", "ReForm", [
        ("format_hit_rate", "Generation mode: share of multiple-choice outputs that contain an option mark such as "
                            "(A), (a) or (1)."),
    ]),
    *benchmark_columns("lave", "LAVE", [
        ("lave", "LLM-assisted VQA score: the judge rates each free-form answer 1 (incorrect), 2 (ambiguous or "
                 "incomplete) or 3 (correct) against the reference answers; mean of (rating - 1) / 2. A reply "
                 "without a rating counts as 2 (the paper's rule) and is flagged in the details."),
        ("vqa_accuracy", "Official VQA accuracy of the same answers: min(1, matching annotators / 3) averaged over "
                         "the 10 leave-one-out subsets, after the official answer normalisation."),
        ("anls", "Average normalised Levenshtein similarity to the closest reference (0 below similarity 0.5)."),
        ("exact_match", "Share of answers equal to a reference after the VQA answer normalisation."),
        ("bleu4", "Corpus BLEU-4 of the answers against the references (pycocoevalcap, raw strings)."),
    ]),
    Column("lave_cider", "LAVE CIDEr", ("benchmarks", "lave", "scores", "cider"), NUMBER,
           "Corpus CIDEr of the answers against the references (pycocoevalcap, raw strings). Not a percentage; "
           "comparable only over the same item set.", group="lave"),
    Column("lave_unrated", "LAVE unrated", ("benchmarks", "lave", "counts", "unrated"), NUMBER,
           "Answers the judge could not rate (its call failed after the retries): counted here and left out of "
           "LAVE, never scored as wrong.", group="lave"),
    Column("suite", "Suite", ("run", "suite"), TEXT,
           "sample (the small suites shipped with the project) or full (the benchmarks' complete data); runs on "
           "different suites are not comparable."),
    # in the raw frame and leaderboard.parquet only; these can be added to the board
    *EXTRA_COLUMNS,
    Column("key", "Key", ("key",), TEXT, "<org>/<model>/<sha12>_<precision>: names the request, results and details.",
           group="run", shown=False),
    Column("architecture", "Architecture", ("architecture",), TEXT, "The model's architecture class.", group="run", shown=False),
    Column("dtype", "Dtype", ("run", "dtype"), TEXT, "The dtype the weights were loaded in.", group="run", shown=False),
    Column("device", "Device", ("run", "device"), TEXT, "cuda or cpu.", group="run", shown=False),
    Column("submitted_time", "Submitted", ("submitted_time",), TIME, "When the request was submitted (UTC).",
           group="run", shown=False),
    Column("finished_time", "Finished", ("finished_time",), TIME, "When the run finished (UTC).", group="run", shown=False),
)

DEFAULT_SORT = "cure_Ro"  # descending, undefined last; ties by model name
SIZE_BUCKETS: tuple[str, ...] = ("<1B", "1-3B", "3-7B", "7-15B", ">15B", "unknown")

SHOWN: tuple[Column, ...] = tuple(c for c in COLUMNS if c.shown)
_BY_NAME = {c.name: c for c in COLUMNS}


def column(name: str) -> Column:
    return _BY_NAME[name]


def score_columns() -> list[Column]:
    return [c for c in COLUMNS if c.kind == SCORE]


def display_headers() -> list[str]:
    """The board's headers, in order."""
    return [c.label for c in SHOWN]


# ---------------------------------------------------------------------------------------------------------------
# results -> raw frame

def load_results(store: Store) -> list[dict]:
    """Every results file in the store; a file that cannot be read or is not a results object is skipped (logged)."""
    found = []
    for path in store.list("results", suffix=".json"):
        try:
            data = store.read_json(path)
        except (ValueError, OSError) as exc:  # malformed JSON, a vanished file
            log.warning("skipping unreadable results file %s: %s", path, exc)
            continue
        if isinstance(data, dict) and isinstance(data.get("model"), str):
            found.append(data)
        else:
            log.warning("skipping results file %s: not a results object", path)
    return found


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _as_float(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


def leaderboard_frame(results: Iterable[dict]) -> pd.DataFrame:
    """One row per run, machine column names (every column of COLUMNS), raw values: scores are fractions or NaN."""
    rows = []
    for result in results:
        row = {}
        for col in COLUMNS:
            value = _get(result, col.path)
            if col.kind in (SCORE, NUMBER):
                row[col.name] = _as_float(value)
            else:
                row[col.name] = None if value is None else str(value)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[c.name for c in COLUMNS])
    for col in COLUMNS:
        if col.kind in (SCORE, NUMBER):
            frame[col.name] = frame[col.name].astype("float64")
        else:
            frame[col.name] = frame[col.name].astype(object)
    return frame


# ---------------------------------------------------------------------------------------------------------------
# raw frame -> what the board shows

def size_bucket(params_billions: float | None) -> str:
    """"<1B", "1-3B", "3-7B", "7-15B" (15 included), ">15B", or "unknown"."""
    p = _as_float(params_billions)
    if math.isnan(p):
        return "unknown"
    if p < 1:
        return "<1B"
    if p < 3:
        return "1-3B"
    if p < 7:
        return "3-7B"
    if p <= 15:
        return "7-15B"
    return ">15B"


def format_score(value: Any) -> str:
    """A fraction as a percentage with one decimal; null / NaN as "n/a"."""
    number = _as_float(value)
    return NA if math.isnan(number) else f"{number * 100:.1f}"


def format_params(value: Any) -> str:
    number = _as_float(value)
    if math.isnan(number):
        return NA
    return np.format_float_positional(number, precision=3, unique=False, fractional=False, trim="-")


def _format(col: Column, value: Any) -> str:
    if col.kind == SCORE:
        return format_score(value)
    if col.kind == NUMBER:
        return format_params(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = str(value)
    if col.kind == SHA:
        return text[:12]
    if col.kind == TIME:
        return format_time(text)
    return text


def sort_runs(df: pd.DataFrame, by: str = DEFAULT_SORT, ascending: bool = False) -> pd.DataFrame:
    """Sort by one raw column with NaN last (either direction); ties by model name."""
    if df.empty or by not in df.columns:
        return df
    return df.sort_values([by, "model"], ascending=[ascending, True], na_position="last", kind="stable")


def filter_runs(df: pd.DataFrame, search: str = "", model_types: Sequence[str] = (),
                sizes: Sequence[str] = ()) -> pd.DataFrame:
    """Rows whose model name contains `search` (case-insensitive; several terms separated by ';' match any),
    whose type is one of `model_types` and whose size bucket is one of `sizes` (empty: no filter)."""
    mask = pd.Series(True, index=df.index)
    terms = [t.strip().lower() for t in (search or "").split(";") if t.strip()]
    if terms:
        names = df["model"].fillna("").astype(str).str.lower()
        hit = pd.Series(False, index=df.index)
        for term in terms:
            hit |= names.str.contains(term, regex=False)
        mask &= hit
    if model_types:
        mask &= df["model_type"].isin(list(model_types))
    if sizes:
        mask &= df["params_billions"].map(size_bucket).isin(list(sizes))
    return df[mask]


def board_columns(extra: Sequence[str] = ()) -> list[Column]:
    """The board's columns: the shown ones, plus the optional columns named in `extra` (OPTIONAL_COLUMNS) just
    before "Suite", in schema order."""
    chosen = [c for c in COLUMNS if c.name in set(extra or ()) and c.name in OPTIONAL_COLUMNS]
    base = list(SHOWN)
    at = next((i for i, c in enumerate(base) if c.name == "suite"), len(base))
    return base[:at] + chosen + base[at:]


def board_frame(df: pd.DataFrame, search: str = "", model_types: Sequence[str] = (),
                sizes: Sequence[str] = (), extra: Sequence[str] = ()) -> pd.DataFrame:
    """The board with typed values: shown columns under their labels, filtered, sorted by the default column
    descending with undefined last; scores as percentages rounded to one decimal (NaN: undefined), parameters in
    billions (NaN: unknown), everything else text. `display_frame` and `board_table` format it."""
    rows = sort_runs(filter_runs(df, search, model_types or (), sizes or ()))
    cols = board_columns(extra)
    data = {}
    for c in cols:
        if c.kind == SCORE:
            data[c.label] = [round(v * 100, 1) if not math.isnan(v) else math.nan
                             for v in (_as_float(x) for x in rows[c.name])]
        elif c.kind == NUMBER:
            data[c.label] = [_as_float(x) for x in rows[c.name]]
        else:
            data[c.label] = [_format(c, x) for x in rows[c.name]]
    out = pd.DataFrame(data, columns=[c.label for c in cols])
    for c in cols:
        out[c.label] = out[c.label].astype("float64" if c.kind in (SCORE, NUMBER) else object)
    return out.reset_index(drop=True)


def _cell_text(c: Column, value: Any) -> str:
    if c.kind == SCORE:
        return format_score(None if value is None or math.isnan(value) else value / 100)
    if c.kind == NUMBER:
        return format_params(value)
    return "" if value is None else str(value)


def display_frame(df: pd.DataFrame, search: str = "", model_types: Sequence[str] = (),
                  sizes: Sequence[str] = ()) -> pd.DataFrame:
    """The board as text: shown columns under their labels, percentages with one decimal, "n/a" for undefined,
    filtered, sorted by the default column descending with n/a last."""
    board = board_frame(df, search, model_types, sizes)
    out = pd.DataFrame({c.label: [_cell_text(c, v) for v in board[c.label]] for c in SHOWN}, columns=display_headers())
    return out.astype(object)


def board_table(board: pd.DataFrame) -> dict:
    """`board_frame`'s output as the value gr.Dataframe takes: `data` holds the numbers (None when undefined), so
    sorting a column in the browser is numeric, and `metadata.display_value` the text shown, the same as
    `display_frame` ("54.6", "n/a"; undefined sorts as the lowest value). Built directly: a pandas Styler does
    the same but takes seconds for a thousand rows."""
    by_label = {c.label: c for c in COLUMNS}
    cols = [by_label[label] for label in board.columns]
    headers = [c.label for c in cols]
    data, text = [], []
    columns = [(c, board[c.label].tolist()) for c in cols]
    for i in range(len(board)):
        row, shown = [], []
        for c, values in columns:
            value = values[i]
            if c.kind in (SCORE, NUMBER):
                value = None if value is None or math.isnan(value) else float(value)
            else:
                value = "" if value is None else str(value)
            row.append(value)
            shown.append(_cell_text(c, math.nan if value is None else value))
        data.append(row)
        text.append(shown)
    metadata = {"display_value": text, "styling": [[""] * len(headers) for _ in text]} if data else None
    return {"headers": headers, "data": data, "metadata": metadata}


# ---------------------------------------------------------------------------------------------------------------
# the queue

def format_time(text: str | None) -> str:
    """ISO time -> 'YYYY-MM-DD HH:MM:SS UTC' (text that does not parse is shown as is)."""
    if not text:
        return ""
    try:
        moment = q.parse_time(text)
    except ValueError:
        return str(text)
    if moment is None:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + " UTC"


def progress_text(progress: dict | None) -> str:
    """{"benchmark": "cure", "done": 12, "total": 20, "rate": 1.4} -> "cure 12/20 (1.4 it/s)"."""
    if not progress:
        return "starting"
    bench = str(progress.get("benchmark") or "").strip()
    done, total, rate = progress.get("done"), progress.get("total"), progress.get("rate")
    parts = [bench] if bench else []
    if done is not None and total:
        parts.append(f"{done}/{total}")
    elif done is not None:
        parts.append(str(done))
    rate_f = _as_float(rate)
    if not math.isnan(rate_f) and rate_f > 0:
        parts.append(f"({rate_f:.1f} it/s)")
    text = " ".join(parts)
    if not text:
        stage = progress.get("stage") or progress.get("message")
        text = str(stage) if stage else "running"
    return text


# queue column label -> function of (request, position)
_QUEUE_CELLS = {
    "#": lambda r, pos: str(pos) if pos else "",
    "Model": lambda r, pos: r.model,
    "Revision": lambda r, pos: (r.revision or "")[:12],
    "Precision": lambda r, pos: r.precision,
    "Type": lambda r, pos: r.model_type,
    "Submitted": lambda r, pos: format_time(r.submitted_time),
    "Started": lambda r, pos: format_time(r.started_time),
    "Finished": lambda r, pos: format_time(r.finished_time),
    "Cancelled": lambda r, pos: format_time(r.finished_time),
    "Attempts": lambda r, pos: str(r.attempts),
    "Progress": lambda r, pos: progress_text(r.progress),
    "Note": lambda r, pos: r.error or "",
    "Error": lambda r, pos: r.error or "",
    "Log tail": lambda r, pos: r.log_tail or "",
    "Key": lambda r, pos: r.key,
}

QUEUE_COLUMNS: dict[str, tuple[str, ...]] = {
    q.PENDING: ("#", "Model", "Revision", "Precision", "Type", "Submitted", "Attempts", "Note", "Key"),
    q.RUNNING: ("Model", "Revision", "Precision", "Type", "Submitted", "Started", "Attempts", "Progress", "Key"),
    q.FINISHED: ("Model", "Revision", "Precision", "Type", "Submitted", "Started", "Finished", "Attempts", "Key"),
    q.FAILED: ("Model", "Revision", "Precision", "Type", "Submitted", "Finished", "Attempts", "Error", "Log tail", "Key"),
    q.CANCELLED: ("Model", "Revision", "Precision", "Type", "Submitted", "Cancelled", "Key"),
}


def queue_frame(requests: Iterable[q.Request], status: str) -> pd.DataFrame:
    """Requests in one status, as text. PENDING: queue order (oldest first) with the position;
    RUNNING: oldest start first; the others: most recently finished first."""
    if status not in QUEUE_COLUMNS:
        raise ValueError(f"unknown status {status!r}")
    chosen = [r for r in requests if r.status == status]
    if status == q.PENDING:
        chosen.sort(key=lambda r: (r.submitted_time or "", r.path))
    elif status == q.RUNNING:
        chosen.sort(key=lambda r: (r.started_time or "", r.path))
    else:
        chosen.sort(key=lambda r: (r.finished_time or r.submitted_time or "", r.path), reverse=True)
    labels = QUEUE_COLUMNS[status]
    rows = [[_QUEUE_CELLS[label](r, i + 1 if status == q.PENDING else 0) for label in labels]
            for i, r in enumerate(chosen)]
    return pd.DataFrame(rows, columns=list(labels), dtype=object)


# ---------------------------------------------------------------------------------------------------------------
# leaderboard.parquet

def parquet_bytes(df: pd.DataFrame) -> bytes:
    """The raw frame as parquet (pyarrow), with explicit types so an empty board is a valid file too."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = []
    arrays = []
    for col in COLUMNS:
        values = df[col.name].tolist() if col.name in df.columns else [None] * len(df)
        if col.kind in (SCORE, NUMBER):
            typ = pa.float64()
            values = [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in values]
        else:
            typ = pa.string()
            values = [None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in values]
        fields.append(pa.field(col.name, typ, metadata={"label": col.label, "description": col.description}))
        arrays.append(pa.array(values, type=typ))
    schema = pa.schema(fields, metadata={"columns": json.dumps([c.name for c in COLUMNS])})
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), buffer)
    return buffer.getvalue()


def rebuild_leaderboard(store: Store) -> pd.DataFrame:
    """Rebuild `leaderboard.parquet` (one row per finished run, raw fractions) from the results in the store."""
    df = sort_runs(leaderboard_frame(load_results(store))).reset_index(drop=True)
    store.write_bytes(LEADERBOARD_PATH, parquet_bytes(df))
    return df


def load_board(store: Store) -> pd.DataFrame:
    """The raw board frame, read from `leaderboard.parquet` (one file, however many runs).

    Without that file, or when it predates a column of the schema (a benchmark was added), the frame is built from
    the results files instead (and the file rewritten in the second case).
    """
    data = store.read_bytes(LEADERBOARD_PATH)
    if data is None:
        return leaderboard_frame(load_results(store))
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # a damaged file must not take the board down
        log.warning("leaderboard.parquet unreadable (%s); rebuilding it from the results", exc)
        return rebuild_leaderboard(store)
    if [c.name for c in COLUMNS if c.name not in frame.columns]:
        return rebuild_leaderboard(store)
    for col in COLUMNS:
        frame[col.name] = frame[col.name].astype("float64" if col.kind in (SCORE, NUMBER) else object)
    return frame[[c.name for c in COLUMNS]]
