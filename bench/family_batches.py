"""Each family's answers at batch 1 and at batch N, through the CLI, on the CURE (by generation) and ReForm-Eval
sample suites, whole or under --limit: the rows that differ, per family.

The test suite runs the same comparison on a few items per family (tests/test_family_cli.py, --limit 2 at batches 1
and 3: a short last batch); this script runs it on the whole samples (the default) or any --limit, for the families
named. Each family's two runs share one Python process (tests.cli_runs.evaluator_many). A row differs when its
answer, parse or chosen option differs, or an option's log-likelihood moves more than the tests' tolerance per token
(tests.test_batch_invariance.OPTION_TOLERANCE).

Run: `.venv/bin/python bench/family_batches.py [--families qwen3_5_moe,llama4] [--limit 0] [--batch 4]` (the whole
samples of the 20 families of tests.tiny_models.CLI_FAMILIES take about 15 minutes on 2 cores). Exits 1 when a row
differs.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root)


def differing_rows(a: Path, b: Path) -> dict[str, int]:
    """Per benchmark, the details rows of run `a` that differ from run `b`'s (the same rows, in order)."""
    import pandas as pd

    from tests.test_batch_invariance import _close, _missing, _scores

    counts = {}
    for path in sorted((a / "details").glob("*.parquet")):
        x, y = pd.read_parquet(path), pd.read_parquet(b / "details" / path.name)
        if list(x.columns) != list(y.columns) or len(x) != len(y):
            counts[path.stem] = max(len(x), len(y))
            continue
        rows = set()
        for column in x.columns:
            for i, (u, v) in enumerate(zip(x[column], y[column])):
                if column == "option_scores":
                    su, sv = _scores(u), _scores(v)
                    if len(su) != len(sv) or not all(_close(p, q) for p, q in zip(su, sv)):
                        rows.add(i)
                elif not (_missing(u) and _missing(v)) and str(u) != str(v):
                    rows.add(i)
        counts[path.stem] = len(rows)
    return counts


def main(argv: list[str] | None = None) -> int:
    import pandas as pd

    from tests.cli_runs import evaluator_many, family_command
    from tests.tiny_models import CLI_FAMILIES, FAMILIES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(CLI_FAMILIES), help="comma-separated tiny model families")
    parser.add_argument("--limit", type=int, default=0, help="items per benchmark (per dimension); 0: the whole samples")
    parser.add_argument("--batch", type=int, default=4, help="the batch compared with batch 1")
    args = parser.parse_args(argv)
    names = [name for name in args.families.split(",") if name]
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        parser.error(f"unknown families: {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    harm = 0
    with tempfile.TemporaryDirectory(prefix="bench-family-batches-") as work:
        for name in names:
            started, out = time.monotonic(), Path(work) / name
            folder = FAMILIES[name](out / "model")
            done = evaluator_many([family_command(folder, out, size, args.limit) for size in (1, args.batch)],
                                  out / "report.json", timeout=3600)
            failed = [r for r in done if r.returncode != 0]
            if failed:
                harm += 1
                print(f"{name}: the run failed: {failed[0].stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            counts = differing_rows(out / "batch-1", out / f"batch-{args.batch}")
            rows = {bench: len(pd.read_parquet(out / "batch-1" / "details" / f"{bench}.parquet")) for bench in counts}
            harm += sum(counts.values())
            said = ", ".join(f"{bench} {counts[bench]} of {rows[bench]} rows differ" for bench in counts)
            print(f"{name}: batch 1 against {args.batch}, limit {args.limit or 'none'}: {said} "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
    print(f"families: {len(names)}; rows or runs that differ: {harm}")
    return 1 if harm else 0


if __name__ == "__main__":
    sys.exit(main())
