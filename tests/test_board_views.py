"""The board's views: the overall score, ranks within comparable runs, flags for limited and partial runs, notes on
skipped benchmarks and ungraded answers, links; for a text-only run, vision runs, a limited run and a partial one."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from leaderboard.board.columns import overall_score, schema
from leaderboard.board.frames import board_table, leaderboard_frame, model_link
from leaderboard.board.views import empty_text, status_text, view_board, view_text
from tests.results_files import SHA_B, TEXT_ONLY, board_result

S = schema()
JUDGE = {"kind": "endpoint", "model": "judge-x", "base_url": "http://judge.example/v1"}
ALL4 = {"cure": 0.40, "simpleqa": 0.30, "reform": 0.50, "lave": 0.60}  # overall 45.0


def board_runs():
    """A text-only chat model (SimpleQA only, 2 answers ungraded), two complete vision runs, a limited vision run
    (the best scores, but 2 items per benchmark) and a partial one (LAVE coverage 50%)."""
    text = board_result("org/smol-chat", {"simpleqa": 0.55},
                        skipped={"cure": TEXT_ONLY, "reform": TEXT_ONLY, "lave": TEXT_ONLY},
                        counts={"simpleqa": {"ungraded": 2}}, judge=JUDGE)
    vision_a = board_result("org/vlm-a", ALL4, judge=JUDGE)
    vision_b = board_result("org/vlm-b", {**ALL4, "cure": 0.20}, judge=JUDGE)  # overall 40.0
    limited = board_result("org/vlm-limited", {k: 0.9 for k in ALL4}, sha=SHA_B, limit=2, judge=JUDGE,
                           coverage={k: 2 / 30 for k in ALL4})
    partial = board_result("org/vlm-partial", {k: 0.8 for k in ALL4}, coverage={"lave": 0.5}, judge=JUDGE)
    return leaderboard_frame([text, vision_a, vision_b, limited, partial], S)


def by_model(frame):
    return {row["Model"]: row for _, row in frame.iterrows()}


def test_overall_is_the_mean_of_the_headline_scores_the_run_has():
    raw = board_runs()
    overall = dict(zip(raw["model"], raw["overall"]))
    assert overall["org/vlm-a"] == pytest.approx(0.45) and overall["org/vlm-b"] == pytest.approx(0.40)
    assert overall["org/smol-chat"] == pytest.approx(0.55)  # SimpleQA alone: nothing skipped is averaged as zero
    assert dict(zip(raw["model"], raw["scored_on"]))["org/smol-chat"] == "simpleqa"
    undefined = board_result("org/x", {"cure": 0.4, "simpleqa": None})
    assert overall_score(undefined, S.cards) == pytest.approx(0.4)
    assert overall_score(board_result("org/y", {}), S.cards) is None


def test_overview_ranks_within_comparable_runs_and_hides_flagged_ones():
    raw = board_runs()
    board = view_text(raw, S)
    assert list(board["Model"]) == ["org/vlm-a", "org/vlm-b", "org/smol-chat"]  # 4-benchmark cohort first
    rows = by_model(board)
    # the text-only model ranks among its own: each place says its group, so two 1s never read as a tie (issue 52)
    assert [rows[m]["#"] for m in board["Model"]] == ["1 of 2 · on all 4", "2 of 2 · on all 4", "1 of 1 · on SimpleQA"]
    assert rows["org/vlm-a"]["Overall"] == "45.0"
    text = rows["org/smol-chat"]
    assert text["Overall"] == "55.0" and text["CURE Ro"] == "not run" and text["Flag"] == ""  # not run, not undefined
    assert text["Notes"] == f"skipped CURE, ReForm, LAVE: {TEXT_ONLY}; SimpleQA: 2 ungraded"
    assert "SimpleQA ungraded (count)" not in board.columns  # counts are not percentage columns of the overview
    facts = view_text(raw, S, "runs")  # the same rows and ranks, with every run fact
    assert list(facts["Model"]) == list(board["Model"]) and list(facts["#"]) == list(board["#"])
    rows = by_model(facts)
    assert rows["org/vlm-a"]["Scored on"] == "CURE, SimpleQA, ReForm, LAVE" and rows["org/smol-chat"]["Scored on"] == "SimpleQA"
    text = rows["org/smol-chat"]
    assert text["SimpleQA coverage"] == "100.0" and text["Type"] == "instruction-tuned" and text["Limit"] == "none"
    assert text["Judge"] == "judge-x (endpoint http://judge.example/v1)" and len(text["Judge id"]) == 8

    shown, _ = view_board(raw, S, threshold=0.95)
    assert shown.hidden_flagged == 2 and "2 flagged run(s) (limited, partial, graded by a trial judge or hidden by the admins) left out" in status_text(shown, S, S.view(None))


def test_flagged_runs_are_shown_on_request_unranked_after_the_ranked_ones():
    board = view_text(board_runs(), S, show_flagged=True)
    assert list(board["Model"])[:3] == ["org/vlm-a", "org/vlm-b", "org/smol-chat"]
    rows = by_model(board)
    assert rows["org/vlm-limited"]["#"] == "unranked" and rows["org/vlm-partial"]["#"] == "unranked"
    assert rows["org/vlm-limited"]["Flag"].startswith("limit: 2 items per benchmark; coverage under 95.0%: CURE 6.7%")
    assert rows["org/vlm-partial"]["Flag"] == "coverage under 95.0%: LAVE 50.0%"
    assert rows["org/vlm-partial"]["Overall"] == "80.0"  # scored, shown, never ranked above complete runs
    lower = view_text(board_runs(), S, show_flagged=True, threshold=0.4)  # a lower threshold: partial is ranked
    assert by_model(lower)["org/vlm-partial"]["#"] == "1 of 3 · on all 4"


def test_a_benchmark_view_shows_every_metric_of_the_runs_that_ran_it():
    raw = board_runs()
    cure = view_text(raw, S, "cure")
    # the text-only run skipped CURE: not in its view; the partial run is complete on CURE: ranked there
    assert list(cure["Model"]) == ["org/vlm-partial", "org/vlm-a", "org/vlm-b"] and list(cure["#"]) == ["1", "2", "3"]
    assert list(cure.columns[:6]) == ["#", "Model", "Precision", "Type", "Params (B)", "CURE Ro"]
    assert {"CURE Rh", "CURE Cf", "CURE coverage", "Limit", "Flag", "Notes", "Details"} <= set(cure.columns)
    assert "Judge" not in cure.columns  # CURE needs no judge
    shown, _ = view_board(raw, S, "cure")
    assert shown.without_benchmark == 1 and "1 without CURE" in status_text(shown, S, S.view("cure"))

    simpleqa = view_text(raw, S, "simpleqa")
    # ranked on SimpleQA alone, the text-only model among the vision ones; ties share a place
    assert list(simpleqa["Model"]) == ["org/vlm-partial", "org/smol-chat", "org/vlm-a", "org/vlm-b"]
    assert list(simpleqa["#"]) == ["1", "2", "3-4", "3-4"]  # tied: both could be third or fourth
    chat = by_model(simpleqa)["org/smol-chat"]
    assert chat["SimpleQA ungraded (count)"] == "2" and chat["Notes"] == "SimpleQA: 2 ungraded" and chat["Limit"] == "none"


def test_suites_are_never_ranked_together():
    raw = leaderboard_frame([board_result("org/s", ALL4), board_result("org/f", {**ALL4, "cure": 0.1}, suite="full")],
                            S)
    board = view_text(raw, S)
    assert list(board["Model"]) == ["org/f", "org/s"]  # full first
    assert list(board["#"]) == ["1 of 1 · full suite", "1 of 1 · sample suite"]


def suite_runs(*suites: str, rule: str = "lite-v1") -> list[dict]:
    """One run per suite, every one with the same scores (ALL4); a lite run records its rule."""
    runs = [board_result(f"org/{suite}", ALL4, suite=suite) for suite in suites]
    for run in runs:
        if run["run"]["suite"] == "lite":
            run["run"]["lite_rule"] = rule
    return runs


def test_lite_full_and_sample_runs_of_the_same_scores_are_never_ranked_together():
    """Issue 67: the same scores on the full, the lite and the sample suite are three cohorts, each run first in its
    own, full before lite before sample, in the Overview and in every benchmark's view; the Suite column says lite."""
    raw = leaderboard_frame(suite_runs("sample", "lite", "full"), S)
    assert raw["lite_rule"].fillna("").tolist() == ["", "lite-v1", ""]  # the rule: lite runs alone
    for view in (None, *ALL4):
        board = view_text(raw, S, view)
        assert list(board["Model"]) == ["org/full", "org/lite", "org/sample"], view
        assert list(board["#"]) == ["1 of 1 · full suite", "1 of 1 · lite suite", "1 of 1 · sample suite"], view
        assert list(board["Suite"]) == ["full", "lite", "sample (synthetic)"]
        shown, _ = view_board(raw, S, view)
        assert list(shown.rows["rank"]) == [1, 1, 1] and list(shown.rows["rank_worst"]) == [1, 1, 1]
    shown, _ = view_board(raw, S)
    assert "**lite**: a seeded, stratified subset of each full suite" in status_text(shown, S, S.view(None))


def test_lite_runs_of_different_rules_are_never_ranked_together_and_the_rule_is_shown():
    """Two lite rules ask different items: their runs are two cohorts, each saying its rule; lite runs of one rule
    rank together, and their group says "lite suite" alone."""
    old, new = suite_runs("lite", rule="lite-v0")[0], suite_runs("lite")[0]
    old["model"] = "org/old-rule"
    board = view_text(leaderboard_frame([old, new], S), S)
    assert list(board["#"]) == ["1 of 1 · lite (lite-v1) suite", "1 of 1 · lite (lite-v0) suite"]
    assert list(view_text(leaderboard_frame([old, new], S), S, "runs")["Lite rule"]) == ["lite-v1", "lite-v0"]
    unknown = suite_runs("lite")[0]
    del unknown["run"]["lite_rule"]
    unknown["model"] = "org/unrecorded"
    board = view_text(leaderboard_frame([new, unknown], S), S)
    assert list(board["#"]) == ["1 of 1 · lite (lite-v1) suite", "1 of 1 · lite (rule not recorded) suite"]
    second = suite_runs("lite")[0]
    second["model"], second["benchmarks"]["cure"]["scores"]["Ro"] = "org/second", 0.1
    board = view_text(leaderboard_frame([new, second, *suite_runs("full")], S), S)
    assert list(board["#"]) == ["1 of 1 · full suite", "1 of 2 · lite suite", "2 of 2 · lite suite"]


def test_empty_views_say_why():
    raw = board_runs()
    only_text = raw[raw["model"] == "org/smol-chat"]
    shown, _ = view_board(only_text, S, "lave")
    assert empty_text(shown, S.view("lave")).startswith("No finished run has LAVE yet (the runs on the board skipped")
    shown, _ = view_board(raw, S, search="nothing-like-this")
    assert empty_text(shown, S.view(None)) == "No run matches the search and filters."
    flagged = raw[raw["model"] == "org/vlm-limited"]  # a quick trial alone: shown, flagged and unranked
    shown, _ = view_board(flagged, S)
    assert shown.only_flagged and list(shown.rows["model"]) == ["org/vlm-limited"] and math.isnan(shown.rows["rank"][0])
    assert empty_text(shown, S.view(None)) is None and "no complete run yet" in status_text(shown, S, S.view(None))
    hidden = flagged.assign(hidden="trained on the test set")  # but not a run the admins hid
    shown, _ = view_board(hidden, S)
    assert not shown.only_flagged and "Show flagged runs" in empty_text(shown, S.view(None))


def test_links_model_pages_and_details_files_escaped():
    raw = board_runs()
    urls = lambda key, name: f"files/{key}/{name}.parquet"  # noqa: E731
    _, frame = view_board(raw, S, "runs", details_url=urls)
    table = board_table(frame, S)
    headers = table["headers"]
    first = dict(zip(headers, table["metadata"]["display_value"][0]))
    assert first["Model"] == "[org/vlm-a](https://huggingface.co/org/vlm-a)"
    assert dict(zip(headers, table["data"][0]))["Model"] == "org/vlm-a"  # the value stays the plain id
    key = f"org/vlm-a/{'abcdef012345'}_auto"
    assert first["Details"] == " · ".join(f"[{t}](files/{key}/{n}.parquet)" for t, n in
                                          (("CURE", "cure"), ("SimpleQA", "simpleqa"), ("ReForm", "reform"),
                                           ("LAVE", "lave")))
    assert model_link("/data/models/my_model") == "/data/models/my_model"  # a local folder: no link
    hostile = model_link("org/a)](javascript:alert(1)) [x")  # not a Hub id: escaped text, no link
    assert "http" not in hostile and "\\]" in hostile and "\\[" in hostile
    numbers = dict(zip(headers, table["data"][0]))
    assert numbers["Overall"] == 45.0 and numbers["#"] == 1.0  # numbers behind the text, for sorting
    assert table["data"][2][headers.index("CURE coverage")] is None  # the text-only run: undefined, not 0
    assert math.isnan(frame.loc[2, "CURE coverage"])


TRIAL = {"kind": "local", "model": "HuggingFaceTB/SmolLM2-135M", "revision": "0123456789ab"}


def trial_run(model: str, **run) -> dict:
    """A complete run whose judged benchmarks a local judge graded, with `run` fields added to its run record."""
    res = board_result(model, ALL4, judge=JUDGE)
    res["run"].update(judge=TRIAL, judge_name=None, **run)
    return res


def test_a_run_graded_by_a_trial_judge_is_flagged_and_never_ranked(settings, store, tmp_path):
    from leaderboard.board.file import load_board
    from tests.published_runs import finished_output, publish_finished

    for name, trial in (("org/trial", True), ("org/plain", None)):  # None: results without the field (older runs)
        out = finished_output(tmp_path / name.split("/")[1], name, ALL4)
        results = json.loads((out / "results.json").read_text())
        results["run"].update(judge=TRIAL, judge_name=None)
        if trial is not None:
            results["run"].update(judge_trial=trial, judge_parameters=135_000_000)
        (out / "results.json").write_text(json.dumps(results))
        publish_finished(settings, store, out, name)
    raw = load_board(store, S)
    assert dict(zip(raw["model"], raw["judge_trial"])) == {"org/trial": "true", "org/plain": "false"}

    board = by_model(view_text(raw, S, show_flagged=True))
    assert board["org/plain"]["#"] == "1" and board["org/plain"]["Flag"] == ""  # ranked as before
    assert board["org/trial"]["#"] == "unranked"
    assert board["org/trial"]["Flag"].startswith("trial judge: graded by a local judge under 7B parameters")
    assert "org/trial" not in set(view_text(raw, S)["Model"])  # hidden with the flagged runs unless asked for
    for view in ("simpleqa", "lave", "cure", "runs"):  # never ranked, in any view
        rows = by_model(view_text(raw, S, view, show_flagged=True))
        assert rows["org/trial"]["#"] == "unranked" and rows["org/plain"]["#"] == "1", view
    judges = by_model(view_text(raw, S, "lave", show_flagged=True))
    assert judges["org/trial"]["Judge"] == ("HuggingFaceTB/SmolLM2-135M @ 0123456789ab (local) — trial judge, not for "
                                            "scores")
    assert judges["org/plain"]["Judge"] == "HuggingFaceTB/SmolLM2-135M @ 0123456789ab (local)"


def test_the_trial_judge_field_is_read_defensively():
    odd = [trial_run("org/a", judge_trial="yes"), trial_run("org/b", judge_trial=1), trial_run("org/c")]
    odd.append({**trial_run("org/d"), "run": None})
    raw = leaderboard_frame(odd, S)
    assert list(raw["judge_trial"]) == ["false"] * 4  # only a true boolean is a trial judge
    assert list(view_text(raw, S)["Flag"]) == [""] * 4


def test_unranked_runs_say_so_and_are_grouped_by_their_benchmarks_not_one_list_by_score():
    runs = board_runs()
    cure_only = leaderboard_frame([board_result("org/cure-only", {"cure": 0.99}, limit=3,
                                                skipped={"simpleqa": "x", "reform": "x", "lave": "x"})], S)
    board = view_text(pd.concat([runs, cure_only], ignore_index=True), S, show_flagged=True)
    unranked = board[board["#"].str.startswith("unranked")]
    # the 4-benchmark runs together (by score), then the CURE-only one, though its score is the highest; each says
    # its group, as the ranked places do
    assert list(unranked["Model"]) == ["org/vlm-limited", "org/vlm-partial", "org/cure-only"]
    assert list(board["#"]) == ["1 of 2 · on all 4", "2 of 2 · on all 4", "1 of 1 · on SimpleQA",
                                "unranked · on all 4", "unranked · on all 4", "unranked · on CURE"]


def test_a_benchmark_views_board_table_shows_its_main_columns_and_the_rest_in_more():
    for card in S.cards:
        view = S.view(card.name)
        shown = [S.column(n).label for n in view.shown]
        assert shown[:3] == ["#", "Model", S.column(view.rank_by).label] and shown[-4:-2] == ["Flag", "Notes"]
        assert shown[-2:] == ["Precision", "Revision"]  # they name the run a selected score opens in the Explorer
        assert ("Judge" in shown) == card.needs_judge
        assert set(view.shown) | set(view.more) == set(view.columns)  # every column is in one table or the other
        assert view.more[:2] == ("rank", "model") and view.more[-2:] == ("precision", "revision")
        assert {"details", "limit", "suite", f"{card.name}_coverage"} <= set(view.more)
    assert S.view("overview").shown == S.view("overview").columns and S.view("overview").more == ()


def test_lave_fallback_ratings_are_noted_as_simpleqa_ungraded_answers_are():
    """Issue 52, point 7: with a judge that never rated, every LAVE item scored the fallback 2 and the board showed
    LAVE 50.0 with nothing in Notes."""
    fallback = board_result("org/never-rated", {"lave": 0.5}, judge=JUDGE,
                            counts={"lave": {"rated": 2, "rating_fallback": 2}})
    [row] = view_text(leaderboard_frame([fallback], S), S, "lave").to_dict("records")
    assert row["Notes"] == "LAVE: 2 fallback ratings (no rating in the reply)", row["Notes"]
    [overview] = view_text(leaderboard_frame([fallback], S), S, "overview").to_dict("records")
    assert "LAVE: 2 fallback ratings (no rating in the reply)" in overview["Notes"]


def test_runs_ranked_in_several_groups_say_their_group_and_a_served_tag_is_not_doubled():
    """Issue 52, point 5: three runs ranked in three comparison groups showed three 1s one above another, and the
    in-process rows said nothing of how they were asked; a served display name "x (served)" read
    "x (served) (served: host)"."""
    def asked(model: str, mode: str, score: float = 0.5, **kw) -> dict:
        row = board_result(model, {"reform": score}, skipped={"cure": "x", "simpleqa": "x", "lave": "x"}, **kw)
        row["run"]["modes"] = {"reform": mode}
        return row

    served = asked("served--127.0.0.1-8000/tiny", "generation")
    served.update(served=True, display_name="tiny-llava (served)")
    served["run"]["served"] = {"base_url": "http://127.0.0.1:8000/v1", "model": "tiny"}
    rows = [asked("org/by-likelihood", "likelihood"), asked("org/by-both", "both"), served,
            asked("org/also-generation", "generation", 0.4, sha=SHA_B)]
    board = by_model(view_text(leaderboard_frame(rows, S), S, "reform"))
    assert board["org/by-likelihood"]["#"] == "1 of 1 · by likelihood"
    assert board["org/by-both"]["#"] == "1 of 1 · by both"
    assert {board[m]["#"] for m in board if "generation" in m or "tiny" in m} == {"1 of 2 · by generation",
                                                                                 "2 of 2 · by generation"}
    assert "tiny-llava (served: 127.0.0.1:8000)" in board, list(board)  # the tag once
    one_group = view_text(leaderboard_frame(rows[:1], S), S, "reform")
    assert list(one_group["#"]) == ["1"]  # one group: the plain place
