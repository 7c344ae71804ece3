"""The responses journal: every model response of a run, recorded as it is produced, so that a run of the same
request that starts again (a killed worker, a restarted Space) reuses what the model already answered.

One JSON-lines file per benchmark, <responses folder>/<benchmark>.jsonl, appended, flushed and fsync'ed after each
chunk of items. A line is {"key", "item", "ask", "prompt", and "prediction" (generation) or "option_scores"
(option scoring)}, plus "hit_token_limit" for a generation whose adapter said how it ended and "tokens" ([prompt,
completion] token counts) where it counted them: the data the executor writes into the details rows, and the usage
a resumed run still counts. The key is the hash of what decides the
answer: the run's identity (model, revision, precision, suite), the benchmark, the item, the Ask's place among the
item's Asks, the prompt as the model's template renders the request's text (its images are not fetched to
compute it), every generation setting of the request (all GenerationRequest fields but text and images) and, for
option scoring, the options. A last line cut off by a kill is skipped when the journal is read. Only model
responses are journaled; a judge's grading is not (a resumed run grades again).
"""
from __future__ import annotations

import json
import os
from dataclasses import fields
from pathlib import Path

from evaluator.benchmarks.spec import Ask
from evaluator.inputs.prompt_files import prompt_hash
from evaluator.models.base import GenerationRequest

ANSWER_FIELDS = ("prediction", "option_scores")  # what an entry answers with (generation, option scoring)


def generation_settings(request: GenerationRequest) -> dict:
    """Every field of a request that decides its answer besides its text and images."""
    return {f.name: getattr(request, f.name) for f in fields(GenerationRequest) if f.name not in ("text", "images")}


def read_entries(path: Path) -> dict[str, dict]:
    """key -> entry of a journal file (empty when there is none); unreadable lines (a cut-off last line) are skipped."""
    entries: dict[str, dict] = {}
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return entries
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("key"), str) and any(f in entry for f in ANSWER_FIELDS):
            entries.setdefault(entry["key"], entry)
    return entries


class Journal:
    """One benchmark's journal of model responses, for one run identity."""

    def __init__(self, folder: Path, benchmark: str, identity: dict):
        self.path = Path(folder) / f"{benchmark}.jsonl"
        self.benchmark, self.identity = benchmark, dict(identity)
        self.entries = read_entries(self.path)

    def key(self, ask: Ask, index: int, prompt: str) -> str:
        """The key of an Ask, the `index`-th of its item, whose text the model renders as `prompt`."""
        what = {"identity": self.identity, "benchmark": self.benchmark, "item": ask.item, "ask": index,
                "prompt": prompt, "settings": generation_settings(ask.request), "options": ask.options}
        return prompt_hash(json.dumps(what, sort_keys=True, ensure_ascii=False, default=str))

    def get(self, key: str) -> dict | None:
        return self.entries.get(key)

    def append(self, entries: list[dict]) -> None:
        """Record entries (each with its "key") at the end of the file, flushed to disk."""
        if not entries:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in entries).encode("utf-8")
        with open(self.path, "ab") as handle:
            if handle.tell() > 0 and not _ends_with_newline(self.path):
                text = b"\n" + text  # after a cut-off line: start on a line of our own
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        for entry in entries:
            self.entries.setdefault(entry["key"], entry)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
