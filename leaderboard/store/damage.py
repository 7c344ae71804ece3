"""The store's damaged files: each reader skips a file it cannot read and reports it here, with the reason.

A damaged request or results file (not JSON, not UTF-8, not an object, a field missing or of the wrong kind) must
never stop the service: the reader leaves it out and goes on. The ledger logs each damaged file once (again only
when its reason changes), forgets it once a full scan finds it readable again or gone, and the Queue tab lists
what it holds (path and reason, never the file's content).
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

REASON_CHARS = 240  # a reason is one short line


class DamagedFile(ValueError):
    """A stored file that cannot be read as what its path says it is; the message is the reason (no content)."""


def short_reason(error: BaseException | str) -> str:
    """One line naming what is wrong: the error's kind and message, cut to REASON_CHARS."""
    text = error if isinstance(error, str) else (
        str(error) if isinstance(error, DamagedFile) else f"{type(error).__name__}: {error}")
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


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
        """After a scan of every file under `prefix`: those not in `damaged` read again (or are gone)."""
        with self._lock:
            for path in [p for p in self._found if p.startswith(prefix + "/") and p not in damaged]:
                del self._found[path]
                log.info("file readable again (or removed): %s", path)

    def clear(self, path: str) -> None:
        with self._lock:
            self._found.pop(path, None)

    def listing(self) -> list[tuple[str, str]]:
        """(path, reason) of every known damaged file, sorted by path."""
        with self._lock:
            return sorted(self._found.items())
