"""LAVE data: VQA v2-style files (our sample suite, or a deployer's file), the Docmatix zero-shot test split, the
suite a run asks for, and each item's image.

An item is {question_id, question, answers, image_ref (where to read the image), image_shown (the reference as the
data names it), image (a decoded image, or None: read at run time), kind, style, source}; a Docmatix item also has
image_error (why its page does not decode, or "") and pages.

- sample suite: sample/lave_sample.json (30 items of ours, images drawn by tools/draw_lave_sample.py);
- full suite: the Docmatix zero-shot study's test split (HuggingFaceM4/Docmatix, config zero-shot-exp, 200 rows;
  each row's first question-answer pair and first page image), unless option lave.docmatix=off, plus a VQA
  v2-style file when the source "lave" names one. The source "lave.docmatix" may point at another copy of the
  Docmatix parquet file (a path or an hf:// reference).
"""
from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from evaluator.benchmarks.run_options import flag_option
from evaluator.benchmarks.spec import PROPORTIONAL, Lite, PlanContext
from evaluator.inputs.images import ImageUnavailable, fetch_image_ref, is_url
from evaluator.inputs.sources import hf_download, json_records, parse_hf, read_source

NAME = "lave"
SAMPLE_PATH = Path(__file__).resolve().parent / "sample" / "lave_sample.json"
DOCMATIX = "hf://datasets/HuggingFaceM4/Docmatix/zero-shot-exp/test-00000-of-00001.parquet"
DOCMATIX_SOURCE = "lave.docmatix"


# --------------------------------------------------------------------------------------------- VQA v2-style files

def _answers(value) -> list[str]:
    """Reference answers from a list of strings, a list of {"answer": str} (VQA v2) or one string."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ValueError("answers must be a non-empty list")
    out = []
    for a in value:
        if isinstance(a, dict):
            a = a.get("answer")
        if not isinstance(a, str):
            raise ValueError("every answer must be a string (or {\"answer\": string})")
        out.append(a)
    if not any(a.strip() for a in out):
        raise ValueError("every answer is empty")
    return out


def _item(rec, index: int, label: str, resolve) -> dict:
    """One item of a VQA file; ValueError (without the item's index) when the record is malformed."""
    if not isinstance(rec, dict):
        raise ValueError("not an object")
    question = rec.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question is missing or empty")
    answers = _answers(rec.get("answers", rec.get("answer")))
    shown = rec.get("image")
    if not isinstance(shown, str) or not shown.strip():
        raise ValueError("no image (a path, URL or hf:// reference in 'image')")
    shown = shown.strip()
    ref = shown if is_url(shown) or shown.startswith("hf://") or Path(shown).is_absolute() else resolve(shown)
    qid = next((str(rec[k]) for k in ("question_id", "id") if rec.get(k) not in (None, "")), f"{label}-{index:05d}")
    return {"question_id": qid, "question": question.strip(), "answers": answers, "image_ref": ref,
            "image_shown": shown, "image": None, "kind": str(rec.get("kind") or ""),
            "style": str(rec.get("style") or "vqa"), "source": label}


def load_vqa_file(source: str | Path, label: str = "vqa") -> list[dict]:
    """The items of a VQA v2-style file: JSON ({"items" | "data" | "questions": [...]} or a list) or JSON lines;
    each record has a question_id (or id), an image (a path relative to the file, an http(s) URL or an
    hf://datasets/... reference), a question and answers (a list of strings, VQA v2's list of {"answer": ...}, or
    one string); optional "kind" and "style".

    Raises ValueError naming the index of a malformed item, or a repeated question_id.
    """
    source = str(source)
    text, resolve = read_source(source, "LAVE data", download=lambda *args: hf_download(*args))
    items, seen = [], set()
    for i, rec in enumerate(json_records(text, source, ("items", "data", "questions"))):
        try:
            item = _item(rec, i, label, resolve)
            if item["question_id"] in seen:
                raise ValueError(f"question_id {item['question_id']!r} repeats an earlier item")
        except ValueError as exc:
            raise ValueError(f"LAVE item {i} of {source}: {exc}") from None
        seen.add(item["question_id"])
        items.append(item)
    return items


# --------------------------------------------------------------------------------------------- Docmatix

def _decode(image: object) -> Image.Image:
    if isinstance(image, dict):
        image = image.get("bytes")
    if not isinstance(image, (bytes, bytearray)):
        raise ValueError("no image bytes")
    try:
        with Image.open(io.BytesIO(image)) as img:
            img.load()
            return img.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"image does not decode ({type(exc).__name__})") from None


def load_docmatix(location: str = DOCMATIX) -> list[dict]:
    """The Docmatix zero-shot test rows (a parquet file: images = list of {bytes, path}; texts = list of {user,
    assistant, source}), one item per row: its first question-answer pair and its first page image.

    `location` is an hf:// reference (downloaded through the Hub cache) or a local path. A row without a usable
    image keeps the decode error and is reported image_unavailable at run time. The layout is the one the Docmatix
    authors declared when they pushed this config (features images = Sequence(Image), texts = [{user, assistant,
    source}]), which parquet stores as list<struct<bytes, path>> and list<struct<user, assistant, source>>.
    """
    import pyarrow.parquet as pq

    path = location
    if location.startswith("hf://"):
        repo_id, revision, filename = parse_hf(location)
        path = hf_download(repo_id, filename, revision)
    table = pq.read_table(path, columns=["images", "texts"])
    items = []
    for i, row in enumerate(table.to_pylist()):
        texts = row.get("texts") or []
        first = texts[0] if texts and isinstance(texts[0], dict) else {}
        question, answer = first.get("user"), first.get("assistant")
        if not isinstance(question, str) or not question.strip() or not isinstance(answer, str) or not answer.strip():
            raise ValueError(f"Docmatix row {i} of {location}: no first question-answer pair in 'texts'")
        pages = row.get("images") or []
        image, error = None, ""
        try:
            image = _decode(pages[0] if pages else None)
        except ValueError as exc:
            error = str(exc)
        ref = f"{location}#row={i}"
        items.append({"question_id": f"docmatix-{i:04d}", "question": question.strip(), "answers": [answer.strip()],
                      "image_ref": ref, "image_shown": ref, "image": image, "image_error": error,
                      "kind": "document", "style": "doc", "source": "docmatix", "pages": len(pages)})
    return items


# --------------------------------------------------------------------------------------------- the suite

def load_suite(ctx: PlanContext) -> list[dict]:
    """The items of ctx.suite: our sample file, or Docmatix (unless lave.docmatix=off) plus the VQA file if set."""
    if ctx.suite == "sample":
        return load_vqa_file(SAMPLE_PATH, "sample")
    items: list[dict] = []
    if flag_option(ctx.options, "lave.docmatix", True):
        items.extend(load_docmatix(ctx.sources.get(DOCMATIX_SOURCE) or DOCMATIX))
    if ctx.sources.get(NAME):
        items.extend(load_vqa_file(ctx.sources[NAME], "vqa"))
    if not items:
        raise ValueError("the full LAVE suite is empty: Docmatix is off and no VQA file is set (LEADERBOARD_LAVE_VQA)")
    ids = Counter(item["question_id"] for item in items)
    repeated = [qid for qid, n in ids.items() if n > 1]
    if repeated:
        raise ValueError(f"LAVE question ids repeat across the suite's files: {repeated[:5]}")
    return items


def item_image(item: dict, images_dir: Path) -> Image.Image:
    """The item's image (RGB): decoded already (Docmatix), or read from its reference through the cache;
    ImageUnavailable when it cannot be read."""
    if item.get("image") is not None:
        return item["image"]
    if item.get("image_error"):
        raise ImageUnavailable(item["image_ref"], item["image_error"])
    return fetch_image_ref(item["image_ref"], Path(images_dir), shown=item.get("image_shown")).convert("RGB")


# the full suite's strata for the lite rule: the Docmatix zero-shot test split, one source
LITE_SUBSET = Lite(stratum="source", allocation=PROPORTIONAL, size=100, strata=(("docmatix", 200),),
                   strata_basis="the Docmatix zero-shot test split's 200 rows (HuggingFaceM4/Docmatix, config "
                                "zero-shot-exp, its dataset card's split sizes); a VQA file added through "
                                "LEADERBOARD_LAVE_VQA is a stratum of its own, not counted here",
                   key="its source, question and image reference (the split has no ids)")
