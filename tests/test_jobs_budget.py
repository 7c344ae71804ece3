"""The Jobs budget (LEADERBOARD_JOBS_BUDGET_USD over LEADERBOARD_JOBS_BUDGET_DAYS) on the loopback Hub and its Jobs API
(tests/hub_server.py): each Job's worst case is reserved in the claim's own commit, replaced by what it cost when it
ends, the ledger riding along the dispatcher's commits; a request that does not fit waits PENDING with its attempts
unspent, and the Queue says until about when. The Jobs here run a trivial command (their evaluation never starts)."""
from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from datetime import timedelta

import pytest
from huggingface_hub import HfApi

from leaderboard.running import hf_jobs
from leaderboard.running.job_dispatch import Dispatcher
from leaderboard.settings import Settings
from leaderboard.store.hub import HubStore
from leaderboard.submissions import budget_notes
from leaderboard.submissions import jobs_ledger as jl
from leaderboard.submissions import records as q
from leaderboard.submissions.views import my_requests_frame, queue_frame
from tests.conftest import HUB_ORG, HUB_USER

TERMINAL = ("COMPLETED", "CANCELED", "ERROR", "DELETED")
RATE = 0.03  # cpu-upgrade's price on the loopback Hub, dollars an hour
WORST = RATE * (600 + 900) / 3600  # a Job's worst case: its price x its timeout (600 s + the 900 s margin)


def settings_of(repos, token, tmp_path, **env) -> Settings:
    base = {"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": repos[0], "LEADERBOARD_REQUESTS_REPO": repos[1],
            "HF_TOKEN": token, "LEADERBOARD_EXECUTOR": "hf-jobs",
            "LEADERBOARD_JOBS_IMAGE": "hf.co/spaces/test-org/leaderboard", "LEADERBOARD_JOBS_NAMESPACE": HUB_ORG,
            "LEADERBOARD_HOME": str(tmp_path / "space"), "LEADERBOARD_MAX_RUN_SECONDS": "600",
            "LEADERBOARD_JOBS_FLAVORS": "1=cpu-upgrade,70=l40sx4", "LEADERBOARD_JOBS_SETUP": "sleep 60"}
    return Settings.from_env({**base, **env})


def submit(store, n: int, start: int = 0) -> list[q.Request]:
    """n requests (one commit), oldest first."""
    made = [q.Request(model=f"Budget-Org/Model-{i}", revision=f"{uuid.uuid4().hex}{i:08x}", source="local",
                      local_path="/nowhere", params_billions=0.01, submitter=HUB_USER,
                      submitted_time=q.iso(q.now() + timedelta(milliseconds=i))) for i in range(start, start + n)]
    store.write_many({r.path: json.dumps(r.to_dict()).encode() for r in made})
    return made


def ours(hub, settings) -> list:
    return [j for j in hub.jobs if j.labels.get(hf_jobs.LABEL_STORE) == hf_jobs.store_label(settings)]


def wait_until(condition, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def stage(hub, job_id: str) -> str:
    return next(j.stage for j in hub.jobs if j.id == job_id)


def stop_jobs(api, hub, settings) -> None:
    for job in ours(hub, settings):
        if job.stage not in TERMINAL:
            api.cancel_job(job_id=job.id, namespace=HUB_ORG)


@pytest.mark.slow  # Jobs on the loopback Hub
def test_two_dispatchers_ticking_at_once_never_start_jobs_past_the_budget(hub, api, token, repos, tmp_path):
    settings = settings_of(repos, token, tmp_path, LEADERBOARD_JOBS_BUDGET_USD=f"{2.5 * WORST}")  # room for 2
    setup = HubStore(api, settings.results_repo, settings.requests_repo)
    requests = submit(setup, 6)
    dispatchers = [Dispatcher(settings, HubStore(HfApi(endpoint=hub.url, token=token), settings.results_repo,
                                                 settings.requests_repo, create=False), api) for _ in range(2)]
    start, reports, errors = threading.Barrier(2), [], []

    def run(dispatcher: Dispatcher) -> None:
        try:
            for _ in range(3):
                start.wait(30)
                reports.append(dispatcher.tick())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(d,)) for d in dispatchers]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not errors and not any(r.error for r in reports), (errors, [r.error for r in reports])
        started = [key for r in reports for key in r.started]
        assert len(started) == 2 == len(set(started)) == len(ours(hub, settings))  # the budget held, at once
        setup.refresh()
        ledger = jl.read(setup)
        assert sorted(r.request for r in ledger.open.values()) == sorted(started)
        assert all(r.usd == pytest.approx(WORST) and r.job for r in ledger.open.values())
        assert ledger.committed(q.now(), jl.window_seconds(settings)) <= settings.jobs_budget_usd
        final = {r.key: r for r in q.all_requests(setup)}
        assert len(final) == 6  # the ledger is never read as a request
        waiting = [r for r in final.values() if r.status == q.PENDING]
        assert len(waiting) == 4 and all(r.attempts == 0 and not r.error for r in waiting)
        assert set(started) == {r.key for r in requests[:2]}  # in queue order
    finally:
        stop_jobs(api, hub, settings)


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_restarted_dispatcher_counts_the_open_reservations(hub, api, token, repos, tmp_path):
    settings = settings_of(repos, token, tmp_path, LEADERBOARD_JOBS_BUDGET_USD=f"{1.5 * WORST}")  # room for 1
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    first, second = submit(store, 2)
    try:
        assert Dispatcher(settings, store, api).tick().started == [first.key]
        restarted_store = HubStore(HfApi(endpoint=hub.url, token=token), settings.results_repo,
                                   settings.requests_repo, create=False)
        before = hub.commits[settings.requests_repo]
        restarted = Dispatcher(settings, restarted_store, api)
        report = restarted.tick()
        assert report.started == [] and report.error is None and len(ours(hub, settings)) == 1
        assert hub.commits[settings.requests_repo] == before  # waiting costs no commit
        waiting = q.load(restarted_store, second.path)
        assert waiting.status == q.PENDING and waiting.attempts == 0
        notes = budget_notes.notes_for(settings, restarted_store, q.all_requests(restarted_store))
        assert list(notes) == [second.key]
        until = q.parse_time(jl.read(restarted_store).open[q.load(restarted_store, first.path).lease_owner].until)
        assert notes[second.key] == (f"waiting for the Jobs budget: ${WORST:.4f} of ${1.5 * WORST:.4f} spent in the "
                                     f"last 30 days; next start about {until.strftime('%Y-%m-%d %H:%M')} UTC")
    finally:
        stop_jobs(api, hub, settings)


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_job_whose_end_the_dispatcher_never_saw_is_settled_from_the_jobs_api(hub, api, token, repos, tmp_path):
    """The Job closes its own request FINISHED and ends while the Space is down: a new dispatcher inspects it once
    and settles it riding along its next commit (here the claim the settlement makes room for): no commit more."""
    settings = settings_of(repos, token, tmp_path, LEADERBOARD_JOBS_BUDGET_USD=f"{1.5 * WORST}",
                           LEADERBOARD_JOBS_SETUP="sleep 1; exit 0")
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    first, second = submit(store, 2)
    try:
        assert Dispatcher(settings, store, api).tick().started == [first.key]
        running = q.load(store, first.path)
        assert q.finish(store, first.path, running.lease_owner, q.FINISHED)  # as the Job does once it published
        wait_until(lambda: stage(hub, running.job["id"]) in TERMINAL)
        before = hub.commits[settings.requests_repo]
        restarted = Dispatcher(settings, HubStore(HfApi(endpoint=hub.url, token=token), settings.results_repo,
                                                  settings.requests_repo, create=False), api)
        assert restarted.tick().started == [second.key]
        assert hub.commits[settings.requests_repo] - before == 2  # the claim and the Job's record, as ever
        store.refresh()
        ledger = jl.read(store)
        (charge,) = ledger.settled
        info = api.inspect_job(job_id=running.job["id"], namespace=HUB_ORG)
        assert charge.job == running.job["id"] and charge.request == first.key
        assert charge.seconds == hf_jobs.running_seconds(info) >= 1
        assert charge.usd == pytest.approx(charge.seconds * RATE / 3600)
        assert [r.request for r in ledger.open.values()] == [second.key]
        assert q.load(store, first.path).status == q.FINISHED
    finally:
        stop_jobs(api, hub, settings)


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_settlement_waits_for_a_commit_the_dispatcher_makes_anyway(hub, api, token, repos, tmp_path):
    settings = settings_of(repos, token, tmp_path, LEADERBOARD_JOBS_SETUP="exit 0")  # no budget: still recorded
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    (first,) = submit(store, 1)
    dispatcher = Dispatcher(settings, store, api)
    assert dispatcher.tick().started == [first.key]
    running = q.load(store, first.path)
    q.finish(store, first.path, running.lease_owner, q.FINISHED)
    wait_until(lambda: stage(hub, running.job["id"]) in TERMINAL)
    before = hub.commits[settings.requests_repo]
    dispatcher.tick()
    assert hub.commits[settings.requests_repo] == before  # nothing else to write: the settlement waits
    assert list(dispatcher.budget.pending) == [running.lease_owner]
    (second,) = submit(store, 1, start=1)
    before = hub.commits[settings.requests_repo]
    assert dispatcher.tick().started == [second.key]
    assert hub.commits[settings.requests_repo] - before == 2
    ledger = jl.read(store)
    assert [c.request for c in ledger.settled] == [first.key]
    dispatcher.tick()
    assert running.lease_owner not in dispatcher.budget.pending  # settled in the store: forgotten here
    assert ledger.rates["cpu-upgrade"] == pytest.approx(RATE)


@pytest.mark.slow  # Jobs on the loopback Hub
@pytest.mark.parametrize("budget", ["", "1"])
def test_the_budget_adds_no_commit_to_an_evaluation(hub, api, token, repos, tmp_path, budget):
    """Two Jobs that end without publishing: the claim, the Jobs' record and the close, with or without a budget;
    the close carries what they cost."""
    settings = settings_of(repos, token, tmp_path, LEADERBOARD_JOBS_BUDGET_USD=budget, LEADERBOARD_JOBS_SETUP="exit 0")
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    requests = submit(store, 2)
    dispatcher = Dispatcher(settings, store, api)
    before = hub.commits[settings.requests_repo]
    assert len(dispatcher.tick().started) == 2
    wait_until(lambda: all(j.stage in TERMINAL for j in ours(hub, settings)))
    assert sorted(dispatcher.tick().failed) == sorted(r.key for r in requests)  # "did not publish"
    assert hub.commits[settings.requests_repo] - before == 3
    ledger = jl.read(store)
    assert not ledger.open and sorted(c.request for c in ledger.settled) == sorted(r.key for r in requests)
    assert all(c.seconds is not None and c.usd == pytest.approx(c.seconds * RATE / 3600) for c in ledger.settled)


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_budget_of_0_starts_nothing_and_spends_no_attempt(hub, api, token, repos, tmp_path):
    settings = settings_of(repos, token, tmp_path, LEADERBOARD_JOBS_BUDGET_USD="0")
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    requests = submit(store, 2)
    dispatcher = Dispatcher(settings, store, api)
    before = hub.commits[settings.requests_repo]
    for _ in range(2):
        assert dispatcher.tick().started == []
    assert ours(hub, settings) == [] and hub.commits[settings.requests_repo] == before
    stored = q.all_requests(store)
    assert [(r.status, r.attempts, r.error) for r in stored] == [(q.PENDING, 0, None)] * 2
    notes = budget_notes.notes_for(settings, store, stored)
    said = ("waiting for the Jobs budget: $0.00 of $0.00 spent in the last 30 days; no Job starts while "
            "LEADERBOARD_JOBS_BUDGET_USD is 0")
    assert notes == {r.key: said for r in requests}
    table = queue_frame(stored, q.PENDING, waiting=notes)
    assert list(table["Note"]) == [said, said]
    mine = my_requests_frame(stored, HUB_USER, waiting=notes)
    assert all(where.endswith(said) and where.startswith("position ") for where in mine["Where it is"])
    # the Queue tab itself: the Pending table's note, and the budget in the admin section (the local user is one)
    from leaderboard.ui import build_app

    fns = {getattr(dep.fn, "__name__", ""): dep.fn for dep in build_app(settings, store, jobs=dispatcher).fns.values()}
    *tables, summary = fns["frames"]()
    assert list(tables[0]["Note"]) == [said, said]
    shown = fns["decorate"](summary, None)
    assert shown[-1].startswith("**Jobs budget** of $0.00 over the last 30 days: $0.00 spent by 0 Job(s)")


@pytest.mark.slow  # Jobs on the loopback Hub
def test_no_budget_is_no_cap_and_a_space_warns_once(hub, api, token, repos, tmp_path, caplog):
    from leaderboard.running.scheduler import Scheduler

    settings = settings_of(repos, token, tmp_path)
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    requests = submit(store, 3)
    try:
        assert len(Dispatcher(settings, store, api).tick().started) == 3  # up to LEADERBOARD_JOBS_MAX, no cap
        assert budget_notes.notes_for(settings, store, q.all_requests(store)) == {}
        ledger = jl.read(store)
        assert sorted(r.request for r in ledger.open.values()) == sorted(r.key for r in requests)
    finally:
        stop_jobs(api, hub, settings)
    on_space = settings.with_(on_space=True)
    with caplog.at_level(logging.WARNING, logger="leaderboard.running.scheduler"):
        Scheduler(settings, store, jobs_api=api)  # not on a Space: no warning
        Scheduler(on_space.with_(jobs_budget_usd=5.0), store, jobs_api=api)
        assert "LEADERBOARD_JOBS_BUDGET_USD" not in caplog.text
        Scheduler(on_space, store, jobs_api=api)
    warned = [r for r in caplog.records if "LEADERBOARD_JOBS_BUDGET_USD is not set" in r.getMessage()]
    assert len(warned) == 1


@pytest.mark.slow  # Jobs on the loopback Hub
def test_an_unknown_price_starts_nothing_under_a_budget_and_says_why(hub, api, token, repos, tmp_path):
    settings = settings_of(repos, token, tmp_path, LEADERBOARD_JOBS_BUDGET_USD="100")
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    (request,) = submit(store, 1)
    dispatcher = Dispatcher(settings, store, api)
    dispatcher.budget.api = type("NoPrices", (), {"list_jobs_hardware": lambda self: 1 / 0})()
    assert dispatcher.tick().started == [] and ours(hub, settings) == []
    notes = budget_notes.notes_for(settings, store, q.all_requests(store), dispatcher.budget.known_rates())
    assert notes[request.key].startswith("waiting for the Jobs budget: the price of cpu-upgrade is unknown")
    assert q.load(store, request.path).attempts == 0


@pytest.mark.slow  # Jobs on the loopback Hub
def test_a_damaged_ledger_is_listed_never_read_as_a_request_and_holds_the_budget(hub, api, token, repos, tmp_path):
    settings = settings_of(repos, token, tmp_path, LEADERBOARD_JOBS_BUDGET_USD="100")
    store = HubStore(api, settings.results_repo, settings.requests_repo)
    (request,) = submit(store, 1)
    store.write_bytes(jl.PATH, b'{"open": {"hf-job:x": {"usd": "a lot"}}}')
    assert [r.key for r in q.all_requests(store)] == [request.key]
    assert Dispatcher(settings, store, api).tick().started == [] and ours(hub, settings) == []
    q.all_requests(store)  # a scan of the requests leaves the ledger's report alone
    assert [path for path, _ in store.damaged.listing()] == [jl.PATH]
    assert "cannot be read" in budget_notes.notes_for(settings, store, q.all_requests(store))[request.key]
    assert hub.files(settings.requests_repo)[jl.PATH].startswith(b'{"open"')  # never overwritten
    store.delete(jl.PATH)  # an admin removes it: the budget starts from nothing
    try:
        assert Dispatcher(settings, store, api).tick().started == [request.key]
        assert store.damaged.listing() == []
    finally:
        stop_jobs(api, hub, settings)


def test_the_queue_says_until_about_when_and_admins_see_the_spend(tmp_path):
    settings = Settings.from_env({"LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": "o/r",
                                  "LEADERBOARD_EXECUTOR": "hf-jobs", "LEADERBOARD_JOBS_IMAGE": "i",
                                  "LEADERBOARD_JOBS_BUDGET_USD": "10", "LEADERBOARD_JOBS_BUDGET_DAYS": "7"})
    moment = q.parse_time("2026-12-01T12:00:00+00:00")
    worst = 1.8 * (21600 + 900) / 3600  # l40sx1 for its whole timeout: $11.25, over the whole budget
    ledger = jl.Ledger(rates={"t4-small": 0.4, "l40sx1": 1.8})
    ledger.open["hf-job:a"] = jl.Reservation("o/running/0123456789ab_auto", "t4-small", 2.5, 0.4,
                                             "2026-12-01T10:00:00+00:00", "2026-12-01T16:15:00+00:00", "job-a")
    ledger.settled.append(jl.Charge("hf-job:b", "o/done/0123456789ab_auto", "t4-small", "job-b", 3600.0, 6.0,
                                    "2026-11-28T09:00:00+00:00"))
    ledger.settled.append(jl.Charge("hf-job:c", "o/old/0123456789ab_auto", "t4-small", "job-c", 3600.0, 50.0,
                                    "2026-11-20T09:00:00+00:00"))  # outside the 7 days
    pending = [q.Request(model=f"o/m{i}", revision=f"{i:040x}", params_billions=size, submitter="ada",
                         submitted_time=f"2026-12-01T0{i}:00:00+00:00")
               for i, size in enumerate((2.0, 10.0, 1.0))]
    notes = budget_notes.waiting_notes(settings, ledger, pending, moment=moment)
    # $8.50 committed; the first needs $2.50 more: the reservation settles by 16:15 (before the $6 leaves the window)
    head = ("waiting for the Jobs budget: $8.50 of $10.00 spent in the last 7 days; next start about 2026-12-01 16:15 "
            "UTC")
    assert notes[pending[0].key] == head
    assert notes[pending[1].key].startswith(f"waiting for the Jobs budget: its worst case, ${worst:.2f} (l40sx1")
    assert notes[pending[2].key] == head  # behind the first
    text = budget_notes.admin_text(settings, ledger, moment=moment)
    assert "$6.00 spent by 1 Job(s) (3,600 s of running time), $2.50 reserved by 1 open Job(s)" in text
    assert "of $10.00 over the last 7 days" in text and "o/running/0123456789ab_auto: Job job-a on t4-small" in text
    assert "settles by 2026-12-01 16:15:00 UTC" in text
    # once the reservation is gone, the $6 leaving the window frees enough on 2026-12-05 09:00
    ledger.open.clear()
    ledger.settled.append(jl.Charge("hf-job:d", "o/x/0123456789ab_auto", "t4-small", "job-d", 3600.0, 3.0,
                                    "2026-12-01T11:00:00+00:00"))
    assert budget_notes.waiting_notes(settings, ledger, pending[:1], moment=moment)[pending[0].key].endswith(
        "$9.00 of $10.00 spent in the last 7 days; next start about 2026-12-05 09:00 UTC")


def test_the_ledger_stays_small_over_a_long_window_and_reads_back(tmp_path):
    from leaderboard.store.local import LocalStore

    store = LocalStore(tmp_path / "store")
    moment = q.parse_time("2026-12-31T12:00:00+00:00")
    ledger = jl.Ledger(rates={"t4-small": 0.4})
    for n in range(600):  # 20 Jobs a day for 30 days, one of the last ones still open
        ended = q.iso(moment - timedelta(hours=36 * n / 30 + 1))
        ledger.settled.append(jl.Charge(f"hf-job:{n:012x}", f"o/m{n}/0123456789ab_auto", "t4-small", f"job-{n}",
                                        1800.0, 0.2, ended))
    ledger.open["hf-job:open"] = jl.Reservation("o/open/0123456789ab_auto", "t4-small", 2.5, 0.4, q.iso(moment),
                                                q.iso(moment + timedelta(hours=6)), "job-open")
    window = 30 * 86400.0
    spent = ledger.spent(moment, window)
    jl.write(store, ledger, window, moment)
    again = jl.read(store, moment)
    assert again.spent(moment, window) == pytest.approx(spent) and again.reserved() == 2.5
    assert sum(c.jobs for c in again.settled) == sum(1 for n in range(600) if 36 * n / 30 + 1 < 30 * 24)
    assert len(again.settled) <= 30 + 2 * 20 and len((tmp_path / "store" / jl.PATH).read_bytes()) < 20_000
    assert [r.path for r in q.all_requests(store)] == [] and store.damaged.listing() == []


@pytest.mark.parametrize("entry, said", [
    ({"settled": [{"lease": "hf-job:x", "request": "o/m/0123456789ab_auto", "flavor": "t4-small", "job": "j",
                   "seconds": 10.0, "usd": 0.01, "ended": "2999-01-01T00:00:00+00:00"}]},
     "settled[0].ended (2999-01-01T00:00:00+00:00) is in the future"),
    ({"settled": [{"lease": "hf-job:x", "request": "o/m/0123456789ab_auto", "flavor": "t4-small", "job": "j",
                   "seconds": 10.0, "usd": 0.01, "ended": "1970-01-01T00:00:00+00:00"}]},
     "is before any Job of this leaderboard could have run"),
    ({"open": {"hf-job:y": {"request": "o/m/0123456789ab_auto", "flavor": "t4-small", "usd": 2.5,
                            "usd_per_hour": 0.4, "reserved": "2999-01-01T00:00:00+00:00",
                            "until": "2999-01-01T06:00:00+00:00"}}},
     "open.hf-job:y.reserved (2999-01-01T00:00:00+00:00) is in the future"),
    ({"open": {"hf-job:z": {"request": "o/m/0123456789ab_auto", "flavor": "t4-small", "usd": 2.5,
                            "usd_per_hour": 0.4, "reserved": "2026-11-01T00:00:00+00:00",
                            "until": "2026-10-01T00:00:00+00:00"}}},
     "open.hf-job:z.until is before its reservation"),
])
def test_a_time_no_job_can_have_is_damage_not_a_charge(tmp_path, entry, said):
    """A charge dated in 2999 would be counted as live until 2999 plus the window, holding every Job; it is reported
    as damage instead, like any other, and the ledger is never overwritten."""
    from leaderboard.store.local import LocalStore

    store = LocalStore(tmp_path / "store")
    store.write_bytes(jl.PATH, json.dumps({"version": 1, "rates": {}, "open": {}, "settled": [], **entry}).encode())
    ledger = jl.read(store)
    assert said in ledger.damaged
    assert [path for path, _ in store.damaged.listing()] == [jl.PATH]
    jl.write(store, ledger, 86400.0)
    assert json.loads((tmp_path / "store" / jl.PATH).read_text())  # left as it was, for an admin
    skewed = q.iso(q.now() + timedelta(seconds=60))  # a clock a minute ahead is no damage
    store.write_bytes(jl.PATH, json.dumps({"version": 1, "rates": {}, "open": {}, "settled": [
        {"lease": "a", "request": "o/m/0123456789ab_auto", "flavor": "t4-small", "job": "j", "seconds": 1.0,
         "usd": 0.5, "ended": skewed}]}).encode())
    assert jl.read(store).damaged == "" and jl.read(store).spent(q.now(), 86400.0) == 0.5
