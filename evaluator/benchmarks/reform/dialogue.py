"""ReForm-Eval's multi-turn dialogue files (VisDial, VQA-MT) in their official layout, adapted to item records.

Both datasets are read by the same official builder (FudanDISC/ReForm-Eval build/VisDial/visual_dialog_dataset.py,
run with build/configs/VisDial_val_v1.2.yaml or VQA_vqa_MultiRound_val.yaml), so both files share one layout:

    {"version": ..., "split": ...,  # VisDial: "lvlm_1.2" / "val2018"; VQA-MT: "v2.0_MultiRound" / "COCO_val2014"
     "data": {"questions": [str, ...],        # shared question texts
              "answers":   [str, ...],        # shared answer texts (gold answers and options alike)
              "dialogs": [{"image_id": int,
                           "image_base64": str,   # the image on the Hub (older local files: only image_id)
                           "dialog": [{"question": i, "answer": j, "answer_options": [j, ...]}, ...]}]}}

Questions, answers and options are indices into the shared lists. The Hub's `datasets` loader reads the file as a
single row, so a one-element list holding that object is accepted too.

Sampling, as the builder does it: every round of every dialog is a question (round j of the dialog of image I has
the id "I_j", the builder's sample id); its options are the texts of the round's answer_options, in the file's
order; its gold answer is the text of the round's answer; a question not ending in "?" gets one. The history of
round j is rounds 0..j-1 as human (question) / assistant (gold answer) turns, the builder's history when options are
not put into it. (Its "online multi-round" mode later overwrites those answers with the model's own replies; a
record here carries the gold history, and a runner may replace it.)

All records of one dialog share the dialog's image string (not copied) and slices of one list of turns.
"""
from __future__ import annotations

from typing import Any


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _question(text: Any) -> str:
    q = _text(text)
    return q if q.endswith("?") else q + "?"


def _pick(texts: list, index: Any) -> str:
    """texts[index] for a non-negative int index (a negative one would silently count from the end)."""
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(texts):
        raise IndexError(f"index {index!r} outside the shared list of {len(texts)}")
    return _text(texts[index])


def _document(data: Any) -> dict:
    """The {"version", "split", "data"} object, also when the file is read as a one-row table."""
    if isinstance(data, list):
        if len(data) != 1:
            raise TypeError(f"expected one dialogue object, got a list of {len(data)}")
        data = data[0]
    if not isinstance(data, dict):
        raise TypeError("expected a JSON object with 'data'")
    return data


def _image_ref(dialog: dict, split: str) -> str:
    """The dialog's base64 image, else the builder's file name for its image_id (resolved beside the data file)."""
    for key in ("image_base64", "image"):
        value = dialog.get(key)
        if isinstance(value, str) and value.strip():
            return value
    image_id = dialog["image_id"]
    number = f"{image_id:012d}" if isinstance(image_id, int) else str(image_id)
    return f"{split}_{number}.jpg" if "COCO" in split else f"VisualDialog_{split}_{number}.jpg"


def adapt_dialogues(data: Any) -> list[dict]:
    """One record per round of every dialog (see the module docstring)."""
    doc = _document(data)
    split = _text(doc.get("split", ""))
    body = doc["data"] if "data" in doc else doc
    questions, answers, dialogs = body["questions"], body["answers"], body["dialogs"]
    if not isinstance(dialogs, list):
        raise TypeError("'dialogs' must be a list")
    records: list[dict] = []
    seen: dict[str, int] = {}
    for d, dialog in enumerate(dialogs):
        image = _image_ref(dialog, split)
        base = _text(dialog["image_id"])
        if base in seen:  # one dialog per image in the official files; keep ids unique anyway
            base = f"{base}#{d}"
        seen[base] = d
        turns: list[dict] = []
        for j, rnd in enumerate(dialog["dialog"]):
            question = _question(_pick(questions, rnd["question"]))
            gold = _pick(answers, rnd["answer"])
            records.append({
                "question_id": f"{base}_{j}",
                "question": question,
                "answer": gold,
                "answer_options": [_pick(answers, k) for k in rnd["answer_options"]],
                "image": image,
                "history": turns[:],  # rounds 0..j-1
            })
            turns.append({"from": "human", "value": question})
            turns.append({"from": "assistant", "value": gold})
    return records


# the two names of the table (ReformDataset.layout); one layout, one builder
LAYOUTS = {
    "visdial": adapt_dialogues,
    "vqa_mt": adapt_dialogues,
}
