"""CURE: chain-of-thought visual reasoning and its consistency (arXiv 2309.04461).

Each instance has an image, a region (the first bbox), six candidate inferences about that region (one right),
and a chain of 2-4 sub-questions that lead to it, each with six candidates. Every question is multiple choice.
The metrics (Rh, Rcot, Ro, Cf, Cb) live in evaluator.metrics.cure; see BENCHMARKS.md for the rules.

The marked region. The data has no high-level question text, only a box. We *draw* the first box as a thick red
rectangle on the full image rather than cropping to it: the inferences are about the region in its context
(who is holding the fruit, what the weather is), which a crop would cut away. The box is scaled when the fetched
image's size differs from the size recorded in the data, and drawn just outside the region so it hides nothing.

Two answering modes, chosen by ctx.options["cure.mode"]:
- "likelihood" (default): the prompt does not list the candidates; each candidate is scored as the reply with
  model.score_options; the choice is the argmax of the per-token mean log-likelihood (length-normalised, since
  candidates are sentences of different lengths). The argmax of the summed log-likelihood is kept as `choice_sum`.
- "generation": the candidates are listed as "(A) ...", the model is asked for the letter, and the answer is the
  first "(X)" mark or standalone letter (extract_letter). No letter: wrong, and counted as unparsed.

An instance whose image cannot be fetched is never dropped silently: its rows say status "image_unavailable"
with the reason, it is counted, and it is left out of the scores.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from urllib.parse import urljoin

from PIL import Image

from evaluator.benchmarks.base import BenchmarkContext, BenchmarkResult
from evaluator.benchmarks.base import argmax as _argmax
from evaluator.images import ImageUnavailable, fetch_image_ref, is_url, mark_box
from evaluator.metrics.cure import cure_by_chain_length, cure_scores, cure_step_accuracy
from evaluator.models.base import GenerationRequest
from evaluator.sources import hf_download as _hf_download
from evaluator.sources import http_text
from evaluator.sources import parse_hf as _parse_hf

NAME = "cure"
NEEDS_IMAGES = True

N_OPTIONS = 6
LETTERS = "ABCDEF"
MODES = ("likelihood", "generation")
SAMPLE_PATH = Path(__file__).resolve().parent.parent / "data" / "cure_sample.json"
PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
PROMPT_FILES = ("cure_high", "cure_step", "cure_choices", "cure_reply")
GENERATION_MAX_NEW_TOKENS = 16
CHOICE_RULES = {
    "likelihood": "argmax of per-token mean log-likelihood over the 6 candidates (choice_sum: argmax of the sum)",
    "generation": "first (X) mark or standalone letter A-F in the reply; none = wrong (unparsed)",
}


# --------------------------------------------------------------------------------------------- loading

def load_instances(source: str | Path) -> list[dict]:
    """Read and validate CURE instances from a local path, an http(s) URL or hf://datasets/<org>/<name>/<file>.

    Accepts the official file (one JSON array despite its .jsonl name) and real JSON Lines. Each returned dict is
    the instance as in the file plus "question_id" (its "id" field when present, else "cure-0007" from its index),
    "chain_length", and "image_ref": where to fetch its image, with a relative image.url resolved against the
    data file's location (a local path, a URL, or an hf:// reference into the same dataset repo).
    Raises ValueError naming the index of a malformed instance.
    """
    source = str(source)
    if source.startswith("hf://"):
        repo_id, revision, filename = _parse_hf(source)
        local = _hf_download(repo_id, filename, revision)
        text = Path(local).read_text(encoding="utf-8")
        folder = filename.rsplit("/", 1)[0] + "/" if "/" in filename else ""
        at = f"@{revision}" if revision else ""

        def resolve(ref: str) -> str:
            return f"hf://datasets/{repo_id}{at}/{folder}{ref}"
    elif is_url(source):
        text = http_text(source, "CURE data", timeout=60)

        def resolve(ref: str) -> str:
            return urljoin(source, ref)
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"CURE data not found: {path}")
        text = path.read_text(encoding="utf-8")

        def resolve(ref: str) -> str:
            return str((path.parent / ref).resolve())

    raw = parse_records(text, source)
    instances, seen = [], set()
    for index, record in enumerate(raw):
        inst = validate_instance(record, index)
        if inst["question_id"] in seen:
            raise ValueError(f"CURE instance {index}: duplicate id {inst['question_id']!r}")
        seen.add(inst["question_id"])
        ref = inst["image"]["url"]
        inst["image_ref"] = ref if is_url(ref) or ref.startswith("hf://") or Path(ref).is_absolute() else resolve(ref)
        instances.append(inst)
    return instances


def parse_records(text: str, source: str = "<text>") -> list:
    """One JSON array, or one JSON object per line."""
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: not valid JSON ({exc})") from None
        return data
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{source}: line {lineno} is not valid JSON ({exc})") from None
    return records


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_choice(block, where: str) -> None:
    if not isinstance(block, dict):
        raise ValueError(f"{where} is not an object")
    cands = block.get("candidate")
    if not isinstance(cands, list) or len(cands) != N_OPTIONS or not all(isinstance(c, str) for c in cands):
        raise ValueError(f"{where}.candidate must be a list of {N_OPTIONS} strings")
    gt = block.get("gt")
    if not _is_int(gt) or not 0 <= gt < N_OPTIONS:
        raise ValueError(f"{where}.gt must be an integer 0..{N_OPTIONS - 1}, got {gt!r}")


def validate_instance(record, index: int) -> dict:
    """Check one instance's fields (BENCHMARKS.md); return a shallow copy with question_id and chain_length."""
    try:
        if not isinstance(record, dict):
            raise ValueError("not an object")
        image = record.get("image")
        if not isinstance(image, dict) or not isinstance(image.get("url"), str) or not image["url"]:
            raise ValueError("image.url is missing")
        for key in ("width", "height"):
            if not _is_number(image.get(key)) or image[key] <= 0:
                raise ValueError(f"image.{key} must be a positive number")
        bboxes = record.get("bboxes")
        if not isinstance(bboxes, list) or not bboxes:
            raise ValueError("bboxes must be a non-empty list")
        for j, box in enumerate(bboxes):
            if not isinstance(box, dict) or not all(_is_number(box.get(k)) for k in ("left", "top", "width", "height")):
                raise ValueError(f"bboxes[{j}] needs numeric left, top, width, height")
        if bboxes[0]["width"] <= 0 or bboxes[0]["height"] <= 0:
            raise ValueError("bboxes[0] has no area")
        if not isinstance(record.get("clue"), str):
            raise ValueError("clue must be a string")
        _check_choice(record.get("inference"), "inference")
        cot = record.get("cot_inference")
        if not isinstance(cot, dict) or not isinstance(cot.get("chain"), list) or not cot["chain"]:
            raise ValueError("cot_inference.chain must be a non-empty list")
        chain = cot["chain"]
        if "total_step" in cot and cot["total_step"] != len(chain):
            raise ValueError(f"cot_inference.total_step is {cot['total_step']!r} but the chain has {len(chain)} steps")
        for k, step in enumerate(chain):
            _check_choice(step, f"cot_inference.chain[{k}]")
            if not isinstance(step.get("question"), str) or not step["question"].strip():
                raise ValueError(f"cot_inference.chain[{k}].question must be a non-empty string")
    except ValueError as exc:
        raise ValueError(f"CURE instance {index}: {exc}") from None
    inst = dict(record)
    qid = record.get("id", record.get("question_id"))
    inst["question_id"] = str(qid) if qid not in (None, "") else f"cure-{index:04d}"
    inst["chain_length"] = len(chain)
    return inst


# --------------------------------------------------------------------------------------------- images

def region_box(bbox: dict, declared_size: tuple[float, float],
               image_size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The bbox in the fetched image's pixels: (x0, y0, x1, y1), x1/y1 exclusive, scaled from the declared size."""
    sx = image_size[0] / declared_size[0]
    sy = image_size[1] / declared_size[1]
    x0 = round(bbox["left"] * sx)
    y0 = round(bbox["top"] * sy)
    x1 = round((bbox["left"] + bbox["width"]) * sx)
    y1 = round((bbox["top"] + bbox["height"]) * sy)
    w, h = image_size
    x0, x1 = max(0, min(x0, w)), max(0, min(x1, w))
    y0, y1 = max(0, min(y0, h)), max(0, min(y1, h))
    return x0, y0, max(x1, x0 + 1), max(y1, y0 + 1)


def line_width(image_size: tuple[int, int]) -> int:
    """A thick line that stays visible after the model's resizing: about 1% of the longer side, at least 3px."""
    return max(3, round(max(image_size) / 100))


def mark_region(image: Image.Image, bbox: dict, declared_size: tuple[float, float]) -> Image.Image:
    """A copy of `image` (RGB) with a thick red rectangle drawn just outside the (scaled) bbox."""
    return mark_box(image, region_box(bbox, declared_size, image.size))


def _fetch(inst: dict, ctx: BenchmarkContext) -> Image.Image:
    return fetch_image_ref(inst["image_ref"], Path(ctx.images_dir), shown=inst["image"]["url"])


# --------------------------------------------------------------------------------------------- prompts

def load_prompts(directory: Path = PROMPTS_DIR) -> dict[str, str]:
    """The CURE prompt templates (our own wording), by name."""
    return {name: (Path(directory) / f"{name}.txt").read_text(encoding="utf-8") for name in PROMPT_FILES}


def build_prompt(prompts: dict[str, str], question: str | None, options: list[str], mode: str) -> str:
    """The text sent with the marked image. `question` None means the high-level question."""
    if mode == "generation":
        listed = "\n".join(f"({LETTERS[i]}) {opt}" for i, opt in enumerate(options))
        answer_format = prompts["cure_choices"].replace("{listed}", listed)
    else:
        answer_format = prompts["cure_reply"]
    template = prompts["cure_high"] if question is None else prompts["cure_step"].replace("{question}", question)
    return template.replace("{answer_format}", answer_format.strip()).strip()


_MARK = re.compile(r"\(([A-Za-z])\)")
_STANDALONE = re.compile(r"(?<![A-Za-z0-9'])([A-Z])(?![A-Za-z0-9'])")
_ARTICLE = re.compile(r"A\s+[a-z]")


def extract_letter(text: str, n: int = N_OPTIONS) -> int | None:
    """Index of the first option mark "(X)" in `text`, else of the first standalone capital letter; None if none.

    Only the first `n` letters count. A capital "A" followed by a lower-case word ("A dog ...") is the article,
    not an answer.
    """
    valid = LETTERS[:n] if n <= len(LETTERS) else "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:n]
    for m in _MARK.finditer(text or ""):
        letter = m.group(1).upper()
        if letter in valid:
            return valid.index(letter)
    for m in _STANDALONE.finditer(text or ""):
        letter = m.group(1)
        if letter not in valid:
            continue
        if letter == "A" and _ARTICLE.match(text, m.start()):
            continue
        return valid.index(letter)
    return None




# --------------------------------------------------------------------------------------------- running

def _questions(inst: dict) -> list[tuple[str, str | None, list[str], int]]:
    """(part, question text or None for the high-level one, candidates, gold) for every question of an instance."""
    qs = [("high", None, inst["inference"]["candidate"], inst["inference"]["gt"])]
    for k, step in enumerate(inst["cot_inference"]["chain"], 1):
        qs.append((f"step{k}", step["question"], step["candidate"], step["gt"]))
    return qs


def _row(inst: dict, part: str, prompt: str, options: list[str], gold: int, mode: str) -> dict:
    """A details row with every column, filled as for an unanswered question."""
    return {
        "benchmark": NAME,
        "question_id": inst["question_id"],
        "part": part,
        "repeat": 0,
        "prompt": prompt,
        "prediction": "",
        "parsed_answer": -1,
        "gold": int(gold),
        "correct": False,
        "score": math.nan,
        "extraction": "likelihood" if mode == "likelihood" else "letter",
        "option_scores": "",
        "choice_sum": -1,
        "status": "ok",
        "error": "",
        "chain_length": int(inst["chain_length"]),
        "options": json.dumps(options, ensure_ascii=False),
        "image_url": inst["image"]["url"],
    }


def _answer_likelihood(model, image: Image.Image, rows: list[dict], options_per_row: list[list[str]]) -> None:
    for row, options in zip(rows, options_per_row):
        scores = model.score_options(GenerationRequest(text=row["prompt"], images=[image]), options)
        choice = _argmax([s.mean_logprob for s in scores])
        row["parsed_answer"] = choice
        row["choice_sum"] = _argmax([s.sum_logprob for s in scores])
        row["prediction"] = options[choice] if choice >= 0 else ""
        row["option_scores"] = json.dumps(
            [{"sum": s.sum_logprob, "mean": s.mean_logprob, "n_tokens": s.n_tokens} for s in scores])


def _answer_generation(model, jobs: list[tuple[Image.Image, dict]], max_new_tokens: int) -> None:
    requests = [GenerationRequest(text=row["prompt"], images=[image], max_new_tokens=max_new_tokens)
                for image, row in jobs]
    outputs = model.generate(requests)
    if len(outputs) != len(requests):
        raise RuntimeError(f"the model returned {len(outputs)} completions for {len(requests)} prompts")
    for (_, row), text in zip(jobs, outputs):
        letter = extract_letter(text, N_OPTIONS)
        row["prediction"] = text
        row["parsed_answer"] = -1 if letter is None else letter


def run(model, ctx: BenchmarkContext) -> BenchmarkResult:
    """Answer every question of every instance; aggregate CURE scores over the instances whose image was fetched."""
    mode = ctx.options.get("cure.mode", "likelihood")
    if mode not in MODES:
        raise ValueError(f"cure.mode must be one of {', '.join(MODES)}, got {mode!r}")
    max_new_tokens = int(ctx.options.get("cure.max_new_tokens", GENERATION_MAX_NEW_TOKENS))
    if ctx.suite == "sample":
        source = SAMPLE_PATH
    else:
        source = ctx.sources.get(NAME)
        if not source:
            raise ValueError("the full CURE suite needs a data location: ctx.sources['cure'] (path, URL or hf://)")
    instances = load_instances(source)
    if ctx.limit and ctx.limit > 0:
        instances = instances[: ctx.limit]
    prompts = load_prompts()

    details: list[dict] = []
    high_correct: list[bool] = []
    chain_correct: list[list[bool]] = []
    high_sum: list[bool] = []
    chain_sum: list[list[bool]] = []
    n_unavailable = 0
    total = len(instances)
    # Generation batches the questions of a few instances into one generate() call; likelihood scores one
    # question at a time anyway, so it goes instance by instance and progress moves smoothly.
    chunk_size = max(1, int(ctx.batch_size or 1)) if mode == "generation" else 1
    done = 0
    for start in range(0, total, chunk_size):
        chunk = instances[start: start + chunk_size]
        prepared = []  # (inst, rows, marked image or None)
        gen_jobs: list[tuple[Image.Image, dict]] = []
        for inst in chunk:
            qs = _questions(inst)
            rows = [_row(inst, part, build_prompt(prompts, q, opts, mode), opts, gold, mode)
                    for part, q, opts, gold in qs]
            try:
                image = _fetch(inst, ctx)
                image = mark_region(image, inst["bboxes"][0], (inst["image"]["width"], inst["image"]["height"]))
            except ImageUnavailable as exc:
                for row in rows:
                    row["status"] = "image_unavailable"
                    row["error"] = exc.reason
                image = None
            if image is not None:
                if mode == "likelihood":
                    _answer_likelihood(model, image, rows, [opts for _, _, opts, _ in qs])
                else:
                    gen_jobs.extend((image, row) for row in rows)
            prepared.append((inst, rows, image))
        if gen_jobs:
            _answer_generation(model, gen_jobs, max_new_tokens)
        for inst, rows, image in prepared:
            if image is None:
                n_unavailable += 1
            else:
                for row in rows:
                    row["correct"] = row["parsed_answer"] == row["gold"]
                    row["score"] = 1.0 if row["correct"] else 0.0
                high_correct.append(rows[0]["correct"])
                chain_correct.append([row["correct"] for row in rows[1:]])
                if mode == "likelihood":
                    high_sum.append(rows[0]["choice_sum"] == rows[0]["gold"])
                    chain_sum.append([row["choice_sum"] == row["gold"] for row in rows[1:]])
            details.extend(rows)
            done += 1
            ctx.progress(done, total)

    scores = cure_scores(high_correct, chain_correct)
    scores["step_accuracy"] = cure_step_accuracy(chain_correct)
    extra: dict = {
        "by_chain_length": {str(k): v for k, v in cure_by_chain_length(high_correct, chain_correct).items()},
        "mode": mode,
        "choice_rule": CHOICE_RULES[mode],
        "region": "first bbox drawn as a thick red rectangle on the full image (not cropped)",
    }
    if mode == "likelihood":
        alt = cure_scores(high_sum, chain_sum)
        alt["step_accuracy"] = cure_step_accuracy(chain_sum)
        extra["scores_sum_rule"] = alt
    scored_rows = [row for row in details if row["status"] == "ok"]
    counts = {
        "items": total,
        "scored": len(high_correct),
        "image_unavailable": n_unavailable,
        "unparsed": sum(1 for row in scored_rows if row["parsed_answer"] < 0) if mode == "generation" else 0,
        "sub_questions": sum(inst["chain_length"] for inst in instances),
    }
    used = ("cure_high", "cure_step", "cure_choices" if mode == "generation" else "cure_reply")
    return BenchmarkResult(scores=scores, details=details, counts=counts,
                           prompts={name: prompts[name] for name in used}, extra=extra)
