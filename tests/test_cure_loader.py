"""CURE loader (real file in ../shared/data when present), sample suite, red-box drawing, letter extraction,
and the plan / execute / score wiring with a scripted stand-in for a model."""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.cure import data, prompts, region, scoring
from evaluator.benchmarks.spec import PlanContext
from evaluator.inputs import sources
from evaluator.inputs.images import ImageUnavailable, box_line_width
from evaluator.inputs.sources import parse_hf
from evaluator.metrics import cure_scores
from evaluator.models.base import OptionScore
from tests.benchmark_runs import run_benchmark

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "cure" / "cot_consistency_eval.jsonl"
needs_real = pytest.mark.skipif(
    not REAL.is_file(), reason=f"real CURE data not found at {REAL} (tests read it from ../shared/data; not shipped)")


def _sample_records() -> list[dict]:
    return json.loads(data.SAMPLE_PATH.read_text(encoding="utf-8"))


@needs_real
def test_real_file_loads():
    instances = data.load_instances(REAL)
    assert len(instances) == 1622
    assert Counter(i["chain_length"] for i in instances) == {2: 271, 3: 1220, 4: 131}
    assert sum(i["chain_length"] for i in instances) == 4726
    assert instances[7]["question_id"] == "cure-0007"
    assert len({i["question_id"] for i in instances}) == 1622
    assert all(i["image_ref"].startswith(("http://", "https://")) for i in instances)


@needs_real
def test_real_file_as_json_lines(tmp_path):
    records = json.loads(REAL.read_text(encoding="utf-8"))[:25]
    path = tmp_path / "cure.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert [i["clue"] for i in data.load_instances(path)] == [r["clue"] for r in records]


def test_sample_suite():
    instances = data.load_instances(data.SAMPLE_PATH)
    assert 18 <= len(instances) <= 24
    assert set(Counter(i["chain_length"] for i in instances)) == {2, 3, 4}
    for inst in instances:
        assert not Path(inst["image"]["url"]).is_absolute()  # stored relative to the JSON file
        path = Path(inst["image_ref"])
        assert path.is_file(), path
        with Image.open(path) as img:
            assert img.size == (inst["image"]["width"], inst["image"]["height"])
    # every gold index is used somewhere (the order of candidates is shuffled)
    golds = Counter(i["inference"]["gt"] for i in instances)
    assert len(golds) >= 4


def test_json_lines_and_relative_images(tmp_path):
    records = _sample_records()[:3]
    path = tmp_path / "sub" / "data.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    instances = data.load_instances(path)
    assert len(instances) == 3
    assert instances[0]["image_ref"] == str((tmp_path / "sub" / records[0]["image"]["url"]).resolve())


def test_id_field_is_used(tmp_path):
    records = _sample_records()[:2]
    records[1]["id"] = "vg-42"
    path = tmp_path / "d.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    assert [i["question_id"] for i in data.load_instances(path)] == ["cure-0000", "vg-42"]


@pytest.mark.parametrize("breakage, message", [
    (lambda r: r["inference"]["candidate"].pop(), "inference.candidate"),
    (lambda r: r["inference"].__setitem__("gt", 6), "inference.gt"),
    (lambda r: r["cot_inference"]["chain"][1].__setitem__("gt", "2"), "chain[1].gt"),
    (lambda r: r["cot_inference"]["chain"][0].pop("question"), "chain[0].question"),
    (lambda r: r["cot_inference"].__setitem__("total_step", 9), "total_step"),
    (lambda r: r.__setitem__("bboxes", []), "bboxes"),
    (lambda r: r["image"].pop("url"), "image.url"),
    (lambda r: r["image"].__setitem__("width", 0), "image.width"),
])
def test_malformed_instance_names_its_index(tmp_path, breakage, message):
    records = _sample_records()[:5]
    breakage(records[3])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(ValueError, match=r"instance 3\b") as info:
        data.load_instances(path)
    assert message in str(info.value)


def test_not_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        data.load_instances(path)


def test_hf_reference_parsing():
    assert parse_hf("hf://datasets/org/name/data/cure.json") == ("org/name", None, "data/cure.json")
    assert parse_hf("hf://datasets/org/name@abc123/cure.json") == ("org/name", "abc123", "cure.json")
    with pytest.raises(ValueError):
        parse_hf("hf://models/org/name/x.json")


def test_hub_dataset_source(hub_cache, tmp_path):
    """hf://datasets/... through huggingface_hub (offline, from a hand-made cache); relative images stay in the repo."""
    from tests.hub_cache import lay_into_hub_cache

    records = _sample_records()[:2]
    png = (data.SAMPLE_PATH.parent / records[0]["image"]["url"]).read_bytes()
    records[0]["image"]["url"] = "images/000.png"
    records[1]["image"]["url"] = "images/not-in-repo.png"
    lay_into_hub_cache(hub_cache, "cure-org/cure-test", repo_type="dataset",
                       files={"data/cure.json": json.dumps(records), "data/images/000.png": png})
    instances = data.load_instances("hf://datasets/cure-org/cure-test/data/cure.json")
    assert [i["image_ref"] for i in instances] == ["hf://datasets/cure-org/cure-test/data/images/000.png",
                                                   "hf://datasets/cure-org/cure-test/data/images/not-in-repo.png"]
    assert region.marked_image(instances[0], tmp_path).size == (256, 192)
    with pytest.raises(ImageUnavailable, match="Hub download failed"):
        region.marked_image(instances[1], tmp_path)


def _is_red(px) -> bool:
    return px[0] > 200 and px[1] < 60 and px[2] < 60


def test_box_is_scaled_to_the_fetched_image():
    # declared 100x50, fetched 200x100: the box (10, 10, 20x10) becomes x 20..59, y 20..39
    bbox = {"left": 10, "top": 10, "width": 20, "height": 10}
    assert region.region_box(bbox, (100, 50), (200, 100)) == (20, 20, 60, 40)
    assert region.region_box(bbox, (100, 50), (100, 50)) == (10, 10, 30, 20)
    img = Image.new("RGB", (200, 100), (255, 255, 255))
    marked = region.mark_region(img, bbox, (100, 50))
    lw = box_line_width((200, 100))
    assert lw >= 3
    assert img.getpixel((19, 30)) == (255, 255, 255)  # the input is untouched
    # the frame sits just outside the scaled region, on all four sides
    assert _is_red(marked.getpixel((20 - lw, 30))) and _is_red(marked.getpixel((19, 30)))
    assert _is_red(marked.getpixel((60, 30))) and _is_red(marked.getpixel((59 + lw, 30)))
    assert _is_red(marked.getpixel((40, 19))) and _is_red(marked.getpixel((40, 40)))
    # the region itself is not covered, nor what lies beyond the frame
    assert marked.getpixel((20, 20)) == (255, 255, 255) and marked.getpixel((59, 39)) == (255, 255, 255)
    assert marked.getpixel((20 - lw - 1, 30)) == (255, 255, 255)
    # the unscaled position (x 10..29) would be wrong
    assert marked.getpixel((9, 15)) == (255, 255, 255)


def test_box_is_clamped_and_mode_converted():
    img = Image.new("L", (50, 40), 255)
    marked = region.mark_region(img, {"left": 40, "top": 30, "width": 30, "height": 30}, (50, 40))
    assert marked.mode == "RGB" and marked.size == (50, 40)
    assert _is_red(marked.getpixel((38, 35)))


@pytest.mark.parametrize("text, expected", [
    ("(C)", 2), ("The answer is (b).", 1), ("B", 1), ("Answer: D", 3), ("E.", 4), ("F) the last one", 5),
    ("A", 0), ("(A) It gives shade", 0), ("A dog is sitting, so (D)", 3), ("A dog is sitting", None),
    ("I think it is C because (B) is wrong", 1), ("(G) or maybe E", 4), ("no idea", None), ("", None),
    ("CD player", None), ("I don't know", None),
])
def test_extract_letter(text, expected):
    assert scoring.extract_letter(text, 6) == expected


def test_extract_letter_respects_n():
    assert scoring.extract_letter("(E)", 4) is None
    assert scoring.extract_letter("(D)", 4) == 3


def test_prompts_are_ours_and_complete():
    texts = prompts.load_prompts()
    opts = [f"option {k}" for k in range(6)]
    gen = prompts.build_prompt(texts, "What is in the sky?", opts, "generation")
    assert "What is in the sky?" in gen and "(A) option 0\n(B) option 1" in gen and "(F) option 5" in gen
    lik = prompts.build_prompt(texts, None, opts, "likelihood")
    assert "red" in lik and "option 0" not in lik and "{" not in lik
    assert "{" not in gen


class ScriptedModel:
    """A stand-in for a model: answers from a fixed script keyed by the candidate list of each question."""

    model_id, revision, dtype, device = "scripted", None, "none", "cpu"
    has_vision, batch_size, scoring_path = True, 2, "reference"

    def __init__(self, choice_by_options: dict[tuple, int], reply_by_prompt: dict[str, str]):
        self.choice_by_options = choice_by_options
        self.reply_by_prompt = reply_by_prompt
        self.seen_images: list[Image.Image] = []

    def score_options(self, request, options):
        self.seen_images.extend(request.images)
        choice = self.choice_by_options[tuple(options)]
        # mean favours the scripted choice; sum always favours option 0 (as if it were the shortest)
        return [OptionScore(sum_logprob=0.0 if k == 0 else -10.0 - k, mean_logprob=-0.1 if k == choice else -2.0,
                            n_tokens=3) for k in range(len(options))]

    def generate(self, requests):
        self.seen_images.extend(img for r in requests for img in r.images)
        return [self.reply_by_prompt[r.text] for r in requests]


@pytest.mark.parametrize("mode", ["likelihood", "generation"])
def test_run_wiring_with_a_scripted_model(tmp_path, mode):
    records = _sample_records()[:8]
    for r in records:  # absolute image paths, so the copy works from tmp_path
        r["image"]["url"] = str(data.SAMPLE_PATH.parent / r["image"]["url"])
    records[5]["image"]["url"] = "nowhere/missing.png"  # this instance's image cannot be fetched
    data_file = tmp_path / "cure.json"
    data_file.write_text(json.dumps(records), encoding="utf-8")

    # plan: high right on even instances; chain right unless i % 3 == 0 (then its last step is wrong)
    texts = prompts.load_prompts()
    choice_by_options, reply_by_prompt, plan_h, plan_s = {}, {}, [], []
    for i, r in enumerate(records):
        h, s = i % 2 == 0, i % 3 != 0
        questions = [(None, r["inference"], h)]
        chain = r["cot_inference"]["chain"]
        questions += [(st["question"], st, s or k < len(chain) - 1) for k, st in enumerate(chain)]
        for q, block, right in questions:
            pick = block["gt"] if right else (block["gt"] + 1) % 6
            choice_by_options[tuple(block["candidate"])] = pick
            prompt = prompts.build_prompt(texts, q, block["candidate"], "generation")
            reply_by_prompt[prompt] = f"The answer is ({'ABCDEF'[pick]})." if i != 4 or q is not None else "unsure"
        if i != 5:
            plan_h.append(h and not (mode == "generation" and i == 4))
            plan_s.append([s])
    progress = []
    model = ScriptedModel(choice_by_options, reply_by_prompt)
    result = run_benchmark("cure", model, suite="full", sources={"cure": str(data_file)},
                           images_dir=tmp_path / "cache", options={"cure.mode": mode}, batch_size=3,
                           progress=lambda done, total: progress.append((done, total)), folder=tmp_path)

    expected = cure_scores(plan_h, plan_s)
    for key, value in expected.items():
        assert result.scores[key] == pytest.approx(value, nan_ok=True), key
    assert set(result.scores) == {"Rh", "Rcot", "Ro", "Cf", "Cb", "step_accuracy"}
    n_steps = sum(len(r["cot_inference"]["chain"]) for r in records)
    assert result.counts == {"items": 8, "scored": 7, "image_unavailable": 1,
                             "unparsed": 1 if mode == "generation" else 0, "sub_questions": n_steps}
    done = [d for d, _ in progress]  # at each chunk of batch_size instances, and within one as questions are answered
    assert progress[0] == (0, 8) and progress[-1] == (8, 8) and done == sorted(done) and {3, 6} <= set(done)
    assert all(total == 8 for _, total in progress)
    assert result.extra["mode"] == mode and result.extra["choice_rule"]
    assert sum(v["n"] for v in result.extra["by_chain_length"].values()) == 7
    assert set(result.prompts) >= {"cure_high", "cure_step"}

    rows = result.rows
    assert len(rows) == 8 + n_steps
    columns = list(rows[0])
    for col in ["benchmark", "question_id", "part", "repeat", "prompt", "prediction", "parsed_answer", "gold",
                "correct", "score", "extraction", "option_scores", "choice_sum", "status", "error", "chain_length"]:
        assert col in columns
    for row in rows:
        assert list(row) == columns
        assert {k: type(v) for k, v in row.items()} == {k: type(v) for k, v in rows[0].items()}
    missing = [row for row in rows if row["question_id"] == "cure-0005"]
    assert len(missing) == 1 + records[5]["cot_inference"]["total_step"]
    assert all(row["status"] == "image_unavailable" and "file not found" in row["error"] for row in missing)
    assert all(row["correct"] is False and math.isnan(row["score"]) for row in missing)
    ok = [row for row in rows if row["status"] == "ok"]
    assert all(row["error"] == "" and row["score"] in (0.0, 1.0) for row in ok)
    assert [row["part"] for row in rows if row["question_id"] == "cure-0002"] == \
        ["high"] + [f"step{k}" for k in range(1, records[2]["cot_inference"]["total_step"] + 1)]
    first = rows[0]
    assert first["parsed_answer"] == records[0]["inference"]["gt"] and first["correct"] is True
    if mode == "likelihood":
        assert first["extraction"] == "likelihood"
        assert all(row["choice_sum"] == 0 for row in ok)
        assert len(json.loads(first["option_scores"])) == 6
        assert first["prediction"] == records[0]["inference"]["candidate"][first["parsed_answer"]]
        assert "(A)" not in first["prompt"]
        assert result.extra["scores_sum_rule"]["Rh"] == pytest.approx(
            sum(r["inference"]["gt"] == 0 for i, r in enumerate(records) if i != 5) / 7)
    else:
        assert first["extraction"] == "letter" and first["prediction"].startswith("The answer is (")
        unparsed = [row for row in ok if row["parsed_answer"] == -1]
        assert [(row["question_id"], row["part"]) for row in unparsed] == [("cure-0004", "high")]
        assert "(A)" in first["prompt"]

    # the model saw the marked images (red frame), never the missing one
    assert model.seen_images and all(img.size == (256, 192) for img in model.seen_images)
    assert any(_is_red(color) for _, color in model.seen_images[0].getcolors(1 << 16))

    # every row has the same columns and types, so the details table can be written
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(rows)
    frame.to_parquet(tmp_path / "cure.parquet")
    assert len(pd.read_parquet(tmp_path / "cure.parquet")) == len(rows)


def test_full_suite_without_a_source_reads_the_official_file(monkeypatch):
    asked = []

    def offline(url, what, timeout=60):
        asked.append(url)
        raise OSError(f"could not download {what} from {url}: offline")

    monkeypatch.setattr(sources, "http_text", offline)
    with pytest.raises(OSError, match="offline"):
        get_benchmark("cure").plan(PlanContext(suite="full"))
    assert asked == [data.OFFICIAL_URL]


def test_unknown_mode():
    with pytest.raises(ValueError, match="cure.mode"):
        get_benchmark("cure").plan(PlanContext(options={"cure.mode": "vibes"}))
