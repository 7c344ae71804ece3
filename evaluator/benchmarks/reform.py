"""ReForm-Eval: re-formulated VLM benchmarks in 8 capability dimensions (arXiv 2310.02569).

Data: evaluator.benchmarks.reform_data (the sample suite shipped in evaluator/data, or the Hub files for "full").
Metrics: evaluator.metrics.reform and evaluator.metrics.captions. See BENCHMARKS.md, "ReForm-Eval".

Multiple-choice items are asked in two modes, chosen by ctx.options["reform.mode"] ("both" by default):
- "generation" (black-box): the prompt (one of our instruction templates, evaluator/prompts/reform_gen_templates.txt)
  lists the options after the question as "(A) x; (B) y; ...". A fixed text-only one-shot example turn
  (reform_example.txt, answered "(B)") comes first as an earlier chat turn (GenerationRequest.history), then the
  item's own dialogue history (multi-turn items), then the question. The answer is the FIRST "(X)" mark
  (extract_option); no usable mark is wrong; the format hit rate is the share of outputs with any mark.
- "likelihood" (white-box): the options are not listed (reform_lik_templates.txt); each option text is scored as
  the reply with model.score_options; the choice is the highest summed log-likelihood ("likelihood" rows); the
  highest per-token mean is reported beside it ("likelihood_mean" rows, scores lik_mean_*).

Repeated test: every multiple-choice item is asked N = ctx.options["reform.repeats"] (default 5) times; repeat r
uses template (base + r) mod T (a different template per repeat while N <= T), a shuffled option order and, in
generation, a mark style (ctx.options["reform.marks"]: "random" (default; upper, lower or number drawn per
repeat), "upper", "lower" or "number"). Everything is drawn from a random.Random seeded by (seed, question_id,
repeat), so the same seed gives the same prompts. Generation samples at temperature 0.2 with one sampling seed
per repeat (shared by all items of that repeat, so the adapter can batch them; the sampled text of an item then
also depends on the batch it falls in: the same seed and batch size give the same outputs). Accuracy is the mean over all repeats; instability the mean per-item entropy of the predicted option texts
(an unparsable output enters as its own answer).

OCR, key-information extraction and captioning items are answered once by free generation (greedy) with a short
instruction of ours; they score OCR word accuracy, KIE accuracy and CIDEr (BLEU-4 reported too) per dataset.
These generation-only dimensions enter both the gen_ and the lik_ dimension scores.

Scores: a dataset's score is its accuracy (caption datasets: CIDEr); a dimension's is the mean of its datasets';
gen_overall / lik_overall the mean of the dimension scores. ctx.limit > 0 keeps that many items per dimension.
"""
from __future__ import annotations

import json
import math
import random
import zlib
from pathlib import Path

from evaluator.benchmarks.base import BenchmarkContext, BenchmarkResult, nan_mean, prompt_as_sent
from evaluator.benchmarks.base import argmax as _argmax
from evaluator.benchmarks.reform_data import (CAPTION, DIMENSIONS, KIE, MC, OCR, load_full_suite,
                                              load_sample_suite)
from evaluator.metrics.captions import caption_scores
from evaluator.metrics.reform import (choice_text, extract_option, format_hit_rate, instability, kie_accuracy,
                                      ocr_word_accuracy, reform_accuracy)
from evaluator.models.base import GenerationRequest

NAME = "reform"
NEEDS_IMAGES = True

MODES = ("both", "generation", "likelihood")
MARK_STYLES = ("upper", "lower", "number")
DEFAULT_REPEATS = 5
TEMPERATURE = 0.2
MC_MAX_NEW_TOKENS = 16
FREE_MAX_NEW_TOKENS = 32
PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
PROMPT_FILES = ("reform_gen_templates", "reform_lik_templates", "reform_example", "reform_example_answer",
                "reform_ocr", "reform_kie", "reform_caption")
UNPARSABLE = "<unparsable> "
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# --------------------------------------------------------------------------------------------- prompts

def load_prompts(directory: Path = PROMPTS_DIR) -> dict[str, str]:
    """The ReForm prompt files (our own wording), by name."""
    return {name: (Path(directory) / f"{name}.txt").read_text(encoding="utf-8") for name in PROMPT_FILES}


def split_templates(text: str) -> list[str]:
    """Templates separated by blank lines."""
    return [block.strip() for block in text.strip().split("\n\n") if block.strip()]


def marks(style: str, n: int) -> list[str]:
    """The n option marks of a style: upper "(A)", lower "(a)" or number "(1)"."""
    if style == "upper":
        chars = _UPPER
    elif style == "lower":
        chars = _UPPER.lower()
    elif style == "number":
        chars = "123456789"
    else:
        raise ValueError(f"mark style must be one of {', '.join(MARK_STYLES)}, got {style!r}")
    if n > len(chars):
        raise ValueError(f"{n} options do not fit the {style} mark style")
    return [f"({c})" for c in chars[:n]]


def list_options(options: list[str], style: str) -> str:
    """"(A) x; (B) y; ..." in the given mark style."""
    return "; ".join(f"{m} {opt}" for m, opt in zip(marks(style, len(options)), options))


def repeat_rng(seed: int, question_id: str, repeat: int) -> random.Random:
    return random.Random(f"reform|{seed}|{question_id}|{repeat}")


def repeat_seed(seed: int, repeat: int) -> int:
    """The sampling seed of one repeat, shared by every item (stable across runs and processes).

    One seed per repeat, not per item: the adapter batches requests that share temperature and seed, so per-item
    seeds would run every sampled request alone.
    """
    return zlib.crc32(f"reform|{seed}|{repeat}".encode("utf-8"))


def plan_repeat(question_id: str, options: list[str], repeat: int, n_templates: int, *, seed: int = 0,
                mark_mode: str = "random") -> dict:
    """How repeat `repeat` of an item is asked: template_id, order (indices into the original options), mark_style.

    The template is (base + repeat) mod n_templates with base drawn per item, so the repeats of one item use
    different templates while repeats <= n_templates.
    """
    base = repeat_rng(seed, question_id, -1).randrange(n_templates)
    rng = repeat_rng(seed, question_id, repeat)
    order = list(range(len(options)))
    rng.shuffle(order)
    style = rng.choice(MARK_STYLES) if mark_mode == "random" else mark_mode
    if style not in MARK_STYLES:
        raise ValueError(f"reform.marks must be random or one of {', '.join(MARK_STYLES)}, got {mark_mode!r}")
    return {"template_id": (base + repeat) % n_templates, "order": order, "mark_style": style}


def generation_text(template: str, question: str, options: list[str], style: str) -> str:
    return template.replace("{question}", question.strip()).replace("{options}", list_options(options, style))


def likelihood_text(template: str, question: str) -> str:
    return template.replace("{question}", question.strip())


def dialogue_history(item: dict) -> list[dict]:
    """The item's earlier dialogue turns as chat history [{"role", "content"}]."""
    return [{"role": "assistant" if t.get("from") in ("assistant", "gpt") else "user", "content": t.get("value", "")}
            for t in item.get("history") or []]


def example_history(prompts: dict[str, str]) -> list[dict]:
    """The fixed one-shot format example as two earlier turns (text only)."""
    return [{"role": "user", "content": prompts["reform_example"].strip()},
            {"role": "assistant", "content": prompts["reform_example_answer"].strip()}]


def free_text(prompts: dict[str, str], item: dict) -> str:
    """The instruction for an OCR / KIE / caption item."""
    if item["form"] == CAPTION:
        return prompts["reform_caption"].strip()
    name = "reform_ocr" if item["form"] == OCR else "reform_kie"
    question = item["question"].strip() or "What is written in the image?"
    return prompts[name].replace("{question}", question).strip()


# --------------------------------------------------------------------------------------------- rows

def _row(item: dict, mode: str, repeat: int, prompt: str, extraction: str) -> dict:
    """A details row with every column, filled as for an unanswered question."""
    return {
        "benchmark": NAME,
        "question_id": item["question_id"],
        "dataset": item["dataset"],
        "dimension": item["dimension"],
        "form": item["form"],
        "mode": mode,
        "repeat": int(repeat),
        "prompt": prompt,
        "prediction": "",
        "parsed_answer": "-1",
        "gold": "",
        "correct": False,
        "score": math.nan,
        "extraction": extraction,
        "options": "[]",
        "mark_style": "",
        "template_id": -1,
        "option_scores": "",
    }


def _select(items: list[dict], limit: int) -> list[dict]:
    """At most `limit` items per dimension (all when limit <= 0), in the suite's order."""
    if not limit or limit <= 0:
        return items
    seen: dict[str, int] = {}
    out = []
    for item in items:
        if seen.get(item["dimension"], 0) < limit:
            seen[item["dimension"]] = seen.get(item["dimension"], 0) + 1
            out.append(item)
    return out


# --------------------------------------------------------------------------------------------- scoring

def dataset_scores(rows: list[dict], caption_refs: dict[str, list[str]]) -> dict[str, dict]:
    """Per dataset {"dimension", "form", "score", ...} from scored rows of one mode (MC rows of one extraction)."""
    by_ds: dict[str, list[dict]] = {}
    for row in rows:
        by_ds.setdefault(row["dataset"], []).append(row)
    out = {}
    for ds, ds_rows in by_ds.items():
        form = ds_rows[0]["form"]
        entry = {"dimension": ds_rows[0]["dimension"], "form": form, "rows": len(ds_rows)}
        if form == CAPTION:
            preds = {r["question_id"]: r["prediction"] for r in ds_rows}
            caps = caption_scores(preds, {q: caption_refs[q] for q in preds})
            entry.update({"score": caps["CIDEr"], "CIDEr": caps["CIDEr"], "BLEU-4": caps["BLEU-4"]})
        else:
            entry["score"] = reform_accuracy([r["score"] for r in ds_rows])
        out[ds] = entry
    return out


def dimension_scores(per_dataset: dict[str, dict]) -> dict[str, float]:
    """A dimension's score: the mean of its datasets' scores (NaN datasets skipped)."""
    out = {}
    for dim in DIMENSIONS:
        vals = [d["score"] for d in per_dataset.values() if d["dimension"] == dim and not math.isnan(d["score"])]
        if vals:
            out[dim] = sum(vals) / len(vals)
    return out


def _instability(rows: list[dict]) -> float:
    answers: dict[str, list[str]] = {}
    for row in rows:
        answers.setdefault(row["question_id"], []).append(row["_answer_text"])
    return instability(list(answers.values()))


# --------------------------------------------------------------------------------------------- running

def run(model, ctx: BenchmarkContext) -> BenchmarkResult:
    """Ask every item (MC: N repeats in each mode; free-form: once); aggregate per dataset, dimension and overall."""
    mode = ctx.options.get("reform.mode", "both")
    if mode not in MODES:
        raise ValueError(f"reform.mode must be one of {', '.join(MODES)}, got {mode!r}")
    repeats = int(ctx.options.get("reform.repeats", DEFAULT_REPEATS))
    if repeats < 1:
        raise ValueError(f"reform.repeats must be at least 1, got {repeats}")
    mark_mode = ctx.options.get("reform.marks", "random")
    seed = int(ctx.options.get("reform.seed", 0))
    mc_tokens = int(ctx.options.get("reform.max_new_tokens", MC_MAX_NEW_TOKENS))
    free_tokens = int(ctx.options.get("reform.free_max_new_tokens", FREE_MAX_NEW_TOKENS))
    if ctx.suite == "sample":
        items = load_sample_suite()
    else:
        names = ctx.sources.get(NAME)
        items = load_full_suite([n.strip() for n in names.split(",") if n.strip()] if names else None)
    items = _select(items, ctx.limit)
    prompts = load_prompts()
    gen_templates = split_templates(prompts["reform_gen_templates"])
    lik_templates = split_templates(prompts["reform_lik_templates"])
    example = example_history(prompts)
    do_gen = mode in ("both", "generation")
    do_lik = mode in ("both", "likelihood")

    details: list[dict] = []
    caption_refs = {it["question_id"]: list(it["answer"]) for it in items if it["form"] == CAPTION}
    total = len(items)
    chunk_size = max(1, int(ctx.batch_size or 1))
    done = 0
    for start in range(0, total, chunk_size):
        chunk = items[start: start + chunk_size]
        jobs: list[tuple[GenerationRequest, dict, dict]] = []  # (request, row, item)
        for item in chunk:
            images = [item["image"]] if item.get("image") is not None else []
            history = dialogue_history(item)
            if item["form"] != MC:
                req = GenerationRequest(text=free_text(prompts, item), images=images, max_new_tokens=free_tokens,
                                        history=history)
                row = _row(item, "generation", 0, prompt_as_sent(model, req), item["form"])
                row["gold"] = json.dumps(item["answer"], ensure_ascii=False)
                jobs.append((req, row, item))
                continue
            options = item["options"]
            gold_index = options.index(item["answer"])
            for r in range(repeats):
                if do_gen:
                    plan = plan_repeat(item["question_id"], options, r, len(gen_templates), seed=seed,
                                       mark_mode=mark_mode)
                    shown = [options[i] for i in plan["order"]]
                    text = generation_text(gen_templates[plan["template_id"]], item["question"], shown,
                                           plan["mark_style"])
                    req = GenerationRequest(text=text, images=images, max_new_tokens=mc_tokens,
                                            temperature=TEMPERATURE, seed=repeat_seed(seed, r),
                                            history=example + history)
                    row = _row(item, "generation", r, prompt_as_sent(model, req), "mark")
                    row.update(gold=str(plan["order"].index(gold_index)), mark_style=plan["mark_style"],
                               template_id=plan["template_id"], options=json.dumps(shown, ensure_ascii=False))
                    row["_shown"] = shown
                    jobs.append((req, row, item))
                if do_lik:
                    plan = plan_repeat(item["question_id"], options, r, len(lik_templates), seed=seed + 1,
                                       mark_mode=mark_mode)
                    shown = [options[i] for i in plan["order"]]
                    req = GenerationRequest(text=likelihood_text(lik_templates[plan["template_id"]],
                                                                 item["question"]),
                                            images=images, history=history)
                    prompt = prompt_as_sent(model, req)
                    scores = model.score_options(req, shown)
                    gold = plan["order"].index(gold_index)
                    option_scores = json.dumps([{"sum": s.sum_logprob, "mean": s.mean_logprob,
                                                 "n_tokens": s.n_tokens} for s in scores])
                    for extraction, values in (("likelihood", [s.sum_logprob for s in scores]),
                                               ("likelihood_mean", [s.mean_logprob for s in scores])):
                        choice = _argmax(values)
                        row = _row(item, "likelihood", r, prompt, extraction)
                        row.update(prediction=shown[choice] if choice >= 0 else "", parsed_answer=str(choice),
                                   gold=str(gold), correct=choice == gold, score=1.0 if choice == gold else 0.0,
                                   template_id=plan["template_id"], options=json.dumps(shown, ensure_ascii=False),
                                   option_scores=option_scores)
                        row["_answer_text"] = choice_text(choice if choice >= 0 else None, shown, UNPARSABLE)
                        details.append(row)
        if jobs:
            outputs = model.generate([req for req, _, _ in jobs])
            if len(outputs) != len(jobs):
                raise RuntimeError(f"the model returned {len(outputs)} completions for {len(jobs)} prompts")
            for (req, row, item), text in zip(jobs, outputs):
                row["prediction"] = text
                if item["form"] == MC:
                    shown = row.pop("_shown")
                    idx = extract_option(text, len(shown))
                    row["parsed_answer"] = str(-1 if idx is None else idx)
                    row["correct"] = idx is not None and str(idx) == row["gold"]
                    row["score"] = 1.0 if row["correct"] else 0.0
                    row["_answer_text"] = choice_text(idx, shown, UNPARSABLE + text)
                elif item["form"] == OCR:
                    row["parsed_answer"] = text
                    row["score"] = ocr_word_accuracy(text, item["answer"])
                    row["correct"] = row["score"] == 1.0
                elif item["form"] == KIE:
                    row["parsed_answer"] = text
                    row["score"] = kie_accuracy(text, item["answer"])
                    row["correct"] = row["score"] == 1.0
                else:  # caption: scored per dataset (CIDEr depends on the whole reference set)
                    row["parsed_answer"] = text
                details.append(row)
        # keep the details in suite order: MC likelihood rows were appended before the chunk's generated rows
        done += len(chunk)
        ctx.progress(done, total)

    order = {it["question_id"]: k for k, it in enumerate(items)}
    details.sort(key=lambda row: (order[row["question_id"]], row["mode"] != "generation", row["repeat"]))
    free_rows = [r for r in details if r["form"] != MC]
    gen_mc = [r for r in details if r["form"] == MC and r["mode"] == "generation"]
    lik_mc = [r for r in details if r["extraction"] == "likelihood"]
    lik_mean_mc = [r for r in details if r["extraction"] == "likelihood_mean"]

    scores: dict[str, float] = {}
    extra: dict = {"mode": mode, "settings": {
        "repeats": repeats, "marks": mark_mode, "seed": seed, "temperature": TEMPERATURE,
        "max_new_tokens": mc_tokens, "free_max_new_tokens": free_tokens, "suite": ctx.suite,
        "limit_per_dimension": int(ctx.limit or 0), "gen_templates": len(gen_templates),
        "lik_templates": len(lik_templates)},
        "rules": {
            "generation": "first (X) mark in the output (extract_option); none = wrong; format hit = any mark",
            "likelihood": "argmax of summed log-likelihood over the option texts (lik_mean_*: per-token mean)",
            "dataset": "accuracy (caption datasets: CIDEr); dimension = mean of its datasets; overall = mean of "
                       "the dimensions; scene text and description are generation-only and enter both modes"}}
    variants = []
    if do_gen:
        variants.append(("gen", gen_mc))
    if do_lik:
        variants.extend([("lik", lik_mc), ("lik_mean", lik_mean_mc)])
    for prefix, mc_rows in variants:
        per_ds = dataset_scores(mc_rows + free_rows, caption_refs)
        dims = dimension_scores(per_ds)
        scores[f"{prefix}_overall"] = nan_mean(dims.values())
        if prefix != "lik_mean":
            for dim, value in dims.items():
                scores[f"{prefix}_{dim}"] = value
        else:
            extra["lik_mean_dimensions"] = dims
        scores[f"{prefix}_mc_accuracy"] = reform_accuracy([r["score"] for r in mc_rows])
        extra[f"{prefix}_datasets"] = per_ds
    if do_gen:
        scores["format_hit_rate"] = format_hit_rate([r["prediction"] for r in gen_mc])
        scores["instability"] = _instability(gen_mc)
    if do_lik:
        scores["lik_instability"] = _instability(lik_mc)
    for row in details:
        row.pop("_answer_text", None)

    n_mc = sum(1 for it in items if it["form"] == MC)
    counts = {
        "items": total,
        "repeats": repeats,
        "multiple_choice": n_mc,
        "caption": sum(1 for it in items if it["form"] == CAPTION),
        "ocr": sum(1 for it in items if it["form"] == OCR),
        "kie": sum(1 for it in items if it["form"] == KIE),
        "generation_rows": len(gen_mc) + len(free_rows),
        "likelihood_rows": len(lik_mc),
        "unparsed": sum(1 for r in gen_mc if r["parsed_answer"] == "-1"),
    }
    used = ["reform_ocr", "reform_kie", "reform_caption"]
    if do_gen:
        used += ["reform_gen_templates", "reform_example", "reform_example_answer"]
    if do_lik:
        used.append("reform_lik_templates")
    shown = {name: prompts[name] for name in used}
    if ctx.suite != "sample":  # the full suite's question wording for datasets that have none (reform_layouts)
        for name in ("reform_dataset_questions.json", "reform_mocheg.txt"):
            shown[name.rsplit(".", 1)[0]] = (PROMPTS_DIR / name).read_text(encoding="utf-8")
    return BenchmarkResult(scores=scores, details=details, counts=counts, prompts=shown, extra=extra)
