"""A reply's Content-Encoding, undone here under the reply cap (LEADERBOARD_ENDPOINT_MAX_REPLY_MB) instead of by the
HTTP client, so that the cap bounds what an answer decodes to and not only the bytes on the wire.

Why decode here rather than ask for `identity` alone: a server may compress whatever it is asked (a hostile one
will), and gzip-in-gzip turns a few kB into gigabytes; asking is a request, decoding under a count is a bound. Why not
count what the HTTP client decodes: how `httpx2` decodes (in bounded pieces or in one call, which codings, through
which optional packages) is its own and may change with its version, while the cap must hold whatever is installed.
So evaluator.endpoints.bounded_http asks for `gzip, deflate` only (ASKED), takes the Content-Encoding header off the
reply, and reads its body through `decoded`: the standard library's zlib, never more than PIECE bytes out of one
call, every byte each layer produces counted (a stacked coding's inner layers count too, so all decoding work stays
under the cap). A coding it cannot decode so (br, zstd, compress, an unknown name, more than MAX_LAYERS stacked) is
refused with one line before a byte of the body is read: it was not asked for, so the server broke the request.
"""
from __future__ import annotations

import zlib
from typing import Callable, Iterable, Iterator

import httpx2

ASKED = "gzip, deflate"  # the Accept-Encoding every call sends
PIECE = 64 * 1024  # the most bytes one layer hands on at a time
MAX_LAYERS = 5  # codings stacked on one body at most (httpx2's own bound)
REFUSED_ENCODING = "encoding"  # what a Budget says it missed when a reply's coding is refused
_SHOWN = 60  # characters of a refused Content-Encoding quoted in the refusal
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


def codings(values: Iterable[str]) -> list[str]:
    """The codings a reply's Content-Encoding header values name, in the order they were applied (identity left out)."""
    named = [part.strip().lower() for value in values for part in value.split(",")]
    return [name for name in named if name and name != "identity"]


def refusal(applied: list[str]) -> str | None:
    """The one-line reason a reply with these codings is not read, or None when `decoded` undoes them under the cap."""
    if len(applied) <= MAX_LAYERS and all(name in _WBITS for name in applied):
        return None
    shown = ", ".join(applied)
    shown = "".join(c if c.isalnum() or c in "-_., " else "?" for c in shown[:_SHOWN]) + (
        "..." if len(shown) > _SHOWN else "")
    return (f"the answer came with Content-Encoding '{shown}', which was not asked for (only {ASKED}, at most "
            f"{MAX_LAYERS} stacked); refused, not asked again")


class _Inflater:
    """One gzip or deflate layer, its output in pieces of at most PIECE bytes. A `deflate` body may be zlib-wrapped
    (as RFC 9110 says) or raw (as some servers send it): the first bytes tell which."""

    def __init__(self, name: str):
        self._name, self._first = name, True
        self._unpacker = zlib.decompressobj(_WBITS[name])

    def feed(self, data: bytes) -> Iterator[bytes]:
        try:
            out = self._inflate(data)
            while out:
                yield out
                out = self._unpacker.decompress(self._unpacker.unconsumed_tail, PIECE)
        except zlib.error as exc:
            raise httpx2.DecodingError(f"{self._name}: {exc}") from None

    def _inflate(self, data: bytes) -> bytes:
        """At most PIECE bytes of what `data` inflates to (the rest waits in the unpacker's unconsumed_tail)."""
        if not (self._first and data):
            return self._unpacker.decompress(data, PIECE)
        self._first = False
        try:
            return self._unpacker.decompress(data, PIECE)
        except zlib.error:
            if self._name != "deflate":
                raise
            self._unpacker = zlib.decompressobj(-zlib.MAX_WBITS)  # a raw deflate body
            return self._unpacker.decompress(data, PIECE)

    def finish(self) -> Iterator[bytes]:
        yield from self.feed(b"")  # what zlib still held, in pieces too


def decoded(raw: Iterable[bytes], applied: list[str], count: Callable[[int], None]) -> Iterator[bytes]:
    """The body `raw` with `applied` undone (the last applied first); `count(n)` hears of every n bytes a layer
    produces before they go on, so it can stop the body there. ValueError for codings `refusal` refuses."""
    if refusal(applied):
        raise ValueError(f"codings not decoded here: {applied}")
    layers = [_Inflater(name) for name in reversed(applied)]
    stream: Iterable[bytes] = raw
    for layer in layers:
        stream = _through(layer, stream, count)
    yield from stream


def _through(layer: _Inflater, upstream: Iterable[bytes], count: Callable[[int], None]) -> Iterator[bytes]:
    for chunk in upstream:
        for piece in layer.feed(chunk):
            count(len(piece))
            yield piece
    for piece in layer.finish():
        count(len(piece))
        yield piece
