"""CURE data: the instances file (the official one, or our sample suite), read and checked.

Each instance has an image (url, width, height), bboxes (the first is the region the questions are about), a clue,
an "inference" block (six candidate high-level inferences, gt the right one) and "cot_inference": a chain of 2-4
sub-questions, each with six candidates and gt. See BENCHMARKS.md, "CURE".
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from evaluator.benchmarks.spec import PROPORTIONAL, Lite
from evaluator.inputs.images import is_url
from evaluator.inputs.sources import read_source

N_OPTIONS = 6
SAMPLE_PATH = Path(__file__).resolve().parent / "sample" / "cure_sample.json"
OFFICIAL_URL = "https://raw.githubusercontent.com/Yangyi-Chen/CoTConsistency/main/cot_consistency_eval.jsonl"


def load_instances(source: str | Path) -> list[dict]:
    """Read and validate CURE instances from a local path, an http(s) URL or hf://datasets/<org>/<name>/<file>.

    Accepts the official file (one JSON array despite its .jsonl name) and real JSON Lines. Each returned dict is
    the instance as in the file plus "question_id" (its "id" field when present, else "cure-0007" from its index),
    "chain_length", and "image_ref": where to fetch its image, with a relative image.url resolved against the
    data file's location (a local path, a URL, or an hf:// reference into the same dataset repo).
    Raises ValueError naming the index of a malformed instance.
    """
    text, resolve = read_source(str(source), "CURE data")
    instances, seen = [], set()
    for index, record in enumerate(parse_records(text, str(source))):
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
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: not valid JSON ({exc})") from None
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


def _check_image_and_boxes(record: dict) -> None:
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


def _check_chain(record: dict) -> list:
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
    return chain


def validate_instance(record, index: int) -> dict:
    """Check one instance's fields (BENCHMARKS.md); return a shallow copy with question_id and chain_length."""
    try:
        if not isinstance(record, dict):
            raise ValueError("not an object")
        _check_image_and_boxes(record)
        if not isinstance(record.get("clue"), str):
            raise ValueError("clue must be a string")
        _check_choice(record.get("inference"), "inference")
        chain = _check_chain(record)
    except ValueError as exc:
        raise ValueError(f"CURE instance {index}: {exc}") from None
    inst = dict(record)
    qid = record.get("id", record.get("question_id"))
    inst["question_id"] = str(qid) if qid not in (None, "") else f"cure-{index:04d}"
    inst["chain_length"] = len(chain)
    return inst


def questions(inst: dict) -> list[tuple[str, str | None, list[str], int]]:
    """(part, question text or None for the high-level one, candidates, gold) for every question of an instance."""
    qs = [("high", None, inst["inference"]["candidate"], inst["inference"]["gt"])]
    for k, step in enumerate(inst["cot_inference"]["chain"], 1):
        qs.append((f"step{k}", step["question"], step["candidate"], step["gt"]))
    return qs


# --------------------------------------------------------------------------------------------- the lite suite

def image_source(url: str) -> str:
    """Where an instance's image comes from, by its URL: "Visual Genome", "VCR", or "other" (a deployer's file)."""
    text = str(url or "")
    if "VG_100K" in text:
        return "Visual Genome"
    return "VCR" if "vcr" in text.lower() else "other"


def lite_stratum(inst: dict) -> str:
    """An instance's stratum in the lite rule: its image's source and its chain's length ("VCR, 3 steps")."""
    return f"{image_source(inst['image']['url'])}, {inst['chain_length']} steps"


def stratum_chain(name: str) -> int:
    """The chain length a lite stratum's name holds ("VCR, 3 steps" -> 3)."""
    return int(name.rsplit(",", 1)[1].split()[0])


def lite_key(inst: dict) -> str:
    """An instance's own key in the lite rule: its id where the file gives one, else its content (image URL, region
    and clue), never its position, so a reordered copy of the file gives the same lite suite."""
    own = inst.get("id")
    if own not in (None, ""):
        return str(own)
    box = inst["bboxes"][0]
    return f"{inst['image']['url']}|{box['left']},{box['top']},{box['width']},{box['height']}|{inst['clue']}"


# the full suite's strata for the lite rule: the official file's 1,622 instances by image source and chain length,
# counted offline from cot_consistency_eval.jsonl (Yangyi-Chen/CoTConsistency)
LITE_SUBSET = Lite(stratum="pair of image source and chain length", allocation=PROPORTIONAL, size=500,
                   strata=(("Visual Genome, 2 steps", 152), ("Visual Genome, 3 steps", 690),
                           ("Visual Genome, 4 steps", 70), ("VCR, 2 steps", 119), ("VCR, 3 steps", 530),
                           ("VCR, 4 steps", 61)),
                   strata_basis="the official file's 1,622 instances by image source (Visual Genome or VCR, from "
                                "the image URL) and chain length, counted offline",
                   key="its image URL, region and clue (the file has no ids)")
