"""ReForm-Eval suites: our sample suite (sample/reform_sample.json, drawn by tools/draw_reform_sample.py) and the
full suite, downloaded dataset by dataset from the Hub (datasets.DATASETS).

TDIUC and MSCOCO object counting keep questions, answers and distractor lists in separate files; the official
loaders join them and draw 3 distractors per question from the choice list of its type (unseeded there; seeded by
question id here, so a run is reproducible). A yes/no TDIUC answer gets the options [yes, no].
"""
from __future__ import annotations

import random
from pathlib import Path

from evaluator.benchmarks.reform.counts import COUNTS
from evaluator.benchmarks.reform.datasets import DATASETS, DATASETS_BY_NAME, MC, ReformDataset, hub_source
from evaluator.benchmarks.reform.files import choice_list, read_data
from evaluator.benchmarks.reform.items import load_items, normalise_item, with_source
from evaluator.benchmarks.spec import EQUAL, Lite
from evaluator.inputs.sources import json_records

SAMPLE_PATH = Path(__file__).resolve().parent / "sample" / "reform_sample.json"


def _draw_options(answer: str, pool: list, question_id: str) -> list[str]:
    """3 distractors drawn from `pool` (the answer excluded) plus the answer, seeded by the question id."""
    distractors = sorted({str(v) for v in pool} - {answer})
    rng = random.Random(f"reform-choices|{question_id}")
    drawn = rng.sample(distractors, min(3, len(distractors)))
    if not drawn:
        raise ValueError(f"question {question_id}: the choice list has no distractor for {answer!r}")
    return drawn + [answer]


def _child(folder: str, name: str) -> str:
    return folder.rstrip("/") + "/" + name


def _tdiuc_answers(annotations: str) -> dict[str, tuple[str, str]]:
    """question_id -> (question_type, first annotated answer)."""
    text, _ = read_data(annotations)
    answers = {}
    for k, ann in enumerate(json_records(text, annotations, ("annotations", "data"))):
        try:
            answers[str(ann["question_id"])] = (ann["question_type"], str(ann["answers"][0]["answer"]))
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"{annotations}: annotation {k} lacks question_id, question_type or answers") from None
    return answers


def load_tdiuc(questions: str, annotations: str, choices_dir: str, question_type: str, *, dataset: str = "",
               dimension: str = "", load_images: bool = True, cache_dir: str | Path | None = None) -> list[dict]:
    """One TDIUC question type from its three sources (paths, URLs or hf:// references).

    questions: rows {question_id, image_id (the image, base64 on the Hub), question}; annotations: rows
    {question_id, question_type, answers: [{answer}, ...]}; choices_dir: a folder holding <question_type>.json.
    The gold answer is the first annotated answer.
    """
    q_text, resolve = read_data(questions)
    answers = _tdiuc_answers(annotations)
    pool = None
    items = []
    cache = Path(cache_dir) if cache_dir else None
    for k, q in enumerate(json_records(q_text, questions, ("questions", "data"))):
        if not isinstance(q, dict) or "question_id" not in q:
            raise ValueError(f"ReForm-Eval item {k}: no question_id")
        qid = str(q["question_id"])
        if qid not in answers:
            raise ValueError(f"ReForm-Eval item {k}: question {qid} has no annotation")
        qtype, answer = answers[qid]
        if qtype != question_type:
            continue
        if answer in ("yes", "no"):
            options = ["yes", "no"]
        else:
            if pool is None:
                pool = choice_list(_child(choices_dir, f"{question_type}.json"))
            options = _draw_options(answer, pool, qid)
        record = {"question_id": qid, "question": q.get("question"), "answer": answer, "answer_options": options,
                  "image": q.get("image") or q.get("image_id")}
        items.append(with_source(normalise_item(record, k, MC, dataset, dimension, resolve, load_images, cache),
                                 questions, k))
    return items


def load_object_counting(annotations: str, choices: str, *, dataset: str = "", dimension: str = "",
                         load_images: bool = True, cache_dir: str | Path | None = None) -> list[dict]:
    """MSCOCO object counting: rows {Image_ID, Question, Answer, image (base64)} + a list of count choices.

    Question ids are the row numbers from 1, as the official loader numbers them.
    """
    text, resolve = read_data(annotations)
    pool = choice_list(choices)
    cache = Path(cache_dir) if cache_dir else None
    items = []
    for k, ann in enumerate(json_records(text, annotations)):
        if not isinstance(ann, dict) or ann.get("Answer") in (None, ""):
            raise ValueError(f"ReForm-Eval item {k}: no Answer")
        qid, answer = str(k + 1), str(ann["Answer"])
        record = {"question_id": qid, "question": ann.get("Question"), "answer": answer,
                  "answer_options": _draw_options(answer, pool, qid),
                  "image": ann.get("image") or ann.get("Image_ID")}
        items.append(with_source(normalise_item(record, k, MC, dataset, dimension, resolve, load_images, cache),
                                 annotations, k))
    return items


def load_entry(entry: ReformDataset, revision: str | None = None, load_images: bool = True) -> list[dict]:
    """The items of one table entry, downloaded from the Hub dataset."""
    labels = {"dataset": entry.name, "dimension": entry.dimension, "load_images": load_images}
    if not entry.multi_file:
        return load_items(hub_source(entry, revision), entry.form, layout=entry.layout, **labels)
    if entry.question_type is not None:
        annotations = entry.hub_path.replace("_ques.json", "_anns.json")
        return load_tdiuc(hub_source(entry, revision), hub_source(entry, revision, annotations),
                          hub_source(entry, revision, entry.choices_path), entry.question_type, **labels)
    return load_object_counting(hub_source(entry, revision), hub_source(entry, revision, entry.choices_path),
                                **labels)


def load_full_suite(names: list[str] | None = None, revision: str | None = None,
                    load_images: bool = True) -> list[dict]:
    """Download the datasets of the table (all, or those named) from the Hub and load them."""
    chosen = []
    for name in names or [d.name for d in DATASETS]:
        entry = DATASETS_BY_NAME.get(name)
        if entry is None:
            raise ValueError(f"unknown ReForm-Eval dataset {name!r}")
        chosen.append(entry)
    items: list[dict] = []
    for entry in chosen:
        items.extend(load_entry(entry, revision, load_images))
    return items


def load_sample_suite(load_images: bool = True) -> list[dict]:
    """Our own small suite (SAMPLE_PATH, drawn by tools/draw_reform_sample.py): >= 5 items per dimension."""
    return load_items(SAMPLE_PATH, None, load_images=load_images, source_name=SAMPLE_PATH.name)


# the lite suite: the same number of items from each dataset, as a dimension's score is the mean of its datasets'
LITE_SUBSET = Lite(stratum="dataset", allocation=EQUAL, size=20,
                   strata=tuple((c.name, c.items) for c in COUNTS),
                   strata_basis="the dataset table (counts.py): each dataset's items and where that number comes from",
                   key="its dataset and its id in that dataset's file")
