"""Signing out on the server: the time each user last signed out, so that a session cookie from before it no longer
signs anyone in, and the longest a sign-in lasts.

Gradio keeps the signed-in profile in a signed cookie (Starlette's SessionMiddleware), and its /logout only empties
the cookie of the browser that asked: a copy taken before would act on. So each session carries the time it signed
in (leaderboard.ui.sessions stamps it), and `SignOuts` says whether that session still stands: not once its user
signed out at or after that time, nor once it is older than the session's life (LEADERBOARD_SESSION_HOURS, 8 hours
by default, counted from the sign-in and never extended by use).

The sign-out times live in memory and in one small file of the store, `sessions/logouts.json`, so that a restart
still refuses an old cookie. The file names no one: each user is a keyed hash of the user name (the key comes from
the Space's OAuth secret, which also signs the cookies), and a time older than a session's life is dropped, since
every session signed in before it has ended anyway. A sign-out takes effect in memory at once; the file is written
by a background thread (one write at a time, each with every time known, so a burst of sign-outs is a commit or
two), and a write that fails is only logged: the next sign-out writes everything again. When the file cannot be read
at start, every session signed in before the start is refused (visitors sign in again), never one let through.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import math
import re
import threading
import time
from typing import Callable

from leaderboard.store import DamagedFile, Store
from leaderboard.submissions.identity import USER_NAME_RE

log = logging.getLogger(__name__)

LOGOUTS_PATH = "sessions/logouts.json"
SESSION_HOURS = 8.0  # the longest a sign-in lasts, counted from the sign-in (LEADERBOARD_SESSION_HOURS)
_PSEUDONYM = re.compile(r"^[0-9a-f]{32}$")
MAX_USERS = 100_000  # sign-outs kept at most (the newest): far more than a session's life ever holds


def user_name(name) -> str | None:
    """`name` when it can be a Hub user name, else None."""
    return name if isinstance(name, str) and USER_NAME_RE.match(name) else None


def _time(value) -> float | None:
    """A time (seconds since the epoch) read from a session or the file, or None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


class SignOuts:
    """Each user's last sign-out, in memory and in the store: whether a session signed in at some time still stands.

    `key`: the secret the user names are hashed with; `lifetime`: a session's life in seconds; `clock`: time.time."""

    def __init__(self, store: Store, key: bytes, lifetime: float = SESSION_HOURS * 3600,
                 clock: Callable[[], float] = time.time):
        self.store, self._key, self.lifetime, self.clock = store, key, float(lifetime), clock
        self._lock = threading.Lock()
        self._times: dict[str, float] = {}  # pseudonym -> last sign-out
        self._floor = 0.0  # sessions signed in at or before this are refused (the file could not be read)
        self._dirty = False  # a sign-out not written yet
        self._failed = False  # the last write failed
        self._writer: threading.Thread | None = None
        self._load()

    def _pseudonym(self, name: str) -> str:
        return hmac.new(self._key, name.lower().encode(), hashlib.sha256).hexdigest()[:32]

    def stands(self, name: str, signed_in_at) -> bool:
        """Whether a session of user `name` that signed in at `signed_in_at` still stands: signed in after the
        user's last sign-out (and after the start, when the file could not be read), within the session's life."""
        at = _time(signed_in_at)
        if user_name(name) is None or at is None:
            return False
        now = self.clock()
        if at > now + 60 or now - at > self.lifetime:  # from the future (a clock stepped back), or too old
            return False
        with self._lock:
            last = max(self._floor, self._times.get(self._pseudonym(name), 0.0))
        return at > last

    def sign_out(self, name: str) -> None:
        """User `name` signed out now: every session of theirs signed in until now stops standing, at once here and
        (once the background write lands) after a restart. Never raises for the store."""
        if user_name(name) is None:
            return
        now = self.clock()
        with self._lock:
            pseudonym = self._pseudonym(name)
            self._times[pseudonym] = max(now, self._times.get(pseudonym, 0.0))
            self._dirty = True
            if self._writer is not None:
                return  # the running writer writes it next
            self._writer = threading.Thread(target=self._write_all, name="sign-outs", daemon=True)
            self._writer.start()

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until the background writer is done (at most `timeout` seconds): whether every sign-out is written."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self._writer is None:
                    return not self._dirty and not self._failed
                writer = self._writer
            writer.join(max(0.0, deadline - time.monotonic()))
        return False

    # ------------------------------------------------------------------------------------------------ the file

    def _kept(self, times: dict[str, float]) -> dict[str, float]:
        """The times still worth keeping: within a session's life, the newest MAX_USERS."""
        horizon = self.clock() - self.lifetime
        kept = sorted(((at, p) for p, at in times.items() if at >= horizon), reverse=True)[:MAX_USERS]
        return {p: at for at, p in kept}

    @staticmethod
    def _parse(data) -> dict[str, float]:
        """The sign-out times a file holds (entries that are not a pseudonym and a time are skipped)."""
        entries = data.get("signed_out") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            return {}
        return {p: at for p, value in entries.items()
                if isinstance(p, str) and _PSEUDONYM.match(p) and (at := _time(value)) is not None}

    def _load(self) -> None:
        try:
            stored = self.store.read_json(LOGOUTS_PATH)
        except Exception as exc:  # noqa: BLE001 - damaged, or the store cannot answer: refuse what came before
            self._floor = self.clock()
            if isinstance(exc, DamagedFile):
                self.store.damaged.report(LOGOUTS_PATH, exc)
            log.warning("sign-outs not read (%s: %s): sessions signed in before now are refused",
                        type(exc).__name__, str(exc)[:200])
            return
        self._times = self._kept(self._parse(stored))

    def _write_all(self) -> None:
        """The background writer: writes every known time until no sign-out is left unwritten."""
        while True:
            with self._lock:
                if not self._dirty:
                    self._writer = None
                    return
                self._dirty = False
                self._times = self._kept(self._times)  # memory forgets what the file drops
                times = dict(self._times)
            try:
                self._write(times)
                self._failed = False
            except Exception as exc:  # noqa: BLE001 - memory still refuses the session; the next sign-out retries
                self._failed = True
                log.warning("sign-outs not written to the store (%s: %s); they hold until this process stops",
                            type(exc).__name__, str(exc)[:200])

    def _write(self, times: dict[str, float]) -> None:
        try:
            stored = self._parse(self.store.read_json(LOGOUTS_PATH))
        except Exception:  # noqa: BLE001 - a damaged file is replaced by what memory holds
            stored = {}
        merged = {**stored, **{p: max(at, stored.get(p, 0.0)) for p, at in times.items()}}
        self.store.write_json(LOGOUTS_PATH, {
            "about": "The last sign-out of each user (a keyed hash of the name) within a session's life: a session "
                     "signed in before it no longer signs anyone in.",
            "signed_out": self._kept(merged)})
        self.store.damaged.clear(LOGOUTS_PATH)
