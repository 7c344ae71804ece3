"""Shared pieces of the benchmarks' explorer views (ItemView.key / items / parts / picture): the item table's
shape, outcomes from scores, and the texts every opened question shows."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd
from PIL import Image

from evaluator.benchmarks.spec import (CORRECT, IMAGE_UNAVAILABLE, ITEM_COLUMNS, PARTLY, UNGRADED, WRONG, Measure,
                                      ScoreContext)
from evaluator.inputs.images import ImageUnavailable, fetch_image_ref, is_url

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def text(value: Any) -> str:
    """A details value as text: "" for None / NaN, numbers without a trailing ".0"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def json_list(value: Any) -> list:
    """A JSON list stored as text (options, gold answers); [] for anything else."""
    try:
        found = json.loads(value) if isinstance(value, str) and value else []
    except (ValueError, RecursionError, MemoryError):  # damaged text: too deeply nested or too large counts too
        return []
    return found if isinstance(found, list) else []


def gold_text(value: Any) -> str:
    """Gold answers stored as a JSON list, as one line ("a | b"); any other text as it is."""
    found = json_list(value) if isinstance(value, str) and value.startswith("[") else None
    return " | ".join(text(v) for v in found) if found is not None else text(value)


def by_question(details: pd.DataFrame) -> pd.Series:
    """The default ItemView.key: one question per question_id."""
    return details["question_id"].astype(str)


def outcomes(score: pd.Series, unavailable: pd.Series | None = None, ungraded: pd.Series | None = None) -> pd.Series:
    """correct (score 1), wrong (0), partly correct (in between), ungraded (no score), image unavailable."""
    values = np.where(score.isna(), UNGRADED, np.where(score >= 1, CORRECT, np.where(score <= 0, WRONG, PARTLY)))
    out = pd.Series(values, index=score.index, dtype=object)
    if ungraded is not None:
        out[ungraded.reindex(out.index, fill_value=False).astype(bool)] = UNGRADED
    if unavailable is not None:
        out[unavailable.reindex(out.index, fill_value=False).astype(bool)] = IMAGE_UNAVAILABLE
    return out


def item_table(columns: dict[str, Iterable], group_by: Iterable[str] = ()) -> pd.DataFrame:
    """The item table in its declared shape: ITEM_COLUMNS then the group columns, with fixed types."""
    frame = pd.DataFrame({name: list(values) if not isinstance(values, pd.Series) else values.tolist()
                          for name, values in columns.items()})
    order = [*ITEM_COLUMNS, *group_by]
    for name in order:
        if name not in frame:
            frame[name] = False if name == "no_mark" else (math.nan if name == "score" else "")
    frame = frame[order].reset_index(drop=True)
    frame["score"] = pd.to_numeric(frame["score"], errors="coerce").astype("float64")
    frame["no_mark"] = frame["no_mark"].fillna(False).astype(bool)
    for name in order:
        if name not in ("score", "no_mark"):
            frame[name] = frame[name].map(text).astype(object)
    return frame


def scored_again(score: Callable[[list[dict], ScoreContext], Any], details: pd.DataFrame, key: str,
                 options: dict[str, str] | None = None) -> float:
    """A board metric scored again by the benchmark's own `score` on these details rows, as the run scored it (NaN
    when they hold none, or the metric is undefined on them): the explorer's headline for a board score."""
    if details.empty:
        return math.nan
    found = score([dict(r) for r in details.to_dict("records")], ScoreContext(options=dict(options or {})))
    value = found.scores.get(key, math.nan)
    return float(value) if value is not None else math.nan


def thought_text(row: dict, where: str = "") -> tuple[str, str] | None:
    """A thinking model's thought in a row, as (label with its tokens, text), or None when the reply had none."""
    thought = row.get("reasoning")
    unclosed = row.get("thought_unclosed") is True
    if not (isinstance(thought, str) and thought) and not unclosed:
        return None
    tokens = row.get("reasoning_tokens")
    count = f"{int(tokens)} tokens" if isinstance(tokens, (int, float)) and tokens == tokens else "tokens not counted"
    said = "it never closed, so the reply has no answer" if unclosed else "not parsed"
    return f"Thought{where} ({count}; {said})", text(thought)


def near_ties_text(row: dict, where: str = "") -> tuple[str, str] | None:
    """A reply's near ties (evaluator.models.near_ties) as (label with their count, one line each), or None when it
    recorded none: the steps where a batch of another size may have answered otherwise."""
    try:
        ties = json.loads(row.get("near_ties") or "[]")
        lines = [f"step {t['step']}: " + (f"the draw fell {t['margin']:.3g} (probability) from the edge between "
                                          if t.get("kind") == "draw" else f"within {t['margin']:.3g} logits: ")
                 + f"{t['tokens'][0]!r} (chosen) and {t['tokens'][1]!r}" for t in ties]
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    if not lines:
        return None
    return (f"Near ties{where} ({len(lines)}: past one, a batch of another size may answer otherwise)",
            "\n".join(lines))


def prompt_and_output(row: dict) -> tuple[tuple[str, str], ...]:
    """The prompt exactly as the model received it and its raw output; for a thinking model's reply, its thought
    (folded, with its tokens, above the answer) and then the answer, which alone was parsed; then its near ties."""
    thought, ties = thought_text(row), near_ties_text(row)
    shown = (("Prompt as sent", text(row.get("prompt"))),)
    if thought is None:
        shown += (("Raw output", text(row.get("prediction"))),)
    else:
        shown += (thought, ("Answer after the thought", text(row.get("prediction"))))
    return shown + ((ties,) if ties else ())


def yes_no(value: Any) -> str:
    return "yes" if bool(value) and value == value else "no"


def percent(value: Any) -> str:
    """A 0..1 value as a percentage with one decimal; "n/a" when missing."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if math.isnan(number) else f"{number * 100:.1f}%"


def open_image(ref: str, sample_folder: Path, images_dir: Path) -> Image.Image:
    """An image a details row names: a URL or hf:// reference through the image cache, an absolute path as it is,
    a relative path inside the benchmark's sample folder. ImageUnavailable when it cannot be read."""
    if not ref:
        raise ImageUnavailable("(none)", "the row names no image")
    if is_url(ref) or ref.startswith("hf://") or Path(ref).is_absolute():
        return fetch_image_ref(ref, Path(images_dir)).convert("RGB")
    root = Path(sample_folder).resolve()
    path = (root / ref).resolve()
    if root not in path.parents:
        raise ImageUnavailable(ref, "outside the benchmark's sample folder")
    return fetch_image_ref(str(path), Path(images_dir), shown=ref).convert("RGB")


def _ended_in_thought(details: pd.DataFrame) -> pd.Series:
    """The rows of replies that ended inside their thought (spec.THOUGHT_UNCLOSED), without rows derived from other
    replies at scoring time (SimpleQA's frequency rows copy a sample's reply)."""
    if "thought_unclosed" not in details:
        return pd.Series(False, index=details.index)
    mask = details["thought_unclosed"].map(lambda value: value is True or value == 1.0)
    if "part" in details:
        mask &= details["part"] != "frequency"
    return mask


# The Measure of every benchmark's "ended in thought" count: the questions with such a reply, and how many replies.
THOUGHT_MEASURE = Measure(rows=lambda table, details: table["item"].isin(details.loc[_ended_in_thought(details),
                                                                                     "item"]),
                          value=lambda details: float(_ended_in_thought(details).sum()))
