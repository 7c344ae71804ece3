"""The local user (an admin, with local model folders) exists only on a loopback address. Sign-in off on an address
other machines can reach (LEADERBOARD_HOST=0.0.0.0, or a Space with LEADERBOARD_REQUIRE_SIGN_IN=0) stops app.py with
one `error:` line naming the two ways out; an app built so anyway gives nobody admin rights, whoever asks."""
from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from leaderboard.settings import Settings, is_loopback
from leaderboard.submissions import records as q
from leaderboard.submissions.identity import SIGNED_OUT, sign_in_problem, visitor
from tests.conftest import PATIENT, PROJECT, free_port


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                           ("[::1]", True), ("127.0.0.2", True), ("0.0.0.0", False), ("::", False),
                                           ("192.168.1.5", False), ("example.org", False), ("", False)])
def test_which_addresses_are_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_the_local_user_is_an_admin_on_loopback_only():
    local = visitor(Settings.from_env({"LEADERBOARD_REQUIRE_SIGN_IN": "0"}))
    assert local.admin and local.local and local.signed_in
    public = Settings.from_env({"LEADERBOARD_REQUIRE_SIGN_IN": "0", "LEADERBOARD_HOST": "0.0.0.0"})
    assert visitor(public) == SIGNED_OUT


@pytest.mark.parametrize("env", [
    {"LEADERBOARD_REQUIRE_SIGN_IN": "0", "LEADERBOARD_HOST": "0.0.0.0"},
    {"LEADERBOARD_REQUIRE_SIGN_IN": "0", "LEADERBOARD_HOST": "192.168.1.5"},
    {"LEADERBOARD_REQUIRE_SIGN_IN": "0", "SYSTEM": "spaces", "SPACE_ID": "org/space"},  # a Space: 0.0.0.0
], ids=["0.0.0.0", "a LAN address", "a Space"])
def test_sign_in_off_on_a_public_address_is_a_problem_naming_both_ways_out(env):
    problem = sign_in_problem(Settings.from_env(env))
    assert problem and "\n" not in problem and "an admin" in problem
    assert "LEADERBOARD_HOST=127.0.0.1" in problem and "LEADERBOARD_REQUIRE_SIGN_IN=1" in problem
    assert sign_in_problem(Settings.from_env({"LEADERBOARD_REQUIRE_SIGN_IN": "0"})) is None  # the local default


@pytest.mark.slow  # starts app.py
def test_app_py_refuses_to_start_with_sign_in_off_on_0000(tmp_path):
    """The real app, sign-in off, on 0.0.0.0: one error line, exit 1, and nothing answers on the port, so an admin
    action asked on loopback reaches nobody."""
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if k not in ("SYSTEM", "SPACE_ID")},
           "LEADERBOARD_REQUIRE_SIGN_IN": "0", "LEADERBOARD_HOST": "0.0.0.0", "LEADERBOARD_PORT": str(port),
           "LEADERBOARD_HOME": str(tmp_path), "LEADERBOARD_RUN_SCHEDULER": "0", "GRADIO_ANALYTICS_ENABLED": "False"}
    done = subprocess.run([sys.executable, "app.py"], cwd=PROJECT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: sign-in is off") and "Traceback" not in done.stderr
    assert "LEADERBOARD_HOST=127.0.0.1" in lines[-1] and "LEADERBOARD_REQUIRE_SIGN_IN=1" in lines[-1]
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # never listened
    assert not (tmp_path / "requests").exists()  # and changed nothing


def test_an_app_on_0000_without_sign_in_gives_no_admin_action_to_a_loopback_client(tmp_path):
    """Built and launched anyway (not through app.py): every visitor, on loopback too, is signed out."""
    from gradio_client import Client

    from leaderboard.store import open_store
    from leaderboard.ui import build_app, launch_options

    settings = Settings.from_env({}, home=tmp_path / "home", host="0.0.0.0", run_scheduler=False)
    store = open_store(settings)
    pending = q.Request(model="org/pending", revision="1" * 40, submitter="bob")
    finished = q.Request(model="org/finished", revision="2" * 40, submitter="bob", status=q.FINISHED)
    for request in (pending, finished):
        q.save(store, request)
    demo = build_app(settings, store)
    port = free_port()
    demo.launch(server_name="0.0.0.0", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(settings, store))
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False, download_files=False, httpx_kwargs=PATIENT)
        assert "Not done" in client.predict(pending.key, api_name="/cancel")
        assert "Not done" in client.predict(finished.key, "spam", api_name="/hide_run")
        with pytest.raises(Exception, match="admins"):
            client.predict(api_name="/damaged_files")
        message = client.predict(str(tmp_path), "", "auto", "pretrained", api_name="/submit")  # a local folder
        assert "Not submitted" in message
    finally:
        demo.close()
    assert q.load(store, pending.path).status == q.PENDING
    assert not q.load(store, finished.path).hidden
    assert len(q.all_requests(store)) == 2
