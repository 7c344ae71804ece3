"""Reading ReForm-Eval files from a local path, an http(s) URL or hf://datasets/<org>/<name>[@rev]/<file>.

Every Hub file (data, choice lists, images given as hf:// paths) is fetched through `hub_file`, the one place a
test replaces to stand in for the Hub.
"""
from __future__ import annotations

import json
from typing import Callable

from evaluator.inputs import sources


def hub_file(repo_id: str, filename: str, revision: str | None) -> str:
    """A Hub dataset file's local path, through the Hub cache (evaluator.inputs.sources.hf_download)."""
    return sources.hf_download(repo_id, filename, revision)


def read_data(source: str) -> tuple[str, Callable[[str], str]]:
    """(text, resolve(ref) -> str): the file's text and how a path written relative to it resolves."""
    return sources.read_source(source, "ReForm-Eval data", download=lambda *args: hub_file(*args))


def item_records(text: str, source: str) -> list:
    """The records of a file in the "items" layout: `{"data": [...]}` (with any other keys) or a bare list."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not valid JSON ({exc})") from None
    if isinstance(data, dict):
        data = data.get("data")
    if not isinstance(data, list):
        raise ValueError(f"{source}: expected a list of items or an object with a 'data' list")
    return data


def choice_list(source: str) -> list:
    """A distractor list file: rows with a "choice" field (as the official loaders read it), or bare values."""
    text, _ = read_data(source)
    rows = sources.json_records(text, source, ("choice", "choices", "data"))
    values = [row.get("choice") if isinstance(row, dict) else row for row in rows]
    if not values or any(v is None or isinstance(v, (dict, list)) for v in values):
        raise ValueError(f"{source}: expected a list of choices")
    return values
