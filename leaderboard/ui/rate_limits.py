"""Rate limits that hold across sessions and clients: a sliding window per key, and the client address behind a request.

`SlidingWindow` is one small thread-safe object (an app creates its own; nothing here is module-global). Each key
(a `Bucket`: its kind, such as "user", "address" or "space", and its id) keeps the times of the events granted to
it within the last `window` seconds. `acquire(buckets)` counts one event against every bucket at once, or against
none when any of them is full; the refusal names the bucket that frees up last and says in how many whole seconds.
Memory is bounded: a key holds at most its limit of times, keys whose times all expired are dropped on every call,
and past `max_keys` keys the least recently granted ones are dropped. The clock is injectable (tests).

`client_address(request, hops)` is the address a request came from as the proxies in front of the app report it:
with `hops` trusted proxies (LEADERBOARD_PROXY_HOPS), the `hops`-th entry of X-Forwarded-For from the right (the one
the nearest trusted proxy appended; whatever a client wrote further left is ignored), else the connection's own
address, the TCP peer. That peer is the real one only because the app's server trusts no proxy itself: uvicorn, as
Gradio starts it, would replace it by X-Forwarded-For for a loopback peer (its FORWARDED_ALLOW_IPS); the app launches
inside `trusting_no_proxy()`, so that this code alone reads X-Forwarded-For. `address_key` turns an address however a
proxy spelled it (a port, brackets, an IPv6 zone id, spaces, IPv4 octets with leading zeros, IPv4-mapped IPv6) into
its bucket: an IPv4 address, or an IPv6 address's /64 network, which one client typically holds whole; any text that
is no address shares the one UNKNOWN bucket.
"""
from __future__ import annotations

import ipaddress
import math
import os
import re
import threading
import time
from collections import OrderedDict, deque
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

UNKNOWN = "unknown"  # the bucket of a request that names no address (all such requests share it)
MAX_ADDRESS_CHARS = 100  # longer text in X-Forwarded-For is cut: no address is this long
IPV6_PREFIX = 64
FORWARDED_ALLOW_IPS = "FORWARDED_ALLOW_IPS"  # uvicorn: the peers whose X-Forwarded-For it trusts (default: loopback)
_PORT = re.compile(r"[0-9]{1,5}")
_OCTET = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class Bucket:
    """One limit an event counts against: its kind (what a refusal names), its id, and its events per window."""

    kind: str
    key: str
    limit: int


@dataclass(frozen=True)
class Refusal:
    """Why an event was refused: the full bucket, and the whole seconds until it has room again."""

    bucket: Bucket
    wait: int


class SlidingWindow:
    """Events per key over the last `window` seconds, shared by every thread; at most `max_keys` keys kept."""

    def __init__(self, window: float = 60.0, max_keys: int = 10_000, clock: Callable[[], float] = time.monotonic):
        if window <= 0 or max_keys < 1:
            raise ValueError("a sliding window needs a positive length and room for at least one key")
        self.window = window
        self.max_keys = max_keys
        self._clock = clock
        self._lock = threading.Lock()
        self._times: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()  # least recently granted first

    def acquire(self, buckets: Sequence[Bucket]) -> Refusal | None:
        """Count one event against every bucket and return None, or count nothing and return the refusal of the
        full bucket that frees up last."""
        with self._lock:
            now = self._clock()
            self._forget_expired(now)
            refusals = [refusal for refusal in (self._refusal(bucket, now) for bucket in buckets) if refusal]
            if refusals:
                return max(refusals, key=lambda refusal: refusal.wait)  # the first of equals: buckets' order
            keys = [(bucket.kind, bucket.key) for bucket in buckets]
            for key in keys:
                self._times.setdefault(key, deque()).append(now)
                self._times.move_to_end(key)
            self._bound(set(keys))
            return None

    def count(self, kind: str, key: str) -> int:
        """Events of one bucket within the window now."""
        with self._lock:
            return len(self._recent((kind, key), self._clock()))

    def __len__(self) -> int:
        """Keys held (tests: memory stays bounded)."""
        with self._lock:
            return len(self._times)

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        times = self._times.get(key, deque())
        while times and now - times[0] >= self.window:
            times.popleft()
        return times

    def _refusal(self, bucket: Bucket, now: float) -> Refusal | None:
        times = self._recent((bucket.kind, bucket.key), now)
        if len(times) < bucket.limit:
            return None
        if bucket.limit < 1:  # never any room
            return Refusal(bucket, math.ceil(self.window))
        frees_at = times[len(times) - bucket.limit] + self.window  # when the oldest time that must go expires
        return Refusal(bucket, max(1, math.ceil(frees_at - now)))

    def _forget_expired(self, now: float) -> None:
        """Drop the keys whose every time has expired (they come first: keys are in order of their last grant)."""
        while self._times:
            key, times = next(iter(self._times.items()))
            if times and now - times[-1] < self.window:
                return
            del self._times[key]

    def _bound(self, keep: set[tuple[str, str]]) -> None:
        """Drop the least recently granted keys beyond `max_keys` (never one of `keep`, this event's keys)."""
        while len(self._times) > self.max_keys:
            key = next(iter(self._times))
            if key in keep:
                return
            del self._times[key]


def _forwarded_for(headers: Any) -> list[str]:
    """The entries of every X-Forwarded-For header line, in order (left: written first)."""
    if headers is None:
        return []
    if hasattr(headers, "getlist"):  # starlette's Headers: one value per header line
        values = headers.getlist("x-forwarded-for")
    else:  # a plain mapping (Gradio's copy of a request)
        values = [value for name, value in dict(headers).items() if str(name).lower() == "x-forwarded-for"]
    return [part.strip()[:MAX_ADDRESS_CHARS] for value in values for part in str(value).split(",") if part.strip()]


def client_address(request: Any, hops: int) -> str:
    """The client's address as the `hops` trusted proxies in front of the app report it: the `hops`-th entry of
    X-Forwarded-For from the right; with no proxies, or fewer entries, the connection's own address."""
    if request is None:
        return UNKNOWN
    if hops > 0:
        entries = _forwarded_for(getattr(request, "headers", None))
        if len(entries) >= hops:
            return entries[-hops]
    host = getattr(getattr(request, "client", None), "host", None)
    return str(host)[:MAX_ADDRESS_CHARS] if host else UNKNOWN


def _host(address: str) -> str:
    """The host part of an address as a proxy may write it, without spaces, quotes, brackets, a port or an IPv6 zone
    id: '10.0.0.7:80', '[2001:db8::1]:80', 'fe80::1%eth0'; '' when the port or the brackets are malformed."""
    text = address.strip().strip('"').strip()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not (rest[:1] == ":" and _PORT.fullmatch(rest[1:]))):
            return ""
    elif text.count(":") == 1:  # IPv4 with a port (an IPv6 address has at least two colons)
        host, _, port = text.partition(":")
        if not _PORT.fullmatch(port):
            return ""
    else:
        host = text
    return host.split("%", 1)[0].strip()


def _dotted(text: str) -> str | None:
    """Four decimal IPv4 octets as ipaddress reads them (leading zeros dropped: '010' is 10), or None."""
    octets = text.split(".")
    if len(octets) != 4 or not all(_OCTET.fullmatch(octet) for octet in octets):
        return None
    values = [int(octet) for octet in octets]
    return ".".join(map(str, values)) if max(values) <= 255 else None


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address `host` spells (an IPv4 address, or the IPv4 tail of an IPv6 one, in decimal octets with leading
    zeros or without), or None."""
    head, colon, tail = host.rpartition(":")
    dotted = _dotted(tail)
    try:
        return ipaddress.ip_address(head + colon + dotted if dotted else host)
    except ValueError:
        return None


def address_key(address: str) -> str:
    """The bucket of an address however a proxy spelled it: an IPv4 address itself (an IPv4-mapped IPv6 address
    too), an IPv6 address's /64 network, and UNKNOWN, one shared bucket, for any text that is no address."""
    ip = _ip(_host(address))
    if ip is None:
        return UNKNOWN
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/{IPV6_PREFIX}", strict=False))
    return str(ip)


@contextmanager
def trusting_no_proxy() -> Iterator[None]:
    """Within the block, a uvicorn server that is built (Gradio's launch() builds one) keeps each request's TCP peer
    as its client address: FORWARDED_ALLOW_IPS is empty, so uvicorn's ProxyHeadersMiddleware trusts no peer's
    X-Forwarded-For. uvicorn reads the variable once, when it builds its Config; it is restored on leaving."""
    previous = os.environ.get(FORWARDED_ALLOW_IPS)
    os.environ[FORWARDED_ALLOW_IPS] = ""
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(FORWARDED_ALLOW_IPS, None)
        else:
            os.environ[FORWARDED_ALLOW_IPS] = previous
