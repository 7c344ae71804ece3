"""Results on model pages, measured on the loopback Hub (tests/hub_server.py) with the real huggingface_hub client and
the real Hub store.

N model repos are made on the loopback Hub, and a complete run of each (every benchmark scored, at the model's head)
is published into a results dataset on it, the way the scheduler publishes: results, details, the run's
`eval_results/<key>.yaml` and the board. Each run is then proposed to its model page (leaderboard.board.proposals, as
the Explorer's button does, each by its own visitor), and each is proposed again by someone else. It counts:
- runs published;
- files valid: each run's `.eval_results/<slug>.yaml` as read back from its pull request's ref (`refs/pr/<n>`) on the
  model repo, parsed with `yaml.safe_load` as a list of entries with the spec's required fields (`dataset.id`,
  `dataset.task_id`, `value`) and numeric values, equal to the run's file in the results dataset;
- pull requests opened on the model repos;
- duplicates after asking again: pull requests beyond one per run once every run was proposed twice.

Run: `.venv/bin/python bench/eval_results.py [N] [--keep DIR]` (default 5). Not part of the test suite. `--keep DIR`
writes each pull request's file, as read back from the loopback Hub, to DIR/<org>__<model>.yaml. The last line:
`eval results: <N> runs, <N> files valid, <N> pull requests, 0 duplicates after asking again`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ["HF_HUB_DISABLE_XET"] = "1"  # the loopback Hub serves Git LFS uploads, not Xet (tests/hub_server.py)
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml  # noqa: E402

from evaluator import api  # noqa: E402

RESULTS_REPO, REQUESTS_REPO = "bench-org/results", "bench-org/requests"


def valid_entries(text: bytes | None) -> list[dict] | None:
    """The file's entries when it is valid as the Hub's spec reads it (a list of entries, each with dataset.id,
    dataset.task_id and a numeric value), else None."""
    try:
        found = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return None
    if not isinstance(found, list) or not found:
        return None
    for entry in found:
        dataset = entry.get("dataset") if isinstance(entry, dict) else None
        value = entry.get("value") if isinstance(entry, dict) else None
        if not isinstance(dataset, dict) or not all(isinstance(dataset.get(k), str) and dataset[k]
                                                    for k in ("id", "task_id")):
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
    return found


def complete_results(benchmarks: list[str]) -> dict:
    """A results file (as the evaluator writes it) scoring every metric of every benchmark, complete."""
    scores = {}
    for i, name in enumerate(benchmarks):
        card = api.card(name)
        metrics = {m.key: round(0.3 + 0.05 * (i + j % 5), 4) for j, m in enumerate(card.metrics)}
        scores[name] = {"scores": metrics, "counts": {"items": 30}, "extra": {},
                        "coverage": {"scored": 30, "items": 30, "suite_items": 30, "share": 1.0}}
    return {"benchmarks": scores, "skipped": {}, "finished_time": "2026-11-27T01:00:00+00:00",
            "run": {"suite": "sample", "limit": 0, "dtype": "bfloat16", "device": "cuda",
                    "judge": {"kind": "endpoint", "base_url": "https://judge.example/v1", "model": "judge-model"}}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="write each pull request's file here")
    args = parser.parse_args(argv)

    from huggingface_hub import HfApi

    from leaderboard.board import publish as publishing
    from leaderboard.board import proposals
    from leaderboard.board.eval_results import path as eval_results_path
    from leaderboard.settings import Settings
    from leaderboard.store.hub import HubStore
    from leaderboard.submissions import records as queue
    from leaderboard.submissions.identity import Visitor
    from tests.hub_server import HubServer, hub_client_online

    home = Path(tempfile.mkdtemp(prefix="bench-eval-results-"))
    with HubServer() as hub, hub_client_online():
        writer = hub.issue_token("bench-bot", orgs=["bench-org"])
        space_token = hub.issue_token("leaderboard-bot")
        settings = Settings.from_env({}, home=home, store_backend="hub", results_repo=RESULTS_REPO,
                                     requests_repo=REQUESTS_REPO, hf_token=space_token, space_id="bench-org/board",
                                     run_scheduler=False)
        store = HubStore(HfApi(endpoint=hub.url, token=writer), RESULTS_REPO, REQUESTS_REPO)
        space_hub = HfApi(endpoint=hub.url, token=space_token)
        requests = []
        for i in range(args.runs):
            model = f"maker-{i}/vlm-{i}"
            head = hub.create_model(model, {"config.json": b"{}"})
            out = home / f"run-{i}"
            (out / "details").mkdir(parents=True)
            (out / "results.json").write_text(json.dumps(complete_results(api.benchmark_names())))
            request = queue.Request(model=model, revision=head, precision="bfloat16", params_billions=7.0,
                                    status=queue.RUNNING, lease_owner="bench", lease_expires=queue.iso(queue.now()))
            queue.save(store, request)
            results = publishing.publish(store, request, out, settings)
            closed = queue.finish(store, request.path, "bench", queue.FINISHED)
            publishing.publish_board(settings, store, closed, results)
            requests.append(closed)

        settings = settings.with_(eval_prs_per_day=max(settings.eval_prs_per_day, args.runs))
        asked = [proposals.propose(settings, store, r.key, Visitor(f"visitor-{i}"), hub=space_hub)
                 for i, r in enumerate(requests)]
        again = [proposals.propose(settings, store, r.key, Visitor(f"another-{i}"), hub=space_hub)
                 for i, r in enumerate(requests)]
        refused = [a.message for a in asked if not a.opened]
        pulls = {r.model: [d for d in hub.discussions(r.model) if d["is_pull_request"]] for r in requests}
        opened = sum(len(found) for found in pulls.values())
        duplicates = sum(max(0, len(found) - 1) for found in pulls.values())
        relinked = sum(1 for first, second in zip(asked, again) if second.url and second.url == first.url)

        valid = 0
        for request in requests:
            for pull in pulls[request.model][:1]:
                text = hub.files(request.model, repo_type="model", revision=pull["ref"]).get(proposals.repo_file())
                published = store.read_bytes(eval_results_path(request.key))
                if valid_entries(text) is not None and text == published:
                    valid += 1
                if args.keep is not None and text is not None:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    (args.keep / f"{request.model.replace('/', '__')}.yaml").write_bytes(text)

    for message in refused:
        print(f"refused: {message}")
    print(f"asked again: {relinked} of {len(requests)} linked the pull request already open")
    print(f"eval results: {len(requests)} runs, {valid} files valid, {opened} pull requests, {duplicates} duplicates "
          "after asking again")
    return 0 if valid == len(requests) == opened and duplicates == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
