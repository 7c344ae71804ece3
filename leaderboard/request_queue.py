"""Request records, their statuses, and the claim / lease / recover protocol.

A request is one JSON file at requests/<org>/<model>/<sha12>_<precision>.json. Every change to a
request happens under the store's lock as read-modify-write, so two claimers (threads or processes)
never take the same request.
"""
from __future__ import annotations

import os
import random
import re
import socket
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone

from leaderboard.store import Store, StoreConflict

PENDING, RUNNING, FINISHED, FAILED, CANCELLED = "PENDING", "RUNNING", "FINISHED", "FAILED", "CANCELLED"
STATUSES = (PENDING, RUNNING, FINISHED, FAILED, CANCELLED)
PRECISIONS = ("auto", "float32", "bfloat16", "float16")
MODEL_TYPES = ("pretrained", "instruction-tuned", "RL-tuned", "merged / other")
LOG_TAIL_LINES = 50


def now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def parse_time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


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
    source: str = "hub"  # "hub" or "local" (a folder on this machine)
    local_path: str | None = None
    params_billions: float | None = None
    architecture: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        """<org>/<model>/<sha12>_<precision>: the same key names the results and details."""
        return f"{self.model}/{self.revision[:12]}_{self.precision}"

    @property
    def path(self) -> str:
        return f"requests/{self.key}.json"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Request":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def request_path(model: str, revision: str, precision: str) -> str:
    return f"requests/{model}/{revision[:12]}_{precision}.json"


_KEY_RE = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+/[0-9a-f]{12}_[a-z0-9]+$")


def is_request_key(key: str) -> bool:
    return bool(_KEY_RE.match(key))


def load(store: Store, path: str) -> Request | None:
    data = store.read_json(path)
    return None if data is None else Request.from_dict(data)


def save(store: Store, request: Request) -> None:
    store.write_json(request.path, request.to_dict())


def all_requests(store: Store) -> list[Request]:
    """Every request, oldest submission first."""
    found = []
    for path in store.list("requests", suffix=".json"):
        request = load(store, path)
        if request is not None:
            found.append(request)
    return sorted(found, key=lambda r: (r.submitted_time, r.path))


def pending_position(store: Store, request: Request) -> int:
    """1-based place in the queue of a PENDING request (0 if it is not pending)."""
    pending = [r.path for r in all_requests(store) if r.status == PENDING]
    return pending.index(request.path) + 1 if request.path in pending else 0


def transact(store: Store, step, attempts: int = 6):
    """Run step() under the store's lock, again (after a short random wait) when it lost a race to another writer."""
    for attempt in range(attempts):
        try:
            with store.lock():
                return step()
        except StoreConflict:
            if attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0.05, 0.25) * (attempt + 1))


def claim(store: Store, owner: str, lease_seconds: float) -> Request | None:
    """Atomically turn the oldest PENDING request into RUNNING, leased to `owner`."""
    return transact(store, lambda: _claim(store, owner, lease_seconds))


def _claim(store: Store, owner: str, lease_seconds: float) -> Request | None:
    for request in all_requests(store):
        if request.status != PENDING:
            continue
        request.status = RUNNING
        request.lease_owner = owner
        request.lease_expires = iso(now() + timedelta(seconds=lease_seconds))
        request.started_time = iso(now())
        request.error = None
        request.progress = {}
        save(store, request)
        return request
    return None


def heartbeat(store: Store, path: str, owner: str, lease_seconds: float, progress: dict | None = None) -> bool:
    """Extend the lease (and record progress). False if the lease is no longer ours."""
    return transact(store, lambda: _heartbeat(store, path, owner, lease_seconds, progress))


def _heartbeat(store: Store, path: str, owner: str, lease_seconds: float, progress: dict | None) -> bool:
    request = load(store, path)
    if request is None or request.status != RUNNING or request.lease_owner != owner:
        return False
    request.lease_expires = iso(now() + timedelta(seconds=lease_seconds))
    if progress is not None:
        request.progress = progress
    save(store, request)
    return True


def recover(store: Store, max_attempts: int, at: datetime | None = None) -> list[Request]:
    """Expired RUNNING leases go back to PENDING (attempts + 1), or FAILED after max_attempts."""
    return transact(store, lambda: _recover(store, max_attempts, at or now()))


def _recover(store: Store, max_attempts: int, moment: datetime) -> list[Request]:
    changed = []
    for request in all_requests(store):
        expires = parse_time(request.lease_expires)
        if request.status != RUNNING or expires is None or expires > moment:
            continue
        _count_lost_attempt(request, max_attempts, f"the worker's lease expired at {request.lease_expires}")
        save(store, request)
        changed.append(request)
    return changed


def _count_lost_attempt(request: Request, max_attempts: int, reason: str) -> None:
    request.attempts += 1
    request.lease_owner = None
    request.lease_expires = None
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
    request = load(store, path)
    if request is None or request.lease_owner != owner or request.status != RUNNING:
        return None
    if status == PENDING:
        _count_lost_attempt(request, max_attempts or 1, error or "the worker stopped")
    elif status == "RELEASE":  # clean shutdown: back to the queue, no attempt counted
        request.status = PENDING
        request.lease_owner = request.lease_expires = None
        request.error = error
    else:
        request.status = status
        request.error = error
        request.lease_owner = request.lease_expires = None
        request.finished_time = iso(now())
    if log_tail is not None:
        request.log_tail = log_tail
    save(store, request)
    return request


def cancel(store: Store, path: str) -> tuple[bool, str]:
    """Cancel a PENDING request. Returns (done, message)."""
    return transact(store, lambda: _cancel(store, path))


def _cancel(store: Store, path: str) -> tuple[bool, str]:
    request = load(store, path)
    if request is None:
        return False, "No such request."
    if request.status != PENDING:
        return False, f"Only a PENDING request can be cancelled; this one is {request.status}."
    request.status = CANCELLED
    request.finished_time = iso(now())
    save(store, request)
    return True, f"Cancelled {request.model} @ {request.revision[:12]} ({request.precision})."
