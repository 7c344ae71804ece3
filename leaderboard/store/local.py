"""The embedded default store: a folder on disk, atomic writes and a file lock."""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Iterator

from filelock import FileLock

from leaderboard.store.damage import DamagedFiles


def _safe_relative(path: str) -> PurePosixPath:
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ValueError(f"store path must be relative and stay inside the store: {path!r}")
    return rel


class LocalStore:
    """A folder laid out as DESIGN.md's store layout. Every write is a temp file + os.replace."""

    def __init__(self, root: Path, lock_timeout: float = 60.0):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(self.root / ".queue.lock"), timeout=lock_timeout)
        self.damaged = DamagedFiles()  # files its readers met and skipped (see leaderboard.store.damage)

    def _abs(self, path: str) -> Path:
        return self.root.joinpath(*_safe_relative(path).parts)

    def read_bytes(self, path: str) -> bytes | None:
        try:
            return self._abs(path).read_bytes()
        except FileNotFoundError:
            return None

    def write_bytes(self, path: str, data: bytes) -> None:
        target = self._abs(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def read_json(self, path: str) -> dict | None:
        data = self.read_bytes(path)
        return None if data is None else json.loads(data)

    def write_json(self, path: str, obj: dict) -> None:
        self.write_bytes(path, json.dumps(obj, indent=2, sort_keys=True, default=str).encode())

    def write_many(self, files: dict[str, bytes | None]) -> None:
        """Write (or, for None, delete) several files in order; each one atomically (the Hub store makes this one
        commit)."""
        for path, data in files.items():
            if data is None:
                self.delete(path)
            else:
                self.write_bytes(path, data)

    def delete(self, path: str) -> None:
        try:
            self._abs(path).unlink()
        except FileNotFoundError:
            pass

    def list(self, prefix: str, suffix: str = "") -> list[str]:
        base = self._abs(prefix)
        if not base.exists():
            return []
        found = []
        for item in base.rglob("*"):
            if item.is_file() and not item.name.startswith(".") and item.name.endswith(suffix):
                found.append(item.relative_to(self.root).as_posix())
        return sorted(found)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Held around every read-modify-write of a request (claims, heartbeats, recovery)."""
        with self._lock:
            yield
