"""Thinking is part of a run's identity (issue 69, point 1): a model whose chat template takes the enable_thinking
switch is submitted with thinking on, off or auto (the template's own); the request, its key, the worker's command,
the results and the board row carry it; one model run both ways is two requests and two tagged rows, told apart by
the duplicate check and the limits; an older request or results file without it reads as it did."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.__main__ import _config, _parser
from evaluator.runs.compare import protocol, protocol_differences
from leaderboard.board.columns import schema
from leaderboard.board.frames import leaderboard_frame, model_shown, run_choices
from leaderboard.explorer.protocols import protocol_notes
from leaderboard.running.evaluator_process import worker_command
from leaderboard.store import DamagedFile
from leaderboard.submissions.checks import submit
from leaderboard.submissions.identity import Visitor
from leaderboard.submissions.records import Request, is_request_key, request_path, run_key
from tests.results_files import SHA_A, result
from tests.test_submission import make_repo

SHA = "0123456789abcdef0123456789abcdef01234567"
SWITCH = {"tokenizer_config.json": json.dumps({"chat_template": "{{ m }}<think>{% if not enable_thinking %}</think>"
                                                                 "{% endif %}"})}
NO_SWITCH = {"tokenizer_config.json": json.dumps({"chat_template": "{{ m }}<think></think>"})}
DAVE = Visitor("dave")


@pytest.fixture
def settings(settings):
    """A leaderboard that asks a benchmark without images, so the text-only models laid here are queued."""
    return settings.with_(benchmarks=("cure", "simpleqa"))


def test_the_key_carries_thinking_only_when_it_was_set():
    assert run_key("org/m", SHA, "auto") == run_key("org/m", SHA, "auto", "auto") == "org/m/0123456789ab_auto"
    assert run_key("org/m", SHA, "bfloat16", "on") == "org/m/0123456789ab_bfloat16-thinking-on"
    assert request_path("org/m", SHA, "auto", "off") == "requests/org/m/0123456789ab_auto-thinking-off.json"
    assert all(is_request_key(run_key("org/m", SHA, "auto", t)) for t in (None, "auto", "on", "off"))
    assert not is_request_key("org/m/0123456789ab_auto-thinking-maybe")


def test_an_older_request_reads_as_it_did_and_a_bad_choice_is_damage():
    older = {"model": "org/m", "revision": SHA, "precision": "auto"}
    request = Request.from_dict(older)
    assert request.thinking is None and request.key == "org/m/0123456789ab_auto"
    assert Request.from_dict({**older, "thinking": "on"}).path == "requests/org/m/0123456789ab_auto-thinking-on.json"
    with pytest.raises(DamagedFile, match="thinking"):
        Request.from_dict({**older, "thinking": "maybe"})


def test_one_model_submitted_both_ways_is_two_requests_counted_apart(settings, store, hub_cache):
    make_repo(hub_cache, "think-switch", files=SWITCH)
    limited = settings.with_(max_pending_per_user=2)
    on = submit(limited, store, "test-org/think-switch", thinking="on", by=DAVE)
    off = submit(limited, store, "test-org/think-switch", thinking="off", by=DAVE)
    assert on.ok and off.ok and not on.duplicate and not off.duplicate, (on.message, off.message)
    assert on.request.key.endswith("_auto-thinking-on") and off.request.key.endswith("_auto-thinking-off")
    assert "thinking on" in on.message and "thinking off" in off.message
    again = submit(limited, store, "test-org/think-switch", thinking="on", by=DAVE)
    assert again.duplicate and again.request.path == on.request.path
    third = submit(limited, store, "test-org/think-switch", thinking="auto", by=DAVE)  # each counts: 2 pending
    assert not third.ok and "2 pending" in third.message
    assert sorted(store.list("requests")) == sorted([on.request.path, off.request.path])


def test_thinking_left_out_is_the_spaces_setting_and_a_bad_one_is_refused(settings, store, hub_cache):
    make_repo(hub_cache, "think-default", files=SWITCH)
    plain = submit(settings, store, "test-org/think-default", by=DAVE)
    assert plain.ok and plain.request.thinking == "auto" and plain.request.key.endswith("_auto")
    off = submit(settings.with_(thinking="off"), store, "test-org/think-default", by=DAVE)
    assert off.ok and off.request.thinking == "off" and off.request.key.endswith("-thinking-off")
    bad = submit(settings, store, "test-org/think-default", thinking="maybe", by=DAVE)
    assert not bad.ok and "Thinking" in bad.message


def test_thinking_is_set_only_for_a_template_with_the_switch(settings, store, hub_cache):
    make_repo(hub_cache, "think-none", files=NO_SWITCH)
    refused = submit(settings, store, "test-org/think-none", thinking="on", by=DAVE)
    assert not refused.ok and "enable_thinking" in refused.message and store.list("requests") == []
    assert submit(settings, store, "test-org/think-none", thinking="auto", by=DAVE).ok


def test_the_worker_runs_the_requests_thinking_over_the_spaces(settings, tmp_path):
    space = settings.with_(thinking="off")
    for asked, passed in (("on", "on"), ("auto", "auto"), (None, "off")):
        command = worker_command(space, tmp_path / "r.json", tmp_path / "out", thinking=asked)
        assert command[command.index("--thinking") + 1] == passed


def test_the_cli_reads_thinking_and_precision_from_a_request(tmp_path: Path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model": "org/m", "revision": SHA, "precision": "float32", "thinking": "on"}))
    config = _config(_parser().parse_args(["run", "--request", str(path), "--out", str(tmp_path / "out")]))
    assert (config.thinking, config.precision) == ("on", "float32")
    asked = _config(_parser().parse_args(["run", "--request", str(path), "--out", str(tmp_path / "o"),
                                          "--thinking", "off", "--precision", "bfloat16"]))
    assert (asked.thinking, asked.precision) == ("off", "bfloat16")  # the command line wins


def _ran(mode: str, thought: bool) -> dict:
    found = result("org/switch", Ro=0.4 if thought else 0.3)
    found["key"] = run_key("org/switch", found["revision"], "auto", mode)
    found["thinking"] = mode
    found["run"]["thinking"] = {"mode": mode, "asked": mode, "switch": "enable_thinking", "thinking_run": thought}
    return found


def test_both_runs_are_two_rows_each_tagged_and_set_side_by_side():
    board = schema(("cure",))
    raw = leaderboard_frame([_ran("on", True), _ran("off", False), result("org/older", Ro=0.2)], board)
    assert len(set(raw["key"])) == 3
    shown = [model_shown({k: row.get(k) for k in ("model", "thinking", "thinking_mode")})[1]
             for row in raw.to_dict("records")]
    assert shown == ["org/switch (thinking)", "org/switch (thinking off)", "org/older"]
    labels = dict((key, label) for label, key in run_choices(raw, ["cure_Ro"]))
    assert labels[run_key("org/switch", SHA_A, "auto", "on")].startswith("org/switch (thinking) @")
    assert labels[run_key("org/switch", SHA_A, "auto", "off")].startswith("org/switch (thinking off) @")
    warned = protocol_differences(protocol(_ran("on", True)), protocol(_ran("off", False)), ["cure"])
    assert any("thinking on" in line and "thinking off" in line for line in warned), warned
    on, off = (run_key("org/switch", SHA_A, "auto", mode) for mode in ("on", "off"))
    paired = protocol_notes(raw, on, off, "cure")  # the Explorer's paired sentence, from the two rows
    assert paired == warned


def test_the_submit_api_takes_thinking_by_name_and_checks_it(client, store, tiny_llava):
    asked = {"model_id": tiny_llava.repo_id, "revision": "", "precision": "auto", "model_type": "pretrained"}
    said = client.predict(**asked, thinking="on", api_name="/submit")  # its template has no switch
    assert "enable_thinking" in said and store.list("requests") == [], said
    assert client.predict(**asked, thinking="auto", api_name="/submit").startswith("Queued")


def test_the_plan_counts_the_thinking_the_request_asks(settings, store, hub_cache):
    make_repo(hub_cache, "think-plan", files=SWITCH)
    notes = {mode: submit(settings, store, "test-org/think-plan", thinking=mode, by=DAVE, queue=False).plan
             .thinking_note for mode in ("on", "off")}
    assert notes["on"].startswith("on:") and "no thinking budget" not in notes["on"], notes
    assert notes["off"] == "off: no thinking budget"
    jobs = settings.with_(executor="hf-jobs", jobs_image="img", jobs_namespace="org")
    counted = {mode: submit(jobs, store, "test-org/think-plan", thinking=mode, by=DAVE, queue=False).request
               .run_plan.get("thinking_tokens") for mode in ("on", "off")}
    assert counted["on"] > 0 and counted["off"] == 0, counted  # the memory plan too
