"""The words a request record is made of, below everything that reads one: its statuses, the precisions and model
types a submission may name, and its times (ISO 8601, UTC)."""
from __future__ import annotations

from datetime import datetime, timezone

PENDING, RUNNING, FINISHED, FAILED, CANCELLED = "PENDING", "RUNNING", "FINISHED", "FAILED", "CANCELLED"
STATUSES = (PENDING, RUNNING, FINISHED, FAILED, CANCELLED)
PRECISIONS = ("auto", "float32", "bfloat16", "float16")
MODEL_TYPES = ("pretrained", "instruction-tuned", "RL-tuned", "merged / other")


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
