"""What bounds one call to a served model or to the judge: a deadline for the whole call (connecting, sending, every
byte of the answer, and the `openai` client's own retries) and a cap on the bytes the endpoint may send back.

The client's timeout bounds each socket operation, not a whole answer: a server that sends one byte a second holds a
call for as long as it likes, and a 50 MB body is read whole. evaluator.endpoints.bounded_http enforces these limits
below the HTTP client; this module holds what they are and where they are set (it imports no HTTP client, so the Space
can read it cheaply).

The deadline and the cap come from LEADERBOARD_ENDPOINT_DEADLINE (seconds, default 300: a large model writing a long
answer under load meets it) and LEADERBOARD_ENDPOINT_MAX_REPLY_MB (default 8: a chat completion is a few kB, a
streamed one some hundred kB). A call that misses either is not asked again: its one-line reason says which limit and
which setting. Behind an HTTP proxy set by HTTPS_PROXY / HTTP_PROXY the proxy's connection is the HTTP client's own,
and these limits do not apply to it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

DEADLINE_SETTING = "LEADERBOARD_ENDPOINT_DEADLINE"
MAX_REPLY_SETTING = "LEADERBOARD_ENDPOINT_MAX_REPLY_MB"
DEFAULT_DEADLINE_S = 300.0
DEFAULT_MAX_REPLY_MB = 8.0
MB = 1024 * 1024

DEADLINE = "deadline"  # what a Budget says it missed
TOO_LARGE = "too large"


@dataclass(frozen=True)
class Limits:
    """The deadline of one call, in seconds, and the most bytes its answer may hold."""

    deadline: float = DEFAULT_DEADLINE_S
    max_reply_bytes: int = int(DEFAULT_MAX_REPLY_MB * MB)

    def __post_init__(self):
        if not self.deadline > 0 or not self.max_reply_bytes > 0:
            raise ValueError("endpoint limits: the deadline and the largest reply must be above 0")

    def missed(self, what: str) -> str:
        """The one-line reason of a call that missed `what` (DEADLINE or TOO_LARGE)."""
        if what == TOO_LARGE:
            return (f"the answer passed {self.max_reply_bytes / MB:g} MB, the most it may hold "
                    f"({MAX_REPLY_SETTING}); refused, not asked again")
        return (f"no complete answer within the deadline of {self.deadline:g}s ({DEADLINE_SETTING}); "
                "not asked again")


def _number(environ: Mapping[str, str], name: str, default: float, unit: str) -> float:
    text = (environ.get(name) or "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a number of {unit} above 0, got {text[:40]!r}")
    return value


def limits_from_env(environ: Mapping[str, str] | None = None) -> Limits:
    """The limits LEADERBOARD_ENDPOINT_DEADLINE and LEADERBOARD_ENDPOINT_MAX_REPLY_MB set (their defaults when unset);
    ValueError with one line naming the variable when one is not a positive number."""
    environ = os.environ if environ is None else environ
    deadline = _number(environ, DEADLINE_SETTING, DEFAULT_DEADLINE_S, "seconds")
    megabytes = _number(environ, MAX_REPLY_SETTING, DEFAULT_MAX_REPLY_MB, "megabytes")
    return Limits(deadline, max(1, int(megabytes * MB)))
