"""One OpenAI-compatible chat-completions endpoint (Hugging Face Inference Providers through
https://router.huggingface.co/v1, vLLM, SGLang, TGI, OpenAI, `transformers serve`, ...) reached through the official
`openai` client: what the endpoint judge and the served-model adapter share.

The client retries 408, 409, 429, 5xx, timeouts and connection errors itself: it waits what Retry-After (or
retry-after-ms) says when that is at most 120 s (a longer one is not retried), else 0.5 s doubling up to 8 s, less
up to 25 % jitter. What stays here: a 200 answer that is not a chat completion (an HTML page, an empty or cut-off
body, no message content) is asked again within the same budget of max_retries + 1 HTTP attempts, so it never
becomes a text that gets scored; every failure is a ChatError that counts the attempts it took and keeps the HTTP
status; the token never appears in a message, a log line or a repr, and without a token no Authorization header is
sent.

Every call runs under evaluator.endpoints.limits: a deadline for the whole call (its retries included) and a cap on
the bytes of the answer (LEADERBOARD_ENDPOINT_DEADLINE, LEADERBOARD_ENDPOINT_MAX_REPLY_MB). A call that misses
either fails at once with a ChatError whose `limit` says which (a streamed answer, read after the call returned, too).
A compressed answer counts what it decodes to, and one in a coding that was not asked for is refused with one line
(evaluator.endpoints.decoding).
"""
from __future__ import annotations

import json
import logging
import random
import time
from typing import Any, NoReturn

import httpx2
import openai

from evaluator.endpoints.bounded_http import Budget, LimitMissed, http_client, iterate_within, within
from evaluator.endpoints.limits import Limits
from evaluator.endpoints.names import public_url
from evaluator.endpoints.redaction import redact

log = logging.getLogger(__name__)

BACKOFF_CAP = 8.0  # seconds: the longest wait before asking again after a 200 that is not a chat completion
_ERROR_BODY_CHARS = 200
_RETRY_COUNT_HEADER = "x-stainless-retry-count"  # the client's own count of the retries before a request
# The client insists on a key; without a token this placeholder is never sent (the Authorization header is omitted).
_NO_TOKEN = "no-token"


class NotACompletion(Exception):
    """A 200 answer that is no chat completion; asked again like a 5xx."""


class ChatError(RuntimeError):
    """A call that never gave a chat completion (after its retries, for retryable failures). status: the HTTP status
    of the last answer (None: no answer, a timeout, or a 200 that was no completion); limit: the endpoint limit the
    call missed (evaluator.endpoints.limits.DEADLINE or TOO_LARGE, or evaluator.endpoints.decoding.REFUSED_ENCODING
    for an answer in a coding that was not asked for), else None. The message never holds a token."""

    def __init__(self, message: str, attempts: int = 1, status: int | None = None, answer: str = "",
                 limit: str | None = None):
        super().__init__(message)
        self.attempts = attempts
        self.status = status
        self.limit = limit
        self.answer = answer  # what the endpoint answered, in a few words ("HTTP 404: ..."), for one-line reports


REASONING_FIELDS = ("reasoning_content", "reasoning")  # where a reasoning parser (vLLM, SGLang) puts the thought


def reasoning_of(message: dict) -> str | None:
    """The thought a server sent apart from the answer (reasoning_content, or newer vLLM's reasoning), or None."""
    for key in REASONING_FIELDS:
        value = message.get(key)
        if isinstance(value, str):
            return value
    return None


def completion_body(body: bytes | str) -> dict:
    """A chat-completion body as a dict whose first choice has text content; NotACompletion when it is not one. A
    reply whose content is null beside a thought sent apart (reasoning_content: it ended inside its thought) has
    empty content."""
    try:
        data = json.loads(body)
        message = data["choices"][0]["message"]
        content = message.get("content")
        if content is None and reasoning_of(message) is not None:
            message["content"] = content = ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise NotACompletion("a reply that is not a chat completion") from None
    if not isinstance(content, str):
        raise NotACompletion("no message content")
    return data


def completion_text(body: bytes | str) -> str:
    """The message content of a chat-completion body; NotACompletion when the body is not one."""
    return completion_body(body)["choices"][0]["message"]["content"]


def client_attempts(error: openai.APIError) -> int:
    """The HTTP attempts the client made for one call before it gave up: its retry count on the last request, + 1."""
    try:
        return int(error.request.headers.get(_RETRY_COUNT_HEADER, "0")) + 1
    except (AttributeError, ValueError):
        return 1


def _body_start(response: Any) -> str:
    try:
        return " ".join(response.text[:_ERROR_BODY_CHARS].split())
    except Exception:  # noqa: BLE001 - a broken body must not hide the status
        return ""


class ChatClient:
    """Calls to one endpoint's `/chat/completions`; `base_url` is used as is (".../v1"). `label` names the caller in
    messages ("judge <model>", "model <model>"). `timeout` bounds each socket operation, `limits` the whole call."""

    def __init__(self, base_url: str, model: str, token: str | None = None, *, timeout: float = 60,
                 max_retries: int = 4, backoff: float = 0.5, label: str = "", limits: Limits | None = None):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.label = label or model
        self._token = token or None
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)  # only for a 200 that is not a chat completion; the client times the rest
        self.limits = limits or Limits()
        self._client = openai.OpenAI(base_url=self.base_url, api_key=self._token or _NO_TOKEN,
                                     max_retries=self.max_retries, timeout=self.timeout, http_client=http_client())
        # Per request: nothing from OPENAI_ORG_ID / OPENAI_PROJECT_ID goes to another host; no bearer without a token.
        self.headers: dict[str, Any] = {"OpenAI-Organization": openai.Omit(), "OpenAI-Project": openai.Omit()}
        if self._token is None:
            self.headers["Authorization"] = openai.Omit()

    def __repr__(self) -> str:  # never shows the token
        return f"ChatClient(base_url={self.base_url!r}, model={self.model!r})"

    def redact(self, text: str) -> str:
        return redact(text, self._token)

    def _delay(self, attempt: int) -> float:
        """The wait before asking again after the `attempt`-th 200 that was not a chat completion (0-based)."""
        return min(self.backoff * 2 ** attempt, BACKOFF_CAP) * (1 - 0.25 * random.random())

    def _failure(self, reason: str, attempts: int, status: int | None = None, answer: str = "",
                 limit: str | None = None) -> ChatError:
        plural = "" if attempts == 1 else "s"
        message = self.redact(f"{self.label} failed after {attempts} attempt{plural}: {reason}")
        log.warning("%s", message)
        return ChatError(message, attempts, status, self.redact(answer or reason), limit)

    def _out_of_budget(self, budget: Budget, attempts: int) -> ChatError | None:
        """The failure of a call that ran out of time or bytes, else None."""
        reason = budget.reason()
        if reason is None:
            return None
        return self._failure(f"{public_url(self.base_url)}: {reason}", max(1, attempts), answer=reason,
                             limit=budget.missed)

    def reason(self, error: openai.APIError) -> str:
        """What went wrong, in a few words that name the endpoint's public URL and what it answered."""
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
        return client.chat.completions.with_raw_response.create(**params, extra_headers=self.headers)

    @staticmethod
    def _answer(raw: Any, stream: bool) -> dict | openai.Stream:
        """The chat-completion body of a 200 answer, or for an event stream the client's stream of chunks."""
        response = raw.http_response
        if stream and "text/event-stream" in response.headers.get("content-type", ""):
            return raw.parse()
        try:  # a completion (also from a server that ignored stream=True), or not
            body = response.read()
        except Exception:  # noqa: BLE001 - a body cut off or timed out mid-way: asked again
            raise NotACompletion("a reply that broke off") from None
        finally:
            response.close()
        return completion_body(body)

    def call(self, params: dict[str, Any], stream: bool = False,
             max_retries: int | None = None) -> tuple[dict | openai.Stream, int]:
        """The endpoint's answer to one request (`params`: the body, without "model" and "stream") and the HTTP
        attempts it took: a chat-completion dict, or a stream of chunks when `stream` and the endpoint streams (read
        under the call's limits too). ChatError when it never gave a completion within max_retries + 1 attempts
        (default: the client's), or within the call's limits (evaluator.endpoints.limits)."""
        allowance = Budget(self.limits)
        with within(allowance):
            answer, attempts = self._call(params, stream, max_retries, allowance)
        if isinstance(answer, dict):
            return answer, attempts
        return _BoundedChunks(answer, allowance, self, attempts), attempts

    def _call(self, params: dict[str, Any], stream: bool, max_retries: int | None,
              allowance: Budget) -> tuple[dict | openai.Stream, int]:
        budget = self.max_retries if max_retries is None else int(max_retries)
        params = {"model": self.model, **params, "stream": stream}
        attempts = 0
        while True:
            try:
                raw = self._send(params, budget - attempts)
            except LimitMissed:
                raise self._out_of_budget(allowance, attempts + 1) from None
            except openai.APIError as exc:
                failure = self._out_of_budget(allowance, attempts + client_attempts(exc))
                if failure is not None:
                    raise failure from None
                self._raise(exc, attempts)
            except openai.OpenAIError as exc:  # the client refused the call before sending it
                raise self._failure(f"{type(exc).__name__}: {exc}", attempts + 1) from None
            attempts += raw.retries_taken + 1
            try:
                return self._answer(raw, stream), attempts
            except NotACompletion as exc:
                reason = f"the endpoint returned {exc}"
            failure = self._out_of_budget(allowance, attempts)
            if failure is not None:
                raise failure
            if attempts > budget:
                raise self._failure(reason, attempts)
            delay = self._delay(attempts - 1)
            log.warning("%s: attempt %d: %s; asking again in %.2fs", self.label, attempts, reason, delay)
            time.sleep(delay)

    def post_json(self, url: str, body: dict[str, Any], max_retries: int | None = None) -> dict:
        """The JSON object another path of the same server answers to `body` (an absolute `url`, e.g. SGLang's
        native /generate beside its /v1), under the same token, retries and limits as a chat completion; ChatError
        when it never answered one."""
        budget = self.max_retries if max_retries is None else int(max_retries)
        client = self._client if budget == self.max_retries else self._client.with_options(max_retries=budget)
        allowance = Budget(self.limits)
        with within(allowance):
            try:
                response = client.post(url, cast_to=httpx2.Response, body=body, options={"headers": self.headers})
                data = response.json()
            except LimitMissed:
                raise self._out_of_budget(allowance, 1) from None
            except openai.APIError as exc:
                failure = self._out_of_budget(allowance, client_attempts(exc))
                if failure is not None:
                    raise failure from None
                self._raise(exc, 0)
            except (openai.OpenAIError, ValueError) as exc:
                raise self._failure(f"{public_url(url)}: {type(exc).__name__}: {exc}", 1) from None
        if not isinstance(data, dict):
            raise self._failure(f"{public_url(url)} answered JSON that is no object", 1)
        return data

    def _raise(self, exc: openai.APIError, attempts: int) -> NoReturn:
        """Raise the ChatError of a call the client gave up on (`attempts`: those made before its last try)."""
        if isinstance(exc, openai.APIStatusError):
            reason = self.reason(exc)
            raise self._failure(reason, attempts + client_attempts(exc), exc.status_code,
                                reason.replace(f" from {public_url(self.base_url)}", "")) from None
        raise self._failure(self.reason(exc), attempts + client_attempts(exc)) from None


class _BoundedChunks:
    """A streamed answer's chunks, each read under its call's limits; a chunk that breaks them, or a stream that
    breaks off, raises the call's ChatError."""

    def __init__(self, stream: openai.Stream, budget: Budget, client: ChatClient, attempts: int):
        self._stream, self._budget, self._client, self._attempts = stream, budget, client, attempts

    def __iter__(self):
        try:
            yield from iterate_within(self._budget, self._stream)
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            failure = self._client._out_of_budget(self._budget, self._attempts)
            if failure is not None:
                raise failure from None
            reason = self._client.reason(exc) if isinstance(exc, openai.APIError) else type(exc).__name__
            raise self._client._failure(f"the stream broke off ({reason})", self._attempts) from None

    def close(self) -> None:
        self._stream.close()
