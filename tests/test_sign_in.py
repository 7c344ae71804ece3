"""Sign in with Hugging Face, for real: the Space runs as on a Hub Space (app.py in a subprocess with the OAuth
variables a Space gets), Gradio's own login routes talk to the loopback OpenID provider of tests.hub_server, and
the session cookie carries the signed-in user into `gr.OAuthProfile`.

Two people sign in in two browser contexts and a third visitor never does: each sees only their own requests as
cancellable, the limit per person counts them apart, the signed-out visitor can neither submit nor cancel, and an
API client without a session is refused.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from leaderboard import request_queue as q
from leaderboard.settings import Settings
from leaderboard.store import open_store
from tests.conftest import PROJECT, free_port, wait_for
from tests.hub_server import CLIENT_SECRET, HubServer, oauth_env

ADMIN = "ada"


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server:
        yield server


@pytest.fixture(scope="module")
def space(hub, tiny_llava, tiny_llama, tmp_path_factory):
    """app.py as on a Space, with sign-in: (url, store, log file). At most 1 pending request per person; `ada`
    is an admin."""
    home = tmp_path_factory.mktemp("space-home")
    port = free_port()
    env = {**os.environ, **oauth_env(hub), "LEADERBOARD_HOME": str(home), "LEADERBOARD_RUN_SCHEDULER": "0",
           "LEADERBOARD_HOST": "127.0.0.1", "LEADERBOARD_PORT": str(port), "LEADERBOARD_ADMINS": ADMIN,
           "LEADERBOARD_MAX_PENDING_PER_USER": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    log = open(home / "app.log", "w")
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        import requests

        def up():
            if proc.poll() is not None:
                raise AssertionError(f"app.py exited: {(home / 'app.log').read_text()[-3000:]}")
            try:
                return requests.get(url, timeout=2).status_code == 200
            except requests.ConnectionError:
                return False

        wait_for(up, timeout=120, step=0.2)
        store = open_store(Settings.from_env({}, home=home))
        yield url, store, home / "app.log"
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def test_a_client_without_a_session_is_refused(space):
    from gradio_client import Client

    url, store, _log = space
    client = Client(url + "/", verbose=False, download_files=False)
    message = client.predict("tiny-org/tiny-llava", "", "auto", "pretrained", api_name="/submit")
    assert "Not submitted" in message and "sign in" in message.lower()
    assert store.list("requests") == []
    pending = q.Request(model="tiny-org/tiny-llama", revision="0" * 40, submitter="bob")
    q.save(store, pending)
    try:
        refused = client.predict(pending.key, api_name="/cancel")
        assert "Not done" in refused and "sign in" in refused.lower()
        assert q.load(store, pending.path).status == q.PENDING
        for api_name in ("/requeue_request", "/hide_run", "/show_run"):
            assert "Not done" in client.predict(pending.key, "reason", api_name=api_name)
        with pytest.raises(Exception, match="admins"):
            client.predict(api_name="/damaged_files")
    finally:
        store.delete(pending.path)


def sign_in(browser, url: str, user: str | None):
    """A fresh browser context on the Space; with a user, signed in through the Hub's authorize page."""
    from tests.conftest import BROWSER_TIMEOUT_MS

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(BROWSER_TIMEOUT_MS)
    page.goto(url)
    page.locator("#board-view").wait_for(state="visible")
    if user:
        page.locator("#login-button").click()
        page.locator("#hub-username").fill(user)  # the Hub asks who you are, then sends you back signed in
        page.locator("#hub-sign-in").click()
        page.locator("#board-view").wait_for(state="visible")  # back where the visitor was: the Leaderboard
        page.get_by_role("tab", name="Leaderboard", selected=True).wait_for(state="visible")
        assert "tab=" not in page.url
    page.get_by_role("tab", name="Submit").click()
    expected = f"Signed in as {user}" if user else "not signed in"
    page.locator("#submit-who").get_by_text(expected, exact=False).wait_for(state="visible")
    return context, page


def submit(page, model: str) -> str:
    page.get_by_role("tab", name="Submit").click()
    page.locator("#submit-model input, #submit-model textarea").first.fill(model)
    message = page.locator("#submit-message")
    before = message.inner_text()
    page.locator("#submit-button").click()
    page.wait_for_function("(before) => { const t = document.querySelector('#submit-message').innerText.trim();"
                           " return t !== before.trim() && !/\\d\\.\\ds/.test(t)"  # answered, no progress timer
                           " && /Queued|Not submitted|already/.test(t); }", arg=before)
    return message.inner_text()


def cancel_choices(page) -> list[str]:
    page.get_by_role("tab", name="Queue").click()
    page.locator("#queue-refresh").click()
    page.locator("#queue-cancel-pick input").click()
    options = page.locator("[role=option]:visible")
    options.first.wait_for()
    choices = [o.inner_text().strip() for o in options.all()]
    page.keyboard.press("Escape")
    return choices


def test_two_people_and_a_stranger_in_the_browser(space, hub, browser, tiny_llava, tiny_llama):
    url, store, log = space
    alice_context, alice = sign_in(browser, url, "alice")
    bob_context, bob = sign_in(browser, url, "bob")
    ada_context, ada = sign_in(browser, url, ADMIN)
    stranger_context, stranger = sign_in(browser, url, None)
    try:
        assert [user for user, _ in hub.logins] == ["alice", "bob", ADMIN]  # each through the token endpoint
        assert "queued" in submit(alice, tiny_llava.repo_id).lower()
        refused = submit(alice, tiny_llama.repo_id)  # a second pending request is over alice's limit of 1
        assert "Not submitted" in refused and "pending" in refused
        assert "queued" in submit(bob, tiny_llama.repo_id).lower()
        by_submitter = {r.model: r.submitter for r in q.all_requests(store)}
        assert by_submitter == {tiny_llava.repo_id: "alice", tiny_llama.repo_id: "bob"}
        alice.locator("#submit-mine").get_by_text(tiny_llava.repo_id).filter(visible=True).first.wait_for()
        assert alice.locator("#submit-mine").get_by_text(tiny_llama.repo_id).filter(visible=True).count() == 0

        # each sees only their own request to cancel; pasting someone else's key is refused
        alices, bobs = cancel_choices(alice), cancel_choices(bob)
        assert [c for c in alices if "tiny-llava" in c] and not [c for c in alices if "tiny-llama" in c]
        assert [c for c in bobs if "tiny-llama" in c] and not [c for c in bobs if "tiny-llava" in c]
        bob_key = next(r.key for r in q.all_requests(store) if r.submitter == "bob")
        alice.locator("#queue-cancel-pick input").fill(bob_key)
        alice.locator("#queue-cancel").click()
        alice.locator("#queue-cancel-message").get_by_text("Not done").wait_for(state="visible")
        assert "only the person who submitted" in alice.locator("#queue-cancel-message").inner_text().lower()
        assert {r.submitter: r.status for r in q.all_requests(store)}["bob"] == q.PENDING

        # the stranger can neither submit nor cancel; only the admin sees the admin actions
        assert "sign in" in submit(stranger, "tiny-org/another").lower()
        stranger.get_by_role("tab", name="Queue").click()
        stranger.locator("#queue-cancel-pick input").fill(bob_key)
        stranger.locator("#queue-cancel").click()
        stranger.locator("#queue-cancel-message").get_by_text("Not done").wait_for(state="visible")
        assert "sign in" in stranger.locator("#queue-cancel-message").inner_text().lower()
        assert len(q.all_requests(store)) == 2 and all(r.status == q.PENDING for r in q.all_requests(store))
        ada.get_by_role("tab", name="Queue").click()
        ada.locator("#queue-section-admin").wait_for(state="visible")
        assert not bob.locator("#queue-section-admin").is_visible()

        # bob cancels his own; the record says who did it
        bob.locator("#queue-cancel-pick input").fill(bob_key)
        bob.locator("#queue-cancel").click()
        bob.locator("#queue-cancel-message").get_by_text("Done").wait_for(state="visible")
        cancelled = next(r for r in q.all_requests(store) if r.submitter == "bob")
        assert cancelled.status == q.CANCELLED and cancelled.actions[-1]["by"] == "bob"

        # the admin re-queues a failed request and cancels alice's, signed in as herself; both are recorded
        failed = q.Request(model="tiny-org/broken", revision="1" * 40, submitter="carol", status=q.FAILED,
                           error="worker exited with code 1")
        q.save(store, failed)
        ada.locator("#queue-admin-pick input").fill(failed.key)
        ada.locator("#queue-admin-reason textarea, #queue-admin-reason input").first.fill("the disk was full")
        ada.locator("#queue-admin-requeue").click()
        ada.locator("#queue-admin-message").get_by_text("Done").wait_for(state="visible")
        alice_key = next(r.key for r in q.all_requests(store) if r.submitter == "alice")
        ada.locator("#queue-cancel-pick input").fill(alice_key)
        ada.locator("#queue-cancel").click()
        ada.locator("#queue-cancel-message").get_by_text("Done").wait_for(state="visible")
        requests = {r.submitter: r for r in q.all_requests(store)}
        assert requests["carol"].status == q.PENDING and requests["alice"].status == q.CANCELLED
        assert [(a["action"], a["by"], a["reason"]) for a in requests["carol"].actions + requests["alice"].actions] \
            == [("requeue", ADMIN, "the disk was full"), ("cancel", ADMIN, "")]

        # the OAuth secrets never reach the Space's log
        secrets = [CLIENT_SECRET, *hub.access_tokens()]
        assert len(secrets) == 4 and not [s for s in secrets if s in log.read_text()]
    finally:
        for context in (alice_context, bob_context, ada_context, stranger_context):
            context.close()
