"""Judge specs, checked without building the judge: `endpoint:<base url>|<model>` or `local:<hub id or
folder>[@revision]` (parse_judge_spec -> JudgeSpec). An endpoint is checked, and its URL shown, by the rules served
models share (evaluator.endpoints.names: parse_endpoint, public_url). judge_problem adds what can be known without
a call: a local judge named by Hub id that this machine's Hugging Face cache lacks while the Hub is off."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from evaluator.endpoints.names import UNREADABLE_URL, parse_endpoint, public_url  # noqa: F401 - read from here too
from evaluator.endpoints.redaction import redact

SPEC_HELP = "expected 'local:<hub id or folder>[@revision]' or 'endpoint:<base url>|<model>'"
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?")
_REVISION = re.compile(r"[\w.\-/]+")


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
    endpoint = parse_endpoint(rest, "judge", "LEADERBOARD_JUDGE_TOKEN (or HF_TOKEN)")
    return JudgeSpec("endpoint", base_url=endpoint.base_url, model=endpoint.model)


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


def hub_off() -> bool:
    """Whether the Hugging Face Hub is switched off for this process (HF_HUB_OFFLINE, as huggingface_hub reads it)."""
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())


def judge_problem(spec: str, token: str | None = None) -> str | None:
    """What stops this judge, known without a call, in one line naming it and what to do: a malformed spec
    (parse_judge_spec's line), or a local judge named by Hub id (not a folder) whose config.json is not in this
    machine's Hugging Face cache while the Hub is off. None when nothing is known against it (an endpoint is only
    known by calling it; with the Hub on, a local judge is downloaded with the run)."""
    try:
        parsed = parse_judge_spec(spec, token)
    except ValueError as exc:
        return str(exc)
    if parsed.kind != "local" or Path(parsed.source).expanduser().is_dir() or not hub_off():
        return None
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(parsed.source, "config.json", revision=parsed.revision), str):
        return None
    named = f"local:{parsed.source}" + (f"@{parsed.revision}" if parsed.revision else "")
    return (f"the judge {redact(named[:200])} is not in this machine's Hugging Face cache and the Hub is off "
            f"(HF_HUB_OFFLINE=1): download it once with the Hub reachable (hf download {parsed.source}), or name a "
            "local model folder (local:/path/to/model)")
