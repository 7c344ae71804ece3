"""Who is asking: the visitor behind a click or an API call, decided on the server, never from what a client sends.

With sign-in required (on a Space, or LEADERBOARD_REQUIRE_SIGN_IN=1) the visitor is the Hugging Face user of the
OAuth session (Gradio injects the profile into any handler with a `gr.OAuthProfile | None` parameter), or a
signed-out visitor who may look but not submit or cancel. Without sign-in (the embedded local default) the person at
the keyboard is the local user, with admin rights: that Space listens on 127.0.0.1, for the machine's own user.
"""
from __future__ import annotations

import getpass
import re
from dataclasses import dataclass

from leaderboard.formatting import escape_markdown
from leaderboard.settings import Settings

SIGN_IN_NEEDED = "Please **sign in with Hugging Face** (the button at the top of the page) first; nothing was changed."
_USER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")  # what a Hub user name can be


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
    return name if _USER_RE.match(name or "") else "local"


def is_admin(settings: Settings, name: str) -> bool:
    """Whether a Hub user name is listed in LEADERBOARD_ADMINS (case-insensitively, as the Hub compares names)."""
    return bool(name) and name.lower() in {admin.lower() for admin in settings.admins}


def visitor(settings: Settings, profile=None) -> Visitor:
    """The visitor of a request: `profile` is the gr.OAuthProfile Gradio injected (None when signed out)."""
    if not settings.require_sign_in:
        return Visitor(local_user(), admin=True, local=True)
    name = getattr(profile, "username", None) if profile is not None else None
    if not isinstance(name, str) or not _USER_RE.match(name):
        return SIGNED_OUT
    return Visitor(name, admin=is_admin(settings, name))
