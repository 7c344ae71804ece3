"""The LAVE benchmark package: loaders (our sample file, VQA v2-style files, the Docmatix parquet layout), the plan,
scoring (run the way the runner does, with a scripted model and a scripted stand-in for the judge), scoring stored
details again, and a real tiny VLM through the real adapter."""
from __future__ import annotations

import io
import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.lave import CARD, data, planning, scoring
from evaluator.benchmarks.lave.rater import load_lave_prompts
from evaluator.benchmarks.spec import PlanContext, ScoreContext
from evaluator.judge import JudgeResult
from evaluator.metrics import anls, exact_match, vqa_accuracy
from evaluator.runs.details import read_details, write_details
from tests.benchmark_runs import run_benchmark


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
        self.generation: list[dict] = []

    def complete_many(self, conversations, **generation):
        self.generation.append(generation)
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


def _options(**options) -> dict[str, str]:
    return {f"lave.{k}": str(v) for k, v in options.items()}


def _png(color=(200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (20, 12), color).save(buf, format="PNG")
    return buf.getvalue()


# --------------------------------------------------------------------------------------------- loading

def test_registered_and_needs_a_judge(tmp_path):
    assert get_benchmark("lave").CARD is CARD and CARD.needs_judge and CARD.needs_images
    with pytest.raises(ValueError, match="LAVE needs a judge: set LEADERBOARD_JUDGE / --judge"):
        run_benchmark("lave", ScriptedModel({}), limit=1, folder=tmp_path)


def test_sample_suite_loads_with_its_images(tmp_path):
    items = data.load_vqa_file(data.SAMPLE_PATH, "sample")
    assert len(items) == 30 and len({i["question_id"] for i in items}) == 30
    for item in items:
        assert item["answers"] and item["question"].endswith("?")
        img = data.item_image(item, tmp_path)
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
    first, second = data.load_vqa_file(path)
    assert first["question_id"] == "7" and first["answers"] == ["blue"] * 10 and first["style"] == "vqa"
    assert first["image_ref"] == str((tmp_path / "img" / "a.png").resolve())
    assert first["image_shown"] == "img/a.png"  # the reference as the file writes it (the details' image_ref)
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
            data.load_vqa_file(tmp_path / "bad.json")
    (tmp_path / "dup.json").write_text(json.dumps([plain, plain]), encoding="utf-8")
    with pytest.raises(ValueError, match="item 1 .*repeats"):
        data.load_vqa_file(tmp_path / "dup.json")


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

    monkeypatch.setattr(data, "hf_download", fake_download)
    items = data.load_docmatix()
    assert calls == [("HuggingFaceM4/Docmatix", "zero-shot-exp/test-00000-of-00001.parquet", None)]
    assert [i["question_id"] for i in items] == ["docmatix-0000", "docmatix-0001", "docmatix-0002"]
    assert items[1]["question"] == "What is the total on page 1?" and items[1]["answers"] == ["The total is 1.50."]
    assert items[1]["image"].getpixel((0, 0)) == (10, 0, 0) and items[1]["pages"] == 2
    assert items[2]["image"] is None and "does not decode" in items[2]["image_error"]

    Image.new("RGB", (8, 8)).save(tmp_path / "b.png")
    (tmp_path / "vqa.json").write_text(json.dumps([{"question_id": "v1", "image": "b.png", "question": "Q?",
                                                    "answers": ["a"]}]), encoding="utf-8")
    ctx = PlanContext(suite="full", sources={"lave.docmatix": str(parquet), "lave": str(tmp_path / "vqa.json")})
    assert [i["source"] for i in data.load_suite(ctx)] == ["docmatix"] * 3 + ["vqa"]
    ctx.options["lave.docmatix"] = "off"
    assert [i["question_id"] for i in data.load_suite(ctx)] == ["v1"]
    ctx.options["lave.docmatix"] = "maybe"
    with pytest.raises(ValueError, match="lave.docmatix must be 'on' or 'off'"):
        data.load_suite(ctx)
    ctx.options["lave.docmatix"] = "off"
    ctx.sources.pop("lave")
    with pytest.raises(ValueError, match="suite is empty"):
        data.load_suite(ctx)


def test_a_docmatix_page_that_does_not_decode_is_unavailable(tmp_path):
    """The full suite through plan, executor and score: the undecodable page is counted, the others answered."""
    parquet = _docmatix_parquet(tmp_path / "docmatix.parquet")
    model = ScriptedModel({"page 0": "The total is 0.50.", "page 1": "1.50"})
    res = run_benchmark("lave", model, suite="full", sources={"lave.docmatix": str(parquet)}, judge=ScriptedJudge({}),
                        folder=tmp_path / "run")
    assert res.counts["items"] == 3 and res.counts["answered"] == 2 and res.counts["image_unavailable"] == 1
    broken = res.rows[2]
    assert broken["status"] == "image_unavailable" and "does not decode" in broken["error"]
    assert broken["extraction"] == "" and broken["prompt"] == "" and math.isnan(broken["lave"])
    assert res.rows[0]["image_ref"] == f"{parquet}#row=0" and res.rows[0]["exact_match"] == 1.0
    assert set(res.extra["by_source"]) == {"docmatix"} and res.extra["by_kind"]["document"]["n"] == 2


def test_parse_answer():
    assert scoring.parse_answer("\n  two   circles \nThe image shows...") == "two circles"
    assert scoring.parse_answer("") == scoring.parse_answer(None) == ""


def test_the_plan_asks_once_per_item_in_order(tmp_path):
    plan = planning.plan(PlanContext(limit=3, images_dir=tmp_path, options=_options(max_new_tokens=5)))
    assert plan.items == ["lave-01", "lave-02", "lave-03"] and [a.item for a in plan.asks] == plan.items
    assert [r["question_id"] for r in plan.rows] == plan.items and set(plan.prompts) == {"lave_answer"}
    for ask, row in zip(plan.asks, plan.rows):
        assert ask.rows == [row] and ask.options is None and ask.request.images == []
        assert ask.request.max_new_tokens == 5 and ask.request.temperature == 0.0
        assert row["question"] in ask.request.text and "{question}" not in ask.request.text
        assert list(row) == list(planning.DETAIL_COLUMNS)
        assert row["image_ref"].startswith("lave_sample/")
        (image,) = ask.images()
        assert image.mode == "RGB"
    assert plan.prompts["lave_answer"] == planning.answer_template()


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


def test_run_scores_every_answer_five_ways_and_flags_what_it_could_not_rate(tmp_path):
    model, judge = ScriptedModel(ANSWERS), ScriptedJudge(REPLIES)
    res = run_benchmark("lave", model, limit=7, judge=judge, batch_size=2, folder=tmp_path)
    rows = {r["question"]: r for r in res.rows}
    assert len(res.rows) == 7 and [len(c) for c in model.calls] == [2, 2, 2, 1]  # batch size 2
    assert res.counts == {"items": 7, "scored": 6, "answered": 7, "rated": 6, "unrated": 1, "rating_fallback": 1,
                          "no_rationale": 0, "vqa_accuracy_items": 7, "image_unavailable": 0}
    # scored: the rated answers, those LAVE is the mean of; vqa_accuracy_items: those with 10 answers
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
        assert res.scores[metric] == pytest.approx(sum(r[metric] for r in res.rows) / 7)
    assert set(res.scores) == {"lave", "vqa_accuracy", "anls", "exact_match", "bleu4", "cider"}
    assert res.scores["cider"] >= 0 and 0 <= res.scores["bleu4"] <= 1
    # agreement with each string metric, over items with a LAVE score
    agree = res.extra["agreement"]
    assert set(agree) == set(scoring.STRING_METRICS)
    assert agree["exact_match"]["n"] == 6
    # LAVE correct (rating 3): circles, triangles, red circles, yes; exact match: two, 3, yes (and not 5, many)
    assert agree["exact_match"]["agreement"] == pytest.approx(5 / 6)
    assert -1 <= agree["vqa_accuracy"]["spearman"] <= 1
    # what the judge saw: the binary demonstrations for the yes/no question, the general ones otherwise
    yes_prompt = next(p for p in judge.prompts if "Is there a triangle" in p)
    count_prompt = next(p for p in judge.prompts if "How many circles" in p)
    binary, general = load_lave_prompts().binary_demos[0], load_lave_prompts().demos[0]
    assert binary["question"] in yes_prompt and general["question"] not in yes_prompt
    assert general["question"] in count_prompt
    assert two["judge_prompt"] == count_prompt and two["judge_prompt"].endswith("Candidate answer: 'two'\nOutput:")
    assert judge.generation == [{}]  # no lave.judge_max_tokens: the judge's own default
    # and the results name the judge, the rating rule and every prompt for hashing
    assert res.extra["judge"] == ScriptedJudge.identity and "rating_fallback" in res.extra["rating_rule"]
    assert set(res.prompts) == {"lave_answer", "lave_task", "lave_demos", "lave_demos_binary"}
    assert set(res.rows[0]) == set(planning.DETAIL_COLUMNS)
    assert res.extra["settings"] == {"suite": "sample", "max_new_tokens": 32, "shots": 8, "reference_filter": 0.25,
                                     "answer": "first non-empty line of the reply"}


def test_judge_options_reach_the_judge(tmp_path):
    judge = ScriptedJudge(REPLIES)
    res = run_benchmark("lave", ScriptedModel(ANSWERS), limit=2, judge=judge, folder=tmp_path,
                        options=_options(shots=1, judge_max_tokens=12))
    assert judge.generation == [{"max_tokens": 12}]
    assert all(p.count("Candidate answer: ") == 2 for p in judge.prompts)  # 1 demonstration, then the item
    assert res.extra["settings"]["shots"] == 1


def test_an_unreadable_image_is_counted_and_left_out(tmp_path):
    Image.new("RGB", (8, 8)).save(tmp_path / "ok.png")
    items = [{"question_id": "a", "image": "ok.png", "question": "How many circles are there?", "answers": ["2"]},
             {"question_id": "b", "image": "missing.png", "question": "Is there a triangle in the picture?",
              "answers": ["yes"]}]
    (tmp_path / "s.json").write_text(json.dumps(items), encoding="utf-8")
    res = run_benchmark("lave", ScriptedModel(ANSWERS), suite="full", options=_options(docmatix="off"),
                        sources={"lave": str(tmp_path / "s.json")}, images_dir=tmp_path / "cache",
                        judge=ScriptedJudge(REPLIES), folder=tmp_path / "run")
    assert res.counts["image_unavailable"] == 1 and res.counts["answered"] == 1
    missing = next(r for r in res.rows if r["question_id"] == "b")
    assert missing["status"] == "image_unavailable" and missing["error"] and missing["prediction"] == ""
    assert missing["extraction"] == "" and missing["judge_prompt"] == "" and math.isnan(missing["rating"])
    assert missing["image_ref"] == "missing.png"
    assert res.scores["lave"] == 1.0 and res.scores["exact_match"] == 1.0


def test_scoring_stored_details_again_gives_the_same_result(tmp_path):
    """What rescore does: score a stored, scored details file again with the same judge; nothing moves."""
    res = run_benchmark("lave", ScriptedModel(ANSWERS), limit=7, judge=ScriptedJudge(REPLIES), folder=tmp_path)
    path = tmp_path / "scored.parquet"
    write_details(path, res.rows)
    stored = read_details(path)
    again = scoring.score(read_details(path), ScoreContext(judge=ScriptedJudge(REPLIES)))
    assert again.scores == res.scores and again.counts == res.counts
    assert json.dumps(again.extra, sort_keys=True) == json.dumps(res.extra, sort_keys=True)
    assert json.dumps(again.rows, sort_keys=True) == json.dumps(stored, sort_keys=True)
    assert again.prompts == {k: v for k, v in res.prompts.items() if k != "lave_answer"}

    # another judge replaces every grade, rationale and judged score (the answers stay)
    generous = scoring.score(read_details(path), ScoreContext(judge=ScriptedJudge({a: "Fine. So rating=3"
                                                                                   for a in ANSWERS.values()})))
    assert generous.scores["lave"] == 1.0 and generous.counts["unrated"] == 0
    assert generous.counts["rating_fallback"] == 0 and not any(r["judge_error"] for r in generous.rows)
    assert [r["parsed_answer"] for r in generous.rows] == [r["parsed_answer"] for r in stored]
    assert generous.scores["exact_match"] == res.scores["exact_match"]


def test_a_tiny_vlm_answers_through_the_real_adapter(tiny_llava, one_torch_thread, tmp_path):
    """Real generation (random weights): every item gets an answer row, the prompt as sent, and all five scores."""
    from evaluator.models import load_model

    model = load_model(tiny_llava.repo_id, revision=tiny_llava.sha, batch_size=2)
    res = run_benchmark("lave", model, limit=4, options=_options(max_new_tokens=4), judge=ScriptedJudge({}),
                        batch_size=2, folder=tmp_path)
    assert res.counts["answered"] == 4 and res.counts["rated"] == 4
    for row in res.rows:
        assert "<image>" in row["prompt"] and row["question"] in row["prompt"]
        assert all(not math.isnan(row[m]) for m in ("vqa_accuracy", "anls", "exact_match", "bleu4", "cider"))
    assert res.scores["lave"] == 0.0  # the scripted judge rates every unknown candidate 1


def test_a_local_judge_rates_through_the_same_interface(tiny_llava, tiny_llama, one_torch_thread, tmp_path):
    """LAVE with `local:<model>` as the judge: a real transformers judge (random weights, so its replies rarely hold
    a rating) runs through the same interface; every item ends rated, with the fallback counted and flagged."""
    from evaluator.judge import make_judge, parse_lave_rating
    from evaluator.models import load_model

    judge = make_judge(f"local:{tiny_llama.repo_id}@{tiny_llama.sha}")
    model = load_model(tiny_llava.repo_id, revision=tiny_llava.sha, batch_size=2)
    res = run_benchmark("lave", model, limit=2, options=_options(max_new_tokens=3, judge_max_tokens=8), judge=judge,
                        batch_size=2, folder=tmp_path)
    assert res.counts["rated"] == 2 and res.counts["unrated"] == 0
    assert res.extra["judge"]["kind"] == "local" and res.extra["judge"]["model"] == tiny_llama.repo_id
    for row in res.rows:
        assert row["judge_prompt"].endswith("Output:") and row["rating"] in (1.0, 2.0, 3.0)
        assert row["rating_fallback"] == (parse_lave_rating(row["judge_raw"]) is None)
