"""Ownership and admin actions on the real local store: who may cancel, re-queue, hide and show, and the record of
each action in the request; a hidden run is flagged with the admins' reason on the board and not ranked."""
from __future__ import annotations

from leaderboard.board.columns import schema
from leaderboard.board.file import board_is_current, load_board, rebuild_leaderboard
from leaderboard.board.views import view_board
from leaderboard.submissions import records as queue
from leaderboard.submissions.actions import act
from leaderboard.submissions.identity import Visitor
from leaderboard.submissions.records import Request
from tests.results_files import SHA_A, SHA_B, board_result, write_result

ALICE, BOB, ADMIN = Visitor("alice"), Visitor("bob"), Visitor("ada", admin=True)


def _stored(store, model: str, status: str, submitter: str = "alice", sha: str = SHA_A) -> Request:
    request = Request(model=model, revision=sha, submitter=submitter, status=status)
    queue.save(store, request)
    return request


def test_a_pending_request_is_cancelled_by_its_submitter_or_an_admin_only(store):
    mine = _stored(store, "org/mine", queue.PENDING)
    other = _stored(store, "org/other", queue.PENDING)
    done, message = act(store, mine.path, "cancel", BOB)
    assert not done and "Only the person who submitted" in message
    assert queue.load(store, mine.path).status == queue.PENDING and queue.load(store, mine.path).actions == []
    assert not act(store, mine.path, "cancel", Visitor())[0]  # signed out
    assert act(store, mine.path, "cancel", ALICE)[0]
    assert act(store, other.path, "cancel", ADMIN)[0]
    cancelled = queue.load(store, other.path)
    assert cancelled.status == queue.CANCELLED and cancelled.submitter == "alice"
    [record] = cancelled.actions
    assert record["action"] == "cancel" and record["by"] == "ada" and queue.parse_time(record["at"])


def test_admins_requeue_a_failed_request_and_everyone_else_is_refused(store):
    failed = Request(model="org/failed", revision=SHA_A, submitter="alice", status=queue.FAILED, attempts=3,
                     error="out of memory", log_tail="Traceback", finished_time=queue.iso(queue.now()))
    queue.save(store, failed)
    done, message = act(store, failed.path, "requeue", ALICE)
    assert not done and "admins" in message and queue.load(store, failed.path).status == queue.FAILED
    done, message = act(store, failed.path, "requeue", ADMIN, reason="the GPU is bigger now")
    assert done, message
    again = queue.load(store, failed.path)
    assert again.status == queue.PENDING and again.attempts == 0 and again.error is None and again.log_tail is None
    assert again.actions[-1] | {"at": ""} == {"action": "requeue", "by": "ada", "at": "",
                                               "reason": "the GPU is bigger now"}
    assert queue.claim(store, "w1", 60).path == failed.path  # the queue takes it again
    assert not act(store, failed.path, "requeue", ADMIN)[0]  # now RUNNING: only a FAILED request is re-queued


def test_a_hidden_run_is_flagged_with_the_reason_and_not_ranked_until_shown_again(store):
    S = schema(("cure",))
    for model, sha, score in (("org/good", SHA_A, 0.6), ("org/leaky", SHA_B, 0.9)):
        _stored(store, model, queue.FINISHED, sha=sha)
        write_result(store, board_result(model, {"cure": score}, sha=sha))
    rebuild_leaderboard(store, S)
    leaky = f"requests/org/leaky/{SHA_B[:12]}_auto.json"

    assert not act(store, leaky, "hide", ADMIN)[0]  # a reason is needed
    assert not act(store, leaky, "hide", ALICE, reason="trained on the test set")[0]
    done, message = act(store, leaky, "hide", ADMIN, reason="trained on the <b>test</b> set")
    assert done and "trained on the" in message and "<b>" not in message  # the reason is escaped in the message
    assert not board_is_current(store)  # the board notices and is rebuilt
    rebuild_leaderboard(store, S)
    assert board_is_current(store)
    shown, _ = view_board(load_board(store, S), S, threshold=0.95)
    assert list(shown.rows["model"]) == ["org/good"] and shown.hidden_flagged == 1
    shown, _ = view_board(load_board(store, S), S, threshold=0.95, show_flagged=True)
    leaky_row = shown.rows[shown.rows["model"] == "org/leaky"].iloc[0]
    assert leaky_row["flag"] == "hidden by the admins: trained on the <b>test</b> set"  # the view escapes it
    assert leaky_row["rank"] != leaky_row["rank"]  # NaN: not ranked

    assert act(store, leaky, "show", ADMIN)[0]
    assert not act(store, leaky, "show", ADMIN)[0]  # not hidden any more
    rebuild_leaderboard(store, S)
    shown, _ = view_board(load_board(store, S), S, threshold=0.95)
    assert list(shown.rows["model"]) == ["org/leaky", "org/good"]
    assert [a["action"] for a in queue.load(store, leaky).actions] == ["hide", "show"]


def test_a_damaged_or_missing_request_refuses_every_action(store):
    store.write_bytes("requests/org/bad/abcdef012345_auto.json", b"{not json")
    for action in ("cancel", "requeue", "hide", "show"):
        done, message = act(store, "requests/org/bad/abcdef012345_auto.json", action, ADMIN, reason="x")
        assert not done and "damaged" in message
        done, message = act(store, "requests/org/none/abcdef012345_auto.json", action, ADMIN, reason="x")
        assert (done, message) == (False, "No such request.")
    assert store.read_bytes("requests/org/bad/abcdef012345_auto.json") == b"{not json"
