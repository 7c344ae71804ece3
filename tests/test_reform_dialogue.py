"""ReForm-Eval multi-turn dialogue layouts (VisDial, VQA-MT): tiny files in the official builder's layout, adapted
and loaded through items.load_items."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from evaluator.benchmarks.reform import datasets as ds
from evaluator.benchmarks.reform import dialogue, layouts
from evaluator.benchmarks.reform.items import load_items
from evaluator.inputs.images import encode_image_base64


def _b64(color, size=(20, 12)) -> str:
    return encode_image_base64(Image.new("RGB", size, color))


def _doc(version: str, split: str) -> dict:
    """Two dialogs: image 7 with three rounds, image 9 with one; indices into shared question / answer lists."""
    return {
        "version": version,
        "split": split,
        "data": {
            "questions": ["is it a cat", "what colour is it?", "is it outside", "how many dogs"],
            "answers": ["yes", "no", "black", "white", "2", "3"],
            "dialogs": [
                {"image_id": 7, "image_base64": _b64((10, 200, 30)),
                 "dialog": [
                     {"question": 0, "answer": 0, "answer_options": [1, 0, 2, 3]},
                     {"question": 1, "answer": 2, "answer_options": [3, 2, 0, 1]},
                     {"question": 2, "answer": 1, "answer_options": [0, 1, 4, 5]},
                 ]},
                {"image_id": 9, "image_base64": _b64((0, 0, 250)),
                 "dialog": [
                     {"question": 3, "answer": 4, "answer_options": [5, 4, 0, 1]},
                 ]},
            ],
        },
    }


def _write(tmp_path: Path, doc) -> Path:
    path = tmp_path / "dialogue.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


LAYOUT_CASES = [
    ("visdial", "VisDial", "lvlm_1.2", "val2018"),
    ("vqa_mt", "VQA-MT", "v2.0_MultiRound", "COCO_val2014"),
]


def test_layouts_registered():
    assert set(dialogue.LAYOUTS) == {"visdial", "vqa_mt"}
    for name in ("visdial", "vqa_mt"):
        assert layouts.LAYOUTS[name] is dialogue.LAYOUTS[name]


@pytest.mark.parametrize("layout,dataset,version,split", LAYOUT_CASES)
def test_every_round_becomes_an_item_with_the_earlier_rounds_as_history(tmp_path, layout, dataset, version, split):
    path = _write(tmp_path, _doc(version, split))
    items = load_items(path, ds.MC, layout=layout, dataset=dataset, dimension="multi_turn_dialogue")

    assert [it["question_id"] for it in items] == ["7_0", "7_1", "7_2", "9_0"]
    assert all(it["dataset"] == dataset and it["dimension"] == "multi_turn_dialogue" and it["form"] == ds.MC
               for it in items)
    assert [it["question"] for it in items] == ["is it a cat?", "what colour is it?", "is it outside?",
                                                "how many dogs?"]
    assert [it["options"] for it in items] == [["no", "yes", "black", "white"], ["white", "black", "yes", "no"],
                                               ["yes", "no", "2", "3"], ["3", "2", "yes", "no"]]
    assert [it["answer"] for it in items] == ["yes", "black", "no", "2"]

    assert items[0]["history"] == []
    assert items[1]["history"] == [{"from": "human", "value": "is it a cat?"},
                                   {"from": "assistant", "value": "yes"}]
    assert items[2]["history"] == [{"from": "human", "value": "is it a cat?"},
                                   {"from": "assistant", "value": "yes"},
                                   {"from": "human", "value": "what colour is it?"},
                                   {"from": "assistant", "value": "black"}]
    assert items[3]["history"] == []  # a new dialog starts afresh

    for it in items:
        assert it["image_ref"] == "base64" and it["image"].size == (20, 12)
    assert [it["image"].getpixel((5, 5)) for it in items] == [(10, 200, 30)] * 3 + [(0, 0, 250)]


def test_records_share_the_dialogs_image_string():
    doc = _doc("lvlm_1.2", "val2018")
    records = dialogue.adapt_dialogues(doc)
    image = doc["data"]["dialogs"][0]["image_base64"]
    assert all(rec["image"] is image for rec in records[:3])
    assert set(records[0]) == {"question_id", "question", "answer", "answer_options", "image", "history"}


def test_one_row_table_form_is_accepted():
    doc = _doc("lvlm_1.2", "val2018")
    assert dialogue.adapt_dialogues([doc]) == dialogue.adapt_dialogues(doc)


@pytest.mark.parametrize("split,name", [("val2018", "VisualDialog_val2018_000000000007.jpg"),
                                        ("COCO_val2014", "COCO_val2014_000000000007.jpg")])
def test_without_base64_the_image_file_is_named_from_the_image_id(tmp_path, split, name):
    doc = _doc("v", split)
    del doc["data"]["dialogs"][0]["image_base64"]
    Image.new("RGB", (8, 8), (200, 20, 20)).save(tmp_path / name)  # JPEG: compare within a tolerance
    items = load_items(_write(tmp_path, doc), ds.MC, layout="visdial")
    assert items[0]["image"].size == (8, 8)
    assert all(abs(a - b) <= 8 for a, b in zip(items[0]["image"].getpixel((4, 4)), (200, 20, 20)))
    assert items[3]["image_ref"] == "base64"
    assert items[0]["image_ref"].endswith(name)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["data"]["dialogs"][0]["dialog"][0].update(answer=99), "not in the 'visdial' layout"),
    (lambda d: d["data"]["dialogs"][0]["dialog"][0].update(question=-1), "not in the 'visdial' layout"),
    (lambda d: d["data"].pop("answers"), "not in the 'visdial' layout"),
    (lambda d: d["data"]["dialogs"][0]["dialog"][0].update(answer_options=[1, 2]), "not among the answer_options"),
])
def test_malformed_dialogue_files(tmp_path, mutate, message):
    doc = _doc("lvlm_1.2", "val2018")
    mutate(doc)
    with pytest.raises(ValueError, match=message):
        load_items(_write(tmp_path, doc), ds.MC, layout="visdial")


def test_duplicate_image_ids_keep_question_ids_unique():
    doc = _doc("lvlm_1.2", "val2018")
    doc["data"]["dialogs"][1]["image_id"] = 7
    ids = [rec["question_id"] for rec in dialogue.adapt_dialogues(doc)]
    assert len(ids) == len(set(ids)) and ids[:3] == ["7_0", "7_1", "7_2"]
