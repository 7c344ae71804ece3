"""What the Jobs budget (leaderboard.submissions.jobs_ledger) tells people: why a PENDING request waits for it, on the
Queue and in the submitter's "Your requests" table, and for admins the window's spend and the open reservations.

A request waits for the budget when the dispatcher's claim would not take it now: the same rule (jobs_ledger.verdict)
walked over the PENDING requests in queue order, from the ledger as the store holds it. "Next start" is when enough
of the window's spend leaves the window, or enough open reservations settle (at the latest at their Job's timeout),
for the first waiting request's worst case to fit.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable

from leaderboard.formatting import escape_markdown, format_time
from leaderboard.store import Store
from leaderboard.submissions import jobs_ledger as jl
from leaderboard.submissions.records import PENDING, Request
from leaderboard.submissions.vocabulary import now

WAITING = "waiting for the Jobs budget"


def usd_text(value: float | None) -> str:
    """$12.50; a sum under a dollar keeps four decimals ($0.0125); "?" when unknown."""
    if value is None:
        return "$?"
    return f"${value:,.2f}" if value >= 1 or value == 0 else f"${value:.4f}"


def _day(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def waiting_notes(settings, ledger: jl.Ledger, requests: Iterable[Request], rates: dict[str, float] | None = None,
                  moment: datetime | None = None) -> dict[str, str]:
    """Request key -> why it waits for the Jobs budget, for each PENDING request the dispatcher would not start now
    (none without a budget, or with the local executor). `rates`: the flavors' prices when known here (else the
    ledger's)."""
    budget = settings.jobs_budget_usd
    if budget is None or settings.executor != "hf-jobs":
        return {}
    moment = moment or now()
    window = jl.window_seconds(settings)
    days = f"{settings.jobs_budget_days:g} days"
    prices = {**ledger.rates, **(rates or {})}
    timeout = jl.job_timeout(settings)
    committed = ledger.committed(moment, window)
    spent = f"{WAITING}: {usd_text(committed)} of {usd_text(budget)} spent in the last {days}"
    pending = sorted((r for r in requests if r.status == PENDING and not r.served),
                     key=lambda r: (r.submitted_time or "", r.path))
    notes, blocked, head = {}, False, ""
    for request in pending:
        cost = jl.worst_case(settings, request, prices, timeout)
        if cost is None or jl.plan_refusal(settings, request, prices):  # the dispatcher fails it, with the reason
            continue
        if ledger.damaged:
            notes[request.key] = (f"{WAITING}: its ledger {jl.PATH} cannot be read ({ledger.damaged}); no Job starts "
                                  "until an admin repairs or removes it")
            continue
        flavor, usd = cost
        why = jl.verdict(budget, committed, usd, blocked)
        if why == jl.FULL:
            blocked = True
            when = jl.next_start(ledger, committed + usd - budget, moment, window)
            head = f"{spent}; next start about {_day(when)}" if when else f"{spent}; next start unknown"
        if why in (jl.FULL, jl.BEHIND):
            notes[request.key] = head
        elif why == jl.ZERO:
            notes[request.key] = f"{spent}; no Job starts while LEADERBOARD_JOBS_BUDGET_USD is 0"
        elif why == jl.NEVER:
            notes[request.key] = (f"{WAITING}: its worst case, {usd_text(usd)} ({flavor} for its whole timeout of "
                                  f"{timeout / 3600:.2g} h), is more than the whole budget of {usd_text(budget)} over "
                                  f"{days}; it starts only if the budget is raised")
        elif why == jl.UNKNOWN:
            notes[request.key] = (f"{WAITING}: the price of {flavor} is unknown (the Hub's hardware list could not be "
                                  "read), so its worst case cannot be reserved; it starts once the price is known")
        elif not why:
            committed += usd or 0.0
    return notes


def notes_for(settings, store: Store, requests: Iterable[Request], rates: dict[str, float] | None = None) \
        -> dict[str, str]:
    """waiting_notes from the ledger the store holds ({} without a budget, and when it cannot be read)."""
    if settings.jobs_budget_usd is None or settings.executor != "hf-jobs":
        return {}
    try:
        ledger = jl.read(store)
    except Exception:  # noqa: BLE001 - an outage of the store: the notes are left out, the page still loads
        return {}
    return waiting_notes(settings, ledger, requests, rates)


def admin_text(settings, ledger: jl.Ledger, moment: datetime | None = None) -> str:
    """For admins, as Markdown: the budget, what the window's Jobs cost, and each open reservation."""
    moment = moment or now()
    window = jl.window_seconds(settings)
    days = f"{settings.jobs_budget_days:g} days"
    budget = settings.jobs_budget_usd
    if ledger.damaged:
        return (f"**Jobs budget**: the ledger `{jl.PATH}` cannot be read ({escape_markdown(ledger.damaged)}); "
                "repair or remove it (see Damaged files)" + ("; no Job starts until then." if budget is not None
                                                             else "."))
    charges = [c for c in ledger.settled if jl.within(c.ended, moment, window)]
    seconds = sum(c.seconds or 0.0 for c in charges)
    cap = f"of {usd_text(budget)}" if budget is not None else "with no cap (LEADERBOARD_JOBS_BUDGET_USD is empty)"
    lines = [f"**Jobs budget** {cap} over the last {days}: {usd_text(ledger.spent(moment, window))} spent by "
             f"{sum(c.jobs for c in charges)} Job(s) ({seconds:,.0f} s of running time), "
             f"{usd_text(ledger.reserved())} reserved by {len(ledger.open)} open Job(s)."]
    for r in sorted(ledger.open.values(), key=lambda r: r.reserved):
        job = f"Job {escape_markdown(r.job[:12])}" if r.job else "Job not recorded yet"
        lines.append(f"- {escape_markdown(r.request, limit=160)}: {job} on {escape_markdown(r.flavor)}, "
                     f"{usd_text(r.usd)} reserved {format_time(r.reserved)}, settles by {format_time(r.until)}")
    return "\n".join(lines)


def admin_text_for(settings, store: Store) -> str:
    """admin_text from the ledger the store holds ("" with the local executor, or when the store cannot be read)."""
    if settings.executor != "hf-jobs":
        return ""
    try:
        return admin_text(settings, jl.read(store))
    except Exception:  # noqa: BLE001 - an outage of the store: left out this time
        return ""
