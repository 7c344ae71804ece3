"""Request records, their statuses, and the claim / lease / recover protocol.

A request is one JSON file at requests/<org>/<model>/<sha12>_<precision>[-thinking-on|off].json (a served model's at
requests/served--<host>/<model>/<sha12>_auto.json: leaderboard.submissions.endpoints). Every change to a request
happens under the store's lock as read-modify-write, so two claimers (threads or processes) never take the same one.
"""
from __future__ import annotations

import logging
import os
import random
import re
import socket
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone

from evaluator import api
from leaderboard.store import DamagedFile, HistoryGone, Store, StoreConflict, backoff
from leaderboard.submissions.endpoints import SERVED, served_problem
from leaderboard.submissions.vocabulary import (CANCELLED, FAILED, FINISHED, MODEL_TYPES,  # noqa: F401 (records.X)
    PENDING, PRECISIONS, RUNNING, STATUSES, THINKING, actions_problem, iso, kind, kind_names, now, parse_time)

LOG_TAIL_LINES, _EPOCH = 50, datetime(1970, 1, 1, tzinfo=timezone.utc)
log = logging.getLogger(__name__)


def worker_id() -> str:
    """A name for this claimer: host, process and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass
class Request:
    """One evaluation request, as stored."""

    model: str
    revision: str  # the full 40-hex commit sha (or the content hash of a local folder)
    precision: str = "auto"
    model_type: str = "pretrained"
    submitter: str = "anonymous"
    submitted_time: str = field(default_factory=lambda: iso(now()))
    status: str = PENDING
    lease_owner: str | None = None
    lease_expires: str | None = None
    attempts: int = 0
    error: str | None = None
    log_tail: str | None = None
    started_time: str | None = None
    finished_time: str | None = None
    progress: dict = field(default_factory=dict)
    source: str = "hub"  # "hub", "local" (a folder on this machine) or "served" (an endpoint, see `endpoint`)
    local_path: str | None = None
    params_billions: float | None = None
    architecture: str | None = None
    notes: list[str] = field(default_factory=list)
    hidden: str | None = None  # why an admin hid the finished run from the ranking (None: shown)
    actions: list[dict] = field(default_factory=list)  # who cancelled, re-queued, hid or showed it: when and why
    job: dict = field(default_factory=dict)  # hf-jobs: the Hugging Face Job running it (id, namespace, flavor, ...)
    endpoint: dict = field(default_factory=dict)  # served: {"base_url": its public url, "model": the name asked}
    display_name: str | None = None  # served: the name the board shows (None: the endpoint's model name)
    run_plan: dict = field(default_factory=dict)  # hf-jobs: flavor, batch size, memory counted (run_memory)
    cost_plan: dict = field(default_factory=dict)  # hours and dollars on its hardware (submissions.cost_plans)
    thinking: str | None = None  # auto, on or off (vocabulary.THINKING); None: from before, the Space's setting ran it

    @property
    def key(self) -> str:
        """<org>/<model>/<sha12>_<precision>[-thinking-on|off] (run_key): the same key names the results and details."""
        return run_key(self.model, self.revision, self.precision, self.thinking)

    @property
    def path(self) -> str:
        return f"requests/{self.key}.json"

    @property
    def served(self) -> bool:
        """Whether it is a served model's (answered by an endpoint: nothing is downloaded, no GPU is needed)."""
        return self.source == SERVED

    @property
    def label(self) -> str:
        """The model as people read it: its id, or a served model's display name (else its endpoint's model name)
        with the endpoint's host, e.g. "Qwen2.5-VL 72B (served: router.huggingface.co)"."""
        if not self.served:
            return self.model
        name = self.display_name or api.shown_name(str(self.endpoint.get("model") or self.model))
        return f"{name} (served: {api.Endpoint(str(self.endpoint.get('base_url') or ''), name).host})"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Request":
        """The request a stored record holds; raises DamagedFile (the reason) when the record is not one."""
        if not isinstance(data, dict):
            raise DamagedFile(f"not a request record: a JSON {type(data).__name__}, not an object")
        known = {k: v if k != "cost_plan" or isinstance(v, dict) else {}  # a cost plan that is no object: none
                 for k, v in data.items() if k in cls.__dataclass_fields__}
        missing = [k for k in ("model", "revision") if k not in known]
        if missing:
            raise DamagedFile(f"not a request record: {', '.join(missing)} missing")
        for name, kinds in _FIELD_KINDS.items():
            if name in known and not (isinstance(known[name], kinds) and not isinstance(known[name], bool)):
                raise DamagedFile(f"{name} is {kind(known[name])}, not {kind_names(kinds)}")
        if not known["model"] or len(known["revision"]) < 12:
            raise DamagedFile("model is empty or revision is shorter than 12 characters")
        for name, allowed in (("status", STATUSES), ("precision", PRECISIONS), ("thinking", THINKING)):
            if name in known and known[name] is not None and known[name] not in allowed:
                raise DamagedFile(f"{name} {str(known[name])[:40]!r} is not one of {', '.join(allowed)}")
        if known.get("attempts", 0) < 0:
            raise DamagedFile("attempts is negative")
        problem = served_problem(known) or actions_problem(known.get("actions", []))
        if problem:
            raise DamagedFile(problem)
        for name in ("submitted_time", "lease_expires", "started_time", "finished_time"):
            try:
                parse_time(known.get(name))
            except ValueError:
                raise DamagedFile(f"{name} {str(known[name])[:40]!r} is not a time") from None
        return cls(**known)


_TEXT, _OPTIONAL_TEXT = (str,), (str, type(None))
_FIELD_KINDS: dict[str, tuple[type, ...]] = {
    "model": _TEXT, "revision": _TEXT, "precision": _TEXT, "model_type": _TEXT, "submitter": _TEXT,
    "submitted_time": _TEXT, "status": _TEXT, "lease_owner": _OPTIONAL_TEXT, "lease_expires": _OPTIONAL_TEXT,
    "attempts": (int,), "error": _OPTIONAL_TEXT, "log_tail": _OPTIONAL_TEXT, "started_time": _OPTIONAL_TEXT,
    "finished_time": _OPTIONAL_TEXT, "progress": (dict,), "source": _TEXT, "local_path": _OPTIONAL_TEXT,
    "params_billions": (int, float, type(None)), "architecture": _OPTIONAL_TEXT, "notes": (list,),
    "hidden": _OPTIONAL_TEXT, "actions": (list,), "job": (dict,), "endpoint": (dict,), "display_name": _OPTIONAL_TEXT,
    "run_plan": (dict,), "thinking": _OPTIONAL_TEXT}


def run_key(model: str, revision: str, precision: str, thinking: str | None = None) -> str:
    """<org>/<model>/<sha12>_<precision>, with -thinking-on or -thinking-off when the run set the switch (auto, and a
    request from before thinking was asked, keep the key they always had)."""
    mode = f"-thinking-{thinking}" if thinking in ("on", "off") else ""
    return f"{model}/{revision[:12]}_{precision}{mode}"


def request_path(model: str, revision: str, precision: str, thinking: str | None = None) -> str:
    return f"requests/{run_key(model, revision, precision, thinking)}.json"


# <org>/<model>/<sha12>_<precision>[-thinking-on|off]: each name starts with a letter, digit or underscore (as Hub
# names and local folder names do) and holds no "..", so a key never names a path outside its folder
_KEY_RE = re.compile(r"^[A-Za-z0-9][\w.\-]*/\w[\w.\-]*/[0-9a-f]{12}_[a-z0-9]+(?:-thinking-(?:on|off))?$")


def is_request_key(key: object) -> bool:
    """Whether `key` (anything a client sent) is a well-formed request key."""
    return isinstance(key, str) and len(key) <= 300 and ".." not in key and bool(_KEY_RE.match(key))


def load(store: Store, path: str) -> Request | None:
    """The request stored at `path` (None when there is none). Raises DamagedFile, with the reason, when the file is
    not a readable request record (see leaderboard.store.damage.parse_json), or holds another request than its path
    names; the ledger of the store lists it. A path that is not the store's (PathRefused) is raised, never listed."""
    try:
        data = store.read_json(path)
        if data is None:
            store.damaged.clear(path)
            return None
        request = Request.from_dict(data)
        if request.path != path:
            raise DamagedFile(f"holds the request {request.path[:160]!r}, not the one its path names")
    except DamagedFile as exc:
        store.damaged.report(path, exc)
        raise
    store.damaged.clear(path)
    return request


def save(store: Store, request: Request) -> None:
    store.write_json(request.path, request.to_dict())


def load_or_none(store: Store, path: str) -> Request | None:
    """The request at `path`; None when there is none or its file is damaged (a lease on it cannot be confirmed)."""
    try:
        return load(store, path)
    except DamagedFile:
        return None


def all_requests(store: Store) -> list[Request]:
    """Every readable request, oldest submission first. A damaged file is skipped (the store's ledger of damaged
    files lists it, see leaderboard.store.damage); nothing else is held up by it."""
    found, damaged = [], set()
    for path in store.list("requests", suffix=".json"):
        try:
            request = load(store, path)
        except DamagedFile:
            damaged.add(path)
            continue
        if request is not None:
            found.append(request)
    store.damaged.settle("requests", damaged)
    return sorted(found, key=lambda r: (parse_time(r.submitted_time) or _EPOCH, r.path))


def pending_position(store: Store, request: Request) -> int:
    """1-based place in the queue of a PENDING request (0 if it is not pending)."""
    pending = [r.path for r in all_requests(store) if r.status == PENDING]
    return pending.index(request.path) + 1 if request.path in pending else 0


TRANSACT_ATTEMPTS, HEARTBEAT_ATTEMPTS, HEARTBEAT_JITTER = 10, 40, 0.05  # a lost heartbeat: again at once, <=50 ms apart


def transact(store: Store, step, attempts: int = TRANSACT_ATTEMPTS, wait=None):
    """Run step() under the store's lock, again after `wait(attempt)` s (a jittered, growing wait) when it lost a race
    to another writer; StoreConflict when every attempt lost (callers take that as "not this time", never a crash)."""
    for attempt in range(attempts):
        try:
            with store.lock():
                return step()
        except StoreConflict:
            if attempt == attempts - 1:
                raise
            time.sleep((wait or backoff)(attempt))


def _any_now(store: Store, wanted) -> bool:
    """Whether a request is `wanted` now, read without the lock (each write is atomic): idle claimers and recoveries
    then never queue for the lock that a running worker's heartbeat needs (a starved heartbeat lapses its lease).
    A history rewritten during this read (HistoryGone: a Hub squash) says "maybe": the locked step reads again, and
    handles the squash as it always did; any other failure is raised, as the locked step's read would raise it."""
    try:
        return any(wanted(r) for r in all_requests(store))
    except HistoryGone as exc:
        log.info("the queue's history moved during a read without the lock (%s); reading it under the lock", exc)
        return True


def claim(store: Store, owner: str, lease_seconds: float, accept=None) -> Request | None:
    """Atomically turn the oldest PENDING request (that `accept(request)` takes, when given) into RUNNING, leased to
    `owner`. None when there is none, or when every attempt lost the race to other claimers (a normal outcome: the
    next tick tries again)."""
    if not _any_now(store, lambda r: r.status == PENDING and (accept is None or accept(r))):
        return None
    try:
        return transact(store, lambda: next(iter(_claim_many(store, lambda _r: owner, lease_seconds, 1, accept)), None))
    except StoreConflict as exc:
        log.info("claim lost the race to other writers (%s); trying again next tick", exc)
        return None


def claim_many(store: Store, owner_of, lease_seconds: float, count: int, accept=None, gate_of=None) -> list[Request]:
    """Atomically turn the `count` oldest PENDING requests (those `accept(request)` takes, when given) into RUNNING,
    in one step of the store (one commit on the Hub store), each leased to owner_of(request). [] when there are
    none, or every attempt lost the race. `gate_of()`, when given, makes a gate for each attempt of the step, read
    inside it (the Jobs budget: leaderboard.submissions.jobs_ledger.Gate): its take(request) decides, in queue order,
    whether a request may be claimed, and its done(claimed) writes what it keeps into the same step."""
    if count < 1 or not _any_now(store, lambda r: r.status == PENDING and (accept is None or accept(r))):
        return []

    def step() -> list[Request]:
        gate = gate_of() if gate_of is not None else None
        claimed = _claim_many(store, owner_of, lease_seconds, count, accept if gate is None else
                              (lambda r: (accept is None or accept(r)) and gate.take(r)))
        return claimed if gate is None else gate.done(claimed) or claimed

    try:
        return transact(store, step)
    except StoreConflict as exc:
        log.info("claim lost the race to other writers (%s); trying again next tick", exc)
        return []


def _claim_many(store: Store, owner_of, lease_seconds: float, count: int, accept=None) -> list[Request]:
    claimed = []
    for request in all_requests(store):
        if len(claimed) >= count:
            break
        if request.status != PENDING or (accept is not None and not accept(request)):
            continue
        request.status = RUNNING
        request.lease_owner = owner_of(request)
        request.lease_expires = iso(now() + timedelta(seconds=lease_seconds))
        request.started_time = iso(now())
        request.error = None
        request.progress = {}
        request.job = {}
        save(store, request)
        claimed.append(request)
    return claimed


def heartbeat(store: Store, path: str, owner: str, lease_seconds: float, progress: dict | None = None) -> bool:
    """Extend the lease (and record progress); False if it is no longer ours. One that lost a race is tried again at
    once on the new head (it reads and writes only its request): a lease lapses when its worker is gone."""
    return transact(store, lambda: _heartbeat(store, path, owner, lease_seconds, progress), HEARTBEAT_ATTEMPTS,
                    wait=lambda _attempt: random.uniform(0, HEARTBEAT_JITTER))


def _heartbeat(store: Store, path: str, owner: str, lease_seconds: float, progress: dict | None) -> bool:
    request = load_or_none(store, path)
    if request is None or request.status != RUNNING or request.lease_owner != owner:
        return False
    request.lease_expires = iso(now() + timedelta(seconds=lease_seconds))
    if progress is not None:
        request.progress = progress
    save(store, request)
    return True


def recover(store: Store, max_attempts: int, at: datetime | None = None) -> list[Request]:
    """Expired RUNNING leases (or RUNNING requests with no lease) go back to PENDING (attempts + 1), or FAILED after
    max_attempts. [] when every attempt lost the race to other writers: the next tick tries again."""
    moment = at or now()
    if not _any_now(store, lambda r: _lapsed(r, moment)):
        return []
    try:
        return transact(store, lambda: _recover(store, max_attempts, moment))
    except StoreConflict as exc:
        log.info("recovery lost the race to other writers (%s); trying again next tick", exc)
        return []


def _recover(store: Store, max_attempts: int, moment: datetime) -> list[Request]:
    changed = [request for request in all_requests(store) if _lapsed(request, moment)]
    for request in changed:
        _count_lost_attempt(request, max_attempts, f"the worker's lease expired at {request.lease_expires}"
                            if parse_time(request.lease_expires) else "the request was RUNNING with no lease")
        save(store, request)
    return changed


def _lapsed(request: Request, moment: datetime) -> bool:
    """RUNNING with a lease that expired by `moment`, or with none."""
    expires = parse_time(request.lease_expires)
    return request.status == RUNNING and (expires is None or expires <= moment)


def _count_lost_attempt(request: Request, max_attempts: int, reason: str) -> None:
    request.attempts += 1
    request.lease_owner = request.lease_expires = None
    if request.attempts >= max_attempts:
        request.status = FAILED
        request.error = f"{reason}; gave up after {request.attempts} attempt(s)"
        request.finished_time = iso(now())
    else:
        request.status = PENDING
        request.error = f"{reason}; retrying (attempt {request.attempts + 1} of {max_attempts})"


def finish(store: Store, path: str, owner: str, status: str, error: str | None = None,
           log_tail: str | None = None, max_attempts: int | None = None) -> Request | None:
    """Close a run we hold: FINISHED, FAILED, PENDING (a lost attempt, to retry) or RELEASE (back, uncounted)."""
    return transact(store, lambda: _finish(store, path, owner, status, error, log_tail, max_attempts))


def _finish(store: Store, path: str, owner: str, status: str, error: str | None, log_tail: str | None,
            max_attempts: int | None) -> Request | None:
    request = load_or_none(store, path)
    if request is None or request.lease_owner != owner or request.status != RUNNING:
        return None
    if status == PENDING:
        _count_lost_attempt(request, max_attempts or 1, error or "the worker stopped")
    elif status == "RELEASE":  # clean shutdown: back to the queue, no attempt counted
        request.status, request.error = PENDING, error
        request.lease_owner = request.lease_expires = None
    else:
        request.status, request.error = status, error
        request.lease_owner = request.lease_expires = None
        request.finished_time = iso(now())
    if log_tail is not None:
        request.log_tail = log_tail
    save(store, request)
    return request


def finish_many(store: Store, closes: list[tuple[str, str, str, dict]], also=None) -> list[Request | None]:
    """Close several runs in one step of the store (one commit on the Hub store): each (path, owner, status, fields)
    as finish(path, owner, status, **fields) would. `also()`, when given, runs inside the same step when it closed
    any (the Jobs budget's ledger rides along: never a commit of its own)."""
    if not closes:
        return []

    def step() -> list[Request | None]:
        closed = [_finish(store, path, owner, status, fields.get("error"), fields.get("log_tail"),
                          fields.get("max_attempts")) for path, owner, status, fields in closes]
        if also is not None and any(closed):
            also()
        return closed

    return transact(store, step)
