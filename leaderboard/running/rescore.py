"""Grade finished runs in the store again with another judge, without running the models again.

    python -m leaderboard.running.rescore --all                        every finished run, with LEADERBOARD_JUDGE
    python -m leaderboard.running.rescore --key org/model/0123456789ab_auto [--key ...] --judge 'endpoint:<url>|<model>'

For each run: its results and details are copied out of the store into a temporary folder, the evaluator grades
its judged benchmarks again from the stored answers (evaluator.api.rescore_run; the run columns the publisher put in
front of each details file are taken off first and put back after), and the new details and results go back to the
store in one write; leaderboard.parquet is rebuilt once at the end. A run that has no judged benchmark
is left alone; a run that fails to grade is reported and left unchanged (nothing partial is written).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evaluator import api
from leaderboard.board.columns import schema
from leaderboard.board.dataset_card import with_run_columns, without_run_columns
from leaderboard.board.file import load_results, read_results, rebuild_leaderboard
from leaderboard.settings import Settings
from leaderboard.store import Store, open_store
from leaderboard.submissions.records import is_request_key


@dataclass
class Regraded:
    key: str
    ok: bool
    message: str


def _download(store: Store, key: str, folder: Path) -> dict:
    """Copy a run's results and details out of the store into `folder`; returns the results (a damaged results file
    is refused and listed in the store's ledger, see board.file.read_results)."""
    results = read_results(store, f"results/{key}.json")
    if results is None:
        raise FileNotFoundError(f"no readable results for {key} (none, or a damaged file the Queue tab lists)")
    (folder / "details").mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    for path in store.list(f"details/{key}", suffix=".parquet"):
        content = store.read_bytes(path)
        if content is not None:  # as the evaluator wrote it: without the run columns the publisher added
            (folder / "details" / path.rsplit("/", 1)[1]).write_bytes(without_run_columns(content))
    return results


def regrade(store: Store, key: str, judge_spec: str, token: str | None) -> Regraded:
    """Grade one stored run again and write its new details and results back (one write)."""
    if not is_request_key(key):
        return Regraded(key, False, "not a run key (org/model/<sha12>_<precision>)")
    with tempfile.TemporaryDirectory(prefix="rescore-") as tmp:
        run_dir, out_dir = Path(tmp) / "run", Path(tmp) / "out"
        try:
            results = _download(store, key, run_dir)
            if not api.judged_benchmarks(results):
                return Regraded(key, True, "no judged benchmark; left as it was")
            new = api.rescore_run(run_dir, out_dir, judge_spec, token)
        except Exception as exc:  # one run that cannot be graded must not stop the others
            return Regraded(key, False, api.redact(f"{type(exc).__name__}: {exc}", token))
        files = {f"details/{key}/{p.name}": with_run_columns(p.read_bytes(), key, results["model"], results["revision"])
                 for p in sorted((out_dir / "details").glob("*.parquet"))}
        files[f"results/{key}.json"] = (out_dir / "results.json").read_bytes()
        store.write_many(files)
    return Regraded(key, True, f"graded by {new['run']['judge_name']}")


def rescore_store(settings: Settings, store: Store, keys: list[str], judge_spec: str) -> list[Regraded]:
    """Grade the runs named by `keys` again (all finished runs when keys is empty) and rebuild the board."""
    if not judge_spec:
        raise ValueError("no judge: set LEADERBOARD_JUDGE or pass --judge")
    token = settings.judge_bearer
    chosen = keys or [r["key"] for r in load_results(store) if isinstance(r.get("key"), str)]
    done = [regrade(store, key, judge_spec, token) for key in chosen]
    rebuild_leaderboard(store, schema(settings.benchmarks))
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m leaderboard.running.rescore", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="every finished run in the store")
    which.add_argument("--key", action="append", default=[], help="a run's key (repeatable)")
    parser.add_argument("--judge", default=None, help="judge spec (default: LEADERBOARD_JUDGE)")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    judge = args.judge or settings.judge
    if not judge:
        print("error: no judge: set LEADERBOARD_JUDGE or pass --judge", file=sys.stderr)
        return 1
    done = rescore_store(settings, open_store(settings), [] if args.all else args.key, judge)
    for item in done:
        print(f"{'ok' if item.ok else 'FAILED'} {item.key}: {item.message}")
    return 0 if all(item.ok for item in done) else 1


if __name__ == "__main__":
    sys.exit(main())
