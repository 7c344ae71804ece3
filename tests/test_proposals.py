"""Issue 42, one click to the model page: a finished, complete, unflagged run of a Hub model is proposed to its model
repo as one pull request adding `.eval_results/<leaderboard slug>.yaml`, opened with the Space's token through the
real huggingface_hub client on the loopback Hub; asking again links it; refusals and Hub errors say one sentence and
open nothing."""
from __future__ import annotations

import io
import json
from urllib.parse import quote

import pyarrow.parquet as pq
import pytest
import yaml

from leaderboard.board import proposals
from leaderboard.board.columns import schema
from leaderboard.board.file import LEADERBOARD_PATH, board_is_current, load_board
from leaderboard.board.frames import board_frame, board_table
from leaderboard.board.views import shown_rows
from leaderboard.submissions import records as queue
from leaderboard.submissions.identity import Visitor
from tests.conftest import PATIENT
from tests.published_runs import publish_hub_model_run

SPACE_USER = "leaderboard-bot"  # whose token the Space holds (HF_TOKEN)
ADA, BOB = Visitor("ada"), Visitor("bob")
FILE = ".eval_results/open-vlm-reasoning-leaderboard.yaml"


@pytest.fixture
def space_token(hub) -> str:
    return hub.issue_token(SPACE_USER)


@pytest.fixture
def space(settings, space_token):
    """The Space's settings: a token, its id (so entries link to the Explorer)."""
    return settings.with_(hf_token=space_token, space_id="test-org/leaderboard")


@pytest.fixture
def space_hub(hub, space_token):
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.url, token=space_token)


_models = iter(range(10_000))


def _published(hub, space, store, tmp_path, correct: float = 0.5, limit: int = 0) -> tuple:
    """(model id, the closed request) of a new model's finished run (tests/published_runs.publish_hub_model_run)."""
    model = f"acme/vlm-{next(_models)}"
    request = publish_hub_model_run(hub, space, store, tmp_path / model.replace("/", "_"), model, correct, limit)
    return model, request


def _pull_requests(hub, model: str) -> list[dict]:
    return [d for d in hub.discussions(model) if d["is_pull_request"]]


def _entries(text: bytes) -> list[dict]:
    """The file as the Hub's spec reads it: a list of entries with dataset.id, dataset.task_id and a number."""
    from huggingface_hub import parse_eval_result_entries

    found = yaml.safe_load(text)
    assert isinstance(found, list) and found
    for entry in found:
        assert {"id", "task_id"} <= set(entry["dataset"]) and isinstance(entry["value"], (int, float))
    assert [e.dataset_id for e in parse_eval_result_entries(found)] == [e["dataset"]["id"] for e in found]  # the client
    return found


def test_a_run_is_proposed_once_and_asking_again_links_the_same_pull_request(hub, space, store, tmp_path,
                                                                                 space_hub):
    model, request = _published(hub, space, store, tmp_path)
    done = proposals.propose(space, store, request.key, ADA, hub=space_hub)
    assert done.opened and done.url == f"{hub.url}/{model}/discussions/1", done.message
    assert "Opened [pull request #1]" in done.message

    [pr] = _pull_requests(hub, model)
    assert pr["author"] == SPACE_USER and pr["status"] == "open" and pr["ref"] == "refs/pr/1"
    assert pr["title"] == f"Add Open VLM Reasoning Leaderboard results (revision {request.revision[:12]}, auto)"
    assert proposals.marker(request.key) in pr["description"]
    assert "Asked for by ada" in pr["description"] and "tab=explorer" in pr["description"]
    [entry] = _entries(hub.files(model, repo_type="model", revision="refs/pr/1")[FILE])
    assert entry["dataset"] == {"id": "OpenEvals/SimpleQA", "task_id": "default"} and entry["value"] == 50.0
    assert "tab=explorer" in entry["source"]["url"] and quote(request.key, safe="") in entry["source"]["url"]
    assert FILE not in hub.files(model, repo_type="model")  # main is untouched until the authors merge

    stored = queue.load(store, request.path)
    [action] = [a for a in stored.actions if a["action"] == "propose"]
    assert action["by"] == "ada" and action["url"] == done.url and action["opened"] is True and action["at"]

    board = schema(space.benchmarks)
    raw = load_board(store, board)
    assert raw.loc[raw["key"] == request.key, "pull_request"].tolist() == [done.url] and board_is_current(store)
    view = board.view("overview")
    shown = shown_rows(raw, board, view, threshold=space.coverage_threshold)
    table = board_table(board_frame(shown.rows, board, view, view.shown), board)
    model_cells = [row[1] for row in table["metadata"]["display_value"]]
    assert any(cell.endswith(f" · [PR]({done.url})") for cell in model_cells), model_cells
    assert model in [row[1] for row in table["data"]]  # the data cell stays the plain id (a board cell's run key)

    again = proposals.propose(space, store, request.key, BOB, hub=space_hub)
    assert not again.opened and again.url == done.url and "proposed already" in again.message
    assert len(_pull_requests(hub, model)) == 1
    assert [a["url"] for a in queue.load(store, request.path).actions] == [done.url]  # recorded once


@pytest.mark.parametrize("ending, said", [("closed", "closed"), ("merged", "merged")])
def test_a_pull_request_the_authors_closed_or_merged_is_never_opened_again(hub, space, store, tmp_path, space_hub,
                                                                              ending, said):
    from huggingface_hub import HfApi

    model, request = _published(hub, space, store, tmp_path)
    done = proposals.propose(space, store, request.key, ADA, hub=space_hub)
    owner = HfApi(endpoint=hub.url, token=hub.issue_token("acme-owner", orgs=["acme"]))
    if ending == "closed":
        owner.change_discussion_status(model, 1, "closed")
    else:
        owner.merge_pull_request(model, 1)
        assert FILE in hub.files(model, repo_type="model")
    again = proposals.propose(space, store, request.key, BOB, hub=space_hub)
    assert not again.opened and again.url == done.url and said in again.message
    assert [d["status"] for d in _pull_requests(hub, model)] == [ending]


def test_a_pull_request_opened_but_not_recorded_is_found_by_its_marker(hub, space, store, tmp_path, space_hub):
    """Ours is found among a same-titled pull request of ours without the marker, and one a stranger opened with our
    title and marker (whose numbers the board must never link as ours)."""
    from huggingface_hub import CommitOperationAdd, HfApi

    model, request = _published(hub, space, store, tmp_path)
    other, _ = _published(hub, space, store, tmp_path)
    opened = proposals.propose(space, store, request.key, ADA, hub=space_hub)
    stored = queue.load(store, request.path)  # a crash between opening the pull request and recording it
    stored.actions = []
    queue.save(store, stored)
    space_hub.create_commit(model, [CommitOperationAdd("notes.md", b"hello")], create_pr=True,
                            commit_message=proposals.pr_title(request),
                            commit_description="the same title, but not ours: no marker")
    stranger = HfApi(endpoint=hub.url, token=hub.issue_token("mallory"))  # our title and marker, not our token
    stranger.create_commit(model, [CommitOperationAdd(proposals.repo_file(), b"- fake: 1\n")], create_pr=True,
                           commit_message=proposals.pr_title(request),
                           commit_description=proposals.pr_description(space, request, {}, ADA))
    found = proposals.propose(space, store, request.key, BOB, hub=space_hub)
    assert not found.opened and found.url == opened.url
    [action] = queue.load(store, request.path).actions
    assert action["url"] == opened.url and action["opened"] is False  # recorded now; it does not count as opened
    assert len(_pull_requests(hub, model)) == 3 and _pull_requests(hub, other) == []


def _nothing_opened(hub, store, model: str, request) -> None:
    assert _pull_requests(hub, model) == []
    assert queue.load(store, request.path).actions == []


def test_refusals_say_one_sentence_and_open_nothing(hub, space, store, tmp_path, space_hub):
    model, request = _published(hub, space, store, tmp_path)
    cases = [
        (space.with_(eval_results_prs="off"), ADA, "turned off"),
        (space.with_(eval_results_prs="admins"), ADA, "Only the leaderboard's admins"),
        (space, Visitor(), "sign in"),
        (space.with_(hf_token=""), ADA, "no Hub token"),
    ]
    for settings, by, said in cases:
        answer = proposals.propose(settings, store, request.key, by, hub=space_hub)
        assert not answer.opened and said in answer.message, said
        assert answer.message.count(". ") <= 1, answer.message
    assert proposals.propose(space.with_(eval_results_prs="admins"), store, request.key,
                             Visitor("root", admin=True), hub=space_hub).opened
    for key, said in (("not a key", "Pick a run"), ("acme/none/0123456789ab_auto", "No such run"),
                      ("../../etc/passwd", "Pick a run"), ("acme/x/../../y/0123456789ab_auto", "Pick a run"),
                      ("a/" * 200 + "0123456789ab_auto", "Pick a run"), (None, "Pick a run")):
        assert said in proposals.propose(space, store, key, ADA, hub=space_hub).message


def test_only_complete_runs_of_hub_models_at_their_current_revision(hub, space, store, tmp_path, space_hub):
    from huggingface_hub import CommitOperationAdd, HfApi

    limited_model, limited = _published(hub, space, store, tmp_path, limit=3)
    answer = proposals.propose(space, store, limited.key, ADA, hub=space_hub)
    assert "flagged" in answer.message and "limit" in answer.message
    _nothing_opened(hub, store, limited_model, limited)

    moved_model, moved = _published(hub, space, store, tmp_path)
    owner = HfApi(endpoint=hub.url, token=hub.issue_token("acme-owner", orgs=["acme"]))
    owner.create_commit(moved_model, [CommitOperationAdd("README.md", b"# new")], commit_message="update")
    answer = proposals.propose(space, store, moved.key, ADA, hub=space_hub)
    assert "has changed since this run" in answer.message and moved.revision[:12] in answer.message
    _nothing_opened(hub, store, moved_model, moved)

    served = queue.Request(model="served--api.example.com/m", revision="b" * 40, source="served",
                           status=queue.FINISHED, endpoint={"base_url": "https://api.example.com/v1", "model": "m"})
    queue.save(store, served)
    assert "served endpoint" in proposals.propose(space, store, served.key, ADA, hub=space_hub).message
    pending = queue.Request(model="acme/later", revision="c" * 40)
    queue.save(store, pending)
    assert "this one is PENDING" in proposals.propose(space, store, pending.key, ADA, hub=space_hub).message


@pytest.mark.parametrize("access, said", [
    ({"private": True}, "not found on the Hub, or it is private"),
    ({"gated": "manual"}, "is gated and this leaderboard's token has no access"),
    ({"discussions_disabled": True}, "turned off pull requests"),
])
def test_private_gated_and_closed_repos_are_one_sentence(hub, space, store, tmp_path, space_hub, access, said):
    model, request = _published(hub, space, store, tmp_path)
    hub.set_repo_access(model, **access)
    answer = proposals.propose(space, store, request.key, ADA, hub=space_hub)
    assert not answer.opened and said in answer.message and "no pull request was opened" in answer.message
    assert hub.url not in answer.message and space.hf_token not in answer.message
    hub.set_repo_access(model, private=False, gated=False, discussions_disabled=False)
    _nothing_opened(hub, store, model, request)


def test_a_hub_error_opens_nothing_and_the_next_ask_works(hub, space, store, tmp_path, space_hub):
    model, request = _published(hub, space, store, tmp_path)
    hub.fail_next_request(f"/api/models/{model}/commit/", 500, "boom")
    answer = proposals.propose(space, store, request.key, ADA, hub=space_hub)
    assert not answer.opened and "HTTP 500" in answer.message and "boom" not in answer.message
    _nothing_opened(hub, store, model, request)
    hub.fail_next_request(f"/api/models/{model}/discussions", 429, "slow down")
    answer = proposals.propose(space, store, request.key, ADA, hub=space_hub)
    assert "limiting how fast" in answer.message and "slow down" not in answer.message
    _nothing_opened(hub, store, model, request)
    assert proposals.propose(space, store, request.key, ADA, hub=space_hub).opened


def test_daily_limits_for_the_space_and_for_each_person(hub, space, store, tmp_path, space_hub):
    runs = [_published(hub, space, store, tmp_path) for _ in range(5)]
    for _, request in runs[:3]:
        assert proposals.propose(space, store, request.key, ADA, hub=space_hub).opened
    fourth = proposals.propose(space, store, runs[3][1].key, ADA, hub=space_hub)
    assert not fourth.opened and "3 pull requests opened in the last 24 hours" in fourth.message
    assert proposals.propose(space, store, runs[3][1].key, BOB, hub=space_hub).opened
    capped = proposals.propose(space.with_(eval_prs_per_day=4), store, runs[4][1].key, BOB, hub=space_hub)
    assert not capped.opened and "LEADERBOARD_EVAL_PRS_PER_DAY" in capped.message
    assert _pull_requests(hub, runs[4][0]) == []


def test_the_settings_are_checked_at_start():
    from leaderboard.settings import Settings

    with pytest.raises(ValueError, match="LEADERBOARD_EVAL_RESULTS_PRS"):
        Settings.from_env({"LEADERBOARD_EVAL_RESULTS_PRS": "sometimes"}).check()
    with pytest.raises(ValueError, match="LEADERBOARD_EVAL_PRS_PER_DAY"):
        Settings.from_env({"LEADERBOARD_EVAL_PRS_PER_DAY": "-1"}).check()
    assert Settings.from_env({}).eval_results_prs == "on" and Settings.from_env({}).eval_prs_per_day == 20


def test_the_board_file_lists_the_pull_requests_it_was_built_with(hub, space, store, tmp_path, space_hub):
    model, request = _published(hub, space, store, tmp_path)
    url = proposals.propose(space, store, request.key, ADA, hub=space_hub).url
    metadata = pq.read_schema(io.BytesIO(store.read_bytes(LEADERBOARD_PATH))).metadata
    assert json.loads(metadata[b"pull_requests"]) == {request.key: url}
    stored = queue.load(store, request.path)  # the record lost: the board is no longer current, and is rebuilt
    stored.actions = []
    queue.save(store, stored)
    assert not board_is_current(store)


def test_the_explorer_button_proposes_the_run_as_the_sessions_visitor(hub, settings, store, tmp_path, space_token,
                                                                      monkeypatch):
    """The button is on the Explorer tab, and /propose_results acts as the session's visitor (here the local user of
    a Space without sign-in), with the Space's own client pointed at the Hub (HF_ENDPOINT)."""
    import httpx
    from gradio_client import Client
    from huggingface_hub import constants

    from leaderboard.submissions.identity import local_user
    from leaderboard.ui import build_app, launch_options
    from tests.conftest import free_port

    monkeypatch.setattr(constants, "ENDPOINT", hub.url)  # what HF_ENDPOINT sets when the Space starts
    space = settings.with_(hf_token=space_token)
    model, request = _published(hub, space, store, tmp_path)
    for mode, shown in (("off", False), ("on", True)):
        demo = build_app(space.with_(eval_results_prs=mode), store)
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **launch_options(space, store))
        try:
            url = f"http://127.0.0.1:{port}/"
            config = httpx.get(f"{url}config", timeout=30).json()
            ids = {c.get("props", {}).get("elem_id") for c in config["components"]}
            assert ("explorer-propose" in ids) is shown, mode
            if shown:
                answer = Client(url, verbose=False, download_files=False, httpx_kwargs=PATIENT).predict(request.key,
                                                                                  api_name="/propose_results")
                assert answer.startswith("Opened [pull request #1]"), answer
        finally:
            demo.close()
    [action] = queue.load(store, request.path).actions
    assert action["by"] == local_user() and action["url"].endswith(f"/{model}/discussions/1")


def test_about_says_who_may_propose_and_the_limits(settings):
    from leaderboard.ui.about import about_markdown

    said = about_markdown(settings).split("## Results on model pages", 1)[1].split("\n## ", 1)[0]
    assert "**Propose these results to the model page**" in said and "any signed-in visitor" in said
    assert ".eval_results/open-vlm-reasoning-leaderboard.yaml" in said and "at most 20 a day" in said
    assert "3 per person" in said
    admins = about_markdown(settings.with_(eval_results_prs="admins", eval_prs_per_day=5))
    assert "the leaderboard's admins can have" in admins and "at most 5 a day" in admins
    assert "turned off on this leaderboard" in about_markdown(settings.with_(eval_results_prs="off"))


def test_a_store_that_cannot_be_read_opens_nothing(hub, space, store, tmp_path, space_hub, monkeypatch):
    model, request = _published(hub, space, store, tmp_path)

    def down(*_args, **_kwargs):
        raise OSError("the store is down")

    monkeypatch.setattr(queue, "all_requests", down)  # the daily limits cannot be counted
    answer = proposals.propose(space, store, request.key, ADA, hub=space_hub)
    assert not answer.opened and "requests could not be read" in answer.message and "down" not in answer.message
    monkeypatch.setattr(queue, "load", down)
    assert "results could not be read" in proposals.propose(space, store, request.key, ADA, hub=space_hub).message
    monkeypatch.undo()
    _nothing_opened(hub, store, model, request)


def test_the_button_is_greyed_out_with_its_reason_where_it_can_only_refuse(settings, store):
    """Issue 52, point 4: without HF_TOKEN (the local default) the button was offered and could only refuse; and a
    served run got the token sentence instead of its own."""
    from leaderboard.ui import build_app

    config = build_app(settings.with_(hf_token=""), store).get_config_file()
    props = {c["props"].get("elem_id"): c["props"] for c in config["components"] if c.get("props", {}).get("elem_id")}
    assert props["explorer-propose"]["interactive"] is False
    assert "no Hub token (HF_TOKEN)" in props["explorer-propose-answer"]["value"]
    served = queue.Request(model="served--api.example.com/m", revision="b" * 40, source="served",
                           status=queue.FINISHED, endpoint={"base_url": "https://api.example.com/v1", "model": "m"})
    queue.save(store, served)
    said = proposals.propose(settings.with_(hf_token=""), store, served.key, ADA).message
    assert "served endpoint" in said and "HF_TOKEN" not in said, said


BAD_TIMES = {"garbage text": "next tuesday", "a number": 1_700_000_000, "a list": ["2026-01-01T00:00:00+00:00"],
             "the year 2999": "2999-01-01T00:00:00+00:00"}


@pytest.mark.parametrize("at", list(BAD_TIMES.values()), ids=list(BAD_TIMES))
def test_a_proposal_record_at_a_time_that_cannot_be_is_damage_never_an_error(hub, space, store, tmp_path, space_hub,
                                                                            at):
    """Issue 61, point 2: another run's request holding three propose records at garbage, a number, a list or 2999
    made every proposal raise (ValueError, TypeError), or held the daily limits for ever; now that request is a
    damaged file, listed with its reason and counted for nothing, and the proposal is opened."""
    model, request = _published(hub, space, store, tmp_path)
    other = queue.Request(model="acme/other", revision="d" * 40, status=queue.FINISHED)
    records = [{"action": "propose", "by": ADA.name, "at": at, "reason": "", "opened": True,
                "url": f"{hub.url}/acme/other/discussions/{n}"} for n in (1, 2, 3)]
    store.write_bytes(other.path, json.dumps({**other.to_dict(), "actions": records}).encode())
    answer = proposals.propose(space.with_(eval_prs_per_day=3), store, request.key, ADA, hub=space_hub)
    assert answer.opened, answer.message
    listed = dict(store.damaged.listing())
    assert list(listed) == [other.path] and "actions[0].at" in listed[other.path], listed
    assert len(_pull_requests(hub, model)) == 1
    again = proposals.propose(space, store, other.key, ADA, hub=space_hub)  # the damaged run itself: one sentence
    assert not again.opened and "damaged" in again.message
