"""Fetch benchmark images: local files directly, http(s) URLs once into an on-disk cache.

A cached file is named by the sha256 of its URL plus the URL's extension, written to a temp file and moved into
place with os.replace, so a crash never leaves half an image behind and concurrent workers never clash.
Every failure raises ImageUnavailable(url, reason) with a short reason a person can read in the details table.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import io
import os
import re
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

from PIL import Image, ImageDraw, UnidentifiedImageError

_KNOWN_EXTENSIONS = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff"}
_USER_AGENT = "open-vlm-reasoning-leaderboard/1.0 (image fetcher)"


class ImageUnavailable(Exception):
    """An image could not be opened or downloaded."""

    def __init__(self, url: str, reason: str):
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


def is_url(text: str) -> bool:
    return urlparse(str(text)).scheme in ("http", "https")


def cache_path(url: str, cache_dir: Path) -> Path:
    """Where the cached copy of `url` lives: sha256(url) + the URL's extension (".img" when unknown)."""
    ext = Path(urlparse(url).path).suffix.lower()
    if ext not in _KNOWN_EXTENSIONS:
        ext = ".img"
    return Path(cache_dir) / (hashlib.sha256(url.encode("utf-8")).hexdigest() + ext)


def _open(path: Path, url: str) -> Image.Image:
    """Open and fully decode an image file (so a truncated file fails here, not later in the model)."""
    try:
        with Image.open(path) as img:
            img.load()
            return img.copy()
    except FileNotFoundError:
        raise ImageUnavailable(url, "file not found") from None
    except UnidentifiedImageError:
        raise ImageUnavailable(url, "not an image") from None
    except (OSError, ValueError, SyntaxError) as exc:  # truncated or corrupt data
        raise ImageUnavailable(url, f"unreadable image ({type(exc).__name__}: {exc})"[:200]) from None


def _download(url: str, timeout: float, retries: int) -> bytes:
    import requests

    last = "unknown error"
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(0.5 * 2 ** (attempt - 1), 4.0))
        try:
            resp = requests.get(url, timeout=timeout, headers={"User-Agent": _USER_AGENT})
        except requests.Timeout:
            last = f"timed out after {timeout:g}s"
            continue
        except requests.RequestException as exc:
            last = f"connection failed ({type(exc).__name__})"
            continue
        if resp.status_code == 200:
            if not resp.content:
                raise ImageUnavailable(url, "empty response")
            return resp.content
        last = f"HTTP {resp.status_code}"
        if resp.status_code < 500 and resp.status_code != 429:
            break  # 404, 403 ...: asking again will not help
    raise ImageUnavailable(url, last)


def fetch_image(url_or_path: str, cache_dir: Path, base_dir: Path | None = None, timeout: float = 20,
                retries: int = 2) -> Image.Image:
    """Return the image at a local path (relative paths resolve against `base_dir`) or an http(s) URL.

    URLs are downloaded once into `cache_dir`; later calls read the cached file. Raises ImageUnavailable.
    """
    source = str(url_or_path)
    if not is_url(source):
        if "://" in source:
            raise ImageUnavailable(source, f"unsupported scheme {urlparse(source).scheme!r}")
        path = Path(source)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        return _open(path, source)

    target = cache_path(source, cache_dir)
    if target.exists():
        try:
            return _open(target, source)
        except ImageUnavailable:
            target.unlink(missing_ok=True)  # a bad cached copy: fetch again
    data = _download(source, timeout, retries)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-", suffix=target.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        img = _open(Path(tmp), source)  # check before caching, so the cache holds only real images
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return img


def fetch_image_ref(ref: str, cache_dir: Path, shown: str | None = None) -> Image.Image:
    """fetch_image, plus hf://datasets/<org>/<name>[@rev]/<file> references read through the Hub cache.

    `shown` names the image in an ImageUnavailable (default: `ref`).
    """
    if not ref.startswith("hf://"):
        return fetch_image(ref, cache_dir)
    from evaluator.inputs.sources import hf_download, parse_hf

    try:
        repo_id, revision, filename = parse_hf(ref)
        local = hf_download(repo_id, filename, revision)
    except Exception as exc:  # noqa: BLE001 - any Hub failure makes this one image unavailable
        raise ImageUnavailable(shown or ref, f"Hub download failed ({type(exc).__name__})") from None
    return fetch_image(local, cache_dir)


BOX_COLOR = (255, 0, 0)


def box_line_width(image_size: tuple[int, int]) -> int:
    """A thick line that stays visible after the model's resizing: about 1% of the longer side, at least 3px."""
    return max(3, round(max(image_size) / 100))


def mark_box(image: Image.Image, box: tuple[int, int, int, int]) -> Image.Image:
    """A copy of `image` (RGB) with a thick red rectangle drawn just outside the pixel box (x0, y0, x1, y1), x1 and
    y1 exclusive; the line is about 1% of the longer side (at least 3 px) so it survives the model's resizing."""
    img = image.convert("RGB")  # convert() returns a new image, so the caller's image is left untouched
    w, h = img.size
    x0, y0 = max(0, min(int(box[0]), w)), max(0, min(int(box[1]), h))
    x1, y1 = max(x0 + 1, min(int(box[2]), w)), max(y0 + 1, min(int(box[3]), h))
    lw = box_line_width(img.size)
    outer = (max(0, x0 - lw), max(0, y0 - lw), min(w - 1, x1 - 1 + lw), min(h - 1, y1 - 1 + lw))
    ImageDraw.Draw(img).rectangle(outer, outline=BOX_COLOR, width=lw)
    return img


_DATA_URI = re.compile(r"^data:image/[\w.+-]+;base64,", re.IGNORECASE)


def decode_base64_image(text: str) -> Image.Image:
    """A base64 string (optionally a data: URI) -> RGB PIL image. Raises ValueError when it is not an image."""
    payload = _DATA_URI.sub("", text.strip())
    try:
        raw = base64.b64decode("".join(payload.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("image is neither a path nor valid base64") from None
    try:
        with Image.open(io.BytesIO(raw)) as img:
            img.load()
            return img.convert("RGB")
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise ValueError(f"base64 image does not decode ({type(exc).__name__})") from None


def encode_image_base64(image: Image.Image, fmt: str = "PNG") -> str:
    """The inverse of decode_base64_image (no data: prefix), as data files that embed their images store them."""
    buf = io.BytesIO()
    image.save(buf, format=fmt, optimize=True)
    return base64.b64encode(buf.getvalue()).decode("ascii")
