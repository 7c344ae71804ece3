"""ReForm-Eval official file layouts ("kie", "ocr", "caption", "mocheg"): tiny files written in each builder's
huggingface layout, read through items.load_items(..., layout=...)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from PIL import Image

from evaluator.benchmarks.reform import datasets as ds
from evaluator.benchmarks.reform import files as reform_files
from evaluator.benchmarks.reform import layouts as rl
from evaluator.benchmarks.reform import suite
from evaluator.benchmarks.reform.items import load_items
from evaluator.inputs.images import encode_image_base64


def _png_b64(color=(200, 30, 30), size=(24, 16)) -> str:
    return encode_image_base64(Image.new("RGB", size, color))


def _write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _versioned(*items) -> dict:
    return {"version": "1.0", "split": "test", "data": list(items)}


def test_layouts_are_registered():
    for name in ("kie", "ocr", "caption", "mocheg"):
        assert name in rl.LAYOUTS


def test_kie_layout(tmp_path):
    doc = _versioned({"question_id": "funsd-7", "image": _png_b64(), "question": "What is the date?",
                      "answer_txt": ["12/01/98", "12-01-98"]},
                     {"question_id": "funsd-8", "image": _png_b64((0, 0, 255)), "question": "Who signed?",
                      "answer_txt": "J. Smith"})
    path = _write(tmp_path / "funsd_core_open_ended.json", doc)
    items = load_items(path, ds.KIE, layout="kie", dataset="FUNSD", dimension="scene_text")
    assert [it["question_id"] for it in items] == ["funsd-7", "funsd-8"]
    assert items[0]["question"] == "What is the date?"
    assert items[0]["answer"] == ["12/01/98", "12-01-98"]
    assert items[1]["answer"] == ["J. Smith"]
    assert items[0]["dataset"] == "FUNSD" and items[0]["form"] == ds.KIE and items[0]["options"] == []
    assert items[0]["image"].getpixel((2, 2)) == (200, 30, 30)
    assert items[1]["image"].getpixel((2, 2)) == (0, 0, 255)


def test_ocr_layout_takes_the_first_phrasing(tmp_path):
    doc = _versioned({"question_id": 3, "image": _png_b64((10, 200, 10)),
                      "question": ["What is written in the image?", "Read the word in the picture."],
                      "answer_txt": "STOP"})
    path = _write(tmp_path / "cute80_core_open_ended.json", doc)
    [item] = load_items(path, ds.OCR, layout="ocr", dataset="CUTE80", dimension="scene_text")
    assert item["question_id"] == "3"
    assert item["question"] == "What is written in the image?"
    assert item["answer"] == ["STOP"]
    assert item["image"].size == (24, 16) and item["image"].getpixel((5, 5)) == (10, 200, 10)


def test_ocr_layout_crops_textocr_bbox(tmp_path):
    img = Image.new("RGB", (40, 30), (255, 255, 255))
    img.paste((0, 128, 0), (10, 5, 30, 15))  # the word box: x=10, y=5, w=20, h=10
    doc = _versioned({"question_id": "t1", "image": encode_image_base64(img),
                      "question": ["What text is in the image?"], "answer_txt": "exit", "bbox": [10, 5, 20, 10]})
    path = _write(tmp_path / "textocr_core_open_ended.json", doc)
    [item] = load_items(path, ds.OCR, layout="ocr", dataset="TextOCR", dimension="scene_text")
    assert item["image"].size == (20, 10)
    assert item["image"].getpixel((0, 0)) == (0, 128, 0) and item["image"].getpixel((19, 9)) == (0, 128, 0)


def test_caption_layout(tmp_path):
    doc = {"dataset_name": "mscoco", "data": [
        {"img": _png_b64((1, 2, 3)), "annos": ["A dog on a beach.", "A brown dog runs by the sea."]},
        {"img": _png_b64((90, 90, 90)), "annos": ["A grey square."]},
    ]}
    path = _write(tmp_path / "captions-sampled.json", doc)
    items = load_items(path, ds.CAPTION, layout="caption", dataset="MSCOCO-caption", dimension="description")
    assert [it["question_id"] for it in items] == ["0", "1"]
    assert all(it["question"] == "" for it in items)
    assert items[0]["answer"] == ["A dog on a beach.", "A brown dog runs by the sea."]
    assert items[1]["answer"] == ["A grey square."]
    assert items[0]["image"].getpixel((0, 0)) == (1, 2, 3)
    assert items[1]["form"] == ds.CAPTION and items[1]["dimension"] == "description"


def test_mocheg_layout(tmp_path):
    options = ["supported", "refuted", "not enough information"]
    doc = _versioned({"instance_id": "m-42", "image_id": _png_b64((30, 60, 90)), "claim": " The tower is red. ",
                      "text_evidence": "Photos show the tower painted red.", "answer": "supported",
                      "answer_options": options})
    path = _write(tmp_path / "mocheg_test_10p.json", doc)
    [item] = load_items(path, ds.MC, layout="mocheg", dataset="MOCHEG", dimension="cross_modal_inference")
    template = (rl.PROMPTS_DIR / "reform_mocheg.txt").read_text(encoding="utf-8")
    assert "{claim}" in template and "{evidence}" in template
    assert item["question_id"] == "m-42"
    assert item["question"] == rl.mocheg_template().format(claim="The tower is red.",
                                                           evidence="Photos show the tower painted red.")
    assert "The tower is red." in item["question"] and "{" not in item["question"]
    assert item["options"] == options and item["answer"] == "supported"
    assert item["image"].getpixel((1, 1)) == (30, 60, 90)


def test_table_names_these_layouts():
    want = {"FUNSD": "kie", "POIE": "kie", "SROIE": "kie",
            "CUTE80": "ocr", "IC15": "ocr", "IIIT5K": "ocr", "WordArt": "ocr", "TextOCR": "ocr", "COCO-Text": "ocr",
            "MSCOCO-caption": "caption", "TextCaps": "caption", "NoCaps": "caption", "Flickr30K": "caption",
            "MOCHEG": "mocheg"}
    table = {name: ds.DATASETS_BY_NAME[name].layout for name in want}
    if all(layout == "items" for layout in table.values()):
        pytest.skip("the dataset table does not name these layouts yet")
    assert table == want


def test_unknown_layout(tmp_path):
    path = _write(tmp_path / "x.json", _versioned())
    with pytest.raises(ValueError, match="unknown ReForm-Eval file layout 'nope'"):
        load_items(path, ds.OCR, layout="nope")


@pytest.mark.parametrize("layout, form, doc, message", [
    # a caption file read as OCR: no version/split
    ("ocr", ds.OCR, {"dataset_name": "nocaps", "data": [{"img": "x", "annos": ["a"]}]}, "'version'"),
    # an "items" OCR file read as caption: no dataset_name
    ("caption", ds.CAPTION, _versioned({"question_id": "a", "image": "x", "answer": "b"}), "'dataset_name'"),
    # a KIE item read as MOCHEG: no claim
    ("mocheg", ds.MC, _versioned({"question_id": "a", "image": "x", "question": "q", "answer_txt": "b"}),
     "'instance_id'"),
    # a VQA item (answer, not answer_txt) read as KIE
    ("kie", ds.KIE, _versioned({"question_id": "a", "image": "x", "question": "q", "answer": "b"}), "'answer_txt'"),
    # a bare list
    ("kie", ds.KIE, [{"question_id": "a"}], "expected an object"),
])
def test_wrong_layout_is_a_clear_error(tmp_path, layout, form, doc, message):
    path = _write(tmp_path / "wrong.json", doc)
    with pytest.raises(ValueError, match=rf"not in the '{layout}' layout") as err:
        load_items(path, form, layout=layout)
    assert message in str(err.value) and "wrong.json" in str(err.value)


def test_ocr_vqa_and_vqa_files_load_as_items(tmp_path):
    """build/OCR/ocr_dataset.py (DocVQA, TextVQA, OCR-VQA) and build/VQA/vqa_dataset.py read question_id, image_id
    (base64 on the Hub), question, answer (+ answer_options): the generic "items" reader takes them as they are.
    (A base64 image_id is recognised from 256 characters on, so these images carry noise to be realistic in size.)"""
    rng = random.Random(0)
    noisy = Image.frombytes("RGB", (16, 16), bytes(rng.randrange(256) for _ in range(768)))
    noisy.putpixel((0, 0), (9, 9, 9))
    image_b64 = encode_image_base64(noisy)
    assert len(image_b64) > 256
    doc = _versioned({"question_id": 5, "image_id": image_b64, "question": "What is the total?",
                      "answer": ["$4.20", "4.20"]})
    [item] = load_items(_write(tmp_path / "docvqa_val_10p.json", doc), ds.KIE, dataset="DocVQA")
    assert item["question_id"] == "5" and item["answer"] == ["$4.20", "4.20"]
    assert item["image"].getpixel((0, 0)) == (9, 9, 9)
    doc = _versioned({"question_id": "v1", "image_id": image_b64, "question": "What colour?", "answer": "red",
                      "answer_options": ["red", "blue"]})
    [item] = load_items(_write(tmp_path / "vqa_val_10p.json", doc), ds.MC, dataset="VQA-v2")
    assert item["options"] == ["red", "blue"] and item["answer"] == "red"


def test_full_suite_reads_a_layout_entry_through_the_hub(tmp_path, monkeypatch):
    """load_full_suite passes the table's layout on: FUNSD (layout "kie") from a faked Hub download."""
    doc = _versioned({"question_id": "funsd-1", "image": _png_b64(), "question": "What is the date?",
                      "answer_txt": "12/01/98"})
    path = _write(tmp_path / "funsd.json", doc)
    calls = []
    monkeypatch.setattr(reform_files, "hub_file",
                        lambda repo_id, filename, revision: calls.append(filename) or str(path))
    [item] = suite.load_full_suite(["FUNSD"])
    assert calls == [ds.DATASETS_BY_NAME["FUNSD"].hub_path]
    assert item["answer"] == ["12/01/98"] and item["dataset"] == "FUNSD" and item["form"] == ds.KIE


# ------------------------------------------------------------------ visually grounded reasoning (K-ViQuAE, A-OKVQA*)
def _noisy_b64(seed: int, corner=(9, 9, 9)) -> str:
    """A base64 image long enough (> 256 characters) to be read as the image under image_id, as the Hub files
    give it."""
    rng = random.Random(seed)
    img = Image.frombytes("RGB", (16, 16), bytes(rng.randrange(256) for _ in range(768)))
    img.putpixel((0, 0), corner)
    return encode_image_base64(img)


def _kviquae_doc() -> dict:
    """build/VQA/kvqa_dataset.py's hf layout (config KVQA_viquae_val.yaml: version '2.0', split 'test')."""
    return {"version": "2.0", "split": "test", "data": [
        {"question_id": "kv-1", "image_id": _noisy_b64(1, (1, 2, 3)), "question": "Where was this man born?",
         "answer": "Vienna", "answer_options": ["Paris", "Vienna", "Rome", "Oslo"],
         "context": " He was an Austrian composer, born in Vienna in 1797. "}]}


def _aokvqa_doc(kind: str) -> dict:
    """build/AOKVQA/qra_dataset.py ("aokvqra") or qar_dataset.py ("aokvqar") hf layout (version '1.0', split
    'val'): the rationale is one string; A-OKVQAR's options are rationales."""
    row = {"question_id": "ok-7", "image_id": _noisy_b64(2, (4, 5, 6)), "question": "Why is the man holding this?",
           "answer": "rain", "rationale": "Water is falling from the sky and he keeps dry under it."}
    if kind == "aokvqra":
        row["answer_options"] = ["sun", "rain", "snow", "wind"]
    else:
        row["rationale_options"] = ["It is sunny.", "Water is falling from the sky and he keeps dry under it.",
                                    "He is selling it.", "It is a gift."]
    return {"version": "1.0", "split": "val", "data": [row]}


def test_kviquae_layout_adds_the_context_to_the_question(tmp_path):
    path = _write(tmp_path / "kviquae_test_10p.json", _kviquae_doc())
    [item] = load_items(path, ds.MC, layout="kviquae", dataset="K-ViQuAE", dimension="visual_reasoning")
    template = rl.templates.question_template("kviquae")
    assert "{question}" in template and "{context}" in template
    assert item["question"] == template.format(question="Where was this man born?",
                                               context="He was an Austrian composer, born in Vienna in 1797.")
    assert item["question_id"] == "kv-1" and item["answer"] == "Vienna"
    assert item["options"] == ["Paris", "Vienna", "Rome", "Oslo"]
    assert item["image"].getpixel((0, 0)) == (1, 2, 3) and item["dimension"] == "visual_reasoning"


def test_aokvqra_layout_chooses_the_answer_given_the_rationale(tmp_path):
    path = _write(tmp_path / "aokvqra_val_10p.json", _aokvqa_doc("aokvqra"))
    [item] = load_items(path, ds.MC, layout="aokvqra", dataset="A-OKVQRA", dimension="visual_reasoning")
    assert item["question"] == rl.templates.question_template("aokvqra").format(
        question="Why is the man holding this?", rationale="Water is falling from the sky and he keeps dry under it.")
    assert item["options"] == ["sun", "rain", "snow", "wind"] and item["answer"] == "rain"
    assert item["image"].getpixel((0, 0)) == (4, 5, 6)


def test_aokvqar_layout_chooses_the_rationale_given_the_answer(tmp_path):
    path = _write(tmp_path / "aokvqar_val_10p.json", _aokvqa_doc("aokvqar"))
    [item] = load_items(path, ds.MC, layout="aokvqar", dataset="A-OKVQAR", dimension="visual_reasoning")
    assert item["question"] == rl.templates.question_template("aokvqar").format(
        question="Why is the man holding this?", answer="rain")
    assert "rain" in item["question"] and "keeps dry" not in item["question"]  # the gold rationale is not shown
    assert item["options"][1] == item["answer"] == "Water is falling from the sky and he keeps dry under it."
    assert len(item["options"]) == 4


@pytest.mark.parametrize("layout, doc, message", [
    ("aokvqar", _aokvqa_doc("aokvqra"), "'rationale_options'"),  # A-OKVQRA's file read as A-OKVQAR
    ("aokvqra", _aokvqa_doc("aokvqar"), "'answer_options'"),
    ("kviquae", _aokvqa_doc("aokvqra"), "'context'"),
    ("kviquae", {"data": _kviquae_doc()["data"]}, "'version'"),
])
def test_reasoning_layouts_name_what_a_file_lacks(tmp_path, layout, doc, message):
    path = _write(tmp_path / "wrong.json", doc)
    with pytest.raises(ValueError, match=rf"not in the '{layout}' layout") as err:
        load_items(path, ds.MC, layout=layout)
    assert message in str(err.value)


def test_reasoning_layout_refuses_an_empty_context_or_a_gold_outside_the_options(tmp_path):
    doc = _kviquae_doc()
    doc["data"][0]["context"] = "  "
    with pytest.raises(ValueError, match="context must be a non-empty string"):
        load_items(_write(tmp_path / "a.json", doc), ds.MC, layout="kviquae")
    doc = _aokvqa_doc("aokvqar")
    doc["data"][0]["rationale"] = "Not among the options."
    with pytest.raises(ValueError, match="is not among the answer_options"):
        load_items(_write(tmp_path / "b.json", doc), ds.MC, layout="aokvqar")


def test_full_suite_reads_the_three_reasoning_sets_at_their_config_paths(tmp_path, monkeypatch):
    """K-ViQuAE, A-OKVQRA and A-OKVQAR: the Hub paths of KVQA_viquae_val.yaml, VQRA_aokvqa_val.yaml and
    VQAR_aokvqa_val.yaml (huggingface_data), read in their builders' layouts, as multiple choice in visually
    grounded reasoning."""
    hub = {"huggingface_data/K-ViQuAE/kviquae_test_10p.json": _kviquae_doc(),
           "huggingface_data/A-OKVQRA/aokvqra_val_10p.json": _aokvqa_doc("aokvqra"),
           "huggingface_data/A-OKVQAR/aokvqar_val_10p.json": _aokvqa_doc("aokvqar")}
    files = {name: _write(tmp_path / f"{k}.json", doc) for k, (name, doc) in enumerate(hub.items())}
    calls = []
    monkeypatch.setattr(reform_files, "hub_file",
                        lambda repo_id, filename, revision: calls.append((repo_id, filename)) or str(files[filename]))
    items = suite.load_full_suite(["K-ViQuAE", "A-OKVQRA", "A-OKVQAR"])
    assert calls == [(ds.HUB_REPO, name) for name in hub]
    assert [i["dataset"] for i in items] == ["K-ViQuAE", "A-OKVQRA", "A-OKVQAR"]
    assert all(i["dimension"] == "visual_reasoning" and i["form"] == ds.MC and i["answer"] in i["options"]
               for i in items)
    assert [ds.DATASETS_BY_NAME[i["dataset"]].layout for i in items] == ["kviquae", "aokvqra", "aokvqar"]
