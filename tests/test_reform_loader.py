"""ReForm-Eval loader: the official file shape (written here, base64 image included), malformed items, the
dataset table, the sample suite, and the prediction dumps in ../shared/data/reform_eval when present."""
from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageStat

from evaluator.benchmarks.reform import datasets as ds
from evaluator.benchmarks.reform import files as reform_files
from evaluator.benchmarks.reform import suite
from evaluator.benchmarks.reform.items import load_items
from evaluator.inputs.images import encode_image_base64

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "reform_eval"
DRAW_SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "draw_reform_sample.py"


def _png_b64(color=(200, 30, 30), size=(24, 16)) -> str:
    return encode_image_base64(Image.new("RGB", size, color))


def _write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _mc_doc(**overrides) -> dict:
    item = {"question_id": "q1", "image_id": "img1", "question": "What colour is the box?", "answer": "red",
            "answer_options": ["blue", "red", "green"], "image": _png_b64()}
    item.update(overrides)
    return {"version": "1.0", "split": "test", "data": [item]}


# --------------------------------------------------------------------------------------------- official shape

def test_multiple_choice_file_with_base64_image(tmp_path):
    path = _write(tmp_path / "mc.json", _mc_doc())
    [item] = load_items(path, ds.MC, dataset="TOY", dimension="fine_perception")
    assert item["question_id"] == "q1"
    assert item["dataset"] == "TOY" and item["dimension"] == "fine_perception" and item["form"] == ds.MC
    assert item["options"] == ["blue", "red", "green"]
    assert item["answer"] == "red"
    assert item["history"] == []
    assert isinstance(item["image"], Image.Image) and item["image"].mode == "RGB"
    assert item["image"].size == (24, 16) and item["image"].getpixel((3, 3)) == (200, 30, 30)
    assert item["image_ref"] == "base64"


def test_data_uri_and_index_answer_and_bare_list(tmp_path):
    doc = _mc_doc(answer=2, image="data:image/png;base64," + _png_b64((0, 0, 255)))["data"]
    [item] = load_items(_write(tmp_path / "list.json", doc), ds.MC)
    assert item["answer"] == "green"  # an index (as the prediction dumps store it) maps to the option text
    assert item["image"].getpixel((0, 0)) == (0, 0, 255)


def test_image_path_resolved_against_the_files_folder(tmp_path):
    (tmp_path / "imgs").mkdir()
    Image.new("RGB", (8, 8), (0, 200, 0)).save(tmp_path / "imgs" / "a.png")
    doc = {"data": [{"question_id": 7, "image": "imgs/a.png", "answer": ["Hello"], "question": "Text?"}]}
    [item] = load_items(_write(tmp_path / "ocr.json", doc), ds.OCR)
    assert item["question_id"] == "7"
    assert item["answer"] == ["Hello"] and item["options"] == []
    assert item["image"].getpixel((1, 1)) == (0, 200, 0)
    assert item["image_ref"] == str((tmp_path / "imgs" / "a.png").resolve())


def test_caption_and_history(tmp_path):
    doc = {"data": [
        {"sample_id": 3, "image": _png_b64(), "references": ["a red box", "red square"], "question": "Describe."},
        {"question_id": "d1", "image": _png_b64(), "question": "And now?", "answer": "no",
         "answer_options": ["yes", "no"],
         "history": [{"from": "human", "value": "Is it red?"}, {"from": "assistant", "value": "(A) yes"}]},
    ]}
    path = _write(tmp_path / "mixed.json", doc)
    [cap] = load_items(_write(tmp_path / "cap.json", {"data": doc["data"][:1]}), ds.CAPTION)
    assert cap["answer"] == ["a red box", "red square"] and cap["question_id"] == "3"
    [dia] = load_items(_write(tmp_path / "dia.json", {"data": doc["data"][1:]}), ds.MC)
    assert dia["history"] == [{"from": "human", "value": "Is it red?"}, {"from": "assistant", "value": "(A) yes"}]
    with pytest.raises(ValueError, match="item 0"):
        load_items(path, ds.MC)  # the caption item has no options


def test_load_images_false_keeps_the_reference(tmp_path):
    doc = {"data": [{"question_id": "x", "image": "/nowhere/pic.jpg", "answer": "w", "question": "?"}]}
    [item] = load_items(_write(tmp_path / "o.json", doc), ds.OCR, load_images=False)
    assert item["image"] is None and item["image_ref"] == "/nowhere/pic.jpg"
    with pytest.raises(ValueError, match="item 0: image"):
        load_items(tmp_path / "o.json", ds.OCR)


@pytest.mark.parametrize("bad, message", [
    ({"answer": "purple"}, "not among the answer_options"),
    ({"answer": 5}, "option text or index"),
    ({"answer_options": ["only one"]}, "at least 2 strings"),
    ({"answer_options": "red,blue"}, "at least 2 strings"),
    ({"question": ""}, "question is empty"),
    ({"image": None}, "no image"),
    ({"image": "!!notbase64" * 20}, "neither a path nor valid base64"),
    ({"image": base64.b64encode(b"plain text, not a picture " * 4).decode()}, "does not decode"),
    ({"history": "hi"}, "history must be a list"),
])
def test_malformed_item_names_its_index(tmp_path, bad, message):
    doc = _mc_doc()
    good = dict(doc["data"][0])
    broken = dict(good, question_id="q2")
    broken.update(bad)
    doc["data"] = [good, broken]
    with pytest.raises(ValueError, match=rf"item 1: .*{re.escape(message)}"):
        load_items(_write(tmp_path / "bad.json", doc), ds.MC)


@pytest.mark.parametrize("bad, message", [
    ({"answer": []}, "answer must be"),
    ({"answer": ["  "]}, "answer is empty"),
    ({"answer": 3}, "answer must be"),
])
def test_malformed_ocr_item(tmp_path, bad, message):
    item = {"question_id": "o", "image": _png_b64(), "question": "?", "answer": "word"}
    item.update(bad)
    with pytest.raises(ValueError, match=rf"item 0: {message}"):
        load_items(_write(tmp_path / "o.json", {"data": [item]}), ds.OCR)


def test_bad_file_and_form(tmp_path):
    (tmp_path / "x.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_items(tmp_path / "x.json", ds.MC)
    with pytest.raises(ValueError, match="'data' list"):
        load_items(_write(tmp_path / "y.json", {"version": "1"}), ds.MC)
    with pytest.raises(ValueError, match="form must be one of"):
        load_items(tmp_path / "y.json", "essay")
    with pytest.raises(ValueError, match="item 0: form must be one of"):
        load_items(_write(tmp_path / "z.json", _mc_doc()), None)  # no form given and none on the item
    with pytest.raises(FileNotFoundError):
        load_items(tmp_path / "missing.json", ds.MC)


def test_hf_source_goes_through_the_hub_download(tmp_path, monkeypatch):
    local = _write(tmp_path / "hub.json", _mc_doc())
    calls = []

    def fake_download(repo_id, filename, revision):
        calls.append((repo_id, filename, revision))
        return str(local)

    monkeypatch.setattr(reform_files, "hub_file", fake_download)
    [item] = load_items("hf://datasets/Aweminus/ReForm-Eval-Data@abc/huggingface_data/X/x.json", ds.MC)
    assert item["answer"] == "red"
    assert calls == [("Aweminus/ReForm-Eval-Data", "huggingface_data/X/x.json", "abc")]
    entry = ds.DATASETS_BY_NAME["VSR"]
    assert ds.hub_source(entry) == ("hf://datasets/Aweminus/ReForm-Eval-Data/"
                                    "huggingface_data/VSR/vsr_core_multiple_choice.json")

    calls.clear()
    monkeypatch.setattr(reform_files, "hub_file", lambda repo_id, filename, revision: (
        calls.append(filename) or str(_write(tmp_path / "h2.json", _mc_doc()))))
    items = suite.load_full_suite(["VSR"])
    assert calls == [entry.hub_path] and items[0]["dataset"] == "VSR" and items[0]["dimension"] == "spatial"
    with pytest.raises(ValueError, match="unknown"):
        suite.load_full_suite(["NoSuchSet"])



def test_relative_image_path_in_a_hub_file_is_read_from_the_same_dataset(tmp_path, monkeypatch):
    """An item of an hf:// file whose image is a relative path: the image comes from the same Hub dataset, through
    the same download (files.hub_file)."""
    Image.new("RGB", (8, 8), (0, 90, 200)).save(tmp_path / "pic.png")
    doc = {"data": [{"question_id": "h", "image": "imgs/pic.png", "answer": "w", "question": "Text?"}]}
    local = {"huggingface_data/X/x.json": _write(tmp_path / "x.json", doc),
             "huggingface_data/X/imgs/pic.png": tmp_path / "pic.png"}
    calls = []
    monkeypatch.setattr(reform_files, "hub_file",
                        lambda repo_id, filename, revision: calls.append((filename, revision)) or str(local[filename]))
    [item] = load_items("hf://datasets/Aweminus/ReForm-Eval-Data@r2/huggingface_data/X/x.json", ds.OCR,
                        cache_dir=tmp_path / "cache")
    assert calls == [("huggingface_data/X/x.json", "r2"), ("huggingface_data/X/imgs/pic.png", "r2")]
    assert item["image"].getpixel((1, 1)) == (0, 90, 200)
    assert item["image_ref"] == "hf://datasets/Aweminus/ReForm-Eval-Data@r2/huggingface_data/X/imgs/pic.png"

    def data_only(repo_id, filename, revision):
        if filename.endswith(".png"):
            raise OSError("offline")
        return str(local[filename])

    monkeypatch.setattr(reform_files, "hub_file", data_only)
    with pytest.raises(ValueError, match=r"item 0: image 'hf://.*/imgs/pic.png' unavailable \(OSError\)"):
        load_items("hf://datasets/Aweminus/ReForm-Eval-Data/huggingface_data/X/x.json", ds.OCR,
                   cache_dir=tmp_path / "cache")


# --------------------------------------------------------------------------------------------- multi-file sets

def _tdiuc_files(root: Path) -> dict[str, Path]:
    """TDIUC in the Hub layout: questions (base64 image in image_id), annotations, choice_list/<type>.json."""
    (root / "choice_list").mkdir(parents=True)
    questions = [
        {"question_id": 30, "image_id": _png_b64((200, 30, 30)), "question": "What color is the bus?"},
        {"question_id": 10, "image_id": _png_b64((0, 0, 200)), "question": "Is there a dog?"},
        {"question_id": 20, "image_id": _png_b64((0, 200, 0)), "question": "What sport is this?"},
        {"question_id": 40, "image_id": _png_b64((9, 9, 9)), "question": "What color is the car?"},
    ]
    annotations = {"annotations": [
        {"question_id": 10, "question_type": "object_presence", "answers": [{"answer": "yes"}], "ans_source": "x"},
        {"question_id": 20, "question_type": "sport_recognition", "answers": [{"answer": "tennis"}]},
        {"question_id": 30, "question_type": "color", "answers": [{"answer": "red"}, {"answer": "blue"}]},
        {"question_id": 40, "question_type": "color", "answers": [{"answer": "black"}]},
    ]}
    return {
        "ques": _write(root / "TDIUC_val_ques.json", questions),
        "anns": _write(root / "TDIUC_val_anns.json", annotations),
        "color": _write(root / "choice_list" / "color.json",
                        [{"choice": c} for c in ("red", "blue", "green", "black", "white", "pink")]),
        "sport": _write(root / "choice_list" / "sport_recognition.json", {"choice": ["tennis", "golf"]}),
    }


def test_tdiuc_joins_questions_answers_and_choice_lists(tmp_path):
    files = _tdiuc_files(tmp_path)
    items = suite.load_tdiuc(str(files["ques"]), str(files["anns"]), str(tmp_path / "choice_list"), "color",
                          dataset="TDIUC-color", dimension="fine_perception")
    assert [i["question_id"] for i in items] == ["30", "40"]  # only the color questions, in file order
    bus = items[0]
    assert bus["answer"] == "red" and bus["options"][-1] == "red"  # the first annotated answer is the gold
    assert len(bus["options"]) == 4 and len(set(bus["options"])) == 4
    assert set(bus["options"]) <= {"red", "blue", "green", "black", "white", "pink"}
    assert bus["image"].getpixel((0, 0)) == (200, 30, 30) and bus["dataset"] == "TDIUC-color"
    again = suite.load_tdiuc(str(files["ques"]), str(files["anns"]), str(tmp_path / "choice_list"), "color")
    assert [i["options"] for i in again] == [i["options"] for i in items]  # distractors seeded by question id
    [dog] = suite.load_tdiuc(str(files["ques"]), str(files["anns"]), str(tmp_path / "missing"), "object_presence")
    assert dog["options"] == ["yes", "no"] and dog["answer"] == "yes"  # yes/no needs no choice list
    [sport] = suite.load_tdiuc(str(files["ques"]), str(files["anns"]), str(tmp_path / "choice_list"),
                            "sport_recognition")
    assert sport["options"] == ["golf", "tennis"]  # column-shaped choice file; fewer than 3 distractors


def test_multi_file_sets_through_the_full_suite(tmp_path, monkeypatch):
    files = _tdiuc_files(tmp_path / "tdiuc")
    counting = [{"Image_ID": "COCO_1.jpg", "Question": "How many cats?", "Answer": 2,
                 "Resolved_COCO_category": "cat", "image": _png_b64((1, 2, 3))},
                {"Image_ID": "COCO_2.jpg", "Question": "How many dogs?", "Answer": 5,
                 "Resolved_COCO_category": "dog", "image": _png_b64((4, 5, 6))}]
    (tmp_path / "oc").mkdir()
    hub = {
        "huggingface_data/TDIUC/TDIUC_val_ques.json": files["ques"],
        "huggingface_data/TDIUC/TDIUC_val_anns.json": files["anns"],
        "huggingface_data/TDIUC/choice_list/color.json": files["color"],
        "huggingface_data/MSCOCO/object-counting-all.json": _write(tmp_path / "oc" / "a.json", counting),
        "huggingface_data/MSCOCO/objectCounting_answer_list/answer_list.json":
            _write(tmp_path / "oc" / "c.json", [{"choice": n} for n in range(1, 11)]),
    }
    calls = []

    def fake_download(repo_id, filename, revision):
        calls.append((repo_id, filename, revision))
        if filename not in hub:
            raise FileNotFoundError(filename)
        return str(hub[filename])

    monkeypatch.setattr(reform_files, "hub_file", fake_download)
    items = suite.load_full_suite(["TDIUC-color", "MSCOCO-OC"], revision="r1")
    assert {(i["dataset"], i["dimension"]) for i in items} == {("TDIUC-color", "fine_perception"),
                                                               ("MSCOCO-OC", "fine_perception")}
    oc = [i for i in items if i["dataset"] == "MSCOCO-OC"]
    assert [i["question_id"] for i in oc] == ["1", "2"] and [i["answer"] for i in oc] == ["2", "5"]
    assert all(len(i["options"]) == 4 and i["options"][-1] == i["answer"] for i in oc)
    assert all(o in {str(n) for n in range(1, 11)} for i in oc for o in i["options"])
    assert {c[2] for c in calls} == {"r1"} and {c[0] for c in calls} == {ds.HUB_REPO}
    assert sum(d.multi_file for d in ds.DATASETS) == 8  # 7 TDIUC question types + COCO counting


def test_multi_file_errors_name_the_problem(tmp_path):
    files = _tdiuc_files(tmp_path)
    _write(files["anns"], {"annotations": [{"question_id": 10, "question_type": "color",
                                            "answers": [{"answer": "red"}]}]})
    with pytest.raises(ValueError, match="question 30 has no annotation"):
        suite.load_tdiuc(str(files["ques"]), str(files["anns"]), str(tmp_path / "choice_list"), "color")
    files = _tdiuc_files(tmp_path / "again")
    _write(files["color"], [{"choice": "red"}])
    with pytest.raises(ValueError, match="no distractor"):
        suite.load_tdiuc(str(files["ques"]), str(files["anns"]), str(tmp_path / "again" / "choice_list"), "color")


# --------------------------------------------------------------------------------------------- table

def test_dataset_table():
    names = [d.name for d in ds.DATASETS]
    assert len(names) == len(set(names))
    assert {d.dimension for d in ds.DATASETS} == set(ds.DIMENSIONS)
    assert all(d.form in ds.FORMS for d in ds.DATASETS)
    assert all(d.hub_path.startswith("huggingface_data/") and d.hub_path.endswith(".json") for d in ds.DATASETS)
    assert {d.form for d in ds.DATASETS if d.dimension == "description"} == {ds.CAPTION}
    assert all(d.confirmed for d in ds.DATASETS)  # every path checked against the official configs
    by = ds.DATASETS_BY_NAME
    assert by["VizWiz-quality"].hub_path == "huggingface_data/VizWiz/vizwiz_singleChoice_val_10p.json"
    assert by["TDIUC-detection"].question_type == "object_recognition"  # TDIUC_detection.yaml task
    tdiuc = [d for d in ds.DATASETS if d.name.startswith("TDIUC-")]
    assert len(tdiuc) == 7 and len({d.question_type for d in tdiuc}) == 7
    assert all(d.hub_path == "huggingface_data/TDIUC/TDIUC_val_ques.json"
               and d.choices_path == "huggingface_data/TDIUC/choice_list/" for d in tdiuc)
    # the huggingface_data paths of KVQA_viquae_val.yaml, VQRA_aokvqa_val.yaml and VQAR_aokvqa_val.yaml
    assert {n: (by[n].hub_path, by[n].dimension, by[n].form, by[n].layout)
            for n in ("K-ViQuAE", "A-OKVQRA", "A-OKVQAR")} == {
        "K-ViQuAE": ("huggingface_data/K-ViQuAE/kviquae_test_10p.json", "visual_reasoning", ds.MC, "kviquae"),
        "A-OKVQRA": ("huggingface_data/A-OKVQRA/aokvqra_val_10p.json", "visual_reasoning", ds.MC, "aokvqra"),
        "A-OKVQAR": ("huggingface_data/A-OKVQAR/aokvqar_val_10p.json", "visual_reasoning", ds.MC, "aokvqar")}


# The 61 datasets of the reference README (FudanDISC/ReForm-Eval, "Data Usage"), by dimension, as it names them.
REFERENCE_61 = {
    "coarse_perception": ("Flowers102", "CIFAR10", "ImageNet-1K", "Pets37", "VizWiz-yesno", "VizWiz-singleChoice",
                          "TDIUC-Sport", "TDIUC-Scene", "MEDIC"),
    "fine_perception": ("MSCOCO-MCI", "MSCOCO-GOI", "MSCOCO-MOS", "TDIUC-Color", "TDIUC-Utility", "TDIUC-Position",
                        "TDIUC-Detection", "TDIUC-Counting", "RefCOCO", "MSCOCO-OC"),
    "visual_reasoning": ("VQA v2", "GQA", "Whoops", "OK-VQA", "ScienceQA", "VizWiz", "ViQuAE", "K-ViQuAE", "A-OKVQA",
                         "A-OKVQRA", "A-OKVQAR", "ImageNetVC"),
    "spatial": ("CLEVR", "VSR", "MP3D"),
    "multi_turn_dialogue": ("VQA-MT", "VisDial"),
    "cross_modal_inference": ("MSCOCO-ITM", "MSCOCO-ITS", "WikiHow", "Winoground", "SNLI-VE", "MOCHEG"),
    "scene_text": ("Grounded IC15", "IC15", "Grounded COCO-Text", "COCO-Text", "Grounded TextOCR", "TextOCR", "CUTE80",
                   "IIIT5K", "WordArt", "FUNSD", "POIE", "SROIE", "TextVQA", "DocVQA", "OCR-VQA"),
    "description": ("MSCOCO", "TextCaps", "NoCaps", "Flickr30K"),
}


def test_table_and_not_run_list_are_exactly_the_reference_61():
    """Every dataset of the reference README's 61 either runs (in the table, in its dimension) or is on the not-run
    list with a reason; nothing else is on either."""
    assert sum(map(len, REFERENCE_61.values())) == 61
    reference = {(name, dim) for dim, names in REFERENCE_61.items() for name in names}
    ours = [(d.listed_as, d.dimension) for d in ds.DATASETS]
    not_run = [(n.name, n.dimension) for n in ds.NOT_RUN]
    assert len(set(ours + not_run)) == len(ours) + len(not_run)  # no dataset twice
    assert set(ours) | set(not_run) == reference
    assert len(ds.DATASETS) == 61 and not_run == []  # issue 41: all 61 run
    assert {dim: ds.dimension_counts(dim) for dim in ds.DIMENSIONS} == {d: (len(n), len(n))
                                                                        for d, n in REFERENCE_61.items()}
    paths = [(d.hub_path, d.question_type) for d in ds.DATASETS]
    assert len(set(paths)) == len(paths)  # each its own file (TDIUC: its own question type of the shared file)


def test_docs_and_about_say_every_dataset_of_the_61_runs():
    """docs/benchmarks.md, the card's summary (the About tab) and each dimension's description say N of N: no
    dataset is left out, and the card lists no not-run difference."""
    from evaluator.benchmarks.reform.card import CARD

    page = (Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = page[page.index("### ReForm-Eval"):]
    section = re.split(r"\n#{1,3} ", section[len("### ReForm-Eval"):])[0]
    assert "All 61 datasets of the reference README's list run" in section and "not run" not in section
    assert "The full suite runs 61 of the reference's 61 datasets." in CARD.summary
    assert not any("not run" in d for d in CARD.differences)
    for dim, names in REFERENCE_61.items():
        metric = next(m for m in CARD.metrics if m.key == f"gen_{dim}")
        assert f"over {len(names)} of the reference's {len(names)} datasets;" in metric.description, dim


# --------------------------------------------------------------------------------------------- sample suite

def test_sample_suite():
    items = suite.load_sample_suite()
    by_dim = Counter(i["dimension"] for i in items)
    assert set(by_dim) == set(ds.DIMENSIONS)
    assert min(by_dim.values()) >= 5, by_dim
    assert len({i["question_id"] for i in items}) == len(items)
    assert {i["form"] for i in items} == set(ds.FORMS)
    for item in items:
        img = item["image"]
        assert isinstance(img, Image.Image) and img.mode == "RGB" and min(img.size) >= 16, item["question_id"]
        assert max(hi - lo for lo, hi in ImageStat.Stat(img).extrema) > 0, f"{item['question_id']}: blank image"
        assert item["question"].strip()
        if item["form"] == ds.MC:
            assert item["answer"] in item["options"] and len(set(item["options"])) == len(item["options"])
        else:
            assert item["options"] == [] and item["answer"] and all(a.strip() for a in item["answer"])
    # the answers are not always in the same position
    assert len(Counter(i["options"].index(i["answer"]) for i in items if i["form"] == ds.MC)) >= 3
    dialogue = [i for i in items if i["dimension"] == "multi_turn_dialogue"]
    assert sum(bool(i["history"]) for i in dialogue) >= 4
    assert all(i["form"] == ds.CAPTION and len(i["answer"]) >= 2 for i in items if i["dimension"] == "description")


def _ink(img: Image.Image) -> np.ndarray:
    """True where a pixel differs from the background (the top-left pixel's colour)."""
    arr = np.asarray(img.convert("RGB")).astype(int)
    return (np.abs(arr - arr[0, 0]).sum(axis=2) > 60)


def _crop_ink(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask)
    return mask[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]


def _contains(hay: np.ndarray, needle: np.ndarray) -> bool:
    h, w = needle.shape
    if h > hay.shape[0] or w > hay.shape[1]:
        return False
    windows = np.lib.stride_tricks.sliding_window_view(hay, (h, w))
    return bool((windows == needle).all(axis=(2, 3)).any())


def test_sample_ocr_words_are_rendered():
    """Each OCR/KIE answer is a word really drawn in its image: the word rendered alone with the same font (at
    one of the drawing's scales) appears pixel for pixel in the image's ink."""
    sys.path.insert(0, str(DRAW_SCRIPT.parent))
    try:
        import draw_reform_sample as draw
    finally:
        sys.path.remove(str(DRAW_SCRIPT.parent))
    items = [i for i in suite.load_sample_suite() if i["form"] in (ds.OCR, ds.KIE)]
    assert len(items) >= 5
    for item in items:
        [word] = item["answer"]
        assert re.fullmatch(r"[A-Za-z0-9.]+", word), word
        hay = _ink(item["image"])
        found = any(_contains(hay, _crop_ink(_ink(draw.text_image([word], scale=s)))) for s in (1, 2, 3, 4))
        assert found, f"{item['question_id']}: {word!r} is not drawn in the image"
        other = "QZXJ" if word != "QZXJ" else "WVKY"
        assert not any(_contains(hay, _crop_ink(_ink(draw.text_image([other], scale=s)))) for s in (1, 2, 3, 4))


@pytest.mark.slow  # runs tools/draw_reform_sample.py as a process
def test_draw_script_is_deterministic(tmp_path):
    before = suite.SAMPLE_PATH.read_bytes()
    assert len(before) < 300_000
    subprocess.run([sys.executable, str(DRAW_SCRIPT)], check=True, capture_output=True)
    assert suite.SAMPLE_PATH.read_bytes() == before


# --------------------------------------------------------------------------------------------- shared dumps

DUMPS = {
    "TDIUC_SingleChoice_likelihood_imagebindLLM_imagebindLLM.json": ds.MC,
    "MSCOCO_Generation_generation_lynx_LYNX.json": ds.CAPTION,
    "FUNSD_KIEOpenEnded_generation_blip2_blip2_t5_instruct.json": ds.KIE,
}


@pytest.mark.parametrize("name, form", sorted(DUMPS.items()))
def test_shared_prediction_dumps(name, form):
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"ReForm-Eval dump not found at {path} (tests read ../shared/data/reform_eval; not shipped)")
    raw = json.loads(path.read_text(encoding="utf-8"))
    # the dumps point at images on the authors' machines, so only the structure is loaded
    items = load_items(path, form, dataset=name.split("_")[0], load_images=False)
    assert len(items) == len(raw) > 0
    for item, rec in zip(items, raw):
        assert item["image"] is None and item["image_ref"] == rec["image"]
        assert item["question_id"] == str(rec["sample_id"])
        if form == ds.MC:
            assert item["answer"] == rec["answer_options"][rec["answer"]]
            assert item["history"] and item["history"][0]["from"] == "human"
        elif form == ds.CAPTION:
            assert item["answer"] == rec["references"]
        else:
            assert item["answer"] == [rec["answer"]]
    if form == ds.MC:
        assert len(items) == 55  # 11 samples x 5 repeats (accuracy 0.581818 = 32/55)
        assert Counter(Counter(i["question_id"] for i in items).values()) == {5: 11}
