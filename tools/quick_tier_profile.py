"""The quick tier's list of measured-slow tests, grown from a profile of the quick tier itself.

Run the quick tier with every duration printed, then give its output to this script:

    .venv/bin/python -m pytest -m "not slow" --durations=0 --durations-min=0.01 > profile.txt
    .venv/bin/python tools/quick_tier_profile.py profile.txt

Every test function one of whose tests took at least --threshold seconds (setup, call and teardown together) is
added to tests/quick_tier_slow.txt, which tests/tiers.py reads: those tests run in the whole suite only. Entries
already there stay (the quick tier no longer runs them, so its profile cannot say they became cheap); a test of the
family matrix (parametrised by a family) is left to tests.tiny_models.QUICK_FAMILIES, which says which families the
quick tier loads. Prints what it added and the quick tier's time that the profile measured and that it moves.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from tests.tiers import KEEP, SLOW_LIST, function_of, kept_quick, profiled_slow  # noqa: E402
from tests.tiny_models import FAMILIES  # noqa: E402

DURATION = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(.+)$")
HEADER = """# Test functions of the quick tier that its profile measured at {threshold} s or more for one test (setup, call and
# teardown together; issue 70): tests/tiers.py marks them slow, so they run in the whole suite only. Grown by
# tools/quick_tier_profile.py from a quick-tier run with --durations=0; tests/test_tiers.py checks each still exists.
# A line starting with "{keep}" keeps its test in the quick tier whatever it takes (the tool never lists it).
"""
GROUP = re.compile(r"@[\w.-]+$")  # the "@<group>" that --dist loadgroup appends to a grouped test's node id


def per_test(lines: list[str]) -> dict[str, float]:
    """Seconds per test node id (its setup, call and teardown summed; its xdist group left off) from pytest's
    durations report."""
    seconds: dict[str, float] = defaultdict(float)
    for line in lines:
        found = DURATION.match(line.strip())
        if found:
            seconds[GROUP.sub("", found.group(3))] += float(found.group(1))
    return dict(seconds)


def family_matrix(node: str) -> bool:
    """Whether a test is of the family matrix: parametrised by a family first (`[llava]`, `[llava-image]`)."""
    param = node.partition("[")[2].rstrip("]")
    return param.split("-", 1)[0] in FAMILIES


def slow_functions(seconds: dict[str, float], threshold: float) -> dict[str, float]:
    """Test functions (file::name) with a test at `threshold` seconds or more, and their tests' seconds in all."""
    totals: dict[str, float] = defaultdict(float)
    worst: dict[str, float] = defaultdict(float)
    for node, took in seconds.items():
        if family_matrix(node):
            continue
        function = function_of(node)
        totals[function] += took
        worst[function] = max(worst[function], took)
    return {function: totals[function] for function in totals if worst[function] >= threshold}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path, help="a quick-tier run's output with --durations=0")
    parser.add_argument("--threshold", type=float, default=0.05, help="seconds of one test (default 0.05)")
    parser.add_argument("--list", type=Path, default=SLOW_LIST, help="the list to grow (default: the quick tier's)")
    args = parser.parse_args(argv)
    seconds = per_test(args.profile.read_text(errors="replace").splitlines())
    if not seconds:
        print(f"{args.profile}: no durations found (run the quick tier with --durations=0)", file=sys.stderr)
        return 2
    known, kept = profiled_slow(args.list), kept_quick(args.list)
    found = {f: took for f, took in slow_functions(seconds, args.threshold).items() if f not in kept}
    added = sorted(set(found) - known)
    args.list.write_text(HEADER.format(threshold=args.threshold, keep=KEEP)
                         + "".join(f"{KEEP}{f}\n" for f in sorted(kept))
                         + "".join(f"{f}\n" for f in sorted(known | set(found))))
    measured = sum(seconds.values())
    moved = sum(found[f] for f in added)
    print(f"{len(seconds)} tests measured, {measured:.1f} worker-s; {len(added)} functions added "
          f"({moved:.1f} worker-s), {len(known | set(found))} listed in {args.list}")
    for function in sorted(added, key=found.get, reverse=True)[:20]:
        print(f"  {found[function]:7.2f} s  {function}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
