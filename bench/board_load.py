"""Board load for 1,000 finished runs: from leaderboard.parquet (what the board reads) vs from the results files,
and the time to draw a view (flags, ranks within cohorts, notes, links) from the parquet.

Times both ways in one run (median of several repetitions) on a local store in a temporary folder and prints the
ratio. Run: `.venv/bin/python bench/board_load.py [runs]`. Not part of the test suite.
"""
from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _models import median_seconds  # noqa: E402  (bench/ is on sys.path when the script runs)
from leaderboard.board.columns import schema  # noqa: E402
from leaderboard.board.file import load_board, load_results, rebuild_leaderboard  # noqa: E402
from leaderboard.board.frames import board_table, leaderboard_frame, sort_runs  # noqa: E402
from leaderboard.board.views import view_board  # noqa: E402
from leaderboard.store.local import LocalStore  # noqa: E402


def fake_result(i: int, rng: random.Random) -> dict:
    sha = f"{i:040x}"
    scores = {k: rng.random() for k in ("Rh", "Rcot", "Ro", "Cf", "Cb", "step_accuracy")}
    return {"model": f"org{i % 37}/model-{i}", "revision": sha, "precision": "auto", "model_type": "pretrained",
            "params_billions": rng.uniform(0.1, 20), "key": f"org{i % 37}/model-{i}/{sha[:12]}_auto",
            "run": {"suite": "sample", "dtype": "float32", "device": "cpu"},
            "benchmarks": {"cure": {"scores": scores, "counts": {"items": 20}}}}


def main(runs: int = 1000) -> None:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        for i in range(runs):
            result = fake_result(i, rng)
            store.write_json(f"results/{result['key']}.json", result)
        board = schema()
        rebuild_leaderboard(store, board)
        from_files = median_seconds(
            lambda: sort_runs(leaderboard_frame(load_results(store), board), board.default_sort), 5)
        from_parquet = median_seconds(lambda: load_board(store, board), 5)
        shown = median_seconds(lambda: board_table(view_board(load_board(store, board), board)[1], board), 5)
        one_view = median_seconds(lambda: board_table(view_board(load_board(store, board), board, "cure")[1],
                                                      board), 5)
    print(f"{runs} runs: results files {from_files * 1000:.1f} ms, leaderboard.parquet {from_parquet * 1000:.1f} ms, "
          f"parquet + Overview table (flags, ranks, notes) {shown * 1000:.1f} ms, parquet + CURE view "
          f"{one_view * 1000:.1f} ms")
    print(f"board load: leaderboard.parquet is {from_files / from_parquet:.2f}x faster than reading {runs} results files")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
