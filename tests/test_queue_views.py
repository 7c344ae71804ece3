"""The queue as tables of text."""
from __future__ import annotations

import pytest

from leaderboard.submissions import records as q
from leaderboard.formatting import format_number, format_percent, format_score
from leaderboard.submissions.views import QUEUE_COLUMNS, my_requests_frame, progress_text, queue_frame
from tests.results_files import SHA_A, SHA_B


def _request(model: str, sha: str = SHA_A, **fields) -> q.Request:
    return q.Request(model=model, revision=sha, **fields)


def test_queue_frame_pending_in_queue_order_with_positions():
    reqs = [_request("org/second", submitted_time="2026-11-22T02:00:05+00:00"),
            _request("org/first", submitted_time="2026-11-22T02:00:00+00:00"),
            _request("org/done", status=q.FINISHED)]
    df = queue_frame(reqs, q.PENDING)
    assert list(df["Model"]) == ["org/first", "org/second"]
    assert list(df["#"]) == ["1", "2"]
    assert df.loc[0, "Revision"] == SHA_A[:12]
    assert df.loc[0, "Submitted"] == "2026-11-22 02:00:00 UTC"
    assert df.loc[0, "Key"] == f"org/first/{SHA_A[:12]}_auto"


def test_queue_frame_running_shows_progress_text():
    reqs = [_request("org/run", status=q.RUNNING, started_time="2026-11-22T02:01:00+00:00", attempts=1,
                     progress={"benchmark": "cure", "done": 12, "total": 20, "rate": 1.4}),
            _request("org/starting", sha=SHA_B, status=q.RUNNING, started_time="2026-11-22T02:02:00+00:00")]
    df = queue_frame(reqs, q.RUNNING)
    assert list(df["Progress"]) == ["cure 12/20 · 1.4 it/s", "starting"]
    assert list(df.columns[:2]) == ["Model", "Progress"]  # visible without scrolling sideways
    assert df.loc[0, "Started"] == "2026-11-22 02:01:00 UTC"
    assert list(df["Attempts"]) == ["2", "1"]  # one attempt lost: the second is running (never "0")
    assert list(queue_frame(reqs, q.RUNNING, max_attempts=3)["Attempts"]) == ["2 of 3", "1 of 3"]
    assert progress_text({"benchmark": "cure", "done": 3, "total": 20}) == "cure 3/20"
    assert progress_text({"benchmark": "simpleqa", "stage": "grading", "done": 12, "total": 31, "rate": 2.0}) == \
        "simpleqa grading 12/31 · 2.0 it/s"


def test_queue_frame_failed_has_reason_and_log_tail():
    reqs = [_request("org/bad", status=q.FAILED, error="CUDA out of memory", log_tail="line 1\nline 2",
                     finished_time="2026-11-22T03:00:00+00:00", attempts=3)]
    df = queue_frame(reqs, q.FAILED, max_attempts=3)
    assert df.loc[0, "Error"] == "CUDA out of memory" and df.loc[0, "Attempts"] == "3"  # gave up after the third
    assert df.loc[0, "Log tail"] == "line 1\nline 2"
    assert df.loc[0, "Finished"] == "2026-11-22 03:00:00 UTC"
    assert all(isinstance(v, str) for v in df.iloc[0])


def test_queue_frame_finished_and_cancelled_newest_first_and_empty_frames_have_headers():
    reqs = [_request("org/old", status=q.FINISHED, finished_time="2026-11-22T01:00:00+00:00"),
            _request("org/new", sha=SHA_B, status=q.FINISHED, finished_time="2026-11-22T05:00:00+00:00"),
            _request("org/gone", status=q.CANCELLED, finished_time="2026-11-22T04:00:00+00:00")]
    assert list(queue_frame(reqs, q.FINISHED)["Model"]) == ["org/new", "org/old"]
    assert list(queue_frame(reqs, q.CANCELLED)["Cancelled"]) == ["2026-11-22 04:00:00 UTC"]
    for status in q.STATUSES:
        empty = queue_frame([], status)
        assert empty.empty and list(empty.columns) == list(QUEUE_COLUMNS[status])
    with pytest.raises(ValueError):
        queue_frame(reqs, "LOST")


def test_a_quick_trials_finished_run_says_where_it_is_on_the_board():
    mine = [_request("org/quick", status=q.FINISHED, submitter="ada", finished_time="2026-11-22T05:00:00+00:00")]
    assert my_requests_frame(mine, "ada").loc[0, "Where it is"] == "on the board"
    where = my_requests_frame(mine, "ada", limit=2).loc[0, "Where it is"]  # LEADERBOARD_LIMIT=2: flagged
    assert where.startswith("on the board, flagged and unranked (a quick trial: 2 items per benchmark)")
    assert "Show flagged runs" in where


def test_one_number_formatter():
    assert [format_score(v) for v in (0, -0.00001, 0.5461, None)] == ["0.0", "0.0", "54.6", "n/a"]
    assert [format_percent(v) for v in (0.5461, -0.0, float("nan"))] == ["54.6%", "0.0%", "n/a"]  # never "n/a%"
    assert [format_number(v) for v in (0, -0.0, -0.0000001, 95.0, 0.5, 270.6)] == ["0", "0", "-0.0000001", "95",
                                                                                   "0.5", "271"]


def test_a_running_job_shows_its_id_flavor_price_stage_and_time():
    from leaderboard.running.hf_jobs import JobState
    from leaderboard.submissions.views import job_text

    request = q.Request(model="org/m", revision="a" * 40, status=q.RUNNING, started_time="2026-11-24T10:00:00+00:00",
                        job={"id": "0123456789abcdef", "flavor": "l40sx1", "started": "2026-11-24T10:00:00+00:00"})
    live = JobState(id="0123456789abcdef", stage="RUNNING", flavor="l40sx1",
                    progress={"benchmark": "cure", "stage": "answering", "done": 3, "total": 20})
    now = q.parse_time("2026-11-24T10:12:05+00:00")
    assert job_text(request, live, {"l40sx1": "$1.80/h"}, now) == "0123456789ab · l40sx1 ($1.80/h) · RUNNING · 12:05"
    assert job_text(q.Request(model="org/m", revision="b" * 40, status=q.RUNNING)) == ""  # a local run
    frame = queue_frame([request], q.RUNNING, now=now, jobs={request.key: live}, prices={"l40sx1": "$1.80/h"})
    row = frame.iloc[0]
    assert row["Job"].startswith("0123456789ab · l40sx1 ($1.80/h) · RUNNING")
    assert row["Progress"].startswith("cure answering 3/20")  # read from the Job's log, no commit


def test_grading_moves_in_the_queue_and_a_silent_judge_says_so():
    """The grading stage reads like answering (its count, a rate in the count's unit, an ETA); once its count has
    not moved for LEADERBOARD_JUDGE_STALL_SECONDS it says the judge is silent, and since when, instead."""
    from datetime import datetime, timezone

    from leaderboard.settings import Settings

    now = datetime(2026, 5, 1, 18, 14, 30, tzinfo=timezone.utc)
    grading = {"benchmark": "lave", "stage": "grading", "done": 3, "total": 6, "unit": "items", "rate": 0.4,
               "eta_s": 7.5, "eta_sure": True, "moved_at": "2026-05-01T18:14:25+00:00",
               "updated": "2026-05-01T18:14:27+00:00"}
    assert progress_text(grading, now=now, judge_stall_s=600) == (
        "lave grading 3/6 · 0.4 it/s · ETA 0:08 · heartbeat 3 s ago")
    silent = {**grading, "moved_at": "2026-05-01T18:02:10+00:00"}
    assert progress_text(silent, now=now, judge_stall_s=600) == (
        "lave grading 3/6 · judge silent for 12 min (no grade since 18:02 UTC) · heartbeat 3 s ago")
    assert "silent" not in progress_text(silent, now=now, judge_stall_s=900)  # not yet that long
    assert "silent" not in progress_text(silent, now=now, judge_stall_s=0)  # 0: never said
    assert "silent" not in progress_text(silent, now=now)  # no setting given
    assert "silent" not in progress_text({**silent, "stage": "answering"}, now=now, judge_stall_s=600)
    assert "silent" not in progress_text({**silent, "done": 6}, now=now, judge_stall_s=600)  # graded: scoring
    for junk in ("yesterday", 12, None, "2026-05-01T19:00:00+00:00"):  # unreadable, or moved after now
        assert "silent" not in progress_text({**silent, "moved_at": junk}, now=now, judge_stall_s=600)
    days = progress_text({**silent, "moved_at": "2026-04-30T23:50:00+00:00"}, now=now, judge_stall_s=600)
    assert "judge silent for 18 h (no grade since 2026-04-30 23:50 UTC)" in days

    running = _request("org/judged", status=q.RUNNING, started_time="2026-05-01T17:00:00+00:00", submitter="ada",
                       progress=silent)
    shown = queue_frame([running], q.RUNNING, now=now, judge_stall_s=600).loc[0, "Progress"]
    assert "judge silent for 12 min" in shown
    assert "judge silent for 12 min" in my_requests_frame([running], "ada", now=now,
                                                          judge_stall_s=600).loc[0, "Where it is"]
    assert Settings.from_env({}).judge_stall_seconds == 600.0
    assert Settings.from_env({"LEADERBOARD_JUDGE_STALL_SECONDS": "120"}).judge_stall_seconds == 120.0
