"""How a setting's text is read: one small function per kind of value, and `setting(...)`, which declares a Settings
field with its environment variable, default text, description and reader; and is_loopback, whether a host to
listen on is this machine's alone."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import field
from pathlib import Path
from typing import Callable


def text(raw: str) -> str:
    return raw.strip()


def lower(raw: str) -> str:
    return raw.strip().lower()


def flag(raw: str) -> bool:
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def optional_flag(raw: str) -> bool | None:
    return flag(raw) if raw.strip() else None


def optional_float(raw: str) -> float | None:
    return float(raw) if raw.strip() else None


def optional_int(raw: str) -> int | None:
    return int(raw) if raw.strip() else None


def file_size(raw: str) -> str:
    """A size as Gradio's launch(max_file_size=...) takes it: digits and a unit (b, kb, mb, gb), e.g. "1mb"."""
    text = raw.strip().lower().replace(" ", "")
    if not re.fullmatch(r"[1-9][0-9]*(b|kb|mb|gb)", text):
        raise ValueError(f"not a size such as 100kb or 1mb: {raw!r}")
    return text


def csv(raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def path(raw: str) -> Path:
    return Path(raw.strip()).expanduser()


def optional_path(raw: str) -> Path | None:
    return path(raw) if raw.strip() else None


def setting(env: str, default: str, doc: str, parse: Callable[[str], object] = text, secret: bool = False):
    """A Settings field: read from `env` (default `default`, as text) with `parse`; `doc` says what it sets."""
    return field(default=parse(default), repr=not secret,
                 metadata={"env": env, "default": default, "doc": doc, "parse": parse, "secret": secret})


def is_loopback(host: str) -> bool:
    """Whether `host` (an address to listen on) is a loopback address, which only this machine can reach."""
    text = host.strip().strip("[]").lower()
    if text == "localhost":
        return True
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False
