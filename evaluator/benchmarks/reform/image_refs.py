"""An item's image as a data file gives it: base64 text (as the Hub files store it, with or without a
`data:image/...;base64,` prefix) or a path, resolved against the data file's folder (a local folder, an http(s) URL
or the same hf:// dataset repo). Told apart, found in the record, and opened as an RGB image."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from PIL import Image

from evaluator.benchmarks.reform import files
from evaluator.inputs.images import ImageUnavailable, decode_base64_image, fetch_image, is_url
from evaluator.inputs.sources import parse_hf

IMAGE_KEYS = ("image", "img", "image_base64", "image_path", "image_name", "image_id")
_IMAGE_EXT = re.compile(r"\.(jpe?g|png|gif|bmp|webp|tiff?)$", re.IGNORECASE)


def looks_like_path(ref: str) -> bool:
    """True for a file name, URL or path; False for base64 text (long, no image extension)."""
    s = ref.strip()
    return bool(_IMAGE_EXT.search(s)) or is_url(s) or s.startswith(("hf://", "/", "./", "../")) or len(s) < 64


def image_field(record: dict) -> str | None:
    """The record's image reference: the first non-empty string under IMAGE_KEYS (a plain image_id is no image)."""
    for key in IMAGE_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            if key == "image_id" and not _IMAGE_EXT.search(value) and len(value) < 256:
                continue  # a plain id (e.g. a COCO number), not a reference to an image
            return value
    return None


def shown_ref(ref: str) -> str:
    """How an unopened image is described: its path as given, or "base64"."""
    return ref if looks_like_path(ref) else "base64"


def open_image(ref: str, resolve: Callable[[str], str], cache_dir: Path) -> tuple[Image.Image, str]:
    """(RGB image, where it came from: "base64" or the resolved path / URL); ValueError when it cannot be read."""
    if not looks_like_path(ref):
        return decode_base64_image(ref), "base64"
    s = ref.strip()
    if not (is_url(s) or s.startswith("hf://") or Path(s).is_absolute()):
        s = resolve(s)
    try:
        if s.startswith("hf://"):
            repo_id, revision, filename = parse_hf(s)
            img = fetch_image(files.hub_file(repo_id, filename, revision), cache_dir)
        else:
            img = fetch_image(s, cache_dir)
    except ImageUnavailable as exc:
        raise ValueError(f"image {s!r} unavailable: {exc.reason}") from None
    except Exception as exc:  # noqa: BLE001 - a Hub failure on one image
        raise ValueError(f"image {s!r} unavailable ({type(exc).__name__})") from None
    return img.convert("RGB"), s
