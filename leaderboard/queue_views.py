"""The queue as tables of text: one frame per status, with position, progress, reason and log tail."""
from __future__ import annotations

import math
from typing import Iterable

import pandas as pd

from leaderboard import request_queue as q
from leaderboard.formatting import as_float, format_time


def progress_text(progress: dict | None) -> str:
    """{"benchmark": "cure", "done": 12, "total": 20, "rate": 1.4} -> "cure 12/20 (1.4 it/s)"; while a judge
    grades ({"stage": "grading"}) -> "simpleqa grading 12/31 (...)"."""
    if not progress:
        return "starting"
    bench = str(progress.get("benchmark") or "").strip()
    done, total, rate = progress.get("done"), progress.get("total"), progress.get("rate")
    parts = [bench] if bench else []
    if bench and progress.get("stage") == "grading":
        parts.append("grading")
    if done is not None and total:
        parts.append(f"{done}/{total}")
    elif done is not None:
        parts.append(str(done))
    rate_f = as_float(rate)
    if not math.isnan(rate_f) and rate_f > 0:
        parts.append(f"({rate_f:.1f} it/s)")
    text = " ".join(parts)
    if not text:
        stage = progress.get("stage") or progress.get("message")
        text = str(stage) if stage else "running"
    return text


# queue column label -> function of (request, position)
_QUEUE_CELLS = {
    "#": lambda r, pos: str(pos) if pos else "",
    "Model": lambda r, pos: r.model,
    "Revision": lambda r, pos: (r.revision or "")[:12],
    "Precision": lambda r, pos: r.precision,
    "Type": lambda r, pos: r.model_type,
    "Submitted": lambda r, pos: format_time(r.submitted_time),
    "Started": lambda r, pos: format_time(r.started_time),
    "Finished": lambda r, pos: format_time(r.finished_time),
    "Cancelled": lambda r, pos: format_time(r.finished_time),
    "Attempts": lambda r, pos: str(r.attempts),
    "Progress": lambda r, pos: progress_text(r.progress),
    "Note": lambda r, pos: r.error or "",
    "Error": lambda r, pos: r.error or "",
    "Log tail": lambda r, pos: r.log_tail or "",
    "Key": lambda r, pos: r.key,
}

QUEUE_COLUMNS: dict[str, tuple[str, ...]] = {
    q.PENDING: ("#", "Model", "Revision", "Precision", "Type", "Submitted", "Attempts", "Note", "Key"),
    q.RUNNING: ("Model", "Revision", "Precision", "Type", "Submitted", "Started", "Attempts", "Progress", "Key"),
    q.FINISHED: ("Model", "Revision", "Precision", "Type", "Submitted", "Started", "Finished", "Attempts", "Key"),
    q.FAILED: ("Model", "Revision", "Precision", "Type", "Submitted", "Finished", "Attempts", "Error", "Log tail", "Key"),
    q.CANCELLED: ("Model", "Revision", "Precision", "Type", "Submitted", "Cancelled", "Key"),
}


def queue_frame(requests: Iterable[q.Request], status: str) -> pd.DataFrame:
    """Requests in one status, as text. PENDING: queue order (oldest first) with the position;
    RUNNING: oldest start first; the others: most recently finished first."""
    if status not in QUEUE_COLUMNS:
        raise ValueError(f"unknown status {status!r}")
    chosen = [r for r in requests if r.status == status]
    if status == q.PENDING:
        chosen.sort(key=lambda r: (r.submitted_time or "", r.path))
    elif status == q.RUNNING:
        chosen.sort(key=lambda r: (r.started_time or "", r.path))
    else:
        chosen.sort(key=lambda r: (r.finished_time or r.submitted_time or "", r.path), reverse=True)
    labels = QUEUE_COLUMNS[status]
    rows = [[_QUEUE_CELLS[label](r, i + 1 if status == q.PENDING else 0) for label in labels]
            for i, r in enumerate(chosen)]
    return pd.DataFrame(rows, columns=list(labels), dtype=object)
