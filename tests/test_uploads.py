"""No uploads: the real app (build_app + launch_options, as app.py serves it) refuses Gradio's upload routes and
multipart bodies with 403 and a one-sentence reason, before reading them, and stores nothing in Gradio's upload
folder; pages and the API work as before."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
import requests

from leaderboard.ui.uploads import NO_UPLOADS, NoUploads, is_upload
from tests.conftest import PATIENT, free_port


@pytest.fixture
def served(settings, store, tmp_path, monkeypatch):
    """(the app's URL, Gradio's upload folder): the real app, its upload folder (GRADIO_TEMP_DIR) in tmp_path."""
    from leaderboard.ui import build_app, launch_options

    folder = tmp_path / "gradio-uploads"
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(folder))
    demo = build_app(settings, store)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(settings, store))
    try:
        assert Path(demo.server_app.uploaded_file_dir) == folder  # where the upload route would store files
        yield f"http://127.0.0.1:{port}", folder
    finally:
        demo.close()


def stored(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if path.is_file()} if folder.exists() else set()


def test_twenty_files_in_one_request_are_refused_and_nothing_is_stored(served, settings):
    url, folder = served
    assert settings.max_file_size == "1mb"  # each file is under Gradio's per-file limit: 18 MB in all
    before = stored(folder)
    files = [("files", (f"part{i}.bin", bytes([i]) * 900_000)) for i in range(20)]
    answer = requests.post(f"{url}/gradio_api/upload", files=files, timeout=60)
    assert answer.status_code == 403, answer.text[:200]
    assert answer.text == NO_UPLOADS
    assert stored(folder) == before


def test_one_small_file_is_refused_with_the_reason_wherever_it_is_sent(served):
    url, folder = served
    small = {"files": ("small.png", b"\x89PNG" + b"x" * 96)}
    for route in ("/gradio_api/upload", "/gradio_api/upload/", "/gradio_api/upload?upload_id=abc",
                  "/gradio_api/process_recording", "/gradio_api/component_server"):
        answer = requests.post(url + route, files=small, allow_redirects=False, timeout=30)
        assert answer.status_code == 403 and answer.text == NO_UPLOADS, (route, answer.status_code, answer.text)
    progress = requests.get(f"{url}/gradio_api/upload_progress?upload_id=abc", timeout=30)
    assert progress.status_code == 403
    assert NO_UPLOADS.count(".") == 1 and NO_UPLOADS.strip().endswith(".")  # one sentence
    assert stored(folder) == set()


def test_the_pages_and_the_api_work_as_before(served):
    from gradio_client import Client

    url, _ = served
    assert requests.get(url + "/", timeout=30).status_code == 200
    assert requests.get(f"{url}/gradio_api/info", timeout=30).status_code == 200
    client = Client(url + "/", verbose=False, download_files=False, httpx_kwargs=PATIENT)
    board = client.predict("", [], [], "runs", False, api_name="/leaderboard")
    assert board is not None
    json_body = requests.post(f"{url}/gradio_api/component_server", json={}, timeout=30)
    assert json_body.status_code != 403  # only multipart bodies are refused there


@pytest.mark.slow  # a browser test
def test_a_browser_sees_the_pictures_and_downloads_the_details_without_uploading(served, store, settings,
                                                                               finished_runs, browser):
    """The components that show or hand out files (the Explorer's picture and download button, the playground's
    picture) work in a real browser, and nothing the page does asks an upload route or is refused."""
    from leaderboard.explorer.details_cache import details_path
    from tests.conftest import BROWSER_TIMEOUT_MS
    from tests.explorer_runs import publish_run

    url, _ = served
    key = publish_run(store, settings, finished_runs["vision-a"])
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    try:
        page = context.new_page()
        page.set_default_timeout(BROWSER_TIMEOUT_MS)
        asked, refused = [], []
        page.on("request", lambda request: asked.append(
            {"type": "http", "path": urlparse(request.url).path,
             "headers": [(k.encode(), v.encode()) for k, v in request.headers.items()]}))
        page.on("response", lambda response: refused.append(response.url) if response.status == 403 else None)
        page.goto(f"{url}/?tab=explorer&bench=reform&run={key}&item=coarse-01/gen")
        page.locator("#explorer-image img").filter(visible=True).first.wait_for(state="visible")
        page.get_by_text("Take the data").first.click()  # the accordion holding the download button
        button = page.locator("#explorer-download").filter(visible=True).first
        button.wait_for(state="visible")
        with page.expect_download() as download:
            button.click()
        assert Path(download.value.path()).read_bytes() == store.read_bytes(details_path(key, "reform"))
        page.get_by_role("tab", name="Judge playground").click()
        page.locator("#judge-mode").get_by_text("LAVE rating").click()
        pick = page.locator("#judge-question-pick input").first
        pick.click()
        pick.fill("circles")
        page.get_by_role("option").filter(has_text="lave-01").filter(visible=True).first.click()
        page.locator("#judge-image img").wait_for(state="visible")
        assert page.locator("#judge-image img").evaluate("(img) => img.complete && img.naturalWidth > 0")
    finally:
        context.close()
    assert asked and not [scope["path"] for scope in asked if is_upload(scope)]
    assert refused == []


def test_every_launch_gets_the_middleware(settings, store):
    from leaderboard.ui import launch_options

    for backend in ("local", "hub"):
        options = launch_options(settings.with_(store_backend=backend), store)
        assert [m.cls for m in options["app_kwargs"]["middleware"]] == [NoUploads]
        assert options["num_workers"] == 0  # no static file workers, which would serve uploads outside the app


@pytest.mark.parametrize("path, content_type, refused", [
    ("/gradio_api/upload", b"application/octet-stream", True),
    ("/prefix/gradio_api/upload//", b"", True),
    ("/gradio_api/upload_progress", b"", True),
    ("/gradio_api/queue/join", b"Multipart/Form-Data; boundary=x", True),
    ("/gradio_api/queue/join", b"application/json", False),
    ("/details/org/model/0123456789ab_auto/cure.parquet", b"", False),
    ("/gradio_api/uploads", b"", False),
])
def test_what_counts_as_an_upload(path, content_type, refused):
    scope = {"type": "http", "path": path, "headers": [(b"content-type", content_type)] if content_type else []}
    assert is_upload(scope) is refused
