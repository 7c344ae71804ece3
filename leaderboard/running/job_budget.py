"""The dispatcher's side of the Jobs budget (the ledger and its rules: leaderboard.submissions.jobs_ledger): the
flavors' prices, the gate of each claim, and what each Job cost, read from the Jobs API.

- `gate` (records.claim_many's gate_of): the ledger read inside the claim's step, the settlements waiting here applied;
  the claim takes requests in queue order while their worst cases (price x the Job's timeout) fit, and reserves them
  in its own commit, so two dispatchers claiming at once never start Jobs past the budget. A request whose recorded
  cost plan alone is over the whole budget (jobs_ledger.plan_refusal) is taken unreserved and failed by the
  dispatcher with the numbers (`refused`), never left waiting.
- `look` (each tick, once the live Jobs are listed and the requests read): an open reservation whose Job is no longer
  live is settled from the Jobs API: the Job's running time (`durations.running_secs`, else finished_at - started_at)
  x the price reserved with it; each ended Job is inspected once. A reservation whose Job was never recorded is settled
  from the Job its labels find (0 when none was started); one whose Job cannot be read is counted at what it reserved
  once its timeout is past. The settlements wait here and ride along the next commit the dispatcher makes anyway
  (`ride`, for record_jobs and finish_many, and the next claim): never a commit of their own. A restarted dispatcher
  (or another one) finds them again the same way; settling one twice changes nothing.
- `rates`: the Hub's prices, read at most once an hour (every five minutes while they cannot be read; the last known
  ones, and those the ledger keeps, stand in meanwhile). With a budget set, a flavor whose price is unknown starts no
  Job: its requests wait, and the Queue says why.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

from leaderboard.running import hf_jobs
from leaderboard.running.job_flavors import hardware_rates
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import jobs_ledger as jl
from leaderboard.submissions.records import RUNNING, Request
from leaderboard.submissions.vocabulary import iso, now, parse_time

log = logging.getLogger(__name__)
RATES_MAX_AGE_S = 3600.0  # the prices are read again after this long
RATES_RETRY_S = 300.0  # ... and after this long when they could not be read


@dataclass
class Settlement:
    """What an ended Job cost, waiting to ride along the dispatcher's next commit."""

    seconds: float | None
    usd: float | None
    ended: str
    note: str = ""


class JobsBudget:
    """One dispatcher's view of the budget. `settings()`, `namespace()` and `timeout()` are the dispatcher's (its
    settings as they are now, the Jobs' namespace, a Job's timeout in seconds)."""

    def __init__(self, settings: Callable[[], Settings], store: Store, api, namespace: Callable[[], str],
                 timeout: Callable[[], int]):
        self._settings, self.store, self.api = settings, store, api
        self._namespace, self._timeout = namespace, timeout
        self._rates: dict[str, float] = {}
        self._rates_read: float | None = None
        self.pending: dict[str, Settlement] = {}  # lease owner -> the settlement of its reservation
        self.ended: dict[str, object] = {}  # Job id -> its JobInfo once it is no longer live (inspected once)
        self._unpriced: set[str] = set()  # flavors already warned about
        self.refused: dict[str, str] = {}  # the last claim's requests whose plan is over the budget: path -> why

    @property
    def settings(self) -> Settings:
        return self._settings()

    # ---- prices -------------------------------------------------------------------------------------------

    def rates(self) -> dict[str, float]:
        """Flavor -> US dollars an hour, from the Hub's hardware list (see the module docstring)."""
        age = None if self._rates_read is None else time.monotonic() - self._rates_read
        if age is None or age > (RATES_MAX_AGE_S if self._rates else RATES_RETRY_S):
            self._rates = hardware_rates(self.api) or self._rates
            self._rates_read = time.monotonic()
        return self._rates

    def known_rates(self) -> dict[str, float]:
        """The prices as last read (never asks the Hub: what the Queue tab's notes use)."""
        return dict(self._rates)

    def _cost_of(self, prices: dict[str, float]) -> Callable[[Request], tuple[str, float | None] | None]:
        def cost(request: Request) -> tuple[str, float | None] | None:
            found = jl.worst_case(self.settings, request, prices, self._timeout())
            if found and found[1] is None and self.settings.jobs_budget_usd is not None \
                    and found[0] not in self._unpriced:
                self._unpriced.add(found[0])
                log.warning("the Jobs budget: the price of %s is unknown (the Hub's hardware list could not be "
                            "read), so no Job starts on it until it is known", found[0])
            return found
        return cost

    # ---- inside the dispatcher's steps of the store ----------------------------------------------------------

    def _apply(self, ledger: jl.Ledger) -> None:
        for lease, settlement in self.pending.items():
            ledger.settle(lease, settlement.seconds, settlement.usd, settlement.ended, settlement.note)
        ledger.rates.update(self._rates)

    def gate(self) -> jl.Gate:
        """A claim step's gate (records.claim_many's gate_of), read inside the step."""
        ledger = jl.read(self.store)
        if not ledger.damaged:
            self._apply(ledger)
        prices = {**ledger.rates, **self._rates}
        gate = jl.Gate(self.store, ledger, self.settings.jobs_budget_usd, jl.window_seconds(self.settings),
                       self._cost_of(prices), self._timeout(),
                       refuse_of=lambda request: jl.plan_refusal(self.settings, request, prices))
        self.refused = gate.refused  # the step's last attempt is the one that claimed
        return gate

    def ride(self, attach: dict[str, str] | None = None, release: tuple[str, ...] = ()) -> Callable[[], None]:
        """The ledger's change riding along one of the dispatcher's steps (record_jobs or finish_many `also`): the
        waiting settlements, the Job ids recorded (`attach`: lease owner -> Job id) and the reservations of claims
        that started no Job (`release`)."""
        def also() -> None:
            ledger = jl.read(self.store)
            if ledger.damaged:
                return
            self._apply(ledger)
            for lease, job_id in (attach or {}).items():
                if lease in ledger.open:
                    ledger.open[lease].job = job_id
            for lease in release:
                if lease in ledger.open and not ledger.open[lease].job:
                    del ledger.open[lease]
            jl.write(self.store, ledger, jl.window_seconds(self.settings))
        return also

    # ---- the Jobs API ---------------------------------------------------------------------------------------

    def inspect(self, job_id: str):
        """The Job's JobInfo (None when it cannot be read: a deleted Job, an outage); a Job no longer live is asked
        for once."""
        if job_id in self.ended:
            return self.ended[job_id]
        try:
            info = self.api.inspect_job(job_id=job_id, namespace=self._namespace())
        except Exception as exc:  # noqa: BLE001 - a deleted Job (404) reads as gone
            log.warning("Job %s could not be inspected: %s", job_id, type(exc).__name__)
            return None
        if hf_jobs.stage_of(info) not in hf_jobs.LIVE_STAGES:
            self.ended[job_id] = info
        return info

    def _labelled(self, lease: str) -> tuple[object, bool]:
        """(the Job started under `lease`, found by its labels, or None; whether the Jobs API could say)."""
        labels = {hf_jobs.LABEL_STORE: hf_jobs.store_label(self.settings), hf_jobs.LABEL_OWNER: hf_jobs.label(lease)}
        try:
            found = list(self.api.list_jobs(labels=labels, namespace=self._namespace()))
        except Exception as exc:  # noqa: BLE001 - asked again next tick
            log.warning("the Jobs of lease %s could not be listed: %s", lease, type(exc).__name__)
            return None, False
        return (found[0] if found else None), True

    def look(self, requests: list[Request], live_jobs: list) -> None:
        """Settle (in memory, until the next commit) each open reservation whose Job has ended (see the module
        docstring)."""
        ledger = jl.read(self.store)
        if ledger.damaged:
            return
        self.pending = {lease: s for lease, s in self.pending.items() if lease in ledger.open}
        recorded = {r.job for r in ledger.open.values()}
        self.ended = {job_id: info for job_id, info in self.ended.items() if job_id in recorded}
        live_ids = {job.id for job in live_jobs}
        live_owners = {(job.labels or {}).get(hf_jobs.LABEL_OWNER) for job in live_jobs}
        holding = {r.lease_owner for r in requests if r.status == RUNNING}
        moment = now()
        for lease, reservation in ledger.open.items():
            if lease in self.pending:
                continue
            if reservation.job:
                if reservation.job in live_ids:
                    continue
                info = self.inspect(reservation.job)
            else:
                if hf_jobs.label(lease) in live_owners or lease in holding:
                    continue  # its Job is live, or being started under its claim
                info, known = self._labelled(lease)
                if info is None and known:
                    self.pending[lease] = Settlement(0.0, 0.0, iso(moment), "no Job was started")
                    continue
            if info is not None and hf_jobs.stage_of(info) not in hf_jobs.LIVE_STAGES:
                self.pending[lease] = self._settlement(reservation, info, moment)
            elif info is None and moment >= parse_time(reservation.until):
                self.pending[lease] = Settlement(None, reservation.usd, iso(moment),
                                                 "its Job could not be read: counted at what it reserved")

    def _settlement(self, reservation: jl.Reservation, info, moment) -> Settlement:
        """What an ended Job cost: its running time x the price reserved with it (else the price known now)."""
        seconds = hf_jobs.running_seconds(info)
        finished = getattr(info, "finished_at", None)
        ended = iso(finished) if finished is not None else iso(moment)
        if seconds is None and getattr(info, "started_at", None) is None:
            return Settlement(0.0, 0.0, ended, "it never ran")
        if seconds is None:
            return Settlement(None, reservation.usd, ended, "its running time is unknown: counted at what it reserved")
        rate = reservation.usd_per_hour if reservation.usd_per_hour is not None else self._rates.get(reservation.flavor)
        return Settlement(seconds, None if rate is None else seconds * rate / 3600.0, ended)
