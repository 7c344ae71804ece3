"""evaluator.inputs.images.fetch_image against a real HTTP server on 127.0.0.1 started here."""
from __future__ import annotations

import hashlib
import io
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from PIL import Image

from evaluator.inputs.images import ImageUnavailable, cache_path, fetch_image


def _png(color=(10, 200, 30), size=(8, 6)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


PNG = _png()
ROUTES = {
    "/pic.png": (200, "image/png", PNG),
    "/noext": (200, "image/png", PNG),
    "/text.png": (200, "text/html", b"<html>not an image</html>"),
    "/truncated.png": (200, "image/png", PNG[: len(PNG) // 2]),
    "/boom.png": (500, "text/plain", b"server error"),
}


@pytest.fixture
def server():
    hits: Counter = Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits[self.path] += 1
            status, ctype, body = ROUTES.get(self.path, (404, "text/plain", b"not found"))
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)  # quick to stop
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def test_download_once_then_cache(server, tmp_path):
    base, hits = server
    url = base + "/pic.png"
    img = fetch_image(url, tmp_path / "cache")
    assert img.size == (8, 6) and img.getpixel((0, 0)) == (10, 200, 30)
    cached = tmp_path / "cache" / (hashlib.sha256(url.encode()).hexdigest() + ".png")
    assert cached == cache_path(url, tmp_path / "cache") and cached.read_bytes() == PNG
    again = fetch_image(url, tmp_path / "cache")
    assert again.size == (8, 6)
    assert hits["/pic.png"] == 1  # the second call was served from the cache
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [cached.name]  # no temp files left


def test_url_without_extension(server, tmp_path):
    base, _ = server
    fetch_image(base + "/noext", tmp_path)
    assert cache_path(base + "/noext", tmp_path).suffix == ".img"
    assert cache_path(base + "/noext", tmp_path).exists()


def test_404_raises(server, tmp_path):
    base, hits = server
    with pytest.raises(ImageUnavailable) as info:
        fetch_image(base + "/missing.jpg", tmp_path, retries=2)
    assert info.value.reason == "HTTP 404"
    assert info.value.url == base + "/missing.jpg"
    assert hits["/missing.jpg"] == 1  # a 404 is not retried
    assert list(tmp_path.iterdir()) == []


def test_non_image_body_raises_and_is_not_cached(server, tmp_path):
    base, _ = server
    with pytest.raises(ImageUnavailable, match="not an image"):
        fetch_image(base + "/text.png", tmp_path)
    with pytest.raises(ImageUnavailable):
        fetch_image(base + "/truncated.png", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_server_error_is_retried(server, tmp_path):
    base, hits = server
    with pytest.raises(ImageUnavailable, match="HTTP 500"):
        fetch_image(base + "/boom.png", tmp_path, retries=1)
    assert hits["/boom.png"] == 2


def test_connection_refused(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ImageUnavailable, match="connection failed"):
        fetch_image(f"http://127.0.0.1:{port}/x.png", tmp_path, timeout=2, retries=0)


def test_bad_cached_copy_is_fetched_again(server, tmp_path):
    base, hits = server
    url = base + "/pic.png"
    cache_path(url, tmp_path).write_bytes(b"garbage")
    assert fetch_image(url, tmp_path).size == (8, 6)
    assert hits["/pic.png"] == 1


def test_local_paths(tmp_path):
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.png").write_bytes(PNG)
    cache = tmp_path / "cache"
    assert fetch_image("imgs/a.png", cache, base_dir=tmp_path).size == (8, 6)
    assert fetch_image(str(tmp_path / "imgs" / "a.png"), cache).size == (8, 6)
    assert not cache.exists()  # local files are opened directly, not copied
    with pytest.raises(ImageUnavailable, match="file not found"):
        fetch_image("imgs/missing.png", cache, base_dir=tmp_path)
    (tmp_path / "imgs" / "bad.png").write_text("hello")
    with pytest.raises(ImageUnavailable, match="not an image"):
        fetch_image("imgs/bad.png", cache, base_dir=tmp_path)
    with pytest.raises(ImageUnavailable, match="unsupported scheme"):
        fetch_image("ftp://example.org/a.png", cache)


def test_hf_references_are_read_through_the_hub_cache(tmp_path, monkeypatch):
    import evaluator.inputs.sources as sources
    from evaluator.inputs.images import fetch_image_ref

    Image.new("RGB", (6, 4), (1, 2, 3)).save(tmp_path / "x.png")
    calls = []

    def fake_download(repo_id, filename, revision):
        calls.append((repo_id, filename, revision))
        if filename != "imgs/x.png":
            raise FileNotFoundError(filename)
        return str(tmp_path / "x.png")

    monkeypatch.setattr(sources, "hf_download", fake_download)
    img = fetch_image_ref("hf://datasets/org/data@abc/imgs/x.png", tmp_path / "cache")
    assert img.getpixel((0, 0)) == (1, 2, 3) and calls == [("org/data", "imgs/x.png", "abc")]
    with pytest.raises(ImageUnavailable, match="Hub download failed"):
        fetch_image_ref("hf://datasets/org/data/imgs/missing.png", tmp_path / "cache", shown="http://x/y.png")
