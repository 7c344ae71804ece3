"""Where benchmark data comes from: hf://datasets/... references and http(s) downloads, shared by the loaders."""
from __future__ import annotations

import re

_HF_REF = re.compile(r"hf://datasets/([^/@]+/[^/@]+)(?:@([^/]+))?/(.+)")


def parse_hf(ref: str) -> tuple[str, str | None, str]:
    """hf://datasets/<org>/<name>[@revision]/<path/in/repo> -> (repo_id, revision, path)."""
    m = _HF_REF.fullmatch(ref)
    if not m:
        raise ValueError(f"expected hf://datasets/<org>/<name>/<file>, got {ref!r}")
    return m.group(1), m.group(2), m.group(3)


def hf_download(repo_id: str, filename: str, revision: str | None) -> str:
    """A dataset repo's file, through the Hub cache (works offline when cached); returns the local path."""
    from huggingface_hub import hf_hub_download

    return hf_hub_download(repo_id=repo_id, filename=filename, repo_type="dataset", revision=revision)


def http_text(url: str, what: str = "data", timeout: float = 120) -> str:
    """The text at an http(s) URL; a failure raises OSError naming `what` and the URL (no response body)."""
    import requests

    try:
        resp = requests.get(url, timeout=timeout)
    except requests.RequestException as exc:
        raise OSError(f"could not download {what} from {url}: {type(exc).__name__}") from None
    if resp.status_code != 200:
        raise OSError(f"could not download {what} from {url}: HTTP {resp.status_code}")
    resp.encoding = resp.encoding or "utf-8"
    return resp.text
