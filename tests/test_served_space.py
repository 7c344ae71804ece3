"""Served models in the Space (a model behind an OpenAI-compatible chat-completions endpoint, added by an admin):
their request records and key, the Queue tab's "Add served model" (admins only, decided from the session), running
them (nothing downloaded, the token by environment only, never a Job with hf-jobs), and their rows on the board
(display name, "served" tag, endpoint host, a link only for a Hub id, ranked only with runs asked the same way),
the Explorer and the results dataset."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from evaluator import api
from evaluator.runs.details import write_details
from leaderboard.board.columns import schema
from leaderboard.board.file import LEADERBOARD_PATH, load_board, rebuild_leaderboard
from leaderboard.board.frames import board_table, leaderboard_frame
from leaderboard.board.views import shown_rows, view_board, view_text
from leaderboard.running import model_cache
from leaderboard.running.hf_jobs import job_secrets
from leaderboard.running.job_dispatch import Dispatcher
from leaderboard.running.scheduler import Scheduler, served_tick, tick
from leaderboard.store import DamagedFile
from leaderboard.submissions import records as q
from leaderboard.submissions.endpoints import slug
from leaderboard.submissions.identity import SIGN_IN_NEEDED, SIGNED_OUT, Visitor
from leaderboard.submissions.served import ADMINS_ONLY, add_served, served_request
from leaderboard.submissions.views import queue_frame
from tests.conftest import PATIENT, free_port
from tests.published_runs import details_rows
from tests.results_files import board_result

ROUTER = "https://router.huggingface.co/v1"
QWEN = "Qwen/Qwen2.5-VL-72B-Instruct"
ADMIN, VISITOR = Visitor("ada", admin=True), Visitor("bob")
TOKEN = "sk-served-model-token-0042"
S = schema()


@pytest.fixture
def admin_settings(settings):
    return settings.with_(admins=("ada",), model_token=TOKEN)


def requests_in(store) -> list[q.Request]:
    return q.all_requests(store)


# -- the request record and its key -------------------------------------------------------------------------------

def test_a_served_request_has_a_key_no_hub_id_can_have_and_a_revision_per_endpoint_and_model():
    request = served_request(ROUTER, QWEN, "Qwen2.5-VL 72B", "instruction-tuned", "ada")
    sha = hashlib.sha1(f"{ROUTER}|{QWEN}".encode()).hexdigest()
    assert request.key == f"served--router.huggingface.co/Qwen--Qwen2.5-VL-72B-Instruct/{sha[:12]}_auto"
    assert (request.revision, request.precision, request.source) == (sha, "auto", "served")
    assert request.endpoint == {"base_url": ROUTER, "model": QWEN} and request.display_name == "Qwen2.5-VL 72B"
    assert q.is_request_key(request.key) and api.model_id_problem(request.model) is not None  # never a Hub id
    assert request.label == "Qwen2.5-VL 72B (served: router.huggingface.co)"
    # a port, odd characters, a trailing slash and another case of the scheme and host: the same endpoint
    local = served_request("HTTP://LocalHost:8000/v1/", "llava:13b..q4")
    assert local.model == "served--localhost-8000/llava-13b.q4" and q.is_request_key(local.key)
    assert local.endpoint["base_url"] == "http://localhost:8000/v1"
    assert local.label == "llava:13b..q4 (served: localhost:8000)"
    assert served_request("http://localhost:8000/v1", "llava:13b..q4").key == local.key  # a duplicate
    assert served_request("http://localhost:8001/v1", "llava:13b..q4").key != local.key
    ipv6 = served_request("http://[::1]:8000/v1", "-m/../x")
    assert q.is_request_key(ipv6.key) and ".." not in ipv6.key
    assert slug("") == "model" and slug("a/b:c") == "a--b-c"


def test_served_records_round_trip_and_old_records_still_load(store):
    request = served_request(ROUTER, QWEN, "Qwen 72B")
    assert q.Request.from_dict(json.loads(json.dumps(request.to_dict()))) == request
    old = {"model": "org/model", "revision": "a" * 40, "precision": "auto", "status": "PENDING", "source": "hub"}
    loaded = q.Request.from_dict(old)  # written before served models: no endpoint, no display name
    assert loaded.endpoint == {} and loaded.display_name is None and not loaded.served and loaded.label == "org/model"
    bad = [{**request.to_dict(), "endpoint": {}},
           {**request.to_dict(), "endpoint": {"base_url": "https://u:p@h/v1", "model": QWEN}},
           {**request.to_dict(), "endpoint": {"base_url": "https://h/v1?key=x", "model": QWEN}},
           {**request.to_dict(), "endpoint": "https://h/v1"},
           {**request.to_dict(), "display_name": "x" * 81},
           {**request.to_dict(), "display_name": 7},
           {**request.to_dict(), "model": "org/model"},
           {**old, "endpoint": {"base_url": ROUTER, "model": QWEN}}]
    for data in bad:
        with pytest.raises(DamagedFile):
            q.Request.from_dict(data)


# -- admins add a served model --------------------------------------------------------------------------------------

def test_an_admin_adds_a_served_model_and_the_queue_shows_its_name_and_host(admin_settings, store):
    outcome = add_served(admin_settings, store, ROUTER, QWEN, "  Qwen2.5-VL   72B ", "instruction-tuned", ADMIN)
    assert outcome.ok and not outcome.duplicate, outcome.message
    assert outcome.message == "Queued Qwen2.5-VL 72B (served: router.huggingface.co): position 1 in the queue."
    [stored] = requests_in(store)
    assert stored.served and stored.status == q.PENDING and stored.submitter == "ada"
    assert (stored.endpoint, stored.display_name, stored.model_type) == ({"base_url": ROUTER, "model": QWEN},
                                                                         "Qwen2.5-VL 72B", "instruction-tuned")
    pending = queue_frame([stored], q.PENDING)
    assert list(pending["Model"]) == ["Qwen2.5-VL 72B (served: router.huggingface.co)"]
    assert list(pending["Key"]) == [stored.key]
    # the same endpoint and model again, under another name: a duplicate, answered like one
    again = add_served(admin_settings, store, ROUTER + "/", QWEN, "Another name", "pretrained", ADMIN)
    assert again.ok and again.duplicate and "already submitted and is PENDING, position 1" in again.message
    assert len(requests_in(store)) == 1
    # once FAILED it may be added again
    stored.status = q.FAILED
    q.save(store, stored)
    assert add_served(admin_settings, store, ROUTER, QWEN, "", "pretrained", ADMIN).ok
    assert q.load(store, stored.path).status == q.PENDING and q.load(store, stored.path).display_name is None


@pytest.mark.parametrize("by,message", [(VISITOR, ADMINS_ONLY), (SIGNED_OUT, SIGN_IN_NEEDED), (None, SIGN_IN_NEEDED)])
def test_only_an_admin_may_add_one_and_nothing_is_written_otherwise(admin_settings, store, by, message):
    outcome = add_served(admin_settings, store, ROUTER, QWEN, "Qwen", "pretrained", by)
    assert not outcome.ok and outcome.message == message
    assert requests_in(store) == [] and store.list("requests") == []


@pytest.mark.parametrize("url,model,name,kind,expected", [
    ("https://ada:hunter2-pass@api.example.com/v1", QWEN, "", "pretrained", "no user or password"),
    ("https://api.example.com/v1?api_key=sk-live-key-99", QWEN, "", "pretrained", "no query or fragment"),
    ("https://api.example.com/v1#sk-live-key-99", QWEN, "", "pretrained", "no query or fragment"),
    ("ftp://api.example.com/v1", QWEN, "", "pretrained", "http(s)://host"),
    ("https://api.example.com/v1", "", "", "pretrained", "base URL"),
    ("", QWEN, "", "pretrained", "base URL"),
    ("https://api.example.com/v1", "a b", "", "pretrained", "whitespace"),
    ("https://api.example.com/v1", QWEN, "<script>alert(1)</script>", "pretrained", "A display name is"),
    ("https://api.example.com/v1", QWEN, "x" * 81, "pretrained", "at most 80 characters"),
    ("https://api.example.com/v1", QWEN, "ok", "sometimes-tuned", "Model type"),
    ("https://api.example.com/" + "v" * 2001, QWEN, "", "pretrained", "longer than 2000 characters"),
])
def test_a_bad_endpoint_or_name_is_refused_without_echoing_credentials(admin_settings, store, url, model, name, kind,
                                                                       expected):
    outcome = add_served(admin_settings, store, url, model, name, kind, ADMIN)
    assert not outcome.ok and expected in outcome.message.replace("\\", ""), outcome.message
    for secret in ("hunter2-pass", "sk-live-key-99", "ada:", "<script>"):
        assert secret not in outcome.message
    assert store.list("requests") == []


def test_every_message_is_scrubbed_of_the_model_token(admin_settings, store):
    outcome = add_served(admin_settings, store, "https://api.example.com/v1", TOKEN, "", "pretrained", ADMIN)
    assert outcome.ok and TOKEN not in outcome.message  # a token pasted as the model name is not shown back
    assert TOKEN not in admin_settings.scrub(f"the endpoint refused {TOKEN}")


def test_a_served_spec_in_the_submit_tab_points_to_the_admins_without_echoing_it(admin_settings, store):
    from leaderboard.submissions.checks import SERVED_BY_ADMINS, submit

    outcome = submit(admin_settings, store, f"endpoint:https://h.example/v1?key=sk-live-key-99|{QWEN}", by=ADMIN)
    assert not outcome.ok and outcome.message == SERVED_BY_ADMINS and store.list("requests") == []


def _launched(settings, store):
    from gradio_client import Client

    from leaderboard.ui import build_app, launch_options

    demo = build_app(settings, store)
    port = free_port()
    demo.launch(server_name=settings.host, server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(settings, store))
    return demo, Client(f"http://127.0.0.1:{port}/", verbose=False, download_files=False, httpx_kwargs=PATIENT)


def test_the_queue_tab_adds_for_the_local_admin_and_refuses_a_visitor_from_the_session(tmp_path):
    from leaderboard.settings import Settings
    from leaderboard.store import open_store

    arguments = (ROUTER, QWEN, "Qwen 72B", "instruction-tuned")
    # the local user of a loopback Space without sign-in is an admin
    local = Settings.from_env({}, home=tmp_path / "local", run_scheduler=False)
    store = open_store(local)
    demo, client = _launched(local, store)
    try:
        message = client.predict(*arguments, api_name="/add_served_model")
    finally:
        demo.close()
    assert message.startswith("Queued Qwen 72B (served: router.huggingface.co)"), message
    assert [r.display_name for r in requests_in(store)] == ["Qwen 72B"]
    # on 0.0.0.0 without sign-in every visitor is signed out, whatever the client sends (with sign-in, a client
    # without a session is too: add_served is refused for SIGNED_OUT above)
    settings = Settings.from_env({}, home=tmp_path / "open", run_scheduler=False, host="0.0.0.0")
    other = open_store(settings)
    demo, client = _launched(settings, other)
    try:
        message = client.predict(*arguments, api_name="/add_served_model")
    finally:
        demo.close()
    assert message == f"Not done: {SIGN_IN_NEEDED}" and other.list("requests") == []


# -- running it ----------------------------------------------------------------------------------------------------

STAND_IN = """#!{python}
import json, os, shutil, sys
args = sys.argv[1:]
out = args[args.index("--out") + 1]
request = json.load(open(args[args.index("--request") + 1]))
with open({record!r}, "a") as seen:
    token = os.environ.get("LEADERBOARD_MODEL_TOKEN")
    seen.write(json.dumps({{"argv": args, "token": token, "request": request}}) + "\\n")
if os.path.exists({output!r}) and request["source"] == "served":
    shutil.copytree({output!r}, out, dirs_exist_ok=True)
    sys.exit(0)
print("error: the endpoint refused the token " + str(os.environ.get("LEADERBOARD_MODEL_TOKEN")), flush=True)
sys.exit(2)
"""


def stand_in(settings, tmp_path: Path, output: Path | None = None):
    """Settings whose evaluator is a stand-in: it records its command line, token and request, then copies `output`
    (a finished run's folder) into --out for a served request, or fails saying the token."""
    script, record = tmp_path / "evaluator-stand-in", tmp_path / "seen.jsonl"
    script.write_text(STAND_IN.format(python=sys.executable, record=str(record),
                                      output=str(output or tmp_path / "no-output")))
    script.chmod(0o755)
    return settings.with_(python=str(script)), record


def served_results(model: str = QWEN, name: str | None = "Qwen2.5-VL 72B", host: str = "router.huggingface.co",
                   base_url: str = ROUTER, scores: dict | None = None, **kw) -> dict:
    """A served run's results.json as the evaluator writes it (run.served, run.modes, served: true)."""
    results = board_result("unused", scores or {"cure": 0.6}, **kw)
    results.update(served=True, display_name=name, params_billions=None)
    results["run"].update(device="served", dtype="served", scoring_path="none",
                          modes={benchmark: api.GENERATION for benchmark in results["benchmarks"]},
                          served={"base_url": base_url, "host": host, "model": model, "server_model": model,
                                  "vision": True, "vision_refused": False,
                                  "usage": {"prompt_tokens": 1200, "completion_tokens": 80, "requests": 30}})
    return results


def served_output(folder: Path, **kw) -> Path:
    """A served run's output folder: results.json and a real details file per benchmark (its card's columns)."""
    results = served_results(**kw)
    for field in ("model", "revision", "precision", "model_type", "architecture", "key", "submitted_time", "source"):
        results.pop(field, None)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(results))
    for benchmark in results["benchmarks"]:
        write_details(folder / "details" / f"{benchmark}.parquet", details_rows(benchmark, "served"))
    return folder


def test_the_model_cache_records_and_deletes_nothing_for_a_served_request(settings, store, tmp_path, monkeypatch):
    settings = settings.with_(delete_models=True)
    request = served_request(ROUTER, QWEN)
    assert model_cache.note_download(settings, request, cache_dir=tmp_path / "hub") is False
    assert not model_cache.ledger_path(settings).exists()
    monkeypatch.setattr(model_cache, "_free", lambda *a, **k: pytest.fail("the cache was cleaned after a served run"))
    assert model_cache.free_after_run(settings, store, request, cache_dir=tmp_path / "hub") == model_cache.Freed()


def test_the_token_goes_by_environment_to_served_runs_only_and_is_scrubbed(admin_settings, store, tmp_path,
                                                                           monkeypatch):
    monkeypatch.setenv("LEADERBOARD_MODEL_TOKEN", TOKEN)  # as on a Space, where the secret is in the environment
    settings, record = stand_in(admin_settings, tmp_path)
    served = served_request(ROUTER, QWEN, "Qwen", submitter="ada")
    hub = q.Request(model="org/model", revision="b" * 40, params_billions=0.5)
    for request in (served, hub):
        q.save(store, request)
    reports = [tick(settings, store), tick(settings, store)]  # the local worker runs it like any request, in turn
    assert [r.request for r in reports] == [served.path, hub.path] and [r.status for r in reports] == [q.FAILED] * 2
    seen = [json.loads(line) for line in record.read_text().splitlines()]
    assert [s["token"] for s in seen] == [TOKEN, None]  # by environment, to the served model's run only
    assert not any(TOKEN in " ".join(s["argv"]) or TOKEN in json.dumps(s["request"]) for s in seen)
    assert seen[0]["request"]["endpoint"] == {"base_url": ROUTER, "model": QWEN}
    failed = q.load(store, served.path)
    assert "the endpoint refused the token" in failed.error and TOKEN not in failed.error + failed.log_tail
    assert TOKEN not in json.dumps(settings.as_env()) and "LEADERBOARD_MODEL_TOKEN" not in job_secrets(settings)


class Jobs:
    """A Jobs API that starts nothing: it records the Jobs asked for."""

    def __init__(self):
        self.started: list[str] = []

    def whoami(self):
        return {"name": "org"}

    def list_jobs(self, **_):
        return []

    def run_job(self, name: str, labels: dict, **_):
        self.started.append(name)
        return SimpleNamespace(id=f"job-{len(self.started)}", status=SimpleNamespace(stage="SCHEDULING", message=""),
                               labels=labels, url="", created_at=None, durations=None)


def test_with_hf_jobs_a_served_request_never_goes_to_a_job_and_the_served_tick_runs_it_here(admin_settings, store,
                                                                                            tmp_path):
    settings, record = stand_in(admin_settings.with_(executor="hf-jobs", jobs_image="img", jobs_namespace="org"),
                                tmp_path, served_output(tmp_path / "finished"))
    served = served_request(ROUTER, QWEN, "Qwen2.5-VL 72B", submitter="ada")
    hub = q.Request(model="org/model", revision="b" * 40, params_billions=0.5)
    for request in (served, hub):  # the served one is older
        q.save(store, request)
    jobs = Jobs()
    dispatcher = Dispatcher(settings, store, jobs)
    report = dispatcher.tick(prepare=lambda: None)
    assert report.error is None and jobs.started == ["org--model--bbbbbbbbbbbb_auto"]
    assert q.load(store, served.path).status == q.PENDING and q.load(store, hub.path).status == q.RUNNING
    assert dispatcher.tick(prepare=lambda: None).started == []  # never, however many ticks
    done = served_tick(settings, store)  # the Space's second scheduler job: served requests only
    assert (done.request, done.status) == (served.path, q.FINISHED), done.error
    other = q.Request(model="org/other", revision="c" * 40, params_billions=0.5)
    q.save(store, other)
    assert served_tick(settings, store).request is None  # a request for a Job is never its to take
    assert q.load(store, other.path).status == q.PENDING
    assert json.loads(record.read_text())["token"] == TOKEN
    row = load_board(store, schema(settings.benchmarks)).set_index("key").loc[served.key]
    assert (row["served"], row["endpoint"], row["display_name"]) == ("true", ROUTER, "Qwen2.5-VL 72B")


def test_the_scheduler_adds_the_served_job_with_hf_jobs_only(settings, store):
    for executor, jobs in (("hf-jobs", ["evaluate", "evaluate-served"]), ("local", ["evaluate"])):
        scheduler = Scheduler(settings.with_(executor=executor, jobs_image="img", jobs_namespace="org"), store,
                              jobs_api=Jobs())
        scheduler.start(first_tick_now=False)
        try:
            assert sorted(job.id for job in scheduler._scheduler.get_jobs()) == jobs
        finally:
            scheduler.shutdown()
    assert "network-bound" in Scheduler.__doc__ and "cpu-basic" in Scheduler.__doc__


# -- the board -----------------------------------------------------------------------------------------------------

def _runs() -> list[dict]:
    """A served run, an in-process run asked by generation (options, as older runs record it), one asked by the
    defaults, and a served run whose endpoint's model name is no Hub id."""
    served = served_results(scores={"cure": 0.6, "reform": 0.4})
    served.update(model="served--router.huggingface.co/Qwen--Qwen2.5-VL-72B-Instruct", key="served--a/b/c")
    generation = board_result("org/generation", {"cure": 0.5, "reform": 0.3})
    generation["run"]["options"] = {"cure.mode": "generation", "reform.mode": "generation"}
    default = board_result("org/default", {"cure": 0.9, "reform": 0.9})
    private = served_results(model="house-model-7", name=None, host="10.0.0.5:8000", base_url="http://10.0.0.5:8000/v1",
                             scores={"cure": 0.3, "reform": 0.2})
    private.update(model="served--10.0.0.5-8000/house-model-7")
    return [served, generation, default, private]


def test_a_served_row_shows_its_name_tag_and_host_and_links_only_a_hub_id():
    raw = leaderboard_frame(_runs(), S)
    assert list(raw["served"]) == ["true", "false", "false", "true"]
    assert list(raw["endpoint"])[0] == ROUTER and pd.isna(raw["endpoint"][1])
    assert list(raw["modes"])[:3] == ["cure=generation,reform=generation", "cure=generation,reform=generation",
                                      "cure=likelihood,reform=both"]
    shown, frame = view_board(raw, S, show_flagged=True)
    table = board_table(frame, S)
    cells = {data[1]: text[1] for data, text in zip(table["data"], table["metadata"]["display_value"])}
    assert cells["served--router.huggingface.co/Qwen--Qwen2.5-VL-72B-Instruct"] == (
        f"[Qwen2.5-VL 72B](https://huggingface.co/{QWEN}) (served: router.huggingface.co)")
    assert cells["served--10.0.0.5-8000/house-model-7"] == "house-model-7 (served: 10.0.0.5:8000)"  # no link
    assert cells["org/default"] == "[org/default](https://huggingface.co/org/default)"
    text = view_text(raw, S, show_flagged=True)
    shown_name = "Qwen2.5-VL 72B (served: router.huggingface.co)"
    assert set(text["Model"]) >= {shown_name, "house-model-7 (served: 10.0.0.5:8000)"}
    # searching finds it by its display name and by its endpoint's model name
    assert list(view_text(raw, S, search="qwen2.5-vl 72b")["Model"]) == [shown_name]
    assert len(view_text(raw, S, search="house-model")) == 1
    # selecting one of its cells opens its run in the Explorer (the key is built from the table's data)
    from leaderboard.ui.explorer import board_cell_query

    row = next(r for r in table["data"] if r[1].startswith("served--router"))
    query = board_cell_query(row, 2, table["headers"], {}, {})
    assert query.run == f"served--router.huggingface.co/Qwen--Qwen2.5-VL-72B-Instruct/{'abcdef012345'}_auto"


def test_a_served_run_is_ranked_only_with_runs_asked_the_same_way_and_its_notes_say_so():
    raw = leaderboard_frame(_runs(), S)
    for view in (None, "cure", "reform"):
        rows = shown_rows(raw, S, S.view(view), show_flagged=True).rows.set_index("model")
        assert rows.loc["org/default", "rank"] == 1  # the likelihood run: a cohort of its own, however it scored
        ranks = rows.drop("org/default")["rank"].to_dict()  # the three runs asked by generation, served or not
        assert ranks == {"served--router.huggingface.co/Qwen--Qwen2.5-VL-72B-Instruct": 1, "org/generation": 2,
                         "served--10.0.0.5-8000/house-model-7": 3}
    overview = shown_rows(raw, S, S.view(None), show_flagged=True).rows.set_index("model")
    titles = ", ".join(api.card(name).short_title for name in ("cure", "reform"))
    note = f"asked by generation only: {titles} (ranked with runs asked the same way)"
    assert note in overview.loc["org/generation", "notes"]
    assert note in overview.loc["served--10.0.0.5-8000/house-model-7", "notes"]
    assert "asked" not in overview.loc["org/default", "notes"]
    cure = shown_rows(raw, S, S.view("cure"), show_flagged=True).rows.set_index("model")
    assert cure.loc["org/generation", "notes"].startswith(f"asked by generation only: {api.card('cure').short_title} (")
    from leaderboard.board.views import status_text

    shown = shown_rows(raw, S, S.view(None), show_flagged=True)
    assert "asked the same way" in status_text(shown, S, S.view(None))


def test_the_about_tab_says_modes_are_part_of_comparability(settings):
    from leaderboard.ui.about import about_markdown

    text = about_markdown(settings)
    assert "**Asked by**" in text and "runs asked differently are never ranked together" in text
    assert "served" in text and "LEADERBOARD_MODEL_TOKEN" in text


# -- published: board, Explorer, results dataset -------------------------------------------------------------------

def test_a_published_served_run_is_on_the_board_in_the_explorer_and_in_the_results_dataset(admin_settings, store,
                                                                                           tmp_path):
    from leaderboard.board import publish as publishing
    from leaderboard.board.dataset_card import CARD_PATH
    from leaderboard.explorer import queries as eq
    from leaderboard.explorer.details_cache import DetailsCache
    from leaderboard.explorer.views import list_items, open_item, runs_for

    assert add_served(admin_settings, store, ROUTER, QWEN, "Qwen2.5-VL 72B", "instruction-tuned", ADMIN).ok
    [request] = requests_in(store)
    [claimed] = q.claim_many(store, lambda _r: "w", 60, 1)
    out = served_output(tmp_path / "out")
    results = publishing.publish(store, claimed, out, admin_settings)
    closed = q.finish(store, request.path, "w", q.FINISHED)
    assert publishing.publish_board(admin_settings, store, closed, results)
    assert (results["served"], results["display_name"], results["source"]) == (True, "Qwen2.5-VL 72B", "served")
    board = schema(admin_settings.benchmarks)
    raw = load_board(store, board)
    assert list(raw["key"]) == [request.key] and list(raw["endpoint_model"]) == [QWEN]
    assert list(view_text(raw, board)["Model"]) == ["Qwen2.5-VL 72B (served: router.huggingface.co)"]
    assert rebuild_leaderboard(store, board)["key"].tolist() == [request.key]  # a rebuild agrees
    # the Explorer lists the run and opens its questions
    assert runs_for(raw, "cure") == [(f"Qwen2.5-VL 72B (served: router.huggingface.co) @ {request.revision[:12]} "
                                      "(auto)", request.key)]
    cache = DetailsCache(store)
    listing = list_items(cache, eq.Query(run=request.key, benchmark="cure"))
    assert listing.summary["total"] == 3
    opened = open_item(cache, eq.Query(run=request.key, benchmark="cure", item=listing.filtered["item"].iloc[0]),
                       tmp_path / "images", with_picture=False)
    assert opened.parts_a
    # the results dataset: the card lists the served columns, the board file and the details carry the run
    card = store.read_bytes(CARD_PATH).decode()
    assert all(f"| `{name}` |" in card for name in ("served", "endpoint", "endpoint_model", "display_name", "modes"))
    import io

    board_file = pd.read_parquet(io.BytesIO(store.read_bytes(LEADERBOARD_PATH)))
    assert board_file.set_index("key").loc[request.key, "served"] == "true"
    details = pd.read_parquet(io.BytesIO(store.read_bytes(f"details/{request.key}/cure.parquet")))
    assert set(details["run_key"]) == {request.key} and set(details["model"]) == {request.model}
    assert TOKEN not in json.dumps(results) and TOKEN not in card


@pytest.mark.slow  # end to end: the real worker process
def test_an_admin_adds_a_served_model_and_the_real_worker_runs_it_onto_the_board(admin_settings, store,
                                                                                  monkeypatch):
    """End to end, nothing faked but the endpoints: the Queue tab's action, scheduler ticks running the real
    evaluator against strict stand-ins that want the token, the publish, the board rows, the Explorer's compare view.
    The deployer's likelihood mode (LEADERBOARD_OPTIONS) is for in-process runs: a served run is asked by
    generation, and its notes say so."""
    from leaderboard.explorer import queries as eq
    from leaderboard.explorer.details_cache import DetailsCache
    from leaderboard.explorer.views import list_items
    from tests.served_servers import StandInServer

    monkeypatch.delenv("LEADERBOARD_MODEL_TOKEN", raising=False)  # the Space hands it over from its settings
    settings = admin_settings.with_(limit=2, options=("cure.mode=likelihood",))
    keys = []
    for name, answer in (("org/vlm", "The answer is (A)."), ("other/vlm", "The answer is (B).")):
        with StandInServer(name, token=TOKEN, max_images=1, strict_fields=True,
                           answer=lambda messages, body, answer=answer: answer) as server:
            added = add_served(settings, store, server.base_url, name, f"{name} (API)", "instruction-tuned", ADMIN)
            assert added.ok, added.message
            report = tick(settings, store)
            assert {r.headers.get("authorization") for r in server.chat_requests} == {f"Bearer {TOKEN}"}
        request = q.load(store, added.request.path)
        assert report.status == q.FINISHED == request.status, (request.error, request.log_tail)
        results = json.loads(store.read_bytes(f"results/{request.key}.json"))
        assert results["served"] is True and results["run"]["modes"] == {"cure": "generation"}
        assert TOKEN not in json.dumps(results) + (request.log_tail or "")
        keys.append(request.key)
    rows = view_text(load_board(store, S), S, show_flagged=True)
    assert sorted(m.split(" (served: 127.0.0.1:")[0] for m in rows["Model"]) == ["org/vlm (API)", "other/vlm (API)"]
    assert set(rows["Notes"]) == {"asked by generation only: CURE (ranked with runs asked the same way)"}
    compared = list_items(DetailsCache(store), eq.Query(run=keys[0], benchmark="cure", compare=keys[1]))
    assert compared.summary["total"] == 2 and len(compared.rows)
