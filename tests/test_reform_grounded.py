"""Issue 41: ReForm-Eval's last four datasets. Grounded IC15, Grounded COCO-Text and Grounded TextOCR draw the word's
box on the image as their builder does (OpenCV's rectangle: compared pixel for pixel with OpenCV itself and with a
box drawn by hand); VizWiz-yesno is yes/no multiple choice. Files are written in each builder's own layout and read
through the full suite from a faked Hub download."""
from __future__ import annotations

import json
import random
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from evaluator.benchmarks.reform import datasets as ds
from evaluator.benchmarks.reform import files as reform_files
from evaluator.benchmarks.reform import planning, suite
from evaluator.benchmarks.reform.grounded import draw_outline
from evaluator.benchmarks.reform.items import load_items
from evaluator.benchmarks.reform.picture import picture
from evaluator.benchmarks.spec import PlanContext
from evaluator.inputs.images import encode_image_base64

RED = (255, 0, 0)
PHRASINGS = ["What is the text inside the red box?", "Read the word in the red rectangle."]


def _noise(size: tuple[int, int], seed: int) -> Image.Image:
    rng = np.random.RandomState(seed)
    return Image.fromarray(rng.randint(0, 200, (size[1], size[0], 3)).astype(np.uint8))  # no pure red in it


def _opencv(image: Image.Image, corners: tuple[int, int, int, int], thickness: int) -> np.ndarray:
    """The builder's drawing: cv2.rectangle on the RGB array, red as (255, 0, 0)."""
    return cv2.rectangle(np.array(image), corners[:2], corners[2:], RED, thickness)


# ------------------------------------------------------------------------------------------------ the drawing
def test_the_box_lands_on_opencvs_pixels_for_every_width_and_any_corners():
    rng = random.Random(41)
    for case in range(400):
        w, h = rng.randint(4, 50), rng.randint(4, 50)
        corners = (rng.randint(-6, w + 6), rng.randint(-6, h + 6), rng.randint(-6, w + 6), rng.randint(-6, h + 6))
        thickness = rng.choice((2, 3, 4, 5, 6))
        image = _noise((w, h), case)
        ours = np.array(draw_outline(image, corners, thickness))
        assert (ours == _opencv(image, corners, thickness)).all(), (case, (w, h), corners, thickness)
        assert (np.array(image) == np.array(_noise((w, h), case))).all()  # the caller's image is untouched


def test_a_two_pixel_box_drawn_by_hand():
    """Thickness 2 around corners (3, 4) and (11, 9): a band one pixel either side of each side, the outer corner
    pixels left out (the joints are discs of radius 1)."""
    expected = """\
................
................
................
...#########....
..###########...
..###########...
..###.....###...
..###.....###...
..###########...
..###########...
...#########....
................"""
    drawn = np.array(draw_outline(Image.new("RGB", (16, 12), (0, 0, 0)), (3, 4, 11, 9), 2))
    got = "\n".join("".join("#" if tuple(px) == RED else "." for px in row) for row in drawn)
    assert got == expected
    with pytest.raises(ValueError, match="at least 2"):
        draw_outline(Image.new("RGB", (4, 4)), (0, 0, 2, 2), 1)


# ------------------------------------------------------------------------------------------------ grounded OCR
# name -> (bbox as its builder's file gives it, the corners its draw_bbox uses, its thickness)
GROUNDED = {
    "Grounded IC15": ([12.7, 9.2, 40.9, 25.5], (12, 9, 40, 25), 2),   # two corners
    "Grounded COCO-Text": ([12.7, 9.2, 28.0, 16.4], (12, 9, 40, 25), 5),  # x, y, w, h: int(x + w), int(y + h)
    "Grounded TextOCR": ([5.0, 30.0, 20.0, 6.0], (5, 30, 25, 36), 2),
}


def _gocr_doc(bbox, seed: int, image=None) -> dict:
    """GroundOCR_OpenEnded's huggingface layout (configs GroundOCR_*_val.yaml: version '2.0')."""
    return {"version": "2.0", "split": "test", "data": [
        {"question_id": f"g{seed}", "image": image or encode_image_base64(_noise((60, 44), seed)),
         "question": PHRASINGS, "answer_txt": f"word{seed}", "bbox": bbox}]}


def _hub(monkeypatch, tmp_path: Path, files: dict[str, dict | list]) -> list[str]:
    """A faked Hub download serving `files` (path in the Hub dataset -> JSON); the paths asked for."""
    written = {}
    for k, (name, doc) in enumerate(files.items()):
        written[name] = tmp_path / f"hub-{k}.json"
        written[name].write_text(json.dumps(doc), encoding="utf-8")
    asked = []
    monkeypatch.setattr(reform_files, "hub_file",
                        lambda repo_id, filename, revision: asked.append(filename) or str(written[filename]))
    return asked


def test_each_grounded_set_is_read_at_its_config_path_with_its_box_drawn(tmp_path, monkeypatch):
    entries = [ds.DATASETS_BY_NAME[name] for name in GROUNDED]
    assert [e.hub_path for e in entries] == ["huggingface_data/IC15/ic15_gocr_core_open_ended.json",
                                             "huggingface_data/COCO_Text/cocotext_gocr_core_open_ended.json",
                                             "huggingface_data/TextOCR/textocr_gocr_core_open_ended.json"]
    asked = _hub(monkeypatch, tmp_path, {e.hub_path: _gocr_doc(GROUNDED[e.name][0], k) for k, e in enumerate(entries)})
    items = suite.load_full_suite(list(GROUNDED))
    assert asked == [e.hub_path for e in entries]
    for k, (item, (name, (_, corners, thickness))) in enumerate(zip(items, GROUNDED.items())):
        assert (item["dataset"], item["dimension"], item["form"]) == (name, "scene_text", ds.OCR)
        assert item["question"] == PHRASINGS[0] and item["answer"] == [f"word{k}"]
        assert ds.free_rule(name, item["form"]) == ds.OCR_RULE  # --formulation OCROpenEnded
        assert (np.array(item["image"]) == _opencv(_noise((60, 44), k), corners, thickness)).all(), name


def test_the_grounded_question_is_asked_with_the_boxed_image(tmp_path, monkeypatch):
    entry = ds.DATASETS_BY_NAME["Grounded COCO-Text"]
    bbox, corners, thickness = GROUNDED[entry.name]
    _hub(monkeypatch, tmp_path, {entry.hub_path: _gocr_doc(bbox, 3)})
    plan = planning.plan(PlanContext(suite="full", sources={"reform": entry.name}, images_dir=tmp_path / "images"))
    [ask] = plan.asks
    assert ask.options is None and PHRASINGS[0] in ask.request.text and PHRASINGS[1] not in ask.request.text
    [image] = ask.images() if callable(ask.images) else ask.request.images
    assert (np.array(image) == _opencv(_noise((60, 44), 3), corners, thickness)).all()


def test_a_grounded_image_given_as_a_path_is_drawn_too(tmp_path):
    _noise((60, 44), 7).save(tmp_path / "word.png")
    path = tmp_path / "ic15_gocr_core_open_ended.json"
    path.write_text(json.dumps(_gocr_doc([12, 9, 40, 25], 7, image="word.png")), encoding="utf-8")
    [item] = load_items(path, ds.OCR, layout="gocr_ic15", dataset="Grounded IC15", dimension="scene_text")
    assert (np.array(item["image"]) == _opencv(_noise((60, 44), 7), (12, 9, 40, 25), 2)).all()


def test_the_explorer_shows_the_grounded_image_as_the_model_saw_it(tmp_path):
    path = tmp_path / "textocr_gocr_core_open_ended.json"
    path.write_text(json.dumps(_gocr_doc(GROUNDED["Grounded TextOCR"][0], 5)), encoding="utf-8")
    shown = picture({"image_ref": f"{path}#0", "dataset": "Grounded TextOCR"}, tmp_path / "images")
    assert (np.array(shown) == _opencv(_noise((60, 44), 5), GROUNDED["Grounded TextOCR"][1], 2)).all()


@pytest.mark.parametrize("bbox, message", [([1, 2, 3], "bbox must be four numbers"),
                                           (["a", 1, 2, 3], "bbox must be four numbers"),
                                           (None, "bbox must be four numbers")])
def test_a_bad_box_is_a_clear_error(tmp_path, bbox, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_gocr_doc(bbox, 1)), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_items(path, ds.OCR, layout="gocr_ic15", dataset="Grounded IC15", dimension="scene_text")


# ------------------------------------------------------------------------------------------------ VizWiz-yesno
def test_vizwiz_yesno_is_yes_no_multiple_choice_in_the_files_order(tmp_path, monkeypatch):
    """VizWiz_Dataset with task_kind YesOrNo: a list of {id, image, question, answer (an index), options}."""
    entry = ds.DATASETS_BY_NAME["VizWiz-yesno"]
    assert entry.hub_path == "huggingface_data/VizWiz/vizwiz_yesno_val_10p.json" and entry.dimension == \
        "coarse_perception" and entry.form == ds.MC
    records = [{"id": "VizWiz_val_00000017", "image": encode_image_base64(_noise((20, 20), 1)),
                "question": "Is the image blurry?", "answer": 0, "options": ["yes", "no"]},
               {"id": "VizWiz_val_00000042", "image": encode_image_base64(_noise((20, 20), 2)),
                "question": "Is the image too dark?", "answer": 1, "options": ["yes", "no"]}]
    _hub(monkeypatch, tmp_path, {entry.hub_path: records})
    items = suite.load_full_suite(["VizWiz-yesno"])
    assert [(i["question_id"], i["question"], i["options"], i["answer"]) for i in items] == [
        ("VizWiz_val_00000017", "Is the image blurry?", ["yes", "no"], "yes"),
        ("VizWiz_val_00000042", "Is the image too dark?", ["yes", "no"], "no")]
    plan = planning.plan(PlanContext(suite="full", sources={"reform": "VizWiz-yesno"}, images_dir=tmp_path / "i",
                                     options={"reform.mode": "both"}))
    generated = [a for a in plan.asks if a.options is None]
    scored = [a for a in plan.asks if a.options is not None]
    assert len(generated) == len(scored) == 2 * 5  # 5 repeats of each item, in both modes
    assert all(sorted(a.options) == ["no", "yes"] for a in scored)
    assert all("yes" in a.request.text and "no" in a.request.text for a in generated)


# ------------------------------------------------------------------------------------------------ --limit
def test_the_limit_takes_the_new_datasets_in_table_order():
    items = [{"dimension": d.dimension, "dataset": d.name, "question_id": f"{d.name}-{k}"}
             for d in ds.DATASETS for k in range(2)]
    first = {dim: [i["dataset"] for i in planning.select(items, n) if i["dimension"] == dim]
             for dim, n in (("coarse_perception", 5), ("scene_text", 6))}
    assert first["coarse_perception"] == ["Flowers102", "CIFAR10", "ImageNet-1K", "Pets37", "VizWiz-yesno"]
    assert first["scene_text"] == ["CUTE80", "Grounded IC15", "IC15", "IIIT5K", "Grounded COCO-Text", "COCO-Text"]
    table = [d.name for d in ds.DATASETS]
    assert table.index("Grounded TextOCR") + 1 == table.index("TextOCR")


# ------------------------------------------------------------------------------------------------ the sample suite
def test_the_sample_suite_has_a_grounded_ocr_item_and_a_yes_no_item():
    """Our own sample (tools/draw_reform_sample.py) gains one item of each new kind: a word boxed as Grounded IC15
    boxes it (the record keeps the plain image and the outline; the suite draws it), and a yes/no question in
    VizWiz-yesno's option order."""
    raw = {r["question_id"]: r for r in json.loads(suite.SAMPLE_PATH.read_text(encoding="utf-8"))["data"]}
    items = {i["question_id"]: i for i in suite.load_sample_suite()}
    boxed, plain = items["gocr-01"], raw["gocr-01"]
    assert (boxed["dimension"], boxed["form"], boxed["answer"]) == ("scene_text", ds.OCR, ["SHUT"])
    *corners, thickness = plain["outline"]
    from evaluator.inputs.images import decode_base64_image

    assert (np.array(boxed["image"]) == _opencv(decode_base64_image(plain["image"]), tuple(corners),
                                                thickness)).all()
    assert (np.array(decode_base64_image(plain["image"])) == RED).all(axis=2).sum() == 0  # drawn on reading only
    yes_no = items["quality-01"]
    assert (yes_no["dimension"], yes_no["options"], yes_no["answer"]) == ("coarse_perception", ["yes", "no"], "yes")
