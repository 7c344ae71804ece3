"""The local judge: a transformers model loaded once (never with remote code) through evaluator.models.load_model
and kept for the whole run; a conversation is folded into one GenerationRequest."""
from __future__ import annotations

import threading
from typing import Any, Iterator

from evaluator.judge.base import (TRIAL_JUDGE_BELOW_PARAMETERS, TRIAL_MAX_TOKENS, JudgeError, JudgeResult,
                                  check_generation, check_messages)
from evaluator.models import GenerationRequest, load_model


def to_request(messages: list[dict], generation: dict, max_tokens: int | None = None) -> GenerationRequest:
    """One GenerationRequest for a conversation: system messages joined into the system prompt, earlier turns folded
    into the text ("User: ...", "Assistant: ..."); the last message must come from the user. `max_tokens` caps the
    reply's new tokens (a trial judge's TRIAL_MAX_TOKENS)."""
    check_messages(messages)
    options = check_generation(generation)
    if max_tokens is not None:
        options["max_tokens"] = min(int(options["max_tokens"]), max_tokens)
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system") or None
    turns = [m for m in messages if m["role"] != "system"]
    if not turns or turns[-1]["role"] != "user":
        raise ValueError("the last (non-system) message must come from the user")
    earlier = [f"{'User' if m['role'] == 'user' else 'Assistant'}: {m['content']}" for m in turns[:-1]]
    last = turns[-1]["content"]
    text = "\n\n".join(earlier + [f"User: {last}"]) if earlier else last
    request = GenerationRequest(text=text, system=system, max_new_tokens=int(options["max_tokens"]),
                                temperature=float(options["temperature"]))
    if options.get("seed") is not None:
        request.seed = int(options["seed"])
    if options.get("stop"):
        stop = options["stop"]
        request.stop = [stop] if isinstance(stop, str) else list(stop)
    return request


def parameter_count(model: Any) -> int | None:
    """A loaded model's parameters, or None when it does not say."""
    try:
        return int(sum(p.numel() for p in model.parameters()))
    except Exception:  # noqa: BLE001 - an adapter without a torch model
        return None


class LocalJudge:
    """A local model, loaded once (never with remote code) and kept for the whole run. Greedy, so asking it the same
    conversation again gets the same reply (`repeatable`); under TRIAL_JUDGE_BELOW_PARAMETERS it is a trial judge
    (`trial`), whose replies stop at TRIAL_MAX_TOKENS new tokens."""

    def __init__(self, source: str, revision: str | None = None, *, precision: str = "auto",
                 batch_size: int | str = 4):
        self._adapter = load_model(source, revision, precision=precision, batch_size=batch_size)
        resolved = getattr(self._adapter, "revision", None) or revision
        self.identity = {"kind": "local", "model": source, "revision": resolved}
        self.parallel = max(1, int(getattr(self._adapter, "batch_size", 1) or 1))
        self.repeatable = True
        self.parameters = parameter_count(getattr(self._adapter, "model", None))
        self.trial = self.parameters is not None and self.parameters < TRIAL_JUDGE_BELOW_PARAMETERS
        self._cap = TRIAL_MAX_TOKENS if self.trial else None
        self._lock = threading.Lock()  # one generation at a time on the one model

    def __repr__(self) -> str:
        return f"LocalJudge(model={self.identity['model']!r}, revision={self.identity['revision']!r})"

    def _generate(self, requests: list[GenerationRequest]) -> list[str]:
        with self._lock:
            return list(self._adapter.generate(requests))

    def complete(self, messages: list[dict], **generation) -> str:
        request = to_request(messages, generation, self._cap)
        try:
            return self._generate([request])[0]
        except Exception as exc:  # noqa: BLE001 - reported as a judge failure
            raise JudgeError(f"local judge {self.identity['model']} failed: {type(exc).__name__}: {exc}") from None

    def complete_many(self, conversations: list[list[dict]], **generation) -> list[JudgeResult]:
        results: list[JudgeResult | None] = [None] * len(conversations)
        pending: list[tuple[int, Any]] = []
        for i, messages in enumerate(conversations):
            try:
                pending.append((i, to_request(messages, generation, self._cap)))
            except Exception as exc:  # noqa: BLE001 - complete_many never raises
                results[i] = JudgeResult(text=None, error=f"{type(exc).__name__}: {exc}", attempts=0)
        if pending:
            self._complete_pending(pending, results)
        return [r for r in results if r is not None]

    def _complete_pending(self, pending: list[tuple[int, GenerationRequest]],
                          results: list[JudgeResult | None]) -> None:
        """Fill `results` for the pending requests: one batch (the adapter batches by itself), else one by one to find
        the items that fail."""
        try:
            texts = self._generate([request for _, request in pending])
            for (i, _), text in zip(pending, texts):
                results[i] = JudgeResult(text=text, error=None, attempts=1)
            return
        except Exception:  # noqa: BLE001 - find the items that fail, one by one
            pass
        for i, request in pending:
            try:
                results[i] = JudgeResult(text=self._generate([request])[0], error=None, attempts=1)
            except Exception as exc:  # noqa: BLE001
                results[i] = JudgeResult(text=None, error=f"local judge failed: {type(exc).__name__}: {exc}",
                                         attempts=1)

    def stream(self, messages: list[dict], **generation) -> Iterator[str]:
        yield self.complete(messages, **generation)
