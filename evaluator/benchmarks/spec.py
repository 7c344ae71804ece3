"""What a benchmark is: a card that says what it measures and how it is shown, a plan of model requests, and a
score over the answers.

A benchmark is a package under evaluator/benchmarks/ whose __init__ exposes

    CARD: Card                                   what it measures, its metrics, sources, options, item view,
                                                 and every column of its details rows (details)
    plan(ctx: PlanContext) -> Plan               every details row, and the model requests (Asks) that fill them
    score(rows: list[dict], ctx: ScoreContext) -> Scored
                                                 metrics (and judge grades) from the filled rows
    workload(ctx), headline_weights(strata)      (optional) a run's asks, counted without its data (evaluator.plans)

and is one line in the registry (evaluator/benchmarks/__init__.py), which checks it against `Benchmark` when it
is loaded. The executor (evaluator/runs/executor.py) runs every Ask, batching the requests of several items, and writes
the model's raw output into the rows; `score` reads only those rows (and the options the run used), so a finished
run can be graded again from its stored details without the model (`python -m evaluator rescore`). The details
file holds exactly the card's columns, each of its declared type, so the files of every run load as one dataset.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

from PIL import Image

from evaluator.benchmarks.lite import EQUAL, FULL, LITE, PROPORTIONAL, SAMPLE, SUITES, Lite  # noqa: F401
from evaluator.models.base import GenerationRequest

# kinds of metric
FRACTION = "fraction"  # a share in 0..1, shown as a percentage
RATIO = "ratio"        # a quotient of two shares in 0..1 (undefined, "n/a", when the denominator is 0), shown as a percentage
COUNT = "count"        # a number of items, shown as is
NUMBER = "number"      # an unbounded real number (CIDEr, an entropy), shown as is
METRIC_KINDS = (FRACTION, RATIO, COUNT, NUMBER)
PERCENT_KINDS = (FRACTION, RATIO)


@dataclass(frozen=True)
class Metric:
    """One number a benchmark reports, and one column of the board.

    key: the column is "<benchmark>_<key>"; the value is results["benchmarks"][<benchmark>] followed by `path`
    (default: ("scores", key)). label: the column header after the card's short title ("Ro" -> "CURE Ro").
    shown: a main metric, listed first in the benchmark's view on the board (False: a finer one, such as a
    per-dimension score, listed after the main ones). judged: it depends on the judge,
    so grading the run again with another judge changes it.
    """

    key: str
    label: str
    description: str
    kind: str = FRACTION
    higher_is_better: bool = True
    path: tuple[str, ...] = ()
    shown: bool = True
    judged: bool = False

    @property
    def where(self) -> tuple[str, ...]:
        return self.path or ("scores", self.key)


@dataclass(frozen=True)
class Source:
    """A data location a deployer may set: the environment variable `setting`, passed to the run as
    `--source <key>=<value>` (key: the benchmark's name, or "<name>.<what>" for a second one)."""

    key: str
    setting: str
    default: str
    accepts: str


@dataclass(frozen=True)
class Option:
    """A run option (`--option <key>=<value>`, LEADERBOARD_OPTIONS); key is "<benchmark>.<name>"."""

    key: str
    default: str
    description: str


# The explorer's table of one run's questions (ItemView.items): one row per question with these columns, then the
# card's group_by columns. score: 0..1, NaN when the question has no score of its own; outcome: one of OUTCOMES
# (a benchmark may add its own); no_mark: a generated answer had no option mark.
ITEM_COLUMNS = ("item", "question", "answer", "gold", "score", "outcome", "grade", "no_mark")
CORRECT, PARTLY, WRONG = "correct", "partly correct", "wrong"
NOT_ATTEMPTED, UNGRADED, IMAGE_UNAVAILABLE = "not attempted", "ungraded", "image unavailable"
OUTCOMES = (CORRECT, PARTLY, WRONG, NOT_ATTEMPTED, UNGRADED, IMAGE_UNAVAILABLE)
ROW_IMAGE_UNAVAILABLE = "image_unavailable"  # a row's "status" when its images could not be read (scored apart)


@dataclass(frozen=True)
class ItemPart:
    """One block of an opened question: short facts (label, value), a small table (rows of column -> value) and
    long texts (label, text) shown verbatim (prompts, raw outputs, judge replies). Values are untrusted text: the
    Space escapes every one."""

    title: str
    facts: tuple[tuple[str, str], ...] = ()
    table: tuple[dict, ...] = ()
    texts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Measure:
    """One board metric in the explorer: rows(item table, details rows with their "item") -> a boolean mask of the
    table's questions behind it, and value(details rows of some of them) -> the metric, by the function that scored
    the run (NaN: undefined)."""

    rows: Callable[[Any], Any]
    value: Callable[[Any], float]


@dataclass(frozen=True)
class ItemView:
    """How one question is shown: the details columns that hold each part (None: the benchmark has none), the
    columns that group questions, and which rows are the question's scored answer (column, value), when a
    question has several rows of different kinds (SimpleQA: part == "answer").

    The explorer's three functions (None: the explorer cannot open this benchmark's questions):
    - key(details) -> a Series naming, for each details row, the question it belongs to (the table's "item");
    - items(details with that "item" column) -> the table of questions (ITEM_COLUMNS, then group_by);
    - parts(rows of one question, as dicts) -> the opened question, as ItemParts;
    - picture(first row of a question, images folder) -> the image as the model saw it (None: it had none;
      evaluator.inputs.images.ImageUnavailable when it cannot be read);
    - measure(metric key) -> the Measure of a board metric (None: the explorer shows plain accuracy for it).

    Two runs compared question by question (evaluator.runs.compare): `cluster` is the details column naming the
    unit a question belongs to where several questions share one (ReForm-Eval: "question_id", the instance whose
    generation and likelihood questions both count), so the paired difference's standard error is clustered by it;
    None: every question is its own unit (a CURE question is already a whole chain and its inference; a SimpleQA or
    LAVE question has one scored answer, its samples unscored). `cluster_unit` names the unit in the interval's
    method ("instance").
    """

    question: str | None = None
    prompt: str = "prompt"
    raw_output: str = "prediction"
    parsed_answer: str = "parsed_answer"
    gold: str = "gold"
    grade: str | None = None
    rationale: str | None = None
    image: str | None = None
    group_by: tuple[str, ...] = ()
    main_rows: tuple[str, str] | None = None
    key: Callable[[Any], Any] | None = None
    items: Callable[[Any], Any] | None = None
    parts: Callable[[list[dict]], list[ItemPart]] | None = None
    picture: Callable[[dict, Path], Image.Image | None] | None = None
    measure: Callable[[str], Measure | None] | None = None
    cluster: str | None = None
    cluster_unit: str = "question"


@dataclass(frozen=True)
class Section:
    """A per-run section of the board: `render(results)` draws one run (None: an empty one) as a plotly figure
    ("plot") or a pandas DataFrame of text ("table"). Runs that have the metric `needs` can be picked."""

    key: str  # names the section's API endpoint and its page elements
    title: str
    description: str
    kind: str
    needs: str
    render: Callable[[dict | None], Any]
    empty: str = ""  # what the section says while no finished run has it (default: "No finished run has <title> yet.")


@dataclass(frozen=True)
class Verdict:
    """What the judge decided about one answer. score None: not graded (never counted as wrong)."""

    label: str
    score: float | None
    rationale: str


@dataclass(frozen=True)
class Grader:
    """The judge playground's view of a judged benchmark.

    messages(question, gold, candidate) -> the judge's chat messages; verdict(reply) -> Verdict;
    questions(suite, sources) -> ([{question_id, question, gold}], a note saying where they come from), gold being
    the text of the gold box (several references one per line); an entry may also hold the card's ItemView.image
    column, whose picture the playground shows. The stored answer of a run is read from the details through the
    card's ItemView.
    """

    mode: str
    help: str
    gold_label: str
    gold_field: str
    messages: Callable[[str, str, str], list[dict]]
    verdict: Callable[[str | None], Verdict]
    questions: Callable[[str, dict], tuple[list[dict], str]]
    broken_label: str = "ungraded: the judge's reply broke off"


# the types of a details column (DetailColumn.type), as every details file stores it (evaluator.runs.details)
STRING = "string"  # a text
INT = "int"  # a whole number (int64)
FLOAT = "float"  # a real number (float64); NaN where a number is undefined
BOOL = "bool"  # True or False
JSON = "json"  # a JSON text (empty where there is none), stored as a string
DETAIL_TYPES = (STRING, INT, FLOAT, BOOL, JSON)


@dataclass(frozen=True)
class DetailColumn:
    """One column of a benchmark's details files: its name, its type (one of DETAIL_TYPES) and what it holds, in
    one line (the Hub dataset card of the details prints it). A row may leave a column out (stored as null), but
    may hold no column its card does not declare."""

    name: str
    type: str
    description: str


# A generated answer's thought (evaluator.models.thinking) and near ties (evaluator.models.near_ties), which the
# executor writes: every benchmark that generates declares these columns after its "prediction" (the answer alone).
THOUGHT_COLUMNS = (
    DetailColumn("reasoning", STRING, "A thinking model's thought, written before its answer between its thought "
                 "markers and kept apart from it (the prediction holds the answer alone); empty when the reply had "
                 "none; null for a model without thought markers or an answer not generated."),
    DetailColumn("reasoning_tokens", INT, "Tokens the reply spent on its thought, its markers included (null where "
                 "not counted)."),
    DetailColumn("thought_unclosed", BOOL, "The reply ended inside its thought (its token budget ran out, or it "
                 "stopped before closing it): it has no answer, and nothing is read from the thought."),
    DetailColumn("near_ties", JSON, "Steps where a batch of another size may pick another token: a greedy step's "
                 "top two within 0.001 logits, a sampled draw within 1e-4 of a token's edge (step, kind, margin, the "
                 "two tokens, a digest of the reply before); [] none; empty where not watched (served)."),
)

# How many of a benchmark's generated replies ended inside their thought (no answer; results.benchmarks.<name>.thinking,
# written by the runner): every benchmark that generates lists it among its metrics, so the board counts them.
THOUGHT_UNCLOSED = Metric("thought_unclosed", "ended in thought",
                          "Generated replies that ended inside their thought (the thinking budget ran out, or the "
                          "model stopped before closing it): they have no answer and score as unanswered. Many mean "
                          "the thinking budget is too small for this model.",
                          kind=COUNT, higher_is_better=False, path=("thinking", "unclosed"), shown=False)

HUB_EVAL_SCALES = ("percent", "fraction")


@dataclass(frozen=True)
class HubEval:
    """Where a benchmark's number goes in the Hub's evaluation results (`.eval_results/*.yaml` of a model repo): the
    benchmark dataset registered on the Hub (its `eval.yaml`), the task of that file, the metric of ours that is
    that task's number, and the scale its values take there ("percent": 0-100, "fraction": 0-1)."""

    dataset: str
    task_id: str
    metric: str
    scale: str = "percent"
    note: str = ""  # where the task and scale come from (its eval.yaml), or why they could not be read


@dataclass(frozen=True)
class Card:
    """Everything the Space and the reader need to know about a benchmark, declared once in its package."""

    name: str
    title: str
    short_title: str  # the board's column prefix
    summary: str
    paper: str
    metrics: tuple[Metric, ...]
    default_metric: str  # the key of the metric that ranks the board when this benchmark comes first
    needs_images: bool
    needs_judge: bool
    sources: tuple[Source, ...] = ()
    options: tuple[Option, ...] = ()
    item_view: ItemView = ItemView()
    sections: tuple[Section, ...] = ()
    grader: Grader | None = None
    # how a choice among options is read from their log-likelihoods (empty: the benchmark scores none); the details
    # keep every option's sum, mean and token count, so a reader can recompute the other rule
    likelihood_rule: str = ""
    # every place where this benchmark deliberately differs from its reference implementation, and why (About)
    differences: tuple[str, ...] = ()
    # every column of its details files, in the order they are stored (evaluator.runs.details writes them so)
    details: tuple[DetailColumn, ...] = ()
    # the terms of the data its details quote (questions, answers, images), for the results dataset's card
    licence: str = ""
    # the BibTeX entry of its paper (About and the results dataset's card print it beside the leaderboard's; empty:
    # none is known), with only the fields its paper confirms
    citation: str = ""
    # the option that picks how it asks (one of `options`); its value "generation" asks by generation alone, what a
    # served model can answer (evaluator.benchmarks.modes). Empty: the benchmark only ever generates.
    mode_option: str = ""
    # the values its mode option takes (empty: it only generates); a run asking for another fails before the model loads
    modes: tuple[str, ...] = ()
    # what it measures, in a few words (`python -m evaluator list-benchmarks`; empty: the summary's first clause)
    measures: str = ""
    # its full suite's items with default sources and options (None: not known here), and where that count comes from
    full_suite_items: int | None = None
    full_suite_note: str = ""
    # the benchmark dataset registered on the Hub that its number goes to on model pages (None: none is registered)
    hub_eval: HubEval | None = None
    # the keys of the metrics that form its per-dimension chart on the board, in the order drawn (empty: no chart)
    dimensions: tuple[str, ...] = ()
    lite: Lite | None = None  # how its lite suite is drawn from the full one (None: a lite run asks the full suite)

    def metric(self, key: str) -> Metric:
        for metric in self.metrics:
            if metric.key == key:
                return metric
        raise KeyError(f"{self.name} has no metric {key!r}")

    def detail(self, name: str) -> DetailColumn:
        for column in self.details:
            if column.name == name:
                return column
        raise KeyError(f"{self.name} has no details column {name!r}")


# --------------------------------------------------------------------------------------------- a run

@dataclass
class PlanContext:
    """What a plan depends on besides the benchmark itself."""

    suite: str = "sample"  # one of SUITES: "sample" (shipped in the package), "lite" or "full" (downloaded)
    limit: int = 0  # items to run (0: all)
    images_dir: Path = Path(".cache/images")  # on-disk cache of downloaded images
    sources: dict[str, str] = field(default_factory=dict)  # data locations by Source.key
    options: dict[str, str] = field(default_factory=dict)  # "<benchmark>.<name>" -> value


@dataclass
class Ask:
    """One model request and the details rows its answer fills.

    options None: generate, and the text goes into each row's "prediction"; else score the options, and their
    log-likelihoods go into each row's "option_scores" (JSON: [{"sum", "mean", "n_tokens"}]). `images`, when
    set, fetches the request's images as the item's turn comes (a failure, ImageUnavailable, marks the item's
    rows "image_unavailable"); the executor also writes the prompt as the model received it into "prompt".
    Every column the executor writes ("prediction" or "option_scores", "prompt"; "status" and "error" when an image
    may be unavailable; "hit_token_limit" where the rows have it) must be one of the card's details columns.
    """

    item: str
    request: GenerationRequest
    rows: list[dict]
    options: list[str] | None = None
    images: Callable[[], list[Image.Image]] | None = None


@dataclass
class Plan:
    """Every details row (in the order they are stored), the item ids in running order, and the Asks.

    suite_items: how many items the whole suite has before any limit (None: unknown); with the score's
    counts["scored"] (the items its headline score counts) it gives the run's coverage in the results; strata: the
    downloaded suite's items per lite stratum (None: the sample), checked against Card.lite.strata."""

    rows: list[dict]
    items: list[str]
    asks: list[Ask]
    prompts: dict[str, str] = field(default_factory=dict)  # model-side prompt texts, hashed into the results
    suite_items: int | None = None
    strata: dict[str, int] | None = None


@dataclass
class ScoreContext:
    """What scoring depends on: the run's suite, limit and options, and the judge (None when none is set)."""

    suite: str = "sample"
    limit: int = 0
    sources: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    judge: Any = None
    progress: Callable[[int, int], None] = lambda done, total: None  # judged answers done / in all


@dataclass
class Scored:
    """Aggregate scores (fractions 0..1, NaN when undefined), counts, breakdowns, and the final details rows."""

    scores: dict[str, float]
    counts: dict[str, int]
    rows: list[dict]
    extra: dict = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)  # judge-side prompt texts, hashed into the results
    # each score's standard error and 95% interval (evaluator.metrics.intervals.Interval), by metric key
    intervals: dict = field(default_factory=dict)


@runtime_checkable
class Benchmark(Protocol):
    """A benchmark package, as the registry checks it."""

    CARD: Card

    def plan(self, ctx: PlanContext) -> Plan: ...

    def score(self, rows: list[dict], ctx: ScoreContext) -> Scored: ...
