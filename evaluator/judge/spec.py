"""Judge specs, checked without building the judge: `endpoint:<base url>|<model>` or `local:<hub id or
folder>[@revision]` (parse_judge_spec -> JudgeSpec), and public_url, the only form of a URL that is ever shown or
stored (scheme, host, port and path; never a user, password, query or fragment)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from evaluator.redaction import redact

SPEC_HELP = "expected 'local:<hub id or folder>[@revision]' or 'endpoint:<base url>|<model>'"
UNREADABLE_URL = "<unreadable url>"
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?")
_REVISION = re.compile(r"[\w.\-/]+")


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
        raise ValueError(f"empty judge spec: {SPEC_HELP}")
    spec = spec.strip()
    if token and token in spec:
        raise ValueError("the judge spec must not contain the token; pass it as the token argument")
    kind, sep, rest = spec.partition(":")
    kind, rest = kind.strip().lower(), rest.strip()
    if not sep or kind not in ("local", "endpoint"):
        raise ValueError(f"unknown judge spec {redact(spec[:60], token)!r}: {SPEC_HELP}")
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
        if not _HUB_ID.fullmatch(source) or ".." in source:
            raise ValueError(f"bad local judge spec {shown!r}: {redact(source[:120])!r} is neither a folder nor a Hub "
                             "model id")
    if revision is not None and not _REVISION.fullmatch(revision):
        raise ValueError(f"bad local judge spec {shown!r}: malformed revision {redact(revision[:60])!r}")
    return JudgeSpec("local", source=source, revision=revision)
