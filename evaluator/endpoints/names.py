"""OpenAI-compatible endpoints, named once for the judge and for served models: `endpoint:<base url>|<model>`.

parse_endpoint checks a base url and a model name (no user, password, query or fragment in the url: a key goes in
the token setting, never in the url; a host that is not plain ASCII is refused with its punycode form, so a
look-alike such as a Cyrillic letter or a full-width dot never receives the token); public_url is the only form of a URL that is ever shown or stored (scheme,
host, port and path). A model spec `endpoint:<base url>|<model>` names a served model (`--model`), as the same text
names an endpoint judge (`--judge`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

ENDPOINT_PREFIX = "endpoint:"
UNREADABLE_URL = "<unreadable url>"
MODEL_TOKEN_SETTING = "LEADERBOARD_MODEL_TOKEN"  # a served model's bearer token (never HF_TOKEN: it would leave)


_PATH_LIKE = re.compile(r"^(?:/|~|\.{1,2}/|[A-Za-z]:[\\/])")


def shown_name(model: str) -> str:
    """A model name as it may be shown to visitors: a filesystem path (a local judge's folder, a served model named
    by its folder as `transformers serve` asks) by its last part, anything else (a Hub id, a served name) as is."""
    text = str(model or "")
    if not _PATH_LIKE.match(text):
        return text
    parts = [part for part in re.split(r"[\\/]+", text) if part and part not in (".", "..", "~")]
    return parts[-1] if parts else "local folder"


def public_url(url: str) -> str:
    """A URL as it may be shown and stored: scheme, host (and port) and path only; never its user, password, query or
    fragment ("<unreadable url>" when it cannot be parsed)."""
    try:
        parts = urlsplit(str(url).strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return UNREADABLE_URL
    if not parts.scheme or not host:
        return UNREADABLE_URL
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


@dataclass(frozen=True)
class Endpoint:
    """A checked endpoint: its base url (as given, without a trailing slash; it holds no credentials) and the model
    name requests carry."""

    base_url: str
    model: str

    @property
    def spec(self) -> str:
        return f"{ENDPOINT_PREFIX}{self.base_url}|{self.model}"

    @property
    def host(self) -> str:
        """host[:port] of the base url."""
        return public_url(self.base_url).split("://", 1)[-1].split("/", 1)[0]


def parse_endpoint(rest: str, what: str, token_setting: str) -> Endpoint:
    """`<base url>|<model>` checked; ValueError ("bad endpoint <what> spec: ...") says what is wrong, naming
    `token_setting` where a credential was put in the url. No message holds a url's user, password or query."""
    base_url, bar, model = str(rest).partition("|")
    base_url, model = base_url.strip(), model.strip()
    shown = public_url(base_url)
    bad = f"bad endpoint {what} spec"
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ValueError(f"{bad}: the base url {shown} cannot be read") from None
    if parts.username or parts.password:
        raise ValueError(f"{bad}: no user or password in the base url ({shown}); the token goes in {token_setting}")
    if parts.query or parts.fragment or "?" in base_url or "#" in base_url:
        raise ValueError(f"{bad}: no query or fragment in the base url ({shown}); a key goes in {token_setting}")
    if not bar or not base_url or not model or "|" in model:
        raise ValueError(f"{bad} (base url {shown}): expected 'endpoint:<base url>|<model>'")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{bad}: the base url must be http(s)://host[:port]/path, not {shown}")
    if not parts.netloc.isascii():
        raise ValueError(f"{bad}: the host {parts.hostname!r} is not plain ASCII (a look-alike of another host?); "
                         f"its punycode form is {punycode(parts.hostname)}: write that if it is the host you mean")
    if any(c.isspace() for c in base_url + model):
        raise ValueError(f"{bad} (base url {shown}): whitespace in the url or model")
    if any(ord(c) < 32 or ord(c) == 127 for c in model) or len(model) > 300:
        raise ValueError(f"{bad} (base url {shown}): the model name must be printable and at most 300 characters")
    return Endpoint(base_url.rstrip("/"), model)


def punycode(host: str) -> str:
    """The ASCII (IDNA) form of a host name, as a resolver would look it up ("<not a valid host name>" when it has
    none)."""
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return "<not a valid host name>"


def is_model_spec(text: object) -> bool:
    """Whether a --model text names a served model (`endpoint:...`) rather than a Hub id or a folder."""
    return isinstance(text, str) and text.strip().lower().startswith(ENDPOINT_PREFIX)


def parse_model_spec(spec: str) -> Endpoint:
    """A served model's spec `endpoint:<base url>|<model>` checked; ValueError says what is wrong."""
    if not is_model_spec(spec):
        raise ValueError(f"a served model is named 'endpoint:<base url>|<model>', not {public_url(spec)!r}")
    return parse_endpoint(spec.strip()[len(ENDPOINT_PREFIX):], "model", MODEL_TOKEN_SETTING)
