"""What a person may do to a stored request, and the record of it.

- **cancel** a PENDING or RUNNING request: its submitter, or an admin (a running evaluation is stopped: a local
  worker sees its lease gone at its next heartbeat, a Hugging Face Job is cancelled);
- **requeue** a FAILED request (back to PENDING, attempts reset): admins;
- **hide** a FINISHED run from the ranking with a reason the board shows as its flag, and **show** it again: admins;
- **propose** a FINISHED run's results to its model page (leaderboard.board.proposals opens the pull request and
  records it here with its `url`; `proposed` reads it back, and the board links it). Before it opens one it reserves
  the run here, under the store's lock (`reserve_proposal`): a `propose` action marked `pending`, which counts toward
  the daily limits at once and keeps every other process and store client from opening a second pull request for the
  run; the pull request's record replaces it (`record_proposal`), a failure removes it (`release_proposal`), and one
  left by a crash holds the run no longer than RESERVED_S.

Each action happens under the store's lock (read, check, write) and is appended to the request's `actions` as
{action, by, at, reason}, so the request file says who did what, when and why, and logged in one INFO line (the
console shows it: leaderboard.console_logging). Messages are Markdown-safe.
"""
from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
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
RESERVED_S = 600  # a pending propose action older than this was left by a crash: it holds the run no longer


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


def _reserves(entry) -> bool:
    return isinstance(entry, dict) and entry.get("action") == PROPOSE and bool(entry.get("pending"))


def _holds(entry: dict, moment: datetime) -> bool:
    """Whether a reservation still holds its run: made less than RESERVED_S ago (and not in the future)."""
    at = q.parse_time(entry.get("at"))
    return at is not None and moment - timedelta(seconds=RESERVED_S) < at <= moment + timedelta(minutes=5)


def pending_proposal(request: q.Request, moment: datetime) -> dict | None:
    """The run's reservation for a pull request being opened now (a pending propose action that still holds the
    run), or None."""
    return next((entry for entry in request.actions if _reserves(entry) and _holds(entry, moment)), None)


def _drop(request: q.Request, reservation: str | None = None, moment: datetime | None = None) -> None:
    """Remove the reservation `reservation`, and with `moment` every reservation that no longer holds the run."""
    def kept(entry) -> bool:
        if not _reserves(entry):
            return True
        if reservation is not None and entry.get("pending") == reservation:
            return False
        return moment is None or _holds(entry, moment)

    request.actions = [entry for entry in request.actions if kept(entry)]


def reserve_proposal(store: Store, path: str, by: Visitor,
                     check: Callable[[q.Request, list[q.Request], datetime], str]) -> tuple[str, str]:
    """Reserve the run at `path` for one pull request opened by `by`, under the store's lock: the request and every
    request are read inside it, `check(request, requests, moment)` says why not ("" when it may: the daily limits,
    a pull request already recorded, another reservation), and the reservation (a pending propose action, counted
    by the limits at once) is written in the same step. Returns (reservation, "") or ("", why). Raises
    DamagedFile, StoreBusy, StoreConflict or OSError when the store cannot say."""
    reservation = secrets.token_hex(8)

    def step() -> tuple[str, str]:
        request = q.load(store, path)
        if request is None:
            return "", "The run's request is gone."
        moment = q.now()
        _drop(request, moment=moment)  # a crashed attempt's reservation
        requests = [request if other.path == request.path else other for other in q.all_requests(store)]
        why = check(request, requests, moment)
        if why:
            return "", why
        request.actions.append({"action": PROPOSE, "by": by.name, "at": q.iso(moment), "reason": "",
                                "pending": reservation})
        q.save(store, request)
        return reservation, ""

    with store.without_waiting():
        return q.transact(store, step)


def release_proposal(store: Store, path: str, reservation: str) -> None:
    """Remove a reservation whose pull request was not opened (a Hub error); a failure is the caller's to log."""
    def step() -> None:
        request = q.load(store, path)
        if request is not None and any(_reserves(a) and a.get("pending") == reservation for a in request.actions):
            _drop(request, reservation)
            q.save(store, request)

    with store.without_waiting():
        q.transact(store, step)


def record_proposal(store: Store, path: str, by: Visitor, url: str, opened: bool = True,
                    reservation: str | None = None) -> bool:
    """Append the pull request just opened (`opened`), or found on the Hub, for the run at `path` to its request's
    `actions`, under the store's lock: {action: propose, by, at, reason: "", url, opened}, in place of the
    reservation `reservation` when there is one. Returns whether it was written (False: the request is gone or
    damaged, or already records that URL)."""
    def step() -> bool:
        try:
            request = q.load(store, path)
        except DamagedFile:
            return False
        if request is None:
            return False
        had = len(request.actions)
        if reservation is not None:
            _drop(request, reservation)
        if url in {a.get("url") for a in request.actions if isinstance(a, dict)}:
            if len(request.actions) != had:
                q.save(store, request)
            return False
        request.actions.append({"action": PROPOSE, "by": by.name, "at": q.iso(q.now()), "reason": "", "url": url,
                                "opened": opened})
        q.save(store, request)
        log.info("%s %s by %s: %s", PROPOSE, request.key, by.name, url)
        return True

    with store.without_waiting():
        return q.transact(store, step)
