"""The whole product: submit through the app, one scheduler tick runs the real worker, the board shows the run."""
from __future__ import annotations

import json
from datetime import datetime

import pandas as pd
import pytest

from leaderboard.board.columns import schema
from leaderboard.board.file import load_board
from leaderboard.board.views import view_text
from leaderboard.running import scheduler
from leaderboard.submissions import records as q
from tests import scripted_judges

CURE_LABELS = ["CURE Ro", "CURE Rh", "CURE Rcot", "CURE Cf", "CURE Cb"]
# every test here runs the real worker subprocess through a scheduler tick (or drives a browser)
pytestmark = pytest.mark.slow
# SimpleQA's generation budget for the end-to-end run: every question, every part (answer, stated confidence, k
# samples), only shorter. The tiny random model never stops early, so the defaults (256 / 96 tokens, k = 5) cost
# tens of thousands of decoding steps; this costs about 1,000, through the same code paths.
SIMPLEQA_SMALL = ("simpleqa.max_new_tokens=8", "simpleqa.confidence_max_new_tokens=8", "simpleqa.samples=2")


def test_submit_tick_board_through_gradio_client(client, settings, store, tiny_llava):
    message = client.predict("tiny-org/tiny-llava", "main", "auto", "pretrained", api_name="/submit")
    assert "Queued" in message and "position 1" in message, message
    [request] = q.all_requests(store)
    assert request.status == q.PENDING and request.revision == tiny_llava.sha  # "main" was pinned to the sha

    report = scheduler.tick(settings, store)  # one tick, directly: no timers
    assert report.status == q.FINISHED, report.error

    results = store.read_json(f"results/{request.key}.json")
    assert results["revision"] == tiny_llava.sha and results["run"]["item_counts"]["cure"] == 20
    details = pd.read_parquet(store.root / "details" / request.key / "cure.parquet")
    assert details["question_id"].nunique() == 20
    assert set(details["part"]) >= {"high", "step1", "step2"}

    board = client.predict("", [], [], "cure", False, api_name="/leaderboard")  # the CURE view
    row = dict(zip(board["headers"], board["metadata"]["display_value"][0]))
    assert dict(zip(board["headers"], board["data"][0]))["Model"] == "tiny-org/tiny-llava"
    assert row["Model"] == "[tiny-org/tiny-llava](https://huggingface.co/tiny-org/tiny-llava)"
    assert row["CURE coverage"] == "100.0" and row["#"] == "1"
    scores, intervals = results["benchmarks"]["cure"]["scores"], results["benchmarks"]["cure"]["intervals"]
    for label, key in zip(CURE_LABELS, ["Ro", "Rh", "Rcot", "Cf", "Cb"]):
        if scores[key] is None:
            assert row[label] == "n/a", label
            continue
        half = (intervals[key]["high"] - intervals[key]["low"]) / 2  # each score with half its 95% interval
        assert row[label] == f"{100 * scores[key]:.1f} ± {100 * half:.1f}".replace("-0.0", "0.0"), label

    queue_tables = client.predict(api_name="/queue")
    finished = queue_tables[2]
    assert "tiny-org/tiny-llava" in [r[0] for r in finished["data"]]

    again = client.predict("tiny-org/tiny-llava", "", "auto", "pretrained", api_name="/submit")
    assert "already" in again.lower() and len(q.all_requests(store)) == 1


def test_submit_in_the_browser_then_the_row_appears(settings, store, tiny_llava, app_url, open_page):
    page = open_page(app_url)
    page.get_by_text("No results yet").wait_for(state="visible")
    page.get_by_role("tab", name="Submit").click()
    page.locator("#submit-model input, #submit-model textarea").first.fill("tiny-org/tiny-llava")
    page.locator("#submit-button").click()
    page.locator("#submit-message").get_by_text("position 1", exact=False).wait_for(state="visible")
    assert "Queued" in page.locator("#submit-message").inner_text()

    assert scheduler.tick(settings, store).status == q.FINISHED

    page.get_by_role("tab", name="Leaderboard").click()
    page.locator("#board-refresh").click()
    cell = page.locator("#leaderboard-table [role=gridcell][data-col='1']").filter(visible=True)  # Model
    cell.get_by_text("tiny-org/tiny-llava", exact=True).first.wait_for(state="visible")
    assert cell.all_inner_texts() == ["tiny-org/tiny-llava"]


def test_simpleqa_sample_on_the_tiny_text_model_with_a_scripted_judge(settings, store, tiny_llama):
    from tests.judge_servers import ScriptedServer

    token = "sk-judge-e2e-secret"
    with ScriptedServer(scripted_judges.simpleqa_grades) as server:
        settings = settings.with_(benchmarks=("simpleqa",), judge=f"endpoint:{server.base_url}|scripted-judge",
                                  judge_token=token, options=SIMPLEQA_SMALL)
        request = q.Request(model=tiny_llama.repo_id, revision=tiny_llama.sha)
        q.save(store, request)
        report = scheduler.tick(settings, store)
        assert report.status == q.FINISHED, report.error
        assert all(r.headers.get("Authorization") == f"Bearer {token}" for r in server.requests)

    results = store.read_json(f"results/{request.key}.json")
    simpleqa = results["benchmarks"]["simpleqa"]
    scores, counts = simpleqa["scores"], simpleqa["counts"]
    assert counts["items"] == 31 and counts["ungraded"] == 1 and counts["graded"] == 30
    # no limit: every item was run, and the ungraded answer is all that is missing from the coverage
    assert simpleqa["coverage"] == {"scored": 30, "items": 31, "suite_items": 31, "share": pytest.approx(30 / 31)}
    assert scores["correct"] + scores["incorrect"] + scores["not_attempted"] == pytest.approx(1.0)
    assert set(scores) >= {"correct", "incorrect", "not_attempted", "correct_given_attempted", "f_score", "ece"}
    assert simpleqa["extra"]["calibration"] == {"confidence": True, "frequency": True}
    assert results["run"]["judge"] == {"kind": "endpoint", "base_url": server.base_url, "model": "scripted-judge"}
    assert results["run"]["prompt_hashes"]["simpleqa/simpleqa_grader"].startswith("sha256:")

    details = pd.read_parquet(store.root / "details" / request.key / "simpleqa.parquet")
    answers = details[details["part"] == "answer"]
    assert len(answers) == 31
    # the options reached the worker's evaluator (two samples per question); each reply says if it hit its budget
    assert details["part"].str.startswith("sample").sum() == 31 * 2
    assert details.loc[details["part"] == "answer", "hit_token_limit"].notna().all()
    graded = answers[answers["grade"] != ""]
    assert graded["judge_rationale"].str.startswith("Scripted reason for").all()
    assert graded["judge_raw"].str.contains("\n").all()
    ungraded = answers[answers["gold"] == "206"].iloc[0]
    assert ungraded["grade"] == "" and ungraded["judge_error"] and pd.isna(ungraded["score"])
    assert not ungraded["correct"]

    board = load_board(store, schema())
    row = board[board["model"] == tiny_llama.repo_id].iloc[0]
    assert row["simpleqa_f_score"] == pytest.approx(scores["f_score"]) and row["simpleqa_ungraded"] == 1
    assert row["judge"] == f"scripted-judge (endpoint {server.base_url})" == results["run"]["judge_name"]
    assert datetime.fromisoformat(results["run"]["judged_time"]) >= \
        datetime.fromisoformat(results["submitted_time"]).replace(microsecond=0)
    stored = json.dumps(results) + details.to_json() + json.dumps(store.read_json(request.path))
    assert token not in stored


def test_reform_sample_on_the_tiny_llava(settings, store, tiny_llava):
    from evaluator.benchmarks.reform.datasets import DIMENSIONS

    settings = settings.with_(benchmarks=("reform",), limit=1)  # one item per dimension
    request = q.Request(model=tiny_llava.repo_id, revision=tiny_llava.sha)
    q.save(store, request)
    report = scheduler.tick(settings, store)
    assert report.status == q.FINISHED, report.error

    results = store.read_json(f"results/{request.key}.json")
    reform = results["benchmarks"]["reform"]
    scores, counts = reform["scores"], reform["counts"]
    assert counts["items"] == len(DIMENSIONS) and counts["repeats"] == 5
    for dim in DIMENSIONS:
        assert f"gen_{dim}" in scores and f"lik_{dim}" in scores
    assert 0.0 <= scores["instability"] <= 1.61 and 0.0 <= scores["format_hit_rate"] <= 1.0
    assert results["run"]["prompt_hashes"]["reform/reform_gen_templates"].startswith("sha256:")

    details = pd.read_parquet(store.root / "details" / request.key / "reform.parquet")
    gen = details[(details["mode"] == "generation") & (details["form"] == "multiple_choice")]
    assert len(gen) == counts["multiple_choice"] * 5
    for _, row in gen.iterrows():
        first = json.loads(row["options"])[0]
        assert first in row["prompt"] and "<image>" in row["prompt"]  # the prompt as sent (chat template)
    assert set(details["extraction"]) >= {"mark", "likelihood", "likelihood_mean", "ocr", "caption"}

    board = load_board(store, schema())
    row = board[board["model"] == tiny_llava.repo_id].iloc[0]
    assert row["reform_gen_overall"] == pytest.approx(scores["gen_overall"])
    assert row["reform_lik_overall"] == pytest.approx(scores["lik_overall"])
    assert row["reform_instability"] == pytest.approx(scores["instability"])
    assert row["reform_format_hit_rate"] == pytest.approx(scores["format_hit_rate"])
    shown = view_text(board, schema(), "reform")
    assert {"ReForm gen overall", "ReForm instability", "ReForm coverage"} <= set(shown.columns)


def test_lave_sample_on_the_tiny_llava_with_a_scripted_judge(settings, store, tiny_llava, client):
    from tests.judge_servers import ScriptedServer

    with ScriptedServer(scripted_judges.lave_ratings) as server:
        settings = settings.with_(benchmarks=("lave",), judge=f"endpoint:{server.base_url}|lave-judge",
                                  options=("lave.max_new_tokens=4",))
        request = q.Request(model=tiny_llava.repo_id, revision=tiny_llava.sha)
        q.save(store, request)
        report = scheduler.tick(settings, store)
        assert report.status == q.FINISHED, report.error
        assert len(server.requests) == 30

    results = store.read_json(f"results/{request.key}.json")
    lave = results["benchmarks"]["lave"]
    scores, counts = lave["scores"], lave["counts"]
    assert counts == {"items": 30, "scored": 30, "answered": 30, "rated": 30, "unrated": 0, "rating_fallback": 1,
                      "no_rationale": 0, "vqa_accuracy_items": 27, "image_unavailable": 0}  # 27 with 10 answers
    assert lave["coverage"] == {"scored": 30, "items": 30, "suite_items": 30, "share": 1.0}
    assert set(scores) == {"lave", "vqa_accuracy", "anls", "exact_match", "bleu4", "cider"}
    assert set(lave["extra"]["agreement"]) == {"vqa_accuracy", "anls", "exact_match", "bleu4", "cider"}
    assert {m: a["n"] for m, a in lave["extra"]["agreement"].items()} == {
        "vqa_accuracy": 27, "anls": 30, "exact_match": 30, "bleu4": 30, "cider": 30}
    assert results["run"]["judge"] == {"kind": "endpoint", "base_url": server.base_url, "model": "lave-judge"}
    assert results["run"]["prompt_hashes"]["lave/lave_task"].startswith("sha256:")

    details = pd.read_parquet(store.root / "details" / request.key / "lave.parquet")
    assert len(details) == 30
    rated = details[~details["rating_fallback"]]
    assert rated["judge_rationale"].str.startswith("Scripted rationale for").all()
    assert (rated["lave"] == (rated["rating"] - 1) / 2).all()
    fallback = details[details["rating_fallback"]].iloc[0]
    assert fallback["question"] == "Is it raining?" and fallback["rating"] == 2 and fallback["lave"] == 0.5
    assert details["lave"].mean() == pytest.approx(scores["lave"])
    assert details["prompt"].str.contains("<image>").all()

    board = load_board(store, schema())
    row = board[board["model"] == tiny_llava.repo_id].iloc[0]
    for metric in ("lave", "vqa_accuracy", "anls", "exact_match", "bleu4", "cider"):
        assert row[f"lave_{metric}"] == pytest.approx(scores[metric])
    assert row["lave_agree_exact_match"] == pytest.approx(lave["extra"]["agreement"]["exact_match"]["agreement"])
    shown = view_text(board, schema(), "lave")
    assert {"LAVE score", "LAVE VQA accuracy", "LAVE CIDEr", "LAVE unrated (count)"} <= set(shown.columns)

    # the board's LAVE section: the run's LAVE beside each strict metric, through the API
    section = client.predict(request.key, api_name="/lave_agreement")
    by_metric = {r[0]: r for r in section["data"]}
    exact_label = "exact match (VQA-normalised)"
    assert list(by_metric) == ["LAVE", "VQA accuracy", "ANLS", exact_label, "BLEU-4", "CIDEr"]
    assert by_metric["LAVE"][1] == f"{100 * scores['lave']:.1f}" and "1 without a rating" in by_metric["LAVE"][4]
    exact = lave["extra"]["agreement"]["exact_match"]
    assert by_metric[exact_label][2] == f"{100 * exact['agreement']:.1f}" and by_metric[exact_label][4] == "30"
    assert by_metric["CIDEr"][1] == f"{scores['cider']:.3f}"  # not a percentage
    assert client.predict("../../etc/passwd", api_name="/lave_agreement")["data"] == []
