"""Explorer response times on two finished LAVE runs of 5,000 questions each (the per-question Explorer tab).

Writes two synthetic LAVE details parquet files (the schema LAVE writes: evaluator/benchmarks/lave/planning.py and
scoring.py; seeded, run B answering differently from run A) into a local store in a temporary folder, then times
the functions the tab and its API call (leaderboard.explorer.views.list_items / open_item through one DetailsCache):
page 1, a filter, one opened question, the compare view (list and question) and a sort to page 50. Each step is
repeated; the first load of each run (parquet read included) is timed once. Prints a table, the store reads (one per
run) and whether every warm median is under the goal. Run: `.venv/bin/python bench/explorer.py [items]`.
Not part of the test suite; exits 0 either way.
"""
from __future__ import annotations

import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from evaluator.benchmarks.lave.planning import _row, answer_template  # noqa: E402
from evaluator.benchmarks.lave.rater import build_lave_prompt, load_lave_prompts, split_lave_reply  # noqa: E402
from evaluator.metrics.lave import lave_score  # noqa: E402
from evaluator.metrics.vqa import anls, exact_match, vqa_accuracy  # noqa: E402
from leaderboard.explorer.details_cache import DetailsCache, details_path  # noqa: E402
from leaderboard.explorer.queries import A_RIGHT_B_WRONG, Query  # noqa: E402
from leaderboard.explorer.views import list_items, open_item  # noqa: E402
from leaderboard.settings import Settings  # noqa: E402
from leaderboard.store import Store, open_store  # noqa: E402

BENCHMARK = "lave"
RUN_A, RUN_B = "bench-org/model-a/0123456789ab_auto", "bench-org/model-b/0123456789ab_auto"
REPEATS = 20
GOAL_MS = 300.0
OBJECTS = ("circle", "square", "car", "dog", "cup", "tree", "chair", "ball")
KINDS = {  # kind -> (question template, possible answers)
    "count": ("How many {o}s are in the picture?", [str(n) for n in range(10)]),
    "yesno": ("Is the {o} to the left of the {p}?", ["yes", "no"]),
    "color": ("What color is the {o}?", ["red", "blue", "green", "yellow", "black", "white"]),
    "text": ("What word is written on the sign next to the {o}?", ["stop", "exit", "open", "sale", "cafe", "park"]),
    "position": ("Where is the {o} in the image?", ["left", "right", "top", "bottom", "center"]),
}


def make_items(n: int, rng: np.random.Generator) -> list[dict]:
    """n questions as LAVE's data gives them (question_id, question, answers, kind, style, source, image_shown)."""
    items = []
    for i in range(n):
        kind = list(KINDS)[int(rng.integers(len(KINDS)))]
        template, pool = KINDS[kind]
        o, p = rng.choice(OBJECTS, 2, replace=False)
        truth = str(rng.choice(pool))
        answers = [truth if rng.random() < 0.8 else str(rng.choice(pool)) for _ in range(10)]
        items.append({"question_id": f"lave-{i:05d}", "question": template.format(o=o, p=p), "answers": answers,
                      "kind": kind, "style": "vqa", "source": "vqa" if i % 5 else "lave-sample",
                      "image_shown": f"images/q{i:05d}.png", "truth": truth, "pool": pool,
                      "unavailable": rng.random() < 0.01})
    return items


def run_rows(items: list[dict], seed: int, skill: float) -> pd.DataFrame:
    """One run's details rows, scored as lave/scoring.py fills them (a judge stand-in rates the answers)."""
    rng, prompts, template = np.random.default_rng(seed), load_lave_prompts(), answer_template()
    rows = []
    for item in items:
        row = _row(item)
        if item["unavailable"]:
            row.update(status="image_unavailable", error="HTTP 404 for the image", extraction="")
            rows.append(row)
            continue
        right = rng.random() < skill
        answer = item["truth"] if right else str(rng.choice(item["pool"]))
        row["prompt"] = template.replace("{question}", item["question"]).strip()
        row["prediction"] = answer + ("\nI looked at the whole picture." if rng.random() < 0.2 else "")
        row["parsed_answer"] = answer
        row["judge_prompt"] = build_lave_prompt(prompts, item["question"], item["answers"], answer)
        answers = item["answers"]
        row.update(vqa_accuracy=vqa_accuracy(answer, answers), anls=anls(answer, answers),
                   exact_match=exact_match(answer, answers), bleu4=float(rng.random()) * 0.6,
                   cider=float(rng.random()) * 3)
        draw = rng.random()
        if draw < 0.03:  # the judge call failed: unrated
            row["judge_error"] = "judge request timed out"
        else:
            rating = 2 if draw < 0.04 or rng.random() < 0.1 else (3 if right else 1)
            reply = f"The candidate answer {'matches' if rating == 3 else 'differs from'} the references."
            row["rating_fallback"] = draw < 0.04
            row["judge_raw"] = reply if row["rating_fallback"] else f"{reply} So rating={rating}"
            row["judge_rationale"] = split_lave_reply(row["judge_raw"])
            row.update(rating=float(rating), lave=lave_score(rating), score=lave_score(rating), correct=rating == 3)
        rows.append(row)
    return pd.DataFrame(rows)


def write_run(store: Store, key: str, frame: pd.DataFrame) -> int:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    store.write_bytes(details_path(key, BENCHMARK), buffer.getvalue())
    return len(buffer.getvalue())


def timed(fn: Callable[[], object], repeats: int = 1) -> list[float]:
    """Milliseconds of each of `repeats` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main(n: int = 5000) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-explorer-"))
    try:
        measure(tmp, n)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(tmp: Path, n: int) -> None:
    """Write the two runs into a store under `tmp`, time each step, print the table and the verdict."""
    settings = Settings.from_env({}, home=tmp / "home", run_scheduler=False)
    store = open_store(settings)
    items = make_items(n, np.random.default_rng(0))
    sizes = [write_run(store, RUN_A, run_rows(items, seed=1, skill=0.65)),
             write_run(store, RUN_B, run_rows(items, seed=2, skill=0.55))]
    print(f"{n} LAVE questions per run; details parquet {sizes[0] / 1e6:.2f} MB (A), {sizes[1] / 1e6:.2f} MB (B)")

    cache, images = DetailsCache(store, size=8), settings.images_dir
    base = Query(run=RUN_A, benchmark=BENCHMARK)
    compare = Query(run=RUN_A, benchmark=BENCHMARK, compare=RUN_B, outcome=A_RIGHT_B_WRONG)
    cold = {"page 1": timed(lambda: list_items(cache, base))[0],  # reads A
            "compare view (list)": timed(lambda: list_items(cache, compare))[0]}  # reads B
    one = str(list_items(cache, base).rows["item"].iloc[12])
    differing = list_items(cache, compare).filtered["item"]
    other = str(differing.iloc[len(differing) // 2])
    steps: dict[str, Callable[[], object]] = {
        "page 1": lambda: list_items(cache, base),
        "filter (wrong, kind = count, 'the')": lambda: list_items(
            cache, Query(run=RUN_A, benchmark=BENCHMARK, outcome="wrong", groups=("kind = count",), search="the")),
        "open one question": lambda: open_item(cache, Query(run=RUN_A, benchmark=BENCHMARK, item=one), images,
                                               with_picture=False),
        "compare view (list)": lambda: list_items(cache, compare),
        "compare view (question)": lambda: open_item(cache, Query(run=RUN_A, benchmark=BENCHMARK, compare=RUN_B,
                                                                  item=other), images, with_picture=False),
        "sort by score desc, page 50": lambda: list_items(
            cache, Query(run=RUN_A, benchmark=BENCHMARK, sort="score", descending=True, page=50)),
    }
    warm = {name: timed(fn, REPEATS) for name, fn in steps.items()}

    print(f"\n{'step':<38} {'cold ms':>9} {'median ms':>10} {'max ms':>9}   ({REPEATS} warm repeats)")
    for name, times in warm.items():
        first = f"{cold[name]:.1f}" if name in cold else "-"
        print(f"{name:<38} {first:>9} {statistics.median(times):>10.1f} {max(times):>9.1f}")
    print(f"\ncold = the first call, reading and parsing the run's details parquet; store reads after all timing: "
          f"{cache.reads} (expected 2, one per run){'' if cache.reads == 2 else '  <-- NOT 2'}")
    slowest = max(warm, key=lambda k: statistics.median(warm[k]))
    worst = statistics.median(warm[slowest])
    verdict = "YES" if worst < GOAL_MS else "NO"
    print(f"every warm median under {GOAL_MS:.0f} ms: {verdict} (slowest: {slowest}, {worst:.1f} ms)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
