"""What a submission answers (Outcome, or a Refusal), and its duplicate answer: a request of the same model, commit,
precision and thinking that is not FAILED or CANCELLED is answered with that request, never queued again. The
duplicate is looked up before anything asks the Hub or reads the model's files when the commit is known (a full sha), and from the
requests already stored when the Hub (or, offline, the Hub cache) cannot say which commit a revision is: a model
already evaluated says so even when its weights are gone."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from leaderboard.formatting import escape_markdown as md
from leaderboard.store import DamagedFile, Store
from leaderboard.submissions.records import CANCELLED, FAILED, PENDING, Request, all_requests, load, pending_position

REPLACEABLE = (FAILED, CANCELLED)  # a request in one of these states may be submitted again
_SHA = re.compile(r"^[0-9a-f]{40}$")
_SHA_PREFIX = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass
class Outcome:
    ok: bool
    message: str            # one clear sentence or two, shown to the visitor as-is (Markdown-safe)
    request: Request | None = None
    position: int = 0       # place in the PENDING queue (1-based) when queued or duplicate-pending
    duplicate: bool = False
    plan: object = None     # the evaluator's whole cost plan (evaluator.api.RunPlan) of a checked model, when made


class Choice(NamedTuple):
    """What a submitter picked: precision, thinking (auto, on, off) and model type (checked: checks.check_choices)."""

    precision: object
    thinking: object
    model_type: object


class Refusal(Exception):
    """A check failed; the message is already Markdown-safe."""


def existing_request(store: Store, path: str) -> Request | None:
    """The request at `path` unless there is none or it may be submitted again (FAILED, CANCELLED); Refusal when
    it is damaged."""
    try:
        request = load(store, path)
    except DamagedFile as damage:
        raise Refusal(f"The stored request for this model, revision and precision is damaged ({md(str(damage), 160)});"
                      " nothing was queued. The maintainers see it listed in the Queue tab.") from None
    return request if request is not None and request.status not in REPLACEABLE else None


def is_full_sha(revision: str) -> bool:
    return bool(_SHA.match(revision or ""))


def stored_duplicate(store: Store, model: str, revision: str, precision: str, thinking: str = "auto") -> Request | None:
    """The newest stored request of `model` in `precision` and `thinking` (auto: also one from before), not FAILED
    or CANCELLED, at a commit `revision` may name: one starting with it when it looks like a sha, else any (a
    branch, a tag, or empty: the default branch)."""
    prefix = revision.lower() if _SHA_PREFIX.match(revision.lower() or "") else ""
    found = [request for request in all_requests(store) if request.model == model and request.precision == precision
             and (request.thinking or "auto") == thinking and request.status not in REPLACEABLE
             and request.revision.startswith(prefix)]
    return max(found, key=lambda request: request.submitted_time or "", default=None)


def shown_request(request: Request) -> str:
    """A request in a message (Markdown-safe): "<model> @ <sha12> (<precision>[, thinking on|off])", or a served
    model's label."""
    if request.served:
        return md(request.label)
    mode = f", thinking {request.thinking}" if request.thinking in ("on", "off") else ""
    return f"{md(request.model)} @ {request.revision[:12]} ({request.precision}{mode})"


def duplicate_of(store: Store, existing: Request, note: str = "") -> Outcome:
    """The answer to a submission of what `existing` already is (with its queue position while PENDING)."""
    what = shown_request(existing)
    position = pending_position(store, existing) if existing.status == PENDING else 0
    where = f", position {position} in the queue" if position else ""
    return Outcome(True, f"{what} was already submitted and is {existing.status}{where}.{note}", request=existing,
                   position=position, duplicate=True)
