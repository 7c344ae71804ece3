"""Write the ReForm-Eval sample suite: reform_sample.json, in the official file shape with base64 PNG images.

Our own content, 6 items in each of the 8 dimensions: simple scenes drawn with PIL (shapes, colours, counts,
positions) and words rendered with PIL's built-in bitmap font (ImageFont.load_default_imagefont(), falling back to
ImageFont.load_default(); no font file is needed).
Each item carries its own "dataset", "dimension" and "form" (the official files hold one dataset each).
Option order is shuffled by random.Random seeded with the question id, so the output is deterministic.
Writes into evaluator/benchmarks/reform/sample/. Run from anywhere:

    python tools/draw_reform_sample.py
"""
from __future__ import annotations

import base64
import io
import json
import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "evaluator" / "benchmarks" / "reform" / "sample"
OUT_JSON = SAMPLE_DIR / "reform_sample.json"
W, H = 160, 120

COLORS = {
    "red": (210, 40, 40), "green": (40, 160, 60), "blue": (50, 90, 200), "yellow": (245, 210, 40),
    "orange": (240, 140, 30), "purple": (130, 60, 170), "black": (0, 0, 0), "white": (255, 255, 255),
}
SKY, NIGHT, GRASS, SAND, SEA = (135, 196, 235), (20, 24, 60), (90, 170, 80), (236, 214, 160), (40, 110, 190)
BG = (245, 245, 240)


def canvas(color=BG):
    img = Image.new("RGB", (W, H), color)
    return img, ImageDraw.Draw(img)


def shape(d, kind, cx, cy, r, color):
    fill = COLORS[color] if isinstance(color, str) else color
    if kind == "circle":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fill)
    elif kind == "square":
        d.rectangle([cx - r, cy - r, cx + r, cy + r], fill=fill)
    elif kind == "triangle":
        d.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=fill)
    elif kind == "diamond":
        d.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=fill)
    else:
        raise ValueError(kind)


def default_font():
    """PIL's built-in bitmap font: the same pixels everywhere (Pillow >= 10.1 load_default() may give FreeType)."""
    bitmap = getattr(ImageFont, "load_default_imagefont", None)
    return bitmap() if bitmap is not None else ImageFont.load_default()


def _line_width(line, font, spacing):
    return sum(font.getmask(ch).size[0] + spacing for ch in line)


def text_image(lines, scale=3, bg=(255, 255, 255), fg=(0, 0, 0), spacing=1):
    """Words rendered with the default bitmap font, one character at a time with `spacing` pixels between them
    (the font's glyphs touch otherwise), then enlarged (nearest) so they stay legible after resizing."""
    font = default_font()
    line_h = 15
    w = max(_line_width(line, font, spacing) for line in lines) + 8
    small = Image.new("RGB", (w, line_h * len(lines) + 4), bg)
    d = ImageDraw.Draw(small)
    for k, line in enumerate(lines):
        x = 4
        for ch in line:
            d.text((x, 2 + k * line_h), ch, fill=fg, font=font)
            x += font.getmask(ch).size[0] + spacing
    return small.resize((small.width * scale, small.height * scale), Image.NEAREST)


def sun(d, cx, cy, r=12):
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=COLORS["yellow"])


def moon(d, cx, cy, r=11):
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(240, 240, 210))
    d.ellipse([cx - r + 6, cy - r - 2, cx + r + 6, cy + r - 2], fill=NIGHT)


def b64(img):
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return base64.b64encode(buf.getvalue()).decode("ascii")


# --------------------------------------------------------------------------------------------- scenes

def scene_single(kind, color, bg=BG):
    img, d = canvas(bg)
    shape(d, kind, W // 2, H // 2, 36, color)
    return img


def scene_day_night(night):
    img, d = canvas(NIGHT if night else SKY)
    d.rectangle([0, 88, W, H], fill=(30, 70, 40) if night else GRASS)
    (moon if night else sun)(d, 120, 28)
    if night:
        for x, y in ((20, 20), (50, 35), (80, 15), (35, 60), (95, 50)):
            d.point([(x, y), (x + 1, y), (x, y + 1)], fill=(255, 255, 255))
    return img


def scene_beach():
    img, d = canvas(SKY)
    d.rectangle([0, 60, W, 85], fill=SEA)
    d.rectangle([0, 85, W, H], fill=SAND)
    sun(d, 30, 25)
    return img


def scene_shapes(items, bg=BG):
    """items: (kind, color, cx, cy, r)"""
    img, d = canvas(bg)
    for kind, color, cx, cy, r in items:
        shape(d, kind, cx, cy, r, color)
    return img


def scene_rain():
    img, d = canvas((170, 175, 185))
    for cx in (40, 80, 120):
        d.ellipse([cx - 28, 8, cx + 28, 40], fill=(110, 110, 120))
    for x in range(10, W, 14):
        for y in (50, 72, 94):
            d.line([x + (y % 7), y, x + (y % 7) - 3, y + 8], fill=COLORS["blue"], width=2)
    d.rectangle([0, 108, W, H], fill=GRASS)
    return img


def scene_ramp():
    img, d = canvas()
    d.polygon([(10, 40), (10, 100), (90, 100)], fill=(150, 110, 70))
    shape(d, "circle", 20, 30, 9, "red")
    d.rectangle([100, 80, 120, 100], fill=COLORS["green"])
    d.rectangle([135, 20, 155, 40], fill=COLORS["blue"])
    d.line([0, 100, W, 100], fill=(0, 0, 0), width=2)
    return img


def scene_glasses(full_left):
    img, d = canvas()
    for k, cx in enumerate((50, 110)):
        d.rectangle([cx - 18, 30, cx + 18, 100], outline=(60, 60, 60), width=3)
        full = (k == 0) == full_left
        top = 40 if full else 88
        d.rectangle([cx - 15, top, cx + 15, 97], fill=(80, 150, 230))
    return img


def scene_balance(heavy_left):
    img, d = canvas()
    d.polygon([(80, 70), (70, 100), (90, 100)], fill=(90, 90, 90))
    ly, ry = (80, 50) if heavy_left else (50, 80)
    d.line([30, ly, 130, ry], fill=(0, 0, 0), width=4)
    d.rectangle([20, ly - 20, 40, ly - 2], fill=COLORS["orange"])
    d.rectangle([120, ry - 20, 140, ry - 2], fill=COLORS["purple"])
    return img


# --------------------------------------------------------------------------------------------- items

def mc(qid, dataset, dimension, image, question, answer, distractors, history=None):
    options = [answer] + list(distractors)
    random.Random(qid).shuffle(options)
    item = {"question_id": qid, "image_id": qid, "dataset": dataset, "dimension": dimension,
            "form": "multiple_choice", "question": question, "answer": answer, "answer_options": options,
            "image": b64(image)}
    if history is not None:
        item["history"] = history
    return item


def open_item(qid, dataset, dimension, form, image, question, answer):
    return {"question_id": qid, "image_id": qid, "dataset": dataset, "dimension": dimension, "form": form,
            "question": question, "answer": answer, "image": b64(image)}


def yes_no(qid, dataset, dimension, image, question, answer):
    """A yes/no question with the options in VizWiz-yesno's order, [yes, no] (not shuffled here)."""
    return {"question_id": qid, "image_id": qid, "dataset": dataset, "dimension": dimension,
            "form": "multiple_choice", "question": question, "answer": answer, "answer_options": ["yes", "no"],
            "image": b64(image)}


def grounded_ocr(qid, words, boxed, question):
    """Words side by side; the record names the box of word `boxed` ("outline": two corners and a line thickness
    of 2, as Grounded IC15 draws it), which the suite draws when it reads the image."""
    pictures = [text_image([word]) for word in words]
    gap = 24
    img = Image.new("RGB", (sum(p.width for p in pictures) + gap * (len(words) + 1), max(p.height for p in pictures)
                            + 2 * gap), (255, 255, 255))
    x, corners = gap, None
    for k, picture in enumerate(pictures):
        img.paste(picture, (x, gap))
        if k == boxed:
            corners = [x - 6, gap - 6, x + picture.width + 5, gap + picture.height + 5]
        x += picture.width + gap
    item = open_item(qid, "sample-grounded-ocr", "scene_text", "ocr", img, question, words[boxed])
    item["outline"] = corners + [2]
    return item


def caption(qid, image, question, references):
    return {"question_id": qid, "image_id": qid, "dataset": "sample-caption", "dimension": "description",
            "form": "caption", "question": question, "references": references, "image": b64(image)}


def build_items() -> list[dict]:
    items = []
    cp, fp = "coarse_perception", "fine_perception"
    ds = "sample-scene"
    items += [
        mc("coarse-01", ds, cp, scene_single("circle", "red"), "What shape is shown in the image?",
           "circle", ["square", "triangle", "diamond"]),
        mc("coarse-02", ds, cp, scene_single("triangle", "green"), "What shape is shown in the image?",
           "triangle", ["circle", "square", "star"]),
        mc("coarse-03", ds, cp, scene_day_night(True), "Is this scene during the day or at night?",
           "at night", ["during the day"]),
        mc("coarse-04", ds, cp, scene_day_night(False), "Is this scene during the day or at night?",
           "during the day", ["at night"]),
        mc("coarse-05", ds, cp, scene_beach(), "What kind of place is shown?",
           "a beach", ["a forest", "a city street", "a kitchen"]),
        mc("coarse-06", ds, cp, scene_single("square", "white", bg=COLORS["purple"]),
           "What is the colour of the background?", "purple", ["white", "green", "orange"]),
        yes_no("quality-01", "sample-quality", cp, scene_single("circle", (28, 28, 30), bg=(20, 20, 22)),
               "Is the image too dark to see what it shows?", "yes"),
    ]
    ds = "sample-objects"
    items += [
        mc("fine-01", ds, fp, scene_shapes([("circle", "red", 30, 40, 12), ("circle", "red", 80, 70, 12),
                                            ("circle", "red", 130, 40, 12)]),
           "How many red circles are there?", "3", ["2", "4", "5"]),
        mc("fine-02", ds, fp, scene_shapes([("square", "blue", 40, 60, 16), ("triangle", "yellow", 115, 60, 18)]),
           "What colour is the triangle?", "yellow", ["blue", "red", "green"]),
        mc("fine-03", ds, fp, scene_shapes([("circle", "green", 30, 60, 10), ("square", "orange", 80, 60, 28),
                                            ("diamond", "blue", 135, 60, 14)]),
           "Which object is the largest?", "the orange square", ["the green circle", "the blue diamond"]),
        mc("fine-04", ds, fp, scene_shapes([("square", "purple", 30, 35, 10), ("square", "purple", 70, 35, 10),
                                            ("circle", "purple", 110, 35, 10), ("square", "purple", 50, 85, 10),
                                            ("square", "purple", 100, 85, 10)]),
           "How many squares are there?", "4", ["3", "5", "2"]),
        mc("fine-05", ds, fp, scene_shapes([("circle", "black", 40, 60, 18), ("circle", "white", 120, 60, 18)],
                                           bg=(160, 200, 160)),
           "What colour is the circle on the right?", "white", ["black", "red", "blue"]),
        mc("fine-06", ds, fp, scene_shapes([("triangle", "red", 40, 60, 20), ("diamond", "green", 120, 60, 20)]),
           "Which of these objects is in the image?", "a green diamond",
           ["a blue square", "a yellow circle", "a red square"]),
    ]
    st = "scene_text"
    items += [
        open_item("ocr-01", "sample-ocr", st, "ocr", text_image(["HELLO"]), "What is written in the image?", "HELLO"),
        open_item("ocr-02", "sample-ocr", st, "ocr", text_image(["garden"]), "What is written in the image?",
                  "garden"),
        open_item("ocr-03", "sample-ocr", st, "ocr", text_image(["STOP"], bg=COLORS["red"], fg=(255, 255, 255)),
                  "What word is on the sign?", "STOP"),
        open_item("ocr-04", "sample-ocr", st, "ocr", text_image(["42"]), "What number is written in the image?",
                  "42"),
        grounded_ocr("gocr-01", ["OPEN", "SHUT"], 1, "What is written inside the red box?"),
        open_item("kie-01", "sample-kie", st, "kie", text_image(["RECEIPT", "TEA 2.50", "TOTAL 7.50"], scale=2),
                  'What is the "TOTAL" information in the image?', "7.50"),
        open_item("kie-02", "sample-kie", st, "kie", text_image(["NAME: ALICE", "CITY: PARIS"], scale=2),
                  'What is the "CITY" information in the image?', "PARIS"),
    ]
    vr, ds = "visual_reasoning", "sample-reasoning"
    items += [
        mc("reason-01", ds, vr, scene_rain(), "What should a person going outside now take along?",
           "an umbrella", ["sunglasses", "a sun hat", "a kite"]),
        mc("reason-02", ds, vr, scene_glasses(full_left=True), "Which glass holds more water?",
           "the left one", ["the right one", "they hold the same"]),
        mc("reason-03", ds, vr, scene_balance(heavy_left=True), "Which box on the balance is heavier?",
           "the orange box", ["the purple box", "they weigh the same"]),
        mc("reason-04", ds, vr, scene_ramp(), "If the red ball rolls down the ramp, which box will it hit first?",
           "the green box", ["the blue box", "neither box"]),
        mc("reason-05", ds, vr, scene_day_night(True), "Would you expect to see the sun in the sky now?",
           "no", ["yes"]),
        mc("reason-06", ds, vr, scene_shapes([("triangle", "blue", 40, 60, 22), ("square", "red", 120, 60, 20)]),
           "Which shape has more corners?", "the red square", ["the blue triangle", "they have the same"]),
    ]
    sp, ds = "spatial", "sample-spatial"
    items += [
        mc("spatial-01", ds, sp, scene_shapes([("circle", "red", 40, 60, 15), ("square", "blue", 120, 60, 15)]),
           "Where is the red circle relative to the blue square?", "left", ["right", "above", "below"]),
        mc("spatial-02", ds, sp, scene_shapes([("circle", "red", 120, 60, 15), ("square", "blue", 40, 60, 15)]),
           "Where is the red circle relative to the blue square?", "right", ["left", "above", "below"]),
        mc("spatial-03", ds, sp, scene_shapes([("triangle", "green", 80, 25, 15), ("circle", "orange", 80, 92, 15)]),
           "Where is the green triangle relative to the orange circle?", "above", ["below", "left", "right"]),
        mc("spatial-04", ds, sp, scene_shapes([("triangle", "green", 80, 92, 15), ("circle", "orange", 80, 25, 15)]),
           "Where is the green triangle relative to the orange circle?", "below", ["above", "left", "right"]),
        mc("spatial-05", ds, sp, scene_shapes([("square", "purple", 25, 60, 12), ("diamond", "yellow", 80, 60, 12),
                                               ("circle", "blue", 135, 60, 12)]),
           "Which object is in the middle?", "the yellow diamond", ["the purple square", "the blue circle"]),
        mc("spatial-06", ds, sp, scene_shapes([("circle", "red", 30, 60, 12), ("circle", "green", 75, 60, 12),
                                               ("circle", "blue", 140, 60, 12)]),
           "Which circle is closest to the green circle?", "the red circle", ["the blue circle"]),
    ]
    cm, ds = "cross_modal_inference", "sample-matching"
    items += [
        mc("cross-01", ds, cm, scene_shapes([("triangle", "green", 50, 60, 18), ("triangle", "green", 110, 60, 18)]),
           'Does the text "two green triangles" describe the image?', "yes", ["no"]),
        mc("cross-02", ds, cm, scene_shapes([("circle", "blue", 80, 60, 25)]),
           'Does the text "a red square" describe the image?', "no", ["yes"]),
        mc("cross-03", ds, cm, scene_beach(), "Which caption describes the image?",
           "a sunny beach by the sea", ["a snowy mountain at night", "a busy road with cars", "a bowl of fruit"]),
        mc("cross-04", ds, cm, scene_day_night(True), "Which caption describes the image?",
           "a moon and stars over a field", ["a sun over a beach", "a red circle on white", "a rainy street"]),
        mc("cross-05", ds, cm, scene_shapes([("circle", "orange", 40, 40, 12), ("circle", "orange", 110, 80, 12),
                                             ("square", "orange", 80, 60, 12)]),
           'Given the image, is the statement "there are more circles than squares" true, false or '
           "impossible to tell?", "true", ["false", "impossible to tell"]),
        mc("cross-06", ds, cm, scene_rain(), 'Given the image, is the statement "the weather is dry" true, false '
           "or impossible to tell?", "false", ["true", "impossible to tell"]),
    ]
    q = "Describe the image in one sentence."
    items += [
        caption("caption-01", scene_single("circle", "red"), q,
                ["A red circle on a white background.", "A single red circle in the middle of the picture."]),
        caption("caption-02", scene_beach(), q,
                ["A beach with the sea and the sun in a blue sky.", "Sand, water and a yellow sun."]),
        caption("caption-03", scene_day_night(True), q,
                ["A field at night under a moon and stars.", "A dark sky with a moon above green grass."]),
        caption("caption-04", scene_rain(), q,
                ["Rain falling from grey clouds.", "Dark clouds and rain over a field."]),
        caption("caption-05", scene_shapes([("square", "blue", 40, 60, 16), ("triangle", "yellow", 115, 60, 18)]), q,
                ["A blue square next to a yellow triangle.", "Two shapes: a blue square and a yellow triangle."]),
        caption("caption-06", scene_glasses(full_left=True), q,
                ["Two glasses, the left one full of water and the right one almost empty.",
                 "A full glass beside a nearly empty glass."]),
    ]
    mt, ds = "multi_turn_dialogue", "sample-dialogue"
    img_a = scene_shapes([("square", "red", 40, 60, 16), ("circle", "blue", 100, 40, 10),
                          ("circle", "blue", 130, 85, 10)])
    img_b = scene_shapes([("triangle", "green", 40, 70, 20), ("diamond", "orange", 115, 50, 18)], bg=SKY)
    img_c = scene_balance(heavy_left=False)
    h_a1 = [{"from": "human", "value": "What colour is the square? Options: (A) red; (B) green; (C) blue."},
            {"from": "assistant", "value": "(A) red"}]
    h_b1 = [{"from": "human", "value": "How many shapes are in the image? Options: (A) 1; (B) 2; (C) 3."},
            {"from": "assistant", "value": "(B) 2"}]
    h_c1 = [{"from": "human", "value": "What is shown in the image? Options: (A) a balance; (B) a clock."},
            {"from": "assistant", "value": "(A) a balance"}]
    items += [
        mc("dialogue-01", ds, mt, img_a, "What colour is the square?", "red", ["green", "blue", "yellow"], []),
        mc("dialogue-02", ds, mt, img_a, "How many circles are there?", "2", ["1", "3", "4"], h_a1),
        mc("dialogue-03", ds, mt, img_a, "What colour are the circles?", "blue", ["red", "green", "purple"],
           h_a1 + [{"from": "human", "value": "How many circles are there? Options: (A) 1; (B) 2; (C) 3."},
                   {"from": "assistant", "value": "(B) 2"}]),
        mc("dialogue-04", ds, mt, img_b, "What colour is the triangle?", "green", ["orange", "blue", "red"], h_b1),
        mc("dialogue-05", ds, mt, img_b, "Which shape is higher in the image?", "the diamond",
           ["the triangle"], h_b1 + [{"from": "human", "value": "What colour is the triangle? Options: (A) green; "
                                                                 "(B) orange."},
                                     {"from": "assistant", "value": "(A) green"}]),
        mc("dialogue-06", ds, mt, img_c, "Which box is heavier?", "the purple box",
           ["the orange box", "they weigh the same"], h_c1),
    ]
    return items


def main() -> None:
    items = build_items()
    doc = {"version": "sample-1.0", "split": "sample",
           "note": "Written for the Open VLM Reasoning Leaderboard by tools/draw_reform_sample.py; "
                   "not ReForm-Eval data.",
           "data": items}
    OUT_JSON.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(items)} items to {OUT_JSON} ({OUT_JSON.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
