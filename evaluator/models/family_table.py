"""Every image-text-to-text model type of the pinned transformers, and what becomes of it here: it runs (a declared
family, families.FAMILIES) or it is refused, and why (NOT_RUN; a type this table does not name is "not yet verified").
rows() is what docs/models.md shows (tools/families_table.py writes it), and refusal() is the reason the CLI and the
Submit tab give for a refused type.
"""
from __future__ import annotations

from dataclasses import dataclass

from evaluator.models.families import BATCHED, FAMILIES, REFERENCE, SHARED, family

TABLE = "docs/models.md"  # where the table is, as the refusals name it

# Why a type is refused: one of these, with a detail where it helps (remote code is refused by its own rule,
# REMOTE_RULE, whatever the type).
VIDEO_ONLY = "video only"
ENCODER_DECODER = "encoder-decoder"
SPECIAL_PURPOSE = "OCR or special-purpose"
NOT_VERIFIED = "not yet verified"

_OCR = (SPECIAL_PURPOSE, "reads documents, text or formulas; not a general visual question answerer")

NOT_RUN: dict[str, tuple[str, str]] = {
    "blip": (ENCODER_DECODER, "BLIP-1: a text decoder that cross-attends to the image encoder"),
    "deepseek_ocr2": _OCR,
    "diffusion_gemma": (SPECIAL_PURPOSE, "writes text by block diffusion, not one token after another"),
    "evolla": (SPECIAL_PURPOSE, "reads protein sequences, not images"),
    "florence2": (ENCODER_DECODER, "a BART-style encoder-decoder"),
    "git": (SPECIAL_PURPOSE, "GIT: an image captioner"),
    "glm_ocr": _OCR,
    "got_ocr2": _OCR,
    "granite_docling": (SPECIAL_PURPOSE, "converts document pages to structured text"),
    "instructblipvideo": (VIDEO_ONLY, "takes a clip of frames, not a single image"),
    "kosmos-2.5": _OCR,
    "lighton_ocr": _OCR,
    "minicpm_ocr": _OCR,
    "paddleocr_vl": _OCR,
    "pi0": (SPECIAL_PURPOSE, "a vision-language-action model for robots"),
    "pix2struct": (ENCODER_DECODER, "an image-to-text encoder-decoder"),
    "pp_chart2table": (SPECIAL_PURPOSE, "turns charts into tables"),
    "pp_formulanet": (SPECIAL_PURPOSE, "reads formulas"),
    "qianfan_ocr": _OCR,
    "shieldgemma2": (SPECIAL_PURPOSE, "an image safety classifier"),
    "t5gemma2": (ENCODER_DECODER, "a T5-style encoder-decoder"),
    "udop": (ENCODER_DECODER, "a document encoder-decoder"),
    "unlimited_ocr": _OCR,
    "vision-encoder-decoder": (ENCODER_DECODER, "any vision encoder with a text decoder"),
}

TEXT_RULE = ("A **text-only model** runs when it is a decoder-only causal language model that transformers knows (in "
             "its causal-LM mapping, neither an encoder nor an encoder-decoder), with its tokenizer's chat template "
             "(plain text without one); it skips the benchmarks that need images. Llama and Qwen2 score their "
             "options in batches (checked); any other text model scores them one forward pass per option.")
REMOTE_RULE = ("A model whose config.json has an `auto_map` needs **remote code** and is refused, whatever its "
               "type: this leaderboard never runs code from a model repository. Molmo 2 (`molmo2`) runs from "
               "transformers' own code, but its public checkpoints were saved with an `auto_map` for older "
               "transformers versions: as published they are refused by this rule, and a copy saved without it "
               "runs.")


def image_text_types() -> dict[str, str]:
    """model_type -> class name, for every type transformers maps to AutoModelForImageTextToText."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES as mapping

    return {model_type: (names if isinstance(names, str) else names[0]) for model_type, names in mapping.items()}


def refusal(model_type: str) -> tuple[str, str]:
    """Why an image-text-to-text type that is no declared family is refused: (category, detail)."""
    return NOT_RUN.get(model_type, (NOT_VERIFIED, ""))


@dataclass(frozen=True)
class Row:
    """One model type's line of the table."""

    model_type: str
    model_class: str
    runs: bool
    why: str  # refused: its category and detail; runs: ""
    static_path: str  # runs: how generate keeps its cache on a GPU; refused: ""
    images: str  # runs: whether its image features are kept; refused: ""
    options: str  # runs: how its options are scored; refused: ""


def _static_path(model_type: str, class_name: str) -> str:
    declared = family(model_type)
    if declared.static_cache:
        return f"dynamic cache only: {declared.static_cache}"
    import transformers

    model_class = getattr(transformers, class_name, None)
    if model_class is not None and not getattr(model_class, "_can_compile_fullgraph", False):
        return "static cache, not compiled (transformers does not compile it into one graph)"
    return "static cache, compiled"


def _images(model_type: str) -> str:
    declared = family(model_type)
    if declared.image_layout is None:
        return f"not kept: {declared.images_not_kept}"
    if declared.images_scoring_only:
        return f"kept for option scoring: {declared.images_scoring_only}"
    return "kept (each image encoded once a run)"


def _options(model_type: str) -> str:
    declared = family(model_type)
    said = {BATCHED: "batched", SHARED: "one question at a time over its prompt's cache",
            REFERENCE: "one forward pass per option"}[declared.option_scoring]
    return f"{said}: {declared.why_not_batched}" if declared.why_not_batched else said


def rows() -> list[Row]:
    """Every image-text-to-text model type, in alphabetical order."""
    found = []
    for model_type, class_name in sorted(image_text_types().items()):
        if model_type in FAMILIES:
            found.append(Row(model_type, class_name, True, "", _static_path(model_type, class_name),
                             _images(model_type), _options(model_type)))
        else:
            category, detail = refusal(model_type)
            found.append(Row(model_type, class_name, False, f"{category}: {detail}" if detail else category,
                             "", "", ""))
    return found
