"""The judge interface every backend keeps: the Judge protocol, JudgeError, JudgeResult, and the checks of the
messages and generation options a caller hands to a judge."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Protocol

DEFAULT_MAX_TOKENS = 512
# A local judge smaller than this is a *trial judge*: it shows the machinery works, its grades are not scores (runs it
# grades are flagged "trial judge" and never ranked), and its replies stop at TRIAL_MAX_TOKENS new tokens.
TRIAL_JUDGE_BELOW_PARAMETERS = 7_000_000_000
TRIAL_MAX_TOKENS = 128
GENERATION_KEYS = frozenset({"max_tokens", "temperature", "seed", "stop"})
_ROLES = ("system", "user", "assistant")


class JudgeError(RuntimeError):
    """A judge call that failed (after its retries, for retryable failures). The message never holds a token."""

    def __init__(self, message: str, attempts: int = 1):
        super().__init__(message)
        self.attempts = attempts


class JudgeStalled(RuntimeError):
    """An endpoint judge gave no complete answer within a call's deadline (LEADERBOARD_ENDPOINT_DEADLINE). The run
    stops with this one line instead of leaving every answer ungraded, one deadline after another: the answers so far
    stay in the run's journal, so a retry does not ask the model again."""


@dataclass
class JudgeResult:
    text: str | None  # the judge's raw output; None when it failed
    error: str | None  # why it failed (after retries), else None
    attempts: int


class Judge(Protocol):
    identity: dict
    parallel: int  # conversations it works on at once (a local judge's batch, an endpoint's concurrency)
    repeatable: bool  # the same conversation at temperature 0 always gets the same reply (no point asking again)

    def complete(self, messages: list[dict], **generation) -> str: ...

    def complete_many(self, conversations: list[list[dict]], **generation) -> list[JudgeResult]: ...

    def stream(self, messages: list[dict], **generation) -> Iterator[str]: ...


def check_generation(generation: dict) -> dict:
    """The generation options with their defaults (max_tokens 512, temperature 0); TypeError for an unknown one."""
    unknown = set(generation) - GENERATION_KEYS
    if unknown:
        raise TypeError(f"unsupported generation options: {sorted(unknown)} (use {sorted(GENERATION_KEYS)})")
    out = {"max_tokens": DEFAULT_MAX_TOKENS, "temperature": 0.0}
    out.update({k: v for k, v in generation.items() if v is not None})
    return out


def check_messages(messages: list[dict]) -> None:
    """ValueError unless `messages` is a non-empty list of {'role': system|user|assistant, 'content': str}."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in _ROLES \
                or not isinstance(message.get("content"), str):
            raise ValueError("each message must be {'role': 'system'|'user'|'assistant', 'content': str}")
