"""The column schema of the board and of leaderboard.parquet, built from the benchmarks' cards.

A column is where its value lives in a results file, what kind of value it is and what it means. The model and
run columns are declared here; every benchmark column comes from a metric on the benchmark's card (name
"<benchmark>_<metric key>", label "<short title> <metric label>"). The Leaderboard tab, the parquet file and the
About tab all read one `Schema`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from evaluator import api
from leaderboard.request_queue import MODEL_TYPES

# kinds of column
TEXT = "text"        # shown as is
SHA = "sha"          # a commit sha: full in the raw frame, 12 characters on the board
NUMBER = "number"    # a plain number (parameters in billions, CIDEr, a count)
SCORE = "score"      # a fraction in 0..1 (or null), shown as a percentage
TIME = "time"        # an ISO timestamp
NUMERIC = (SCORE, NUMBER)


@dataclass(frozen=True)
class Column:
    """One column. path: keys leading to the value in a results file; group: "model", "run" or a benchmark's name;
    shown: False for columns only in the raw frame / parquet file (a benchmark's can be added to the board)."""

    name: str
    label: str
    path: tuple[str, ...]
    kind: str
    description: str
    group: str = "model"
    shown: bool = True
    higher_is_better: bool = True


MODEL_COLUMNS: tuple[Column, ...] = (
    Column("model", "Model", ("model",), TEXT, "The Hugging Face Hub model id (or local folder) that was evaluated."),
    Column("revision", "Revision", ("revision",), SHA,
           "The commit the model was pinned to (first 12 characters of the sha on the board)."),
    Column("precision", "Precision", ("precision",), TEXT,
           "The precision requested at submission (auto: bfloat16 on GPU, float32 on CPU)."),
    Column("model_type", "Type", ("model_type",), TEXT,
           "The model type given at submission: " + ", ".join(MODEL_TYPES) + "."),
    Column("params_billions", "Params (B)", ("params_billions",), NUMBER, "Number of parameters, in billions."),
)
RUN_SHOWN: tuple[Column, ...] = (
    Column("suite", "Suite", ("run", "suite"), TEXT,
           "sample (the small suites shipped with the project) or full (the benchmarks' complete data); runs on "
           "different suites are not comparable.", group="run"),
    Column("judge", "Judge", ("run", "judge_name"), TEXT,
           "The LLM judge that graded the run's judged benchmarks (its model and endpoint, or a local model at its "
           "revision); empty when no benchmark of the run needs one. A run graded again shows its latest judge.",
           group="run"),
)
RUN_HIDDEN: tuple[Column, ...] = (
    Column("key", "Key", ("key",), TEXT, "<org>/<model>/<sha12>_<precision>: names the request, results and details.",
           group="run", shown=False),
    Column("architecture", "Architecture", ("architecture",), TEXT, "The model's architecture class.", group="run",
           shown=False),
    Column("dtype", "Dtype", ("run", "dtype"), TEXT, "The dtype the weights were loaded in.", group="run", shown=False),
    Column("device", "Device", ("run", "device"), TEXT, "cuda or cpu.", group="run", shown=False),
    Column("submitted_time", "Submitted", ("submitted_time",), TIME, "When the request was submitted (UTC).",
           group="run", shown=False),
    Column("finished_time", "Finished", ("finished_time",), TIME, "When the run finished (UTC).", group="run",
           shown=False),
    Column("judged_time", "Judged", ("run", "judged_time"), TIME, "When the judge graded the run (UTC).", group="run",
           shown=False),
)


def metric_column(card: api.Card, metric: api.Metric) -> Column:
    """The board column of one metric of a card."""
    return Column(name=f"{card.name}_{metric.key}", label=f"{card.short_title} {metric.label}",
                  path=("benchmarks", card.name, *metric.where),
                  kind=SCORE if metric.kind in api.PERCENT_KINDS else NUMBER, description=metric.description,
                  group=card.name, shown=metric.shown, higher_is_better=metric.higher_is_better)


@dataclass(frozen=True)
class Schema:
    """Every column in order (model, the benchmarks' shown metrics, suite and judge, the benchmarks' other metrics,
    the run's facts), the cards they came from, and the column that ranks the board."""

    columns: tuple[Column, ...]
    cards: tuple[api.Card, ...]
    default_sort: str
    by_name: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {c.name: c for c in self.columns})

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def shown(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.shown)

    @property
    def optional(self) -> tuple[Column, ...]:
        """The benchmark columns that are not shown by default and can be added to the board."""
        return tuple(c for c in self.columns if not c.shown and c.group not in ("model", "run"))

    def column(self, name: str) -> Column:
        return self.by_name[name]

    def benchmark_columns(self, name: str, shown: bool | None = None) -> list[Column]:
        return [c for c in self.columns if c.group == name and (shown is None or c.shown == shown)]


def build_schema(cards: Sequence[api.Card], ranked_by: Sequence[str] = ()) -> Schema:
    """The schema of these cards; the board ranks by the default metric of the first benchmark named in
    `ranked_by` that has a card (else of the first card)."""
    per_card = [(card, [metric_column(card, m) for m in card.metrics]) for card in cards]
    shown = [c for _, cols in per_card for c in cols if c.shown]
    hidden = [c for _, cols in per_card for c in cols if not c.shown]
    columns = (*MODEL_COLUMNS, *shown, *RUN_SHOWN, *hidden, *RUN_HIDDEN)
    by_name = {card.name: card for card in cards}
    first = next((by_name[n] for n in ranked_by if n in by_name), cards[0] if cards else None)
    default_sort = f"{first.name}_{first.default_metric}" if first else "model"
    return Schema(columns=columns, cards=tuple(cards), default_sort=default_sort)


def schema(ranked_by: Sequence[str] = ()) -> Schema:
    """The schema of every registered benchmark (see build_schema for `ranked_by`)."""
    return build_schema(api.cards(), ranked_by)
