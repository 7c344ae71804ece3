"""Every column of the board and of leaderboard.parquet, declared once, and the board's views, built from the
benchmarks' cards.

A column is where its value lives in a results file (a path of keys, or a function of the whole results file for the
few derived ones), what kind of value it is and what it means. Model and run columns are declared here; each
benchmark gives its card's metrics (name "<benchmark>_<metric key>", label "<short title> <metric label>") and a
coverage column. The board-only columns (rank, flag, notes, details) depend on the other runs and the settings, so
they are computed when the board is drawn (leaderboard.board.views) and are not in the parquet file.

A view is the set of columns the board shows at once: Overview (the overall score and each benchmark's headline
score), then one view per benchmark (every metric of that benchmark), then Run details (the Overview's rows with every
run fact: coverage, suite, limit, judge, details). The Leaderboard tab, the parquet file and the About tab all read one
`Schema`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

from evaluator import api
# the kinds, Column and View, and the interval columns are re-exported: every column is found through this module
from leaderboard.board.column_types import (COUNT, INTERVAL, NUMBER, NUMERIC, RANK, SCORE, SHA, TEXT, TIME,  # noqa: F401
                                            Column, View, finite, value_at)
from leaderboard.board.interval_columns import (INTERVAL_PARTS, INTERVALS_DESCRIPTION,  # noqa: F401
                                                interval_columns, interval_name, interval_text_column,
                                                overall_interval)
from leaderboard.board.costs import cpu_hours, gpu_hours, hardware
from leaderboard.board.run_facts import (answer_tokens_per_reply, decoding_overrides, endpoint_model, endpoint_url,
                                         judge_id, judge_name, judge_trial, modes, reasoning_tokens_per_reply,
                                         served_flag, skipped, thinking_mode, thinking_run)
from leaderboard.submissions.vocabulary import MODEL_TYPES

OVERVIEW = "overview"
MAIN_METRICS = 4  # metrics in a benchmark view's board table (the headline and its first main ones): it fits 1,400 px
RUNS = "runs"  # the Overview's rows with every run fact


MODEL_COLUMNS: tuple[Column, ...] = (
    Column("model", "Model", ("model",), TEXT,
           "The Hugging Face Hub model id (or local folder) that was evaluated; it links to the model's Hub page. A "
           "served model shows its display name tagged \"served\" with its endpoint's host (linked to the Hub page of "
           "the endpoint's model name when that is a Hub id); its id here is served--<host>/<model>. A run whose results were "
           "proposed to its model page shows a PR link to that pull request beside it."),
    Column("revision", "Revision", ("revision",), SHA,
           "The commit the model was pinned to (first 12 characters of the sha on the board)."),
    Column("precision", "Precision", ("precision",), TEXT,
           "The precision requested at submission (auto: bfloat16 on GPU, float32 on CPU)."),
    Column("model_type", "Type", ("model_type",), TEXT,
           "The model type given at submission: " + ", ".join(MODEL_TYPES) + "."),
    Column("params_billions", "Params (B)", ("params_billions",), NUMBER, "Number of parameters, in billions."),
    Column("display_name", "Display name", ("display_name",), TEXT,
           "The name a served model is shown under, chosen by the admins who added it (empty: its endpoint's model "
           "name); empty for other runs."),
)
RUN_COLUMNS: tuple[Column, ...] = (
    Column("suite", "Suite", ("run", "suite"), TEXT,
           "sample (the project's own small synthetic suites, shipped with it; shown as \"sample (synthetic)\": not "
           "the papers' data), lite (a seeded, stratified subset of each benchmark's full suite, chosen by a rule on "
           "each item's own key: fewer items, wider intervals; its hover text says how many of the full suite's) or "
           "full (the benchmarks' complete data); runs on different suites are never ranked together.", group="run"),
    Column("lite_rule", "Lite rule", ("run", "lite_rule"), TEXT,
           "A lite run's rule version (such as lite-v1): two lite runs were asked the same items exactly when their "
           "rules match, so lite runs of different rules are never ranked together; empty for other suites.",
           group="run"),
    Column("modes", "Asked by", (), TEXT,
           "How each benchmark the run ran was asked, as name=mode (generation: by generation alone; likelihood or "
           "both: also by each option's likelihood). Part of comparability: runs asked differently are never ranked "
           "together; a served model whose server gives no prompt log-probabilities is asked by generation only.",
           group="run", derive=modes),
    Column("served", "Served", (), TEXT,
           "true for a served model (one behind an OpenAI-compatible chat-completions endpoint, added by the admins: "
           "the board tags its row \"served\" with the endpoint's host); false for a Hub model at its pinned "
           "revision, whether the evaluator loaded it or a Job's own vLLM served it.", group="run", derive=served_flag),
    Column("engine", "Engine", ("run", "engine"), TEXT,
           "What ran the model: transformers (the evaluator's own adapter, in-process), vllm (a Job's vLLM server on "
           "its own loopback, pinned at the revision) or endpoint (a served model's server); empty for runs from "
           "before it was recorded.", group="run"),
    Column("endpoint", "Endpoint", (), TEXT,
           "A served model's endpoint: its base URL (scheme, host, port and path only; never a key); empty for other "
           "runs.", group="run", derive=endpoint_url),
    Column("endpoint_model", "Endpoint model", (), TEXT,
           "The model name a served model's endpoint was asked for (the board links it to its Hub page when it is a "
           "Hub id); empty for other runs.", group="run", derive=endpoint_model),
    Column("judge", "Judge", (), TEXT,
           "The LLM judge that graded the run's judged benchmarks (its model and endpoint, or a local model at its "
           "revision); empty when no benchmark of the run needs one. A run graded again shows its latest judge.",
           group="run", derive=judge_name),
    Column("judge_id", "Judge id", (), TEXT,
           "8 characters of the hash of the judge's identity: two runs with the same id were graded by the same "
           "judge (model, revision or endpoint).", group="run", derive=judge_id),
    Column("judge_trial", "Trial judge", (), TEXT,
           "true when a local judge under 7B parameters graded the run's judged benchmarks: a trial judge, for trying "
           "the machinery, whose grades are not for scores, so the run is flagged and never ranked; false otherwise.",
           group="run", derive=judge_trial),
    Column("limit", "Limit", ("run", "limit"), COUNT,
           "The run's item limit per benchmark (LEADERBOARD_LIMIT; a benchmark may apply it per group); 0 or empty: the "
           "whole suite. A limited run is flagged and not ranked with complete ones.", group="run"),
    Column("skipped", "Skipped", (), TEXT,
           "The benchmarks the run skipped, with the reason (JSON: benchmark -> reason), for example a benchmark "
           "that needs images on a text-only model.", group="run", derive=skipped),
    Column("hidden", "Hidden", ("hidden",), TEXT,
           "Why the leaderboard's admins hid the run from the ranking (for example a model trained on the test "
           "data); empty for other runs. A hidden run is flagged with this reason and not ranked.", group="run"),
    Column("pull_request", "Pull request", ("pull_request",), TEXT, "The pull request that proposed the run's "
           "results to its model page (the Explorer's button), as its URL; empty for other runs.", group="run"),
    Column("key", "Key", ("key",), TEXT, "<org>/<model>/<sha12>_<precision>, with -thinking-on or -thinking-off when "
           "the request set the model's enable_thinking switch: names the request, results and details.", group="run"),
    Column("architecture", "Architecture", ("architecture",), TEXT, "The model's architecture class.", group="run"),
    Column("dtype", "Dtype", ("run", "dtype"), TEXT,
           "The dtype the weights were loaded in. Shown, not ranked apart: runs in float32 and bfloat16 are ranked "
           "together, and the batch-size figures in the About tab say how far rounding moves a score.", group="run"),
    Column("device", "Device", ("run", "device"), TEXT, "cuda or cpu.", group="run"),
    Column("gpu", "GPU", ("run", "hardware", "gpu_name"), TEXT, "The GPU the run used (empty on the CPU).",
           group="run"),
    Column("batch_size", "Batch size", ("run", "batch_size"), COUNT,
           "Requests the model answered at once (after any halving on out-of-memory). Shown, not ranked apart: an "
           "answer never depends on its batch (each sampled request draws from a seed of its own).", group="run"),
    Column("attention", "Attention", ("run", "attention"), TEXT,
           "The attention implementation the model ran with (sdpa, eager, ...); empty for a served model. Shown, not "
           "ranked apart.", group="run"),
    Column("generation_path", "Generation", ("run", "generation_path"), TEXT,
           "How the model generated: dynamic (a growing KV cache), static or static-compiled (a fixed-size cache, "
           "compiled on a GPU), or served (an endpoint's own). Shown, not ranked apart: the paths give the same "
           "greedy tokens.", group="run"),
    Column("torch_version", "torch", ("run", "versions", "torch"), TEXT, "The torch version the run used.",
           group="run"),
    Column("transformers_version", "transformers", ("run", "versions", "transformers"), TEXT,
           "The transformers version the run used.", group="run"),
    Column("submitted_time", "Submitted", ("submitted_time",), TIME, "When the request was submitted (UTC).",
           group="run"),
    Column("finished_time", "Finished", ("finished_time",), TIME, "When the run finished (UTC).", group="run"),
    Column("judged_time", "Judged", ("run", "judged_time"), TIME, "When the judge graded the run (UTC).", group="run"),
    Column("cost_executor", "Ran as", ("run", "cost", "executor"), TEXT,
           "hf-jobs (a Hugging Face Job) or local (the Space's own machine); empty for a run published before costs "
           "were recorded (not recorded).", group="run"),
    Column("cost_flavor", "Hardware", (), TEXT,
           "What the run was billed on: the Job's hardware flavor, else the GPU's name, else cpu (or served: an "
           "endpoint's tokens, no GPU). Estimates compare runs on the same hardware.", group="run", derive=hardware),
    Column("gpu_hours", "Hours (GPU)", (), NUMBER,
           "GPU time in hours: for a Job on a GPU flavor, from when the Jobs API says it started running to the "
           "publish of its results; on the local executor with a GPU, the evaluator's wall time. n/a for a run on a "
           "CPU (see Hours (CPU, wall)) and for a served model (no GPU); not recorded for runs published before "
           "costs were recorded (never 0).", group="run", derive=gpu_hours),
    Column("cpu_hours", "Hours (CPU, wall)", (), NUMBER,
           "For a run on a CPU (a CPU Job flavor, or the Space's CPU), its wall time in hours, measured as GPU time "
           "is; n/a for a run on a GPU and for a served model.", group="run", derive=cpu_hours),
    Column("cost_usd", "Cost (USD)", ("run", "cost", "usd"), NUMBER,
           "What the run cost in US dollars: its hours at the Job flavor's Hub price (or "
           "LEADERBOARD_GPU_PRICE_PER_HOUR on the local executor), or a served model's tokens at "
           "LEADERBOARD_MODEL_PRICE_PER_MTOK; empty when no price is known, and for runs published before costs were "
           "recorded (not recorded, never 0).",
           group="run"),
    Column("prompt_tokens", "Prompt tokens", ("run", "cost", "prompt_tokens"), COUNT,
           "A served model's prompt tokens over the run, as its endpoint reported them; empty for other runs.",
           group="run"),
    Column("completion_tokens", "Completion tokens", ("run", "cost", "completion_tokens"), COUNT,
           "A served model's completion tokens over the run, as its endpoint reported them; empty for other runs.",
           group="run"),
    Column("thinking", "Thinking run", (), TEXT,
           "true when the model wrote a thought before its answers (a thinking model; the board tags its row "
           "\"thinking\"); false otherwise. Every benchmark reads the answer alone, never the thought.", group="run",
           derive=thinking_run),
    Column("thinking_mode", "Thinking mode", (), TEXT,
           "How the run let a model with thought markers think: on (its prompt opens a thought), off (its prompt "
           "closes an empty one), may (neither: the model opens one itself), with the enable_thinking switch the run "
           "set (or the template's default); empty for a model without thought markers. A run that thought (or whose "
           "prompt opened a thought) is tagged \"thinking\" beside its model, one whose prompt closed it \"thinking "
           "off\", so the same model's two runs are never read as one.",
           group="run", derive=thinking_mode),
    Column("reasoning_tokens", "Thought tokens / reply", (), NUMBER,
           "A thinking run's mean tokens per generated reply spent on the thought (its markers included); empty for "
           "other runs.", group="run", derive=reasoning_tokens_per_reply),
    Column("answer_tokens", "Answer tokens / reply", (), NUMBER,
           "A thinking run's mean tokens per generated reply after the thought (the answer); empty for other runs.",
           group="run", derive=answer_tokens_per_reply),
    Column("decoding", "Decoding overrides", (), TEXT,
           "What the benchmarks' decoding overrode of the model's own generation_config.json, as field asked→used "
           "(none: it asked nothing that changes decoding). The benchmarks decode greedily or sample at their own "
           "temperature from a seed per item, with no penalty, minimum length or beams, and each benchmark's own "
           "token budget; the model's end tokens are honoured. Empty for a served model (the server's).",
           group="run", derive=decoding_overrides),
)
# the cost columns: empty on a run published before costs were recorded, which the board shows as "not recorded"
COST_COLUMNS = ("cost_flavor", "gpu_hours", "cpu_hours", "cost_usd", "prompt_tokens", "completion_tokens")
COST_RECORDED = "cost_executor"  # the column that says whether a run's cost was recorded at all
BOARD_COLUMNS: tuple[Column, ...] = (
    Column("rank", "#", (), RANK,
           "The run's place among the runs it is comparable with (its group): the same suite (full, lite or sample; a "
           "lite run's rule too), each benchmark asked "
           "the same way (**Asked by**: by generation alone, or also by option likelihood) and, in the Overview, an "
           "overall score over the same benchmarks. Within a group a run's place is one plus the number of runs whose "
           "95% interval lies wholly above its own (Chatbot Arena's rule), so runs that the data cannot tell apart "
           "share a place; the place is shown as the range it could take, from that place to the last one no run "
           "below it wholly rules out (\"1-3\": first to third). When the board shows several groups, each place says "
           "its group (\"1 of 3 · on all 4\") and a line separates the groups. How it ran (dtype, device, GPU, batch "
           "size, attention, generation path, library versions) is shown in Run details and never ranks runs apart. "
           "\"unranked\" for a flagged run or a run without the score (listed after the ranked ones, with its group "
           "when there are several).", group="board"),
    Column("flag", "Flag", (), TEXT,
           "Why the run is not ranked with complete runs: the admins hid it (with their reason), a trial judge graded "
           "it, it used an item limit, or it scored fewer than the coverage threshold of a benchmark's items. Flagged "
           "runs are left out unless **Show flagged runs** is ticked.", group="board"),
    Column("notes", "Notes", (), TEXT,
           "What else to know to compare the row: benchmarks skipped and why, benchmarks asked otherwise than by "
           "default (such as by generation only, as a served model is), and answers the judge could not grade or "
           "rate (counted, never scored as wrong).", group="board"),
    Column("details", "Details", (), TEXT,
           "Links to the run's details: one file per benchmark, one row per question (the Explorer tab opens them "
           "question by question).", group="board"),
)


def headline(card: api.Card) -> api.Metric:
    """The metric that stands for the benchmark in the Overview and the overall score."""
    return card.metric(card.default_metric)


def headline_scores(results: dict, cards: Sequence[api.Card]) -> dict[str, float]:
    """Benchmark name -> its headline score, for the benchmarks of `cards` the run has a defined headline score on."""
    found = {}
    for card in cards:
        value = finite(value_at(results, ("benchmarks", card.name, *headline(card).where)))
        if value is not None:
            found[card.name] = value
    return found


def overall_score(results: dict, cards: Sequence[api.Card]) -> float | None:
    """THE overall score: the mean of the headline scores over the benchmarks the run has one on (None: none). A
    benchmark the run skipped, or whose headline is undefined, is not in the mean; `scored_on` names those that are,
    and runs are only ranked against runs scored on the same ones."""
    scores = headline_scores(results, cards)
    return sum(scores.values()) / len(scores) if scores else None


def metric_column(card: api.Card, metric: api.Metric) -> Column:
    """The column of one metric of a card (a count says so in its label: it is never a percentage)."""
    kind = SCORE if metric.kind in api.PERCENT_KINDS else COUNT if metric.kind == api.COUNT else NUMBER
    label = f"{card.short_title} {metric.label}" + (" (count)" if kind == COUNT else "")
    return Column(name=f"{card.name}_{metric.key}", label=label, path=("benchmarks", card.name, *metric.where),
                  kind=kind, description=metric.description, group=card.name,
                  higher_is_better=metric.higher_is_better)


def coverage_column(card: api.Card) -> Column:
    """The benchmark's coverage: items scored / items in the suite."""
    return Column(name=f"{card.name}_coverage", label=f"{card.short_title} coverage",
                  path=("benchmarks", card.name, "coverage", "share"), kind=SCORE, group=card.name,
                  description=f"{card.title} items that count in its scores / items in the suite: below 100 when the "
                              "run used a limit, or when images could not be fetched or answers could not be graded. "
                              "Under the coverage threshold the run is flagged and not ranked with complete runs. "
                              "Empty for runs published before coverage was recorded.")


@dataclass(frozen=True)
class Schema:
    """The raw columns (leaderboard.parquet, in order), the board-only columns, the cards they came from, and the
    board's views (Overview first)."""

    columns: tuple[Column, ...]
    cards: tuple[api.Card, ...]
    views: tuple[View, ...]
    board_only: tuple[Column, ...] = BOARD_COLUMNS
    by_name: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {c.name: c for c in (*self.columns, *self.board_only)})

    @property
    def names(self) -> list[str]:
        """The raw columns' names (the parquet file's columns)."""
        return [c.name for c in self.columns]

    @property
    def default_sort(self) -> str:
        return self.views[0].rank_by

    def column(self, name: str) -> Column:
        return self.by_name[name]

    def view(self, key: str | None) -> View:
        """The view named `key` (the Overview for an unknown or empty key)."""
        return next((v for v in self.views if v.key == key), self.views[0])

    def benchmark_columns(self, name: str) -> list[Column]:
        return [c for c in self.columns if c.group == name]

    def card(self, name: str) -> api.Card | None:
        return next((c for c in self.cards if c.name == name), None)


def _overview(cards: Sequence[api.Card]) -> View:
    """The model, the overall and each benchmark's headline score, and why a row is flagged: it fits a laptop's
    screen, and a phone's first screen shows the model and the overall score (the run facts are in RUNS)."""
    headlines = [f"{card.name}_{card.default_metric}" for card in cards]
    return View(OVERVIEW, "Overview", None,
                ("rank", "model", "overall", *headlines, "suite", "flag", "notes", "precision", "revision"), "overall")


def _runs(cards: Sequence[api.Card]) -> View:
    """The Overview's rows with every run fact, the precision and revision first (two runs of one model differ there,
    on a phone's first screen too): what the overall score is over, coverage, suite, limit, judge,
    hardware, GPU time and cost (a thinking run's thought and answer tokens beside it), details, how it ran (dtype, device, GPU, batch size, attention, generation path,
    library versions), times."""
    coverage = [f"{card.name}_coverage" for card in cards]
    intervals = [f"{card.name}_{card.default_metric}_interval" for card in cards]
    return View(RUNS, "Run details", None,
                ("rank", "model", "precision", "revision", "overall", "overall_interval", "scored_on", "model_type",
                 "params_billions", "suite", "lite_rule", "modes", "limit", *intervals, *coverage, "judge", "judge_id", "endpoint", "cost_flavor", "gpu_hours", "cpu_hours",
                 "cost_usd", "thinking_mode", "reasoning_tokens", "answer_tokens", "flag", "notes", "details", "dtype",
                 "device", "gpu", "batch_size", "attention", "generation_path", "decoding", "torch_version", "transformers_version", "submitted_time", "finished_time"), "overall")


def _benchmark_view(card: api.Card) -> View:
    """Every metric of the benchmark (the headline first, then its main metrics and then the finer ones, percentages
    and numbers in card order, then coverage and counts), and the run facts that decide whether two rows compare.
    The board's table shows the headline and the first main metrics, judge, flag and notes (it fits 1,400 px); the
    other metrics, coverage, counts and run facts are in its More columns table."""
    rest = [m for m in card.metrics if m.key != card.default_metric]
    metrics = [headline(card)] + [m for m in rest if m.shown] + [m for m in rest if not m.shown]
    values = [f"{card.name}_{m.key}" for m in metrics if m.kind != api.COUNT]
    counts = [f"{card.name}_{m.key}" for m in metrics if m.kind == api.COUNT]
    judge = ("judge", "judge_id") if card.needs_judge else ()
    main = [f"{card.name}_{m.key}" for m in metrics if m.kind != api.COUNT and (m.shown or m is metrics[0])]
    return View(card.name, card.title, card.name,
                ("rank", "model", "precision", "model_type", "params_billions",
                 *(name for value in values for name in (value, f"{value}_interval")), f"{card.name}_coverage",
                 *counts, "suite", "lite_rule", *(("modes",) if card.mode_option else ()), *judge, "limit", "flag", "notes",
                 "details", "revision"),
                f"{card.name}_{card.default_metric}",
                main=("rank", "model", main[0], f"{main[0]}_interval", *main[1:MAIN_METRICS], *judge[:1], "flag",
                      "notes", "precision", "revision"))


def build_schema(cards: Sequence[api.Card], order: Sequence[str] = ()) -> Schema:
    """The schema of these cards; the views list the benchmarks named in `order` first (the configured ones), then
    the rest in registry order."""
    ranked = [c for n in order for c in cards if c.name == n] + [c for c in cards if c.name not in order]
    overall = Column("overall", "Overall", (), SCORE,
                     "The mean of the headline scores (" + ", ".join(
                         f"{c.short_title} {headline(c).label}" for c in ranked) + ") over the benchmarks the run "
                     "has a score on; **Scored on** says which. A skipped benchmark is never averaged in as zero: "
                     "runs are ranked only against runs scored on the same benchmarks, with the same suite.",
                     group="run", derive=lambda results: overall_score(results, ranked))
    scored_on = Column("scored_on", "Scored on", (), TEXT,
                       "The benchmarks in the overall score (those the run has a headline score on), as a list of "
                       "names; runs are ranked against runs scored on the same list.", group="run",
                       derive=lambda results: ",".join(headline_scores(results, ranked)) or None)
    overall_parts = tuple(replace(col, derive=lambda results, part=col.name.rsplit("_", 1)[1]: value_at(
        overall_interval(results, headline_scores(results, ranked), ranked), (part,))) for col in interval_columns(overall))
    benchmark = [col for card in ranked
                 for col in ([metric_column(card, m) for m in card.metrics] + [coverage_column(card)])]
    intervals = [part for card in ranked for m in card.metrics if m.kind != api.COUNT
                 for part in interval_columns(metric_column(card, m), ("benchmarks", card.name, "intervals", m.key))]
    columns = (*MODEL_COLUMNS, overall, scored_on, *overall_parts, *benchmark, *RUN_COLUMNS, *intervals)
    texts = tuple(interval_text_column(col) for col in columns
                  if col.kind in (SCORE, NUMBER) and (col.name == "overall" or col.group in {c.name for c in ranked})
                  and not col.interval_of and not col.name.endswith("_coverage"))
    views = (_overview(ranked), *(_benchmark_view(card) for card in ranked), _runs(ranked))
    return Schema(columns=columns, cards=tuple(ranked), views=views, board_only=(*BOARD_COLUMNS, *texts))


def schema(order: Sequence[str] = ()) -> Schema:
    """The schema of every registered benchmark (see build_schema for `order`)."""
    return build_schema(api.cards(), order)
