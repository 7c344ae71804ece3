"""ReForm-Eval files in the official builders' own layouts (question phrased from our templates): each adapter
reads a tiny file written in that layout, through items.load_items."""
from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from PIL import Image

from evaluator.benchmarks.reform import datasets as ds
from evaluator.benchmarks.reform import layouts
from evaluator.benchmarks.reform import templates as rt
from evaluator.benchmarks.reform.items import load_items
from evaluator.inputs.images import encode_image_base64

WHITE = (255, 255, 255)
RED = (255, 0, 0)


def _b64(color=(40, 120, 200), size=(24, 16)) -> str:
    return encode_image_base64(Image.new("RGB", size, color))


def _load(tmp_path: Path, doc, layout: str, dataset: str, dimension: str, **kw) -> list[dict]:
    path = tmp_path / f"{layout}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return load_items(path, ds.MC, layout=layout, dataset=dataset, dimension=dimension, **kw)


# --------------------------------------------------------------------------------------------- templates

def test_questions_file_has_a_template_per_layout():
    questions = rt.load_questions()
    assert set(rt.LAYOUTS) <= set(questions)
    fields = {"itm": {"caption"}, "snli_ve": {"hypothesis"}, "wikihow": {"method"},
              "kviquae": {"question", "context"}, "aokvqra": {"question", "rationale"},
              "aokvqar": {"question", "answer"}}  # the last three: layouts.py, files that carry a question
    for layout, template in questions.items():
        names = {f for _, f, _, _ in string.Formatter().parse(template) if f}
        assert names <= fields.get(layout, set()) | ({"title"} if layout == "wikihow" else set()), layout
        assert fields.get(layout, set()) <= names, layout



def test_question_templates_are_read_when_needed_or_passed():
    assert rt.question_template("medic") == rt.load_questions()["medic"]
    assert rt.question_template("medic", {"medic": "Which disaster?"}) == "Which disaster?"
    with pytest.raises(ValueError, match="no question template for layout 'nope'"):
        rt.question_template("nope")

def test_layouts_are_registered():
    for name in ("medic", "refcoco", "itm", "its", "snli_ve", "wikihow"):
        assert layouts.LAYOUTS[name] is rt.LAYOUTS[name]


# --------------------------------------------------------------------------------------------- layouts

def test_medic(tmp_path):
    doc = {"dataset_name": "MEDIC", "data": [
        {"img": _b64(), "options": ["flood", "fire", "earthquake", "not disaster"], "gt": 1},
        {"img": _b64(), "options": ["hurricane", "landslide"], "gt": 0},
    ]}
    items = _load(tmp_path, doc, "medic", "MEDIC", "coarse_perception")
    assert [it["question_id"] for it in items] == ["medic-0", "medic-1"]
    assert items[0]["question"] == rt.load_questions()["medic"]
    assert items[0]["options"] == ["flood", "fire", "earthquake", "not disaster"]
    assert items[0]["answer"] == "fire" and items[1]["answer"] == "hurricane"
    assert items[0]["dataset"] == "MEDIC" and items[0]["dimension"] == "coarse_perception"
    assert items[0]["image"].getpixel((0, 0)) == (40, 120, 200)


def test_refcoco_marks_the_region(tmp_path):
    doc = {"dataset_name": "RefCOCO", "data": [
        {"id": 4711, "img": _b64(WHITE, (100, 80)), "region": [[10.4, 20.6, 50.2, 60.0]],
         "options": ["man on the left", "red car", "dog in front"], "gt": 2},
    ]}
    [item] = _load(tmp_path, doc, "refcoco", "RefCOCO", "fine_perception")
    assert item["question_id"] == "4711"
    assert "red rectangle" in item["question"]
    assert item["options"] == ["man on the left", "red car", "dog in front"]
    assert item["answer"] == "dog in front"
    img = item["image"]
    # corners (10.4, 20.6) - (50.2, 60.0) -> pixel box [10, 20, 51, 60), outlined just outside in red
    assert img.getpixel((9, 40)) == RED and img.getpixel((10, 40)) == WHITE
    assert img.getpixel((51, 40)) == RED and img.getpixel((50, 40)) == WHITE
    assert img.getpixel((30, 19)) == RED and img.getpixel((30, 20)) == WHITE
    assert img.getpixel((30, 60)) == RED and img.getpixel((30, 59)) == WHITE
    assert img.getpixel((80, 5)) == WHITE


def test_refcoco_region_forms():
    assert rt.region_box([[10.4, 20.6, 50.2, 60.0]]) == [10, 20, 51, 60]
    assert rt.region_box([5, 6, 30, 40]) == [5, 6, 30, 40]          # a flat box
    assert rt.region_box([30, 40, 5, 6]) == [5, 6, 30, 40]          # corners given the other way round
    with pytest.raises(ValueError):
        rt.region_box([[1, 2, 3]])


def test_itm(tmp_path):
    doc = {"dataset_name": "MSCOCO", "data": [
        {"img": _b64(), "anno": "A cat sleeping on a sofa.", "gt": 1},
        {"img": _b64(), "anno": "Two men playing tennis.", "gt": 0},
    ]}
    items = _load(tmp_path, doc, "itm", "MSCOCO-ITM", "cross_modal_inference")
    assert "A cat sleeping on a sofa." in items[0]["question"]
    assert "Two men playing tennis." in items[1]["question"]
    assert items[0]["options"] == ["no", "yes"]
    assert [it["answer"] for it in items] == ["yes", "no"]
    assert items[1]["question_id"] == "itm-1"


def test_its(tmp_path):
    captions = ["A bus on a street.", "A plate of food.", "A boy with a kite.", "Cows in a field."]
    doc = {"dataset_name": "MSCOCO", "data": [{"img": _b64(), "anno": captions, "gt": 3}]}
    [item] = _load(tmp_path, doc, "its", "MSCOCO-ITS", "cross_modal_inference")
    assert item["question"] == rt.load_questions()["its"]
    assert item["options"] == captions and item["answer"] == "Cows in a field."
    assert item["question_id"] == "its-0"


def test_snli_ve(tmp_path):
    doc = {"gt_info": {"0": "entailment", "1": "neutral", "2": "contradiction"}, "data": [
        {"img": _b64(), "anno": "A woman is outdoors.", "gt": 0},
        {"img": _b64(), "anno": "The woman is a doctor.", "gt": 1},
        {"img": _b64(), "anno": "Nobody is in the picture.", "gt": 2},
    ]}
    items = _load(tmp_path, doc, "snli_ve", "SNLI-VE", "cross_modal_inference")
    assert "A woman is outdoors." in items[0]["question"]
    assert items[0]["options"] == ["yes", "not sure", "no"]
    assert [it["answer"] for it in items] == ["yes", "not sure", "no"]
    assert [it["question_id"] for it in items] == ["snli_ve-0", "snli_ve-1", "snli_ve-2"]


def test_snli_ve_maps_labels_by_meaning(tmp_path):
    doc = {"gt_info": {"0": "contradiction", "1": "entailment", "2": "neutral"},
           "data": [{"img": _b64(), "anno": "x", "gt": 0}, {"img": _b64(), "anno": "y", "gt": 2}]}
    items = _load(tmp_path, doc, "snli_ve", "SNLI-VE", "cross_modal_inference")
    assert [it["answer"] for it in items] == ["no", "not sure"]


def test_wikihow(tmp_path):
    options = ["Crack the eggs into a bowl.", "Preheat the oven.", "Serve warm.", "Whisk the batter."]
    doc = {"dataset_name": "WikiHow", "data": [
        {"img": _b64(), "method": "Making Basic Pancakes", "title": "How to Make Pancakes",
         "options": options, "gt": 3},
    ]}
    [item] = _load(tmp_path, doc, "wikihow", "WikiHow", "cross_modal_inference")
    assert "Making Basic Pancakes" in item["question"]
    assert item["options"] == options and item["answer"] == "Whisk the batter."
    assert item["question_id"] == "wikihow-0"


# --------------------------------------------------------------------------------------------- malformed

def test_wrong_dataset_and_bad_gt_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="MSCOCO"):
        _load(tmp_path, {"dataset_name": "MSCOCO", "data": []}, "medic", "MEDIC", "coarse_perception")
    with pytest.raises(ValueError, match="gt"):
        _load(tmp_path, {"dataset_name": "MEDIC", "data": [{"img": _b64(), "options": ["a", "b"], "gt": 5}]},
              "medic", "MEDIC", "coarse_perception")
    with pytest.raises(ValueError, match="layout"):  # a record without its options
        _load(tmp_path, {"dataset_name": "WikiHow", "data": [{"img": _b64(), "method": "m", "gt": 0}]},
              "wikihow", "WikiHow", "cross_modal_inference")


def test_bare_list_and_string_gt(tmp_path):
    doc = [{"img": _b64(), "options": ["a", "b", "c"], "gt": "2", "id": "x7"}]
    [item] = _load(tmp_path, doc, "medic", "MEDIC", "coarse_perception")
    assert item["answer"] == "c" and item["question_id"] == "x7"
