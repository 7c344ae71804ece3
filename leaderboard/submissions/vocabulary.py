"""The words a request record is made of, below everything that reads one: its statuses, the precisions, thinking
choices and model types a submission may name, its times (ISO 8601, UTC), which times a record can hold, and its
actions' entries; a value's kind in words."""
from __future__ import annotations

from datetime import datetime, timezone

PENDING, RUNNING, FINISHED, FAILED, CANCELLED = "PENDING", "RUNNING", "FINISHED", "FAILED", "CANCELLED"
STATUSES = (PENDING, RUNNING, FINISHED, FAILED, CANCELLED)
PRECISIONS = ("auto", "float32", "bfloat16", "float16")
MODEL_TYPES = ("pretrained", "instruction-tuned", "RL-tuned", "merged / other")
THINKING = ("auto", "on", "off")  # auto: the chat template's default; on/off: its enable_thinking switch set
SKEW_S = 300.0  # how far ahead of this machine's clock another writer's may be: a later recorded time is damage
EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)  # nothing of this leaderboard happened before: earlier is damage
EARLY, FUTURE = "early", "future"  # why a recorded time cannot be (implausible)


def now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def parse_time(text: str | None) -> datetime | None:
    """An ISO time (a time without a zone is UTC); None for an empty value. Raises ValueError for anything else."""
    if not text:
        return None
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def implausible(when: datetime, moment: datetime | None = None) -> str:
    """Why a recorded time cannot be one ("" when it can): EARLY, before EPOCH; FUTURE, more than SKEW_S past `moment`
    (by default now). A time written by a clock far ahead would hold whatever is counted from it (the Jobs budget's
    charges, the daily pull requests) until that date, so it is damage, never counted."""
    if when < EPOCH:
        return EARLY
    return FUTURE if (when - (moment or now())).total_seconds() > SKEW_S else ""


def actions_problem(actions: list, moment: datetime | None = None) -> str:
    """Why a request's `actions` cannot be its record of who did what ("" when they can): each entry is an object
    whose `action` and `by` are text and whose `at` is a time that can be (implausible, against `moment`)."""
    for i, entry in enumerate(actions):
        if not (isinstance(entry, dict) and isinstance(entry.get("action"), str) and isinstance(entry.get("by"), str)):
            return f"actions[{i}] is not an action: an object with action, by and at"
        at = entry.get("at")
        try:
            when = parse_time(at) if isinstance(at, str) else None
        except ValueError:
            when = None
        if when is None:
            return f"actions[{i}].at {str(at)[:40]!r} is not a time"
        why = implausible(when, moment)
        if why:
            return f"actions[{i}].at ({at[:40]}) is " + ("before this leaderboard existed" if why == EARLY else
                                                          "in the future: an action is recorded when it happens")
    return ""


KIND_NAMES = {str: "text", int: "a whole number", float: "a number", dict: "an object", list: "a list",
              type(None): "empty", bool: "true/false"}


def kind(value) -> str:
    """A JSON value's kind in words."""
    return KIND_NAMES.get(type(value), type(value).__name__)


def kind_names(kinds: tuple[type, ...]) -> str:
    """Kinds in words, joined by "or"."""
    return " or ".join(dict.fromkeys(KIND_NAMES.get(k, k.__name__) for k in kinds))
