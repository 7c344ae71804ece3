"""Sign in with Hugging Face, for real: the Space runs as on a Hub Space (app.py in a subprocess with the OAuth
variables a Space gets), Gradio's own login routes talk to the loopback OpenID provider of tests.hub_server, and
the session cookie carries the signed-in user into `gr.OAuthProfile`.

Two people sign in in two browser contexts and a third visitor never does: each sees only their own requests as
cancellable, the limit per person counts them apart, the signed-out visitor can neither submit nor cancel, and an
API client without a session is refused. A forged session cookie (signed with the key Gradio derives from an empty
client secret, or any other key) signs nobody in, nor does opening /login/huggingface as a stranger. Off a Space,
a Space that asks for sign-in refuses to start, unless the mock is asked for: then nobody is an admin, the Space
stays on 127.0.0.1 and the mock's cookies are sealed with a key of the process.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
from http.cookies import SimpleCookie
from urllib.parse import urljoin

import pytest
import requests

from leaderboard.settings import Settings
from leaderboard.store import open_store
from leaderboard.submissions import records as q
from tests.conftest import PATIENT, PROJECT, free_port, wait_for
from tests.hub_server import CLIENT_SECRET, USER_COOKIE, HubServer, oauth_env
from tests.judge_servers import Reply, ScriptedServer

# slow: starts app.py as a process, and a browser test. One xdist group: each module-scoped Space (some 19 CPU-s and
# 8 s to start) starts on one test worker only, where xdist spread the module over both and each started its own
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sign_in")]

ADMIN = "ada"
# the key Gradio signs session cookies with when OAUTH_CLIENT_SECRET is empty or absent (gradio.oauth.attach_oauth)
EMPTY_SECRET_KEY = hashlib.sha256(b"-v4").hexdigest()


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server:
        yield server


def off_a_space() -> dict[str, str]:
    """This environment without a Space's variables (SYSTEM, the OAuth ones)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("OAUTH_", "OPENID_")) and k != "SYSTEM"}


def start_app(home, env: dict[str, str], base: dict[str, str] | None = None):
    """app.py in a subprocess with `env` over `base` (default: this environment), until it answers: (process, url,
    log file)."""
    port = free_port()
    env = {**(os.environ if base is None else base), "LEADERBOARD_HOME": str(home), "LEADERBOARD_RUN_SCHEDULER": "0", "LEADERBOARD_PORT": str(port),
           "GRADIO_ANALYTICS_ENABLED": "False", **env}
    log = open(home / "app.log", "w")
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def up():
        if proc.poll() is not None:
            raise AssertionError(f"app.py exited: {(home / 'app.log').read_text()[-3000:]}")
        try:
            return requests.get(url, timeout=2).status_code == 200
        except requests.ConnectionError:
            return False

    try:
        wait_for(up, timeout=120, step=0.2)
    except BaseException:
        stop_app(proc, log)
        raise
    return proc, url, log


def stop_app(proc, log) -> None:
    proc.terminate()
    proc.wait(30)
    log.close()


@pytest.fixture(scope="module")
def judge_server():
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        yield server


@pytest.fixture(scope="module")
def space(hub, judge_server, tiny_llava, tiny_llama, tmp_path_factory):
    """app.py as on a Space, with sign-in and a judge: (url, store, log file). At most 1 pending request per person;
    `ada` is an admin."""
    home = tmp_path_factory.mktemp("space-home")
    proc, url, log = start_app(home, {**oauth_env(hub), "LEADERBOARD_HOST": "127.0.0.1", "LEADERBOARD_ADMINS": ADMIN,
                                      "LEADERBOARD_MAX_PENDING_PER_USER": "1",
                                      "LEADERBOARD_JUDGE": f"endpoint:{judge_server.base_url}|scripted",
                                      "LEADERBOARD_BENCHMARKS": "cure,simpleqa"})  # bob's text-only model fits one
    try:
        yield url, open_store(Settings.from_env({}, home=home)), home / "app.log"
    finally:
        stop_app(proc, log)


# ------------------------------------------------------------------------------------------------ session cookies

def session_cookie(data: dict, key: str) -> str:
    """A session cookie as Starlette's SessionMiddleware writes it, holding `data`, signed with `key`."""
    from itsdangerous import TimestampSigner

    return TimestampSigner(key).sign(base64.b64encode(json.dumps(data).encode())).decode()


def signed_in_session(user: str) -> dict:
    """What Gradio's OAuth callback keeps in the session of a signed-in `user`."""
    now = int(time.time())
    return {"oauth_info": {"access_token": "hf_oauth_forged", "token_type": "bearer", "scope": "openid profile",
                           "expires_at": now + 3600,
                           "userinfo": {"sub": f"sub-{user}", "name": user.title(), "preferred_username": user,
                                        "profile": f"https://huggingface.co/{user}", "picture": ""}}}


def cookie_from(response: requests.Response, name: str = "session") -> str | None:
    """The value a response sets for cookie `name` (None when it sets none)."""
    morsel = SimpleCookie(response.headers.get("set-cookie", "")).get(name)
    return morsel.value if morsel is not None else None


def sign_in_over_http(url: str, user: str | None) -> str | None:
    """Walk Gradio's OAuth routes and the Hub's authorize page by hand (the session cookie is Secure, so a cookie jar
    on http would drop it): the Space's session cookie afterwards. `user` None: a stranger the Hub does not know."""
    login = requests.get(f"{url}/login/huggingface", allow_redirects=False, timeout=10)
    assert login.status_code in (302, 307), login.text[:300]
    session = cookie_from(login)
    hub_cookies = {USER_COOKIE: user} if user else {}
    authorize = requests.get(login.headers["location"], cookies=hub_cookies, allow_redirects=False, timeout=10)
    if authorize.status_code == 200:  # the Hub asks who you are: a stranger goes no further
        assert "Sign in to the test Hub" in authorize.text
        return session
    callback = requests.get(urljoin(url, authorize.headers["location"]), cookies={"session": session},
                            allow_redirects=False, timeout=10)
    return cookie_from(callback) or session


def client_with(url: str, session: str | None):
    from gradio_client import Client

    headers = {"Cookie": f"session={session}"} if session else None
    return Client(url + "/", verbose=False, download_files=False, httpx_kwargs=PATIENT, headers=headers)


def is_admin_session(url: str, session: str | None) -> bool:
    """Whether the Space takes the holder of this session cookie for an admin (only admins list damaged files)."""
    try:
        return isinstance(client_with(url, session).predict(api_name="/damaged_files"), list)
    except Exception as exc:  # noqa: BLE001 - gradio_client raises the handler's gr.Error
        assert "admins" in str(exc)
        return False


def cancel_as(url: str, session: str | None, key: str) -> str:
    return client_with(url, session).predict(key, api_name="/cancel")


def test_a_client_without_a_session_is_refused(space):
    from gradio_client import Client

    url, store, _log = space
    client = Client(url + "/", verbose=False, download_files=False, httpx_kwargs=PATIENT)
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
        assert "sign in" in client.predict(pending.key, api_name="/propose_results").lower()
    finally:
        store.delete(pending.path)


def sign_in(browser, url: str, user: str | None, button: bool = True):
    """A fresh browser context on the Space; with a user, signed in through the Hub's authorize page, from the
    Space's sign-in button (or, with button=False, from the sign-in route the button opens: one load of the Space's
    page fewer, some 2-3 s)."""
    from tests.conftest import BROWSER_TIMEOUT_MS

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(BROWSER_TIMEOUT_MS)
    if user and not button:
        page.goto(url.rstrip("/") + "/login/huggingface")
    else:
        page.goto(url)
        page.locator("#board-view").wait_for(state="visible")
    if user:
        if button:
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
    bob_context, bob = sign_in(browser, url, "bob", button=False)  # alice's way through the button is enough
    ada_context, ada = sign_in(browser, url, ADMIN, button=False)
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


def test_forged_session_cookies_sign_nobody_in(space):
    url, store, _log = space
    real = sign_in_over_http(url, ADMIN)  # the control: a real sign-in, through the Hub, is an admin
    assert real and is_admin_session(url, real)
    pending = q.Request(model="tiny-org/forged", revision="2" * 40, submitter="bob")
    q.save(store, pending)
    try:
        for key in (EMPTY_SECRET_KEY, hashlib.sha256(b"a guess-v4").hexdigest()):
            forged = session_cookie(signed_in_session(ADMIN), key)
            assert not is_admin_session(url, forged)
            refused = cancel_as(url, forged, pending.key)
            assert "Not done" in refused and "sign in" in refused.lower()
        tampered = real[:-3] + ("AAA" if not real.endswith("AAA") else "BBB")  # a real cookie, signature broken
        assert not is_admin_session(url, tampered)
        assert q.load(store, pending.path).status == q.PENDING and not q.load(store, pending.path).actions
    finally:
        store.delete(pending.path)


def test_opening_the_login_route_as_a_stranger_signs_nobody_in(space, hub):
    url, store, _log = space
    logins_before = list(hub.logins)
    session = sign_in_over_http(url, None)  # the Hub shows its sign-in page; the stranger never answers it
    assert not is_admin_session(url, session)
    pending = q.Request(model="tiny-org/stranger", revision="3" * 40, submitter=ADMIN)
    q.save(store, pending)
    try:
        refused = cancel_as(url, session, pending.key)
        assert "Not done" in refused and "sign in" in refused.lower()
        bogus = requests.get(f"{url}/login/callback", params={"code": "made-up", "state": "made-up"},
                             cookies={"session": session} if session else {}, allow_redirects=False, timeout=10)
        assert not is_admin_session(url, cookie_from(bogus) or session)  # a made-up code signs nobody in either
        assert hub.logins == logins_before and q.load(store, pending.path).status == q.PENDING
    finally:
        store.delete(pending.path)


def test_sign_in_that_cannot_be_real_stops_the_space(tmp_path):
    """SPACE_ID alone is not a Space: app.py stops with one line (the other cases of leaderboard.submissions.identity's
    sign_in_problem are in tests/test_settings.py)."""
    env = {"SPACE_ID": "someone/leaderboard"}
    started = subprocess.run([sys.executable, "app.py"], cwd=PROJECT, capture_output=True, text=True, timeout=120,
                             env={**off_a_space(), "LEADERBOARD_HOME": str(tmp_path), "LEADERBOARD_RUN_SCHEDULER": "0",
                                  "LEADERBOARD_PORT": str(free_port()), **env})
    assert started.returncode == 1
    lines = [line for line in started.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("error: sign-in is required") and "LEADERBOARD_MOCK_SIGN_IN" in lines[-1]
    assert "Traceback" not in started.stderr and "Running on" not in started.stdout


@pytest.fixture(scope="module")
def mock_space(hub, tmp_path_factory):
    """app.py off a Space with sign-in asked for and LEADERBOARD_MOCK_SIGN_IN=1; the machine's Hub user is `ada`,
    listed as an admin, and SPACE_ID is set (which alone used to open the Space on 0.0.0.0)."""
    home = tmp_path_factory.mktemp("mock-home")
    env = {"LEADERBOARD_REQUIRE_SIGN_IN": "1", "LEADERBOARD_MOCK_SIGN_IN": "1", "SPACE_ID": "someone/leaderboard",
           "LEADERBOARD_ADMINS": ADMIN, "HF_TOKEN": hub.issue_token(ADMIN), "HF_ENDPOINT": hub.url,
           "HF_HUB_OFFLINE": "0"}
    proc, url, log = start_app(home, env, base=off_a_space())
    try:
        yield url, open_store(Settings.from_env({}, home=home)), home / "app.log"
    finally:
        stop_app(proc, log)


def test_the_mock_sign_in_vouches_for_no_admin_and_stays_on_loopback(mock_space):
    url, store, log = mock_space
    login = requests.get(f"{url}/login/huggingface", allow_redirects=False, timeout=10)
    callback = requests.get(urljoin(url, login.headers["location"]), allow_redirects=False, timeout=10)
    session = cookie_from(callback)  # the mock signs in as the machine's Hub user, ada
    assert session and not is_admin_session(url, session)  # ... who is listed as an admin, but not through the mock
    own = q.Request(model="tiny-org/own", revision="4" * 40, submitter=ADMIN)
    other = q.Request(model="tiny-org/other", revision="5" * 40, submitter="bob")
    q.save(store, own)
    q.save(store, other)
    assert "only the person who submitted" in cancel_as(url, session, other.key).lower()  # no admin rights
    assert cancel_as(url, session, own.key).startswith("Done")  # signed in as ada
    forged = session_cookie(signed_in_session(ADMIN), EMPTY_SECRET_KEY)
    refused = cancel_as(url, forged, other.key)
    assert "Not done" in refused and "sign in" in refused.lower()  # the mock's cookies have a key of their own
    assert q.load(store, other.path).status == q.PENDING
    assert "on http://127.0.0.1:" in log.read_text()  # SPACE_ID alone no longer opens it on every interface


def test_the_judge_playground_needs_sign_in_on_a_space(space, judge_server):
    """Signed-out clients (each a new session, as a script would open them) are refused before anything reaches the
    judge; a signed-in one grades (and /propose_results takes her for signed in too)."""
    url, _store, _log = space
    question = ("SimpleQA grade", "Which element has the symbol W?", "Tungsten", "It is tungsten.")
    for _ in range(3):
        message, verdict, _rationale, identity, raw = client_with(url, None).predict(*question, api_name="/grade")
        assert "sign in with Hugging Face" in message and "nothing was sent to the judge" in message
        assert verdict == identity == raw == ""
    assert judge_server.requests == []
    carol = client_with(url, sign_in_over_http(url, "carol"))
    message, verdict, *_ = carol.predict(*question, api_name="/grade")
    assert message == "Graded." and verdict and len(judge_server.requests) == 1
    proposed = carol.predict("tiny-org/none/0123456789ab_auto", api_name="/propose_results")  # her session, not a name
    assert "sign in" not in proposed.lower() and "no pull request was opened" in proposed
