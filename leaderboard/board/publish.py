"""A finished run into the results dataset: its details, results, evaluation results in the Hub's format
(eval_results.py) and dataset card in one store write (publish), its row on leaderboard.parquet once its request is
FINISHED (publish_board), and the board rebuilt from the published runs when it is behind them or an admin hid or
showed a run (rebuild_board)."""
from __future__ import annotations

import json
import logging
from pathlib import Path

from leaderboard.board.columns import schema
from leaderboard.board.costs import JobSeen, run_cost
from leaderboard.board.dataset_card import card_update, with_run_columns
from leaderboard.board.eval_results import eval_results_file
from leaderboard.board.eval_results import path as eval_results_path
from leaderboard.board.eval_results import stored as eval_results_stored
from leaderboard.board.file import add_run, board_is_current, rebuild_leaderboard
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions.actions import board_marks
from leaderboard.submissions.records import Request

log = logging.getLogger(__name__)


def publish(store: Store, request: Request, out_dir: Path, settings: Settings | None = None,
            job: JobSeen | None = None) -> dict:
    """Copy a finished run into the store in one write (one commit on the Hub store): details first (each with the
    run's run_key, model and revision in front, so the files of every run load as one dataset), then the results
    dataset's card (README.md) when its text changed, results last; details of an earlier attempt's benchmarks
    that this run does not have are removed, so a re-run replaces, never mixes. The run's evaluation results in the
    Hub's format (eval_results.py) go in the same write when it earns them. Reads the same things whatever the
    number of runs: the listing of the run's own details folder and the stored card (and, when the run earns no
    evaluation-results file, the listing of its model's eval_results folder, to remove an earlier attempt's).
    Returns the results as written, with what the run cost as `run.cost` (leaderboard.board.costs; `job`: what the
    Jobs API said of the Job publishing it, None for a run that is not a Job). The run reaches the board once its
    request is FINISHED (close_run) and its row is added (publish_board)."""
    settings = settings or Settings()
    results = json.loads((out_dir / "results.json").read_text())
    results.update({"model": request.model, "revision": request.revision, "precision": request.precision,
                    "model_type": request.model_type, "params_billions": request.params_billions,
                    "architecture": request.architecture, "submitted_time": request.submitted_time,
                    "key": request.key, "source": request.source, "served": request.served,
                    "display_name": request.display_name})
    if isinstance(results.get("run"), dict):
        results["run"]["cost"] = run_cost(results, settings, job)
    files: dict[str, bytes | None] = {path: None for path in store.list(f"details/{request.key}", suffix=".parquet")}
    details = sorted((out_dir / "details").glob("*.parquet"))
    for parquet in details:
        files[f"details/{request.key}/{parquet.name}"] = with_run_columns(parquet.read_bytes(), request.key,
                                                                          request.model, request.revision)
    files.update(card_update(store, schema(settings.benchmarks), [p.stem for p in details], settings.space_id,
                             settings.results_repo))
    evaluation = eval_results_file(results, settings, request.hidden)
    if evaluation is not None:
        files[eval_results_path(request.key)] = evaluation
    elif eval_results_stored(store, request.key):
        files[eval_results_path(request.key)] = None  # an earlier attempt's, which this run does not earn
    encoded = json.dumps(results, indent=2, sort_keys=True).encode()
    files[f"results/{request.key}.json"] = encoded
    store.write_many(files)
    return json.loads(encoded)


def publish_board(settings: Settings, store: Store, request: Request, results: dict) -> bool:
    """Put a run whose request is now FINISHED on leaderboard.parquet: its row replaced or added, the rest as it
    was (board.file.add_run: one read and one write, whatever the number of runs). A failure is logged, never
    raised: the next tick finds the board behind the store and rebuilds it. Returns whether it was written."""
    try:
        add_run(store, schema(settings.benchmarks), f"results/{request.key}.json", results, board_marks(request))
        return True
    except Exception as exc:  # noqa: BLE001 - the board is rebuilt from the store at the next tick
        log.warning("adding %s to leaderboard.parquet failed (the next tick rebuilds it): %s", request.key,
                    settings.scrub(str(exc)))
        return False


def rebuild_board(settings: Settings, store: Store, only_if_stale: bool = False) -> bool:
    """Rebuild leaderboard.parquet from the published runs (when `only_if_stale`: only if it does not list exactly
    them; each tick asks). The repair, and what an admin's hide or show does; a publish adds its one row instead
    (publish_board). A failure is logged, never raised: the next tick checks again. Returns whether it was
    rebuilt."""
    try:
        if only_if_stale and board_is_current(store):
            return False
        rebuild_leaderboard(store, schema(settings.benchmarks))
        return True
    except Exception as exc:  # noqa: BLE001 - the board is rebuilt from the store at the next tick
        log.warning("rebuilding leaderboard.parquet failed (the next tick tries again): %s", settings.scrub(str(exc)))
        return False
