"""The queue as tables of text: one frame per status, with position, progress, reason (or resume note) and log
tail."""
from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Iterable

import pandas as pd

from leaderboard.formatting import as_float, format_time
from leaderboard.submissions import records as q
from leaderboard.submissions.cost_plans import plan_cell
from leaderboard.submissions.records import parse_time


STAGES = ("loading", "answering", "grading")  # evaluator.runs.progress's stages
MIN_RATE = 1e-4  # items/s; slower is shown as no rate
MAX_ETA_S = 7 * 24 * 3600  # a longer ETA is no estimate


def _count(value) -> int | None:
    """A non-negative whole number, or None for anything else (text, NaN, negatives, booleans)."""
    number = as_float(value)
    return int(number) if not math.isnan(number) and number >= 0 and number.is_integer() else None


def duration_text(seconds: float) -> str:
    """33 -> "0:33", 725 -> "12:05", 3723 -> "1:02:03"."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _age_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    return f"{seconds // 60} min" if seconds < 7200 else f"{seconds // 3600} h"


def _rate_text(rate: float, unit: str) -> str:
    """0.8 -> "0.8 req/s", 0.05 -> "20 s/req" (unit "req" or "it": that of the count beside it)."""
    return f"{rate:.1f} {unit}/s" if rate >= 0.1 else f"{1 / rate:.0f} s/{unit}"


def eta_text(seconds: float, sure: bool) -> str:
    """A sure ETA to the second ("ETA 0:33"); otherwise rounded, marked "~": "ETA < 1 min", "ETA ~4 min",
    "ETA ~1.5 h" (half hours from an hour on)."""
    if sure:
        return f"ETA {duration_text(seconds)}"
    minutes = round(seconds / 60)
    if minutes < 1:
        return "ETA < 1 min"
    return f"ETA ~{minutes} min" if minutes < 60 else f"ETA ~{round(seconds / 1800) / 2:g} h"


def judge_silence(progress: dict, now: datetime, stall_s: float | None) -> str:
    """"judge silent for 12 min (no grade since 18:02 UTC)" for a grading stage whose count ("moved_at", written by
    evaluator.runs.progress whenever it moves) has not moved for `stall_s` seconds (LEADERBOARD_JUDGE_STALL_SECONDS;
    None or 0: never); "" otherwise."""
    done, total = _count(progress.get("done")), _count(progress.get("total"))
    if not stall_s or stall_s <= 0 or progress.get("stage") != "grading" or (total and done is not None
                                                                                and done >= total):
        return ""
    try:
        moved = _aware(parse_time(progress["moved_at"])) if isinstance(progress.get("moved_at"), str) else None
    except ValueError:
        return ""
    silent = (_aware(now) - moved).total_seconds() if moved is not None else -1.0
    if silent < stall_s:
        return ""
    moved = moved.astimezone(timezone.utc)
    same_day = moved.date() == _aware(now).astimezone(timezone.utc).date()
    when = f"{moved:%H:%M}" if same_day else f"{moved:%Y-%m-%d %H:%M}"
    return f"judge silent for {_age_text(silent)} (no grade since {when} UTC)"


def resume_note(progress: dict | None) -> str:
    """"resumed: 412 of 980 items reused" when a run reused earlier attempts' answers; "" otherwise."""
    resumed = progress.get("resumed") if isinstance(progress, dict) else None
    if not isinstance(resumed, dict):
        return ""
    reused, items = _count(resumed.get("reused")), _count(resumed.get("items"))
    if not reused:
        return ""
    return f"resumed: {reused} of {items} items reused" if items else f"resumed: {reused} items reused"


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _heartbeat(updated, now: datetime) -> str:
    try:
        moment = parse_time(updated) if isinstance(updated, str) else None
    except ValueError:
        return ""
    if moment is None:
        return ""
    return f"heartbeat {_age_text((_aware(now) - _aware(moment)).total_seconds())} ago"


def progress_text(progress: dict | None, now: datetime | None = None, judge_stall_s: float | None = None) -> str:
    """A running request's progress (evaluator.runs.progress's progress.json, plus the scheduler's "updated"), e.g.
    "benchmark 2 of 4 · simpleqa answering 4/31 · 30/217 requests · 0.8 req/s · ETA ~4 min · resumed: 412 of 980
    items reused · heartbeat 3 s ago" (the requests count moves inside an item; the rate is in the unit of the count
    it is measured on, requests or items; the ETA is to the second only when evaluator.runs.progress calls it sure); a
    part that is unknown is left out. A grading stage silent for `judge_stall_s` seconds says so instead of its rate
    and ETA (judge_silence). Stored requests may hold older or broken dicts: any value that does not read is
    skipped. `now` (default: the current time) dates the heartbeat and the silence."""
    if not isinstance(progress, dict) or not progress:
        return "starting"
    index, count = _count(progress.get("benchmark_index")), _count(progress.get("benchmarks"))
    bench = progress.get("benchmark")
    bench = " ".join(bench.split()) if isinstance(bench, str) else ""
    stage = progress.get("stage") if progress.get("stage") in STAGES else ""
    done, total = _count(progress.get("done")), _count(progress.get("total"))
    counting = stage != "loading"
    words = [word for word in (bench, stage) if word]
    if counting and done is not None and total:
        words.append(f"{done}/{total}")
    main = " ".join(words)
    if not main:
        fallback = progress.get("stage") or progress.get("message")
        main = " ".join(fallback.split())[:80] if isinstance(fallback, str) and fallback.strip() else "running"
    parts = [f"benchmark {index} of {count}"] if index and count and index <= count else []
    parts.append(main)
    requests = progress.get("requests") if isinstance(progress.get("requests"), dict) else {}
    asked, planned = _count(requests.get("done")), _count(requests.get("total"))
    if counting and asked is not None and planned:
        parts.append(f"{asked}/{planned} requests")
    rate, eta = as_float(progress.get("rate")), as_float(progress.get("eta_s"))
    moment = now or q.now()
    silence = judge_silence(progress, moment, judge_stall_s)
    if counting and rate >= MIN_RATE and not silence:  # "unit" absent (older dicts): the rate is in items
        parts.append(_rate_text(rate, "req" if progress.get("unit") == "requests" else "it"))
    if counting and 0 <= eta <= MAX_ETA_S and not silence and not (done is not None and total and done >= total):
        parts.append(eta_text(eta, progress.get("eta_sure") is True))
    parts.append(silence)
    parts.append(resume_note(progress))
    parts.append(_heartbeat(progress.get("updated"), moment))
    return " · ".join(part for part in parts if part)


def request_note(request: q.Request) -> str:
    """A request's note: its error (why it was retried), and for a finished run that resumed, what it reused."""
    parts = [request.error or "", resume_note(request.progress) if request.status == q.FINISHED else ""]
    return " · ".join(part for part in parts if part)


def attempt_text(request: q.Request, max_attempts: int | None = None) -> str:
    """Which attempt a request is on ("1 of 3" while pending or running; a finished or failed one: how many it
    took). `request.attempts` counts the attempts lost (a crashed worker), so the one running is attempts + 1."""
    lost = max(0, request.attempts)
    if request.status in (q.PENDING, q.RUNNING):
        return f"{lost + 1} of {max_attempts}" if max_attempts else str(lost + 1)
    if request.status == q.FAILED and max_attempts and lost >= max_attempts:
        return str(lost)  # gave up after the last lost attempt
    return str(lost + 1)


# queue column label -> function of (request, position)
_QUEUE_CELLS = {
    "#": lambda r, pos: str(pos) if pos else "",
    "Model": lambda r, pos: r.label,  # a served model: its display name and endpoint host
    "Revision": lambda r, pos: (r.revision or "")[:12],
    "Precision": lambda r, pos: r.precision,
    "Type": lambda r, pos: r.model_type,
    "Submitted": lambda r, pos: format_time(r.submitted_time),
    "Started": lambda r, pos: format_time(r.started_time),
    "Finished": lambda r, pos: format_time(r.finished_time),
    "Cancelled": lambda r, pos: format_time(r.finished_time),
    "Progress": lambda r, pos: progress_text(r.progress),
    "Note": lambda r, pos: request_note(r),
    "Error": lambda r, pos: r.error or "",
    "Log tail": lambda r, pos: r.log_tail or "",
    "Plan": lambda r, pos: plan_cell(r.cost_plan),  # what the run was planned to take at most: "not planned" before
    "Key": lambda r, pos: r.key,
}

def job_text(request: q.Request, live=None, prices: dict[str, str] | None = None,
             now: datetime | None = None) -> str:
    """A request's Hugging Face Job: "<id> · <flavor> ($x/h) · RUNNING · waited 3:10 for a machine · 12:05" (id,
    flavor and its cost rate, stage as last seen, time spent in SCHEDULING, time since the Job was started); "" for
    a run that is not a Job."""
    job = request.job if isinstance(request.job, dict) else {}
    job_id = str(job.get("id") or getattr(live, "id", "") or "")
    if not job_id:
        return ""
    flavor = str(job.get("flavor") or getattr(live, "flavor", "") or "")
    price = (prices or {}).get(flavor, "")
    stage = getattr(live, "stage", "") or ""
    parts = [job_id[:12], f"{flavor} ({price})" if flavor and price else flavor, stage]
    waited = getattr(live, "scheduling_s", None)
    if isinstance(waited, (int, float)) and (stage == "SCHEDULING" or waited >= 1):
        parts.append(f"waiting for a machine for {duration_text(waited)}" if stage == "SCHEDULING"
                     else f"waited {duration_text(waited)} for a machine")
    try:
        started = parse_time(job.get("started")) if isinstance(job.get("started"), str) else None
    except ValueError:
        started = None
    if started is not None:
        parts.append(duration_text(max(0.0, (_aware(now or q.now()) - _aware(started)).total_seconds())))
    return " · ".join(part for part in parts if part)


QUEUE_COLUMNS: dict[str, tuple[str, ...]] = {
    q.PENDING: ("#", "Model", "Revision", "Precision", "Type", "Submitted", "Plan", "Estimate", "Expected start",
                "Attempts", "Note", "Key"),
    # Progress right after Model: the Running table's widest text, visible without scrolling sideways
    q.RUNNING: ("Model", "Progress", "Job", "Plan", "Revision", "Precision", "Type", "Submitted", "Started", "Attempts",
                "Key"),
    q.FINISHED: ("Model", "Revision", "Precision", "Type", "Submitted", "Started", "Finished", "Plan", "Attempts",
                 "Note", "Key"),
    q.FAILED: ("Model", "Revision", "Precision", "Type", "Submitted", "Finished", "Attempts", "Error", "Plan",
               "Log tail", "Key"),
    q.CANCELLED: ("Model", "Revision", "Precision", "Type", "Submitted", "Cancelled", "Key"),
}


def queue_frame(requests: Iterable[q.Request], status: str, now: datetime | None = None, jobs: dict | None = None,
                prices: dict[str, str] | None = None, max_attempts: int | None = None,
                estimates: dict[str, tuple[str, str]] | None = None,
                waiting: dict[str, str] | None = None, judge_stall_s: float | None = None) -> pd.DataFrame:
    """Requests in one status, as text. PENDING: queue order (oldest first) with the position;
    RUNNING: oldest start first, with its Hugging Face Job (`jobs`: request key -> the dispatcher's last look at its
    Job, whose progress stands in for a request that commits none; `prices`: flavor -> cost rate); the others: most
    recently finished first. Each request but a cancelled one shows its recorded cost plan ("Plan": "0:24 · $0.80 on
    a100-large", or "not planned"). `now` dates the progress heartbeat; `max_attempts` completes "attempt 1 of 3";
    `estimates`: pending request key -> (what it will probably take, when it will probably start), from the board
    (leaderboard.board.estimates; none given: "no estimate yet", start "unknown"); `judge_stall_s`:
    LEADERBOARD_JUDGE_STALL_SECONDS, after which a silent grading stage says so (progress_text)."""
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
    moment = now or q.now()
    jobs = jobs or {}
    cells = {**_QUEUE_CELLS,
             "Progress": lambda r, pos: progress_text(r.progress or getattr(jobs.get(r.key), "progress", None) or {},
                                                      moment, judge_stall_s),
             "Job": lambda r, pos: job_text(r, jobs.get(r.key), prices, moment),
             "Attempts": lambda r, pos: attempt_text(r, max_attempts),
             "Estimate": lambda r, pos: (estimates or {}).get(r.key, ("no estimate yet", ""))[0],
             "Expected start": lambda r, pos: (estimates or {}).get(r.key, ("", "unknown"))[1],
             # `waiting`: why a pending request waits for the Jobs budget (leaderboard.submissions.budget_notes)
             "Note": lambda r, pos: " · ".join(p for p in ((waiting or {}).get(r.key, ""), request_note(r)) if p)}
    rows = [[cells[label](r, i + 1 if status == q.PENDING else 0) for label in labels]
            for i, r in enumerate(chosen)]
    return pd.DataFrame(rows, columns=list(labels), dtype=object)


MY_COLUMNS = ("Model", "Revision", "Precision", "Status", "Submitted", "Where it is", "Key")
ON_BOARD_LIMITED = ("on the board, flagged and unranked (a quick trial: {limit} items per benchmark): shown while no "
                    "complete run exists, else tick Show flagged runs")


def my_requests_frame(requests: Iterable[q.Request], submitter: str, now: datetime | None = None,
                      limit: int = 0, waiting: dict[str, str] | None = None,
                      judge_stall_s: float | None = None) -> pd.DataFrame:
    """One person's requests, newest submission first, with their status and where each one is: the place in the
    queue, the progress, the error, what the admins did. `limit`: the Space's LEADERBOARD_LIMIT (a finished run is
    then flagged, and the board says where it is); `waiting`: key -> why a pending request waits for the Jobs
    budget; `judge_stall_s`: LEADERBOARD_JUDGE_STALL_SECONDS (progress_text)."""
    requests = list(requests)
    pending = [r.path for r in sorted((r for r in requests if r.status == q.PENDING),
                                      key=lambda r: (r.submitted_time or "", r.path))]
    mine = sorted((r for r in requests if submitter and r.submitter == submitter),
                  key=lambda r: (r.submitted_time or "", r.path), reverse=True)
    moment = now or q.now()

    def where(r: q.Request) -> str:
        if r.status == q.PENDING:
            return "; ".join(p for p in (f"position {pending.index(r.path) + 1} in the queue",
                                         (waiting or {}).get(r.key, "")) if p)
        if r.status == q.RUNNING:
            return progress_text(r.progress, moment, judge_stall_s)
        if r.status == q.FINISHED and r.hidden:
            return f"hidden from the ranking by the admins: {r.hidden}"
        last = r.actions[-1] if r.actions else None
        by = f" by {last['by']}" if isinstance(last, dict) and last.get("by") and r.status == q.CANCELLED else ""
        return (request_note(r) or (ON_BOARD_LIMITED.format(limit=limit) if r.status == q.FINISHED and limit > 0
                                    else "on the board" if r.status == q.FINISHED else "")) + by

    rows = [[r.label, (r.revision or "")[:12], r.precision, r.status, format_time(r.submitted_time), where(r), r.key]
            for r in mine]
    return pd.DataFrame(rows, columns=list(MY_COLUMNS), dtype=object)
