"""The endpoint judge: an OpenAI-compatible chat-completions server (Hugging Face Inference Providers through
https://router.huggingface.co/v1, vLLM, TGI, OpenAI, ...) reached through evaluator.endpoints.chat_client, which the
served-model adapter shares: the `openai` client's retries (429 with Retry-After, 5xx, timeouts, connection errors), a
200 that is not a chat completion asked again within the same budget, and no token in any message, log line or repr.
Every failure is a JudgeError that counts the attempts it took. A thinking judge's reply is read after its thought:
a thought sent apart (reasoning_content) is never read, and one in its content (<think>...</think>) is taken out; a
reply that ends inside its thought has no grade.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator

import openai

from evaluator.endpoints.chat_client import ChatClient, ChatError
from evaluator.endpoints.limits import DEADLINE, Limits
from evaluator.endpoints.names import public_url
from evaluator.judge.base import JudgeError, JudgeResult, JudgeStalled, check_generation, check_messages
from evaluator.models.thinking import THINK, split_reply


class EndpointJudge:
    """An OpenAI-compatible `/chat/completions` endpoint; `base_url` is used as is (".../v1")."""

    def __init__(self, base_url: str, model: str, token: str | None = None, *, timeout: float = 60,
                 max_retries: int = 4, concurrency: int = 8, backoff: float = 0.5, limits: Limits | None = None):
        self._chat = ChatClient(base_url, model, token, timeout=timeout, max_retries=max_retries, backoff=backoff,
                                label=f"judge {model}", limits=limits)
        self.base_url = self._chat.base_url
        self.model = model
        self.identity = {"kind": "endpoint", "base_url": public_url(self.base_url), "model": model}
        self.concurrency = int(concurrency)
        self.parallel = self.concurrency
        self.repeatable = False  # a server may answer differently (a fault, an empty reply): asking again helps
        self.parameters, self.trial = None, False  # an endpoint's size is not known: never a trial judge

    def __repr__(self) -> str:  # never shows the token
        return f"EndpointJudge(base_url={self.base_url!r}, model={self.model!r})"

    def _call(self, messages: list[dict], generation: dict, stream: bool) -> tuple[str | openai.Stream, int]:
        """What the endpoint answered and the HTTP attempts it took; JudgeError when it never gave a completion."""
        check_messages(messages)
        params = {"messages": [dict(m) for m in messages], **check_generation(generation)}
        try:
            answer, attempts = self._chat.call(params, stream=stream)
        except ChatError as exc:
            if exc.limit == DEADLINE:
                raise JudgeStalled(f"the judge {self.model} at {public_url(self.base_url)} stalled: "
                                   f"{exc.answer}") from None
            raise JudgeError(str(exc), exc.attempts) from None
        if isinstance(answer, dict):  # a thinking judge's thought (in <think> or sent apart) is never graded from
            return split_reply(answer["choices"][0]["message"]["content"], THINK).answer, attempts
        return answer, attempts

    # -- API ---------------------------------------------------------------------------------------------------------
    def complete(self, messages: list[dict], **generation) -> str:
        return self._call(messages, generation, stream=False)[0]

    def _one(self, messages: list[dict], generation: dict) -> JudgeResult:
        try:
            text, attempts = self._call(messages, generation, stream=False)
            return JudgeResult(text=text, error=None, attempts=attempts)
        except JudgeError as exc:
            return JudgeResult(text=None, error=self._chat.redact(str(exc)), attempts=exc.attempts)
        except JudgeStalled:
            raise
        except Exception as exc:  # noqa: BLE001 - complete_many never raises, but for a stalled judge
            return JudgeResult(text=None, error=self._chat.redact(f"{type(exc).__name__}: {exc}"), attempts=0)

    def complete_many(self, conversations: list[list[dict]], **generation) -> list[JudgeResult]:
        conversations = list(conversations)
        if not conversations:
            return []
        workers = max(1, min(self.concurrency, len(conversations)))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge")
        try:
            futures = [pool.submit(self._one, messages, generation) for messages in conversations]
            return [future.result() for future in futures]
        finally:  # a stalled judge: the calls not yet sent are not sent
            pool.shutdown(wait=True, cancel_futures=True)

    def stream(self, messages: list[dict], **generation) -> Iterator[str]:
        """Text pieces as the endpoint sends them (server-sent events; a server that ignores stream=True gives its
        whole completion as one piece). Retries happen before the first piece."""
        answer, attempts = self._call(messages, generation, stream=True)
        if isinstance(answer, str):
            yield answer
            return
        try:
            for chunk in answer:
                yield from _pieces(chunk)
        except ChatError as exc:  # the stream broke off, or passed the call's deadline or size cap
            raise JudgeError(str(exc), attempts) from None
        except openai.APIConnectionError as exc:
            raise JudgeError(f"judge {self.model} stream broke off ({self._chat.reason(exc)})", attempts) from None
        except openai.APIError as exc:
            raise JudgeError(self._chat.redact(f"judge {self.model} stream error: {exc.message}"), attempts) from None
        except (ValueError, TypeError):
            raise JudgeError(f"judge {self.model} sent a malformed stream chunk", attempts) from None
        finally:
            answer.close()


def _pieces(chunk: Any) -> Iterator[str]:
    """The text pieces of one streamed chunk (its choices' delta contents)."""
    for choice in getattr(chunk, "choices", None) or []:
        piece = getattr(getattr(choice, "delta", None), "content", None)
        if isinstance(piece, str) and piece:
            yield piece
