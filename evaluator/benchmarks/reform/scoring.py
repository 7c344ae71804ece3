"""ReForm-Eval's scoring: each row's answer read from its columns, then per-dataset, per-dimension and average
scores, the format hit rate and the instability (evaluator.metrics.reform, evaluator.metrics.captions).

- generation (multiple choice): the FIRST "(X)" mark of the output in the row's shown options (extract_option); no
  usable mark is wrong; the format hit rate is the share of outputs with any mark.
- likelihood: the argmax of the summed log-likelihood ("likelihood" rows) or of the per-token mean
  ("likelihood_mean" rows, scores lik_mean_*) over the row's option_scores; the chosen option text becomes the
  row's prediction.
- OCR / KIE: the dataset's rule (datasets.free_rule, the reference's formulation for it): the OCR word match
  (every OCR set, POIE, SROIE, DocVQA, TextVQA, OCR-VQA) or the KIE match (FUNSD); the rule used is written into
  the row's extraction. Captions: CIDEr per dataset (BLEU-4 beside it), against the references in the rows' gold.
A dataset's score is its accuracy over every repeat (captions: CIDEr); a dimension's the mean of its datasets';
gen_overall / lik_overall the mean of the accuracy dimensions (every dimension but visual description, whose CIDEr
is reported on its own). The scene-text dimension is answered by generation and enters both modes. Instability is
the mean per-item entropy of the repeats' answer texts (a reply without a usable mark enters as its own text, so a
bare option text counts as that option, as the reference maps it).
"""
from __future__ import annotations

import json
import math

from evaluator.benchmarks.reform.datasets import (ACCURACY_DIMENSIONS, CAPTION, DIMENSIONS, KIE, KIE_RULE, MC,
                                                  OCR, OCR_RULE, free_rule)
from evaluator.benchmarks.reform.options import TEMPERATURE, RunSettings, run_settings
from evaluator.benchmarks.reform.prompts import load_prompts, split_templates
from evaluator.benchmarks.spec import ROW_IMAGE_UNAVAILABLE, ScoreContext, Scored
from evaluator.metrics.basic import argmax, nan_mean
from evaluator.metrics.captions import caption_scores
from evaluator.metrics.intervals import affordable_draws, bootstrap_intervals, mean_interval
from evaluator.metrics.reform import (answer_entropy, choice_text, extract_option, format_hit, format_hit_rate,
                                      kie_accuracy, ocr_word_accuracy, reform_accuracy)
from evaluator.metrics.reform import instability as entropy_instability

# draws of the bootstrap for the overall and dimension scores: each draw scores every dataset again (CIDEr
# included), so fewer than the default; 400 draws put the 2.5th and 97.5th percentiles 10 draws in
COMPOSITE_DRAWS = 400

UNPARSABLE = "<unparsable> "
RULES = {
    "generation": "first (X) mark in the output (extract_option); none = wrong; format hit = any mark",
    "likelihood": "argmax of summed log-likelihood over the option texts (lik_mean_*: per-token mean)",
    "free": "OCR / KIE answers: the dataset's rule, the OCR word match (non-alphanumerics dropped; every OCR set, "
            "POIE, SROIE, DocVQA, TextVQA, OCR-VQA) or the KIE match (VQA normalisation; FUNSD)",
    "dataset": "accuracy (caption datasets: CIDEr); dimension = mean of its datasets; overall = mean of the "
               "accuracy dimensions (description, CIDEr, left out); scene text is generation-only and enters both "
               "modes",
}
FREE_METRICS = {OCR_RULE: ocr_word_accuracy, KIE_RULE: kie_accuracy}  # rule -> (prediction, gold answers) -> 0 / 1


# --------------------------------------------------------------------------------------------- one row

def _mark(row: dict) -> None:
    """A generated multiple-choice answer: the first option mark among the row's shown options."""
    idx = extract_option(row["prediction"], len(json.loads(row["options"])))
    row["parsed_answer"] = str(-1 if idx is None else idx)
    row["correct"] = idx is not None and str(idx) == row["gold"]
    row["score"] = 1.0 if row["correct"] else 0.0


def _likelihood(row: dict) -> None:
    """A scored multiple-choice answer: the option with the highest summed (or per-token mean) log-likelihood."""
    shown = json.loads(row["options"])
    scores = json.loads(row["option_scores"]) if row["option_scores"] else []
    field = "sum" if row["extraction"] == "likelihood" else "mean"
    choice = argmax([s[field] for s in scores])
    row["prediction"] = shown[choice] if choice >= 0 else ""
    row["parsed_answer"] = str(choice)
    row["correct"] = str(choice) == row["gold"]
    row["score"] = 1.0 if row["correct"] else 0.0


def _free(row: dict) -> None:
    """An OCR / KIE answer scored against the gold answers by its dataset's rule (written into the row's
    extraction); a caption is scored per dataset."""
    text = row["prediction"]
    row["parsed_answer"] = text
    row["extraction"] = free_rule(row["dataset"], row["form"])
    if row["extraction"] in FREE_METRICS:
        row["score"] = FREE_METRICS[row["extraction"]](text, json.loads(row["gold"]))
    row["correct"] = row["score"] == 1.0


def read_answer(row: dict) -> None:
    """Reset a row's scoring columns and fill them again from its raw answer."""
    row["parsed_answer"], row["correct"], row["score"] = "-1", False, math.nan
    if row["form"] != MC:
        _free(row)
    elif row["mode"] == "generation":
        _mark(row)
    else:
        _likelihood(row)


def answer_text(row: dict) -> str:
    """What a multiple-choice row answered, for instability: the chosen option's text, else (generation) the reply
    itself, surrounding whitespace dropped, so a reply that is the bare text of an option counts as that option
    (the reference enters the raw reply); a likelihood row without a choice is "<unparsable> ". A damaged row (the
    explorer opens stored ones) reads as no choice among no options, never raises."""
    parsed = _whole_number(row.get("parsed_answer"))
    prediction = row.get("prediction")
    raw = (prediction.strip() if isinstance(prediction, str) else "") if row.get("mode") == "generation" \
        else UNPARSABLE
    return choice_text(parsed if parsed is not None and parsed >= 0 else None, _options(row.get("options")), raw)


def _whole_number(value) -> int | None:
    """An index stored in a row (an int, or its text), None when it is not one."""
    if isinstance(value, bool):
        return None
    try:
        return int(value) if isinstance(value, (int, str)) or (isinstance(value, float) and value.is_integer()) \
            else None
    except ValueError:
        return None


def _options(value) -> list:
    """A row's options, stored as a JSON list; [] for anything else."""
    try:
        found = json.loads(value) if isinstance(value, str) else value
    except (ValueError, RecursionError):
        return []
    return found if isinstance(found, list) else []


# --------------------------------------------------------------------------------------------- aggregates

def _caption_entry(rows: list[dict], known: dict | None = None) -> dict:
    """A caption dataset's CIDEr (its score) and BLEU-4 over its rows' items (a question's last row, where it has
    several); `known`: the entries already computed, by the items they were computed on (a bootstrap's draws of a
    few caption items repeat the same item set many times, and pycocoevalcap's CIDEr is most of their time)."""
    predictions = {r["question_id"]: r["prediction"] for r in rows}
    gold = {r["question_id"]: r["gold"] for r in rows}
    key = tuple(sorted((str(q), str(predictions[q]), str(gold[q])) for q in predictions))
    if known is not None and key in known:
        return dict(known[key])
    caps = caption_scores(predictions, {q: list(json.loads(g)) for q, g in gold.items()})
    entry = {"score": caps["CIDEr"], "CIDEr": caps["CIDEr"], "BLEU-4": caps["BLEU-4"]}
    if known is not None:
        known[key] = dict(entry)
    return entry


def dataset_scores(rows: list[dict], known_captions: dict | None = None) -> dict[str, dict]:
    """Per dataset {"dimension", "form", "rows", "score", ...} from scored rows of one mode (MC rows of one
    extraction); a caption dataset's references are its rows' gold. `known_captions`: a bootstrap's memo of caption
    entries by item set (_caption_entry)."""
    by_ds: dict[str, list[dict]] = {}
    for row in rows:
        by_ds.setdefault(row["dataset"], []).append(row)
    out = {}
    for ds, ds_rows in by_ds.items():
        form = ds_rows[0]["form"]
        entry = {"dimension": ds_rows[0]["dimension"], "form": form, "rows": len(ds_rows)}
        if form == CAPTION:
            entry.update(_caption_entry(ds_rows, known_captions))
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


def accuracy_mean(dimensions: dict[str, float]) -> float:
    """The mean over the accuracy dimensions present (visual description, scored by CIDEr, left out); NaN when none
    is."""
    return nan_mean(value for dim, value in dimensions.items() if dim in ACCURACY_DIMENSIONS)


def instability(rows: list[dict]) -> float:
    """Mean over items of the entropy of their repeats' answer texts (scored multiple-choice rows of one kind)."""
    answers: dict[str, list[str]] = {}
    for row in rows:
        answers.setdefault(row["question_id"], []).append(answer_text(row))
    return entropy_instability(list(answers.values()))


# --------------------------------------------------------------------------------------------- the run

def _extra(settings: RunSettings, ctx: ScoreContext) -> dict:
    prompts = load_prompts()
    return {"mode": settings.mode, "settings": {
        "repeats": settings.repeats, "marks": settings.marks, "seed": settings.seed, "temperature": TEMPERATURE,
        "max_new_tokens": settings.max_new_tokens, "free_max_new_tokens": settings.free_max_new_tokens,
        "suite": ctx.suite, "limit_per_dimension": int(ctx.limit or 0),
        "gen_templates": len(split_templates(prompts["reform_gen_templates"])),
        "lik_templates": len(split_templates(prompts["reform_lik_templates"]))},
        "rules": dict(RULES)}


def _counts(rows: list[dict], settings: RunSettings, gen_mc: list[dict], lik_mc: list[dict],
            free_rows: list[dict]) -> dict[str, int]:
    forms = {row["question_id"]: row["form"] for row in rows}  # one form per item
    n_form = {form: sum(1 for f in forms.values() if f == form) for form in (MC, CAPTION, OCR, KIE)}
    # scored: the items the overall score rests on: every item (an unparsable answer counts as wrong) but one whose
    # image the executor could not fetch, which had no answer to score (the suite reads its images as it loads and
    # a missing one stops the run, so in practice that is none)
    unavailable = {row["question_id"] for row in rows if row.get("status") == ROW_IMAGE_UNAVAILABLE}
    return {
        "items": len(forms),
        "scored": len(forms) - len(unavailable),
        "repeats": settings.repeats,
        "multiple_choice": n_form[MC],
        "caption": n_form[CAPTION],
        "ocr": n_form[OCR],
        "kie": n_form[KIE],
        "generation_rows": len(gen_mc) + len(free_rows),
        "likelihood_rows": len(lik_mc),
        "unparsed": sum(1 for r in gen_mc if r["parsed_answer"] == "-1"),
    }


def score(rows: list[dict], ctx: ScoreContext) -> Scored:
    """Read every row's answer again, then the scores of each mode the run asked in."""
    settings = run_settings(ctx.options)
    for row in rows:
        read_answer(row)
    free_rows = [r for r in rows if r["form"] != MC]
    gen_mc = [r for r in rows if r["form"] == MC and r["mode"] == "generation"]
    lik_mc = [r for r in rows if r["form"] == MC and r["extraction"] == "likelihood"]
    lik_mean_mc = [r for r in rows if r["form"] == MC and r["extraction"] == "likelihood_mean"]

    scores: dict[str, float] = {}
    extra = _extra(settings, ctx)
    variants = []
    if settings.do_gen:
        variants.append(("gen", gen_mc))
    if settings.do_lik:
        variants.extend([("lik", lik_mc), ("lik_mean", lik_mean_mc)])
    for prefix, mc_rows in variants:
        per_ds = dataset_scores(mc_rows + free_rows)
        dims = dimension_scores(per_ds)
        scores[f"{prefix}_overall"] = accuracy_mean(dims)
        if prefix != "lik_mean":
            for dim, value in dims.items():
                scores[f"{prefix}_{dim}"] = value
        else:
            extra["lik_mean_dimensions"] = dims
        scores[f"{prefix}_mc_accuracy"] = reform_accuracy([r["score"] for r in mc_rows])
        extra[f"{prefix}_datasets"] = per_ds
    if settings.do_gen:
        scores["format_hit_rate"] = format_hit_rate([r["prediction"] for r in gen_mc])
        scores["instability"] = instability(gen_mc)
    if settings.do_lik:
        scores["lik_instability"] = instability(lik_mc)
    return Scored(scores=scores, counts=_counts(rows, settings, gen_mc, lik_mc, free_rows), rows=rows, extra=extra,
                  intervals=score_intervals(variants, free_rows, gen_mc, lik_mc))


def score_intervals(variants: list[tuple[str, list[dict]]], free_rows: list[dict], gen_mc: list[dict],
                    lik_mc: list[dict]) -> dict:
    """Each score's interval (evaluator.metrics.intervals), an instance (one question and all its wordings and
    repeats) being the unit that repeats: the overall and dimension scores (means of datasets' scores) by the
    bootstrap over instances; multiple-choice accuracy and the format hit rate as means over rows clustered by
    instance; instability as a mean over instances of their answers' entropy."""
    found = {}
    for prefix, mc_rows in variants:
        by_instance: dict[str, list[dict]] = {}
        for row in mc_rows + free_rows:
            by_instance.setdefault(str(row["question_id"]), []).append(row)

        known: dict = {}  # caption entries by item set, for this variant's draws (_caption_entry)

        def composite(drawn: list[str], prefix: str = prefix, by_instance: dict = by_instance,
                      known: dict = known) -> dict[str, float]:
            dims = dimension_scores(dataset_scores([row for key in drawn for row in by_instance[key]], known))
            out = {f"{prefix}_overall": accuracy_mean(dims)}
            out.update({f"{prefix}_{dim}": value for dim, value in dims.items()} if prefix != "lik_mean" else {})
            return out

        ranges = {f"{prefix}_{name}": (0.0, 1.0) for name in ("overall", *ACCURACY_DIMENSIONS)}
        found.update(bootstrap_intervals(list(by_instance), composite, iters=affordable_draws(
            len(by_instance), COMPOSITE_DRAWS), unit="instance", within=ranges))
        found[f"{prefix}_mc_accuracy"] = mean_interval([float(r["score"]) for r in mc_rows],
                                                       [r["question_id"] for r in mc_rows], unit="instance")
    if gen_mc:
        found["format_hit_rate"] = mean_interval([float(format_hit(r["prediction"])) for r in gen_mc],
                                                 [r["question_id"] for r in gen_mc], unit="instance")
    for key, mc_rows in (("instability", gen_mc), ("lik_instability", lik_mc)):
        answers: dict[str, list[str]] = {}
        for row in mc_rows:
            answers.setdefault(row["question_id"], []).append(answer_text(row))
        if answers:
            # an entropy of m answers lies in 0..ln m
            found[key] = mean_interval([answer_entropy(a) for a in answers.values()], unit="instance",
                                       proportion=False, within=(0.0, math.log(max(map(len, answers.values())))))
    return found
