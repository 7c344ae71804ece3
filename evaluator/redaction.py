"""Keep secrets out of text that is stored, shown or logged: the one redactor of the project."""
from __future__ import annotations

import re

HUB_TOKEN_RE = re.compile(r"hf_[A-Za-z0-9]{8,}")  # anything shaped like a Hugging Face token
MASK = "***"


def redact(text: str, *secrets: str | None) -> str:
    """`text` with each given secret (4 characters or more), and anything shaped like a Hub token, masked."""
    text = str(text)
    for secret in secrets:
        if isinstance(secret, str) and len(secret) >= 4:
            text = text.replace(secret, MASK)
    return HUB_TOKEN_RE.sub("hf_" + MASK, text)
