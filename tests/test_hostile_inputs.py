"""What a hostile visitor tried, answered: explorer links whose query names no Gradio route claims (a page-3 link
reloads), unknown runs answered without a store read per call, visitor input that never adds to the damaged files,
wrong JSON types, Infinity and `..` answered with an error (never an exception), a damaged CURE item that opens,
a precision or model type left out refused, uploads refused whatever their size, details linked by the run's key
(never the store's path on the server)."""
from __future__ import annotations

import io
import json
import time
from collections import Counter

import pandas as pd
import pytest
import requests

from leaderboard.board.space_copy import RECHECK_SECONDS
from leaderboard.explorer import queries as eq
from leaderboard.explorer.details_cache import details_path
from leaderboard.submissions import records as q
from tests.conftest import PATIENT
from tests.explorer_runs import publish_run

UNKNOWN = "nobody/nothing/0123456789ab_auto"
DOTTED = "org/../0123456789ab_auto"


def gradio_route_params() -> set[str]:
    """The query parameter names of the routes Gradio serves pages from ("/" and each page)."""
    import gradio as gr
    from fastapi.routing import APIRoute
    from gradio.routes import App

    with gr.Blocks() as demo:
        gr.Markdown("x")
    app = App.create_app(demo)
    names: set[str] = set()
    for route in app.routes:
        if isinstance(route, APIRoute) and route.path == "/" and "GET" in route.methods:
            names |= {param.name for param in route.dependant.query_params}
    return names


def test_no_explorer_query_name_is_one_a_gradio_route_claims():
    claimed = gradio_route_params()
    assert {"page", "deep_link"} <= claimed  # what made every page-2 link a 500
    assert claimed.isdisjoint(set(eq.URL_NAMES.values()) | {"tab"})


def many_questions(store, settings, finished_runs, copies: int = 3) -> str:
    """The text run published with its SimpleQA questions repeated `copies` times under new ids (31 x copies)."""
    key = publish_run(store, settings, finished_runs["text"])
    frame = pd.read_parquet(io.BytesIO(store.read_bytes(details_path(key, "simpleqa"))))
    copied = [frame.assign(question_id=frame["question_id"].astype(str) + f"-{n}") for n in range(copies)]
    buffer = io.BytesIO()
    pd.concat(copied, ignore_index=True).to_parquet(buffer)
    store.write_bytes(details_path(key, "simpleqa"), buffer.getvalue())
    return key


@pytest.mark.slow  # a browser test
def test_a_page_three_link_opens_and_reloads(store, settings, finished_runs, app_url, open_page):
    key = many_questions(store, settings, finished_runs)
    link = f"{app_url}?{eq.query_string(eq.Query(run=key, benchmark='simpleqa', page=3))}"
    assert "at=3" in link and "page=" not in link
    assert requests.get(link, timeout=30).status_code == 200
    page = open_page(app_url)
    for load in (lambda: page.goto(link), page.reload):
        response = load()
        assert response is not None and response.status == 200
        page.get_by_role("tab", name="Explorer", selected=True).wait_for(state="visible")
        page.wait_for_function("() => { const e = document.querySelector('#explorer-page input');"
                               " return e && e.value === '3'; }")
        page.locator("#explorer-pages").get_by_text("of 4").wait_for(state="visible")
        assert "at=3" in page.url


# ------------------------------------------------------------------------------------------------ the API

# each case below serves the app again (a second or two): the quick tier keeps the first cases of each list
SERVED_CASE = pytest.mark.slow


@pytest.mark.parametrize("args, says", [
    ((DOTTED, "cure"), "is not a run's key"),
    (("org/m/0123456789ab_auto", "cure", "", "", "abc"), "groups must be a list of texts"),
    pytest.param(("org/m/0123456789ab_auto", "cure", "", "", {"a": 1}), "groups must be a list of texts",
                 marks=SERVED_CASE),
    pytest.param(("org/m/0123456789ab_auto", "cure", "", "", [1, 2]), "groups must be a list of texts",
                 marks=SERVED_CASE),
    pytest.param(("org/m/0123456789ab_auto", "cure", "", "", [], "", "", False, -1), "page must be a whole number",
                 marks=SERVED_CASE),
    pytest.param(("org/m/0123456789ab_auto", "cure", "", "", [], "", "", False, 2.5), "page must be a whole number",
                 marks=SERVED_CASE),
    pytest.param(("org/m/0123456789ab_auto", "cure", "", "", [], "", "", "yes"), "descending must be true or false",
                 marks=SERVED_CASE),
    pytest.param((["org/m/0123456789ab_auto"], "cure"), "run must be a text", marks=SERVED_CASE),
    pytest.param(("org/m/0123456789ab_auto", 3), "benchmark must be a text", marks=SERVED_CASE),
])
def test_explorer_items_answers_bad_input_with_an_error(client, args, says):
    answer = client.predict(*args, api_name="/explorer_items")
    assert says in answer["error"]


def raw_call(app_url: str, api_name: str, body: str):
    """Call an API endpoint with a raw JSON body (e.g. holding Infinity, which JSON clients refuse to write): what
    the endpoint answered (its first output), or the error event's text."""
    started = requests.post(f"{app_url}gradio_api/call/{api_name}", data=body,
                            headers={"Content-Type": "application/json"}, timeout=30)
    assert started.status_code == 200, started.text[:300]
    stream = requests.get(f"{app_url}gradio_api/call/{api_name}/{started.json()['event_id']}", timeout=60).text
    event, data = "", ""
    for line in stream.splitlines():
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data = line.split(":", 1)[1].strip()
    assert event == "complete", stream[:500]
    return json.loads(data)[0]


@pytest.mark.parametrize("page", ["Infinity"] + [pytest.param(page, marks=SERVED_CASE) for page in (
    "-Infinity", "NaN", "1e999", "1" + "0" * 400, "-" + "9" * 400, "1000001", "1e300")],
    ids=["Infinity", "-Infinity", "NaN", "1e999", "400 digits", "-400 digits", "past the last page", "1e300"])
def test_a_page_of_infinity_is_answered_with_an_error(app_url, page):
    body = '{"data": ["org/m/0123456789ab_auto", "cure", "", "", [], "", "", false, %s, ""]}' % page
    assert "page must be a whole number" in raw_call(app_url, "explorer_items", body)["error"]


@pytest.mark.parametrize("args, says", [
    ((DOTTED, "cure", "cure-0001"), "is not a run's key"),
    (("org/m/0123456789ab_auto", "cure", 5), "item must be a text"),
    pytest.param(("org/m/0123456789ab_auto", "cure", ["cure-0001"]), "item must be a text", marks=SERVED_CASE),
    pytest.param(("org/m/0123456789ab_auto", "cure", "cure-0001", {"x": 1}), "compare must be a text",
                 marks=SERVED_CASE),
])
def test_explorer_item_answers_bad_input_with_an_error(client, args, says):
    assert says in client.predict(*args, api_name="/explorer_item")["error"]


def test_a_cure_item_with_damaged_option_scores_opens(store, settings, finished_runs, client):
    key = publish_run(store, settings, finished_runs["vision-a"])
    path = details_path(key, "cure")
    frame = pd.read_parquet(io.BytesIO(store.read_bytes(path)))
    shapes = ['[1, 2, 3]', '{"mean": 1}', '[[0.1], "x", null]', '[{"mean": "high", "sum": null}]', "[" * 5000]
    frame["option_scores"] = [shapes[i % len(shapes)] for i in range(len(frame))]
    frame["parsed_answer"] = frame["parsed_answer"].astype(object)
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    store.write_bytes(path, buffer.getvalue())
    items = client.predict(key, "cure", api_name="/explorer_items")["items"]
    assert items
    for entry in items[:6]:
        one = client.predict(key, "cure", entry["item"], api_name="/explorer_item")
        assert "error" not in one and one["item"] == entry["item"] and one["parts"]


@pytest.mark.slow  # 40 lookups on the loopback Hub, seconds
def test_unknown_runs_cost_no_store_read_per_call_and_never_add_damage(tmp_path):
    """On the Hub store (the loopback Hub, tests/hub_server.py, with the real client): once the board was read, 40
    anonymous lookups of an unknown run (explorer and a board section) make no Hub call at all (the board copy reads
    again from the store's picture of the repo); `..` keys through /calibration add nothing to the damaged files."""
    import uuid

    from gradio_client import Client
    from huggingface_hub import HfApi

    from leaderboard.board.file import LEADERBOARD_PATH
    from leaderboard.settings import Settings
    from leaderboard.store import open_store
    from leaderboard.ui import build_app, launch_options
    from tests.conftest import free_port
    from tests.hub_server import HubServer, hub_client_online

    with HubServer() as hub, hub_client_online():
        api = HfApi(endpoint=hub.url, token=hub.issue_token("ada", orgs=["test-org"]))
        settings = Settings.from_env({}, home=tmp_path / "home", store_backend="hub",
                                     results_repo=f"test-org/results-{uuid.uuid4().hex[:8]}", run_scheduler=False,
                                     benchmarks=("cure", "simpleqa"))
        store = open_store(settings, api=api)
        demo = build_app(settings, store)
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **launch_options(settings, store))
        try:
            client = Client(f"http://127.0.0.1:{port}/", verbose=False, download_files=False, httpx_kwargs=PATIENT)
            client.predict(UNKNOWN, "cure", api_name="/explorer_items")  # the board is read once
            reads, read_bytes = Counter(), store.read_bytes
            store.read_bytes = lambda path: reads.update([path]) or read_bytes(path)  # the store reads, counted
            before, started = len(hub.requests), time.monotonic()
            for round_ in range(2):
                if round_:  # the board copy is now old enough to be read again for a name it lacks
                    time.sleep(RECHECK_SECONDS + 0.2)
                for _ in range(10):
                    assert "no run" in client.predict(UNKNOWN, "cure", api_name="/explorer_items")["error"]
                    assert "no run" in client.predict(UNKNOWN, "cure", "cure-0001",
                                                      api_name="/explorer_item")["error"]
            board_reads = int((time.monotonic() - started) / RECHECK_SECONDS) + 1  # the most the copy may read
            assert reads[LEADERBOARD_PATH] >= 1, reads  # the board was read from the store again ...
            assert sum(reads.values()) <= board_reads < 40, reads  # ... not per call ...
            assert hub.requests[before:] == [], Counter(hub.requests[before:])  # ... and no Hub call at all
            del store.read_bytes
            for key in (DOTTED, f"org/../{'0' * 12}_auto", UNKNOWN, "../../etc/passwd", "org/.x/0123456789ab_auto"):
                client.predict(key, api_name="/calibration")
            assert store.damaged.listing() == []
        finally:
            demo.close()


# ------------------------------------------------------------------------------------------------ the rest

def test_a_precision_or_model_type_left_out_is_refused(client, store, tiny_llava):
    for args, what in (((tiny_llava.repo_id, "", None, "pretrained"), "Precision (none given)"),
                       ((tiny_llava.repo_id, "", "auto", None), "Model type (none given)")):
        message = client.predict(*args, api_name="/submit")
        assert message.startswith("**Not submitted.**") and what in message
    assert q.all_requests(store) == []


def test_uploads_over_the_limit_and_under_it_are_refused(store, settings):
    """The upload route is closed (leaderboard.ui.uploads; tests/test_uploads.py): a file over
    LEADERBOARD_MAX_FILE_SIZE and one under it are both refused, with the reason, not Gradio's per-file 413."""
    from leaderboard.ui import build_app, launch_options
    from leaderboard.ui.uploads import NO_UPLOADS
    from tests.conftest import free_port

    small = settings.with_(max_file_size="1kb")
    demo = build_app(small, store)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(small, store))
    try:
        url = f"http://127.0.0.1:{port}/gradio_api/upload"
        big = requests.post(url, files={"files": ("big.bin", b"x" * 4096)}, timeout=30)
        assert big.status_code == 403 and big.text == NO_UPLOADS, big.text[:200]
        under = requests.post(url, files={"files": ("small.bin", b"x" * 100)}, timeout=30)
        assert under.status_code == 403 and under.text == NO_UPLOADS, under.text[:200]
    finally:
        demo.close()


def test_details_are_linked_by_run_key_and_served_from_the_store_only(store, settings, finished_runs, client,
                                                                      app_url):
    key = publish_run(store, settings, finished_runs["vision-a"])
    board = client.predict("", [], [], "runs", False, api_name="/leaderboard")  # Run details: the Details links
    shown = json.dumps(board)
    assert f"details/{key}/cure.parquet" in shown
    assert str(store.root) not in shown and "file=" not in shown  # no server path in any link
    served = requests.get(f"{app_url}details/{key}/cure.parquet", timeout=30)
    assert served.status_code == 200 and served.content == store.read_bytes(details_path(key, "cure"))
    assert "attachment" in served.headers["content-disposition"]
    (store.root / "secret.parquet").write_bytes(b"not for visitors")
    for bad in (f"details/{key}/nope.parquet", "details/org/../secret/cure.parquet",
                f"details/{UNKNOWN}/cure.parquet", "details/..%2F..%2Fsecret/x/y/cure.parquet"):
        answer = requests.get(app_url + bad, timeout=30)
        assert answer.status_code == 404 and b"not for visitors" not in answer.content


def test_a_details_file_linked_to_another_store_file_is_not_served(store, settings, finished_runs, app_url):
    """A details file that is a symbolic link to a request or results file of the same store is absent to every
    reader: the /details/ route answers 404, the Explorer's download finds nothing, a listing skips it."""
    from leaderboard.explorer.views import details_file

    key = publish_run(store, settings, finished_runs["vision-a"])
    request_path = q.Request(model="org/other", revision="3" * 40).path
    q.save(store, q.Request(model="org/other", revision="3" * 40))
    linked = store.root / details_path(key, "cure")
    for target in (store.root / request_path, store.root / f"results/{key}.json"):
        linked.unlink()
        linked.symlink_to(target)
        answer = requests.get(f"{app_url}details/{key}/cure.parquet", timeout=30)
        assert answer.status_code == 404 and answer.content != target.read_bytes(), target
        assert store.read_bytes(details_path(key, "cure")) is None and store.local_file(details_path(key, "cure")) is None
        assert details_file(store, settings, key, "cure") is None
        assert details_path(key, "cure") not in store.list("details")
    folder = store.root / "details" / key  # a linked folder inside the store: the same
    real = folder.with_name(folder.name + "-real")
    linked.unlink()
    folder.rename(real)
    folder.symlink_to(real, target_is_directory=True)
    assert requests.get(f"{app_url}details/{key}/lave.parquet", timeout=30).status_code == 404
    assert store.list(f"details/{key}") == []
