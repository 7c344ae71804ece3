"""Prompt texts: read from a benchmark package's prompts/ folder, and hashed into the results.

Every prompt, template and demonstration file the project sends is written for this project and lives beside the
benchmark that sends it (evaluator/benchmarks/<name>/prompts/). `read_prompts` is the one loader; `prompt_hash`
names the exact text a model or a judge saw ("sha256:<hex>" of its UTF-8 bytes).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable


def prompts_dir(package_file: str) -> Path:
    """The prompts/ folder of the benchmark package whose __file__ (or a module's in it) is given."""
    return Path(package_file).resolve().parent / "prompts"


def read_prompt(folder: Path, name: str) -> str:
    """One prompt file's text; `name` without a suffix means "<name>.txt"."""
    path = Path(folder) / (name if "." in name else f"{name}.txt")
    return path.read_text(encoding="utf-8")


def read_prompts(folder: Path, names: Iterable[str]) -> dict[str, str]:
    """Several prompt files' texts, by name."""
    return {name: read_prompt(folder, name) for name in names}


def read_json_prompt(folder: Path, name: str):
    """A JSON prompt file (demonstrations, per-dataset questions); ValueError naming the file when it is not JSON."""
    path = Path(folder) / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from error


def prompt_hash(text: str) -> str:
    """"sha256:<hex>" of the UTF-8 text."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
