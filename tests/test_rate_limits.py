"""leaderboard.ui.rate_limits: the sliding window (with an injected clock), its bound on memory, its thread safety, and
the client address behind a request (X-Forwarded-For from trusted proxies only). The playground's use of it, through
the served app, is in tests/test_playground.py."""
from __future__ import annotations

import os
import threading

import pytest
from starlette.requests import Request as StarletteRequest

from leaderboard.ui.rate_limits import UNKNOWN, Bucket, SlidingWindow, address_key, client_address


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def window(clock: Clock, max_keys: int = 100) -> SlidingWindow:
    return SlidingWindow(60.0, max_keys=max_keys, clock=clock)


def at(address: str, per_minute: int = 2, budget: int = 100) -> list[Bucket]:
    return [Bucket("address", address, per_minute), Bucket("space", "", budget)]


def test_the_window_frees_after_60_seconds_and_says_when():
    clock = Clock()
    limiter = window(clock)
    assert limiter.acquire(at("a")) is None  # t = 0
    clock.now += 10
    assert limiter.acquire(at("a")) is None  # t = 10
    clock.now += 20
    refused = limiter.acquire(at("a"))  # t = 30: full until the first grant (t = 0) is 60 s old
    assert refused is not None and refused.bucket == Bucket("address", "a", 2) and refused.wait == 30
    clock.now += 29.5
    assert limiter.acquire(at("a")).wait == 1  # t = 59.5: half a second left is said as 1 s
    clock.now += 0.5
    assert limiter.acquire(at("a")) is None  # t = 60: the first grant left the window
    assert limiter.acquire(at("a")).wait == 10  # now full until the grant at t = 10 leaves
    assert limiter.count("address", "a") == 2


def test_refusals_count_nothing():
    clock = Clock()
    limiter = window(clock)
    limiter.acquire(at("a", per_minute=1))
    for _ in range(5):
        assert limiter.acquire(at("a", per_minute=1)).bucket.kind == "address"
    assert limiter.count("address", "a") == 1 and limiter.count("space", "") == 1
    clock.now += 60
    assert limiter.acquire(at("a", per_minute=1)) is None  # the refused tries never extended the wait


def test_the_global_budget_refuses_a_new_address():
    clock = Clock()
    limiter = window(clock)
    for address in ("a", "b", "c"):
        assert limiter.acquire(at(address, budget=3)) is None
    refused = limiter.acquire(at("d", budget=3))
    assert refused.bucket == Bucket("space", "", 3) and refused.wait == 60
    assert limiter.count("address", "d") == 0  # counted nowhere
    clock.now += 60
    assert limiter.acquire(at("d", budget=3)) is None


def test_the_refusal_names_the_limit_that_frees_last():
    clock = Clock()
    limiter = window(clock)
    limiter.acquire(at("a", per_minute=1, budget=2))  # t = 0: the address is full until 60
    clock.now += 30
    limiter.acquire(at("b", per_minute=1, budget=2))  # t = 30: the Space is full until 60, b until 90
    refused = limiter.acquire(at("b", per_minute=1, budget=2))
    assert refused.bucket.kind == "address" and refused.wait == 60
    refused = limiter.acquire(at("a", per_minute=1, budget=2))  # both full until 60: the first named
    assert refused.bucket.kind == "address" and refused.wait == 30


def test_user_and_address_buckets_count_together():
    clock = Clock()
    limiter = window(clock)
    alice_home = [Bucket("user", "alice", 2), *at("home")]
    alice_work = [Bucket("user", "alice", 2), *at("work")]
    assert limiter.acquire(alice_home) is None and limiter.acquire(alice_work) is None
    assert limiter.acquire([Bucket("user", "alice", 2), *at("cafe")]).bucket.kind == "user"
    assert limiter.acquire([Bucket("user", "bob", 2), *at("home")]) is None  # home has room for one more
    assert limiter.acquire([Bucket("user", "carol", 2), *at("home")]).bucket.kind == "address"


def test_memory_stays_bounded_under_a_flood_of_addresses():
    clock = Clock()
    limiter = window(clock, max_keys=50)
    for n in range(1000):
        assert limiter.acquire(at(f"10.0.{n // 256}.{n % 256}", budget=5000)) is None
        assert len(limiter) <= 50
    assert limiter.count("address", "10.0.3.231") == 1  # the latest kept
    assert limiter.count("space", "") == 1000  # this call's keys are never the ones dropped
    clock.now += 61
    assert limiter.acquire(at("x")) is None
    assert len(limiter) == 2  # every expired key was dropped: x and the Space


def test_expired_keys_are_dropped_on_the_next_call():
    clock = Clock()
    limiter = window(clock)
    for address in ("a", "b", "c"):
        limiter.acquire(at(address))
    assert len(limiter) == 4
    clock.now += 30
    limiter.acquire(at("d"))
    clock.now += 30  # a, b and c are 60 s old, d 30 s
    limiter.acquire(at("e"))
    assert len(limiter) == 3 and limiter.count("address", "d") == 1


def test_concurrent_callers_get_exactly_the_limit():
    limiter = SlidingWindow(60.0)
    granted = []
    barrier = threading.Barrier(16)

    def call():
        barrier.wait()
        for _ in range(20):
            if limiter.acquire([Bucket("space", "", 37)]) is None:
                granted.append(1)

    threads = [threading.Thread(target=call) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == 37


def test_a_window_needs_room():
    with pytest.raises(ValueError):
        SlidingWindow(60.0, max_keys=0)
    with pytest.raises(ValueError):
        SlidingWindow(0.0)


# -- the client address -------------------------------------------------------------------------------------------


def request(peer: str | None, *forwarded: str) -> StarletteRequest:
    """A starlette Request from `peer` carrying one X-Forwarded-For line per entry of `forwarded`."""
    headers = [(b"x-forwarded-for", value.encode()) for value in forwarded]
    scope = {"type": "http", "method": "POST", "path": "/", "query_string": b"", "headers": headers,
             "client": (peer, 40000) if peer else None}
    return StarletteRequest(scope)


def test_one_hop_reads_the_entry_the_proxy_appended():
    forged_a = request("10.9.9.9", "6.6.6.1, 203.0.113.7")
    forged_b = request("10.9.9.9", "6.6.6.2,203.0.113.7")
    assert client_address(forged_a, 1) == client_address(forged_b, 1) == "203.0.113.7"
    assert client_address(request("10.9.9.9", "203.0.113.8"), 1) == "203.0.113.8"
    assert client_address(request("10.9.9.9", "6.6.6.1", "203.0.113.7"), 1) == "203.0.113.7"  # two header lines


def test_no_hops_ignore_a_forged_header():
    assert client_address(request("198.51.100.4", "6.6.6.1"), 0) == "198.51.100.4"
    assert client_address(request("198.51.100.4", "6.6.6.1, 6.6.6.2"), 0) == "198.51.100.4"
    assert client_address(request("198.51.100.4"), 0) == "198.51.100.4"


def test_too_few_entries_fall_back_to_the_connection():
    assert client_address(request("10.9.9.9"), 1) == "10.9.9.9"
    assert client_address(request("10.9.9.9", " , "), 1) == "10.9.9.9"
    assert client_address(request("10.9.9.9", "203.0.113.7"), 2) == "10.9.9.9"
    assert client_address(request("10.9.9.9", "6.6.6.1, 203.0.113.7, 10.0.0.2"), 2) == "203.0.113.7"
    assert client_address(request(None), 0) == UNKNOWN
    assert client_address(None, 1) == UNKNOWN


def test_a_gradio_request_and_its_dict_copy():
    """gr.Request wraps the starlette Request; Gradio may also hand over a copy with plain dicts."""
    import gradio as gr

    wrapped = gr.Request(request=request("10.9.9.9", "6.6.6.1, 203.0.113.7"))
    assert client_address(wrapped, 1) == "203.0.113.7" and client_address(wrapped, 0) == "10.9.9.9"
    copied = gr.Request(headers={"X-Forwarded-For": "6.6.6.1, 203.0.113.9"}, client={"host": "10.9.9.9"})
    assert client_address(copied, 1) == "203.0.113.9" and client_address(copied, 0) == "10.9.9.9"


def test_address_keys():
    assert address_key("203.0.113.7") == "203.0.113.7"
    assert address_key("::ffff:203.0.113.7") == "203.0.113.7"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:DB8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("[2001:db8:1:2::1]") == "2001:db8:1:2::/64"
    assert address_key("Some-Host") == UNKNOWN


# Every spelling of one address a proxy may write: a port, brackets, spaces, leading zeros, IPv4-mapped IPv6.
SPELLINGS_OF_10_0_0_7 = ["10.0.0.7", "10.0.0.7:10001", "10.0.0.7:10002", "[10.0.0.7]", "[10.0.0.7]:443", " 10.0.0.7 ",
                         "\t10.0.0.7:80 ", "010.000.000.007", "010.000.000.007:8080", '"10.0.0.7"', "::ffff:10.0.0.7",
                         "[::ffff:10.0.0.7]:443", "::FFFF:010.0.0.7", "::ffff:a00:7"]


def test_every_spelling_of_an_address_is_one_bucket():
    assert {address_key(spelling) for spelling in SPELLINGS_OF_10_0_0_7} == {"10.0.0.7"}
    v6 = ["2001:db8:1:2::1", "[2001:db8:1:2::1]", "[2001:db8:1:2::1]:443", " 2001:DB8:1:2:0:0:0:9 ",
          "2001:0db8:0001:0002::1", "2001:db8:1:2::1%eth0", "[2001:db8:1:2::1%25eth0]:443"]
    assert {address_key(spelling) for spelling in v6} == {"2001:db8:1:2::/64"}
    assert address_key("fe80::1%eth0") == address_key("[fe80::1%en0]:80") == "fe80::/64"
    assert address_key("2001:db8:1:3::1") != address_key("[2001:db8:1:2::1]:80")
    assert address_key("10.0.0.8:10001") == "10.0.0.8" != address_key("10.0.0.7:10001")


@pytest.mark.parametrize("garbage", ["evil", "unknown", "", "   ", "1.2.3.4.5", "1.2.3", "256.0.0.1", "10.0.0.7.",
                                     "10.0.0.7:", "10.0.0.7:http", "10.0.0.7:123456", "[10.0.0.7", "[10.0.0.7]x",
                                     "[10.0.0.7]:x", "0x0a.0.0.7", "167772167", "١٠.0.0.7", "10.0.0.7, 10.0.0.8",
                                     "2001:db8::1:80:x", "gggg::1", "_gateway", "x" * 5000])
def test_text_that_is_no_address_shares_the_unknown_bucket(garbage):
    assert address_key(garbage) == UNKNOWN


def test_random_text_never_makes_a_fresh_bucket():
    import secrets

    keys = {address_key(f"unknown-{secrets.token_hex(8)}") for _ in range(50)}
    keys |= {address_key(secrets.token_urlsafe(12)) for _ in range(50)}
    assert keys == {UNKNOWN}


def test_the_server_is_built_trusting_no_proxy(monkeypatch):
    """uvicorn's Config reads FORWARDED_ALLOW_IPS when it is built (Gradio's launch() builds it): inside
    trusting_no_proxy() it is empty, so the ProxyHeadersMiddleware keeps the TCP peer even for loopback; on leaving,
    the variable is as it was."""
    import asyncio

    import uvicorn
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    from leaderboard.ui.rate_limits import trusting_no_proxy

    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    with trusting_no_proxy():
        config = uvicorn.Config(app=None)
    assert os.environ["FORWARDED_ALLOW_IPS"] == "*"
    monkeypatch.delenv("FORWARDED_ALLOW_IPS")
    with trusting_no_proxy():
        assert os.environ["FORWARDED_ALLOW_IPS"] == ""
    assert "FORWARDED_ALLOW_IPS" not in os.environ
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["client"])

    def run(coroutine) -> None:  # in a thread of its own: another test may have left this thread's loop running
        worker = threading.Thread(target=asyncio.run, args=(coroutine,))
        worker.start()
        worker.join(30)

    scope = {"type": "http", "client": ("127.0.0.1", 40000), "headers": [(b"x-forwarded-for", b"6.6.6.1")]}
    run(ProxyHeadersMiddleware(app, trusted_hosts=config.forwarded_allow_ips)(scope, None, None))
    run(ProxyHeadersMiddleware(app, trusted_hosts=uvicorn.Config(app=None).forwarded_allow_ips)(
        dict(scope), None, None))  # what uvicorn does outside: loopback's header is trusted
    assert seen == [("127.0.0.1", 40000), ("6.6.6.1", 0)]
