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


# the sane ranges (inclusive upper bounds): a call past a day is a hang, never a slow answer (a whole run stops at
# LEADERBOARD_MAX_RUN_SECONDS, 6 hours by default); a reply is held whole in memory (the Playground's judge in the
# Space's own process) and a chat completion is a few kB, a streamed one some hundred kB, so 1024 MB is far beyond any
# real answer and 0.001 MB (1048 bytes) below none
MAX_DEADLINE_S = 86400.0
MIN_REPLY_MB, MAX_REPLY_MB = 0.001, 1024.0


def limit_problem(name: str, value: float | str) -> str | None:
    """Why `value` (a number, or the variable's text) is no usable LEADERBOARD_ENDPOINT_DEADLINE (seconds, above 0
    and at most MAX_DEADLINE_S) or LEADERBOARD_ENDPOINT_MAX_REPLY_MB (MIN_REPLY_MB to MAX_REPLY_MB): one line naming
    the variable, quoting at most 40 characters of the value; None when it is usable. The one check of both, for the
    Space's start (through evaluator.api) and for the evaluator (limits_from_env)."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        number = float("nan")
    if name == DEADLINE_SETTING:
        if 0 < number <= MAX_DEADLINE_S:
            return None
        rule = f"a number of seconds above 0 and at most {MAX_DEADLINE_S:.0f} (a day)"
    elif MIN_REPLY_MB <= number <= MAX_REPLY_MB:
        return None
    else:
        rule = f"a number of megabytes from {MIN_REPLY_MB:g} to {MAX_REPLY_MB:.0f}"
    return f"{name} must be {rule}, not {text[:40]!r}"


def _number(environ: Mapping[str, str], name: str, default: float) -> float:
    text = (environ.get(name) or "").strip()
    if not text:
        return default
    problem = limit_problem(name, text)
    if problem:
        raise ValueError(problem)
    return float(text)


def limits_from_env(environ: Mapping[str, str] | None = None) -> Limits:
    """The limits LEADERBOARD_ENDPOINT_DEADLINE and LEADERBOARD_ENDPOINT_MAX_REPLY_MB set (their defaults when unset);
    ValueError with one line naming the variable when one is out of its range (limit_problem)."""
    environ = os.environ if environ is None else environ
    deadline = _number(environ, DEADLINE_SETTING, DEFAULT_DEADLINE_S)
    megabytes = _number(environ, MAX_REPLY_SETTING, DEFAULT_MAX_REPLY_MB)
    return Limits(deadline, max(1, int(megabytes * MB)))
