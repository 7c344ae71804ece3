"""LAVE (LLM-Assisted VQA Evaluation, arXiv 2310.02567): the judge prompt and the pieces around it.

The prompt is one user message of plain text:

    <task description>

    Question: '<question>'
    Reference answers: <references>
    Candidate answer: '<candidate>'
    Output: <one-sentence rationale> So rating=<r>

    ... (one block per demonstration, separated by blank lines) ...

    Question: '<question>'
    Reference answers: <references>
    Candidate answer: '<candidate>'
    Output:

The whole prompt is stripped, so it ends with "Output:". Our texts live in prompts/: lave_task.txt (the task
description: rate 1 = incorrect or irrelevant, 2 = ambiguous or incomplete, 3 = correct; rationale before rating;
a yes/no question answered with neither yes nor no is incorrect), lave_demos.json (16 general demonstrations) and
lave_demos_binary.json (8 yes/no demonstrations); each demonstration is {"question", "references", "candidate",
"rationale", "rating"} and an optional "caption". The demonstrations are the reference's (mair-lab/lave
data/lave_demos*.json: its questions, references, candidates, captions and ratings, in its order), each with a
rationale in our own words; the caption is kept but not shown (the reference's default, use_caption=False).

Rules:
- References are written as the Python-sorted list (duplicates kept), each in single quotes, joined by ", ".
- The test item's references are filtered (filter_references): with c = Counter(references) and m the largest
  count, every answer with c[a] / m <= 0.25 is dropped; the copies of kept answers stay. Matching is exact (no case
  or whitespace folding). Demonstrations' references are shown unfiltered.
- Binary switch (is_binary_question): when the most common reference (Counter.most_common(1), so the first one
  seen wins a tie), lower-cased, outer whitespace and trailing '.' removed, is "yes" or "no", the binary
  demonstrations are used instead of the general ones.
- The first `shots` (8 by default) demonstrations of the chosen list are shown; fewer when the list is shorter.
- Quotes inside a question, reference or candidate are kept as they are (no escaping): "the 'A' key" is shown
  as '... the 'A' key ...', as the reference implementation does.
- A None candidate is shown as an empty answer (''); an empty reference list is a ValueError.

The judge's rating is read with evaluator.judge.parse_lave_rating; split_lave_reply keeps the rationale (empty for a
bare rating, which counts: has_rationale is False for it); reply_problem says when a reply is not a judgement at all.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from evaluator.inputs.prompt_files import prompts_dir, read_json_prompt, read_prompt
from evaluator.judge import parse_lave_rating
from evaluator.judge.judgement import not_a_judgement

__all__ = ["PROMPTS_DIR", "LavePrompts", "load_lave_prompts", "filter_references", "is_binary_question",
           "format_references", "build_lave_prompt", "lave_messages", "split_lave_reply", "has_rationale",
           "prompt_texts"]

PROMPTS_DIR = prompts_dir(__file__)
TASK_FILE = "lave_task.txt"
DEMO_FILE = "lave_demos.json"
BINARY_DEMO_FILE = "lave_demos_binary.json"
DEMO_FIELDS = ("question", "references", "candidate", "rationale", "rating")
DEFAULT_SHOTS = 8
DEFAULT_SHARE = 0.25
NOTHING = "neither a rating nor a rationale, not a judgement"


@dataclass(frozen=True)
class LavePrompts:
    """The task description and the two lists of demonstrations (general, yes/no)."""
    task: str
    demos: tuple[dict, ...]
    binary_demos: tuple[dict, ...]


# --------------------------------------------------------------------------------------------- loading

def _check_demos(data: object, path: Path) -> tuple[dict, ...]:
    """The demonstrations of one file, validated; a ValueError names the file and the index of a bad one."""
    if not isinstance(data, list) or not data:
        raise ValueError(f"{path}: expected a non-empty JSON list of demonstrations")
    demos = []
    for index, demo in enumerate(data):
        where = f"{path}, demonstration {index}"
        if not isinstance(demo, dict):
            raise ValueError(f"{where}: expected an object, got {type(demo).__name__}")
        missing = [field for field in DEMO_FIELDS if field not in demo]
        if missing:
            raise ValueError(f"{where}: missing field(s) {', '.join(missing)}")
        for field in ("question", "candidate", "rationale", "caption"):
            if field in demo and not isinstance(demo[field], str):
                raise ValueError(f"{where}: {field} must be a string")
        refs = demo["references"]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
            raise ValueError(f"{where}: references must be a non-empty list of strings")
        rating = demo["rating"]
        if isinstance(rating, bool) or not isinstance(rating, int) or rating not in (1, 2, 3):
            raise ValueError(f"{where}: rating must be 1, 2 or 3, not {rating!r}")
        demos.append(dict(demo))
    return tuple(demos)


def load_lave_prompts(directory: Path = PROMPTS_DIR) -> LavePrompts:
    """Read lave_task.txt, lave_demos.json and lave_demos_binary.json from `directory` (validated)."""
    directory = Path(directory)
    task = read_prompt(directory, TASK_FILE).strip()
    if not task:
        raise ValueError(f"{directory / TASK_FILE}: the task description is empty")
    demos, binary = (_check_demos(read_json_prompt(directory, name), directory / name)
                     for name in (DEMO_FILE, BINARY_DEMO_FILE))
    return LavePrompts(task=task, demos=demos, binary_demos=binary)


def prompt_texts(prompts: LavePrompts) -> dict[str, str]:
    """The prompt texts to hash into results: the task text and each demonstration list as canonical JSON
    (sorted keys, compact separators, UTF-8 kept), so the hash ignores the files' layout but not their content."""
    def canonical(demos: tuple[dict, ...]) -> str:
        return json.dumps(list(demos), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return {"lave_task": prompts.task, "lave_demos": canonical(prompts.demos),
            "lave_demos_binary": canonical(prompts.binary_demos)}


# --------------------------------------------------------------------------------------------- references

def _check_references(references: list[str]) -> list[str]:
    if isinstance(references, str) or not references:
        raise ValueError("LAVE needs a non-empty list of reference answers")
    return [str(ref) for ref in references]


def filter_references(references: list[str], share: float = DEFAULT_SHARE) -> list[str]:
    """Drop every answer whose count is at most `share` of the most common answer's count (order kept)."""
    references = _check_references(references)
    if not 0 <= share < 1:
        raise ValueError(f"share must be in [0, 1), not {share!r}")
    counts = Counter(references)
    top = max(counts.values())
    return [ref for ref in references if counts[ref] / top > share]


def is_binary_question(references: list[str]) -> bool:
    """True when the most common reference, lower-cased and without a trailing '.', is "yes" or "no"."""
    references = _check_references(references)
    answer = Counter(references).most_common(1)[0][0]
    return answer.strip().lower().rstrip(".") in ("yes", "no")


def format_references(references: list[str]) -> str:
    """The references sorted (duplicates kept), each in single quotes, joined by ", "."""
    return ", ".join(f"'{ref}'" for ref in sorted(_check_references(references)))


# --------------------------------------------------------------------------------------------- the prompt

def _block(question: str, references: list[str], candidate: str, output: str) -> str:
    return (f"Question: '{question}'\nReference answers: {format_references(references)}\n"
            f"Candidate answer: '{candidate}'\nOutput: {output}")


def build_lave_prompt(prompts: LavePrompts, question: str, references: list[str], candidate: str, *,
                      shots: int = DEFAULT_SHOTS, filter_refs: bool = True) -> str:
    """The full judge prompt for one item: task, the first `shots` demonstrations (binary ones for a yes/no
    question), then the item with an empty "Output:"."""
    references = _check_references(references)
    if isinstance(shots, bool) or not isinstance(shots, int) or shots < 0:
        raise ValueError(f"shots must be a non-negative integer, not {shots!r}")
    demos = prompts.binary_demos if is_binary_question(references) else prompts.demos
    blocks = [_block(d["question"], d["references"], d["candidate"], f"{d['rationale']} So rating={d['rating']}")
              for d in demos[:shots]]
    shown = filter_references(references) if filter_refs else references
    blocks.append(_block(question, shown, "" if candidate is None else str(candidate), ""))
    return (prompts.task.strip() + "\n\n" + "\n\n".join(blocks)).strip()


def lave_messages(prompt: str) -> list[dict]:
    """The prompt as chat messages for the judge: one user message."""
    return [{"role": "user", "content": prompt}]


# --------------------------------------------------------------------------------------------- the reply

_WORD = re.compile(r"[^\W\d_]{2,}")  # a word of two letters or more
# A trailing rating: optional "So"/"so," then an optional "rating" label ("rating=", "rating:", "rating is", "the
# rating is") then a lone 1, 2 or 3, then closing punctuation / markdown. A final bare 1-3 alone matches too.
_TRAILING_RATING = re.compile(
    r"(?:\bso\b[\s,]*)?(?:(?:\bthe\s+)?\brating\b[\s*_]*(?:is\b)?[\s*_]*[:=]?[\s*_]*)?(?<![\w.])[123][\s.!*_)]*$",
    re.IGNORECASE)


def split_lave_reply(text: str | None) -> str:
    """The rationale of a judge reply: the reply stripped, without a trailing "So rating=r", "rating: r" or final
    bare digit 1-3 (only the last one; a rating stated mid-text stays). None or a non-string gives ""."""
    if not isinstance(text, str):
        return ""
    text = text.strip()
    return _TRAILING_RATING.sub("", text, count=1).strip()


def has_rationale(text: str | None) -> bool:
    """Whether the reply says anything (a word) beside its rating: "3" or "So rating=3" alone has no rationale."""
    return bool(_WORD.search(split_lave_reply(text)))


def reply_problem(text: str | None) -> str | None:
    """Why a judge reply is not a LAVE judgement (evaluator.judge.judgement's one rule; a reply with neither a rating
    nor a word, "..." or "5", neither), or None when it is one. A bare rating ("3") is one, as the reference reads the
    last token; the scorer flags it (no_rationale)."""
    rated = parse_lave_rating(text) is not None
    problem = not_a_judgement(text, has_verdict=rated)
    return problem or (None if rated or has_rationale(text) else NOTHING)
