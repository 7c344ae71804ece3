"""A model's config.json (and the small JSON files beside it), read once the same way for everyone: the CLI's preflight
and the adapter (architectures.describe_model_folder), and the Space's Submit tab (through evaluator.api).

The file is the model author's, so it is read as untrusted data: one too large, not UTF-8, not JSON, nested deeper
than MAX_DEPTH levels (the parser's RecursionError included), not an object, or whose fields that name the model
are of the wrong kind (`architectures` not a list of names, `model_type` not text, `text_config` or `vision_config`
not an object) is refused as "unreadable config.json: <reason>", never with an exception's name. `remote_code` finds
an `auto_map` (or `custom_pipelines`) at any depth, inside `text_config` and `vision_config` too. A refusal quotes a
value through `quoted` or `named`: at most QUOTE_CHARS characters of it, escaped. A generation_config.json is read
alike (`read_generation_config`), its decoding fields checked by evaluator.models.decoding.generation_problem.
"""
from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path

from evaluator.models.base import UnsupportedModelError
from evaluator.models.decoding import generation_problem

MAX_BYTES = 16 * 1024 * 1024  # a config.json is a few kB; a tokenizer's config some hundred kB
MAX_HEADER_BYTES = 100 * 1024 * 1024  # a safetensors header larger than this is not a header
MAX_DEPTH = 32  # a config nests 3 or 4 levels (text_config.rope_scaling, quantization_config...)
QUOTE_CHARS = 120  # the most of one value a refusal quotes
MAX_NAME = 200  # the longest class name `architectures` may hold (transformers' are under 60 characters)
CUSTOM_CODE_KEYS = ("auto_map", "custom_pipelines")  # what points at code in the repo (trust_remote_code)
_KINDS = (("architectures", list, "a list of class names"), ("model_type", str, "text"),
          ("text_config", dict, "an object"), ("vision_config", dict, "an object"))
_KIND_NAMES = {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number", float: "a number"}


class UnreadableConfig(UnsupportedModelError):
    """A model's JSON file that cannot be read as what it should be: "unreadable <file name>: <reason>"."""


def quoted(value: object, limit: int = QUOTE_CHARS) -> str:
    """A value from the file as a refusal quotes it: text in quotes with every control character escaped, at most
    `limit` characters of it ("…" where cut); anything else by its kind."""
    if isinstance(value, str):
        return repr(value[:limit]) + ("…" if len(value) > limit else "")
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)[:limit]
    return _KIND_NAMES.get(type(value), "a value")


def named(value: object, limit: int = QUOTE_CHARS) -> str:
    """A name from the file (an architecture, a model type) as a message shows it: as is when it is short printable
    text, else quoted."""
    if isinstance(value, str) and value.isprintable() and 0 < len(value) <= limit:
        return value
    return quoted(value, limit)


def _within_depth(value: object, limit: int) -> bool:
    """Whether no object or list in `value` nests deeper than `limit` levels (walked without recursion)."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return True


def read_json_object(path: Path | str) -> dict:
    """The JSON object a model's small JSON file holds; UnreadableConfig ("unreadable <name>: <reason>") when it
    cannot be read (OSError included), is over MAX_BYTES (refused by its size before it is read), is not UTF-8 JSON,
    nests deeper than MAX_DEPTH or is not an object."""
    path = Path(path)

    def unreadable(reason: str) -> UnreadableConfig:
        return UnreadableConfig(f"unreadable {named(path.name, 60)}: {reason}")

    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_BYTES:
                raise unreadable(f"{size} bytes, over the {MAX_BYTES // (1024 * 1024)} MB such a file may have")
            data = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise unreadable(f"it could not be read ({error.strerror or 'an error of the file system'})") from None
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise unreadable("not UTF-8 text") from None
    except RecursionError:
        raise unreadable(f"nested deeper than {MAX_DEPTH} levels") from None
    except MemoryError:
        raise unreadable("too large to parse") from None
    except ValueError as error:
        raise unreadable(f"not valid JSON ({' '.join(str(error).split())[:QUOTE_CHARS]})") from None
    if not isinstance(value, dict):
        raise unreadable(f"{_KIND_NAMES.get(type(value), 'a value')}, not a JSON object")
    if not _within_depth(value, MAX_DEPTH):
        raise unreadable(f"nested deeper than {MAX_DEPTH} levels")
    return value


def config_problem(config: dict) -> str:
    """Why a config.json's object cannot name the model ("" when it can): a field of the wrong kind (the model_type
    of its text_config and vision_config included), or an architecture that is no class name (a Python identifier of
    at most MAX_NAME characters)."""
    for name, kind, said in _KINDS:
        value = config.get(name)
        if value is not None and not isinstance(value, kind):
            return f"{name} is {_KIND_NAMES.get(type(value), 'a value')}, not {said}"
    for part in ("text_config", "vision_config"):
        value = (config.get(part) or {}).get("model_type")
        if value is not None and not isinstance(value, str):
            return f"{part}.model_type is {_KIND_NAMES.get(type(value), 'a value')}, not text"
    for name in config.get("architectures") or []:
        if not (isinstance(name, str) and name.isidentifier() and len(name) <= MAX_NAME):
            return f"architectures holds {quoted(name)}, not a class name"
    return ""


def read_config(path: Path | str) -> dict:
    """A model's config.json, read (read_json_object) and its naming fields checked (config_problem);
    UnreadableConfig ("unreadable config.json: <reason>") when it cannot be."""
    config = read_json_object(path)
    problem = config_problem(config)
    if problem:
        raise UnreadableConfig(f"unreadable {named(Path(path).name, 60)}: {problem}")
    return config


def read_generation_config(path: Path | str) -> dict:
    """A model's generation_config.json, read (read_json_object) and the fields decoding reads checked
    (decoding.generation_problem); UnreadableConfig ("unreadable generation_config.json: <field> is <value>, <what
    it should be>") when it cannot be."""
    path = Path(path)
    config = read_json_object(path)
    problem = generation_problem(config)
    if problem:
        raise UnreadableConfig(f"unreadable {path.name}: {problem}")
    return config


def remote_code(config: dict) -> str:
    """Where a model's JSON object points at code in its repo ("" nowhere): "auto_map", "text_config.auto_map"...
    (the first found, breadth first, walked without recursion)."""
    queue = [(config, "")]
    while queue:
        item, where = queue.pop(0)
        for key in CUSTOM_CODE_KEYS:
            if item.get(key):
                return f"{where}{key}"
        queue.extend((value, f"{where}{named(key, 60)}.") for key, value in item.items() if isinstance(value, dict))
    return ""


def safetensors_parameters(path: Path | str) -> int:
    """Parameters in one safetensors file, from its header (an 8-byte little-endian length, then JSON), read without
    its tensors; ValueError naming the file when it is not one (too short, an implausible or unreadable header, a
    tensor without a shape of whole numbers). OSError as reading raises it."""
    path = Path(path)
    with open(path, "rb") as handle:
        raw = handle.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path.name} is not a safetensors file (too short).")
        (length,) = struct.unpack("<Q", raw)
        if length > MAX_HEADER_BYTES:
            raise ValueError(f"{path.name} has an implausible safetensors header.")
        data = handle.read(length)
    unreadable = ValueError(f"{path.name} has an unreadable safetensors header.")
    try:
        header = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise unreadable from None
    if not isinstance(header, dict):
        raise unreadable
    total = 0
    for key, info in header.items():
        shape = info.get("shape") if isinstance(info, dict) else None
        if key == "__metadata__":
            continue
        if not isinstance(shape, list) or not all(type(dim) is int and dim >= 0 for dim in shape):
            raise unreadable  # a tensor without a shape of whole numbers: not a safetensors file
        total += math.prod(shape)
    return total


__all__ = ["CUSTOM_CODE_KEYS", "MAX_BYTES", "MAX_DEPTH", "MAX_HEADER_BYTES", "UnreadableConfig", "config_problem",
           "named", "quoted", "read_config", "read_generation_config",
           "read_json_object", "remote_code", "safetensors_parameters"]
