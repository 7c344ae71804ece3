"""The cost of publishing one run at 100, 1,000 and 5,000 finished runs: time and store reads.

For each size, a local store in a temporary folder gets that many finished runs (a FINISHED request and a results
file each, and the board built from them); then one more run is published as the scheduler does it (publish: its
details, the dataset card when it changed and its results in one write; its request closed FINISHED; its row put on
leaderboard.parquet) and timed, several times (median, each a new run). The store reads of one publish are
counted (reads of files and listings; the queue's own reads of the request are shown apart). For comparison, the
full rebuild from the results files, which every publish did before (and which the repair still does), is timed
once. Goal: the 5,000-run publish within 2x the 100-run one, and the same reads at every size.

Run: `.venv/bin/python bench/publish_cost.py [sizes...]` (default 100 1000 5000). Not part of the test suite.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from evaluator import api  # noqa: E402
from leaderboard.board import publish as publishing  # noqa: E402
from leaderboard.board.columns import schema  # noqa: E402
from leaderboard.board.file import board_is_current, rebuild_leaderboard  # noqa: E402
from leaderboard.settings import Settings  # noqa: E402
from leaderboard.store.local import LocalStore  # noqa: E402
from leaderboard.submissions import records as queue  # noqa: E402
from leaderboard.submissions.records import Request  # noqa: E402

REPEATS = 9


class CountingStore:
    """A store that counts its reads (files read, folders listed)."""

    def __init__(self, inner):
        self.inner, self.reads = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def read_bytes(self, path):
        self.reads.append(path)
        return self.inner.read_bytes(path)

    def read_json(self, path):
        self.reads.append(path)
        return self.inner.read_json(path)

    def list(self, prefix, suffix=""):
        self.reads.append(prefix + "/")
        return self.inner.list(prefix, suffix)


def results_of(i: int, benchmarks: list[str], model: str, sha: str) -> dict:
    """A results file of a finished run with a headline score on each benchmark."""
    found = {}
    for name in benchmarks:
        card = api.card(name)
        scores = {m.key: ((i * 37 + len(m.key)) % 100) / 100 for m in card.metrics}
        found[name] = {"scores": scores, "counts": {"items": 100},
                       "coverage": {"scored": 100, "items": 100, "suite_items": 100, "share": 1.0}}
    return {"model": model, "revision": sha, "precision": "auto", "model_type": "pretrained",
            "params_billions": 0.1 + i % 20, "key": f"{model}/{sha[:12]}_auto", "finished_time": "2026-01-01T00:00:00",
            "run": {"suite": "sample", "dtype": "float32", "device": "cpu", "limit": 0}, "benchmarks": found,
            "skipped": {}}


def build_store(root: Path, runs: int, benchmarks: list[str]) -> LocalStore:
    """`runs` finished runs written straight into the store's layout (no fsync: only the publish is measured)."""
    store = LocalStore(root)
    for i in range(runs):
        sha = f"{i:040x}"
        model = f"org{i % 37}/model-{i}"
        request = Request(model=model, revision=sha, status=queue.FINISHED, finished_time=queue.iso(queue.now()))
        for path, data in ((request.path, request.to_dict()), (f"results/{request.key}.json",
                                                               results_of(i, benchmarks, model, sha))):
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(data, indent=2, sort_keys=True))
    return store


def run_output(folder: Path, i: int, benchmarks: list[str]) -> Path:
    """A worker's output: results.json and a details file of 200 rows per benchmark."""
    (folder / "details").mkdir(parents=True)
    results = results_of(i, benchmarks, "x", "0" * 40)
    for field in ("model", "revision", "precision", "model_type", "params_billions", "key"):
        results.pop(field)
    (folder / "results.json").write_text(json.dumps(results))
    for name in benchmarks:
        rows = 200
        pq.write_table(pa.table({"question_id": [f"q{j}" for j in range(rows)],
                                 "prompt": [f"question {j} " * 20 for j in range(rows)],
                                 "prediction": [f"answer {j}" for j in range(rows)],
                                 "score": [float(j % 2) for j in range(rows)]}), folder / "details" / f"{name}.parquet")
    return folder


def publish_one(settings: Settings, store, out: Path, i: int) -> None:
    """One run through the scheduler's steps after its evaluation: publish, close FINISHED, its board row."""
    request = Request(model=f"new/model-{i}", revision=f"{i:040x}", status=queue.RUNNING, lease_owner="bench")
    queue.save(store, request)
    results = publishing.publish(store, request, out, settings)
    closed = queue.finish(store, request.path, "bench", queue.FINISHED)
    assert publishing.publish_board(settings, store, closed, results)


def measure(runs: int, benchmarks: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        settings = Settings.from_env({}, home=root / "home", benchmarks=tuple(benchmarks))
        store = build_store(root / "store", runs, benchmarks)
        board = schema(settings.benchmarks)
        start = time.perf_counter()
        rebuild_leaderboard(store, board)
        rebuild = time.perf_counter() - start
        publish_one(settings, store, run_output(root / "warm", 10**6, benchmarks), 10**6)  # the card is written
        times, reads = [], None
        for k in range(REPEATS):
            out = run_output(root / f"out{k}", 10**6 + 1 + k, benchmarks)
            counting = CountingStore(store)
            start = time.perf_counter()
            publish_one(settings, counting, out, 10**6 + 1 + k)
            times.append(time.perf_counter() - start)
            key = f"new/model-{10**6 + 1 + k}/{(10**6 + 1 + k):040x}"[:-28] + "_auto"
            reads = [r.replace(key, "<key>") for r in counting.reads]
        assert board_is_current(store)
    return {"runs": runs, "publish": statistics.median(times), "rebuild": rebuild,
            "store_reads": [r for r in reads if not r.startswith("requests/")],
            "queue_reads": [r for r in reads if r.startswith("requests/")]}


def main(sizes: list[int]) -> None:
    benchmarks = list(api.benchmark_names())
    found = []
    for runs in sizes:
        result = measure(runs, benchmarks)
        found.append(result)
        print(f"{runs:>5} finished runs: publish {result['publish'] * 1000:7.1f} ms (median of {REPEATS}), "
              f"{len(result['store_reads'])} store reads {result['store_reads']} + {len(result['queue_reads'])} of "
              f"its request; full rebuild (before: every publish) {result['rebuild'] * 1000:8.1f} ms", flush=True)
    base = found[0]
    for result in found[1:]:
        same = result["store_reads"] == base["store_reads"]
        print(f"{result['runs']} vs {base['runs']} runs: publish {result['publish'] / base['publish']:.2f}x "
              f"(goal: within 2x), reads {'the same' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 1000, 5000])
