"""What a run prints for the person reading its log: each benchmark's scores as the board shows them (percentages
with one decimal for the metrics the board shows as percentages; the others as they are), and a warning line when a
trial judge grades (a local judge under TRIAL_JUDGE_BELOW_PARAMETERS parameters: the board flags such runs and never
ranks them). results.json keeps the fractions; these lines are for people, and their JSON part stays parseable."""
from __future__ import annotations

import json
import math
import sys

from evaluator.benchmarks.spec import PERCENT_KINDS, Card
from evaluator.benchmarks.lite import check as strata_check
from evaluator.judge.base import TRIAL_JUDGE_BELOW_PARAMETERS


def _shown(value, percent: bool):
    """A score as the board shows it: a percentage with one decimal, or the number rounded to four places; None
    (null) where it is undefined."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return round(100 * value, 1) if percent else round(value, 4)


def score_line(card: Card, scores: dict) -> str:
    """`<name> scores (% as on the board...): {...}`: the scores of one benchmark, the board's percentages as
    percentages, the metrics it shows as numbers (CIDEr, counts) named and left as they are."""
    percent = {m.key for m in card.metrics if m.kind in PERCENT_KINDS and m.where == ("scores", m.key)}
    shown = {key: _shown(value, key in percent) for key, value in scores.items()}
    others = [key for key in scores if key not in percent]
    unit = "% as on the board" + (f"; {', '.join(others)} as they are" if others else "")
    return f"{card.name} scores ({unit}; results.json keeps fractions): {json.dumps(shown)}"


def trial_judge_warning(judge) -> str | None:
    """The warning line for a trial judge (None for any other judge, or none): its grades try the machinery, they
    are not scores."""
    if judge is None or getattr(judge, "trial", False) is not True:
        return None
    from evaluator.judge import judge_name

    size = getattr(judge, "parameters", None)
    said = f"{size:,} parameters" if isinstance(size, int) else "its size"
    below = f"{TRIAL_JUDGE_BELOW_PARAMETERS / 1e9:g}B"
    return (f"WARNING: the judge {judge_name(judge.identity)} is a trial judge ({said}, under {below}): its grades "
            "try the machinery and are not scores; the board flags this run and never ranks it. Grade with a judge "
            f"of {below} parameters or more (or an endpoint) for scores that count.")


def suite_check(card, found: dict[str, int]) -> dict:
    """benchmarks.<name>.suite_check: the downloaded suite's strata against the card's table, which plans and lite
    sizes were counted from before the download (evaluator.benchmarks.lite.check); a difference is said in a WARNING
    line, so a table that needs correcting is seen on the first download."""
    found_check = strata_check(card.lite, found)
    if not found_check["matches"]:
        differs = "; ".join(f"{name}: {table:,} in the table, {read:,} read"
                            for name, (table, read) in list(found_check["differs"].items())[:8])
        more = len(found_check["differs"]) - 8
        print(f"WARNING: {card.name}'s downloaded suite differs from the card's table of its "
              f"{card.lite.stratum}s ({differs}{f'; {more} more' if more > 0 else ''}); plans and lite sizes were "
              "counted from the table", file=sys.stderr, flush=True)
    return found_check
