"""What a person may do to a stored request, and the record of it.

- **cancel** a PENDING or RUNNING request: its submitter, or an admin (a running evaluation is stopped: a local
  worker sees its lease gone at its next heartbeat, a Hugging Face Job is cancelled);
- **requeue** a FAILED request (back to PENDING, attempts reset): admins;
- **hide** a FINISHED run from the ranking with a reason the board shows as its flag, and **show** it again: admins;
- **propose** a FINISHED run's results to its model page (leaderboard.board.proposals opens the pull request and
  records it here with its `url`; `proposed` reads it back, and the board links it).

Each action happens under the store's lock (read, check, write) and is appended to the request's `actions` as
{action, by, at, reason}, so the request file says who did what, when and why, and logged in one INFO line (the
console shows it: leaderboard.console_logging). Messages are Markdown-safe.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

from evaluator import api
from leaderboard.formatting import escape_markdown as md
from leaderboard.store import DamagedFile, Store, StoreBusy
from leaderboard.submissions import records as q
from leaderboard.submissions.outcomes import shown_request
from leaderboard.submissions.identity import SIGN_IN_NEEDED, Visitor

log = logging.getLogger(__name__)

MAX_REASON = 300  # characters of a reason kept
PROPOSE = "propose"  # the action that records a pull request proposing a run's results to its model page


@dataclass(frozen=True)
class Action:
    name: str
    admin_only: bool
    needs_reason: bool
    from_statuses: tuple[str, ...]  # the statuses it applies to
    apply: Callable[[q.Request, str], None]
    done: str  # past tense, for the message


def _cancel(request: q.Request, reason: str) -> None:
    request.status = q.CANCELLED
    request.finished_time = q.iso(q.now())
    request.lease_owner = request.lease_expires = None  # a running worker finds its lease gone and stops


def _requeue(request: q.Request, reason: str) -> None:
    request.status = q.PENDING
    request.attempts = 0
    request.error = request.log_tail = request.started_time = request.finished_time = None
    request.lease_owner = request.lease_expires = None
    request.progress = {}


def _hide(request: q.Request, reason: str) -> None:
    request.hidden = reason


def _show(request: q.Request, reason: str) -> None:
    request.hidden = None


ACTIONS: dict[str, Action] = {
    "cancel": Action("cancel", False, False, (q.PENDING, q.RUNNING), _cancel, "Cancelled"),
    "requeue": Action("requeue", True, False, (q.FAILED,), _requeue, "Re-queued"),
    "hide": Action("hide", True, True, (q.FINISHED,), _hide, "Hid"),
    "show": Action("show", True, False, (q.FINISHED,), _show, "Showed again"),
}


def act(store: Store, path: str, action: str, by: Visitor, reason: str = "") -> tuple[bool, str]:
    """Do `action` to the request at `path` as `by`; (done, message). Refused, with the reason and nothing changed,
    when the visitor is signed out or not allowed, the request is missing, damaged or in another state."""
    chosen = ACTIONS.get(action)
    if chosen is None:
        return False, f"Unknown action {md(action, 40)}."
    if not by.signed_in:
        return False, SIGN_IN_NEEDED
    if chosen.admin_only and not by.admin:
        return False, "Only the leaderboard's admins can do that; nothing was changed."
    reason = " ".join(reason.split())[:MAX_REASON] if isinstance(reason, str) else ""
    if chosen.needs_reason and not reason:
        return False, "Please give a reason: the board shows it beside the run."
    try:
        with store.without_waiting():  # a person is waiting: never sleep on the commit budget or a rate limit
            return q.transact(store, lambda: _act(store, path, chosen, by, reason))
    except StoreBusy as busy:
        return False, f"The leaderboard is busy; try again in {busy.minutes} minute{'s' if busy.minutes != 1 else ''}. " \
                      "Nothing was changed."


def _act(store: Store, path: str, action: Action, by: Visitor, reason: str) -> tuple[bool, str]:
    try:
        request = q.load(store, path)
    except DamagedFile as exc:
        return False, (f"The stored request is damaged ({md(str(exc), 160)}); the admins see it listed in the Queue "
                       "tab.")
    if request is None:
        return False, "No such request."
    if action.name == "cancel" and not by.admin and request.submitter != by.name:
        return False, "Only the person who submitted a request (or an admin) can cancel it; nothing was changed."
    if action.name == "show" and request.hidden is None:
        return False, "This run is not hidden."
    if request.status not in action.from_statuses:
        return False, (f"Only a {' or '.join(action.from_statuses)} request can be {_participle(action.name)}; this "
                       f"one is {request.status}.")
    action.apply(request, reason)
    request.actions.append({"action": action.name, "by": by.name, "at": q.iso(q.now()), "reason": reason})
    q.save(store, request)
    log.info("%s %s by %s%s%s", action.name, request.key, by.name, " (admin)" if by.admin else "",
             f": {api.redact(reason)}" if reason else "")
    why = f" ({md(reason, 120)})" if reason else ""
    return True, f"{action.done} {shown_request(request)}{why}."


def _participle(name: str) -> str:
    return {"cancel": "cancelled", "requeue": "re-queued", "hide": "hidden", "show": "shown again"}[name]


def proposed(request: q.Request) -> str | None:
    """The URL of the latest pull request that proposed the run's results to its model page (None: none)."""
    for entry in reversed(request.actions):
        if isinstance(entry, dict) and entry.get("action") == PROPOSE and isinstance(entry.get("url"), str):
            return entry["url"]
    return None


def board_marks(request: q.Request) -> dict[str, str]:
    """What the board shows of a finished run from its request, beside its results: why the admins hid it
    ("hidden") and the pull request that proposed it to its model page ("pull_request"); only those it has."""
    found = {"hidden": request.hidden, "pull_request": proposed(request)}
    return {name: value for name, value in found.items() if value}


def record_proposal(store: Store, path: str, by: Visitor, url: str, opened: bool = True) -> bool:
    """Append the pull request just opened (`opened`), or found on the Hub, for the run at `path` to its request's
    `actions`, under the store's lock: {action: propose, by, at, reason: "", url, opened}. Returns whether it was
    written (False: the request is gone or damaged, or already records that URL)."""
    def step() -> bool:
        try:
            request = q.load(store, path)
        except DamagedFile:
            return False
        if request is None or url in {a.get("url") for a in request.actions if isinstance(a, dict)}:
            return False
        request.actions.append({"action": PROPOSE, "by": by.name, "at": q.iso(q.now()), "reason": "", "url": url,
                                "opened": opened})
        q.save(store, request)
        log.info("%s %s by %s: %s", PROPOSE, request.key, by.name, url)
        return True

    with store.without_waiting():
        return q.transact(store, step)
