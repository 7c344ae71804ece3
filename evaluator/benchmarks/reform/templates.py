"""Adapters for the ReForm-Eval files whose records carry no question (see layouts.py for the adapter contract).

The official builders (FudanDISC/ReForm-Eval build/<Dataset>/*.py) read these files as
`{"dataset_name": ..., "data": [record, ...]}` (SNLI-VE: `{"gt_info": ..., "data": [...]}`), each record holding
the image under "img" and the gold answer under "gt" as an index into the options, and phrase the question
themselves from instruction templates. Here the question is one template per layout of our own wording,
prompts/reform_dataset_questions.json, filled with the record's text (placeholders in braces); each adapter reads
that file when it runs.

layout     dataset      record (besides img, gt)               options                       question filled with
medic      MEDIC        options                                record["options"]             -
refcoco    RefCOCO      id, options, region                    record["options"]             -
itm        MSCOCO-ITM   anno (one caption)                     ["no", "yes"] (fixed)         {caption}
its        MSCOCO-ITS   anno (the candidate captions)          record["anno"]                -
snli_ve    SNLI-VE      anno (the hypothesis)                  ["yes", "not sure", "no"]     {hypothesis}
wikihow    WikiHow      method, title, options                 record["options"]             {method} ({title} also)

RefCOCO's "region" is what its builder passes to its box drawer: a list of boxes, each used as two corner points
(x0, y0, x1, y1) in pixels of the original image (unlike the COCO-style x, y, w, h its grounded-object builder
widens). A flat [x0, y0, x1, y1] is accepted too. The box becomes the record's "region" (integer pixels, x1 and
y1 exclusive, covering the fractional corners), which normalise_item marks in red.

Option texts are kept exactly as the file gives them; question_id is the record's own id when it has one,
else "<layout>-<index>".
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

from evaluator.inputs.prompt_files import prompts_dir, read_json_prompt

QUESTIONS_PATH = prompts_dir(__file__) / "reform_dataset_questions.json"

ITM_OPTIONS = ("no", "yes")               # the ITM builder's fixed options; gt 1 = the caption matches
SNLI_VE_OPTIONS = ("yes", "not sure", "no")  # index-aligned with SNLI-VE's gt_info below
SNLI_VE_LABELS = {"entailment": "yes", "neutral": "not sure", "contradiction": "no"}
SNLI_VE_GT_INFO = {"0": "entailment", "1": "neutral", "2": "contradiction"}  # what the builder asserts

# dataset_name each official file declares (checked when the file has one)
_DATASET_NAMES = {"medic": "MEDIC", "refcoco": "RefCOCO", "itm": "MSCOCO", "its": "MSCOCO", "wikihow": "WikiHow"}
_ID_KEYS = ("question_id", "id", "sample_id")


def load_questions(path: Path = QUESTIONS_PATH) -> dict[str, str]:
    """layout -> question template."""
    path = Path(path)
    questions = read_json_prompt(path.parent, path.name)
    if not isinstance(questions, dict) or not all(isinstance(v, str) and v.strip() for v in questions.values()):
        raise ValueError(f"{path}: expected an object of non-empty question templates")
    return questions


def question_template(layout: str, questions: dict[str, str] | None = None) -> str:
    """The question template of a layout, from `questions` (default: read from the questions file)."""
    questions = load_questions() if questions is None else questions
    if layout not in questions:
        raise ValueError(f"no question template for layout {layout!r} in {QUESTIONS_PATH.name}")
    return questions[layout]


# --------------------------------------------------------------------------------------------- helpers

def _rows(data: Any, layout: str) -> list:
    """The record list of a wrapped file ({"dataset_name", "data"}) or of a bare list."""
    if isinstance(data, dict):
        name = data.get("dataset_name")
        expected = _DATASET_NAMES.get(layout)
        if name is not None and expected is not None and name != expected:
            raise ValueError(f"the file is dataset {name!r}, the {layout!r} layout reads {expected!r}")
        data = data["data"]
    if not isinstance(data, list):
        raise TypeError("expected a list of records under 'data'")
    return data


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string")
    return value.strip()


def _gt(record: dict, n_options: int) -> int:
    gt = record["gt"]
    if isinstance(gt, str) and gt.strip().isdigit():
        gt = int(gt)  # the builders themselves turn it into a string
    if isinstance(gt, bool) or not isinstance(gt, int) or not 0 <= gt < n_options:
        raise ValueError(f"gt must be an option index below {n_options}, got {record['gt']!r}")
    return gt


def _record(layout: str, index: int, record: dict, options, gt: int, question: str, **extra) -> dict:
    qid = next((record[k] for k in _ID_KEYS if record.get(k) not in (None, "")), None)
    out = {
        "question_id": str(qid) if qid is not None else f"{layout}-{index}",
        "question": question,
        "answer": gt,
        "answer_options": list(options),
        "image": record["img"],
    }
    out.update(extra)
    return out


def region_box(region: Any) -> list[int]:
    """RefCOCO's region (a list of corner-point boxes, or one flat box) -> [x0, y0, x1, y1] integer pixels, x1/y1
    exclusive, covering the given corners (floor of the first corner, ceiling of the second)."""
    box = region
    if isinstance(box, (list, tuple)) and box and isinstance(box[0], (list, tuple)):
        box = box[0]  # the builder draws each listed box; the files give one, the referred object
    if not (isinstance(box, (list, tuple)) and len(box) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in box)):
        raise ValueError(f"region must be a box of 4 numbers (x0, y0, x1, y1), got {region!r}")
    xa, ya, xb, yb = (float(v) for v in box)
    x0, x1 = min(xa, xb), max(xa, xb)
    y0, y1 = min(ya, yb), max(ya, yb)
    return [math.floor(x0), math.floor(y0), max(math.ceil(x1), math.floor(x0) + 1),
            max(math.ceil(y1), math.floor(y0) + 1)]


def _string_list(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of at least 2 strings")
    return value


# --------------------------------------------------------------------------------------------- adapters

def _with_options(layout: str, options_key: str) -> Callable[[Any], list[dict]]:
    """Records whose options sit under `options_key` and whose question has no placeholder."""
    def adapter(data: Any) -> list[dict]:
        question = question_template(layout)
        out = []
        for i, rec in enumerate(_rows(data, layout)):
            options = _string_list(rec[options_key], f"record {i} {options_key}")
            out.append(_record(layout, i, rec, options, _gt(rec, len(options)), question))
        return out
    adapter.__name__ = f"adapt_{layout}"
    return adapter


adapt_medic = _with_options("medic", "options")
adapt_its = _with_options("its", "anno")


def adapt_refcoco(data: Any) -> list[dict]:
    question = question_template("refcoco")
    out = []
    for i, rec in enumerate(_rows(data, "refcoco")):
        options = _string_list(rec["options"], f"record {i} options")
        out.append(_record("refcoco", i, rec, options, _gt(rec, len(options)), question,
                           region=region_box(rec["region"])))
    return out


def adapt_itm(data: Any) -> list[dict]:
    template = question_template("itm")
    return [_record("itm", i, rec, ITM_OPTIONS, _gt(rec, len(ITM_OPTIONS)),
                    template.format(caption=_text(rec["anno"], f"record {i} anno")))
            for i, rec in enumerate(_rows(data, "itm"))]


def _snli_ve_order(data: Any) -> dict[str, int]:
    """gt -> option index: gt indexes the file's gt_info labels (default SNLI_VE_GT_INFO), mapped by meaning."""
    labels = data.get("gt_info") if isinstance(data, dict) else None
    if labels is None:
        return {k: SNLI_VE_OPTIONS.index(SNLI_VE_LABELS[v]) for k, v in SNLI_VE_GT_INFO.items()}
    if not isinstance(labels, dict) or {str(k) for k in labels} != set(SNLI_VE_GT_INFO) \
            or any(v not in SNLI_VE_LABELS for v in labels.values()):
        raise ValueError(f"unexpected SNLI-VE gt_info {labels!r}")
    return {str(k): SNLI_VE_OPTIONS.index(SNLI_VE_LABELS[v]) for k, v in labels.items()}


def adapt_snli_ve(data: Any) -> list[dict]:
    template = question_template("snli_ve")
    order = _snli_ve_order(data)
    out = []
    for i, rec in enumerate(_rows(data, "snli_ve")):
        gt = order[str(_gt(rec, len(SNLI_VE_OPTIONS)))]
        out.append(_record("snli_ve", i, rec, SNLI_VE_OPTIONS, gt,
                           template.format(hypothesis=_text(rec["anno"], f"record {i} anno"))))
    return out


def adapt_wikihow(data: Any) -> list[dict]:
    template = question_template("wikihow")
    out = []
    for i, rec in enumerate(_rows(data, "wikihow")):
        options = _string_list(rec["options"], f"record {i} options")
        title = rec.get("title")
        question = template.format(method=_text(rec["method"], f"record {i} method"),
                                   title=title.strip() if isinstance(title, str) else "")
        out.append(_record("wikihow", i, rec, options, _gt(rec, len(options)), question))
    return out


LAYOUTS: dict[str, Callable[[Any], list[dict]]] = {
    "medic": adapt_medic,
    "refcoco": adapt_refcoco,
    "itm": adapt_itm,
    "its": adapt_its,
    "snli_ve": adapt_snli_ve,
    "wikihow": adapt_wikihow,
}
