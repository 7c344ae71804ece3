"""ReForm-Eval's plan: the details rows of every item and the model requests that fill them.

Per item, in suite order (ctx.limit > 0 keeps that many items per dimension, round-robin over its datasets):
- OCR / KIE / caption: one greedy generation (a row whose extraction is the dataset's scoring rule, "ocr" or
  "kie", or "caption");
- multiple choice, per repeat r: a sampled generation (mode generation / both; one row, extraction "mark") and an
  option-scoring request (mode likelihood / both) whose scores fill two rows, "likelihood" (chosen by the summed
  log-likelihood) and "likelihood_mean" (by the per-token mean). Both modes carry the one-shot example turn before
  the item's own dialogue history, as the reference does with its in-context sample in either mode.
The Asks go item by item, repeat by repeat. Each sampled request has a seed of its own (evaluator.benchmarks.seeds:
from reform.seed, the item and the repeat), so its answer is the same at any batch size and beside any other item. Rows are stored per item: generation rows by repeat, then likelihood rows by
repeat (sum before mean).
"""
from __future__ import annotations

import json
import math
from collections import Counter

from evaluator.benchmarks import lite
from evaluator.benchmarks.reform.datasets import DATASETS, MC, free_rule
from evaluator.benchmarks.reform.options import TEMPERATURE, RunSettings, run_settings
from evaluator.benchmarks.reform.prompts import (dialogue_history, example_history, free_text, generation_text,
                                                 likelihood_text, load_prompts, plan_repeat, split_templates,
                                                 used_prompts)
from evaluator.benchmarks.reform.suite import LITE_SUBSET, load_full_suite, load_sample_suite
from evaluator.benchmarks.seeds import item_seed
from evaluator.benchmarks.spec import Ask, Plan, PlanContext
from evaluator.models.base import GenerationRequest

NAME = "reform"


def chosen_datasets(ctx: PlanContext) -> list[str]:
    """The datasets a full or lite run reads: those the source names (comma-separated), else all of the table."""
    names = [n.strip() for n in (ctx.sources.get(NAME) or "").split(",") if n.strip()]
    return names or [d.name for d in DATASETS]


def load_suite(ctx: PlanContext) -> list[dict]:
    """The sample suite, or the full suite's datasets (ctx.sources["reform"]: comma-separated names; empty: all)."""
    if ctx.suite == "sample":
        return load_sample_suite()
    names = ctx.sources.get(NAME)
    return load_full_suite([n.strip() for n in names.split(",") if n.strip()] if names else None)


def _round_robin(indexed: list[tuple[int, dict]], limit: int) -> list[int]:
    """The positions of the first `limit` items of one dimension taken round-robin over its datasets in suite order:
    the first item of each dataset, then the second of each, and so on."""
    dataset_order: dict[str, int] = {}
    taken: Counter = Counter()
    ranked = []
    for position, item in indexed:
        dataset = item.get("dataset", "")
        dataset_order.setdefault(dataset, len(dataset_order))
        ranked.append((taken[dataset], dataset_order[dataset], position))
        taken[dataset] += 1
    return [position for *_, position in sorted(ranked)[:limit]]


def select(items: list[dict], limit: int) -> list[dict]:
    """At most `limit` items per dimension (all when limit <= 0), drawn round-robin over the dimension's datasets
    (so a limit of at least its number of datasets covers every one), kept in the suite's order."""
    if not limit or limit <= 0:
        return items
    by_dimension: dict[str, list[tuple[int, dict]]] = {}
    for position, item in enumerate(items):
        by_dimension.setdefault(item["dimension"], []).append((position, item))
    chosen = {position for indexed in by_dimension.values() for position in _round_robin(indexed, limit)}
    return [item for position, item in enumerate(items) if position in chosen]


def lite_key(item: dict) -> str:
    """An item's own key in the lite rule: its dataset and its id in that dataset's file."""
    return f"{item['dataset']}|{item['question_id']}"


def item_keys(items: list[dict]) -> list[str]:
    """Each item's id in the details: its question_id, or "<dataset>/<question_id>" where datasets share an id
    (the full suite numbers several datasets from 0), with "#<n>" added if that still repeats."""
    shared = Counter(item["question_id"] for item in items)
    keys: list[str] = []
    seen: Counter = Counter()
    for item in items:
        key = item["question_id"] if shared[item["question_id"]] == 1 else f"{item['dataset']}/{item['question_id']}"
        seen[key] += 1
        keys.append(key if seen[key] == 1 else f"{key}#{seen[key]}")
    return keys


def _row(item: dict, key: str, mode: str, repeat: int, extraction: str) -> dict:
    """A details row with every column, filled as for an unanswered question."""
    return {
        "benchmark": NAME,
        "question_id": key,
        "dataset": item["dataset"],
        "dimension": item["dimension"],
        "form": item["form"],
        "mode": mode,
        "repeat": int(repeat),
        "question": item["question"],
        "prompt": "",
        "prediction": "",
        "reasoning": None, "reasoning_tokens": None, "thought_unclosed": None, "near_ties": "",
        "parsed_answer": "-1",
        "gold": "",
        "correct": False,
        "score": math.nan,
        "extraction": extraction,
        "options": "[]",
        "mark_style": "",
        "template_id": -1,
        "option_scores": "",
        "image_ref": item.get("image_source", ""),
    }


class _Planner:
    """What every item's plan shares: the settings, the prompt texts and templates."""

    def __init__(self, settings: RunSettings, prompts: dict[str, str]):
        self.settings = settings
        self.prompts = prompts
        self.gen_templates = split_templates(prompts["reform_gen_templates"])
        self.lik_templates = split_templates(prompts["reform_lik_templates"])
        self.example = example_history(prompts)

    def free(self, item: dict, key: str, images) -> tuple[list[dict], list[Ask]]:
        """One greedy generation for an OCR / KIE / caption item."""
        request = GenerationRequest(text=free_text(self.prompts, item),
                                    max_new_tokens=self.settings.free_max_new_tokens, history=dialogue_history(item))
        row = _row(item, key, "generation", 0, free_rule(item["dataset"], item["form"]))
        row["gold"] = json.dumps(item["answer"], ensure_ascii=False)
        return [row], [Ask(key, request, [row], images=images)]

    def generation(self, item: dict, key: str, repeat: int, images) -> tuple[dict, Ask]:
        """Repeat `repeat` of a multiple-choice item asked by generation: the options listed with marks."""
        s = self.settings
        options = item["options"]
        how = plan_repeat(item["question_id"], options, repeat, len(self.gen_templates), seed=s.seed,
                          mark_mode=s.marks)
        shown = [options[i] for i in how["order"]]
        text = generation_text(self.gen_templates[how["template_id"]], item["question"], shown, how["mark_style"])
        request = GenerationRequest(text=text, max_new_tokens=s.max_new_tokens, temperature=TEMPERATURE,
                                    seed=item_seed(NAME, s.seed, key, repeat), history=self.example + dialogue_history(item))
        row = _row(item, key, "generation", repeat, "mark")
        row.update(gold=str(how["order"].index(options.index(item["answer"]))), mark_style=how["mark_style"],
                   template_id=how["template_id"], options=json.dumps(shown, ensure_ascii=False))
        return row, Ask(key, request, [row], images=images)

    def likelihood(self, item: dict, key: str, repeat: int, images) -> tuple[list[dict], Ask]:
        """Repeat `repeat` of a multiple-choice item asked by option likelihood: two rows from one scoring."""
        s = self.settings
        options = item["options"]
        how = plan_repeat(item["question_id"], options, repeat, len(self.lik_templates), seed=s.seed + 1,
                          mark_mode=s.marks)
        shown = [options[i] for i in how["order"]]
        request = GenerationRequest(text=likelihood_text(self.lik_templates[how["template_id"]], item["question"]),
                                    history=self.example + dialogue_history(item))
        gold = str(how["order"].index(options.index(item["answer"])))
        rows = []
        for extraction in ("likelihood", "likelihood_mean"):
            row = _row(item, key, "likelihood", repeat, extraction)
            row.update(gold=gold, template_id=how["template_id"], options=json.dumps(shown, ensure_ascii=False))
            rows.append(row)
        return rows, Ask(key, request, rows, options=shown, images=images)

    def item(self, item: dict, key: str) -> tuple[list[dict], list[Ask]]:
        """The rows (generation rows, then likelihood rows) and the Asks (repeat by repeat) of one item."""
        image = item.get("image")
        images = (lambda: [image]) if image is not None else None  # one image for all its requests
        if item["form"] != MC:
            return self.free(item, key, images)
        gen_rows: list[dict] = []
        lik_rows: list[dict] = []
        asks: list[Ask] = []
        for repeat in range(self.settings.repeats):
            if self.settings.do_gen:
                row, ask = self.generation(item, key, repeat, images)
                gen_rows.append(row)
                asks.append(ask)
            if self.settings.do_lik:
                rows, ask = self.likelihood(item, key, repeat, images)
                lik_rows.extend(rows)
                asks.append(ask)
        return gen_rows + lik_rows, asks


def plan(ctx: PlanContext) -> Plan:
    """Every item of the suite (ctx.limit > 0: that many per dimension, round-robin over its datasets; a lite run: the
    lite rule's items of the full suite): its rows and its model requests."""
    settings = run_settings(ctx.options)
    suite = load_suite(ctx)
    strata = (lite.strata_counts(suite, lambda item: item["dataset"], chosen_datasets(ctx)) if ctx.suite != "sample"
              else None)
    if ctx.suite == "lite":  # the card's lite rule, on each item's dataset and its id there
        suite = lite.select(suite, NAME, LITE_SUBSET, lite_key, lambda item: item["dataset"])
    items = select(suite, ctx.limit)  # the limit is per dimension; the suite's size counts every item
    prompts = load_prompts()
    planner = _Planner(settings, prompts)
    keys = item_keys(items)
    rows: list[dict] = []
    asks: list[Ask] = []
    for item, key in zip(items, keys):
        item_rows, item_asks = planner.item(item, key)
        rows.extend(item_rows)
        asks.extend(item_asks)
    return Plan(rows=rows, items=keys, asks=asks,
                prompts=used_prompts(prompts, settings.do_gen, settings.do_lik, ctx.suite), suite_items=len(suite),
                strata=strata)
