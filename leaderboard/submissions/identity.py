"""Who is asking: the visitor behind a click or an API call, decided on the server, never from what a client sends.

With sign-in required (on a Space, or LEADERBOARD_REQUIRE_SIGN_IN=1) the visitor is the Hugging Face user of the
OAuth session (Gradio injects the profile into any handler with a `gr.OAuthProfile | None` parameter), or a
signed-out visitor who may look but not submit or cancel. Without sign-in (the embedded local default) the person at
the keyboard is the local user, with admin rights: that Space listens on a loopback address, for the machine's own
user. Sign-in off on any other address (LEADERBOARD_HOST=0.0.0.0, or a Space with LEADERBOARD_REQUIRE_SIGN_IN=0)
would make every visitor an admin: `sign_in_problem` refuses to start so, and `visitor` never gives the local user
there (everyone is signed out).

Sign-in is real only on a Hugging Face Space with `hf_oauth: true`: Gradio then signs visitors in through the Hub and
signs its session cookie with a key derived from the Space's OAuth client secret. Anywhere else Gradio mocks the
sign-in (whoever opens /login/huggingface becomes the machine's own Hub user) and signs cookies with a key anyone can
derive from an empty secret. So `sign_in_problem` refuses to start a Space that asks for sign-in without the Space's
OAuth variables, unless LEADERBOARD_MOCK_SIGN_IN asks for Gradio's mock (local development only: nobody signed in
through it is an admin, the Space stays on 127.0.0.1, and `seal_mock_sessions` gives its cookies a random key).
"""
from __future__ import annotations

import getpass
import re
import secrets
from dataclasses import dataclass

from leaderboard.formatting import escape_markdown
from leaderboard.settings import Settings, is_loopback

SIGN_IN_NEEDED = "Please **sign in with Hugging Face** (the button at the top of the page) first; nothing was changed."
USER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")  # what a Hub user name can be


@dataclass(frozen=True)
class Visitor:
    """The person behind a request to the Space."""

    name: str = ""       # the Hub user name (the local user's name without sign-in); "" when signed out
    admin: bool = False  # listed in LEADERBOARD_ADMINS, or the local user
    local: bool = False  # the local user of a Space without sign-in

    @property
    def signed_in(self) -> bool:
        return bool(self.name)

    def describe(self) -> str:
        """Markdown: who the Space takes the visitor to be."""
        if not self.signed_in:
            return "You are **not signed in**: sign in with Hugging Face to submit models and cancel your requests."
        role = " (admin)" if self.admin else ""
        if self.local:
            return (f"You are the **local user** ({escape_markdown(self.name, limit=60)}){role}: sign-in is off on this "
                    "Space, which is for this machine's own user.")
        return f"Signed in as **{escape_markdown(self.name, limit=60)}**{role}."


SIGNED_OUT = Visitor()


def local_user() -> str:
    """The name of the machine's user running the Space ("local" when it cannot be told)."""
    try:
        name = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in the environment or the password database
        return "local"
    return name if USER_NAME_RE.match(name or "") else "local"


def is_admin(settings: Settings, name: str) -> bool:
    """Whether a Hub user name is listed in LEADERBOARD_ADMINS (case-insensitively, as the Hub compares names)."""
    return bool(name) and name.lower() in {admin.lower() for admin in settings.admins}


def visitor(settings: Settings, profile=None) -> Visitor:
    """The visitor of a request: `profile` is the gr.OAuthProfile Gradio injected (None when signed out)."""
    if not settings.require_sign_in:
        if not is_loopback(settings.host):  # anyone could reach it (sign_in_problem keeps app.py from starting so)
            return SIGNED_OUT
        return Visitor(local_user(), admin=True, local=True)
    name = getattr(profile, "username", None) if profile is not None else None
    if not isinstance(name, str) or not USER_NAME_RE.match(name):
        return SIGNED_OUT
    return Visitor(name, admin=is_admin(settings, name) and not settings.mock_sign_in)  # the mock vouches for no one


def sign_in_problem(settings: Settings) -> str | None:
    """Why the Space must not start as configured (one line), or None: sign-in is off on an address other machines
    can reach (every visitor would be the local user, an admin), or sign-in is asked for where it cannot be real (not
    a Hugging Face Space, or one without its OAuth variables) and the mock was not asked for."""
    if not settings.require_sign_in and not is_loopback(settings.host):
        return (f"sign-in is off (LEADERBOARD_REQUIRE_SIGN_IN=0) but the Space would listen on {settings.host!r}, where "
                "everyone who reaches it would be the local user, an admin. Either keep it on this machine "
                "(LEADERBOARD_HOST=127.0.0.1) or have visitors sign in (LEADERBOARD_REQUIRE_SIGN_IN=1, on a Hugging "
                "Face Space with `hf_oauth: true`).")
    if not settings.require_sign_in or settings.mock_sign_in:
        return None
    missing = ([] if settings.on_space else ["SYSTEM=spaces with SPACE_ID"]) + list(settings.oauth_missing)
    if not missing:
        return None
    return ("sign-in is required (LEADERBOARD_REQUIRE_SIGN_IN, or SPACE_ID set) but visitors cannot sign in for real "
            f"here: this is not a Hugging Face Space with sign-in (missing: {', '.join(missing)}). On a Space, add "
            "`hf_oauth: true` to the README's front matter; to run without sign-in (the local user, an admin, on "
            "127.0.0.1) set LEADERBOARD_REQUIRE_SIGN_IN=0; for local development only, LEADERBOARD_MOCK_SIGN_IN=1 "
            "uses Gradio's mock sign-in.")


def seal_mock_sessions(settings: Settings) -> None:
    """With the mock sign-in, have Gradio sign session cookies with a random key of this process (Gradio would derive
    it from the absent OAuth client secret, a key anyone can compute): call before launch(). Does nothing otherwise."""
    if not (settings.mock_sign_in and settings.require_sign_in):
        return
    import gradio.oauth

    gradio.oauth.OAUTH_CLIENT_SECRET = secrets.token_urlsafe(32)  # read by attach_oauth when the app is created

