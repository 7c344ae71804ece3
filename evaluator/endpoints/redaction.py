"""Keep secrets out of text that is stored, shown or logged: the one redactor of the project.

Besides the secrets it is given, it masks anything shaped like a Hugging Face token, the user and password of a URL
(`https://user:password@host` -> `https://***@host`) and the values of URL query parameters whose names look like
credentials (`?api_key=...`, `&token=...`, `&sig=...`).
"""
from __future__ import annotations

import re

HUB_TOKEN_RE = re.compile(r"hf_[A-Za-z0-9]{8,}")  # anything shaped like a Hugging Face token
URL_USERINFO_RE = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s?#@'\"<>]+@")  # scheme://user[:password]@
# a query parameter whose name says it holds a credential, and its value
CREDENTIAL_PARAM_RE = re.compile(
    r"(?i)([?&;][\w.\-]*(?:key|token|secret|passw(?:or)?d|pwd|auth|sig|signature|credential|session)[\w.\-]*=)"
    r"[^&#\s'\"<>]+")
MASK = "***"


def redact(text: str, *secrets: str | None) -> str:
    """`text` with each given secret (4 characters or more), anything shaped like a Hub token, URL userinfo and
    credential-looking query parameters masked."""
    text = str(text)
    for secret in secrets:
        if isinstance(secret, str) and len(secret) >= 4:
            text = text.replace(secret, MASK)
    text = URL_USERINFO_RE.sub(r"\1" + MASK + "@", text)
    text = CREDENTIAL_PARAM_RE.sub(r"\1" + MASK, text)
    return HUB_TOKEN_RE.sub("hf_" + MASK, text)
