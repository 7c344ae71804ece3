"""Hugging Face Jobs dispatch: N requests as Jobs on the loopback Hub (tests/hub_server.py: the real huggingface_hub
client, each Job a real `python -m leaderboard.running.job_run` subprocess evaluating the tiny LLaVA on one CURE item
and publishing to the Hub store over HTTP). The stand-in is as strict as the Jobs API where it matters: it refuses
label values outside `^[A-Za-z0-9_-]{1,63}$`, keeps each Job in SCHEDULING for --scheduling seconds before it runs,
and knows only huggingface_hub's own flavors. The models are named with dots and capitals
(`Bench-Org/Tiny-LLaVA-1.5-7b-hf-<i>`), as most VLMs are. Prints the wall time, the most Jobs at once, the time the
Jobs waited in SCHEDULING, the commits per repository (and per evaluation), what a heartbeat commit a minute would
have cost instead, what the runs cost (`run.cost` in the results files, and the Jobs budget's ledger: each Job's
running time x its flavor's price, as the loopback Jobs API lists it), and the harm: requests neither FINISHED nor
waiting for the Jobs budget, attempts spent while waiting, requests with more than one Job, Jobs that did not complete.

With a Jobs budget (LEADERBOARD_JOBS_BUDGET_USD: `--budget-usd X`, or `--budget-half`: room for the worst cases of
about half the requests, each the price of its flavor x its timeout) at most as many Jobs run at once as there are
requests, so the budget is what holds them back: it prints how many started at first, and that the others started
only once the first ones had ended and been settled in the ledger. With `--budget-usd 0` no Job starts: it ticks a few
times and prints how many requests wait for the budget.

Run: `.venv/bin/python bench/jobs_dispatch.py [--requests 8] [--max-jobs 4] [--scheduling 5] [--budget-usd X |
--budget-half]` (about a minute on 2 cores).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

WORK = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
os.environ.update({"HF_HOME": str(WORK / "hf-home"), "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
                   "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"})
for _var in [v for v in os.environ if v.startswith("LEADERBOARD_")]:
    os.environ.pop(_var)

import _models  # noqa: E402  (sys.path to the project root)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-jobs", type=int, default=None, help="default: 4; with a budget, --requests")
    parser.add_argument("--scheduling", type=float, default=5.0, help="seconds each Job waits in SCHEDULING")
    parser.add_argument("--budget-usd", type=float, default=None, help="LEADERBOARD_JOBS_BUDGET_USD (0: no Job starts)")
    parser.add_argument("--budget-half", action="store_true",
                        help="a Jobs budget with room for the worst cases of about half the requests")
    args = parser.parse_args()

    from huggingface_hub import HfApi

    from leaderboard.running import hf_jobs
    from leaderboard.running.job_dispatch import Dispatcher
    from leaderboard.running.job_flavors import hardware_rates
    from leaderboard.settings import Settings
    from leaderboard.store.hub import HubStore
    from leaderboard.submissions import budget_notes, jobs_ledger
    from leaderboard.submissions import records as q
    from tests.hub_server import HubServer, hub_client_online

    folder = _models.build_llava(WORK / "tiny-llava")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_TOKEN")}
    env.update(HF_HUB_OFFLINE="0", PYTHONPATH=str(_models.ROOT),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    jobs_dir = WORK / "jobs"
    jobs_dir.mkdir()
    with HubServer(job_cwd=jobs_dir, job_env=env, job_scheduling=args.scheduling) as hub, hub_client_online():
        token = hub.issue_token("ada", orgs=["bench-org"])
        os.environ["HF_ENDPOINT"] = hub.url
        budget = args.budget_usd
        if args.budget_half:  # cpu-upgrade for a Job's whole timeout (LEADERBOARD_MAX_RUN_SECONDS + the margin)
            rate = hardware_rates(HfApi(endpoint=hub.url, token=token))["cpu-upgrade"]
            budget = (args.requests // 2 + 0.5) * rate * jobs_ledger.job_timeout(Settings.from_env({})) / 3600
        max_jobs = args.max_jobs or (args.requests if budget is not None else 4)
        settings = Settings.from_env({
            "LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": "bench-org/results",
            "LEADERBOARD_REQUESTS_REPO": "bench-org/requests", "HF_TOKEN": token, "LEADERBOARD_EXECUTOR": "hf-jobs",
            "LEADERBOARD_JOBS_IMAGE": "hf.co/spaces/bench-org/leaderboard", "LEADERBOARD_JOBS_NAMESPACE": "bench-org",
            "LEADERBOARD_JOBS_MAX": str(max_jobs), "LEADERBOARD_BENCHMARKS": "cure", "LEADERBOARD_LIMIT": "1",
            "LEADERBOARD_JOBS_BUDGET_USD": "" if budget is None else repr(budget),
            "LEADERBOARD_BATCH_SIZE": "2", "LEADERBOARD_HOME": str(WORK / "space"), "LEADERBOARD_HEARTBEAT_SECONDS": "1",
            "LEADERBOARD_LEASE_SECONDS": "60",
            "LEADERBOARD_JOBS_FLAVORS": "1=cpu-upgrade,70=l40sx4"})  # the Jobs run on this machine's CPU
        api = HfApi(endpoint=hub.url, token=token)
        store = HubStore(api, settings.results_repo, settings.requests_repo)
        requests = []
        for i in range(args.requests):
            request = q.Request(model=f"Bench-Org/Tiny-LLaVA-1.5-7b-hf-{i}", revision=f"{uuid.uuid4().hex}{i:08x}",
                                source="local", local_path=str(folder), params_billions=0.01)
            q.save(store, request)
            requests.append(request)
        before = {repo: hub.commits[repo] for repo in (settings.requests_repo, settings.results_repo)}
        dispatcher = Dispatcher(settings, store, api)
        started, most, ticks, starts = time.monotonic(), 0, 0, []
        while time.monotonic() - started < 900:
            report = dispatcher.tick()
            ticks += 1
            most = max(most, sum(1 for j in hub.jobs if j.stage in ("SCHEDULING", "RUNNING")))
            ledger = jobs_ledger.read(store)  # after the tick's commits: what its claims saw settled and reserved
            committed = ledger.committed(q.now(), jobs_ledger.window_seconds(settings))
            starts.append((len(report.started), len(ledger.settled), committed))
            if all(q.load(store, r.path).status in (q.FINISHED, q.FAILED) for r in requests):
                break
            if budget == 0 and ticks >= 3:
                break
            time.sleep(1.0)
        wall = time.monotonic() - started
        for _ in range(30):  # the last Jobs end after closing their requests: what they cost is read once they have
            if all(j.stage not in ("SCHEDULING", "RUNNING") for j in hub.jobs):
                break
            time.sleep(0.5)
        dispatcher.tick()
        final = [q.load(store, r.path) for r in requests]
        per_request = {}
        for job in hub.jobs:
            per_request[job.labels.get(hf_jobs.LABEL_REQUEST)] = per_request.get(job.labels.get(
                hf_jobs.LABEL_REQUEST), 0) + 1
        waited = [hf_jobs.scheduling_seconds(api.inspect_job(job_id=j.id, namespace="bench-org")) or 0.0
                  for j in hub.jobs]
        spent = {repo: hub.commits[repo] - n for repo, n in before.items()}
        running_seconds = sum((q.parse_time(r.finished_time) - q.parse_time(r.started_time)).total_seconds()
                              for r in final if r.finished_time and r.started_time)
        print(f"requests {args.requests}, at most {max_jobs} Jobs at once, {ticks} dispatcher ticks")
        print(f"wall time {wall:.1f} s; most Jobs at once {most}; each Job waited {min(waited, default=0):.0f}-"
              f"{max(waited, default=0):.0f} s in SCHEDULING")
        print(f"commits: requests repo {spent[settings.requests_repo]} "
              f"({spent[settings.requests_repo] / args.requests:.2f} per evaluation), results repo "
              f"{spent[settings.results_repo]} ({spent[settings.results_repo] / args.requests:.2f} per evaluation)")
        print(f"evaluation time {running_seconds:.0f} s in all: a heartbeat commit a minute would have cost "
              f"{running_seconds / 60:.1f} more commits here, and {60 * max_jobs} an hour with "
              f"{max_jobs} evaluations running")
        ledger = jobs_ledger.read(store)
        pending = list(dispatcher.budget.pending.values())  # settled from the Jobs API, riding the next commit
        usd = sum(c.usd or 0.0 for c in ledger.settled) + sum(p.usd or 0.0 for p in pending)
        seconds = sum(c.seconds or 0.0 for c in ledger.settled) + sum(p.seconds or 0.0 for p in pending)
        results = [json.loads(data) for path, data in hub.files(settings.results_repo).items()
                   if path.startswith("results/") and path.endswith(".json")]
        costed = sum(isinstance((r.get("run") or {}).get("cost"), dict) for r in results)
        print(f"cost: recorded in {costed} of {len(results)} results files; ${usd:.6f} for {seconds:.0f} GPU-seconds "
              f"(the ledger: {len(ledger.settled)} Jobs settled, {len(pending)} more settled from the Jobs API and "
              f"riding along the next commit, {len(ledger.open)} reservations open)")
        waiting = budget_notes.notes_for(settings, store, final)
        if budget is not None:
            print(budget_line(budget, starts, final, waiting))
        print(f"harm: not FINISHED nor waiting on the budget "
              f"{sum(r.status != q.FINISHED and r.key not in waiting for r in final)}, "
              f"attempts spent while waiting {sum(r.attempts for r in final if r.key in waiting)}, "
              f"more than one Job {sum(n > 1 for n in per_request.values())}, "
              f"Jobs not COMPLETED {sum(j.stage != 'COMPLETED' for j in hub.jobs if j.stage not in ('RUNNING',))}")
    return 0


def budget_line(budget: float, starts: list[tuple[int, int, float]], final: list, waiting: dict) -> str:
    """What the Jobs budget did: the Jobs started at first, the later starts and how many Jobs had been settled when
    each came, and the most that was ever spent and reserved at once."""
    total = sum(n for n, _, _ in starts)
    if budget == 0 or total == 0:
        return f"budget: {total} Jobs started; {len(waiting)} of {len(final)} requests waiting on the budget"
    first = next(i for i, (n, _, _) in enumerate(starts) if n)
    later = [(n, settled) for n, settled, _ in starts[first + 1:] if n]
    after = min((settled for _, settled in later), default=0)
    most = max(committed for _, _, committed in starts)
    return (f"budget: ${budget:.4f}; {starts[first][0]} Jobs started at first, the other {sum(n for n, _ in later)} "
            f"only after the first ones had ended and been settled (at least {after} settled at each later start); "
            f"at most ${most:.4f} spent and reserved at once; {len(waiting)} of {len(final)} requests still waiting")


if __name__ == "__main__":
    sys.exit(main())
