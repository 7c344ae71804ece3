"""The Jobs budget's ledger (LEADERBOARD_JOBS_BUDGET_USD over LEADERBOARD_JOBS_BUDGET_DAYS): what this
leaderboard's Hugging Face Jobs cost and what the running ones reserved, one small JSON file in the requests repo,
`requests/.jobs-budget.json` (a dot name: the store's listings skip it, so records.all_requests never reads it as a
request):

    {"version": 1,
     "rates": {"<flavor>": <US dollars an hour>, ...},          # the Hub's prices, as the dispatcher last read them
     "open": {"<lease owner>": {"request": "<key>", "flavor": "...", "usd": <worst case>, "usd_per_hour": <price>,
                                "reserved": "<time>", "until": "<time + the Job's timeout>", "job": "<Job id>"}},
     "settled": [{"lease": "...", "request": "<key>", "flavor": "...", "job": "<Job id>", "seconds": <its running
                  time>, "usd": <seconds x price>, "ended": "<time>", "note": "...", "jobs": 1}, ...]}

A reservation is the worst case of one Job (its flavor's price x its timeout), taken in the claim's own step of the
store (records.claim_many with a `Gate`): a request is claimed only when the window's settled costs, the open
reservations and its own fit the budget, in queue order (a request that does not fit holds up those behind it; one
whose price is unknown, or whose worst case alone is over the budget, waits without holding up the others). When its
Job ends the reservation is replaced by what the Job cost. The ledger is only ever written inside a step of the store
that writes requests anyway (a claim, a Job's record, a close), so it costs no commit; several dispatchers' steps
are serialised by the store. When it is written, settled entries older than the window leave it and those older than
two days are summed up per day (`jobs`: how many), so it stays small however long the window. A damaged
ledger is listed with the store's damaged files and never overwritten: with a budget set, no Job starts until an
admin repairs or removes it. A time no Job can have is damage too: a charge that ends, or a reservation that starts,
more than SKEW_S after now (a clock far ahead would otherwise hold the budget until that date), a time before EPOCH
(the rule every record's times follow: vocabulary.implausible), or a reservation that ends before it starts.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timedelta
from typing import Callable

from leaderboard.running.job_flavors import TooLarge
from leaderboard.running.run_memory import planned_flavor
from leaderboard.store import DamagedFile, Store
from leaderboard.submissions.cost_plans import as_cost_plan, over_budget
from leaderboard.submissions.records import Request
from leaderboard.submissions.vocabulary import EARLY, implausible, iso, now, parse_time

PATH = "requests/.jobs-budget.json"
VERSION = 1
DETAIL_S = 2 * 86400.0  # charges younger than this are kept one by one; older ones are summed up per day
# why a request waits: its price is unknown, the budget is 0, its worst case alone is over the budget, the budget is
# full now, or an earlier request waits for room
UNKNOWN, ZERO, NEVER, FULL, BEHIND = "unknown", "zero", "never", "full", "behind"


@dataclass
class Reservation:
    """The worst case of one Job, reserved at its claim under lease owner `lease` (`job`: its id, once recorded)."""

    request: str
    flavor: str
    usd: float | None
    usd_per_hour: float | None
    reserved: str
    until: str
    job: str = ""


@dataclass
class Charge:
    """What one ended Job cost: its running time x its flavor's price (usd None: the price was unknown); or, once
    older than DETAIL_S, what the `jobs` Jobs that ended on one day cost (`ended`: the last of them)."""

    lease: str
    request: str
    flavor: str
    job: str
    seconds: float | None
    usd: float | None
    ended: str
    note: str = ""
    jobs: int = 1


@dataclass
class Ledger:
    """The ledger as read; `damaged`: why the stored file could not be read (then it is never written)."""

    rates: dict[str, float] = field(default_factory=dict)
    open: dict[str, Reservation] = field(default_factory=dict)
    settled: list[Charge] = field(default_factory=list)
    damaged: str = ""
    stored: bytes | None = None  # what it read as (a write that changes nothing is skipped)

    def to_bytes(self) -> bytes:
        data = {"version": VERSION, "rates": dict(sorted(self.rates.items())),
                "open": {lease: asdict(r) for lease, r in sorted(self.open.items())},
                "settled": [asdict(c) for c in self.settled]}
        return json.dumps(data, indent=1, sort_keys=True).encode()

    def spent(self, moment: datetime, window_s: float) -> float:
        """What the Jobs that ended within the window cost (a charge of unknown price counts 0)."""
        return sum(c.usd or 0.0 for c in self.settled if within(c.ended, moment, window_s))

    def reserved(self) -> float:
        return sum(r.usd or 0.0 for r in self.open.values())

    def committed(self, moment: datetime, window_s: float) -> float:
        """What counts against the budget now: the window's settled costs plus the open reservations."""
        return self.spent(moment, window_s) + self.reserved()

    def settle(self, lease: str, seconds: float | None, usd: float | None, ended: str, note: str = "") -> bool:
        """Replace the reservation of `lease` by what its Job cost; False when it is not open (settled already)."""
        reservation = self.open.pop(lease, None)
        if reservation is None:
            return False
        self.settled.append(Charge(lease, reservation.request, reservation.flavor, reservation.job,
                                   None if seconds is None else round(seconds, 3),
                                   usd, ended, note))
        return True


def within(ended: str, moment: datetime, window_s: float) -> bool:
    when = parse_time(ended)
    return when is not None and (moment - when).total_seconds() < window_s


def _number(value, what: str, optional: bool = True) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise DamagedFile(f"{what} is not a number of 0 or more")
    return float(value)


def _entry(kind, data, what: str):
    """A Reservation or Charge from its stored object; DamagedFile when it is not one."""
    names = {f.name for f in fields(kind)} - {"jobs"}
    if not isinstance(data, dict) or not {n for n in names if n not in ("job", "note")} <= set(data):
        raise DamagedFile(f"{what} is not a {kind.__name__.lower()} entry")
    values = {name: data.get(name, "") for name in names}
    if kind is Charge:
        values["jobs"] = data.get("jobs", 1)
        if isinstance(values["jobs"], bool) or not isinstance(values["jobs"], int) or values["jobs"] < 1:
            raise DamagedFile(f"{what}.jobs is not a whole number of 1 or more")
    for name in ("usd", "usd_per_hour", "seconds"):
        if name in values:
            values[name] = _number(values[name], f"{what}.{name}")
    for name in names - {"usd", "usd_per_hour", "seconds"}:
        if not isinstance(values[name], str):
            raise DamagedFile(f"{what}.{name} is not text")
    for name in ("reserved", "until", "ended"):
        if name in values:
            try:
                if parse_time(values[name]) is None:
                    raise ValueError
            except ValueError:
                raise DamagedFile(f"{what}.{name} is not a time") from None
    return kind(**values)


def _plausible(when: str, what: str, moment: datetime, ends: bool) -> None:
    """DamagedFile for a time no Job of this ledger can have (vocabulary.implausible, the rule every record's times
    follow): before EPOCH, or past `moment` plus SKEW_S (a charge's end or a reservation's start written by a clock
    far ahead, which would hold the budget until then)."""
    why = implausible(parse_time(when), moment)
    if why == EARLY:
        raise DamagedFile(f"{what} ({when}) is before any Job of this leaderboard could have run")
    if why:
        raise DamagedFile(f"{what} ({when}) is in the future: {'a Job ends' if ends else 'a reservation starts'} "
                          f"no later than now")


def parse(data, moment: datetime | None = None) -> Ledger:
    """The ledger a stored JSON value holds; DamagedFile (the reason) when it is not one, or when one of its times
    cannot be (_plausible, against `moment`, by default now)."""
    if not isinstance(data, dict) or not isinstance(data.get("open", {}), dict) \
            or not isinstance(data.get("settled", []), list) or not isinstance(data.get("rates", {}), dict):
        raise DamagedFile("not a Jobs budget ledger: an object with open, settled and rates")
    rates = {str(k): _number(v, f"rates.{str(k)[:40]}", optional=False) for k, v in data.get("rates", {}).items()}
    opened = {str(k): _entry(Reservation, v, f"open.{str(k)[:40]}") for k, v in data.get("open", {}).items()}
    settled = [_entry(Charge, v, f"settled[{i}]") for i, v in enumerate(data.get("settled", []))]
    moment = moment or now()
    for lease, reservation in opened.items():
        _plausible(reservation.reserved, f"open.{lease[:40]}.reserved", moment, ends=False)
        if parse_time(reservation.until) < parse_time(reservation.reserved):
            raise DamagedFile(f"open.{lease[:40]}.until is before its reservation")
    for i, charge in enumerate(settled):
        _plausible(charge.ended, f"settled[{i}].ended", moment, ends=True)
    return Ledger(rates, opened, settled)


def read(store: Store, moment: datetime | None = None) -> Ledger:
    """The ledger as the store holds it (inside a step of the store: as that step sees it); empty when there is none.
    A damaged one is reported to the store's ledger of damaged files and comes back with `damaged` set."""
    try:
        data = store.read_json(PATH)
        ledger = Ledger() if data is None else parse(data, moment)
    except DamagedFile as exc:
        store.damaged.report(PATH, exc)
        return Ledger(damaged=str(exc))
    store.damaged.clear(PATH)
    ledger.stored = None if data is None else ledger.to_bytes()
    return ledger


def write(store: Store, ledger: Ledger, window_s: float, moment: datetime | None = None) -> None:
    """Write the ledger (inside a step of the store that writes anyway), the charges older than the window left
    out; nothing when it is damaged or unchanged."""
    if ledger.damaged:
        return
    moment = moment or now()
    ledger.settled = _by_day([c for c in ledger.settled if within(c.ended, moment, window_s)], moment)
    data = ledger.to_bytes()
    if data != ledger.stored:
        store.write_bytes(PATH, data)
        ledger.stored = data


def _by_day(charges: list[Charge], moment: datetime) -> list[Charge]:
    """The charges, those older than DETAIL_S summed up per day (what keeps the file small over a long window)."""
    recent, days = [], {}
    for charge in charges:
        ended = parse_time(charge.ended)
        if (moment - ended).total_seconds() < DETAIL_S:
            recent.append(charge)
            continue
        day = ended.date().isoformat()
        total = days.setdefault(day, Charge("", "", "", "", 0.0, 0.0, charge.ended, f"the Jobs that ended on {day}",
                                            0))
        total.seconds = (total.seconds or 0.0) + (charge.seconds or 0.0)
        total.usd = (total.usd or 0.0) + (charge.usd or 0.0)
        total.ended, total.jobs = max(total.ended, charge.ended, key=parse_time), total.jobs + charge.jobs
    return sorted(days.values(), key=lambda c: parse_time(c.ended)) + recent


def job_timeout(settings) -> int:
    """A Job's timeout: the evaluator's own limit plus the margin for starting, loading and publishing."""
    return int(settings.max_run_seconds + settings.jobs_timeout_margin)


def window_seconds(settings) -> float:
    return settings.jobs_budget_days * 86400.0


def worst_case(settings, request: Request, rates: dict[str, float], timeout_s: float) \
        -> tuple[str, float | None] | None:
    """(flavor, its price x the Job's timeout in US dollars, None when the price is unknown); None when no flavor
    takes the request (too large or of unknown size: the dispatcher fails it without a Job)."""
    try:
        flavor, _ = planned_flavor(settings, request)
    except (TooLarge, ValueError):
        return None
    rate = rates.get(flavor)
    return flavor, None if rate is None else rate * timeout_s / 3600.0


def plan_refusal(settings, request: Request, rates: dict[str, float] | None = None) -> str:
    """Why a request's recorded cost plan can never run within the budget ("" when it can, or when it has no plan:
    cost_plans.over_budget, its hours priced at `rates` where they know its flavor)."""
    return over_budget(settings, as_cost_plan(request.cost_plan), rates)


def verdict(budget: float | None, committed: float, cost: float | None, blocked: bool) -> str:
    """"" when a Job of worst case `cost` may start now, else why it waits (UNKNOWN, ZERO, NEVER, FULL, BEHIND)."""
    if budget is None:
        return ""
    if budget <= 0:
        return ZERO
    if cost is None:
        return UNKNOWN
    if cost > budget + 1e-9:
        return NEVER
    if blocked:
        return BEHIND
    return FULL if committed + cost > budget + 1e-9 else ""


@dataclass
class Gate:
    """One attempt of a claim step under the budget (records.claim_many's gate): `take` admits requests in queue
    order while their worst cases fit, `done` reserves them in the ledger, in the claim's own step. A request no
    flavor takes, or whose recorded plan is over the whole budget (`refuse_of`, kept in `refused`), is taken without a
    reservation: the dispatcher fails it, no Job starts."""

    store: Store
    ledger: Ledger
    budget: float | None
    window_s: float
    cost_of: Callable[[Request], tuple[str, float | None] | None]
    timeout_s: float
    moment: datetime = field(default_factory=now)
    taken: dict[str, tuple[str, float | None]] = field(default_factory=dict)  # path -> (flavor, worst case)
    refuse_of: Callable[[Request], str] | None = None  # why a request's plan is over the whole budget ("": it is not)
    refused: dict[str, str] = field(default_factory=dict)  # path -> that reason, for the requests taken to be failed
    blocked: bool = False
    committed: float = 0.0

    def __post_init__(self) -> None:
        self.committed = self.ledger.committed(self.moment, self.window_s)

    def take(self, request: Request) -> bool:
        if self.ledger.damaged and self.budget is not None:
            return False
        cost = self.cost_of(request)
        if cost is None:  # no flavor takes it: the dispatcher fails it, no Job starts
            return True
        why = self.refuse_of(request) if self.refuse_of is not None else ""
        if why:  # its plan is over the whole budget: it would wait forever, so it is taken to be failed, unreserved
            self.refused[request.path] = why
            return True
        why = verdict(self.budget, self.committed, cost[1], self.blocked)
        self.blocked = self.blocked or why == FULL
        if why:
            return False
        self.taken[request.path] = cost
        self.committed += cost[1] or 0.0
        return True

    def done(self, claimed: list[Request]) -> None:
        """Reserve the claimed requests' worst cases (written only when something was claimed: no commit of its
        own)."""
        if not claimed:
            return
        until = iso(self.moment + timedelta(seconds=self.timeout_s))
        for request in claimed:
            if request.path in self.taken:
                flavor, usd = self.taken[request.path]
                rate = self.ledger.rates.get(flavor)
                self.ledger.open[request.lease_owner] = Reservation(
                    request.key, flavor, usd, rate, iso(self.moment), until)
        write(self.store, self.ledger, self.window_s, self.moment)


def next_start(ledger: Ledger, need: float, moment: datetime, window_s: float) -> datetime | None:
    """When `need` more dollars are free: the window's charges leave it (their end + the window), the open
    reservations settle (at the latest at their Job's timeout, freeing what they reserved); None when they never
    free that much."""
    freed = [(parse_time(c.ended) + timedelta(seconds=window_s), c.usd or 0.0) for c in ledger.settled
             if within(c.ended, moment, window_s) and c.usd]
    freed += [(parse_time(r.until), r.usd or 0.0) for r in ledger.open.values() if r.usd]
    total = 0.0
    for when, usd in sorted(freed, key=lambda pair: pair[0]):
        total += usd
        if total >= need - 1e-9:
            return max(when, moment)
    return None
