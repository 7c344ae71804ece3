"""The loopback Hub's HTTP plumbing (used by tests/hub_server.py and its endpoint modules): the request and reply a
route handler sees and answers, the router, and the Hub's error shape. `HubError` is what every layer raises: the
status, the message (the JSON `error`), the `X-Error-Code` and extra headers of the Hub's error answer.
"""
from __future__ import annotations

import base64
import json
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Callable, Iterable


class HubError(Exception):
    """A Hub error answer: status, message (the JSON `error`), optional X-Error-Code and extra headers."""

    def __init__(self, status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.headers = status, message, code, dict(headers or {})


@dataclass
class Request:
    method: str
    path: str  # still %-encoded, query removed
    raw_query: str
    query: dict[str, list[str]]
    headers: object  # http.client.HTTPMessage
    body: bytes
    user: str | None = None  # the bearer token's user, when the token is known
    params: dict[str, str] = field(default_factory=dict)  # the route's named groups, %-decoded
    base_url: str = ""  # scheme://host:port of the server that got it

    def arg(self, name: str, default: str | None = None) -> str | None:
        return self.query.get(name, [default])[0]

    def flag(self, name: str) -> bool:
        """A boolean query parameter as the client encodes it (`true`/`false`; `1` also taken)."""
        return (self.arg(name) or "").lower() in ("1", "true")

    def json(self):
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            raise HubError(400, "the body is not JSON") from None

    def form(self) -> dict[str, str]:
        return dict(urllib.parse.parse_qsl(self.body.decode()))

    def form_lists(self) -> dict[str, list[str]]:
        """A form body whose keys may repeat (`paths=a&paths=b`)."""
        return urllib.parse.parse_qs(self.body.decode(), keep_blank_values=True)

    def url_with(self, **replace: str) -> str:
        """This request's full URL with some query parameters replaced (a `Link: rel="next"` target)."""
        pairs = [(k, v) for k, v in urllib.parse.parse_qsl(self.raw_query, keep_blank_values=True) if k not in replace]
        return f"{self.base_url}{self.path}?{urllib.parse.urlencode(pairs + list(replace.items()))}"


@dataclass
class Reply:
    status: int = 200
    body: bytes | Iterable[bytes] = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(payload, status: int = 200, headers: dict[str, str] | None = None,
               content_type: str = "application/json") -> Reply:
    return Reply(status, json.dumps(payload).encode(), content_type, dict(headers or {}))


def error_reply(error: HubError) -> Reply:
    """The Hub's error answer: JSON {"error": message} with X-Error-Message (and X-Error-Code when known)."""
    headers = {"X-Error-Message": error.message, **error.headers}
    if error.code:
        headers["X-Error-Code"] = error.code
    return json_reply({"error": error.message}, error.status, headers)


def redirect(location: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(302, b"", "text/plain", {"Location": location, **(headers or {})})


def byte_range(header: str | None, data: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    """(status, body) for an optional `Range: bytes=start-[end]` (what the client sends to resume a download)."""
    match = re.fullmatch(r"bytes=(\d+)-(\d*)", header or "")
    if match is None:
        return 200, data
    start = int(match.group(1))
    end = min(int(match.group(2)) if match.group(2) else len(data) - 1, len(data) - 1)
    headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
    return 206, data[start:end + 1]


def page(items: list, cursor: str | None, size: int) -> tuple[list, str | None]:
    """One page of `items` from an opaque `cursor` (None: the first page), and the next page's cursor (None: last)."""
    try:
        start = int(base64.urlsafe_b64decode(cursor.encode()).decode()) if cursor else 0
    except ValueError:
        start = -1
    if start < 0:
        raise HubError(400, "Invalid cursor")
    end = start + size
    after = base64.urlsafe_b64encode(str(end).encode()).decode() if end < len(items) else None
    return items[start:end], after


NONE, OPTIONAL, REQUIRED = "none", "optional", "required"  # what a route asks of the Authorization header


@dataclass
class Route:
    methods: tuple[str, ...]
    pattern: re.Pattern
    handler: Callable[[Request], Reply]
    auth: str = NONE


def route(methods: str, pattern: str, handler, auth: str = NONE) -> Route:
    return Route(tuple(methods.split()), re.compile(pattern), handler, auth)


class Router:
    def __init__(self, routes: list[Route]):
        self.routes = routes

    def find(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        """The route for a request (None: 404); raises a 405 for a known path asked with another method."""
        known_path = False
        for candidate in self.routes:
            match = candidate.pattern.fullmatch(path)
            if match is None:
                continue
            if method in candidate.methods:
                params = {k: urllib.parse.unquote(v) for k, v in match.groupdict().items() if v is not None}
                return candidate, params
            known_path = True
        if known_path:
            raise HubError(405, f"{method} is not allowed here")
        return None
