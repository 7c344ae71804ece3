"""Signing out ends the session on the server (leaderboard.ui.sessions, leaderboard.submissions.sessions).

For real: app.py as on a Space signs people in through the loopback OpenID provider of tests.hub_server; a cookie
copied before /logout, replayed afterwards, signs nobody in (its holder cannot cancel the user's request), while
another person's session acts on and the user signs in again; a new app on the same store still refuses the copy.
Below that, the record of sign-outs (memory and one store file naming no one, a store that fails, a damaged file)
and the middleware in a small Starlette app (the session's life, a session without our stamp or with another name).
"""
from __future__ import annotations

import json
import time

import pytest
import requests
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from leaderboard.settings import Settings
from leaderboard.store import open_store
from leaderboard.store.hub import HubStore
from leaderboard.store.local import LocalStore
from leaderboard.submissions import records as q
from leaderboard.submissions.sessions import LOGOUTS_PATH, SignOuts
from leaderboard.ui.sessions import SIGNED_IN, SessionGuard
from tests.conftest import wait_for
from tests.hub_server import oauth_env
from tests.test_sign_in import cancel_as, cookie_from, session_cookie, sign_in_over_http, start_app, stop_app

LIFE = 8 * 3600.0


def signed_in(url: str, session: str | None, key: str) -> bool:
    """Whether the Space takes the holder of `session` for a signed-in person: cancelling `key`, a request of
    someone else, is refused either for not being its submitter (signed in) or for not being signed in; nothing
    changes either way."""
    answer = cancel_as(url, session, key)
    assert answer.startswith("Not done") or "nothing was changed" in answer, answer
    if "sign in" in answer.lower():
        return False
    assert "only the person who submitted" in answer.lower(), answer
    return True


@pytest.mark.slow  # starts app.py twice
def test_a_session_copied_before_sign_out_signs_nobody_in_after_it(hub, tmp_path):
    env = {**oauth_env(hub), "LEADERBOARD_HOST": "127.0.0.1"}
    store = open_store(Settings.from_env({}, home=tmp_path))
    someone_elses = q.Request(model="tiny-org/someone-elses", revision="6" * 40, submitter="zed")
    doras = q.Request(model="tiny-org/doras", revision="7" * 40, submitter="dora")
    q.save(store, someone_elses)
    q.save(store, doras)
    proc, url, log = start_app(tmp_path, env)
    try:
        copied = sign_in_over_http(url, "dora")  # dora signs in; someone copies her session cookie
        erin = sign_in_over_http(url, "erin")
        assert signed_in(url, copied, someone_elses.key) and signed_in(url, erin, someone_elses.key)

        out = requests.get(f"{url}/logout", cookies={"session": copied}, allow_redirects=False, timeout=10)
        assert out.status_code in (302, 307)
        assert cookie_from(out) in (None, "null")  # dora's browser holds no session any more

        assert not signed_in(url, copied, someone_elses.key)  # the copy, replayed, signs nobody in ...
        refused = cancel_as(url, copied, doras.key)  # ... so it cannot act for dora
        assert refused.startswith("Not done") and "sign in" in refused.lower()
        assert q.load(store, doras.path).status == q.PENDING
        assert signed_in(url, erin, someone_elses.key)  # another person's session is untouched

        again = sign_in_over_http(url, "dora")  # dora signs in again, and acts
        assert again != copied and signed_in(url, again, someone_elses.key)
        wait_for(lambda: store.read_json(LOGOUTS_PATH) is not None, timeout=30)
        stored = store.read_bytes(LOGOUTS_PATH)
        assert b"dora" not in stored.lower() and len(json.loads(stored)["signed_out"]) == 1  # it names no one
    finally:
        stop_app(proc, log)

    proc, url, log = start_app(tmp_path, env)  # a new app on the same store
    try:
        assert not signed_in(url, copied, someone_elses.key)  # still refused
        assert signed_in(url, erin, someone_elses.key)  # sessions that never signed out survive the restart
        assert cancel_as(url, again, doras.key).startswith("Done")  # and so does dora's new one
        assert q.load(store, doras.path).status == q.CANCELLED and q.load(store, doras.path).actions[-1]["by"] == "dora"
    finally:
        stop_app(proc, log)


# ------------------------------------------------------------------------------------------------ the record

class Clock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_sign_out_refuses_the_users_earlier_sessions_only(tmp_path):
    clock, store = Clock(), LocalStore(tmp_path)
    book = SignOuts(store, b"k" * 32, lifetime=LIFE, clock=clock)
    before = clock.now - 60
    assert book.stands("dora", before) and book.stands("erin", before)
    clock.now += 1
    book.sign_out("dora")
    assert book.flush()
    assert not book.stands("dora", before) and not book.stands("Dora", before)  # Hub names ignore case
    assert book.stands("dora", clock.now + 0.001) and book.stands("erin", before)
    assert not book.stands("dora", clock.now)  # signed in the very moment she signed out: refused
    assert not book.stands("erin", clock.now - LIFE - 1)  # older than a session's life
    assert not book.stands("erin", clock.now + 3600)  # from the future
    for bad in (None, "x" * 200, "../etc", "", True, float("nan")):
        assert not book.stands(bad, before) and not book.stands("erin", bad)
    book.sign_out("../../etc/passwd")  # not a user name: nothing recorded, no path made of it
    assert store.list("sessions") == [LOGOUTS_PATH]

    stored = store.read_json(LOGOUTS_PATH)
    assert "dora" not in json.dumps(stored).lower() and list(stored["signed_out"].values()) == [clock.now]
    restarted = SignOuts(store, b"k" * 32, lifetime=LIFE, clock=clock)
    assert not restarted.stands("dora", before) and restarted.stands("erin", before)

    clock.now += LIFE + 10  # a sign-out older than a session's life is dropped at the next write
    book.sign_out("erin")
    assert book.flush() and len(store.read_json(LOGOUTS_PATH)["signed_out"]) == 1


def test_on_the_hub_store_a_sign_out_is_one_commit_and_outlives_the_process(hub, api, repos):
    results, _requests = repos
    clock = Clock(time.time())
    book = SignOuts(HubStore(api, *repos), b"k" * 32, lifetime=LIFE, clock=clock)
    before, landed = clock.now - 60, hub.commits[results]
    clock.now += 1
    book.sign_out("dora")
    assert book.flush() and hub.commits[results] == landed + 1
    assert b"dora" not in hub.files(results)[LOGOUTS_PATH].lower()
    restarted = SignOuts(HubStore(api, *repos), b"k" * 32, lifetime=LIFE, clock=clock)
    assert not restarted.stands("dora", before) and restarted.stands("erin", before)


class FailingStore(LocalStore):
    def write_bytes(self, path: str, data: bytes) -> None:
        raise OSError("the store is down")


def test_a_store_that_fails_never_breaks_a_sign_out(tmp_path):
    clock = Clock()
    book = SignOuts(FailingStore(tmp_path), b"k" * 32, lifetime=LIFE, clock=clock)
    before = clock.now - 1
    book.sign_out("dora")  # no exception
    assert not book.flush()  # not written ...
    assert not book.stands("dora", before) and book.stands("erin", before)  # ... but refused in memory


def test_an_unreadable_record_refuses_every_session_from_before_the_start(tmp_path):
    clock, store = Clock(), LocalStore(tmp_path)
    store.write_bytes(LOGOUTS_PATH, b"{not json")
    book = SignOuts(store, b"k" * 32, lifetime=LIFE, clock=clock)
    assert not book.stands("erin", clock.now - 1) and book.stands("erin", clock.now + 1)
    assert LOGOUTS_PATH in dict(store.damaged.listing())
    book.sign_out("dora")
    assert book.flush() and LOGOUTS_PATH not in dict(store.damaged.listing())  # written again, whole


# ------------------------------------------------------------------------------------------------ the middleware

def small_app(book: SignOuts, secret: str = "secret") -> Starlette:
    """A Starlette app with Gradio's OAuth routes' session handling, SessionGuard inside SessionMiddleware as in
    the Space (SessionMiddleware added with add_middleware, as gradio.oauth.attach_oauth does)."""

    async def callback(request):
        request.session["oauth_info"] = {"userinfo": {"preferred_username": request.query_params["user"]}}
        return PlainTextResponse("signed in")

    async def logout(request):
        request.session.pop("oauth_info", None)
        return PlainTextResponse("signed out")

    async def whoami(request):
        info = request.session.get("oauth_info")
        return PlainTextResponse(info["userinfo"]["preferred_username"] if info else "")

    app = Starlette(routes=[Route("/login/callback", callback), Route("/logout", logout), Route("/whoami", whoami)],
                    middleware=[Middleware(SessionGuard, sign_outs=book)])
    app.add_middleware(SessionMiddleware, secret_key=secret)
    return app


def test_the_guard_stamps_sign_ins_and_ends_sessions(tmp_path):
    clock = Clock(time.time())
    book = SignOuts(LocalStore(tmp_path), b"k" * 32, lifetime=LIFE, clock=clock)
    client = TestClient(small_app(book))

    def get(path: str, cookie: str | None = None, **params):
        client.cookies.clear()  # each call carries only the cookie it is given
        return client.get(path, params=params, headers={"Cookie": f"session={cookie}"} if cookie else {})

    def who(cookie: str | None) -> str:
        return get("/whoami", cookie).text

    def sign_in(user: str) -> str:
        return cookie_from(get("/login/callback", user=user))

    dora, erin = sign_in("dora"), sign_in("erin")
    assert who(dora) == "dora" and who(erin) == "erin"
    clock.now += 1
    out = get("/logout", dora)
    assert out.text == "signed out" and cookie_from(out) == "null"
    assert who(dora) == "" and who(erin) == "erin"
    replayed = get("/whoami", dora)
    assert cookie_from(replayed) == "null"  # the refused copy is told to forget itself
    clock.now += 1
    again = sign_in("dora")
    assert who(again) == "dora"
    clock.now += LIFE + 1  # a session lasts its life from the sign-in, however much it is used
    assert who(again) == "" and who(erin) == ""

    # a session Gradio signed without our stamp (from before this guard), or stamped for another user
    now = clock.now
    bare = session_cookie({"oauth_info": {"userinfo": {"preferred_username": "dora"}}}, "secret")
    other = session_cookie({"oauth_info": {"userinfo": {"preferred_username": "dora"}},
                            SIGNED_IN: {"user": "erin", "at": now}}, "secret")
    right = session_cookie({"oauth_info": {"userinfo": {"preferred_username": "dora"}},
                            SIGNED_IN: {"user": "dora", "at": now}}, "secret")
    assert who(bare) == "" and who(other) == "" and who(right) == "dora"
