"""What the error bars cost at full-suite sizes: seconds to compute LAVE's intervals (the dearest: corpus BLEU-4 and
CIDEr recomputed on every bootstrap draw) for N synthetic questions, with the draws the budget allows
(evaluator.metrics.intervals.affordable_draws), and the same for a plain mean and for SimpleQA-sized F-score draws.

Run: `.venv/bin/python bench/interval_cost.py [N ...]` (default 1000 5000 20000). Not part of the test suite.
"""
from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluator.benchmarks.lave import scoring as lave  # noqa: E402
from evaluator.metrics.intervals import affordable_draws, bootstrap_interval, mean_interval  # noqa: E402

WORDS = "red blue green cat dog two three left right yes no a the tree car house".split()


def lave_rows(n: int, rng: random.Random) -> list[dict]:
    """N answered LAVE questions: a two-word answer, three two-word references, a rating and each strict score."""
    rows = []
    for i in range(n):
        row = {"question_id": str(i), "parsed_answer": " ".join(rng.choices(WORDS, k=2)),
               "gold": json.dumps([" ".join(rng.choices(WORDS, k=2)) for _ in range(3)]),
               "lave": rng.choice([0.0, 0.5, 1.0]), "rating": 2}
        row.update({metric: rng.random() for metric in lave.STRING_METRICS})
        row["exact_match"] = float(rng.random() < 0.3)
        rows.append(row)
    return rows


def seconds(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main(sizes: list[int]) -> None:
    rng = random.Random(0)
    print("questions | LAVE draws | LAVE intervals (s) | mean interval (s) | F-score bootstrap, 1000 draws (s)")
    for n in sizes:
        rows = lave_rows(n, rng)
        draws = affordable_draws(n, lave.CORPUS_DRAWS)
        outcomes = [rng.random() < 0.4 for _ in range(n)]
        f_score = (lambda drawn: sum(outcomes[int(q)] for q in drawn) / len(drawn))
        print(f"{n:>9} | {draws:>10} | {seconds(lambda: lave.score_intervals(rows)):>18.1f} | "
              f"{seconds(lambda: mean_interval([float(o) for o in outcomes])):>17.3f} | "
              f"{seconds(lambda: bootstrap_interval([str(i) for i in range(n)], f_score)):>10.1f}")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [1000, 5000, 20000])
