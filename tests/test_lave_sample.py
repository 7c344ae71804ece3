"""The LAVE sample suite (evaluator/benchmarks/lave/sample/lave_sample.json and lave_sample/*.png, drawn by
tools/draw_lave_sample.py)."""
from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "evaluator" / "benchmarks" / "lave" / "sample"
SAMPLE_JSON = DATA / "lave_sample.json"
DRAW_SCRIPT = ROOT / "tools" / "draw_lave_sample.py"

KINDS = {"count", "yesno", "color", "position", "text", "shape", "compare"}
# inclusive (min, max) item counts per kind; "shape" and "compare" are counted together
KIND_RANGES = {"count": (5, 7), "yesno": (5, 7), "color": (4, 6), "position": (3, 5), "text": (5, 7),
               "shape+compare": (2, 4)}


def _load() -> dict:
    return json.loads(SAMPLE_JSON.read_text(encoding="utf-8"))


def _norm(answer: str) -> str:
    return answer.strip().lower().rstrip(".").strip()


@pytest.fixture(scope="module")
def doc() -> dict:
    return _load()


@pytest.fixture(scope="module")
def items(doc) -> list[dict]:
    return doc["items"]


def test_top_level_shape(doc):
    assert set(doc) == {"version", "name", "note", "items"}
    assert doc["version"] == "1"
    assert doc["name"] == "lave-sample"
    assert isinstance(doc["note"], str) and "tools/draw_lave_sample.py" in doc["note"]
    assert isinstance(doc["items"], list)
    assert 28 <= len(doc["items"]) <= 32


def test_item_shape(items):
    for item in items:
        assert set(item) == {"question_id", "image", "question", "answers", "kind", "style"}, item
        assert item["kind"] in KINDS, item["question_id"]
        assert item["style"] in ("vqa", "doc"), item["question_id"]
        assert isinstance(item["question"], str) and item["question"].endswith("?"), item["question_id"]
        assert all(isinstance(a, str) and a.strip() for a in item["answers"]), item["question_id"]


def test_ids_unique_and_strings_ascii(items):
    ids = [item["question_id"] for item in items]
    assert len(ids) == len(set(ids))
    assert all(qid.startswith("lave-") for qid in ids)
    assert len({item["image"] for item in items}) == len(items)
    SAMPLE_JSON.read_text(encoding="utf-8").encode("ascii")  # raises on any non-ASCII character
    for item in items:
        for text in [item["question"], item["image"], *item["answers"]]:
            assert text.isascii(), (item["question_id"], text)


def test_images_exist_open_and_are_rgb(items):
    total = 0
    for item in items:
        rel = Path(item["image"])
        assert not rel.is_absolute() and ".." not in rel.parts, item["image"]
        path = SAMPLE_JSON.parent / rel
        assert path.is_file(), path
        assert path.suffix == ".png"
        total += path.stat().st_size
        with Image.open(path) as img:
            assert img.format == "PNG"
            assert img.mode == "RGB", (path, img.mode)
            assert 64 <= img.width <= 256 and 48 <= img.height <= 192, (path, img.size)
            img.load()
    assert total < 100_000, f"PNGs take {total} bytes"


def test_counts_per_kind(items):
    counts = Counter(item["kind"] for item in items)
    counts["shape+compare"] = counts.pop("shape", 0) + counts.pop("compare", 0)
    for kind, (lo, hi) in KIND_RANGES.items():
        assert lo <= counts[kind] <= hi, (kind, counts[kind])
    text_styles = Counter(item["style"] for item in items if item["kind"] == "text")
    assert text_styles["vqa"] >= 2 and text_styles["doc"] >= 2, text_styles


def test_answer_counts_per_style(items):
    styles = Counter(item["style"] for item in items)
    assert styles["vqa"] >= 20 and styles["doc"] >= 2
    for item in items:
        if item["style"] == "vqa":
            assert len(item["answers"]) == 10, item["question_id"]
        else:
            assert 1 <= len(item["answers"]) <= 3, item["question_id"]


def test_vqa_answers_look_like_annotators(items):
    """A clear majority (at least 4 of 10 in one surface form) and at least one answer that differs from it, so
    the 25% filter and the 3-of-10 rule have something to do."""
    for item in (i for i in items if i["style"] == "vqa"):
        counts = Counter(_norm(a) for a in item["answers"])
        (top, n), = counts.most_common(1)
        assert n >= 4, (item["question_id"], counts)
        assert n <= 9, (item["question_id"], "no minority answer")
        assert len(counts) >= 2, item["question_id"]


def test_doc_answers_are_phrases(items):
    for item in (i for i in items if i["style"] == "doc"):
        assert any(len(a.split()) >= 3 for a in item["answers"]), item["question_id"]


def test_yes_no_items(items):
    majority = []
    for item in items:
        if item["kind"] != "yesno":
            continue
        assert item["style"] == "vqa"
        (top, _), = Counter(_norm(a) for a in item["answers"]).most_common(1)
        assert top in ("yes", "no"), (item["question_id"], top)
        assert top in item["answers"], "the majority form is lower-case"
        majority.append(top)
    assert len(majority) >= 5
    assert {"yes", "no"} <= set(majority), "both yes and no should be majority answers somewhere"
    variants = [a for i in items if i["kind"] == "yesno" for a in i["answers"]]
    assert "Yes." in variants or "No." in variants


def _draw_module():
    spec = importlib.util.spec_from_file_location("draw_lave_sample", DRAW_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_draw_script_is_deterministic(tmp_path):
    module = _draw_module()
    assert module.SAMPLE_DIR.resolve() == DATA.resolve()  # by default it writes into the package's sample/
    out_json = module.main(tmp_path)
    assert out_json == tmp_path / "lave_sample.json"
    assert out_json.read_bytes() == SAMPLE_JSON.read_bytes()
    fresh = sorted(p.name for p in (tmp_path / "lave_sample").iterdir())
    committed = sorted(Path(item["image"]).name for item in _load()["items"])
    assert fresh == committed
    for name in fresh:
        assert (tmp_path / "lave_sample" / name).read_bytes() == (DATA / "lave_sample" / name).read_bytes(), name
    # a second run into the same folder gives the same bytes again
    module.main(tmp_path)
    assert out_json.read_bytes() == SAMPLE_JSON.read_bytes()
