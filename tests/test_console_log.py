"""What the Space's console says: a start line naming the store, the benchmarks, the suite, the limit, the judge (by
its public name, never a token), the executor and the scheduler; and, at the default log level, every action taken
on a request (cancel, re-queue, hide, show, a served model added) and every model deleted from the Hub cache."""
from __future__ import annotations

import subprocess
import sys

import pytest

import app
from leaderboard.settings import Settings
from leaderboard.store import open_store
from leaderboard.submissions import records as q
from leaderboard.submissions.records import Request
from tests.conftest import PATIENT, PROJECT, wait_for
from tests.hub_cache import lay_into_hub_cache
from tests.results_files import SHA_A
from tests.test_sign_in import off_a_space, start_app, stop_app

TOKEN = "hf_" + "S3cretJudgeToken42xyz"


def test_the_start_line_names_what_runs_and_where_and_never_a_token(tmp_path, hub_cache):
    settings = Settings.from_env({"LEADERBOARD_BENCHMARKS": "cure,simpleqa", "LEADERBOARD_LIMIT": "3",
                                  "LEADERBOARD_JUDGE": "endpoint:https://judge.example/v1|org/judge-70b",
                                  "LEADERBOARD_JUDGE_TOKEN": TOKEN}, home=tmp_path)
    line = app.start_line(settings, True)
    assert "benchmarks: cure, simpleqa; suite: sample; limit: 3 items per benchmark;" in line, line
    assert "judge: org/judge-70b (endpoint https://judge.example/v1);" in line, line
    assert "executor: local process (device: auto); scheduler: every" in line and TOKEN not in line, line
    plain = Settings.from_env({}, home=tmp_path)
    line = app.start_line(plain, False)
    assert "limit: none (every item); judge: none;" in line and line.endswith("scheduler: off"), line
    lay_into_hub_cache(hub_cache, "org/judge", files={"config.json": "{}"}, refs=("abc123",))  # a judge at start
    local = Settings.from_env({"LEADERBOARD_JUDGE": "local:org/judge@abc123"}, home=tmp_path)
    assert "judge: org/judge @ abc123 (local);" in app.start_line(local, False)


@pytest.mark.slow  # a python subprocess
def test_the_console_shows_each_request_action_at_the_default_level(tmp_path):
    """The project's INFO lines reach stderr once console_logging (what app.py and the worker call) has run."""
    script = f"""
from leaderboard import console_logging
from leaderboard.settings import Settings
from leaderboard.store import open_store
from leaderboard.submissions import records as q
from leaderboard.submissions.actions import act
from leaderboard.submissions.identity import Visitor
console_logging()
store = open_store(Settings.from_env({{"LEADERBOARD_HOME": {str(tmp_path)!r}}}))
request = q.Request(model="org/failed", revision={SHA_A!r}, submitter="alice", status=q.FAILED)
q.save(store, request)
print(act(store, request.path, "requeue", Visitor("ada", admin=True), reason="bigger GPU"))
print(act(store, request.path, "cancel", Visitor("ada", admin=True)))
import logging
logging.getLogger("leaderboard.running.model_cache").warning("Hub cache: deleted org/x@0123456789ab (1.00 GB)")
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(True, ") == 2, done.stdout
    lines = done.stderr.splitlines()
    assert any(line.endswith(f"INFO leaderboard.submissions.actions: requeue org/failed/{SHA_A[:12]}_auto by ada "
                             "(admin): bigger GPU") for line in lines), done.stderr
    assert any(line.endswith(f"cancel org/failed/{SHA_A[:12]}_auto by ada (admin)") for line in lines), done.stderr
    assert any("Hub cache: deleted org/x@0123456789ab" in line for line in lines), done.stderr


@pytest.mark.slow  # starts app.py
def test_the_space_says_its_start_line_and_an_admins_action_in_its_console(tmp_path, tiny_llama):
    from gradio_client import Client

    home = tmp_path / "home"
    home.mkdir()
    store = open_store(Settings.from_env({"LEADERBOARD_HOME": str(home)}))
    failed = Request(model="org/failed", revision=SHA_A, submitter="alice", status=q.FAILED)
    q.save(store, failed)
    proc, url, log = start_app(home, {"LEADERBOARD_JUDGE": f"local:{tiny_llama.repo_id}@{tiny_llama.sha}",
                                      "LEADERBOARD_JUDGE_TOKEN": TOKEN, "LEADERBOARD_BENCHMARKS": "cure",
                                      "LEADERBOARD_LIMIT": "2"}, base=off_a_space())
    try:
        client = Client(url, verbose=False, download_files=False, httpx_kwargs=PATIENT)
        said = client.predict(failed.key, "the GPU is bigger now", api_name="/requeue_request")
        assert said.startswith("Done: "), said
        wait_for(lambda: f"requeue {failed.key} by " in (home / "app.log").read_text(), timeout=30, step=0.2)
    finally:
        stop_app(proc, log)
    text = (home / "app.log").read_text()
    start = next(line for line in text.splitlines() if line.startswith("listening on "))
    # the console's first line is ours, not Gradio's "* Running on local URL" (issue 52, point 8)
    assert "Running on local URL" not in text and "share=True" not in text, text[:500]
    assert (f"benchmarks: cure; suite: sample; limit: 2 items per benchmark; judge: {tiny_llama.repo_id} @ "
            f"{tiny_llama.sha} (local); executor: local process (device: auto); scheduler: off") in start, start
    assert TOKEN not in text
    assert "(admin): the GPU is bigger now" in text
