"""ReForm-Eval's grounded OCR sets (Grounded IC15, Grounded COCO-Text, Grounded TextOCR): the word's box drawn on
the image before the model is asked to read it.

Their files (`<set>_gocr_core_open_ended.json`) hold {"version", "split", "data": [{question_id, image (base64),
question (a list of phrasings of one request), answer_txt, bbox}]}; the official builder (GroundOCR_OpenEnded in
FudanDISC/ReForm-Eval build/{IC15,COCO_text,textOCR}/groundocr_dataset.py) asks the first phrasing and draws the
box in red with OpenCV's rectangle before asking. Each set reads its bbox its own way and draws its own width:

    Grounded IC15       bbox [x1, y1, x2, y2], two corners      line thickness 2
    Grounded COCO-Text  bbox [x, y, w, h], corners (x, y), (x + w, y + h)   thickness 5
    Grounded TextOCR    bbox [x, y, w, h], as COCO-Text         thickness 2

Coordinates are truncated to whole pixels, as the builder's int() does. The adapters (layouts.py) keep the box on
the record ("outline": [x1, y1, x2, y2, thickness]); items.py draws it with draw_outline when the image is opened,
so a path image and a base64 one are drawn alike, and the Explorer shows the picture the model saw.
"""
from __future__ import annotations

import numpy as np
from PIL import Image

RED = (255, 0, 0)
# layout -> (how its bbox reads, line thickness): the builders' draw_bbox
CONVENTIONS = {"gocr_ic15": ("corners", 2), "gocr_cocotext": ("xywh", 5), "gocr_textocr": ("xywh", 2)}


def four_numbers(bbox) -> bool:
    """Whether a file's bbox is a list of four numbers (TextOCR's crop reads one too)."""
    return (isinstance(bbox, (list, tuple)) and len(bbox) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in bbox))


def outline(bbox, convention: str, thickness: int, k: int) -> list[int]:
    """The builder's two corners of `bbox` and the line thickness: [x1, y1, x2, y2, thickness]."""
    if not four_numbers(bbox):
        raise TypeError(f"item {k}: bbox must be four numbers")
    x, y, a, b = bbox
    x2, y2 = (a, b) if convention == "corners" else (x + a, y + b)
    return [int(x), int(y), int(x2), int(y2), thickness]


def draw_outline(image: Image.Image, corners: tuple[int, int, int, int], thickness: int,
                 color: tuple[int, int, int] = RED) -> Image.Image:
    """A copy of `image` (RGB) with the rectangle of two opposite corners drawn as OpenCV's rectangle draws it at
    `thickness` >= 2: each side a band of half-width round(thickness / 2 + 0.25 for an odd thickness) between the
    corners, and a disc of radius round(thickness / 2) on each corner (the rounded joints of its thick lines); what
    falls outside the image is clipped."""
    if thickness < 2:
        raise ValueError("thickness must be at least 2")
    pixels = np.array(image.convert("RGB"))
    h, w = pixels.shape[:2]
    x1, y1, x2, y2 = corners
    half = int(thickness / 2 + 0.25 * (thickness % 2) + 0.5)
    radius = int(thickness / 2 + 0.5)
    mask = np.zeros((h, w), dtype=bool)
    ys, xs = np.ogrid[:h, :w]

    def band(left: int, top: int, right: int, bottom: int) -> None:
        mask[max(top, 0):max(bottom + 1, 0), max(left, 0):max(right + 1, 0)] = True

    lo_x, hi_x, lo_y, hi_y = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
    for y in (y1, y2):
        band(lo_x, y - half, hi_x, y + half)
    for x in (x1, x2):
        band(x - half, lo_y, x + half, hi_y)
    for cx, cy in ((x1, y1), (x2, y1), (x2, y2), (x1, y2)):
        mask |= (xs - cx) ** 2 + (ys - cy) ** 2 <= radius ** 2
    pixels[mask] = color
    return Image.fromarray(pixels)
