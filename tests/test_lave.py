"""The LAVE benchmark module: loaders (our sample file, VQA v2-style files, the Docmatix parquet layout), the run()
wiring with a scripted model and a scripted stand-in for the judge, and a real tiny VLM through the real adapter."""
from __future__ import annotations

import io
import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from evaluator.benchmarks import get_benchmark, lave
from evaluator.benchmarks.base import BenchmarkContext
from evaluator.judge import JudgeResult
from evaluator.metrics import anls, exact_match, vqa_accuracy


# --------------------------------------------------------------------------------------------- stand-ins

class ScriptedModel:
    """generate(): the answer scripted for the question found in the prompt ("I am not sure" otherwise)."""

    def __init__(self, answers: dict[str, str]):
        self.answers = answers
        self.calls: list[list] = []

    def generate(self, requests):
        self.calls.append(list(requests))
        out = []
        for r in requests:
            assert len(r.images) == 1 and r.temperature == 0.0
            out.append(next((a for q, a in self.answers.items() if q in r.text), "I am not sure"))
        return out


class ScriptedJudge:
    """Replies by the candidate answer in the LAVE prompt: a rating, a reply without one, or a failed call."""

    identity = {"kind": "scripted", "model": "lave-judge"}

    def __init__(self, replies: dict[str, str]):
        self.replies = replies
        self.prompts: list[str] = []

    def complete_many(self, conversations, **generation):
        results = []
        for conv in conversations:
            assert len(conv) == 1 and conv[0]["role"] == "user"
            prompt = conv[0]["content"]
            self.prompts.append(prompt)
            candidate = prompt.rsplit("Candidate answer: '", 1)[1].rsplit("'\nOutput:", 1)[0]
            reply = self.replies.get(candidate, "The candidate answer is wrong. So rating=1")
            if reply == "fail":
                results.append(JudgeResult(text=None, error="HTTP 503 after 4 attempts", attempts=4))
            else:
                results.append(JudgeResult(text=reply, error=None, attempts=1))
        return results


def _ctx(limit: int = 0, **options) -> BenchmarkContext:
    return BenchmarkContext(suite="sample", limit=limit, options={f"lave.{k}": str(v) for k, v in options.items()},
                            batch_size=2)


def _png(color=(200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (20, 12), color).save(buf, format="PNG")
    return buf.getvalue()


# --------------------------------------------------------------------------------------------- loading

def test_registered_and_needs_a_judge():
    assert get_benchmark("lave") is lave and lave.NEEDS_JUDGE and lave.NEEDS_IMAGES
    with pytest.raises(ValueError, match="LAVE needs a judge: set LEADERBOARD_JUDGE / --judge"):
        lave.run(ScriptedModel({}), _ctx())


def test_sample_suite_loads_with_its_images(tmp_path):
    items = lave.load_vqa_file(lave.SAMPLE_PATH, "sample")
    assert len(items) == 30 and len({i["question_id"] for i in items}) == 30
    for item in items:
        assert item["answers"] and item["question"].endswith("?")
        img = lave._image(item, BenchmarkContext(images_dir=tmp_path))
        assert img.mode == "RGB" and min(img.size) >= 16
    assert {i["style"] for i in items} == {"vqa", "doc"}


def test_vqa_file_formats_and_errors(tmp_path):
    (tmp_path / "img").mkdir()
    Image.new("RGB", (8, 8), (0, 0, 255)).save(tmp_path / "img" / "a.png")
    vqa_v2 = {"question_id": 7, "image": "img/a.png", "question": "What colour?",
              "answers": [{"answer": "blue", "answer_id": k} for k in range(1, 11)]}
    plain = {"id": "x", "image": "img/a.png", "question": "Colour?", "answer": "blue"}
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(vqa_v2) + "\n\n" + json.dumps(plain) + "\n", encoding="utf-8")
    first, second = lave.load_vqa_file(path)
    assert first["question_id"] == "7" and first["answers"] == ["blue"] * 10 and first["style"] == "vqa"
    assert first["image_ref"] == str((tmp_path / "img" / "a.png").resolve())
    assert second["question_id"] == "x" and second["answers"] == ["blue"]
    bad = [
        ({"image": "a.png", "answers": ["x"]}, "item 0 .*question is missing"),
        ({"image": "a.png", "question": "Q?", "answers": []}, "item 0 .*answers must be a non-empty list"),
        ({"question": "Q?", "answers": ["x"]}, "item 0 .*no image"),
        ({"image": "a.png", "question": "Q?", "answers": [3]}, "item 0 .*must be a string"),
    ]
    for record, message in bad:
        (tmp_path / "bad.json").write_text(json.dumps({"items": [record]}), encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            lave.load_vqa_file(tmp_path / "bad.json")
    (tmp_path / "dup.json").write_text(json.dumps([plain, plain]), encoding="utf-8")
    with pytest.raises(ValueError, match="item 1 .*repeats"):
        lave.load_vqa_file(tmp_path / "dup.json")


def _docmatix_parquet(path, rows: int = 3):
    """A parquet file in Docmatix's layout: images = list of {bytes, path}, texts = list of {user, assistant, source}."""
    image_type = pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    text_type = pa.list_(pa.struct([("user", pa.string()), ("assistant", pa.string()), ("source", pa.string())]))
    images = [[{"bytes": _png((10 * i, 0, 0)), "path": None}, {"bytes": _png(), "path": None}] for i in range(rows)]
    images[-1] = [{"bytes": b"not an image", "path": None}]
    texts = [[{"user": f"What is the total on page {i}?", "assistant": f"The total is {i}.50.", "source": "PDFA"},
              {"user": "Second question?", "assistant": "Second answer.", "source": "PDFA"}] for i in range(rows)]
    pq.write_table(pa.table({"images": pa.array(images, image_type), "texts": pa.array(texts, text_type)}), path)
    return path


def test_docmatix_layout_and_the_full_suite(tmp_path, monkeypatch):
    parquet = _docmatix_parquet(tmp_path / "test-00000-of-00001.parquet")
    calls = []

    def fake_download(repo_id, filename, revision):
        calls.append((repo_id, filename, revision))
        return str(parquet)

    monkeypatch.setattr(lave, "hf_download", fake_download)
    items = lave.load_docmatix()
    assert calls == [("HuggingFaceM4/Docmatix", "zero-shot-exp/test-00000-of-00001.parquet", None)]
    assert [i["question_id"] for i in items] == ["docmatix-0000", "docmatix-0001", "docmatix-0002"]
    assert items[1]["question"] == "What is the total on page 1?" and items[1]["answers"] == ["The total is 1.50."]
    assert items[1]["image"].getpixel((0, 0)) == (10, 0, 0) and items[1]["pages"] == 2
    assert items[2]["image"] is None and "does not decode" in items[2]["image_error"]

    Image.new("RGB", (8, 8)).save(tmp_path / "b.png")
    (tmp_path / "vqa.json").write_text(json.dumps([{"question_id": "v1", "image": "b.png", "question": "Q?",
                                                    "answers": ["a"]}]), encoding="utf-8")
    ctx = BenchmarkContext(suite="full", sources={"docmatix": str(parquet), "lave": str(tmp_path / "vqa.json")})
    assert [i["source"] for i in lave.load_suite(ctx)] == ["docmatix"] * 3 + ["vqa"]
    ctx.options["lave.docmatix"] = "off"
    assert [i["question_id"] for i in lave.load_suite(ctx)] == ["v1"]
    ctx.sources.pop("lave")
    with pytest.raises(ValueError, match="suite is empty"):
        lave.load_suite(ctx)


def test_parse_answer():
    assert lave.parse_answer("\n  two   circles \nThe image shows...") == "two circles"
    assert lave.parse_answer("") == lave.parse_answer(None) == ""


# --------------------------------------------------------------------------------------------- run

ANSWERS = {
    "How many circles are there?": "two",          # right, but a number word: strict metrics half agree
    "How many squares are in the picture?": "5",   # wrong
    "How many triangles can you see?": "there are four triangles",  # right, phrased: strict metrics miss it
    "How many red circles are there?": "3",        # right, exact
    "How many apples are on the table?": "many",   # the judge's reply has no rating: fallback 2, flagged
    "How many windows does the house have?": "4",  # the judge call fails: unrated
    "Is there a triangle in the picture?": "yes",
}
REPLIES = {
    "two": "The candidate says two, which is the number 2 given by most experts. So rating=3",
    "5": "The experts count 3 squares (not 5), so it is wrong. So rating=1",
    "there are four triangles": "It says four, matching the 4 of the references. So rating=3",
    "3": "Matches. So rating=3",
    "many": "The answer is vague.",
    "4": "fail",
    "yes": "Yes is correct. So rating=3",
}


def test_run_scores_every_answer_five_ways_and_flags_what_it_could_not_rate():
    model, judge = ScriptedModel(ANSWERS), ScriptedJudge(REPLIES)
    ctx = _ctx(limit=7)
    ctx.judge = judge
    res = lave.run(model, ctx)
    rows = {r["question"]: r for r in res.details}
    assert len(res.details) == 7 and [len(c) for c in model.calls] == [2, 2, 2, 1]  # batch size 2
    assert res.counts == {"items": 7, "answered": 7, "rated": 6, "unrated": 1, "rating_fallback": 1,
                          "image_unavailable": 0}
    # LAVE: ratings 3, 1, 3, 3, 2 (fallback), 3 -> scores 1, 0, 1, 1, 0.5, 1; the failed call is left out
    assert res.scores["lave"] == pytest.approx(4.5 / 6)
    assert res.extra["ratings"] == {"1": 1, "2": 1, "3": 4}
    mumble = rows["How many apples are on the table?"]
    assert mumble["rating_fallback"] and mumble["rating"] == 2.0 and mumble["lave"] == 0.5
    failed = rows["How many windows does the house have?"]
    assert math.isnan(failed["lave"]) and failed["judge_error"] == "HTTP 503 after 4 attempts"
    assert not math.isnan(failed["vqa_accuracy"])  # the string metrics still score the answer
    two = rows["How many circles are there?"]
    assert two["judge_rationale"] == "The candidate says two, which is the number 2 given by most experts."
    assert two["rating"] == 3.0 and two["correct"] and two["lave"] == 1.0
    answers = json.loads(two["gold"])
    assert two["vqa_accuracy"] == vqa_accuracy("two", answers) and two["anls"] == anls("two", answers)
    assert two["exact_match"] == exact_match("two", answers) == 1.0
    phrased = rows["How many triangles can you see?"]
    assert phrased["vqa_accuracy"] == 0.0 and phrased["exact_match"] == 0.0 and phrased["lave"] == 1.0
    # means of the per-item string metrics over all answered items
    for metric in ("vqa_accuracy", "anls", "exact_match"):
        assert res.scores[metric] == pytest.approx(sum(r[metric] for r in res.details) / 7)
    assert set(res.scores) == {"lave", "vqa_accuracy", "anls", "exact_match", "bleu4", "cider"}
    assert res.scores["cider"] >= 0 and 0 <= res.scores["bleu4"] <= 1
    # agreement with each string metric, over items with a LAVE score
    agree = res.extra["agreement"]
    assert set(agree) == set(lave.STRING_METRICS)
    assert agree["exact_match"]["n"] == 6
    # LAVE correct (rating 3): circles, triangles, red circles, yes; exact match: two, 3, yes (and not 5, many)
    assert agree["exact_match"]["agreement"] == pytest.approx(5 / 6)
    assert -1 <= agree["vqa_accuracy"]["spearman"] <= 1
    # what the judge saw: the binary demonstrations for the yes/no question, the general ones otherwise
    yes_prompt = next(p for p in judge.prompts if "Is there a triangle" in p)
    count_prompt = next(p for p in judge.prompts if "How many circles" in p)
    binary, general = lave.load_lave_prompts().binary_demos[0], lave.load_lave_prompts().demos[0]
    assert binary["question"] in yes_prompt and general["question"] not in yes_prompt
    assert general["question"] in count_prompt
    assert two["judge_prompt"] == count_prompt and two["judge_prompt"].endswith("Candidate answer: 'two'\nOutput:")
    # and the results name the judge, the rating rule and every prompt for hashing
    assert res.extra["judge"] == ScriptedJudge.identity and "rating_fallback" in res.extra["rating_rule"]
    assert set(res.prompts) == {"lave_answer", "lave_task", "lave_demos", "lave_demos_binary"}
    assert set(res.details[0]) == set(lave.DETAIL_COLUMNS)


def test_an_unreadable_image_is_counted_and_left_out(tmp_path):
    Image.new("RGB", (8, 8)).save(tmp_path / "ok.png")
    items = [{"question_id": "a", "image": "ok.png", "question": "How many circles are there?", "answers": ["2"]},
             {"question_id": "b", "image": "missing.png", "question": "Is there a triangle in the picture?",
              "answers": ["yes"]}]
    (tmp_path / "s.json").write_text(json.dumps(items), encoding="utf-8")
    ctx = _ctx()
    ctx.sources["lave_sample"] = str(tmp_path / "s.json")
    ctx.images_dir = tmp_path / "cache"
    ctx.judge = ScriptedJudge(REPLIES)
    res = lave.run(ScriptedModel(ANSWERS), ctx)
    assert res.counts["image_unavailable"] == 1 and res.counts["answered"] == 1
    missing = next(r for r in res.details if r["question_id"] == "b")
    assert missing["status"] == "image_unavailable" and missing["error"] and missing["prediction"] == ""
    assert res.scores["lave"] == 1.0 and res.scores["exact_match"] == 1.0


def test_a_tiny_vlm_answers_through_the_real_adapter(tiny_llava, one_torch_thread):
    """Real generation (random weights): every item gets an answer row, the prompt as sent, and all five scores."""
    judge = ScriptedJudge({})
    ctx = _ctx(limit=4, max_new_tokens=4)
    ctx.judge = judge
    from evaluator.models import load_model

    res = lave.run(load_model(tiny_llava.repo_id, revision=tiny_llava.sha, batch_size=2), ctx)
    assert res.counts["answered"] == 4 and res.counts["rated"] == 4
    for row in res.details:
        assert "<image>" in row["prompt"] and row["question"] in row["prompt"]
        assert all(not math.isnan(row[m]) for m in ("vqa_accuracy", "anls", "exact_match", "bleu4", "cider"))
    assert res.scores["lave"] == 0.0  # the scripted judge rates every unknown candidate 1


def test_a_local_judge_rates_through_the_same_interface(tiny_llava, tiny_llama, one_torch_thread):
    """LAVE with `local:<model>` as the judge: a real transformers judge (random weights, so its replies rarely hold
    a rating) runs through the same interface; every item ends rated, with the fallback counted and flagged."""
    from evaluator.judge import make_judge, parse_lave_rating
    from evaluator.models import load_model

    ctx = _ctx(limit=2, max_new_tokens=3, judge_max_tokens=8)
    ctx.judge = make_judge(f"local:{tiny_llama.repo_id}@{tiny_llama.sha}")
    res = lave.run(load_model(tiny_llava.repo_id, revision=tiny_llava.sha, batch_size=2), ctx)
    assert res.counts["rated"] == 2 and res.counts["unrated"] == 0
    assert res.extra["judge"]["kind"] == "local" and res.extra["judge"]["model"] == tiny_llama.repo_id
    for row in res.details:
        assert row["judge_prompt"].endswith("Output:") and row["rating"] in (1.0, 2.0, 3.0)
        assert row["rating_fallback"] == (parse_lave_rating(row["judge_raw"]) is None)
