"""ReForm-Eval's official file layouts, adapted into the records the item reader takes (items.py).

Most Hub files of `Aweminus/ReForm-Eval-Data` hold records items.load_items reads as they are (layout "items").
The others keep the layout their official builder (FudanDISC/ReForm-Eval build/<Dataset>/*.py) reads; each such
layout has an adapter, named in the dataset table (ReformDataset.layout):

    adapter(data) -> list[dict]

`data` is the parsed JSON of the whole file; each returned record has the keys normalise_item accepts
(question_id, question, answer (option text or index), answer_options, image (base64 or a path), history, and
"region" [x0, y0, x1, y1] for a region to mark). Question wording for datasets without a question is ours
(instruction templates of this project, not the builders' sentences): templates.py, and MOCHEG's below.
The two dialogue layouts are in dialogue.py.

The layouts here were read off the official builders' huggingface branch (FudanDISC/ReForm-Eval):
  "kie"     build/{FUNSD,POIE,SROIE}/kie_dataset.py: {"version","split","data":[{question_id, image (base64),
            question (a string), answer_txt}]}
  "ocr"     build/{CUTE80,IC15,IIIT5K,WordArt,COCO_text,textOCR}/ocr_dataset.py: as "kie", but question is a LIST
            of phrasings of one request (the builder picks one per duplicate; we take the first, the one it uses
            with its default random_instruct and a single duplicate); TextOCR adds bbox [x, y, w, h], and the
            builder crops the image to it
  "gocr_ic15", "gocr_cocotext", "gocr_textocr"
            build/{IC15,COCO_text,textOCR}/groundocr_dataset.py: as "ocr" with bbox, the word's box, which the
            builder draws on the image before asking (grounded.py: each set's box convention and line width)
  "caption" build/{MSCOCO,TextCaps,NoCaps,Flickr30K}/caption_dataset.py: {"dataset_name","data":[{img (base64),
            annos: [reference captions]}]}, no question and no id (the builder numbers the items)
  "mocheg"  build/MOCHEG/mcv_dataset.py: {"version","split","data":[{instance_id, image_id (base64), claim,
            text_evidence, answer (option text), answer_options}]}; the question is composed from claim and
            evidence with our template prompts/reform_mocheg.txt ({claim}, {evidence})
  "kviquae" build/VQA/kvqa_dataset.py: {"version","split","data":[{question_id, image_id (base64), question,
            answer (option text), answer_options, context}]}
  "aokvqra" build/AOKVQA/qra_dataset.py: as "kviquae" with rationale (a string) in place of context
  "aokvqar" build/AOKVQA/qar_dataset.py: {question_id, image_id, question, answer (a string, shown), rationale
            (the gold option text), rationale_options}: the rationale is chosen given the answer
            The builders append the context, rationale or answer to the question; we compose the three with our
            templates in prompts/reform_dataset_questions.json ({question} and {context} / {rationale} / {answer})
"""
from __future__ import annotations

import json
from typing import Any, Callable

from evaluator.benchmarks.reform import dialogue, grounded, templates
from evaluator.benchmarks.reform.image_refs import looks_like_path
from evaluator.inputs.images import decode_base64_image, encode_image_base64
from evaluator.inputs.prompt_files import prompts_dir, read_prompt

Adapter = Callable[[Any], list[dict]]

PROMPTS_DIR = prompts_dir(__file__)


def _rows(data, wrapper: tuple[str, ...] = ("data",)) -> list:
    """The item list of an official file: an object with every key of `wrapper`, its items under "data"."""
    if not isinstance(data, dict):
        raise TypeError(f"expected an object with keys {', '.join(wrapper)}, got a {type(data).__name__}")
    missing = [k for k in wrapper if k not in data]
    if missing:
        raise KeyError(f"the file object has no {', '.join(map(repr, missing))} (keys: {', '.join(sorted(data))})")
    rows = data["data"]
    if not isinstance(rows, list):
        raise TypeError("'data' is not a list")
    return rows


def _item(row, k: int) -> dict:
    if not isinstance(row, dict):
        raise TypeError(f"item {k} is not an object")
    return row


def _need(row: dict, k: int, *keys: str):
    missing = [key for key in keys if key not in row]
    if missing:
        raise KeyError(f"item {k} has no {', '.join(map(repr, missing))} (keys: {', '.join(sorted(row))})")


def _first_phrasing(question, k: int) -> str:
    if isinstance(question, str):
        return question
    if isinstance(question, list) and question and isinstance(question[0], str):
        return question[0]
    raise TypeError(f"item {k}: question must be a string or a non-empty list of strings")


def _crop(image, bbox, k: int):
    """TextOCR: the image cropped to bbox [x, y, w, h] (as the builder does). A base64 image is cropped here; an
    image given as a path cannot be read at this point, so its word box is marked instead ("region")."""
    if not grounded.four_numbers(bbox):
        raise TypeError(f"item {k}: bbox must be [x, y, w, h]")
    x, y, w, h = bbox
    box = (int(x), int(y), int(x + w), int(y + h))
    if not isinstance(image, str) or looks_like_path(image):
        return image, list(box)
    try:
        cropped = decode_base64_image(image).crop(box)
    except ValueError as exc:
        raise TypeError(f"item {k}: {exc}") from None
    return encode_image_base64(cropped), None


def adapt_kie(data) -> list[dict]:
    """FUNSD / POIE / SROIE: the question as it stands, the answer under answer_txt."""
    out = []
    for k, row in enumerate(_rows(data, ("version", "split", "data"))):
        row = _item(row, k)
        _need(row, k, "question_id", "image", "question", "answer_txt")
        out.append({"question_id": row["question_id"], "question": _first_phrasing(row["question"], k),
                    "answer": row["answer_txt"], "image": row["image"]})
    return out


def _ocr_records(data, *needed: str):
    """The (index, row, record) of an OCR-shaped file ("ocr" and the grounded sets): the first phrasing of the
    question, the answer under answer_txt, the image as given; `needed`: further keys every row must have."""
    for k, row in enumerate(_rows(data, ("version", "split", "data"))):
        row = _item(row, k)
        _need(row, k, "question_id", "image", "question", "answer_txt", *needed)
        yield k, row, {"question_id": row["question_id"], "question": _first_phrasing(row["question"], k),
                       "answer": row["answer_txt"], "image": row["image"]}


def adapt_ocr(data) -> list[dict]:
    """CUTE80 / IC15 / IIIT5K / WordArt / TextOCR / COCO-Text: first phrasing, answer_txt, TextOCR's word crop."""
    out = []
    for k, row, rec in _ocr_records(data):
        if row.get("bbox") is not None:
            rec["image"], region = _crop(row["image"], row["bbox"], k)
            if region is not None:
                rec["region"] = region
        out.append(rec)
    return out


def _grounded(layout: str) -> Adapter:
    """Grounded IC15 / COCO-Text / TextOCR: as "ocr", with the word's box to draw (grounded.py)."""
    convention, thickness = grounded.CONVENTIONS[layout]

    def adapter(data) -> list[dict]:
        return [{**rec, "outline": grounded.outline(row["bbox"], convention, thickness, k)}
                for k, row, rec in _ocr_records(data, "bbox")]
    adapter.__name__ = f"adapt_{layout}"
    return adapter


def adapt_caption(data) -> list[dict]:
    """MSCOCO / TextCaps / NoCaps / Flickr30K captions: references under annos, numbered as the builder does."""
    out = []
    for k, row in enumerate(_rows(data, ("dataset_name", "data"))):
        row = _item(row, k)
        _need(row, k, "img", "annos")
        out.append({"question_id": str(k), "question": "", "references": row["annos"], "image": row["img"]})
    return out


def mocheg_template() -> str:
    """Our question for a MOCHEG claim and its text evidence ({claim}, {evidence})."""
    return read_prompt(PROMPTS_DIR, "reform_mocheg").strip()


def adapt_mocheg(data) -> list[dict]:
    """MOCHEG: a question made of claim + text evidence (our template), the builder's options and answer."""
    template = mocheg_template()
    out = []
    for k, row in enumerate(_rows(data, ("version", "split", "data"))):
        row = _item(row, k)
        _need(row, k, "instance_id", "image_id", "claim", "text_evidence", "answer", "answer_options")
        if not isinstance(row["claim"], str) or not isinstance(row["text_evidence"], str):
            raise TypeError(f"item {k}: claim and text_evidence must be strings")
        question = template.replace("{claim}", row["claim"].strip()).replace("{evidence}", row["text_evidence"].strip())
        out.append({"question_id": row["instance_id"], "question": question, "answer": row["answer"],
                    "answer_options": row["answer_options"], "image": row["image_id"]})
    return out


def _field_text(row: dict, key: str, k: int) -> str:
    value = row[key]
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"item {k}: {key} must be a non-empty string")
    return value.strip()


def _reasoning(layout: str, shown: str, options_key: str, gold_key: str) -> Adapter:
    """K-ViQuAE / A-OKVQRA / A-OKVQAR: the question and the record's `shown` text in our template for `layout`,
    the options under `options_key`, the gold option text under `gold_key`."""
    def adapter(data) -> list[dict]:
        template = templates.question_template(layout)
        out = []
        for k, row in enumerate(_rows(data, ("version", "split", "data"))):
            row = _item(row, k)
            _need(row, k, "question_id", "image_id", "question", shown, options_key, gold_key)
            texts = {key: _field_text(row, key, k) for key in ("question", shown)}
            out.append({"question_id": row["question_id"], "question": template.format(**texts),
                        "answer": row[gold_key], "answer_options": row[options_key], "image": row["image_id"]})
        return out
    adapter.__name__ = f"adapt_{layout}"
    return adapter


adapt_kviquae = _reasoning("kviquae", "context", "answer_options", "answer")
adapt_aokvqra = _reasoning("aokvqra", "rationale", "answer_options", "answer")
adapt_aokvqar = _reasoning("aokvqar", "answer", "rationale_options", "rationale")


LAYOUTS: dict[str, Adapter] = {
    **templates.LAYOUTS,
    **dialogue.LAYOUTS,
    "kie": adapt_kie,
    "ocr": adapt_ocr,
    "caption": adapt_caption,
    "mocheg": adapt_mocheg,
    "kviquae": adapt_kviquae,
    "aokvqra": adapt_aokvqra,
    "aokvqar": adapt_aokvqar,
    **{layout: _grounded(layout) for layout in grounded.CONVENTIONS},
}


def adapt(layout: str, text: str, source: str) -> list[dict]:
    """The records of a file in one of LAYOUTS; ValueError for an unknown layout or unreadable JSON."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown ReForm-Eval file layout {layout!r}; known: {', '.join(sorted(LAYOUTS))}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not valid JSON ({exc})") from None
    try:
        return LAYOUTS[layout](data)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValueError(f"{source}: not in the {layout!r} layout ({type(exc).__name__}: {exc})") from None
