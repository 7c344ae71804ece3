"""Where benchmark data comes from: hf://datasets/... references and http(s) downloads, shared by the loaders."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable
from urllib.parse import urljoin

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


def read_source(source: str, what: str, download: Callable[[str, str, str | None], str] | None = None):
    """(text, resolve): a data file's text from a local path, an http(s) URL or an hf://datasets/... reference, and
    resolve(ref) -> where a path written relative to that file points (same folder, URL or Hub dataset).

    `download(repo_id, filename, revision) -> local path` fetches hf:// files (default: hf_download). A missing
    local file raises FileNotFoundError naming `what`.
    """
    if source.startswith("hf://"):
        repo_id, revision, filename = parse_hf(source)
        text = Path((download or hf_download)(repo_id, filename, revision)).read_text(encoding="utf-8")
        folder = filename.rsplit("/", 1)[0] + "/" if "/" in filename else ""
        at = f"@{revision}" if revision else ""
        return text, lambda ref: f"hf://datasets/{repo_id}{at}/{folder}{ref}"
    if source.startswith(("http://", "https://")):
        return http_text(source, what), lambda ref: urljoin(source, ref)
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    return path.read_text(encoding="utf-8"), lambda ref: str((path.parent / ref).resolve())


def json_records(text: str, source: str, list_keys: tuple[str, ...] = ("data",)) -> list:
    """Rows of a JSON file as the Hub's `datasets` json builder reads it: a list, an object holding the list under
    one of `list_keys`, a column-oriented object ({name: [values]}), or JSON lines. ValueError names `source`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: neither JSON nor JSON lines ({exc})") from None
    if isinstance(data, dict):
        key = next((k for k in list_keys if isinstance(data.get(k), list)), None)
        if key is not None:
            data = data[key]
        elif data and all(isinstance(v, list) for v in data.values()) and len({len(v) for v in data.values()}) == 1:
            names = list(data)
            data = [dict(zip(names, values)) for values in zip(*data.values())]  # column-oriented
    if not isinstance(data, list):
        raise ValueError(f"{source}: expected a list of records")
    return data
