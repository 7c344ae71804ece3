"""What a board column is: its kinds, the Column and View declarations, and how a value is found in a results file.
The columns themselves are declared in leaderboard.board.columns; the interval columns in
leaderboard.board.interval_columns."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from leaderboard.formatting import as_float

# kinds of column
TEXT = "text"        # shown as is
SHA = "sha"          # a commit sha: full in the raw frame, 12 characters on the board
NUMBER = "number"    # a plain number (parameters in billions, CIDEr, an entropy)
COUNT = "count"      # a number of answers or items (ungraded, unrated, a limit); never a percentage
SCORE = "score"      # a fraction in 0..1 (or null), shown as a percentage
TIME = "time"        # an ISO timestamp
RANK = "rank"        # a place on the board (board only): 1, 2, ...; empty for runs that are not ranked
INTERVAL = "interval"  # a score's 95% interval as text, "45.0-67.3 (n 20)" (board only, from its raw interval columns)
NUMERIC = (SCORE, NUMBER, COUNT, RANK)


@dataclass(frozen=True)
class Column:
    """One column. path: keys leading to the value in a results file (empty when `derive` computes it from the whole
    results file, or for a board-only column); group: "model", "run", "board" or a benchmark's name."""

    name: str
    label: str
    path: tuple[str, ...]
    kind: str
    description: str
    group: str = "model"
    higher_is_better: bool = True
    derive: Callable[[dict], Any] | None = field(default=None, compare=False, repr=False)
    interval_of: str = ""  # an interval column: the score column whose interval it holds (INTERVAL_PARTS)


@dataclass(frozen=True)
class View:
    """A set of board columns shown together. benchmark: None for the overview; rank_by: the column that ranks it."""

    key: str
    label: str
    benchmark: str | None
    columns: tuple[str, ...]  # every column of the view (the /leaderboard API's table)
    rank_by: str
    main: tuple[str, ...] = ()  # the columns the board's table shows, to fit 1,400 px (empty: every column)

    @property
    def shown(self) -> tuple[str, ...]:  # the board table's columns
        return self.main or self.columns

    @property
    def more(self) -> tuple[str, ...]:
        """The More columns table's: the rest, after the rank and model, and the precision and revision."""
        rest = [c for c in self.columns if c not in self.shown]
        return tuple(dict.fromkeys(("rank", "model", *rest, "precision", "revision"))) if rest else ()


def value_at(results: Any, path: tuple[str, ...]) -> Any:
    """The value at `path` (keys) in a results file; None where the path leads nowhere."""
    for part in path:
        if not isinstance(results, dict):
            return None
        results = results.get(part)
    return results


def finite(value: Any) -> float | None:
    """A finite number, or None for anything else."""
    number = as_float(value)
    return None if math.isnan(number) else number
