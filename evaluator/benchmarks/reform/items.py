"""ReForm-Eval items: one record of a data file, checked and normalised; a whole file read.

Official files (Hub dataset `Aweminus/ReForm-Eval-Data`, folder `huggingface_data/`) are JSON, either
`{"version", "split", "data": [...]}` or a bare list. Three shapes of item are read:
- multiple choice: question_id, image_id, question, answer (the option *text*, or an index into the options as the
  prediction dumps store it), answer_options (list of strings);
- caption: image + references (a list of strings; "answer"/"captions" are accepted too);
- ocr / kie: image + answer (one word or a list of accepted strings).
Files in an official builder's own layout are adapted into such records first (layouts.py). The image is base64
text or a path (image_refs.py).

Every item comes back normalised:
    {question_id, dataset, dimension, form, question, options, answer, image, image_ref, history}
with `options` a list (empty unless multiple choice), `answer` the option text for multiple choice and a list of
strings for caption / ocr / kie, `image` a PIL.Image in RGB (None when load_images=False), `image_ref` a short
description of where the image came from ("base64" or the resolved path / URL), and `history` the previous turns
of a multi-turn dialogue as [{"from": "human"|"assistant", "value": str}, ...] (usually empty).
A malformed item raises ValueError naming its index.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable

from evaluator.benchmarks.reform.datasets import CAPTION, DIMENSIONS, FORMS, MC
from evaluator.benchmarks.reform.files import item_records, read_data
from evaluator.benchmarks.reform.grounded import draw_outline
from evaluator.benchmarks.reform.image_refs import image_field, open_image, shown_ref
from evaluator.benchmarks.reform.layouts import adapt
from evaluator.inputs.images import mark_box


def _strings(value, what: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a non-empty string or list of strings")
    if not any(v.strip() for v in value):
        raise ValueError(f"{what} is empty")
    return list(value)


def _history(value) -> list[dict]:
    """Previous turns as [{"from": "human"|"assistant", "value": str}]; alternating strings start with human."""
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise ValueError("history must be a list")
    turns = []
    for k, turn in enumerate(value):
        if isinstance(turn, str):
            turns.append({"from": "human" if k % 2 == 0 else "assistant", "value": turn})
        elif isinstance(turn, dict) and isinstance(turn.get("value"), str):
            who = str(turn.get("from", turn.get("role", "human"))).lower()
            turns.append({"from": "human" if who in ("human", "user") else "assistant", "value": turn["value"]})
        elif isinstance(turn, dict) and isinstance(turn.get("question"), str) and isinstance(turn.get("answer"), str):
            turns.append({"from": "human", "value": turn["question"]})
            turns.append({"from": "assistant", "value": turn["answer"]})
        else:
            raise ValueError(f"history[{k}] is not a turn")
    return turns


def _question(record: dict) -> str:
    question = record.get("question", "")
    if question is None:
        return ""
    if not isinstance(question, str):
        raise ValueError("question must be a string")
    return question


def _choice(record: dict, question: str) -> tuple[list[str], str]:
    """(options, gold option text) of a multiple-choice record."""
    options = record.get("answer_options", record.get("options"))
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
        raise ValueError("answer_options must be a list of at least 2 strings")
    if not question.strip():
        raise ValueError("question is empty")
    gold = record.get("answer")
    if isinstance(gold, str):
        if gold not in options:
            raise ValueError(f"answer {gold!r} is not among the answer_options")
        return list(options), gold
    if isinstance(gold, int) and not isinstance(gold, bool) and 0 <= gold < len(options):
        return list(options), options[gold]  # prediction dumps store the index
    raise ValueError(f"answer must be an option text or index, got {gold!r}")


def _answer(record: dict, form: str, question: str) -> tuple[list[str], str | list[str]]:
    """(options, answer) for the item's form."""
    if form == MC:
        return _choice(record, question)
    if form == CAPTION:
        refs = next((record[k] for k in ("references", "answer", "captions", "caption") if k in record), None)
        return [], _strings(refs, "references")
    return [], _strings(record.get("answer", record.get("answers")), "answer")


def _image(record: dict, ref: str, resolve: Callable[[str], str], cache_dir: Path):
    """The record's image, opened, with its referred region (x0, y0, x1, y1 in pixels) marked in red, or a grounded
    OCR word's box drawn as its builder draws it ("outline": [x1, y1, x2, y2, thickness], grounded.py)."""
    image, image_ref = open_image(ref, resolve, cache_dir)
    region = record.get("region")
    if region is not None:
        if not (isinstance(region, (list, tuple)) and len(region) == 4
                and all(isinstance(v, (int, float)) for v in region)):
            raise ValueError("region must be [x0, y0, x1, y1] in pixels")
        image = mark_box(image, tuple(region))
    box = record.get("outline")
    if box is not None:
        if not (isinstance(box, (list, tuple)) and len(box) == 5
                and all(isinstance(v, int) and not isinstance(v, bool) for v in box) and box[4] >= 2):
            raise ValueError("outline must be [x1, y1, x2, y2, thickness] in whole pixels, thickness at least 2")
        image = draw_outline(image, tuple(box[:4]), box[4])
    return image, image_ref


def _checked(record, index: int, form: str | None, dimension: str, resolve, load_images: bool,
             cache_dir: Path | None) -> dict:
    """The normalised fields of one record (ValueError without the index)."""
    if not isinstance(record, dict):
        raise ValueError("not an object")
    form_ = record.get("form") or form
    if form_ not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form_!r}")
    dimension_ = record.get("dimension") or dimension
    if dimension_ and dimension_ not in DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension_!r}")
    question = _question(record)
    options, answer = _answer(record, form_, question)
    ref = image_field(record)
    if ref is None:
        raise ValueError("no image (expected a base64 string or a path in 'image')")
    image, image_ref = None, shown_ref(ref)
    if load_images:
        image, image_ref = _image(record, ref, resolve or (lambda r: r),
                                  cache_dir or Path(tempfile.gettempdir()) / "reform_images")
    history = _history(record.get("history"))
    qid = next((record[k] for k in ("question_id", "sample_id", "id") if record.get(k) not in (None, "")), None)
    return {"qid": qid, "dimension": dimension_, "form": form_, "question": question, "options": options,
            "answer": answer, "image": image, "image_ref": image_ref, "history": history}


def normalise_item(record, index: int, form: str | None = None, dataset: str = "", dimension: str = "",
                   resolve=None, load_images: bool = True, cache_dir: Path | None = None) -> dict:
    """One official item -> the normalised dict (module docstring). Raises ValueError naming `index`."""
    try:
        got = _checked(record, index, form, dimension, resolve, load_images, cache_dir)
    except ValueError as exc:
        raise ValueError(f"ReForm-Eval item {index}: {exc}") from None
    qid = got.pop("qid")
    return {
        "question_id": str(qid) if qid is not None else f"{dataset or 'reform'}-{index:05d}",
        "dataset": record.get("dataset") or dataset,
        **got,
    }


def load_items(source: str | Path, form: str | None = None, *, dataset: str = "", dimension: str = "",
               load_images: bool = True, cache_dir: str | Path | None = None, layout: str = "items",
               source_name: str | None = None) -> list[dict]:
    """Read a ReForm-Eval file from a local path, an http(s) URL or hf://datasets/<org>/<name>[@rev]/<file>.

    `layout` "items" reads the records as they are; another name is a key of layouts.LAYOUTS, whose adapter
    turns the official file's own layout into such records first.

    `form` is one of FORMS; None means each item carries its own "form" (as the sample suite does). `dataset`
    and `dimension` label every item unless the item has its own. With load_images=False the images are not
    decoded (item["image"] is None), for reading prediction dumps whose image paths are not available.
    Each item's `image_source` is "<source_name or source>#<n>": the n-th record of the file as read here, where
    the explorer finds its image again (reform.picture).
    Raises ValueError naming the index of a malformed item.
    """
    source = str(source)
    if form is not None and form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
    text, resolve = read_data(source)
    cache = Path(cache_dir) if cache_dir else None
    records = item_records(text, source) if layout == "items" else adapt(layout, text, source)
    return [with_source(normalise_item(rec, i, form, dataset, dimension, resolve, load_images, cache),
                        source_name or source, i) for i, rec in enumerate(records)]


def with_source(item: dict, file: str, index: int) -> dict:
    """The item with its image_source, "<file>#<index>"."""
    item["image_source"] = f"{file}#{index}"
    return item
