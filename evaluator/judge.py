"""The LLM judge: one small interface over a local transformers model or an OpenAI-compatible endpoint.

    judge = make_judge("endpoint:https://router.huggingface.co/v1|meta-llama/Llama-3.3-70B-Instruct", token)
    judge = make_judge("local:Qwen/Qwen2.5-7B-Instruct@<sha>")
    judge.complete([{"role": "user", "content": "..."}], max_tokens=64)          # -> str, or raises JudgeError
    judge.complete_many([...conversations...])                                   # -> [JudgeResult], never raises

Every result names the judge through `judge.identity`. The endpoint backend retries 429s, 5xx, timeouts and
connection errors with exponential backoff and jitter (honouring Retry-After, capped); other 4xx fail at once.
A token is only ever sent as a bearer header: it never appears in an exception message, a log line or identity.
"""
from __future__ import annotations

import email.utils
import json
import logging
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Protocol
from urllib.parse import urlsplit

import requests

from evaluator.prompt_files import prompt_hash  # noqa: F401 - part of this module's API
from evaluator.redaction import redact

__all__ = ["Judge", "JudgeError", "JudgeResult", "JudgeSpec", "EndpointJudge", "LocalJudge", "make_judge",
           "parse_judge_spec", "public_url",
           "parse_simpleqa_grade", "parse_lave_rating", "prompt_hash", "judge_name"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 512
RETRY_AFTER_CAP = 30.0  # seconds: the longest a Retry-After header may make us wait
BACKOFF_CAP = 60.0  # seconds: the longest computed backoff between two attempts
_ERROR_BODY_CHARS = 200
_GENERATION_KEYS = {"max_tokens", "temperature", "seed", "stop"}


class JudgeError(RuntimeError):
    """A judge call that failed (after its retries, for retryable failures). The message never holds a token."""

    def __init__(self, message: str, attempts: int = 1):
        super().__init__(message)
        self.attempts = attempts


@dataclass
class JudgeResult:
    text: str | None  # the judge's raw output; None when it failed
    error: str | None  # why it failed (after retries), else None
    attempts: int


class Judge(Protocol):
    identity: dict

    def complete(self, messages: list[dict], **generation) -> str: ...

    def complete_many(self, conversations: list[list[dict]], **generation) -> list[JudgeResult]: ...

    def stream(self, messages: list[dict], **generation) -> Iterator[str]: ...


# --------------------------------------------------------------------------------------------------------------------
# Helpers


def _check_generation(generation: dict) -> dict:
    unknown = set(generation) - _GENERATION_KEYS
    if unknown:
        raise TypeError(f"unsupported generation options: {sorted(unknown)} (use {sorted(_GENERATION_KEYS)})")
    out = {"max_tokens": DEFAULT_MAX_TOKENS, "temperature": 0.0}
    out.update({k: v for k, v in generation.items() if v is not None})
    return out


def _check_messages(messages: list[dict]) -> None:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant") \
                or not isinstance(message.get("content"), str):
            raise ValueError("each message must be {'role': 'system'|'user'|'assistant', 'content': str}")


# --------------------------------------------------------------------------------------------------------------------
# Endpoint backend (OpenAI-compatible chat completions)


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


class EndpointJudge:
    """An OpenAI-compatible `/chat/completions` endpoint (HF Inference Providers, vLLM, TGI, OpenAI, ...)."""

    def __init__(self, base_url: str, model: str, token: str | None = None, *, timeout: float = 60,
                 max_retries: int = 4, concurrency: int = 8, backoff: float = 1.0):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.identity = {"kind": "endpoint", "base_url": public_url(self.base_url), "model": model}
        self._token = token or None
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.concurrency = int(concurrency)
        self.backoff = float(backoff)
        self._local = threading.local()

    def __repr__(self) -> str:  # never shows the token
        return f"EndpointJudge(base_url={self.base_url!r}, model={self.model!r})"

    # -- plumbing ----------------------------------------------------------------------------------------------------
    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def _redact(self, text: str) -> str:
        return redact(text, self._token)

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def _payload(self, messages: list[dict], generation: dict, stream: bool) -> dict:
        _check_messages(messages)
        payload: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages], "stream": stream}
        payload.update(_check_generation(generation))
        return payload

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        base = min(self.backoff * (2 ** attempt), BACKOFF_CAP)
        return base + random.uniform(0, base * 0.25)

    def _post_once(self, payload: dict, stream: bool) -> requests.Response:
        url = f"{self.base_url}/chat/completions"
        try:
            response = self._session().post(url, json=payload, headers=self._headers(), timeout=self.timeout,
                                            stream=stream)
        except requests.Timeout:
            raise _Retryable(f"timed out after {self.timeout:g}s") from None
        except requests.ConnectionError as exc:
            raise _Retryable(f"connection error ({type(exc).__name__})") from None
        except requests.RequestException as exc:
            raise JudgeError(self._redact(f"request failed: {type(exc).__name__}: {exc}")) from None
        if response.status_code == 200:
            return response
        try:
            body = response.text[:_ERROR_BODY_CHARS]
        except Exception:  # noqa: BLE001 - a broken body must not hide the status
            body = ""
        finally:
            response.close()
        reason = self._redact(f"HTTP {response.status_code} from {self.base_url}: {body}".rstrip(": "))
        if response.status_code == 429 or response.status_code >= 500:
            raise _Retryable(reason, _parse_retry_after(response.headers.get("Retry-After")))
        raise JudgeError(reason)

    def _request(self, payload: dict, stream: bool = False, read=None) -> tuple[Any, int]:
        """POST with retries; returns the 200 response (or, with `read`, what read(response) makes of it: a 200 whose
        body `read` cannot use is retried like a 5xx) and the number of attempts it took."""
        attempts = 0
        while True:
            attempts += 1
            try:
                response = self._post_once(payload, stream)
                return (response if read is None else read(response)), attempts
            except JudgeError as exc:
                exc.attempts = attempts
                raise
            except _Retryable as exc:
                if attempts > self.max_retries:
                    raise JudgeError(f"judge {self.model} failed after {attempts} attempts: {exc.reason}",
                                     attempts) from None
                delay = self._delay(attempts - 1, exc.retry_after)
                logger.warning("judge %s: attempt %d failed (%s); retrying in %.2fs", self.model, attempts,
                               exc.reason, delay)
                time.sleep(delay)

    def _read_content(self, response: requests.Response) -> str:
        """The message content of a 200 chat completion; _Retryable when the body is not one (an HTML error page
        served with 200, a cut-off body, no content)."""
        try:
            data = response.json()
            content = data["choices"][0]["message"].get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, requests.RequestException):
            raise _Retryable(f"judge {self.model} returned a reply that is not a chat completion") from None
        finally:
            response.close()
        if not isinstance(content, str):
            raise _Retryable(f"judge {self.model} returned no message content")
        return content

    # -- API ---------------------------------------------------------------------------------------------------------
    def _complete(self, messages: list[dict], generation: dict) -> tuple[str, int]:
        return self._request(self._payload(messages, generation, stream=False), read=self._read_content)

    def complete(self, messages: list[dict], **generation) -> str:
        return self._complete(messages, generation)[0]

    def _one(self, messages: list[dict], generation: dict) -> JudgeResult:
        try:
            text, attempts = self._complete(messages, generation)
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
        """Text pieces as the endpoint sends them (server-sent events). Retries happen before the first piece."""
        response, attempts = self._request(self._payload(messages, generation, stream=True), stream=True)
        try:
            content_type = response.headers.get("Content-Type", "")
            if "text/event-stream" not in content_type:  # a server that ignored stream=True
                try:
                    yield self._read_content(response)
                except _Retryable as exc:
                    raise JudgeError(exc.reason, attempts) from None
                return
            for raw in response.iter_lines(decode_unicode=False):
                line = raw.decode("utf-8", errors="replace").strip() if raw else ""
                if not line.startswith("data:"):
                    continue
                data = line[len("data:"):].strip()
                if data == "[DONE]":
                    return
                try:
                    chunk = json.loads(data)
                except ValueError:
                    raise JudgeError(f"judge {self.model} sent a malformed stream chunk", attempts) from None
                if isinstance(chunk, dict) and chunk.get("error"):
                    raise JudgeError(self._redact(f"judge {self.model} stream error: {chunk['error']}"), attempts)
                for choice in (chunk.get("choices") or []) if isinstance(chunk, dict) else []:
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        yield piece
        except requests.RequestException as exc:
            raise JudgeError(f"judge {self.model} stream broke off ({type(exc).__name__})", attempts) from None
        finally:
            response.close()


# --------------------------------------------------------------------------------------------------------------------
# Local backend (a transformers model through evaluator.models.load_model)


def _to_request(messages: list[dict], generation: dict):
    from evaluator.models import GenerationRequest

    _check_messages(messages)
    options = _check_generation(generation)
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system") or None
    turns = [m for m in messages if m["role"] != "system"]
    if not turns or turns[-1]["role"] != "user":
        raise ValueError("the last (non-system) message must come from the user")
    earlier = [f"{'User' if m['role'] == 'user' else 'Assistant'}: {m['content']}" for m in turns[:-1]]
    last = turns[-1]["content"]
    text = "\n\n".join(earlier + [f"User: {last}"]) if earlier else last  # earlier turns folded into the text
    request = GenerationRequest(text=text, system=system, max_new_tokens=int(options["max_tokens"]),
                                temperature=float(options["temperature"]))
    if options.get("seed") is not None:
        request.seed = int(options["seed"])
    if options.get("stop"):
        stop = options["stop"]
        request.stop = [stop] if isinstance(stop, str) else list(stop)
    return request


class LocalJudge:
    """A local model, loaded once (never with remote code) and kept for the whole run."""

    def __init__(self, source: str, revision: str | None = None, *, precision: str = "auto",
                 batch_size: int | str = 4):
        from evaluator.models import load_model

        self._adapter = load_model(source, revision, precision=precision, batch_size=batch_size)
        resolved = getattr(self._adapter, "revision", None) or revision
        self.identity = {"kind": "local", "model": source, "revision": resolved}
        self._lock = threading.Lock()  # one generation at a time on the one model

    def __repr__(self) -> str:
        return f"LocalJudge(model={self.identity['model']!r}, revision={self.identity['revision']!r})"

    def _generate(self, requests_: list) -> list[str]:
        with self._lock:
            return list(self._adapter.generate(requests_))

    def complete(self, messages: list[dict], **generation) -> str:
        request = _to_request(messages, generation)
        try:
            return self._generate([request])[0]
        except Exception as exc:  # noqa: BLE001 - reported as a judge failure
            raise JudgeError(f"local judge {self.identity['model']} failed: {type(exc).__name__}: {exc}") from None

    def complete_many(self, conversations: list[list[dict]], **generation) -> list[JudgeResult]:
        results: list[JudgeResult | None] = [None] * len(conversations)
        pending: list[tuple[int, Any]] = []
        for i, messages in enumerate(conversations):
            try:
                pending.append((i, _to_request(messages, generation)))
            except Exception as exc:  # noqa: BLE001 - complete_many never raises
                results[i] = JudgeResult(text=None, error=f"{type(exc).__name__}: {exc}", attempts=0)
        if pending:
            try:  # the adapter batches by itself
                texts = self._generate([request for _, request in pending])
                for (i, _), text in zip(pending, texts):
                    results[i] = JudgeResult(text=text, error=None, attempts=1)
            except Exception:  # noqa: BLE001 - find the items that fail, one by one
                for i, request in pending:
                    try:
                        results[i] = JudgeResult(text=self._generate([request])[0], error=None, attempts=1)
                    except Exception as exc:  # noqa: BLE001
                        results[i] = JudgeResult(text=None, error=f"local judge failed: {type(exc).__name__}: "
                                                                  f"{exc}", attempts=1)
        return [r for r in results if r is not None]

    def stream(self, messages: list[dict], **generation) -> Iterator[str]:
        yield self.complete(messages, **generation)


# --------------------------------------------------------------------------------------------------------------------
# make_judge


_SPEC_HELP = "expected 'local:<hub id or folder>[@revision]' or 'endpoint:<base url>|<model>'"


def public_url(url: str) -> str:
    """A URL as it may be shown and stored: scheme, host (and port) and path only; never its user, password, query or
    fragment ("<unreadable url>" when it cannot be parsed)."""
    try:
        parts = urlsplit(str(url).strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unreadable url>"
    if not parts.scheme or not host:
        return "<unreadable url>"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


@dataclass(frozen=True)
class JudgeSpec:
    """A judge spec, parsed and checked (nothing loaded, nothing called): an endpoint's public base url and model, or
    a local model's source (hub id or folder) and revision."""

    kind: str  # "endpoint" or "local"
    base_url: str = ""
    model: str = ""
    source: str = ""
    revision: str | None = None


def parse_judge_spec(spec: str, token: str | None = None) -> JudgeSpec:
    """Check a judge spec without building the judge; ValueError says what is wrong. No message ever holds a URL's
    user, password or query, nor the token."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty judge spec: {_SPEC_HELP}")
    spec = spec.strip()
    if token and token in spec:
        raise ValueError("the judge spec must not contain the token; pass it as the token argument")
    kind, sep, rest = spec.partition(":")
    kind, rest = kind.strip().lower(), rest.strip()
    if not sep or kind not in ("local", "endpoint"):
        raise ValueError(f"unknown judge spec {redact(spec[:60], token)!r}: {_SPEC_HELP}")
    if kind == "endpoint":
        return _endpoint_spec(rest)
    return _local_spec(rest, spec)


def _endpoint_spec(rest: str) -> JudgeSpec:
    base_url, bar, model = rest.partition("|")
    base_url, model = base_url.strip(), model.strip()
    shown = public_url(base_url)
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ValueError(f"bad endpoint judge spec: the base url {shown} cannot be read") from None
    if parts.username or parts.password:
        raise ValueError(f"bad endpoint judge spec: no user or password in the base url ({shown}); the token goes in "
                         "LEADERBOARD_JUDGE_TOKEN (or HF_TOKEN)")
    if parts.query or parts.fragment or "?" in base_url or "#" in base_url:
        raise ValueError(f"bad endpoint judge spec: no query or fragment in the base url ({shown}); a key goes in "
                         "LEADERBOARD_JUDGE_TOKEN (or HF_TOKEN)")
    if not bar or not base_url or not model or "|" in model:
        raise ValueError(f"bad endpoint judge spec (base url {shown}): expected 'endpoint:<base url>|<model>'")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"bad endpoint judge spec: the base url must be http(s)://host[:port]/path, not {shown}")
    if any(c.isspace() for c in base_url + model):
        raise ValueError(f"bad endpoint judge spec (base url {shown}): whitespace in the url or model")
    return JudgeSpec("endpoint", base_url=base_url.rstrip("/"), model=model)


def _local_spec(rest: str, spec: str) -> JudgeSpec:
    shown = redact(spec[:200])
    if not rest:
        raise ValueError(f"bad local judge spec {shown!r}: expected 'local:<hub id or folder>[@revision]'")
    source, revision = rest, None
    if not Path(rest).expanduser().is_dir() and "@" in rest:
        source, _, revision = rest.rpartition("@")
        source, revision = source.strip(), revision.strip()
        if not source or not revision:
            raise ValueError(f"bad local judge spec {shown!r}: empty model or revision around '@'")
    if not Path(source).expanduser().is_dir():
        if not re.fullmatch(r"[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?", source) or ".." in source:
            raise ValueError(f"bad local judge spec {shown!r}: {redact(source[:120])!r} is neither a folder nor a Hub "
                             "model id")
    if revision is not None and not re.fullmatch(r"[\w.\-/]+", revision):
        raise ValueError(f"bad local judge spec {shown!r}: malformed revision {redact(revision[:60])!r}")
    return JudgeSpec("local", source=source, revision=revision)


def make_judge(spec: str, token: str | None = None, *, timeout: float = 60, max_retries: int = 4,
               concurrency: int = 8, backoff: float = 1.0) -> Judge:
    """A judge from its spec. A malformed spec raises ValueError (the message never holds the token, nor a URL's
    user, password or query)."""
    if timeout <= 0 or max_retries < 0 or concurrency < 1 or backoff < 0:
        raise ValueError("judge options: timeout > 0, max_retries >= 0, concurrency >= 1 and backoff >= 0")
    parsed = parse_judge_spec(spec, token)
    if parsed.kind == "endpoint":
        return EndpointJudge(parsed.base_url, parsed.model, token, timeout=timeout, max_retries=max_retries,
                             concurrency=concurrency, backoff=backoff)
    return LocalJudge(parsed.source, parsed.revision)


def judge_id(identity: dict | None) -> str | None:
    """A short id of the judge (8 hex characters of the hash of its identity), so that two runs graded by the same
    judge show the same id; None when there was no judge."""
    if not identity:
        return None
    from evaluator.prompt_files import prompt_hash

    return prompt_hash(json.dumps(identity, sort_keys=True, default=str)).split(":", 1)[1][:8]


def judge_name(identity: dict | None) -> str:
    """The judge named for people: "<model> (endpoint <url>)" or "<model> @ <revision> (local)"; never a token."""
    identity = identity or {}
    if identity.get("kind") == "endpoint":
        return f"{identity.get('model', '?')} (endpoint {public_url(identity.get('base_url', ''))})"
    if identity.get("kind") == "local":
        return f"{identity.get('model', '?')} @ {identity.get('revision') or 'unpinned revision'} (local)"
    return redact(", ".join(f"{k}={v}" for k, v in identity.items())) or "unknown judge"


# --------------------------------------------------------------------------------------------------------------------
# SimpleQA grade parsing

_WORD_TO_GRADE = {"CORRECT": "A", "INCORRECT": "B", "NOT ATTEMPTED": "C"}
_PREFIX = re.compile(r"^(?:THE\s+)?(?:FINAL\s+)?(?:GRADE|ANSWER|VERDICT|LETTER|RESULT|EVALUATION|OUTPUT)"
                     r"(?:\s+(?:IS|LETTER))?\s*[:=\-]?\s*")
_LINE = re.compile(r"^(?:(?P<letter>[ABC])(?:\s+(?P<word1>CORRECT|INCORRECT|NOT ATTEMPTED))?"
                   r"|(?P<word2>CORRECT|INCORRECT|NOT ATTEMPTED))$")


def parse_simpleqa_grade(text: str | None) -> str | None:
    """"A" (correct), "B" (incorrect), "C" (not attempted) from the LAST non-empty line of a judge reply; else None.

    The line may hold the letter, the grade word, or both ("A) CORRECT"), in any case, with markdown or a label
    ("**A**", "Grade: B", "Final answer: C."). A line with two different grades, or anything else, is ungraded.
    """
    if not isinstance(text, str):
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    line = lines[-1].upper()
    # Decoration: markdown, quotes, brackets, punctuation -> spaces ("NOT_ATTEMPTED" -> "NOT ATTEMPTED").
    line = re.sub(r"[*_`#>\"'\u2018\u2019\u201c\u201d()\[\]{}]", " ", line)
    line = re.sub(r"\s+", " ", line).strip()
    for _ in range(2):  # "Final answer: Grade: A"
        line = _PREFIX.sub("", line).strip()
    line = re.sub(r"\s*[:.\-\u2013\u2014=,;!]+\s*", " ", line)
    line = re.sub(r"\s+", " ", line).strip()
    match = _LINE.match(line)
    if not match:
        return None
    word = match.group("word1") or match.group("word2")
    letter = match.group("letter")
    if letter and word:
        return letter if _WORD_TO_GRADE[word] == letter else None
    return letter or _WORD_TO_GRADE[word]


# --------------------------------------------------------------------------------------------------------------------
# LAVE rating parsing

# A lone 1, 2 or 3: not touching a letter, digit or underscore, and not part of a decimal ("0.3", "2.5"); "3." is fine.
_LAVE_DIGIT = r"(?<![\w.])(?<!\d\.)([123])(?![\w]|[.,]\d)"
_LAVE_LABELLED = re.compile(r"\brating\b[\s*_]*(?:is\b|of\b)?[\s*_]*[:=]?[\s*_]*" + _LAVE_DIGIT, re.IGNORECASE)
# The reply's final character, as the reference reads it: a lone 1, 2 or 3 at the very end (closing punctuation,
# quotes and markdown after it allowed).
_LAVE_FINAL = re.compile(r"(?<![\w.])(?<!\d\.)([123])[\s.!*_`)\]\"']*$")


def parse_lave_rating(text: str | None) -> int | None:
    """The LAVE rating (1, 2 or 3) where the rater's format puts it; None when it is not there (the caller then
    decides: the paper's fallback 2, flagged, for a real judgement; unrated for a reply that is not one).

    Only two places count: a labelled rating ("So rating=3", "Rating: 2", "the rating is **1**"; the last one wins
    over later stray digits: "rating: 2/3" -> 2, "rating=2. Not a 3." -> 2), else the reply's final character, as the
    reference implementation reads it ("... so 3." -> 3, "2" -> 2). A digit anywhere else is never a rating: "Rate
    limit: 3 requests per second exceeded" and "3 of the references agree" hold none. Non-strings -> None.
    """
    if not isinstance(text, str):
        return None
    labelled = _LAVE_LABELLED.findall(text)
    if labelled:
        return int(labelled[-1])
    final = _LAVE_FINAL.search(text.strip())
    return int(final.group(1)) if final else None
