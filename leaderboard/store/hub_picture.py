"""The Hub store's in-process picture of one repo: which files it holds at one head commit, with their blob ids, and
the bytes of the files already read, kept by blob id.

A `Picture` is immutable: a refresh or one of the store's own commits makes a new one, so a reader holding one sees a
consistent repo. It knows the files of the folders it has listed (recursively), of the repo's root folder, and of
single paths asked one by one; a path outside all three is unknown to it (the store asks the Hub once, then knows).
`Contents` holds file bytes by blob id: small files for as long as a picture names them, large ones (details parquet
files) in a least-recently-used cache bounded in bytes. Nothing here calls the Hub.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterable, Mapping

ROOT = ""  # the repo's root folder, listed without recursion: the top-level files (leaderboard.parquet, README.md)
SMALL_FILE_BYTES = 256 * 1024  # a regular (non-LFS) file up to this size is fetched as soon as a refresh sees it


def blob_id(data: bytes) -> str:
    """The git blob id of `data`, as the Hub's tree gives it for a regular file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer_id(data: bytes) -> str:
    """The git blob id of the LFS pointer of `data`: what the Hub's tree gives for a file stored with LFS."""
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{hashlib.sha256(data).hexdigest()}\n" \
              f"size {len(data)}\n"
    return blob_id(pointer.encode())


@dataclass(frozen=True)
class Entry:
    """One file of the repo: its blob id (an LFS file's: its pointer's), its size in bytes, whether it is LFS."""

    oid: str
    size: int
    lfs: bool = False

    @property
    def small(self) -> bool:
        return not self.lfs and self.size <= SMALL_FILE_BYTES


def top_folder(path: str) -> str:
    """The top-level folder a path is in (ROOT for a file at the root)."""
    return path.split("/", 1)[0] if "/" in path else ROOT


@dataclass(frozen=True)
class Picture:
    """The repo at commit `head`: the files of the listed `folders` (top-level names; ROOT: the root's own files)
    and of the `singles` asked one by one (a single absent from `files` is known to be absent)."""

    head: str
    files: Mapping[str, Entry] = field(default_factory=dict)
    folders: frozenset[str] = frozenset()
    singles: frozenset[str] = frozenset()

    def knows(self, path: str) -> bool:
        """Whether the picture can say what the repo holds at `path` (a file, or nothing)."""
        return top_folder(path) in self.folders or path in self.singles

    def lists(self, folder: str) -> bool:
        """Whether the picture holds every file under `folder` (a folder inside a listed top-level folder counts)."""
        return top_folder(folder + "/") in self.folders

    def under(self, folder: str) -> list[str]:
        """The files under `folder` (requires lists(folder))."""
        base = folder.rstrip("/") + "/"
        return sorted(path for path in self.files if path.startswith(base))

    def uncovered_singles(self) -> list[str]:
        """The singles no listed folder covers: what a refresh asks about by path."""
        return sorted(path for path in self.singles if top_folder(path) not in self.folders)

    def learned(self, files: Mapping[str, Entry], folders: Iterable[str] = (), singles: Iterable[str] = ()) -> "Picture":
        """The same head with more known: `files` found in the new `folders` or for the new `singles`."""
        return Picture(self.head, {**self.files, **files}, self.folders | frozenset(folders),
                       self.singles | frozenset(singles))

    def committed(self, head: str, changes: Mapping[str, Entry | None]) -> "Picture":
        """The picture after a commit on this head that made `changes` (None: deleted); changed paths become known."""
        files = dict(self.files)
        for path, entry in changes.items():
            if entry is None:
                files.pop(path, None)
            else:
                files[path] = entry
        return Picture(head, files, self.folders, self.singles | frozenset(p for p in changes if not self.knows(p)))


class Contents:
    """File bytes by blob id: small files (kept while a picture names them) and large ones (least recently used out
    beyond `large_bytes`). Thread-safe."""

    def __init__(self, large_bytes: int):
        self.large_bytes = large_bytes
        self._small: dict[str, bytes] = {}
        self._large: OrderedDict[str, bytes] = OrderedDict()
        self._large_total = 0
        self._lock = threading.Lock()

    def get(self, oid: str) -> bytes | None:
        with self._lock:
            if oid in self._small:
                return self._small[oid]
            data = self._large.get(oid)
            if data is not None:
                self._large.move_to_end(oid)
            return data

    def put(self, oid: str, data: bytes, small: bool) -> None:
        with self._lock:
            if small:
                self._small[oid] = data
                return
            if len(data) > self.large_bytes or oid in self._large:
                return
            self._large[oid] = data
            self._large_total += len(data)
            while self._large_total > self.large_bytes:
                _, dropped = self._large.popitem(last=False)
                self._large_total -= len(dropped)

    def keep_only(self, oids: set[str]) -> None:
        """Forget the small files no picture names any more (large ones leave by age and size)."""
        with self._lock:
            for oid in [oid for oid in self._small if oid not in oids]:
                del self._small[oid]

    def sizes(self) -> tuple[int, int]:
        """(bytes of small files, bytes of large files) held."""
        with self._lock:
            return sum(map(len, self._small.values())), self._large_total
