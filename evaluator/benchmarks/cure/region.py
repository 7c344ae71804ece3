"""The marked region: the first bbox drawn as a thick red rectangle on the full image.

The data has no high-level question text, only a box. The box is *drawn* on the full image rather than cropped
to: the inferences are about the region in its context (who is holding the fruit, what the weather is), which a
crop would cut away. It is scaled when the fetched image's size differs from the size recorded in the data, and
drawn just outside the region so it hides nothing.
"""
from __future__ import annotations

from pathlib import Path

from PIL import Image

from evaluator.benchmarks.cure.images import unavailable_in_release
from evaluator.inputs.images import ImageUnavailable, fetch_image_ref, mark_box


def region_box(bbox: dict, declared_size: tuple[float, float],
               image_size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The bbox in the fetched image's pixels: (x0, y0, x1, y1), x1/y1 exclusive, scaled from the declared size."""
    sx = image_size[0] / declared_size[0]
    sy = image_size[1] / declared_size[1]
    x0 = round(bbox["left"] * sx)
    y0 = round(bbox["top"] * sy)
    x1 = round((bbox["left"] + bbox["width"]) * sx)
    y1 = round((bbox["top"] + bbox["height"]) * sy)
    w, h = image_size
    x0, x1 = max(0, min(x0, w)), max(0, min(x1, w))
    y0, y1 = max(0, min(y0, h)), max(0, min(y1, h))
    return x0, y0, max(x1, x0 + 1), max(y1, y0 + 1)


def mark_region(image: Image.Image, bbox: dict, declared_size: tuple[float, float]) -> Image.Image:
    """A copy of `image` (RGB) with a thick red rectangle drawn just outside the (scaled) bbox."""
    return mark_box(image, region_box(bbox, declared_size, image.size))


def marked_image(inst: dict, images_dir: Path) -> Image.Image:
    """The instance's image, fetched (through the cache) and marked; ImageUnavailable when it cannot be read (its
    reason naming the file expected in the images folder when the image is read from the releases)."""
    try:
        image = fetch_image_ref(inst["image_ref"], Path(images_dir), shown=inst["image"]["url"])
    except ImageUnavailable as exc:
        if inst.get("release_path"):
            raise unavailable_in_release(exc, inst["release_path"]) from None
        raise
    return mark_region(image, inst["bboxes"][0], (inst["image"]["width"], inst["image"]["height"]))
