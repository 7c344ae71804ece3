"""Sessions that end on the server: signing out ends every copy of the session cookie, and a sign-in lasts
LEADERBOARD_SESSION_HOURS (8 hours by default) at most.

Gradio's OAuth routes keep the profile under "oauth_info" in Starlette's signed session cookie and inject it into the
handlers from `scope["session"]`; its /logout only empties the cookie of the browser that asks. `SessionGuard` is an
ASGI middleware placed inside Starlette's SessionMiddleware (passed to FastAPI's constructor through launch()'s
app_kwargs, while Gradio adds SessionMiddleware later with add_middleware, which puts it outside), so it sees each
request's decoded session before any route or handler does:

- on the response of /login/callback that signed someone in, it stamps the session with who signed in and when
  (`SIGNED_IN`; the session is signed again anyway, since the callback changed it);
- on every request, a session whose stamp is missing, names another user, is older than a session's life or comes
  before that user's last sign-out (leaderboard.submissions.sessions.SignOuts) loses its profile before Gradio reads
  it: the visitor is signed out, and the response clears the cookie;
- on /logout, a session that still stands records its user's sign-out (in memory at once, in the store in the
  background) before Gradio's own logout empties it.

The user name comes from the signed session alone, never from what a request says.
"""
from __future__ import annotations

import hashlib
import secrets

from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions.sessions import SignOuts, user_name

PROFILE = "oauth_info"            # where Gradio keeps the signed-in profile (gradio.oauth)
SIGNED_IN = "leaderboard_sign_in"  # our stamp: {"user": name, "at": seconds since the epoch}
LOGIN_CALLBACK, LOGOUT = "/login/callback", "/logout"  # Gradio's OAuth routes, on the app's root


def _route_path(scope: Scope) -> str:
    """The request's path below the app's root path (as Starlette's router matches it)."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root):len(root) + 1] in ("", "/"):
        return path[len(root):]
    return path


def profile_user(info) -> str | None:
    """The Hub user name of a session's profile (Gradio's oauth_info), when it is one."""
    userinfo = info.get("userinfo") if isinstance(info, dict) else None
    return user_name(userinfo.get("preferred_username")) if isinstance(userinfo, dict) else None


class SessionGuard:
    """The ASGI middleware ending sessions on the server (see the module's docstring)."""

    def __init__(self, app: ASGIApp, sign_outs: SignOuts):
        self.app, self.sign_outs = app, sign_outs

    def standing_user(self, session) -> str | None:
        """The user a session signs in, after dropping its profile (and stamp) when it no longer stands."""
        info = session.get(PROFILE)
        if info is None:
            session.pop(SIGNED_IN, None)
            return None
        name, stamp = profile_user(info), session.get(SIGNED_IN)
        if name and isinstance(stamp, dict) and stamp.get("user") == name \
                and self.sign_outs.stands(name, stamp.get("at")):
            return name
        session.pop(PROFILE, None)
        session.pop(SIGNED_IN, None)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = scope.get("session") if scope["type"] in ("http", "websocket") else None
        if not isinstance(session, dict):  # no SessionMiddleware before us: nobody signs in
            await self.app(scope, receive, send)
            return
        name = self.standing_user(session)
        path = _route_path(scope)
        if path == LOGOUT and scope["type"] == "http":
            if name:
                self.sign_outs.sign_out(name)
            session.pop(SIGNED_IN, None)
        if path != LOGIN_CALLBACK or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        before = session.get(PROFILE)

        async def stamp(message: Message) -> None:
            if message["type"] == "http.response.start":  # before SessionMiddleware (outside us) signs the session
                current = scope.get("session")
                info = current.get(PROFILE) if isinstance(current, dict) else None
                if info is not None and info is not before:  # the callback signed someone in just now
                    signed_in = profile_user(info)
                    if signed_in:
                        current[SIGNED_IN] = {"user": signed_in, "at": self.sign_outs.clock()}
                    else:
                        current.pop(PROFILE, None)
                        current.pop(SIGNED_IN, None)
            await send(message)

        await self.app(scope, receive, stamp)


def session_key() -> bytes:
    """The secret the sign-out file hashes user names with: derived from the Space's OAuth secret (what Gradio
    signs the cookies with, read once leaderboard.submissions.identity.seal_mock_sessions ran), else random."""
    import gradio.oauth

    secret = gradio.oauth.OAUTH_CLIENT_SECRET
    if not secret:
        return secrets.token_bytes(32)
    return hashlib.sha256(b"leaderboard sign-outs:" + secret.encode()).digest()


def session_middleware(settings: Settings, store: Store) -> list[Middleware]:
    """What launch()'s app_kwargs["middleware"] takes: the SessionGuard when visitors sign in, else nothing."""
    if not settings.require_sign_in:
        return []
    lifetime = settings.session_hours * 3600  # LEADERBOARD_SESSION_HOURS
    return [Middleware(SessionGuard, sign_outs=SignOuts(store, session_key(), lifetime=lifetime))]
