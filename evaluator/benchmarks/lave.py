"""LAVE (arXiv 2310.02567): free-form VQA answers rated by an LLM judge, beside the strict string metrics.

The model answers each question about its image freely (greedy, our short-answer instruction in
evaluator/prompts/lave_answer.txt). The answer is the first non-empty line of the reply, whitespace collapsed.
Every answer is then scored five ways on the same text:
- LAVE: the judge (ctx.judge; required) rates it 1-3 from the prompt built by lave_rater.build_lave_prompt (our task
  text and demonstrations; the yes/no switch; the 25% reference filter; sorted, quoted references). The rating is
  the last 1/2/3 of the reply (evaluator.judge.parse_lave_rating). A reply without one gets 2, the paper's rule,
  and the row is flagged (rating_fallback). A judge call that fails leaves the item unrated (NaN, counted), never
  scored. Item score = (r - 1) / 2; LAVE = the mean over rated items.
- VQA accuracy, ANLS, exact match (evaluator.metrics.vqa), per item and averaged;
- BLEU-4 and CIDEr with pycocoevalcap on the raw strings (evaluator.metrics.captions): corpus values over all
  answered items, and each item's sentence BLEU-4 and CIDEr in its details row.
The results also give, for each string metric, how far it agrees with LAVE (evaluator.metrics.lave_agreement:
share of items where both call the answer correct or both not, and the Spearman correlation of the per-item
scores), so the board can show how much strict metrics miss.

Data (load_vqa_file): JSON ({"items" | "data" | "questions": [...]} or a list) or JSON lines; each item has a
question_id, an image (a path relative to the file, an http(s) URL or an hf://datasets/... reference), a question and
answers (a list of strings, VQA v2's list of {"answer": ...}, or one string); optional "kind" and "style".
- sample suite: evaluator/data/lave_sample.json (30 items of ours, images drawn by draw_lave_sample.py);
- full suite: the Docmatix zero-shot study's test split (HuggingFaceM4/Docmatix, config zero-shot-exp, 200 rows;
  load_docmatix: each row's first question-answer pair and first page image), plus a VQA v2-style file when
  ctx.sources["lave"] names one (LEADERBOARD_LAVE_VQA). ctx.sources["docmatix"] may point at another copy of the
  Docmatix parquet file (a path or hf:// reference); option lave.docmatix=off leaves Docmatix out.
An item whose image cannot be read gets status "image_unavailable", is counted, and stays out of every score.
"""
from __future__ import annotations

import io
import json
import math
from collections import Counter
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from evaluator.benchmarks.base import BenchmarkContext, BenchmarkResult, int_option, nan_mean, prompt_as_sent
from evaluator.benchmarks.lave_rater import (build_lave_prompt, lave_messages, load_lave_prompts, prompt_texts,
                                             split_lave_reply)
from evaluator.images import ImageUnavailable, fetch_image_ref, is_url
from evaluator.metrics.captions import caption_item_scores, caption_scores
from evaluator.metrics.lave import lave_agreement, lave_score
from evaluator.metrics.vqa import anls, exact_match, vqa_accuracy
from evaluator.models.base import GenerationRequest
from evaluator.sources import hf_download, json_records, parse_hf, read_source

NAME = "lave"
NEEDS_IMAGES = True
NEEDS_JUDGE = True

SAMPLE_PATH = Path(__file__).resolve().parent.parent / "data" / "lave_sample.json"
ANSWER_PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "lave_answer.txt"
DOCMATIX = "hf://datasets/HuggingFaceM4/Docmatix/zero-shot-exp/test-00000-of-00001.parquet"
DEFAULT_MAX_NEW_TOKENS = 32
NO_JUDGE_MESSAGE = "LAVE needs a judge: set LEADERBOARD_JUDGE / --judge"

STRING_METRICS = ("vqa_accuracy", "anls", "exact_match", "bleu4", "cider")
# An item counts as correct for a string metric at or above this score (CIDEr is not bounded by 1).
AGREEMENT_THRESHOLDS = {"vqa_accuracy": 0.5, "anls": 0.5, "exact_match": 0.5, "bleu4": 0.5, "cider": 1.0}
RATING_RULE = ("the last standalone 1/2/3 of the judge reply (evaluator.judge.parse_lave_rating); none -> 2 and the "
               "row flagged rating_fallback (the paper's rule); a failed judge call -> unrated, left out of LAVE")

DETAIL_COLUMNS = (
    "benchmark", "question_id", "source", "kind", "style", "status", "error", "question", "prompt", "prediction",
    "parsed_answer", "gold", "rating", "lave", "rating_fallback", "correct", "score", "vqa_accuracy", "anls",
    "exact_match", "bleu4", "cider", "judge_prompt", "judge_rationale", "judge_raw", "judge_error", "extraction",
)


# --------------------------------------------------------------------------------------------- loading

def _answers(value) -> list[str]:
    """Reference answers from a list of strings, a list of {"answer": str} (VQA v2) or one string."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ValueError("answers must be a non-empty list")
    out = []
    for a in value:
        if isinstance(a, dict):
            a = a.get("answer")
        if not isinstance(a, str):
            raise ValueError("every answer must be a string (or {\"answer\": string})")
        out.append(a)
    if not any(a.strip() for a in out):
        raise ValueError("every answer is empty")
    return out


def load_vqa_file(source: str | Path, label: str = "vqa") -> list[dict]:
    """Items {question_id, question, answers, image_ref, image (None: read at run time), kind, style, source}.

    Raises ValueError naming the index of a malformed item, or a repeated question_id.
    """
    source = str(source)
    text, resolve = read_source(source, "LAVE data", download=lambda *args: hf_download(*args))
    items, seen = [], set()
    for i, rec in enumerate(json_records(text, source, ("items", "data", "questions"))):
        try:
            if not isinstance(rec, dict):
                raise ValueError("not an object")
            question = rec.get("question")
            if not isinstance(question, str) or not question.strip():
                raise ValueError("question is missing or empty")
            answers = _answers(rec.get("answers", rec.get("answer")))
            ref = rec.get("image")
            if not isinstance(ref, str) or not ref.strip():
                raise ValueError("no image (a path, URL or hf:// reference in 'image')")
            ref = ref.strip()
            if not (is_url(ref) or ref.startswith("hf://") or Path(ref).is_absolute()):
                ref = resolve(ref)
            qid = next((str(rec[k]) for k in ("question_id", "id") if rec.get(k) not in (None, "")), f"{label}-{i:05d}")
            if qid in seen:
                raise ValueError(f"question_id {qid!r} repeats an earlier item")
            seen.add(qid)
        except ValueError as exc:
            raise ValueError(f"LAVE item {i} of {source}: {exc}") from None
        items.append({"question_id": qid, "question": question.strip(), "answers": answers, "image_ref": ref,
                      "image": None, "kind": str(rec.get("kind") or ""), "style": str(rec.get("style") or "vqa"),
                      "source": label})
    return items


def _decode(image: object) -> Image.Image:
    if isinstance(image, dict):
        image = image.get("bytes")
    if not isinstance(image, (bytes, bytearray)):
        raise ValueError("no image bytes")
    try:
        with Image.open(io.BytesIO(image)) as img:
            img.load()
            return img.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"image does not decode ({type(exc).__name__})") from None


def load_docmatix(location: str = DOCMATIX) -> list[dict]:
    """The Docmatix zero-shot test rows (a parquet file: images = list of {bytes, path}; texts = list of {user,
    assistant, source}), one item per row: its first question-answer pair and its first page image.

    `location` is an hf:// reference (downloaded through the Hub cache) or a local path. A row without a usable
    image keeps the decode error and is reported image_unavailable at run time. The layout is the one the Docmatix
    authors declared when they pushed this config (features images = Sequence(Image), texts = [{user, assistant,
    source}]), which parquet stores as list<struct<bytes, path>> and list<struct<user, assistant, source>>.
    """
    import pyarrow.parquet as pq

    path = location
    if location.startswith("hf://"):
        repo_id, revision, filename = parse_hf(location)
        path = hf_download(repo_id, filename, revision)
    table = pq.read_table(path, columns=["images", "texts"])
    items = []
    for i, row in enumerate(table.to_pylist()):
        texts = row.get("texts") or []
        first = texts[0] if texts and isinstance(texts[0], dict) else {}
        question, answer = first.get("user"), first.get("assistant")
        if not isinstance(question, str) or not question.strip() or not isinstance(answer, str) or not answer.strip():
            raise ValueError(f"Docmatix row {i} of {location}: no first question-answer pair in 'texts'")
        pages = row.get("images") or []
        image, error = None, ""
        try:
            image = _decode(pages[0] if pages else None)
        except ValueError as exc:
            error = str(exc)
        items.append({"question_id": f"docmatix-{i:04d}", "question": question.strip(), "answers": [answer.strip()],
                      "image_ref": f"{location}#row={i}", "image": image, "image_error": error,
                      "kind": "document", "style": "doc", "source": "docmatix", "pages": len(pages)})
    return items


def load_suite(ctx: BenchmarkContext) -> list[dict]:
    """The items of ctx.suite: our sample file, or Docmatix (unless lave.docmatix=off) plus the VQA file if set."""
    if ctx.suite == "sample":
        return load_vqa_file(ctx.sources.get("lave_sample") or SAMPLE_PATH, "sample")
    items: list[dict] = []
    if str(ctx.options.get("lave.docmatix", "on")).strip().lower() not in ("off", "false", "0", "no"):
        items.extend(load_docmatix(ctx.sources.get("docmatix") or DOCMATIX))
    if ctx.sources.get(NAME):
        items.extend(load_vqa_file(ctx.sources[NAME], "vqa"))
    if not items:
        raise ValueError("the full LAVE suite is empty: Docmatix is off and no VQA file is set (LEADERBOARD_LAVE_VQA)")
    ids = Counter(item["question_id"] for item in items)
    repeated = [qid for qid, n in ids.items() if n > 1]
    if repeated:
        raise ValueError(f"LAVE question ids repeat across the suite's files: {repeated[:5]}")
    return items


def _image(item: dict, ctx: BenchmarkContext) -> Image.Image:
    if item.get("image") is not None:
        return item["image"]
    if item.get("image_error"):
        raise ImageUnavailable(item["image_ref"], item["image_error"])
    return fetch_image_ref(item["image_ref"], Path(ctx.images_dir)).convert("RGB")


# --------------------------------------------------------------------------------------------- answering

def parse_answer(text: str | None) -> str:
    """The scored answer: the first non-empty line of the reply, whitespace collapsed."""
    for line in (text or "").splitlines():
        if line.strip():
            return " ".join(line.split())
    return ""


def _row(item: dict) -> dict:
    """A details row with every column, filled as for an unanswered question."""
    return {
        "benchmark": NAME, "question_id": item["question_id"], "source": item["source"], "kind": item["kind"],
        "style": item["style"], "status": "ok", "error": "", "question": item["question"], "prompt": "",
        "prediction": "", "parsed_answer": "", "gold": json.dumps(item["answers"], ensure_ascii=False),
        "rating": math.nan, "lave": math.nan, "rating_fallback": False, "correct": False, "score": math.nan,
        "vqa_accuracy": math.nan, "anls": math.nan, "exact_match": math.nan, "bleu4": math.nan, "cider": math.nan,
        "judge_prompt": "", "judge_rationale": "", "judge_raw": "", "judge_error": "", "extraction": "judge",
    }


def _rate(judge, prompts, shots: int, jobs: list[tuple[dict, dict]], **generation) -> None:
    """Rate (row, item) pairs with one judge.complete_many call; fills the row's LAVE columns."""
    if not jobs:
        return
    from evaluator.judge import parse_lave_rating  # lazy: the judge module pulls in its backends

    texts = [build_lave_prompt(prompts, item["question"], item["answers"], row["parsed_answer"], shots=shots)
             for row, item in jobs]
    results = judge.complete_many([lave_messages(t) for t in texts], **generation)
    if len(results) != len(jobs):
        raise RuntimeError(f"the judge returned {len(results)} results for {len(jobs)} conversations")
    for (row, _), text, res in zip(jobs, texts, results):
        reply, error = getattr(res, "text", None), getattr(res, "error", None)
        row["judge_prompt"], row["judge_raw"] = text, reply or ""
        if error or reply is None:
            row["judge_error"] = str(error or "empty judge reply")
            continue
        rating = parse_lave_rating(reply)
        if rating is None:
            rating, row["rating_fallback"] = 2, True
        row["rating"] = float(rating)
        row["lave"] = row["score"] = lave_score(rating)
        row["correct"] = rating == 3
        row["judge_rationale"] = split_lave_reply(reply)


def _string_metrics(rows: list[dict]) -> dict[str, float]:
    """Fill each answered row's string metrics; return the BLEU-4 and CIDEr corpus values."""
    for row in rows:
        answers = json.loads(row["gold"])
        row["vqa_accuracy"] = vqa_accuracy(row["parsed_answer"], answers)
        row["anls"] = anls(row["parsed_answer"], answers)
        row["exact_match"] = exact_match(row["parsed_answer"], answers)
    predictions = {row["question_id"]: row["parsed_answer"] for row in rows}
    references = {row["question_id"]: json.loads(row["gold"]) for row in rows}
    per_item = caption_item_scores(predictions, references)
    for row in rows:
        row["bleu4"] = per_item[row["question_id"]]["BLEU-4"]
        row["cider"] = per_item[row["question_id"]]["CIDEr"]
    corpus = caption_scores(predictions, references)
    return {"bleu4": corpus["BLEU-4"], "cider": corpus["CIDEr"]}


def _breakdown(rows: list[dict], key: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for group in sorted({r[key] for r in rows}):
        sub = [r for r in rows if r[key] == group]
        out[group or "(none)"] = {"n": len(sub), "lave": nan_mean([r["lave"] for r in sub]),
                                  **{m: nan_mean([r[m] for r in sub]) for m in ("vqa_accuracy", "anls", "exact_match")}}
    return out


def run(model, ctx: BenchmarkContext) -> BenchmarkResult:
    """Answer every question, rate each answer with the LAVE judge, and score it with the string metrics."""
    judge = getattr(ctx, "judge", None)
    if judge is None:
        raise ValueError(NO_JUDGE_MESSAGE)
    max_new_tokens = int_option(ctx, "lave.max_new_tokens", DEFAULT_MAX_NEW_TOKENS, 1)
    shots = int_option(ctx, "lave.shots", 8, 0)
    generation = {}
    if ctx.options.get("lave.judge_max_tokens"):
        generation["max_tokens"] = int_option(ctx, "lave.judge_max_tokens", 0, 1)
    template = ANSWER_PROMPT.read_text(encoding="utf-8")
    rater = load_lave_prompts()
    items = load_suite(ctx)
    if ctx.limit and ctx.limit > 0:
        items = items[: ctx.limit]

    rows: list[dict] = []
    total = len(items)
    chunk_size = max(1, int(ctx.batch_size or 1))
    ctx.progress(0, total)
    for start in range(0, total, chunk_size):
        requests, jobs = [], []
        for item in items[start: start + chunk_size]:
            row = _row(item)
            rows.append(row)
            try:
                image = _image(item, ctx)
            except ImageUnavailable as exc:
                row.update(status="image_unavailable", error=exc.reason, extraction="")
                continue
            request = GenerationRequest(text=template.replace("{question}", item["question"]).strip(),
                                        images=[image], max_new_tokens=max_new_tokens, temperature=0.0)
            row["prompt"] = prompt_as_sent(model, request)
            requests.append(request)
            jobs.append((row, item))
        outputs = model.generate(requests) if requests else []
        if len(outputs) != len(requests):
            raise RuntimeError(f"the model returned {len(outputs)} completions for {len(requests)} prompts")
        for (row, _), text in zip(jobs, outputs):
            row["prediction"] = text if isinstance(text, str) else ""
            row["parsed_answer"] = parse_answer(row["prediction"])
        _rate(judge, rater, shots, jobs, **generation)
        ctx.progress(min(start + chunk_size, total), total)

    answered = [r for r in rows if r["status"] == "ok"]
    corpus = _string_metrics(answered) if answered else {"bleu4": math.nan, "cider": math.nan}
    rated = [r for r in answered if not math.isnan(r["lave"])]
    scores = {"lave": nan_mean([r["lave"] for r in rated])}
    scores.update({m: nan_mean([r[m] for r in answered]) for m in ("vqa_accuracy", "anls", "exact_match")})
    scores.update(corpus)
    agreement = {m: lave_agreement([r["lave"] for r in answered], [r[m] for r in answered],
                                   AGREEMENT_THRESHOLDS[m]) for m in STRING_METRICS}
    ratings = Counter(int(r["rating"]) for r in rated)
    counts = {
        "items": total,
        "answered": len(answered),
        "rated": len(rated),
        "unrated": len(answered) - len(rated),
        "rating_fallback": sum(1 for r in rated if r["rating_fallback"]),
        "image_unavailable": sum(1 for r in rows if r["status"] == "image_unavailable"),
    }
    extra = {
        "agreement": agreement,
        "ratings": {str(k): ratings.get(k, 0) for k in (1, 2, 3)},
        "by_kind": _breakdown(answered, "kind"),
        "by_source": _breakdown(answered, "source"),
        "judge": dict(getattr(judge, "identity", {}) or {}),
        "rating_rule": RATING_RULE,
        "agreement_thresholds": dict(AGREEMENT_THRESHOLDS),
        "settings": {"suite": ctx.suite, "max_new_tokens": max_new_tokens, "shots": shots,
                     "reference_filter": 0.25, "answer": "first non-empty line of the reply"},
    }
    details = [{k: row[k] for k in DETAIL_COLUMNS} for row in rows]
    return BenchmarkResult(scores=scores, details=details, counts=counts,
                           prompts={"lave_answer": template, **prompt_texts(rater)}, extra=extra)
