"""The store's damaged files: each reader skips a file it cannot read and reports it here, with the reason.

A damaged request or results file (over the size limit, not UTF-8, not JSON, nested too deep, not an object, a field
missing or of the wrong kind) must never stop the service: the reader leaves it out and goes on. Every JSON file of
the store is parsed by `parse_json` (or `read_json_file`, which refuses a file by its size before reading it), which
turns any failure to parse into a `DamagedFile` with a one-line reason. The ledger logs each damaged file once
(again only when its reason changes), forgets it once a full scan finds it readable again or gone, and the Queue
tab lists what it holds (path and reason, never the file's content).
"""
from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

REASON_CHARS = 240  # a reason is one short line
# The largest JSON file a store reads: a results file is well under 1 MB and a request a few KB, so a file over this
# is damage (or an attack), refused before it is decoded.
MAX_JSON_BYTES = 8 * 1024 * 1024
# The deepest nesting a JSON file of the store may have: results and requests nest about 5 levels; a file nested far
# deeper would make later steps (saving a request, building the board) hit Python's recursion limit.
MAX_JSON_DEPTH = 64


class DamagedFile(ValueError):
    """A stored file that cannot be read as what its path says it is; the message is the reason (no content)."""


def short_reason(error: BaseException | str) -> str:
    """One line naming what is wrong: the error's kind and message, cut to REASON_CHARS."""
    text = error if isinstance(error, str) else (
        str(error) if isinstance(error, DamagedFile) else f"{type(error).__name__}: {error}")
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def _over_limit(size: int, limit: int) -> DamagedFile:
    return DamagedFile(f"{size} bytes, over the {limit}-byte limit of a JSON file of the store")


def _too_deep() -> DamagedFile:
    return DamagedFile(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def _within_depth(value, limit: int) -> bool:
    """Whether no list or object in `value` is nested deeper than `limit` levels (walked without recursion)."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return True


def parse_json(data: bytes | str, limit: int = MAX_JSON_BYTES):
    """The JSON value `data` (a stored file's bytes) holds. Raises DamagedFile, with a one-line reason and never the
    content, when it is over `limit` bytes (checked before decoding), not UTF-8, not JSON, nested deeper than
    MAX_JSON_DEPTH levels (a RecursionError included) or too large to parse (MemoryError)."""
    if len(data) > limit:
        raise _over_limit(len(data), limit)
    try:
        value = json.loads(data if isinstance(data, str) else data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DamagedFile(f"not UTF-8 ({short_reason(exc)})") from None
    except RecursionError:
        raise _too_deep() from None
    except MemoryError:
        raise DamagedFile("too large to parse (MemoryError)") from None
    except ValueError as exc:
        raise DamagedFile(f"not JSON ({short_reason(exc)})") from None
    if not _within_depth(value, MAX_JSON_DEPTH):
        raise _too_deep()
    return value


def read_json_file(file: Path, limit: int = MAX_JSON_BYTES):
    """The JSON value of a file on disk (see parse_json); a file over `limit` bytes is refused by its size, before
    a byte of it is read. Raises FileNotFoundError when it is absent."""
    with open(file, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise _over_limit(size, limit)
        data = handle.read(limit + 1)
    return parse_json(data, limit)


@dataclass
class DamagedFiles:
    """Path -> reason of the damaged files one store has met (thread-safe; one ledger per store object)."""

    _found: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def report(self, path: str, reason: BaseException | str) -> None:
        """`path` could not be read: remember it, and log it unless it was already known with this reason."""
        text = short_reason(reason)
        with self._lock:
            known = self._found.get(path) == text
            self._found[path] = text
        if not known:
            log.warning("damaged file skipped: %s (%s)", path, text)

    def settle(self, prefix: str, damaged: set[str]) -> None:
        """After a scan of every file under `prefix`: those not in `damaged` read again (or are gone). A scan lists
        no dot name (the store's listings skip them), so a damaged dot file (the Jobs budget's ledger) stays listed
        until its own reader finds it readable."""
        with self._lock:
            for path in [p for p in self._found if p.startswith(prefix + "/") and p not in damaged
                         and not p.rsplit("/", 1)[-1].startswith(".")]:
                del self._found[path]
                log.info("file readable again (or removed): %s", path)

    def clear(self, path: str) -> None:
        with self._lock:
            self._found.pop(path, None)

    def listing(self) -> list[tuple[str, str]]:
        """(path, reason) of every known damaged file, sorted by path."""
        with self._lock:
            return sorted(self._found.items())
