"""The endpoint judge: an OpenAI-compatible chat-completions server (Hugging Face Inference Providers through
https://router.huggingface.co/v1, vLLM, TGI, OpenAI, ...) reached through the official `openai` client.

The client retries 408, 409, 429, 5xx, timeouts and connection errors itself: it waits what Retry-After (or
retry-after-ms) says when that is at most 120 s (a longer one is not retried), else 0.5 s doubling up to 8 s, less
up to 25 % jitter. What stays here: a 200 answer that is not a chat completion (an HTML page, an empty or cut-off
body, no message content) is asked again within the same budget of max_retries + 1 HTTP attempts, so it never
becomes a text that gets graded; every failure is a JudgeError that counts the attempts it took; the token never
appears in a message, a log line, an identity or a repr.
"""
from __future__ import annotations

import json
import logging
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator

import openai

from evaluator.judge.base import JudgeError, JudgeResult, check_generation, check_messages
from evaluator.judge.spec import public_url
from evaluator.redaction import redact

log = logging.getLogger(__name__)

BACKOFF_CAP = 8.0  # seconds: the longest wait before asking again after a 200 that is not a chat completion
_ERROR_BODY_CHARS = 200
_RETRY_COUNT_HEADER = "x-stainless-retry-count"  # the client's own count of the retries before a request
# The client insists on a key; without a token this placeholder is never sent (the Authorization header is omitted).
_NO_TOKEN = "no-token"


class _NotACompletion(Exception):
    """A 200 answer the judge cannot use; asked again like a 5xx."""


def completion_text(body: bytes | str) -> str:
    """The message content of a chat-completion body; _NotACompletion when the body is not one."""
    try:
        content = json.loads(body)["choices"][0]["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise _NotACompletion("a reply that is not a chat completion") from None
    if not isinstance(content, str):
        raise _NotACompletion("no message content")
    return content


def client_attempts(error: openai.APIError) -> int:
    """The HTTP attempts the client made for one call before it gave up: its retry count on the last request, + 1."""
    try:
        return int(error.request.headers.get(_RETRY_COUNT_HEADER, "0")) + 1
    except (AttributeError, ValueError):
        return 1


def _body_start(response: Any) -> str:
    try:
        return response.text[:_ERROR_BODY_CHARS].strip()
    except Exception:  # noqa: BLE001 - a broken body must not hide the status
        return ""


class EndpointJudge:
    """An OpenAI-compatible `/chat/completions` endpoint; `base_url` is used as is (".../v1")."""

    def __init__(self, base_url: str, model: str, token: str | None = None, *, timeout: float = 60,
                 max_retries: int = 4, concurrency: int = 8, backoff: float = 0.5):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.identity = {"kind": "endpoint", "base_url": public_url(self.base_url), "model": model}
        self._token = token or None
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.concurrency = int(concurrency)
        self.backoff = float(backoff)  # only for a 200 that is not a chat completion; the client times the rest
        self._client = openai.OpenAI(base_url=self.base_url, api_key=self._token or _NO_TOKEN,
                                     max_retries=self.max_retries, timeout=self.timeout)
        # Per request: nothing from OPENAI_ORG_ID / OPENAI_PROJECT_ID goes to another host; no bearer without a token.
        self._headers: dict[str, Any] = {"OpenAI-Organization": openai.Omit(), "OpenAI-Project": openai.Omit()}
        if self._token is None:
            self._headers["Authorization"] = openai.Omit()

    def __repr__(self) -> str:  # never shows the token
        return f"EndpointJudge(base_url={self.base_url!r}, model={self.model!r})"

    # -- plumbing ----------------------------------------------------------------------------------------------------
    def _redact(self, text: str) -> str:
        return redact(text, self._token)

    def _params(self, messages: list[dict], generation: dict, stream: bool) -> dict[str, Any]:
        check_messages(messages)
        return {"model": self.model, "messages": [dict(m) for m in messages], "stream": stream,
                **check_generation(generation), "extra_headers": self._headers}

    def _delay(self, attempt: int) -> float:
        """The wait before asking again after the `attempt`-th 200 that was not a chat completion (0-based)."""
        return min(self.backoff * 2 ** attempt, BACKOFF_CAP) * (1 - 0.25 * random.random())

    def _failure(self, reason: str, attempts: int) -> JudgeError:
        plural = "" if attempts == 1 else "s"
        message = self._redact(f"judge {self.model} failed after {attempts} attempt{plural}: {reason}")
        log.warning("%s", message)
        return JudgeError(message, attempts)

    def _reason(self, error: openai.APIError) -> str:
        if isinstance(error, openai.APITimeoutError):
            return f"timed out after {self.timeout:g}s"
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__
            return f"connection error ({type(cause).__name__ if cause else 'no answer'})"
        if isinstance(error, openai.APIStatusError):
            return f"HTTP {error.status_code} from {public_url(self.base_url)}: {_body_start(error.response)}".rstrip(
                ": ")
        return f"{type(error).__name__}: {error}"

    def _send(self, params: dict[str, Any], retries: int) -> Any:
        """One call through the client (which makes up to retries + 1 HTTP attempts); the raw 200 response."""
        client = self._client if retries == self.max_retries else self._client.with_options(max_retries=retries)
        return client.chat.completions.with_raw_response.create(**params)

    def _answer(self, raw: Any, stream: bool) -> str | openai.Stream:
        """The message text of a 200 answer, or for an event stream the client's stream of chunks."""
        response = raw.http_response
        if stream and "text/event-stream" in response.headers.get("content-type", ""):
            return raw.parse()
        try:  # a completion (also from a server that ignored stream=True), or not
            body = response.read()
        except Exception:  # noqa: BLE001 - a body cut off or timed out mid-way: asked again
            raise _NotACompletion("a reply that broke off") from None
        finally:
            response.close()
        return completion_text(body)

    def _call(self, messages: list[dict], generation: dict, stream: bool) -> tuple[str | openai.Stream, int]:
        """What the endpoint answered and the HTTP attempts it took; JudgeError when it never gave a completion."""
        params = self._params(messages, generation, stream)
        attempts = 0
        while True:
            try:
                raw = self._send(params, self.max_retries - attempts)
            except openai.APIError as exc:
                raise self._failure(self._reason(exc), attempts + client_attempts(exc)) from None
            except openai.OpenAIError as exc:  # the client refused the call before sending it
                raise self._failure(f"{type(exc).__name__}: {exc}", attempts + 1) from None
            attempts += raw.retries_taken + 1
            try:
                return self._answer(raw, stream), attempts
            except _NotACompletion as exc:
                reason = f"the judge returned {exc}"
            if attempts > self.max_retries:
                raise self._failure(reason, attempts)
            delay = self._delay(attempts - 1)
            log.warning("judge %s: attempt %d: %s; asking again in %.2fs", self.model, attempts, reason, delay)
            time.sleep(delay)

    # -- API ---------------------------------------------------------------------------------------------------------
    def complete(self, messages: list[dict], **generation) -> str:
        return self._call(messages, generation, stream=False)[0]

    def _one(self, messages: list[dict], generation: dict) -> JudgeResult:
        try:
            text, attempts = self._call(messages, generation, stream=False)
            return JudgeResult(text=text, error=None, attempts=attempts)
        except JudgeError as exc:
            return JudgeResult(text=None, error=self._redact(str(exc)), attempts=exc.attempts)
        except Exception as exc:  # noqa: BLE001 - complete_many never raises
            return JudgeResult(text=None, error=self._redact(f"{type(exc).__name__}: {exc}"), attempts=0)

    def complete_many(self, conversations: list[list[dict]], **generation) -> list[JudgeResult]:
        conversations = list(conversations)
        if not conversations:
            return []
        workers = max(1, min(self.concurrency, len(conversations)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge") as pool:
            return list(pool.map(lambda messages: self._one(messages, generation), conversations))

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
        except openai.APIConnectionError as exc:
            raise JudgeError(f"judge {self.model} stream broke off ({self._reason(exc)})", attempts) from None
        except openai.APIError as exc:
            raise JudgeError(self._redact(f"judge {self.model} stream error: {exc.message}"), attempts) from None
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
