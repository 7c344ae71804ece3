"""Write the LAVE sample suite: evaluator/benchmarks/lave/sample/lave_sample.json and the PNGs in lave_sample/.

Our own content: 30 free-form VQA items about simple scenes drawn with PIL (shapes, colours, counts, positions, a
house, a car, a night sky, rain) and words or numbers rendered with PIL's built-in bitmap font
(ImageFont.load_default_imagefont(), falling back to ImageFont.load_default(); no font file is needed).
"vqa"-style items carry 10 human-style answers, like VQA v2 annotators (mostly the majority answer in varied
surface forms, plus one to three minority or odd answers); "doc"-style items (a receipt, a form, a price label)
carry 1 to 3 reference answers written as phrases or short sentences, like Docmatix.
No randomness at all and PNGs saved without metadata, so the output is byte-identical on every run.
Run from anywhere:

    python tools/draw_lave_sample.py

or call main(out_dir) to write lave_sample.json and lave_sample/ into another folder.
"""
from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "evaluator" / "benchmarks" / "lave" / "sample"
JSON_NAME = "lave_sample.json"
IMAGE_DIR_NAME = "lave_sample"
W, H = 160, 120  # scenes
DW, DH = 192, 144  # document-like images

COLORS = {
    "red": (210, 40, 40), "green": (40, 160, 60), "blue": (50, 90, 200), "yellow": (245, 210, 40),
    "orange": (240, 140, 30), "purple": (130, 60, 170), "black": (0, 0, 0), "white": (255, 255, 255),
    "brown": (130, 85, 45), "grey": (120, 120, 125),
}
SKY, NIGHT, GRASS = (135, 196, 235), (20, 24, 60), (90, 170, 80)
BG = (245, 245, 240)
PAPER = (252, 250, 242)


def canvas(color=BG, size=(W, H)):
    img = Image.new("RGB", size, color)
    return img, ImageDraw.Draw(img)


def fill_of(color):
    return COLORS[color] if isinstance(color, str) else color


def shape(d, kind, cx, cy, r, color):
    fill = fill_of(color)
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


def text_image(lines, scale=2, bg=(255, 255, 255), fg=(0, 0, 0), spacing=1):
    """Words in the default bitmap font, one character at a time with `spacing` pixels between them (the glyphs
    touch otherwise), then enlarged with NEAREST so they stay crisp."""
    font = default_font()
    line_h = 15
    widths = [sum(font.getmask(ch).size[0] + spacing for ch in line) for line in lines]
    small = Image.new("RGB", (max(widths) + 8, line_h * len(lines) + 4), fill_of(bg))
    d = ImageDraw.Draw(small)
    for k, line in enumerate(lines):
        x = 4
        for ch in line:
            d.text((x, 2 + k * line_h), ch, fill=fill_of(fg), font=font)
            x += font.getmask(ch).size[0] + spacing
    return small.resize((small.width * scale, small.height * scale), Image.NEAREST)


def paste_centered(img, piece, cx, cy):
    x, y = cx - piece.width // 2, cy - piece.height // 2
    if x < 0 or y < 0 or x + piece.width > img.width or y + piece.height > img.height:
        raise ValueError(f"text of size {piece.size} does not fit at ({cx}, {cy}) in {img.size}")
    img.paste(piece, (x, y))


# --------------------------------------------------------------------------------------------- scenes

def scene_shapes(items, bg=BG):
    """items: (kind, color, cx, cy, r)"""
    img, d = canvas(bg)
    for kind, color, cx, cy, r in items:
        shape(d, kind, cx, cy, r, color)
    return img


def house(d, x0, ground, color="orange", windows=4):
    """A house whose body spans x0..x0+70 and stands on `ground`; 2 or 4 windows and a door."""
    top = ground - 50
    d.rectangle([x0, top, x0 + 70, ground], fill=fill_of(color))
    d.polygon([(x0 - 6, top), (x0 + 35, top - 28), (x0 + 76, top)], fill=COLORS["red"])
    d.rectangle([x0 + 29, ground - 24, x0 + 41, ground], fill=COLORS["brown"])
    spots = [(x0 + 8, top + 8), (x0 + 50, top + 8), (x0 + 8, top + 28), (x0 + 50, top + 28)][:windows]
    for wx, wy in spots:
        d.rectangle([wx, wy, wx + 12, wy + 12], fill=(200, 230, 250), outline=COLORS["black"])


def tree(d, cx, ground):
    d.rectangle([cx - 4, ground - 30, cx + 4, ground], fill=COLORS["brown"])
    d.ellipse([cx - 18, ground - 62, cx + 18, ground - 24], fill=(30, 120, 45))


def scene_house(windows=4, tree_x=None):
    img, d = canvas(SKY)
    d.rectangle([0, 100, W, H], fill=GRASS)
    house(d, 45 if tree_x is None else (25 if tree_x > 80 else 65), 100, windows=windows)
    if tree_x is not None:
        tree(d, tree_x, 100)
    return img


def scene_apples(n):
    img, d = canvas(BG)
    d.rectangle([0, 95, W, H], fill=COLORS["brown"])  # a table
    step = W // (n + 1)
    for k in range(n):
        cx = step * (k + 1)
        d.ellipse([cx - 11, 72, cx + 11, 94], fill=COLORS["red"])
        d.line([cx, 72, cx + 2, 64], fill=COLORS["brown"], width=2)
        d.ellipse([cx + 3, 64, cx + 10, 69], fill=COLORS["green"])
    return img


def scene_car(color="blue"):
    img, d = canvas(SKY)
    d.rectangle([0, 90, W, H], fill=(90, 90, 95))  # road
    d.line([0, 105, W, 105], fill=COLORS["white"], width=2)
    d.rectangle([30, 60, 130, 88], fill=fill_of(color))
    d.polygon([(50, 60), (62, 40), (102, 40), (114, 60)], fill=fill_of(color))
    d.polygon([(58, 58), (66, 44), (80, 44), (80, 58)], fill=(200, 230, 250))
    d.polygon([(84, 58), (84, 44), (98, 44), (106, 58)], fill=(200, 230, 250))
    for cx in (55, 105):
        d.ellipse([cx - 12, 78, cx + 12, 102], fill=COLORS["black"])
        d.ellipse([cx - 5, 85, cx + 5, 95], fill=COLORS["grey"])
    return img


def scene_night():
    img, d = canvas(NIGHT)
    d.rectangle([0, 100, W, H], fill=(30, 70, 40))
    d.ellipse([108, 14, 134, 40], fill=(240, 240, 210))
    d.ellipse([116, 10, 142, 36], fill=NIGHT)  # crescent moon
    for x, y in ((20, 20), (50, 35), (80, 15), (35, 62), (95, 50), (140, 70), (65, 80)):
        d.line([x - 2, y, x + 2, y], fill=COLORS["white"])
        d.line([x, y - 2, x, y + 2], fill=COLORS["white"])
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


def scene_stop_sign():
    img, d = canvas(SKY)
    d.rectangle([0, 104, W, H], fill=GRASS)
    d.rectangle([77, 70, 83, 110], fill=COLORS["grey"])
    cx, cy, r, c = 80, 48, 42, 17  # octagon: half-width r, corner cut c
    d.polygon([(cx - r + c, cy - r), (cx + r - c, cy - r), (cx + r, cy - r + c), (cx + r, cy + r - c),
               (cx + r - c, cy + r), (cx - r + c, cy + r), (cx - r, cy + r - c), (cx - r, cy - r + c)],
              fill=COLORS["red"], outline=COLORS["white"])
    paste_centered(img, text_image(["STOP"], bg="red", fg="white"), cx, cy)
    return img


def scene_door(number):
    img, d = canvas((200, 190, 170))  # a wall
    d.rectangle([50, 20, 110, H], fill=COLORS["brown"])
    d.ellipse([98, 72, 104, 78], fill=COLORS["yellow"])
    plate = text_image([number])
    d.rectangle([80 - plate.width // 2 - 2, 46 - plate.height // 2 - 2,
                 80 + plate.width // 2 + 2, 46 + plate.height // 2 + 2], fill=COLORS["black"])
    paste_centered(img, plate, 80, 46)
    return img


def scene_shop(name):
    img, d = canvas(SKY)
    d.rectangle([10, 22, 150, H], fill=(230, 220, 200))
    sign = text_image([name], bg="green", fg="white")
    d.rectangle([14, 26, 146, 26 + sign.height + 4], fill=COLORS["green"])
    paste_centered(img, sign, 80, 28 + sign.height // 2)
    d.rectangle([22, 70, 90, 110], fill=(200, 230, 250), outline=COLORS["brown"], width=3)
    d.rectangle([104, 66, 136, H], fill=COLORS["brown"])
    return img


def document(lines, scale=2, bg=PAPER, border=(150, 150, 150)):
    img, d = canvas((210, 210, 205), size=(DW, DH))
    text = text_image(lines, scale=scale, bg=bg)
    d.rectangle([DW // 2 - text.width // 2 - 4, DH // 2 - text.height // 2 - 4,
                 DW // 2 + text.width // 2 + 4, DH // 2 + text.height // 2 + 4], fill=bg, outline=border)
    paste_centered(img, text, DW // 2, DH // 2)
    return img


# --------------------------------------------------------------------------------------------- items

def vqa(n, kind, image, question, answers):
    if len(answers) != 10:
        raise ValueError(f"lave-{n:02d}: a vqa item needs 10 answers, got {len(answers)}")
    return n, kind, "vqa", image, question, answers


def doc(n, kind, image, question, answers):
    if not 1 <= len(answers) <= 3:
        raise ValueError(f"lave-{n:02d}: a doc item needs 1 to 3 answers, got {len(answers)}")
    return n, kind, "doc", image, question, answers


def build() -> list[tuple]:
    """(number, kind, style, image, question, answers) for every item."""
    yes = ["yes"] * 10
    no = ["no"] * 10
    return [
        # ------------------------------------------------------------------ count
        vqa(1, "count", scene_shapes([("circle", "blue", 45, 60, 20), ("circle", "blue", 115, 60, 20)]),
            "How many circles are there?",
            ["2", "2", "two", "2", "2", "there are two circles", "2", "two", "3", "2"]),
        vqa(2, "count", scene_shapes([("square", "green", 35, 40, 14), ("square", "green", 80, 80, 14),
                                      ("square", "green", 125, 40, 14)]),
            "How many squares are in the picture?",
            ["3", "3", "three", "3", "3 squares", "3", "three", "3", "2", "3"]),
        vqa(3, "count", scene_shapes([("triangle", "orange", 40, 35, 15), ("triangle", "orange", 120, 35, 15),
                                      ("triangle", "orange", 40, 88, 15), ("triangle", "orange", 120, 88, 15)]),
            "How many triangles can you see?",
            ["4", "4", "four", "4", "4", "four triangles", "4", "5", "4", "i see 4"]),
        vqa(4, "count", scene_shapes([("circle", "red", 25, 40, 12), ("circle", "blue", 60, 85, 12),
                                      ("circle", "red", 80, 35, 12), ("circle", "blue", 105, 80, 12),
                                      ("circle", "red", 138, 45, 12)]),
            "How many red circles are there?",
            ["3", "3", "3", "three", "3", "5", "3", "three red circles", "3", "2"]),
        vqa(5, "count", scene_apples(5), "How many apples are on the table?",
            ["5", "5", "five", "5", "5", "5 apples", "five", "5", "4", "5"]),
        vqa(6, "count", scene_house(windows=4), "How many windows does the house have?",
            ["4", "4", "four", "4", "4", "4 windows", "4", "2", "4", "four"]),
        # ------------------------------------------------------------------ yes / no
        vqa(7, "yesno", scene_shapes([("circle", "blue", 40, 60, 18), ("triangle", "red", 118, 60, 22)]),
            "Is there a triangle in the picture?",
            yes[:4] + ["Yes.", "yes", "yes", "yes there is", "no", "yes"]),
        vqa(8, "yesno", scene_shapes([("circle", "red", 80, 60, 32)]), "Is the circle blue?",
            no[:5] + ["No.", "no", "no, it is red", "yes", "no"]),
        vqa(9, "yesno", scene_night(), "Is it night time in this picture?",
            yes[:6] + ["Yes.", "yes", "no", "yes"]),
        vqa(10, "yesno", scene_rain(), "Is it raining?",
            yes[:5] + ["yes", "Yes.", "yes, it is raining", "yes", "yes"]),
        vqa(11, "yesno", scene_shapes([("square", "green", 30, 60, 14), ("circle", "green", 80, 60, 15),
                                       ("triangle", "green", 130, 60, 16)]),
            "Are all the shapes the same colour?",
            yes[:4] + ["yes", "yes, they are green", "no", "yes", "Yes.", "yes"]),
        vqa(12, "yesno", scene_shapes([("square", "blue", 40, 60, 12), ("circle", "yellow", 112, 60, 34)]),
            "Is the square bigger than the circle?",
            no[:5] + ["no", "No.", "yes", "no, the circle is bigger", "no"]),
        # ------------------------------------------------------------------ colour
        vqa(13, "color", scene_shapes([("circle", "red", 80, 60, 34)]), "What colour is the circle?",
            ["red", "red", "red", "it is red", "red", "Red", "red", "orange", "red", "dark red"]),
        vqa(14, "color", scene_shapes([("square", "blue", 40, 60, 18), ("triangle", "green", 118, 60, 22)]),
            "What color is the triangle?",
            ["green", "green", "green", "Green", "green", "the triangle is green", "green", "blue", "green",
             "green"]),
        vqa(15, "color", scene_car("blue"), "What color is the car?",
            ["blue", "blue", "blue", "Blue", "blue", "it's blue", "blue", "dark blue", "blue", "purple"]),
        vqa(16, "color", scene_shapes([("circle", "white", 80, 60, 30)], bg=COLORS["yellow"]),
            "What colour is the background?",
            ["yellow", "yellow", "yellow", "Yellow", "yellow", "it is yellow", "yellow", "white", "yellow",
             "gold"]),
        vqa(17, "color", scene_shapes([("square", "orange", 40, 60, 20), ("square", "purple", 120, 60, 20)]),
            "What is the colour of the square on the right?",
            ["purple", "purple", "purple", "Purple", "purple", "violet", "purple", "purple", "orange",
             "the right one is purple"]),
        # ------------------------------------------------------------------ position
        vqa(18, "position", scene_shapes([("circle", "red", 30, 60, 18)]), "Where is the circle in the picture?",
            ["left", "left", "on the left", "left", "left side", "left", "the left", "left", "right", "left"]),
        vqa(19, "position", scene_shapes([("triangle", "purple", 80, 24, 16)]),
            "Is the triangle at the top or at the bottom of the image?",
            ["top", "top", "at the top", "top", "top", "Top", "the top", "top", "bottom", "top"]),
        vqa(20, "position", scene_house(windows=2, tree_x=128), "On which side of the house is the tree?",
            ["right", "right", "right", "on the right", "right", "Right", "right side", "left", "right",
             "the right"]),
        vqa(21, "position", scene_shapes([("square", "red", 80, 60, 16), ("circle", "blue", 18, 18, 10),
                                          ("circle", "blue", 142, 18, 10), ("circle", "blue", 18, 102, 10),
                                          ("circle", "blue", 142, 102, 10)]),
            "Where is the red square?",
            ["center", "center", "middle", "in the middle", "center", "centre", "center", "in the center",
             "center", "bottom"]),
        # ------------------------------------------------------------------ text in the image
        vqa(22, "text", scene_stop_sign(), "What word is written on the sign?",
            ["stop", "stop", "STOP", "stop", "stop", "Stop", "stop", "it says stop", "stop", "slow"]),
        vqa(23, "text", scene_door("27"), "What number is on the door?",
            ["27", "27", "27", "twenty seven", "27", "27", "number 27", "27", "21", "27"]),
        vqa(24, "text", scene_shop("BAKERY"), "What is the name of the shop?",
            ["bakery", "bakery", "Bakery", "bakery", "the bakery", "bakery", "BAKERY", "bakery", "baker", "bakery"]),
        doc(25, "text", document(["CAFE ROSA", "TEA    2.50", "CAKE   5.00", "TOTAL  7.50"]),
            "What is the total amount on the receipt?",
            ["The total amount on the receipt is 7.50.", "The total is 7.50.", "7.50"]),
        doc(26, "text", document(["NAME: ALICE", "CITY: PARIS", "AGE: 34"]),
            "Which city is written on the form?",
            ["The city written on the form is Paris.", "Paris"]),
        doc(27, "text", document(["APPLES", "PRICE 3.20", "PER KG"]),
            "What is the price of the apples?",
            ["The apples cost 3.20 per kilogram.", "3.20 per kg", "The price is 3.20 per kg."]),
        # ------------------------------------------------------------------ shape / compare
        vqa(28, "shape", scene_shapes([("circle", "red", 40, 60, 20), ("square", "blue", 120, 60, 20)]),
            "What shape is the blue object?",
            ["square", "square", "square", "a square", "square", "Square", "square", "rectangle", "square",
             "it is a square"]),
        vqa(29, "compare", scene_shapes([("circle", "green", 50, 60, 34), ("square", "orange", 128, 60, 12)]),
            "Which is bigger, the circle or the square?",
            ["circle", "circle", "the circle", "circle", "circle", "Circle", "the circle is bigger", "circle",
             "square", "circle"]),
        vqa(30, "compare", scene_shapes([("circle", "blue", 25, 35, 12), ("circle", "blue", 65, 35, 12),
                                         ("circle", "blue", 105, 35, 12), ("circle", "blue", 140, 85, 12),
                                         ("square", "red", 40, 85, 12), ("square", "red", 90, 85, 12)]),
            "Are there more circles or more squares?",
            ["circles", "circles", "more circles", "circles", "circle", "circles", "circles",
             "there are more circles", "squares", "circles"]),
    ]


def main(out_dir: Path = SAMPLE_DIR) -> Path:
    """Write out_dir/lave_sample.json and out_dir/lave_sample/qNN.png; returns the JSON path."""
    out_dir = Path(out_dir)
    image_dir = out_dir / IMAGE_DIR_NAME
    image_dir.mkdir(parents=True, exist_ok=True)
    items = []
    for n, kind, style, image, question, answers in build():
        name = f"q{n:02d}.png"
        image.save(image_dir / name, format="PNG", optimize=True)
        items.append({"question_id": f"lave-{n:02d}", "image": f"{IMAGE_DIR_NAME}/{name}", "question": question,
                      "answers": answers, "kind": kind, "style": style})
    doc_ = {"version": "1", "name": "lave-sample",
            "note": "Our own items written for the Open VLM Reasoning Leaderboard, with images drawn by "
                    "tools/draw_lave_sample.py; not VQA v2 or Docmatix data.",
            "items": items}
    out_json = out_dir / JSON_NAME
    out_json.write_text(json.dumps(doc_, indent=1) + "\n", encoding="utf-8")
    return out_json


if __name__ == "__main__":
    path = main()
    total = sum(p.stat().st_size for p in (path.parent / IMAGE_DIR_NAME).glob("q*.png"))
    print(f"wrote {path} and {len(list((path.parent / IMAGE_DIR_NAME).glob('q*.png')))} PNGs ({total} bytes)")
