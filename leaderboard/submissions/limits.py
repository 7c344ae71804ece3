"""The submission limits, per person and per model organisation, each with a message that says which limit was
reached and when it frees up.

- LEADERBOARD_MAX_PENDING_PER_USER: PENDING requests one submitter may have at once (frees up when one starts
  running, or is cancelled);
- LEADERBOARD_MAX_SUBMISSIONS_PER_WEEK: requests one submitter may submit in any 7 days (frees up when the oldest
  of them is 7 days old); a FAILED request refused before its run began (its reason ends with the evaluator's mark,
  evaluator.api.NOTHING_RAN: what its configuration told, before any model loaded) is not counted;
- LEADERBOARD_MAX_PENDING_PER_ORG (0: none): PENDING requests of one model organisation, whoever submitted them.

Admins have no limits (leaderboard.submissions.checks skips these checks for them).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Iterable

from evaluator import api
from leaderboard.formatting import escape_markdown as md
from leaderboard.settings import Settings
from leaderboard.submissions import records as q

WINDOW = timedelta(days=7)


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _submitted(request: q.Request) -> datetime | None:
    try:
        return q.parse_time(request.submitted_time)
    except ValueError:
        return None


def refused_before_run(request: q.Request) -> bool:
    """Whether a request FAILED for a reason known before its run began (the evaluator's preflight), so that it
    does not count toward its submitter's weekly limit."""
    return request.status == q.FAILED and (request.error or "").rstrip().endswith(api.NOTHING_RAN)


def refusal(settings: Settings, requests: Iterable[q.Request], new: q.Request, moment: datetime) -> str:
    """Why `new` (not yet stored) may not be queued now, given the stored `requests` ("" when it may)."""
    requests = [r for r in requests if r.path != new.path]  # a FAILED or CANCELLED one it replaces does not count
    mine = [r for r in requests if r.submitter == new.submitter]
    who = md(new.submitter, limit=60)

    pending = [r for r in mine if r.status == q.PENDING]
    if len(pending) >= settings.max_pending_per_user:
        return (f"{who} already has {len(pending)} pending request(s), the most one person may have at once "
                f"({settings.max_pending_per_user}); a place frees up when one of them starts running, or when you "
                "cancel one (Queue tab).")

    counted = [r for r in mine if not refused_before_run(r)]
    recent = sorted(t for t in (_submitted(r) for r in counted) if t is not None and t > moment - WINDOW)
    if len(recent) >= settings.max_submissions_per_week:
        frees = recent[len(recent) - settings.max_submissions_per_week] + WINDOW
        return (f"{who} has submitted {len(recent)} request(s) in the last 7 days, the most one person may submit in "
                f"7 days ({settings.max_submissions_per_week}); the next place frees up at {_when(frees)}.")

    org = new.model.split("/", 1)[0]
    if settings.max_pending_per_org and new.source == "hub":
        same_org = [r for r in requests if r.status == q.PENDING and r.source == "hub"
                    and r.model.split("/", 1)[0] == org]
        if len(same_org) >= settings.max_pending_per_org:
            return (f"The organisation {md(org, limit=60)} already has {len(same_org)} pending request(s), the most "
                    f"one organisation may have at once ({settings.max_pending_per_org}); a place frees up when one "
                    "of them starts running.")
    return ""
