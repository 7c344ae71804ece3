"""Issue 42, the file: every complete, unflagged run is written to the results dataset in the Hub's evaluation-results
format (eval_results/<key>.yaml), one entry per benchmark with a registered Hub dataset (the card's CARD.hub_eval,
or LEADERBOARD_EVAL_DATASETS); flagged runs, and benchmarks without one, get none."""
from __future__ import annotations

import json
from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from evaluator import api
from leaderboard.board import eval_results
from leaderboard.settings import Settings
from tests.published_runs import finished_output, publish_finished
from tests.results_files import SHA_A, board_result

JUDGE = {"kind": "endpoint", "base_url": "https://judge.example/v1", "model": "judge-model"}
REQUIRED = {"dataset", "value"}


def _results(**overrides) -> dict:
    """A finished run of SimpleQA and CURE, complete: SimpleQA's correct share 0.4235, graded by JUDGE."""
    res = board_result("org/model", {"simpleqa": 0.3, "cure": 0.5}, judge=JUDGE, **overrides)
    res["benchmarks"]["simpleqa"]["scores"]["correct"] = 0.42347
    return res


def _valid(text: bytes) -> list[dict]:
    """The file read as the Hub's spec wants it: a list of entries with dataset.id, dataset.task_id and a number."""
    found = yaml.safe_load(text)
    assert isinstance(found, list) and found
    for entry in found:
        assert REQUIRED <= set(entry) and {"id", "task_id"} <= set(entry["dataset"])
        assert isinstance(entry["value"], (int, float)) and not isinstance(entry["value"], bool)
        assert "url" in entry.get("source", {"url": ""})
    return found


def test_a_complete_run_has_one_entry_per_registered_benchmark(settings):
    on_space = settings.with_(space_id="acme/vlm-board")
    [entry] = _valid(eval_results.eval_results_file(_results(), on_space))  # CURE has no registered dataset
    assert entry["dataset"] == {"id": "OpenEvals/SimpleQA", "task_id": "default"}
    assert entry["value"] == 42.35  # percent, as the card's scale says
    assert entry["date"] == "2026-11-22T02:10:00+00:00"
    url = urlsplit(entry["source"]["url"])
    assert (url.scheme, url.netloc, url.path) == ("https", "huggingface.co", "/spaces/acme/vlm-board")
    assert parse_qs(url.query) == {"tab": ["explorer"], "run": [f"org/model/{SHA_A[:12]}_auto"], "bench": ["simpleqa"]}
    assert entry["source"]["name"] == "Open VLM Reasoning Leaderboard"
    notes = entry["notes"]
    for said in ("sample suite", "auto", SHA_A[:12], "no limit", "judge-model", api.judge_id(JUDGE),
                 "asked by generation"):
        assert said in notes, said
    off_space = _valid(eval_results.eval_results_file(_results(), settings.with_(space_id="")))
    assert "source" not in off_space[0]  # the spec wants a url in a source: none without the Space's address


def test_a_lite_run_s_notes_name_its_suite_and_rule(settings):
    """Issue 67: a lite score on a model page says it is one, and which rule chose its items."""
    lite = _results(suite="lite")
    lite["run"]["lite_rule"] = api.LITE_RULE
    [entry] = _valid(eval_results.eval_results_file(lite, settings))
    assert entry["notes"].startswith(f"lite ({api.LITE_RULE}) suite; auto;")
    del lite["run"]["lite_rule"]
    assert eval_results.notes(lite, "simpleqa").startswith("lite (rule not recorded) suite;")
    assert eval_results.notes(_results(suite="full"), "simpleqa").startswith("full suite;")


@pytest.mark.parametrize("why, results, hidden", [
    ("limit", _results(limit=5), None),
    ("coverage", _results(coverage={"simpleqa": 0.5}), None),
    ("hidden", _results(), "trained on the test set"),
    ("trial judge", {**_results(), "run": {**_results()["run"], "judge_trial": True}}, None),
])
def test_a_flagged_run_gets_no_file(settings, why, results, hidden):
    assert not eval_results.unflagged(results, settings, hidden), why
    assert eval_results.eval_results_file(results, settings, hidden) is None, why


def test_no_registered_benchmark_or_no_number_means_no_file(settings):
    cure_only = board_result("org/model", {"cure": 0.5})
    assert eval_results.eval_results_file(cure_only, settings) is None
    undefined = _results()
    undefined["benchmarks"]["simpleqa"]["scores"]["correct"] = float("nan")
    assert eval_results.eval_results_file(undefined, settings) is None


def test_a_deployer_adds_replaces_or_turns_off_a_mapping(settings):
    mapped = settings.with_(eval_datasets=("cure=org/cure-bench|cot|Ro|fraction", "simpleqa=off"))
    [entry] = _valid(eval_results.eval_results_file(_results(), mapped))
    assert entry["dataset"] == {"id": "org/cure-bench", "task_id": "cot"} and entry["value"] == 0.5  # Ro, a fraction
    for bad, said in (("nosuch=off", "unknown benchmark"), ("cure=org/x|t|nosuch|percent", "not one of its metrics"),
                      ("cure=org/x|t|Ro|tenths", "percent, fraction"), ("cure=org/x|t", "four fields")):
        with pytest.raises(ValueError, match="LEADERBOARD_EVAL_DATASETS") as caught:
            Settings.from_env({"LEADERBOARD_EVAL_DATASETS": bad}).check()
        assert said in str(caught.value), bad


def test_every_card_mapping_is_sound_and_says_where_it_comes_from():
    for card in api.cards():
        assert api.hub_eval_problems(card) == [], card.name
    simpleqa = api.card("simpleqa")
    assert simpleqa.hub_eval is not None and "could not be read" in simpleqa.hub_eval.note
    bad = replace(simpleqa, hub_eval=api.HubEval("SimpleQA", " ", "nosuch", "tenths", ""))
    said = " ".join(api.hub_eval_problems(bad))
    for part in ("<owner>/<name>", "task_id is empty", "not one of its metrics", "percent, fraction", "note"):
        assert part in said, part


def test_publish_writes_the_file_and_a_later_flagged_run_removes_it(settings, store, tmp_path):
    out = finished_output(tmp_path / "a", "A", {"simpleqa": 0.3, "cure": 0.5})
    results = json.loads((out / "results.json").read_text())
    results["benchmarks"]["simpleqa"]["scores"]["correct"] = 0.5
    (out / "results.json").write_text(json.dumps(results))
    request, _ = publish_finished(settings, store, out, "org/model")
    path = eval_results.path(request.key)
    assert path == f"eval_results/org/model/{'a' * 12}_auto.yaml"
    [entry] = _valid(store.read_bytes(path))
    assert entry["value"] == 50.0
    results["run"]["limit"] = 3  # the same run again, with a limit: flagged, so its file goes
    (out / "results.json").write_text(json.dumps(results))
    publish_finished(settings, store, out, "org/model")
    assert store.read_bytes(path) is None


def test_about_lists_which_benchmarks_have_a_registered_dataset(settings):
    from leaderboard.ui.about import about_markdown

    said = about_markdown(settings).split("## Results on model pages", 1)[1].split("\n## ", 1)[0]
    assert "**SimpleQA**: `OpenEvals/SimpleQA`, task `default`, its **correct** as a percent" in said
    assert "no registered Hub dataset: CURE, ReForm-Eval, LAVE" in said and "LEADERBOARD_EVAL_DATASETS" in said
    mapped = about_markdown(settings.with_(eval_datasets=("cure=org/cure-bench|cot|Ro|fraction",)))
    assert "`org/cure-bench`, task `cot`" in mapped and "no registered Hub dataset: ReForm-Eval, LAVE" in mapped


def test_a_run_the_admins_hide_loses_its_file_and_gets_it_back_when_shown(settings, store, tmp_path):
    from leaderboard.submissions.identity import Visitor
    from leaderboard.ui.queue_tab import request_action

    out = finished_output(tmp_path / "a", "A", {"simpleqa": 0.3})
    results = json.loads((out / "results.json").read_text())
    results["benchmarks"]["simpleqa"]["scores"]["correct"] = 0.25
    (out / "results.json").write_text(json.dumps(results))
    request, _ = publish_finished(settings, store, out, "org/model")
    path = eval_results.path(request.key)
    assert _valid(store.read_bytes(path))[0]["value"] == 25.0
    admin = Visitor("root", admin=True)
    assert request_action(settings, store, request.key, "hide", admin, "trained on the test set").startswith("Done")
    assert store.read_bytes(path) is None
    assert request_action(settings, store, request.key, "show", admin).startswith("Done")
    assert _valid(store.read_bytes(path))[0]["value"] == 25.0


# ------------------------------------------------------------------------------------------------ the error bar

def test_the_notes_carry_the_error_bar_on_the_values_own_scale(settings):
    """The format has no field for a standard error or an interval: the score's error bar ends the notes, in
    percent where the value is a percent and as a fraction where it is one, with what n counts."""
    results = _results()
    results["benchmarks"]["simpleqa"]["intervals"] = {"correct": {
        "stderr": 0.05612, "low": 0.34119, "high": 0.50874, "n": 31, "method": "wilson, clt over questions"}}
    results["benchmarks"]["cure"]["intervals"] = {"Ro": {
        "stderr": 0.1118, "low": 0.2993, "high": 0.7007, "n": 20, "method": "wilson, clt over instances"}}
    [entry] = _valid(eval_results.eval_results_file(results, settings))
    assert entry["value"] == 42.35 and entry["notes"].endswith("; stderr 5.6, 95% 34.1-50.9, n 31 questions")
    assert set(entry) <= {"dataset", "value", "date", "source", "notes"}  # nothing the spec does not name
    mapped = settings.with_(eval_datasets=("cure=org/cure-bench|cot|Ro|fraction", "simpleqa=off"))
    [cure] = _valid(eval_results.eval_results_file(results, mapped))
    assert cure["value"] == 0.5 and cure["notes"].endswith("; stderr 0.112, 95% 0.299-0.701, n 20 instances")


def test_a_run_without_an_error_bar_keeps_its_notes_as_they_were(settings):
    plain = _valid(eval_results.eval_results_file(_results(), settings))[0]["notes"]
    assert "stderr" not in plain and plain.endswith("asked by generation")
    undefined = _results()
    undefined["benchmarks"]["simpleqa"]["intervals"] = {"correct": {
        "stderr": None, "low": None, "high": None, "n": 0, "method": "clt"}}
    assert _valid(eval_results.eval_results_file(undefined, settings))[0]["notes"] == plain


def test_interval_note_says_what_n_counts():
    record = {"stderr": 0.0561, "low": 0.45, "high": 0.6733, "n": 20, "method": "wilson, clustered clt by chain"}
    assert eval_results.interval_note(record, "percent") == "stderr 5.6, 95% 45.0-67.3, n 20 chains"
    boot = {**record, "n": 1, "method": "bootstrap over instances, 1000 draws, seed 0"}
    assert eval_results.interval_note(boot, "fraction") == "stderr 0.056, 95% 0.450-0.673, n 1 instance"
    assert eval_results.interval_note({**record, "method": "clt"}, "fraction").endswith(", n 20")
    assert eval_results.interval_note({**record, "low": float("nan")}, "percent") == ""
    assert eval_results.interval_note(None, "percent") == eval_results.interval_note("junk", "percent") == ""


def test_the_formats_have_no_field_for_an_error_bar():
    """Why the notes carry it: neither the Hub client's entry nor the legacy model-index result has a field for a
    standard error or an interval (if one comes, the entry should fill it instead)."""
    from dataclasses import fields

    from huggingface_hub import EvalResult, EvalResultEntry

    for kind in (EvalResultEntry, EvalResult):
        names = [f.name for f in fields(kind)]
        words = {word for name in names for word in name.lower().split("_")}
        assert not words & {"stderr", "se", "err", "error", "std", "interval", "ci", "low", "high", "lower", "upper",
                            "confidence", "bounds"}, names
