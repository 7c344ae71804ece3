"""Rate limits that hold across sessions and clients: a sliding window per key, and the client address behind a request.

`SlidingWindow` is one small thread-safe object (an app creates its own; nothing here is module-global). Each key
(a `Bucket`: its kind, such as "user", "address" or "space", and its id) keeps the times of the events granted to
it within the last `window` seconds. `acquire(buckets)` counts one event against every bucket at once, or against
none when any of them is full; the refusal names the bucket that frees up last and says in how many whole seconds.
Memory is bounded: a key holds at most its limit of times, keys whose times all expired are dropped on every call,
and past `max_keys` keys the least recently granted ones are dropped. The clock is injectable (tests).

`client_address(request, hops)` is the address a request came from as the proxies in front of the app report it:
with `hops` trusted proxies, the `hops`-th entry of X-Forwarded-For from the right (the one the nearest trusted proxy
appended; whatever a client wrote further left is ignored), else the connection's own address. `address_key` groups
IPv6 addresses by their /64 network, which one client typically holds whole.
"""
from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, Callable, Sequence

UNKNOWN = "unknown"  # the address of a request that names none (all such requests share one bucket)
MAX_ADDRESS_CHARS = 100  # longer text in X-Forwarded-For is cut: no address is this long
IPV6_PREFIX = 64


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


def address_key(address: str) -> str:
    """The bucket of an address: an IPv4 address itself (IPv4-mapped IPv6 too), an IPv6 address's /64 network,
    anything else as written (lower-cased)."""
    text = address.strip().lower()
    try:
        ip = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return text or UNKNOWN
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/{IPV6_PREFIX}", strict=False))
    return str(ip)
