"""The Hub store's read side: the current picture of each repo (leaderboard.store.hub_picture), brought up to date by
`refresh` and by the store's own commits, and the bytes of files by blob id.

A refresh asks for the head commit (one call); only when it moved are the folders the picture holds listed again
(and the single paths it knows asked about in one call), and the small files whose blob id changed fetched, in memory,
a few at once. Large files are fetched when first read and kept in a cache bounded in bytes. Thread-safe: a picture
is swapped in only over the one it was made from.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from leaderboard.store.hub_calls import HubCalls, HubStoreError, RevisionGone
from leaderboard.store.hub_picture import Contents, Entry, Picture, blob_id, lfs_pointer_id

FETCH_THREADS = 8  # files fetched at once when a refresh finds many changed


class Pictures:
    """The pictures of `repos`, read through `calls`; large files cached up to `cache_bytes`."""

    def __init__(self, calls: HubCalls, repos: list[str], cache_bytes: int):
        self.calls = calls
        self.contents = Contents(cache_bytes)
        self._current: dict[str, Picture | None] = {repo: None for repo in repos}
        self._locks = {repo: threading.RLock() for repo in repos}
        self._checked_at: dict[str, float] = {}

    def current(self, repo: str) -> Picture:
        """The current picture of `repo` (its first use asks for the head commit)."""
        picture = self._current[repo]
        if picture is None:
            self.refresh_repo(repo)
            picture = self._current[repo]
        return picture

    def head(self, repo: str) -> str | None:
        """The head commit the picture is at (None before the first use)."""
        picture = self._current.get(repo)
        return None if picture is None else picture.head

    # ------------------------------------------------------------------------------------------------ refreshing

    def refresh(self, max_age: float = 0.0) -> None:
        """Bring each picture to its repo's head (a repo checked within `max_age` seconds is skipped)."""
        for repo in self._current:
            if time.monotonic() - self._checked_at.get(repo, float("-inf")) >= max_age:
                self.refresh_repo(repo)

    def refresh_repo(self, repo: str, attempts: int = 3) -> None:
        """Bring the picture of `repo` to its head; read again from the new head when the one being read is
        squashed away meanwhile."""
        for attempt in range(attempts):
            try:
                return self._refresh_repo(repo)
            except RevisionGone:
                if attempt == attempts - 1:
                    raise

    def _refresh_repo(self, repo: str) -> None:
        old = self._current[repo]
        head = self.calls.head(repo)
        self._checked_at[repo] = time.monotonic()
        if old is not None and head == old.head:
            return
        if old is None:
            new = Picture(head)
        else:
            files: dict[str, Entry] = {}
            for folder in sorted(old.folders):
                files.update(self.calls.folder(repo, folder, head))
            singles = old.uncovered_singles()
            if singles:
                files.update(self.calls.paths(repo, singles, head))
            new = Picture(head, files, old.folders, old.singles)
            self.prefetch(repo, new, files)
        with self._locks[repo]:
            if self._current[repo] is not old:
                return  # moved on meanwhile (our own commit, or another refresh): theirs is as new
            self._current[repo] = new
        self._forget_unnamed()

    def _forget_unnamed(self) -> None:
        """Drop the small files no current picture names (older versions of rewritten files)."""
        named = {entry.oid for picture in self._current.values() if picture is not None
                 for entry in picture.files.values()}
        self.contents.keep_only(named)

    def learn(self, repo: str, picture: Picture, folders: tuple[str, ...] = (), singles: tuple[str, ...] = ()) \
            -> Picture:
        """`picture` with `folders` listed and `singles` asked about at its head (their small files fetched); the
        current picture learns them too when it is at the same head."""
        files: dict[str, Entry] = {}
        for folder in folders:
            files.update(self.calls.folder(repo, folder, picture.head))
        if singles:
            files.update(self.calls.paths(repo, list(singles), picture.head))
        self.prefetch(repo, picture, files)
        with self._locks[repo]:
            current = self._current[repo]
            if current is not None and current.head == picture.head:
                self._current[repo] = current.learned(files, folders, singles)
        return picture.learned(files, folders, singles)

    def prefetch(self, repo: str, picture: Picture, files: dict[str, Entry]) -> None:
        """Fetch, in memory and a few at once, the small files among `files` whose bytes are not held yet. A head
        squashed away meanwhile ends it quietly: it only saves calls, and a read fetches what it needs itself."""
        wanted = [(path, entry) for path, entry in files.items()
                  if entry.small and self.contents.get(entry.oid) is None]

        def fetch(item: tuple[str, Entry]) -> None:
            path, entry = item
            try:
                data = self.calls.fetch(repo, path, picture.head)
            except RevisionGone:
                return
            if data is not None:
                self.contents.put(entry.oid, data, small=True)

        if len(wanted) <= 1:
            for item in wanted:
                fetch(item)
            return
        with ThreadPoolExecutor(max_workers=FETCH_THREADS, thread_name_prefix="hub-fetch") as pool:
            list(pool.map(fetch, wanted))

    # ------------------------------------------------------------------------------------------------ bytes

    def bytes(self, repo: str, name: str, picture: Picture, entry: Entry) -> bytes | None:
        """The bytes of `entry` (at `name` in `picture`): held, or fetched at the picture's head once per blob id.
        Raises RevisionGone when the Hub no longer has that head (its history was squashed)."""
        data = self.contents.get(entry.oid)
        if data is None:
            data = self.calls.fetch(repo, name, picture.head)
            if data is not None:
                self.contents.put(entry.oid, data, small=entry.small)
        return data

    def committed(self, repo: str, picture: Picture, oid: str, changes: dict[str, bytes | None],
                  lfs: set[str]) -> None:
        """Our commit `oid` on `picture.head` landed with `changes` (None: deleted; `lfs`: the paths the Hub took as
        LFS files): the current picture moves to it, and our bytes are kept by their blob ids."""
        entries: dict[str, Entry | None] = {}
        for path, data in changes.items():
            if data is None:
                entries[path] = None
                continue
            entry = Entry(lfs_pointer_id(data) if path in lfs else blob_id(data), len(data), path in lfs)
            self.contents.put(entry.oid, data, small=entry.small)
            entries[path] = entry
        with self._locks[repo]:
            current = self._current[repo]
            if current is None or current.head == picture.head:
                self._current[repo] = (current or picture).committed(oid, entries)
        self._forget_unnamed()


__all__ = ["Pictures", "HubStoreError"]
