"""Issue 67, point 2, the Space's side: every request records the evaluator's plan of its run (hours and dollars on the
hardware it will run on), the Submit tab shows that plan before anything is queued, the Queue shows it per request,
and the Jobs budget refuses a run whose plan exceeds it, with the numbers: at submission, and in the dispatcher's gate
(a pending request whose plan can never fit ends FAILED with the reason, never waiting forever)."""
from __future__ import annotations

import json
import re
import shutil
import struct
from datetime import timedelta
from types import SimpleNamespace

import pytest

from leaderboard.running.job_dispatch import Dispatcher
from leaderboard.submissions import budget_notes
from leaderboard.submissions import jobs_ledger as jl
from leaderboard.submissions import records as q
from leaderboard.submissions.checks import submit
from leaderboard.submissions.cost_plans import NOT_PLANNED, as_cost_plan, plan_cell
from leaderboard.submissions.identity import Visitor
from leaderboard.submissions.views import my_requests_frame, queue_frame
from leaderboard.ui.submit import plan_message, plan_table, submit_message
from tests.hub_cache import lay_into_hub_cache

ADA = Visitor("ada")
BIG = "tiny-org/big-llava"  # the tiny LLaVA whose weights' header says 7 B parameters (no tensor data)


@pytest.fixture
def big_llava(tiny_llava, hub_cache, tmp_path_factory) -> str:
    """A LLaVA of 7 B parameters as the checks count them (its safetensors header; there is no data behind it)."""
    folder = tmp_path_factory.mktemp("big-llava")
    shutil.copytree(tiny_llava.folder, folder, dirs_exist_ok=True)
    header = json.dumps({"w": {"dtype": "BF16", "shape": [7_000_000_000], "data_offsets": [0, 14_000_000_000]}})
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header.encode())
    lay_into_hub_cache(hub_cache, BIG, folder)
    return BIG


def jobs_settings(settings, **changes):
    """A Space dispatching to Hugging Face Jobs (a 7 B model runs on l40sx1, $1.80 an hour by the list prices)."""
    return settings.with_(executor="hf-jobs", jobs_image="img", jobs_namespace="org", **changes)


# ---------------------------------------------------------------- a plan for every request, recorded
def test_a_request_records_its_plan_and_the_queue_shows_it(settings, store, tiny_llava):
    settings = settings.with_(device="cpu")  # the local executor on the CPU: its time, no price
    outcome = submit(settings, store, tiny_llava.repo_id, by=ADA)
    assert outcome.ok and outcome.plan is not None, outcome.message
    stored = q.load(store, outcome.request.path)
    plan = stored.cost_plan
    assert {k: plan[k] for k in ("flavor", "usd", "usd_per_hour", "suite", "thinking")} == \
        {"flavor": "cpu", "usd": None, "usd_per_hour": None, "suite": "sample", "thinking": "off"}
    assert plan["hours"] > 0 and plan["basis"] == "a run on this machine's CPU: no price"
    assert plan["summary"].startswith("at most ") and "on cpu (no price): " in plan["summary"]
    assert "option scorings" in plan["summary"] and plan["summary"].endswith("(sample suite, thinking off)")
    pending = queue_frame([stored], q.PENDING)
    assert re.fullmatch(r"(<0:01|\d+:\d\d) on cpu \(no price\)", pending.loc[0, "Plan"]), pending.loc[0, "Plan"]
    for status in (q.RUNNING, q.FINISHED, q.FAILED):  # the column follows a request through the queue
        stored.status = status
        assert queue_frame([stored], status).loc[0, "Plan"] == pending.loc[0, "Plan"]


def test_with_hf_jobs_the_plan_is_priced_on_its_flavor_at_the_ledgers_prices(settings, store, big_llava):
    listed = submit(jobs_settings(settings), store, big_llava, by=ADA, queue=False).request.cost_plan
    assert (listed["flavor"], listed["usd_per_hour"]) == ("l40sx1", 1.8) and "list prices" in listed["basis"]
    assert listed["usd"] == pytest.approx(listed["hours"] * 1.8, rel=1e-4)
    store.write_json(jl.PATH, {"version": 1, "rates": {"l40sx1": 3.0}, "open": {}, "settled": []})
    live = submit(jobs_settings(settings), store, big_llava, by=ADA).request
    assert live.run_plan["flavor"] == live.cost_plan["flavor"] == "l40sx1"  # the memory plan's flavor
    assert (live.cost_plan["usd_per_hour"], live.cost_plan["basis"]) == (3.0, "the Hub's current list")
    cell = queue_frame([live], q.PENDING).loc[0, "Plan"]
    assert re.fullmatch(r"\d+:\d\d · \$\d+\.\d\d on l40sx1", cell), cell


def test_an_older_request_without_a_plan_reads_and_shows_not_planned(store):
    older = q.Request(model="org/older", revision="a" * 40).to_dict()
    del older["cost_plan"]  # written before plans were recorded
    store.write_json(q.request_path("org/older", "a" * 40, "auto"), older)
    request = q.all_requests(store)[0]
    assert request.cost_plan == {} and store.damaged.listing() == []
    assert queue_frame([request], q.PENDING).loc[0, "Plan"] == NOT_PLANNED


@pytest.mark.parametrize("damaged", ["0:24 on cpu", 3, [1], None, {"flavor": "cpu"}, {"flavor": 3, "hours": 1.0},
                                     {"flavor": "cpu", "hours": -1.0}, {"flavor": "cpu", "hours": "1"},
                                     {"flavor": "l4x1", "hours": 1.0, "usd": True}, {"flavor": "", "hours": 1.0}])
def test_a_damaged_cost_plan_never_breaks_reading_a_request(store, damaged):
    record = {**q.Request(model="org/damaged", revision="b" * 40).to_dict(), "cost_plan": damaged}
    path = q.request_path("org/damaged", "b" * 40, "auto")
    store.write_json(path, record)
    request = q.load(store, path)
    assert request is not None and [r.path for r in q.all_requests(store)] == [path]
    assert store.damaged.listing() == []
    assert as_cost_plan(request.cost_plan) is None and plan_cell(request.cost_plan) == NOT_PLANNED
    assert queue_frame([request], q.PENDING).loc[0, "Plan"] == NOT_PLANNED


# ---------------------------------------------------------------- the Submit tab
def test_see_the_plan_shows_it_per_benchmark_without_queueing_anything(settings, store, tiny_llava):
    settings = settings.with_(device="cpu", benchmarks=("cure", "simpleqa"))
    shown = plan_message(settings, store, tiny_llava.repo_id, by=ADA)
    assert shown.startswith(f"**The plan** of {tiny_llava.repo_id} @ {tiny_llava.sha[:12]} (auto): at most "), shown
    assert "Nothing was queued; press Submit to queue it." in shown
    assert "| Benchmark | Items | Generations | Option scorings | Answer tokens at most | Judge calls |" in shown
    assert re.search(r"^\| cure \| 20 \| 0 \| 77 \| 0 \| 0 \|$", shown, re.M), shown
    assert re.search(r"^\| simpleqa \| \d+ \| \d+ \| 0 \| [\d,]+ \| \d+ \|$", shown, re.M), shown
    assert "Thinking: auto: " in shown and "Price: a run on this machine's CPU: no price." in shown
    assert store.list("requests") == []  # nothing queued, nothing written
    signed_out = plan_message(settings, store, tiny_llava.repo_id)
    assert signed_out.startswith("**No plan.**") and "sign in" in signed_out.lower()
    queued = submit_message(settings, store, tiny_llava.repo_id, by=ADA)  # the queued message carries its summary
    assert queued.startswith("Queued ") and "No estimate yet" in queued and " Its plan: at most " in queued, queued
    again = plan_message(settings, store, tiny_llava.repo_id, by=ADA)  # already queued: that request and its plan
    assert "was already submitted and is PENDING" in again and " Its plan: at most " in again, again


def test_the_plan_table_escapes_what_it_shows():
    run = SimpleNamespace(benchmarks=[SimpleNamespace(name="x|y*", skipped="skipped: <b>text</b> | only",
                                                      workload=None)])
    table = plan_table(run)
    assert r"| x\|y\* | skipped: \<b\>text\</b\> \| only |" in table and "<b>" not in table


# ---------------------------------------------------------------- the Jobs budget
def test_submission_refuses_a_plan_over_the_jobs_budget_with_the_numbers(settings, store, big_llava):
    settings = jobs_settings(settings, suite="full", jobs_budget_usd=0.5, jobs_budget_days=7.0)
    plan = as_cost_plan(submit(settings.with_(jobs_budget_usd=None), store, big_llava, by=ADA,
                               queue=False).request.cost_plan)
    assert plan.usd > 0.5
    message = submit_message(settings, store, big_llava, by=ADA)
    said = (f"**Not submitted.** Its plan: at most {plan.summary.split()[2]} on l40sx1 at $1.80/h = ${plan.usd:.2f} "
            "(full suite, thinking off), more than this leaderboard's Jobs budget of $0.50 per 7 days, so model "
            f"{BIG} cannot be evaluated here; nothing was queued.")
    assert message == said, message
    assert plan_message(settings, store, big_llava, by=ADA) == said.replace("Not submitted.", "No plan.")
    assert store.list("requests") == []
    for allowed in (settings.with_(jobs_budget_usd=None), settings.with_(jobs_budget_usd=0.0),  # no cap; paused
                    settings.with_(jobs_budget_usd=plan.usd + 0.01), settings.with_(executor="local")):
        assert submit(allowed, store, big_llava, by=ADA, queue=False).ok


class Jobs:
    """A Jobs API that starts nothing: it records the Jobs asked for, and lists l40sx1 at $2.50 an hour."""

    def __init__(self):
        self.started: list[str] = []

    def whoami(self):
        return {"name": "org"}

    def list_jobs(self, **_):
        return []

    def list_jobs_hardware(self):
        return [SimpleNamespace(name="l40sx1", unit_cost_micro_usd=2_500_000, unit_cost_usd=2.5, unit_label="hour")]

    def run_job(self, name: str, labels: dict, **_):
        self.started.append(name)
        return SimpleNamespace(id=f"job-{len(self.started)}", status=SimpleNamespace(stage="SCHEDULING", message=""),
                               labels=labels, url="", created_at=None, durations=None)


def test_the_dispatcher_fails_a_pending_request_whose_plan_exceeds_the_budget_with_the_numbers(settings, store):
    settings = jobs_settings(settings, jobs_budget_usd=5.0, jobs_budget_days=7.0, max_run_seconds=3600.0,
                             jobs_timeout_margin=900.0)  # a Job's worst case: 1.25 h x $2.50 = $3.13, within $5
    plan = {"flavor": "l40sx1", "hours": 3.2, "usd": 5.76, "usd_per_hour": 1.8, "suite": "full", "thinking": "off",
            "summary": "at most 3:12 on l40sx1 ($5.76): ...", "basis": "list prices"}
    at = [q.iso(q.now() + timedelta(seconds=i)) for i in range(3)]  # in queue order
    over = q.Request(model="org/over", revision="c" * 40, params_billions=7.0, cost_plan=plan, submitted_time=at[0])
    fits = q.Request(model="org/fits", revision="d" * 40, params_billions=7.0, cost_plan={**plan, "hours": 1.0},
                     submitted_time=at[1])
    older = q.Request(model="org/older", revision="e" * 40, params_billions=7.0,  # no plan: its worst case alone
                      submitted_time=at[2])
    for request in (over, fits, older):
        q.save(store, request)
    assert over.key not in budget_notes.notes_for(settings, store, [over, fits, older])  # it never says it waits
    jobs = Jobs()
    report = Dispatcher(settings, store, jobs).tick(prepare=lambda: None)
    assert report.error is None and report.failed == [over.key]
    failed = q.load(store, over.path)
    assert failed.status == q.FAILED and failed.error == (  # the Hub's price now ($2.50), not the one it was planned at
        "Its plan: at most 3:12 on l40sx1 at $2.50/h = $8.00 (full suite, thinking off), more than this leaderboard's "
        "Jobs budget of $5.00 per 7 days, so it was not run"), failed.error
    assert not failed.job and len(jobs.started) == 1 and report.started == [fits.key]  # its plan fits: it runs
    assert q.load(store, older.path).status == q.PENDING  # waiting for room (one worst case fits at once), not failed
    ledger = jl.read(store)
    assert [r.request for r in ledger.open.values()] == [fits.key]  # nothing was reserved for the failed one
    mine = my_requests_frame(q.all_requests(store), "anonymous").set_index("Key")
    assert mine.loc[over.key, "Where it is"].startswith("Its plan: at most 3:12 on l40sx1 at $2.50/h = $8.00")


def test_the_app_shows_the_plan_at_plan_and_the_queue_at_queue(client, store, tiny_llava):
    shown = client.predict(tiny_llava.repo_id, "", "auto", "pretrained", api_name="/plan")
    assert shown.startswith("**The plan** of ") and "| cure |" in shown and q.all_requests(store) == [], shown
    queued = client.predict(tiny_llava.repo_id, "", "auto", "pretrained", api_name="/submit")
    assert queued.startswith("Queued") and " Its plan: at most " in queued, queued
    pending = client.predict(api_name="/queue")[0]
    row = dict(zip(pending["headers"], pending["data"][0]))
    assert row["Plan"] == plan_cell(q.all_requests(store)[0].cost_plan) != NOT_PLANNED


# ---------------------------------------------------------------- the engine the Job runs (issue 68, point 3)
def test_the_plan_is_priced_on_the_engine_the_job_will_run(settings, store, big_llava):
    static = submit(jobs_settings(settings), store, big_llava, by=ADA, queue=False).request.cost_plan
    served = submit(jobs_settings(settings, engine="vllm"), store, big_llava, by=ADA, queue=False).request.cost_plan
    assert (static["engine"], served["engine"]) == ("transformers", "vllm")
    assert static["figures"] == {name: "measured (H200, 2026-11-26)" for name in ("prompts", "generation", "loading")}
    assert served["figures"]["generation"] == served["figures"]["prompts"] == \
        "published (https://blog.vllm.ai/2024/09/05/perf-update.html)"
    assert served["figures"]["loading"].startswith("assumed (https://blog.vllm.ai/")
    assert served["hours"] != static["hours"] and served["flavor"] == static["flavor"] == "l40sx1"
    assert served["summary"].endswith("(sample suite, thinking off, on vllm)"), served["summary"]
    assert as_cost_plan(served).figures == served["figures"]
    shown = plan_message(jobs_settings(settings, engine="vllm"), store, big_llava, by=ADA)
    assert "Engine: vllm; its figures: prompts published (https" in shown and "loading assumed (" in shown, shown
    local = submit(settings.with_(device="cpu", engine="vllm"), store, big_llava, by=ADA, queue=False).request
    assert local.cost_plan["engine"] == "transformers"  # a local run is the evaluator's own, in-process


def test_a_plan_recorded_before_engines_reads_as_transformers_unmarked():
    older = {"flavor": "l40sx1", "hours": 1.0, "usd": 1.8, "usd_per_hour": 1.8, "suite": "lite", "thinking": "off",
             "summary": "at most 1:00 on l40sx1 ($1.80): ...", "basis": "list prices"}
    plan = as_cost_plan(older)
    assert (plan.engine, plan.figures) == ("transformers", {}) and plan.record()["engine"] == "transformers"
    assert as_cost_plan({**older, "figures": {"prompts": 3}}) is None and as_cost_plan({**older, "engine": 1}) is None
