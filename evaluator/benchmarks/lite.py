"""Lite suites: a seeded, stratified subset of a benchmark's full suite, chosen by a rule on each item's own key.

Each card's `Lite` (evaluator.benchmarks.spec) says what a stratum is, how many items each keeps and the full suite's
strata as known here. Within a stratum an item's place is its rank: 63 bits of the SHA-256 of the rule's version, the
benchmark and the item's key (evaluator.benchmarks.seeds, the one hash of the project), and the items of smallest rank
are kept. An item's rank depends on its key alone: the same data gives the same lite suite in any order of download,
on any machine, and a reader can recompute which items a lite run asked without the data being here. The rule has a
version (RULE, recorded in every lite run's results as run.lite_rule): a change to it, or to a card's sizes, is a new
version, so two lite rows are scored on the same items exactly when their rules match.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

from evaluator.benchmarks.seeds import item_seed

# the suites a run may ask for: the project's own shipped items, a seeded stratified subset of the full suite (each
# card's `lite`), and the benchmark's complete data (downloaded)
SAMPLE, LITE, FULL = "sample", "lite", "full"
SUITES = (SAMPLE, LITE, FULL)
# how a lite suite shares its items among the strata: the same number from each (a score that averages its strata, as
# ReForm-Eval's dimensions average their datasets), or in proportion to their sizes (a score over all items)
EQUAL, PROPORTIONAL = "equal", "proportional"


@dataclass(frozen=True)
class Lite:
    """How a benchmark's lite suite is drawn from its full suite (evaluator.benchmarks.lite applies it).

    Within each stratum (`stratum` says what one is: a dataset, a topic) the items kept are those whose rank (a hash
    of the rule's version, the benchmark and the item's own key: lite.rank) is smallest: `size` of each stratum
    (EQUAL), or `size` in all shared in proportion to the strata's sizes (PROPORTIONAL, largest remainders). The
    choice depends on the items' keys alone, never on the order of a download, so every lite run of the same data
    asks the same items. `strata` are the full suite's strata and their sizes as known here (`strata_basis` says
    from where): the plan and the expected interval widths are counted from them before any data is read."""

    stratum: str
    allocation: str
    size: int
    strata: tuple[tuple[str, int], ...]
    strata_basis: str
    key: str = ""  # what an item's key is, in words (its id, or its content where the file has no id)


RULE = "lite-v1"  # the rule's version: the hash below, the allocation, and every card's Lite (sizes and strata)

T = TypeVar("T")


def rank(benchmark: str, key: str) -> int:
    """An item's rank in the lite rule: the hash of RULE, the benchmark and the item's own key."""
    return item_seed(benchmark, 0, f"{RULE}|{key}", 0)


def sizes(lite: Lite, counts: dict[str, int]) -> dict[str, int]:
    """How many items each stratum of a suite with `counts` (stratum -> items) keeps: `lite.size` each (EQUAL), or
    `lite.size` in all shared in proportion to the strata's sizes, by largest remainders (ties broken by name), never
    more than a stratum has."""
    counts = {name: max(0, int(n)) for name, n in counts.items()}
    if lite.allocation == EQUAL:
        return {name: min(lite.size, n) for name, n in counts.items()}
    total = sum(counts.values())
    if total <= lite.size:
        return dict(counts)
    quotas = {name: lite.size * n / total for name, n in counts.items()}
    taken = {name: int(q) for name, q in quotas.items()}
    left = lite.size - sum(taken.values())
    for name in sorted(quotas, key=lambda name: (-(quotas[name] - taken[name]), name))[:left]:
        taken[name] += 1
    return {name: min(k, counts[name]) for name, k in taken.items()}


def planned_items(lite: Lite) -> int:
    """The lite suite's size by the card's own strata (what a plan counts before any data is read)."""
    return sum(sizes(lite, dict(lite.strata)).values())


def strata_counts(items: Iterable[T], stratum: Callable[[T], str], looked_for: Iterable[str] = ()) -> dict[str, int]:
    """Items per stratum, as read (what a run checks against the card's table), with 0 for each stratum the run
    looked for (`looked_for`: the card's strata, or the datasets a run chose) and found none of."""
    counts: dict[str, int] = defaultdict(int, {name: 0 for name in looked_for})
    for item in items:
        counts[stratum(item)] += 1
    return dict(counts)


def check(lite: Lite, found: dict[str, int]) -> dict:
    """The downloaded suite's strata against the card's table: {"matches": bool, "differs": {stratum: [in the
    table, as read]}}, over the strata the run looked for (`found`'s, 0 where it found none; a run of some of
    ReForm-Eval's datasets is checked on those) and a stratum the table lacks counting 0 there."""
    table = dict(lite.strata)
    differs = {name: [table.get(name, 0), found[name]] for name in sorted(found) if table.get(name, 0) != found[name]}
    return {"matches": not differs, "differs": differs}


def select(items: Iterable[T], benchmark: str, lite: Lite, key: Callable[[T], str],
           stratum: Callable[[T], str]) -> list[T]:
    """The lite suite of `items` (the full suite as loaded): in each stratum the items of smallest rank, as many as
    `sizes` gives it, kept in the suite's order. Two items with the same key are one item to the rule (the first is
    kept); a key repeated across strata is ranked in each."""
    items = list(items)
    by_stratum: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for position, item in enumerate(items):
        by_stratum[stratum(item)].append((rank(benchmark, key(item)), position))
    keep = sizes(lite, {name: len(ranked) for name, ranked in by_stratum.items()})
    chosen = {position for name, ranked in by_stratum.items() for _, position in sorted(ranked)[:keep[name]]}
    return [item for position, item in enumerate(items) if position in chosen]


def describe(lite: Lite) -> str:
    """The rule in one sentence, for the About tab and docs/benchmarks.md."""
    share = (f"{lite.size:,} items of each stratum (all of a smaller one)" if lite.allocation == EQUAL else
             f"{lite.size:,} items in all, shared among the strata in proportion to their sizes")
    return (f"{planned_items(lite):,} items; a stratum is a {lite.stratum}; {share}; within a stratum, the items "
            f"whose hash of ({RULE}, the benchmark, {lite.key or 'the item id'}) is smallest")
