"""The HTTP client under evaluator.endpoints.chat_client, whose every call runs under a `Budget`: the deadline and
the reply cap of evaluator.endpoints.limits.

Every socket operation of a call (connect, TLS, each write, each read, of the headers and of the body, streamed or
not) gets the client's own timeout cut to what is left before the deadline; one that starts past it, or a socket
timeout that the deadline caused, fails at once with LimitMissed, and every byte read counts against the cap. The
bound lives in the network layer the HTTP client's connection pool uses (`httpcore2`), so nothing above it (headers,
body, server-sent events) can get round it. LimitMissed is an `openai.OpenAIError`, which the `openai` client passes
on at once instead of asking again: a call past its deadline or cap has nothing left to try with.

A compressed body is bounded by what it decodes to as well: the transport asks for the codings
evaluator.endpoints.decoding undoes under a count, decodes the body there (the HTTP client sees it uncompressed), and
every decoded byte counts against a second allowance of the same cap; a reply in any other coding is refused with one
line before its body is read (that module says why this and not the HTTP client's own decoding).
"""
from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

import httpcore2
import httpx2
import openai

from evaluator.endpoints.decoding import ASKED, REFUSED_ENCODING, codings, decoded, refusal
from evaluator.endpoints.limits import DEADLINE, TOO_LARGE, Limits

_WRITE_PIECE = 64 * 1024  # bytes sent per socket write, each under what is left of the deadline


class LimitMissed(openai.OpenAIError):
    """A call ran out of time or bytes (its message: the one-line reason)."""


class Budget:
    """What is left to one call: time before its deadline, bytes before its cap (those read, and those decoded from
    a compressed body); `missed` says which ran out, or REFUSED_ENCODING for a reply in a coding that was refused."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.deadline = time.monotonic() + limits.deadline
        self.bytes_left = limits.max_reply_bytes
        self.decoded_left = limits.max_reply_bytes
        self.missed: str | None = None
        self._refusal = ""

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline

    def reason(self) -> str | None:
        """The one-line reason when the call ran out of time or bytes, else None."""
        if self.missed is None and self.expired():
            self.missed = DEADLINE
        if self.missed == REFUSED_ENCODING:
            return self._refusal
        return self.limits.missed(self.missed) if self.missed else None

    def timeout(self, given: float | None) -> float:
        """`given` (a socket operation's own timeout) cut to what is left; LimitMissed at once when nothing is."""
        if self.missed == TOO_LARGE:
            raise LimitMissed(self.limits.missed(TOO_LARGE))
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.missed = DEADLINE
            raise LimitMissed(self.limits.missed(DEADLINE))
        return left if given is None else min(given, left)

    def count(self, received: int) -> None:
        self.bytes_left -= received
        if self.bytes_left < 0:
            self.missed = TOO_LARGE
            raise LimitMissed(self.limits.missed(TOO_LARGE))

    def count_decoded(self, produced: int) -> None:
        self.decoded_left -= produced
        if self.decoded_left < 0:
            self.missed = TOO_LARGE
            raise LimitMissed(self.limits.missed(TOO_LARGE))

    def refuse(self, reason: str) -> LimitMissed:
        """What a reply whose coding is refused becomes (`reason`: the one line)."""
        self.missed, self._refusal = REFUSED_ENCODING, reason
        return LimitMissed(reason)

    def timed_out(self, error: Exception) -> Exception:
        """What a socket timeout becomes: LimitMissed when it was the deadline's, else the timeout itself."""
        if self.expired():
            self.missed = DEADLINE
            return LimitMissed(self.limits.missed(DEADLINE))
        return error


_CURRENT: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("endpoint_budget", default=None)


@contextmanager
def within(budget: Budget) -> Iterator[Budget]:
    """Socket operations in this block (in this thread) run under `budget`."""
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def iterate_within(budget: Budget, items: Iterable[Any]) -> Iterator[Any]:
    """`items` (a stream read lazily, after the call returned) with each step under `budget`."""
    iterator = iter(items)
    while True:
        with within(budget):
            try:
                item = next(iterator)
            except StopIteration:
                return
        yield item


class _BoundedStream(httpcore2.NetworkStream):
    """A connection whose every operation runs under the current call's Budget (none: as given)."""

    def __init__(self, inner: httpcore2.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        budget = _CURRENT.get()
        if budget is None:
            return self._inner.read(max_bytes, timeout)
        try:
            data = self._inner.read(max_bytes, budget.timeout(timeout))
        except httpcore2.TimeoutException as exc:
            raise budget.timed_out(exc) from None
        budget.count(len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        budget = _CURRENT.get()
        if budget is None:
            return self._inner.write(buffer, timeout)
        view = memoryview(buffer)
        for start in range(0, len(view), _WRITE_PIECE):
            try:
                self._inner.write(bytes(view[start:start + _WRITE_PIECE]), budget.timeout(timeout))
            except httpcore2.TimeoutException as exc:
                raise budget.timed_out(exc) from None

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        budget = _CURRENT.get()
        if budget is not None:
            timeout = budget.timeout(timeout)
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore2.NetworkBackend):
    """The standard blocking backend, its connections bounded by the current call's Budget."""

    def __init__(self):
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options=None) -> httpcore2.NetworkStream:
        budget = _CURRENT.get()
        if budget is not None:
            timeout = budget.timeout(timeout)
        return _BoundedStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options=None) -> httpcore2.NetworkStream:
        budget = _CURRENT.get()
        if budget is not None:
            timeout = budget.timeout(timeout)
        return _BoundedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _count_decoded(produced: int) -> None:
    budget = _CURRENT.get()
    if budget is not None:
        budget.count_decoded(produced)


class _DecodedBody(httpx2.SyncByteStream):
    """A compressed body, decoded as it is read, every decoded byte counted under the current call's Budget."""

    def __init__(self, raw: httpx2.SyncByteStream, applied: list[str]):
        self._raw, self._applied = raw, applied

    def __iter__(self) -> Iterator[bytes]:
        yield from decoded(self._raw, self._applied, _count_decoded)

    def close(self) -> None:
        self._raw.close()


class _BoundedTransport(httpx2.HTTPTransport):
    """httpx2's own transport (HTTP/1.1, TLS verified as usual) over a pool whose connections are bounded; it asks
    for the codings it decodes itself, under the cap, and hands the client each body uncompressed."""

    def __init__(self):
        super().__init__()
        limits = httpx2.Limits()
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(), max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            network_backend=_BoundedBackend())

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = ASKED
        response = super().handle_request(request)
        applied = codings(response.headers.get_list("content-encoding"))
        if not applied:
            return response
        refused = refusal(applied)
        if refused:
            response.close()
            budget = _CURRENT.get()
            raise budget.refuse(refused) if budget is not None else LimitMissed(refused)
        headers = [(name, value) for name, value in response.headers.multi_items()
                   if name.lower() not in ("content-encoding", "content-length")]  # they say what was on the wire
        return httpx2.Response(response.status_code, headers=headers, stream=_DecodedBody(response.stream, applied),
                               extensions=response.extensions)


def http_client() -> httpx2.Client:
    """The HTTP client a ChatClient's `openai` client uses: the `openai` defaults (redirects followed, its
    timeouts), over connections that each call's Budget bounds."""
    import openai

    return openai.DefaultHttpxClient(transport=_BoundedTransport())
