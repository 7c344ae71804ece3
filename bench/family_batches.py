"""Each family's answers at batch 1 and at batch N, through the CLI, on the CURE (by generation) and ReForm-Eval
sample suites, whole or under --limit: the rows that differ, per family. A text-only family (llama, qwen2) runs the
SimpleQA sample instead, graded by the tests' scripted judge on loopback (grades read from the gold answer alone);
on the whole sample its replies stop at 8 new tokens (tests.test_batch_invariance.SIMPLEQA_SHORT), as the whole-sample
test's do: at the card's 256, 31 questions of 8 replies each would take some 20 minutes per family.

The test suite runs the same comparison on a few items per family (tests/test_family_cli.py, --limit 2 at batches 1
and 3: a short last batch); this script runs it on the whole samples (the default) or any --limit, for the families
named (default: the 20 of tests.tiny_models.CLI_FAMILIES). Each family's two runs share one Python process
(tests.cli_runs.evaluator_many). Rows are compared as the tests compare them (tests.batch_details): a row differs when
any column but its near ties differs (an option's log-likelihood by more than OPTION_TOLERANCE per token), and a
differing row is explained when both runs recorded a near tie at the step where the two replies parted.

Run: `.venv/bin/python bench/family_batches.py [--families qwen3_5_moe,llama4] [--limit 0] [--batch 4]
[--option reform.repeats=2 ...]` (the whole samples of the 20 CLI families take about 15 minutes on 2 cores). Exits 1 when a run fails or a row differs
unexplained.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root)


def _where(d) -> str:
    """Where a differing row parted: 'row 32 at step 9', or 'row 32, unexplained'."""
    return f"row {d.row} at step {d.parted_at}" if d.parted_at is not None else f"row {d.row}, unexplained"


def main(argv: list[str] | None = None) -> int:
    import pandas as pd

    from tests.batch_details import differing_rows
    from tests.cli_runs import evaluator_many, family_command
    from tests.judge_servers import ScriptedServer
    from tests.test_batch_invariance import SIMPLEQA_SHORT, judge
    from tests.tiny_models import CLI_FAMILIES, FAMILIES, TEXT_ONLY

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(CLI_FAMILIES), help="comma-separated tiny model families")
    parser.add_argument("--limit", type=int, default=0, help="items per benchmark (per dimension); 0: the whole samples")
    parser.add_argument("--batch", type=int, default=4, help="the batch compared with batch 1")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an --option for both runs, repeatable (the smoke test's: tests/test_family_cli.OPTIONS)")
    args = parser.parse_args(argv)
    names = [name for name in args.families.split(",") if name]
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        parser.error(f"unknown families: {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    harm = 0
    with tempfile.TemporaryDirectory(prefix="bench-family-batches-") as work, ScriptedServer(judge) as server:
        for name in names:
            started, out = time.monotonic(), Path(work) / name
            folder = FAMILIES[name](out / "model")
            graded_by = f"endpoint:{server.base_url}|scripted-judge" if name in TEXT_ONLY else ""
            short = SIMPLEQA_SHORT if graded_by and not args.limit else ()  # 31 items x 8 replies of 256 tokens
            done = evaluator_many([family_command(folder, out, size, args.limit, graded_by, (*short, *args.option))
                                   for size in (1, args.batch)], out / "report.json", timeout=3600)
            failed = [r for r in done if r.returncode != 0]
            if failed:
                harm += 1
                print(f"{name}: the run failed: {failed[0].stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            found = differing_rows(out / "batch-1", out / f"batch-{args.batch}")
            rows = {bench: len(pd.read_parquet(out / "batch-1" / "details" / f"{bench}.parquet")) for bench in found}
            harm += sum(1 for differing in found.values() for d in differing if d.parted_at is None)
            said = ", ".join(f"{bench} {len(found[bench])} of {rows[bench]} rows differ"
                             + (f" ({sum(d.parted_at is not None for d in found[bench])} at a near tie both runs "
                                f"recorded: {', '.join(_where(d) for d in found[bench])})" if found[bench] else "")
                             for bench in found)
            print(f"{name}: batch 1 against {args.batch}, limit {args.limit or 'none'}: {said} "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
    print(f"families: {len(names)}; failed runs and rows that differ unexplained: {harm}")
    return 1 if harm else 0


if __name__ == "__main__":
    sys.exit(main())
