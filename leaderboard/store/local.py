"""The embedded default store: a folder on disk, atomic writes and a file lock.

The store is its folder and its paths: a symbolic link (a file, or a folder anywhere on the way), whether it leads out
of the store or to another of its files, is never read, listed or written through. The store never makes one, so a
link is someone's trick: a details file linked to a request file would otherwise be served as that run's details. A
file behind a link is absent to the store's readers, and a write through a linked folder is refused (PathRefused).
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Iterator

from filelock import FileLock

from leaderboard.store.damage import DamagedFiles, read_json_file
from leaderboard.store.interface import PathRefused

log = logging.getLogger(__name__)


def _safe_relative(path: str) -> PurePosixPath:
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise PathRefused(f"store path must be relative and stay inside the store: {path[:200]!r}")
    return rel


class LocalStore:
    """A folder laid out as DESIGN.md's store layout. Every write is a temp file + os.replace."""

    def __init__(self, root: Path, lock_timeout: float = 60.0):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._real_root = Path(os.path.realpath(self.root))
        self._lock = FileLock(str(self.root / ".queue.lock"), timeout=lock_timeout)
        self.damaged = DamagedFiles()  # files its readers met and skipped (see leaderboard.store.damage)

    def _abs(self, path: str) -> Path:
        return self.root.joinpath(*_safe_relative(path).parts)

    def _inside(self, where: Path) -> bool:
        """Whether `where`, symbolic links followed, is the store's folder or inside it."""
        return Path(os.path.realpath(where)).is_relative_to(self._real_root)

    def _unlinked(self, where: Path) -> bool:
        """Whether `where` (under the store's folder) is reached through no symbolic link: its real path is the
        store's real folder joined with its path in the store."""
        return Path(os.path.realpath(where)) == self._real_root.joinpath(*where.relative_to(self.root).parts)

    def local_file(self, path: str) -> Path | None:
        """The regular file the store holds at `path`; None when there is none, or when a symbolic link is on the way
        (into the store or out of it: its target is never read)."""
        target = self._abs(path)
        if not self._unlinked(target):
            where = "out of the store" if not self._inside(target) else "inside the store"
            log.warning("not read: %s is a symbolic link (or in a folder that is one) %s", path, where)
            return None
        return target if target.is_file() else None

    def _folder_to_write(self, target: Path) -> Path:
        """The folder of `target`, made when missing; PathRefused when a symbolic link is on the way (checked before
        anything is made, and again after)."""
        folder = target.parent
        if self._unlinked(folder):
            folder.mkdir(parents=True, exist_ok=True)
            if self._unlinked(folder):
                return folder
        raise PathRefused(f"not written: {target.relative_to(self.root).as_posix()[:200]!r} goes through a symbolic "
                          "link")

    def read_bytes(self, path: str) -> bytes | None:
        target = self.local_file(path)
        try:
            return None if target is None else target.read_bytes()
        except FileNotFoundError:
            return None

    def write_bytes(self, path: str, data: bytes) -> None:
        target = self._abs(path)
        folder = self._folder_to_write(target)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=target.suffix)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)  # replaces a symbolic link itself, never its target
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def read_json(self, path: str) -> dict | None:
        """The JSON value of the file at `path` (None when there is none); DamagedFile when it cannot be parsed, a
        file over the size limit refused by its size before it is read."""
        target = self.local_file(path)
        try:
            return None if target is None else read_json_file(target)
        except FileNotFoundError:
            return None

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
        """Remove the file at `path` (a symbolic link itself, never its target); absent is fine."""
        target = self._abs(path)
        if not self._unlinked(target.parent):
            raise PathRefused(f"not deleted: {path[:200]!r} is in a linked folder (a symbolic link)")
        try:
            target.unlink()
        except FileNotFoundError:
            pass

    def list(self, prefix: str, suffix: str = "") -> list[str]:
        """Regular files under the folder `prefix` whose name ends with `suffix` (names starting with "." skipped);
        never a symbolic link, nor a file in a linked folder."""
        base = self._abs(prefix)
        if not base.is_dir() or not self._unlinked(base):
            return []
        found = []
        for folder, _, names in os.walk(base):  # followlinks=False: a linked folder is not entered
            for name in names:
                item = Path(folder, name)
                if not name.startswith(".") and name.endswith(suffix) and item.is_file() \
                        and not item.is_symlink():  # walked folders are not links
                    found.append(item.relative_to(self.root).as_posix())
        return sorted(found)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Held around every read-modify-write of a request (claims, heartbeats, recovery)."""
        with self._lock:
            yield

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        """A folder has no commit budget: writes never wait for one."""
        yield

    def refresh(self, max_age: float = 0.0) -> None:
        """Reads go to the folder itself: nothing to bring up to date."""
