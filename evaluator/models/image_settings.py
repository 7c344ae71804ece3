"""What sets a vision model's image resolution, read off its processor as the checkpoint ships it (results.json's
run.image_settings): the evaluator never overrides these, so a run is scored at the model's own resolution, and the
record says what that was (Qwen's min_pixels / max_pixels, InternVL's tiles, Gemma 3's pan and scan, Gemma 4's soft
tokens, ...)."""
from __future__ import annotations

from typing import Any

# Image-processor (and processor) attributes that decide how many pixels, tiles or tokens an image becomes.
RESOLUTION_KEYS = (
    "size", "crop_size", "min_pixels", "max_pixels", "patch_size", "merge_size", "temporal_patch_size",
    "do_image_splitting", "max_image_size", "image_grid_pinpoints", "do_pan_and_scan", "pan_and_scan_min_crop_size",
    "pan_and_scan_max_num_crops", "crop_to_patches", "min_patches", "max_patches", "tile_size", "max_num_tiles",
    "vision_feature_select_strategy", "image_seq_length", "image_seq_len", "num_image_tokens", "min_image_tokens",
    "max_image_tokens", "max_num_patches", "downsample_factor", "spatial_merge_size", "do_resize", "resample",
    "max_soft_tokens", "pooling_kernel_size",  # Gemma 4: soft tokens per image at most, and the patches pooled into one
    "vision_aspect_ratio",  # LLaVA-OneVision: "anyres_max_9", tiles pooled down to at most 9 tiles' worth
)


def _plain(value: Any) -> Any:
    """A JSON-ready copy: dicts (their unset entries left out), lists and scalars as they are, anything else by its
    text."""
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def image_settings(processor: Any) -> dict[str, Any]:
    """The resolution settings of `processor` that it has: its image processor's as saved with the checkpoint
    (preprocessor_config.json), under what the processor applies over them at every call (InternVL's and Aya
    Vision's processors always tile, whatever their image processor says), then the processor's own (the image tokens
    per image, ...)."""
    image_processor = getattr(processor, "image_processor", None)
    saved = image_processor.to_dict() if callable(getattr(image_processor, "to_dict", None)) else {}
    found = {key: _plain(saved[key]) for key in RESOLUTION_KEYS if saved.get(key) is not None}
    found.update({key: _plain(value) for key, value in _applied(processor).items()
                  if key in RESOLUTION_KEYS and value is not None})
    for key in RESOLUTION_KEYS:
        value = getattr(processor, key, None)
        if key not in found and value is not None and not callable(value):
            found[key] = _plain(value)
    return found


def _applied(processor: Any) -> dict[str, Any]:
    """The image settings a processor passes at every call over its image processor's (its images_kwargs defaults);
    {} when it has none or they cannot be read."""
    merge = getattr(processor, "_merge_kwargs", None)
    if not callable(merge):
        return {}
    try:
        applied = merge().get("images_kwargs")
    except Exception:  # noqa: BLE001 - a processor whose defaults cannot be merged without a call's arguments
        return {}
    return dict(applied) if isinstance(applied, dict) else {}
