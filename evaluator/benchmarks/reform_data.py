"""ReForm-Eval data (arXiv 2310.02569): the dataset table, a loader for the official file format, the sample suite.

Official files (Hub dataset `Aweminus/ReForm-Eval-Data`, folder `huggingface_data/`) are JSON, either
`{"version", "split", "data": [...]}` or a bare list. Three shapes of item are read:
- multiple choice: question_id, image_id, question, answer (the option *text*, or an index into the options as the
  prediction dumps store it), answer_options (list of strings);
- caption: image + references (a list of strings; "answer"/"captions" are accepted too);
- ocr / kie: image + answer (one word or a list of accepted strings).
An image is a base64 string (as the Hub files store it, with or without a `data:image/...;base64,` prefix) or a
path, resolved against the data file's folder (a local folder, an http(s) URL, or the same hf:// dataset repo).

Every item comes back normalised:
    {question_id, dataset, dimension, form, question, options, answer, image, image_ref, history}
with `options` a list (empty unless multiple choice), `answer` the option text for multiple choice and a list of
strings for caption / ocr / kie, `image` a PIL.Image in RGB (None when load_images=False), `image_ref` a short
description of where the image came from ("base64" or the resolved path / URL), and `history` the previous turns
of a multi-turn dialogue as [{"from": "human"|"assistant", "value": str}, ...] (usually empty).
A malformed item raises ValueError naming its index.
"""
from __future__ import annotations

import base64
import binascii
import io
import json
import random
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from evaluator.images import ImageUnavailable, fetch_image, is_url, mark_box
from evaluator.sources import hf_download as _hf_download  # a module name, so tests can replace the download
from evaluator.sources import parse_hf as _parse_hf
from evaluator.sources import json_records, read_source

HUB_REPO = "Aweminus/ReForm-Eval-Data"
SAMPLE_PATH = Path(__file__).resolve().parent.parent / "data" / "reform_sample.json"

# task forms
MC = "multiple_choice"
CAPTION = "caption"
OCR = "ocr"
KIE = "kie"
FORMS = (MC, CAPTION, OCR, KIE)

# the 8 capability dimensions, in the paper's order: key -> label
DIMENSIONS = {
    "coarse_perception": "Coarse-grained perception",
    "fine_perception": "Fine-grained perception",
    "scene_text": "Scene-text perception",
    "visual_reasoning": "Visually grounded reasoning",
    "spatial": "Spatial understanding",
    "cross_modal_inference": "Cross-modal inference",
    "description": "Visual description",
    "multi_turn_dialogue": "Multi-turn dialogue",
}


@dataclass(frozen=True)
class ReformDataset:
    name: str
    dimension: str
    form: str
    hub_path: str       # path inside Aweminus/ReForm-Eval-Data
    confirmed: bool     # True: the path appears in the official configs (FudanDISC/ReForm-Eval build/configs/*.yaml)
    #                     or in the Hub file listing; False: our guess from the naming pattern, not verified
    question_type: str | None = None  # multi-file TDIUC: the annotations' question_type this dataset keeps
    choices_path: str | None = None   # multi-file sets: distractor choice list (TDIUC: a folder of <type>.json)
    layout: str = "items"  # how the file's records are laid out: "items" (load_items reads them as they are) or
    #                        a key of reform_layouts.LAYOUTS (the official builder's own layout, adapted)

    @property
    def multi_file(self) -> bool:
        """True for the sets whose questions, answers and choice lists lie in separate files (TDIUC, COCO counting)."""
        return self.choices_path is not None


_H = "huggingface_data/"
_TDIUC_CHOICES = _H + "TDIUC/choice_list/"  # TDIUC answers (TDIUC_val_anns.json) sit beside the questions file
# One line per dataset. Every hub_path (and the TDIUC question_type / choices_path, the COCO counting choices_path)
# is the path the official config gives (FudanDISC/ReForm-Eval build/configs/, key huggingface_data / hf_*):
#   ImageClassification_{flowers102,cifar10,imagenet1k,pets37}_val, ImageQuality_vizwiz_singleChoice_val,
#   DisasterType_val, TDIUC_{sport,scene,color,utility,position,detection,counting}, ReferringExpression_val,
#   MulticlassIdentification_val, GroundedObjIdentification_val, MissingObjectSelection_val, ObjectCounting_mscoco_val,
#   OCR_{cute80,ic15,iiit5k,cocotext,wordart,textocr,docvqa,textvqa,ocrvqa}_val, KIE_{funsd,poie,sroie}_val,
#   VQA_{vqa_v2,whoops,okvqa,viquae,aokvqa,imagenetvc}_val, VQA_{gqa,scienceqa,vizwiz}_val_v2.0,
#   Spatial_{clevr,vsr,mp3d}_val, ImageTextMatching_val, ImageTextSelection_val, CaptionSelection_winoground_val,
#   VisualEntailment_val, MCV_mocheg_val, TemporalOrdering_val, Caption_{MSCOCO,TextCaps,NoCaps,Flickr30K}_val,
#   VQA_vqa_MultiRound_val, VisDial_val_v1.2.
# The official loaders read these files with their own key names, which the generic loader below does not all accept
# (see the module docstring's item shapes).
DATASETS: tuple[ReformDataset, ...] = (
    # coarse-grained perception
    ReformDataset("Flowers102", "coarse_perception", MC, _H + "Flowers102/flower102_val_1p.json", True),
    ReformDataset("CIFAR10", "coarse_perception", MC, _H + "CIFAR10/cifar10_test_10p.json", True),
    ReformDataset("ImageNet-1K", "coarse_perception", MC, _H + "ImageNet-1K/imagenet1k_val_10p.json", True),
    ReformDataset("Pets37", "coarse_perception", MC, _H + "Pets37/pets37_test_10p.json", True),
    ReformDataset("VizWiz-quality", "coarse_perception", MC, _H + "VizWiz/vizwiz_singleChoice_val_10p.json",
                  True),  # ImageQuality_vizwiz_singleChoice_val.yaml (hf_singleChoice_anns_path)
    ReformDataset("TDIUC-sport", "coarse_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "sport_recognition", _TDIUC_CHOICES),
    ReformDataset("TDIUC-scene", "coarse_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "scene_recognition", _TDIUC_CHOICES),
    ReformDataset("MEDIC", "coarse_perception", MC, _H + "MEDIC/disaster-type-selection-sampled.json", True,
                  layout="medic"),
    # fine-grained perception
    ReformDataset("TDIUC-color", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "color", _TDIUC_CHOICES),
    ReformDataset("TDIUC-utility", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "utility_affordance", _TDIUC_CHOICES),
    ReformDataset("TDIUC-position", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "positional_reasoning", _TDIUC_CHOICES),
    ReformDataset("TDIUC-detection", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "object_recognition", _TDIUC_CHOICES),  # TDIUC_detection.yaml: task 'object_recognition'
    ReformDataset("TDIUC-counting", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "counting", _TDIUC_CHOICES),
    ReformDataset("RefCOCO", "fine_perception", MC, _H + "RefCOCO/referring-expression-selection-sampled.json", True,
                  layout="refcoco"),
    ReformDataset("MSCOCO-MCI", "fine_perception", MC, _H + "MSCOCO/mci_core_multiple_choice.json", True),
    ReformDataset("MSCOCO-GOI", "fine_perception", MC, _H + "MSCOCO/goi_core_multiple_choice.json", True),
    ReformDataset("MSCOCO-MOS", "fine_perception", MC, _H + "MSCOCO/mos_core_multiple_choice.json", True),
    ReformDataset("MSCOCO-OC", "fine_perception", MC, _H + "MSCOCO/object-counting-all.json", True,
                  choices_path=_H + "MSCOCO/objectCounting_answer_list/answer_list.json"),
    # scene-text perception
    ReformDataset("CUTE80", "scene_text", OCR, _H + "CUTE80/cute80_core_open_ended.json", True, layout="ocr"),
    ReformDataset("IC15", "scene_text", OCR, _H + "IC15/ic15_core_open_ended.json", True, layout="ocr"),
    ReformDataset("IIIT5K", "scene_text", OCR, _H + "IIIT5K/iiit5k_core_open_ended.json", True, layout="ocr"),
    # OCR_cocotext_val.yaml gives 'huggingface_data/COCO_Text/cocotext_core_open_ended' (no extension); the
    # repo's own hf loading check reads COCO_Text/cocotext_core_open_ended.json (GroundOCR_cocotext_val: COCO_Text/)
    ReformDataset("COCO-Text", "scene_text", OCR, _H + "COCO_Text/cocotext_core_open_ended.json", True, layout="ocr"),
    ReformDataset("WordArt", "scene_text", OCR, _H + "WordArt/wordart_core_open_ended.json", True, layout="ocr"),
    ReformDataset("TextOCR", "scene_text", OCR, _H + "TextOCR/textocr_core_open_ended.json", True, layout="ocr"),
    ReformDataset("FUNSD", "scene_text", KIE, _H + "FUNSD/funsd_core_open_ended.json", True, layout="kie"),
    ReformDataset("POIE", "scene_text", KIE, _H + "POIE/poie_core_open_ended.json", True, layout="kie"),
    ReformDataset("SROIE", "scene_text", KIE, _H + "SROIE/sroie_core_open_ended.json", True, layout="kie"),
    ReformDataset("DocVQA", "scene_text", KIE, _H + "DocVQA/docvqa_val_10p.json", True),
    ReformDataset("TextVQA", "scene_text", KIE, _H + "TextVQA/textvqa_val_10p.json", True),
    ReformDataset("OCR-VQA", "scene_text", KIE, _H + "OCR-VQA/ocrvqa_test_10p.json", True),
    # visually grounded reasoning
    ReformDataset("VQA-v2", "visual_reasoning", MC, _H + "VQA_v2/vqa_val_10p.json", True),
    ReformDataset("GQA", "visual_reasoning", MC, _H + "GQA/gqa_testdev_10p.json", True),
    ReformDataset("Whoops", "visual_reasoning", MC, _H + "Whoops/whoops_all_10p.json", True),
    ReformDataset("OK-VQA", "visual_reasoning", MC, _H + "OK-VQA/okvqa_val_10p.json", True),
    ReformDataset("ScienceQA", "visual_reasoning", MC, _H + "ScienceQA/scienceqa_test_10p.json", True),
    ReformDataset("VizWiz-VQA", "visual_reasoning", MC, _H + "VizWiz/vizwiz_val_10p.json", True),
    ReformDataset("ViQuAE", "visual_reasoning", MC, _H + "ViQuAE/viquae_test_10p.json", True),
    ReformDataset("A-OKVQA", "visual_reasoning", MC, _H + "A-OKVQA/aokvqa_val_10p.json", True),
    ReformDataset("ImageNetVC", "visual_reasoning", MC, _H + "ImageNetVC/imagenetvc_all_10p.json", True),
    # spatial understanding
    ReformDataset("CLEVR", "spatial", MC, _H + "CLEVR/clevr_core_multiple_choice.json", True),
    ReformDataset("VSR", "spatial", MC, _H + "VSR/vsr_core_multiple_choice.json", True),
    ReformDataset("MP3D-Spatial", "spatial", MC, _H + "MP3D/mp3d_core_multiple_choice.json", True),
    # cross-modal inference
    ReformDataset("MSCOCO-ITM", "cross_modal_inference", MC,
                  _H + "MSCOCO/image-text-matching-object-sampled.json", True, layout="itm"),
    ReformDataset("MSCOCO-ITS", "cross_modal_inference", MC,
                  _H + "MSCOCO/image-text-selection-object-sampled.json", True, layout="its"),
    ReformDataset("Winoground", "cross_modal_inference", MC,
                  _H + "Winoground/winoground_all_10p.json", True),
    ReformDataset("SNLI-VE", "cross_modal_inference", MC,
                  _H + "SNLI_VE/visual-entailment-matching-sampled.json", True, layout="snli_ve"),
    ReformDataset("MOCHEG", "cross_modal_inference", MC, _H + "MOCHEG/mocheg_test_10p.json", True, layout="mocheg"),
    ReformDataset("WikiHow", "cross_modal_inference", MC,
                  _H + "WikiHow/wikihow-image-text-selection-in-method-sampled.json", True, layout="wikihow"),
    # visual description
    ReformDataset("MSCOCO-caption", "description", CAPTION, _H + "MSCOCO/captions-sampled.json", True,
                  layout="caption"),
    ReformDataset("TextCaps", "description", CAPTION, _H + "TextCaps/captions-sampled.json", True, layout="caption"),
    ReformDataset("NoCaps", "description", CAPTION, _H + "NoCaps/captions-sampled.json", True, layout="caption"),
    ReformDataset("Flickr30K", "description", CAPTION, _H + "Flickr30K/captions-sampled.json", True, layout="caption"),
    # multi-turn dialogue
    ReformDataset("VQA-MT", "multi_turn_dialogue", MC, _H + "VisDial/VQA_MultiTurn_v1.0.json", True, layout="vqa_mt"),
    ReformDataset("VisDial", "multi_turn_dialogue", MC, _H + "VisDial/Visdial_1.0_val_v1.2.json", True,
                  layout="visdial"),
)
DATASETS_BY_NAME = {d.name: d for d in DATASETS}

_IMAGE_KEYS = ("image", "img", "image_base64", "image_path", "image_name", "image_id")
_IMAGE_EXT = re.compile(r"\.(jpe?g|png|gif|bmp|webp|tiff?)$", re.IGNORECASE)
_DATA_URI = re.compile(r"^data:image/[\w.+-]+;base64,", re.IGNORECASE)


# --------------------------------------------------------------------------------------------- sources

def _read_source(source: str):
    """(text, resolve(ref) -> str): the file's text and how to resolve a relative image path against its folder."""
    return read_source(source, "ReForm-Eval data", download=lambda *args: _hf_download(*args))


def _records(text: str, source: str) -> list:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not valid JSON ({exc})") from None
    if isinstance(data, dict):
        data = data.get("data")
    if not isinstance(data, list):
        raise ValueError(f"{source}: expected a list of items or an object with a 'data' list")
    return data


# --------------------------------------------------------------------------------------------- images

def decode_base64_image(text: str) -> Image.Image:
    """A base64 string (optionally a data: URI) -> RGB PIL image. Raises ValueError when it is not an image."""
    payload = _DATA_URI.sub("", text.strip())
    try:
        raw = base64.b64decode("".join(payload.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("image is neither a path nor valid base64") from None
    try:
        with Image.open(io.BytesIO(raw)) as img:
            img.load()
            return img.convert("RGB")
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise ValueError(f"base64 image does not decode ({type(exc).__name__})") from None


def encode_image_base64(image: Image.Image, fmt: str = "PNG") -> str:
    """The inverse of decode_base64_image (no data: prefix), as the Hub files store images."""
    buf = io.BytesIO()
    image.save(buf, format=fmt, optimize=True)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _looks_like_path(ref: str) -> bool:
    s = ref.strip()
    return bool(_IMAGE_EXT.search(s)) or is_url(s) or s.startswith(("hf://", "/", "./", "../")) or len(s) < 64


def _image_field(record: dict):
    for key in _IMAGE_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            if key == "image_id" and not _IMAGE_EXT.search(value) and len(value) < 256:
                continue  # a plain id (e.g. a COCO number), not a reference to an image
            return value
    return None


def _open_image(ref: str, resolve, cache_dir: Path) -> tuple[Image.Image, str]:
    if not _looks_like_path(ref):
        return decode_base64_image(ref), "base64"
    s = ref.strip()
    if not (is_url(s) or s.startswith("hf://") or Path(s).is_absolute()):
        s = resolve(s)
    try:
        if s.startswith("hf://"):
            repo_id, revision, filename = _parse_hf(s)
            local = _hf_download(repo_id, filename, revision)
            img = fetch_image(local, cache_dir)
        else:
            img = fetch_image(s, cache_dir)
    except ImageUnavailable as exc:
        raise ValueError(f"image {s!r} unavailable: {exc.reason}") from None
    except Exception as exc:  # noqa: BLE001 - a Hub failure on one image
        raise ValueError(f"image {s!r} unavailable ({type(exc).__name__})") from None
    return img.convert("RGB"), s


# --------------------------------------------------------------------------------------------- items

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


def normalise_item(record, index: int, form: str | None = None, dataset: str = "", dimension: str = "",
                   resolve=None, load_images: bool = True, cache_dir: Path | None = None) -> dict:
    """One official item -> the normalised dict (module docstring). Raises ValueError naming `index`."""
    try:
        if not isinstance(record, dict):
            raise ValueError("not an object")
        form_ = record.get("form") or form
        if form_ not in FORMS:
            raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form_!r}")
        dimension_ = record.get("dimension") or dimension
        if dimension_ and dimension_ not in DIMENSIONS:
            raise ValueError(f"unknown dimension {dimension_!r}")
        question = record.get("question", "")
        if question is None:
            question = ""
        if not isinstance(question, str):
            raise ValueError("question must be a string")
        options: list[str] = []
        if form_ == MC:
            options = record.get("answer_options", record.get("options"))
            if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
                raise ValueError("answer_options must be a list of at least 2 strings")
            if not question.strip():
                raise ValueError("question is empty")
            gold = record.get("answer")
            if isinstance(gold, str):
                if gold not in options:
                    raise ValueError(f"answer {gold!r} is not among the answer_options")
                answer = gold
            elif isinstance(gold, int) and not isinstance(gold, bool) and 0 <= gold < len(options):
                answer = options[gold]  # prediction dumps store the index
            else:
                raise ValueError(f"answer must be an option text or index, got {gold!r}")
        elif form_ == CAPTION:
            refs = next((record[k] for k in ("references", "answer", "captions", "caption") if k in record), None)
            answer = _strings(refs, "references")
        else:
            answer = _strings(record.get("answer", record.get("answers")), "answer")
        ref = _image_field(record)
        if ref is None:
            raise ValueError("no image (expected a base64 string or a path in 'image')")
        image, image_ref = None, ref if _looks_like_path(ref) else "base64"
        if load_images:
            image, image_ref = _open_image(ref, resolve or (lambda r: r),
                                           cache_dir or Path(tempfile.gettempdir()) / "reform_images")
            region = record.get("region")
            if region is not None:  # a referred region (x0, y0, x1, y1 in pixels), marked in red on the image
                if not (isinstance(region, (list, tuple)) and len(region) == 4
                        and all(isinstance(v, (int, float)) for v in region)):
                    raise ValueError("region must be [x0, y0, x1, y1] in pixels")
                image = mark_box(image, tuple(region))
        history = _history(record.get("history"))
        qid = next((record[k] for k in ("question_id", "sample_id", "id") if record.get(k) not in (None, "")), None)
    except ValueError as exc:
        raise ValueError(f"ReForm-Eval item {index}: {exc}") from None
    return {
        "question_id": str(qid) if qid is not None else f"{dataset or 'reform'}-{index:05d}",
        "dataset": record.get("dataset") or dataset,
        "dimension": dimension_,
        "form": form_,
        "question": question,
        "options": list(options),
        "answer": answer,
        "image": image,
        "image_ref": image_ref,
        "history": history,
    }


def load_items(source: str | Path, form: str | None = None, *, dataset: str = "", dimension: str = "",
               load_images: bool = True, cache_dir: str | Path | None = None, layout: str = "items") -> list[dict]:
    """Read a ReForm-Eval file from a local path, an http(s) URL or hf://datasets/<org>/<name>[@rev]/<file>.

    `layout` "items" reads the records as they are; another name is a key of reform_layouts.LAYOUTS, whose
    adapter turns the official file's own layout into such records first.

    `form` is one of FORMS; None means each item carries its own "form" (as the sample suite does). `dataset`
    and `dimension` label every item unless the item has its own. With load_images=False the images are not
    decoded (item["image"] is None), for reading prediction dumps whose image paths are not available.
    Raises ValueError naming the index of a malformed item.
    """
    source = str(source)
    if form is not None and form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
    text, resolve = _read_source(source)
    cache = Path(cache_dir) if cache_dir else None
    if layout == "items":
        records = _records(text, source)
    else:
        from evaluator.benchmarks.reform_layouts import adapt  # lazy: the layouts import this module

        records = adapt(layout, text, source)
    return [normalise_item(rec, i, form, dataset, dimension, resolve, load_images, cache)
            for i, rec in enumerate(records)]


def hub_source(entry: ReformDataset, revision: str | None = None, path: str | None = None) -> str:
    """hf:// reference of a table entry's file (or of another `path` in the same Hub dataset)."""
    at = f"@{revision}" if revision else ""
    return f"hf://datasets/{HUB_REPO}{at}/{path or entry.hub_path}"


# --------------------------------------------------------------------------------------------- multi-file sets
# TDIUC and MSCOCO object counting keep questions, answers and distractor lists in separate files; the official
# loaders join them and draw 3 distractors per question from the choice list of its type (unseeded there; seeded by
# question id here, so a run is reproducible). A yes/no TDIUC answer gets the options [yes, no].

def _choice_list(source: str) -> list:
    """A distractor list file: rows with a "choice" field (as the official loaders read it), or bare values."""
    text, _ = _read_source(source)
    rows = json_records(text, source, ("choice", "choices", "data"))
    values = [row.get("choice") if isinstance(row, dict) else row for row in rows]
    if not values or any(v is None or isinstance(v, (dict, list)) for v in values):
        raise ValueError(f"{source}: expected a list of choices")
    return values


def _draw_options(answer: str, pool: list, question_id: str) -> list[str]:
    """3 distractors drawn from `pool` (the answer excluded) plus the answer, seeded by the question id."""
    distractors = sorted({str(v) for v in pool} - {answer})
    rng = random.Random(f"reform-choices|{question_id}")
    drawn = rng.sample(distractors, min(3, len(distractors)))
    if not drawn:
        raise ValueError(f"question {question_id}: the choice list has no distractor for {answer!r}")
    return drawn + [answer]


def _child(folder: str, name: str) -> str:
    return folder.rstrip("/") + "/" + name


def load_tdiuc(questions: str, annotations: str, choices_dir: str, question_type: str, *, dataset: str = "",
               dimension: str = "", load_images: bool = True, cache_dir: str | Path | None = None) -> list[dict]:
    """One TDIUC question type from its three sources (paths, URLs or hf:// references).

    questions: rows {question_id, image_id (the image, base64 on the Hub), question}; annotations: rows
    {question_id, question_type, answers: [{answer}, ...]}; choices_dir: a folder holding <question_type>.json.
    The gold answer is the first annotated answer.
    """
    q_text, resolve = _read_source(questions)
    a_text, _ = _read_source(annotations)
    answers = {}
    for k, ann in enumerate(json_records(a_text, annotations, ("annotations", "data"))):
        try:
            answers[str(ann["question_id"])] = (ann["question_type"], str(ann["answers"][0]["answer"]))
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"{annotations}: annotation {k} lacks question_id, question_type or answers") from None
    pool = None
    items = []
    cache = Path(cache_dir) if cache_dir else None
    for k, q in enumerate(json_records(q_text, questions, ("questions", "data"))):
        if not isinstance(q, dict) or "question_id" not in q:
            raise ValueError(f"ReForm-Eval item {k}: no question_id")
        qid = str(q["question_id"])
        if qid not in answers:
            raise ValueError(f"ReForm-Eval item {k}: question {qid} has no annotation")
        qtype, answer = answers[qid]
        if qtype != question_type:
            continue
        if answer in ("yes", "no"):
            options = ["yes", "no"]
        else:
            if pool is None:
                pool = _choice_list(_child(choices_dir, f"{question_type}.json"))
            options = _draw_options(answer, pool, qid)
        record = {"question_id": qid, "question": q.get("question"), "answer": answer, "answer_options": options,
                  "image": q.get("image") or q.get("image_id")}
        items.append(normalise_item(record, k, MC, dataset, dimension, resolve, load_images, cache))
    return items


def load_object_counting(annotations: str, choices: str, *, dataset: str = "", dimension: str = "",
                         load_images: bool = True, cache_dir: str | Path | None = None) -> list[dict]:
    """MSCOCO object counting: rows {Image_ID, Question, Answer, image (base64)} + a list of count choices.

    Question ids are the row numbers from 1, as the official loader numbers them.
    """
    text, resolve = _read_source(annotations)
    pool = _choice_list(choices)
    cache = Path(cache_dir) if cache_dir else None
    items = []
    for k, ann in enumerate(json_records(text, annotations)):
        if not isinstance(ann, dict) or ann.get("Answer") in (None, ""):
            raise ValueError(f"ReForm-Eval item {k}: no Answer")
        qid, answer = str(k + 1), str(ann["Answer"])
        record = {"question_id": qid, "question": ann.get("Question"), "answer": answer,
                  "answer_options": _draw_options(answer, pool, qid),
                  "image": ann.get("image") or ann.get("Image_ID")}
        items.append(normalise_item(record, k, MC, dataset, dimension, resolve, load_images, cache))
    return items


def load_entry(entry: ReformDataset, revision: str | None = None, load_images: bool = True) -> list[dict]:
    """The items of one table entry, downloaded from the Hub dataset."""
    labels = {"dataset": entry.name, "dimension": entry.dimension, "load_images": load_images}
    if not entry.multi_file:
        return load_items(hub_source(entry, revision), entry.form, layout=entry.layout, **labels)
    if entry.question_type is not None:
        annotations = entry.hub_path.replace("_ques.json", "_anns.json")
        return load_tdiuc(hub_source(entry, revision), hub_source(entry, revision, annotations),
                          hub_source(entry, revision, entry.choices_path), entry.question_type, **labels)
    return load_object_counting(hub_source(entry, revision), hub_source(entry, revision, entry.choices_path),
                                **labels)


def load_full_suite(names: list[str] | None = None, revision: str | None = None,
                    load_images: bool = True) -> list[dict]:
    """Download the datasets of the table (all, or those named) from the Hub and load them."""
    chosen = []
    for name in names or [d.name for d in DATASETS]:
        entry = DATASETS_BY_NAME.get(name)
        if entry is None:
            raise ValueError(f"unknown ReForm-Eval dataset {name!r}")
        chosen.append(entry)
    items: list[dict] = []
    for entry in chosen:
        items.extend(load_entry(entry, revision, load_images))
    return items


def load_sample_suite(load_images: bool = True) -> list[dict]:
    """Our own small suite (evaluator/data/reform_sample.json, drawn by draw_reform_sample.py): >= 5 per dimension."""
    return load_items(SAMPLE_PATH, None, load_images=load_images)
