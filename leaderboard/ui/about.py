"""The About tab: what each benchmark measures and each column means (read from the cards and the schema), how a
run works, how a run is graded again, and what is recorded."""
from __future__ import annotations

import math
from typing import Sequence

import gradio as gr

from evaluator import api
from leaderboard.board.citation import benchmark_bibtex, bibtex
from leaderboard.board.columns import INTERVALS_DESCRIPTION, Schema, headline, schema
from leaderboard.board.dataset_card import space_url
from leaderboard.board.proposals import PER_PERSON_PER_DAY, slug
from leaderboard.formatting import format_number
from leaderboard.settings import Settings
from leaderboard.store import Store

RUN_STEPS = """\
## How a run works
1. **Submit.** {who} The Submit tab checks the model id on the Hub, pins it to a full commit sha, refuses models
   that need remote code, lack safetensors weights or are too large, and writes a **PENDING** request
   (`requests/<org>/<model>/<sha12>_<precision>.json`; `-thinking-on` or `-thinking-off` before `.json` when it set
   the model's enable_thinking switch: one model run both ways is two runs, two rows).
2. **Claim.** A scheduler tick (every {interval} s) recovers stale work and claims the oldest pending request
   atomically, with a **lease** of {lease} s that a heartbeat renews while the run is alive; the request is
   **RUNNING**. A lease that expires (a crashed worker) sends the request back to the queue, at most
   {attempts} attempt(s) in all.
3. **Evaluate.** A worker subprocess (`python -m evaluator run ...`) loads the model at the pinned commit and runs
   the benchmarks ({benchmarks}; suite: {suite}), reporting progress to the Queue tab. For each benchmark it first
   stores the model's raw answers, then scores them (and has the judge grade them, where a benchmark needs one).
4. **Publish.** The aggregate scores go to `results/<org>/<model>/<sha12>_<precision>.json`, one row per question
   to `details/<org>/<model>/<sha12>_<precision>/<benchmark>.parquet`; the request becomes **FINISHED**, and
   `leaderboard.parquet` (one row per finished run, scores as fractions, loadable with
   `datasets.load_dataset("parquet", ...)`) is rebuilt: the model appears on the board. A run that fails is
   **FAILED** with the reason and the last lines of the worker's log. The board shows only runs whose request is
   FINISHED, so a worker stopped half-way through publishing shows nothing, and the run that replaces it replaces
   its files. A judge reply that is not a judgement (an error page, an empty reply, a refusal) is asked again and
   then counted ungraded, never scored.
5. **Inspect.** The **Explorer** tab opens every run's details question by question: the image as the model saw
   it, the prompt as sent, the raw output, how the answer was read, the gold, the score and the judge's reply,
   filtered, grouped, compared with a second run, and linkable.

**Served models.** The admins can also add a model served behind an OpenAI-compatible chat-completions endpoint
(the Queue tab: base URL, model name, display name). It is queued and published like any request, runs on the Space
itself (it needs no GPU; the endpoint's bearer token is the `LEADERBOARD_MODEL_TOKEN` secret). Where its server
returns prompt log-probabilities (vLLM, SGLang) its options are scored by likelihood as an in-process model's are;
otherwise it is asked every benchmark **by generation only**. Its row is tagged "served" with the endpoint's host,
and it is ranked only with runs asked the same way.

A finished run can be **graded again** by another judge from its stored answers, without running the model again
(`python -m leaderboard.running.rescore`): only the judged scores change, and the results say which judge graded them,
when, and which judges graded them before.
"""

RECORDED = """\
## What is recorded for reproducibility
Every results file records, besides the scores and per-benchmark counts (items, scored, images unavailable) and
coverage (items that count in the scores, items run, items in the suite, and their share):
- the model id, the **full commit sha**, the precision, `thinking` (the mode it ran with: on, off, may, none), the
  model type, the parameter count and architecture;
- `run.dtype`, `run.device` and `run.batch_size` used, and `run.hardware`: the GPUs (name, count, memory of each),
  the NVIDIA driver, torch's CUDA version, and why the CPU was used when no GPU was usable;
- `run.attention` (the attention implementation), `run.generation_path` (how the model generated: a dynamic KV
  cache, or a static one compiled on a GPU), `run.generation_cache` and `run.compile_time_s` (the setting, the
  shapes compiled, the compile warm-up, and why a run fell back to the dynamic cache if it did),
  `run.image_features` (images encoded and reused: each image is encoded once per run) and `run.sampling` (how
  sampled answers draw: each from a seed of its own, per question and repeat);
- `run.thinking`: for a model with thought markers, the mode its prompts gave (on, off, may), the enable_thinking
  switch the run set, the thinking budget, and the replies with a thought, those that ended inside it (no answer)
  and the tokens spent on thoughts and on answers; `run.decoding`: each field of the model's generation_config that
  would change decoding, what it asked, what was used and whether it was overridden or honoured;
- `run.versions`: the versions of torch, transformers and the other libraries involved;
- `run.git_commit`: this project's commit that ran the evaluation;
- `run.judge` and `run.judge_name`: the judge's identity (model id and revision, or endpoint and model name) where
  a judge grades, `run.judged_time` when it graded, and `run.previous_judges` when the run was graded again;
- `run.prompt_hashes`: a sha256 of every prompt template and demonstration file used;
- `run.options` and `run.sources`: the benchmark options and data locations the run used;
- `run.modes`: how each benchmark was asked (by generation alone, or also by option likelihood);
- `served` and, for a served model, `run.served`: its endpoint's public URL (never a key), host and model name, the
  server's own model id, whether it saw the images, and the tokens its answers used;
- `run.suite` (sample, lite or full; a lite run's rule version in `run.lite_rule`, and a downloaded suite's strata
  against its card's table in `benchmarks.<name>.suite_check`), `run.item_counts` per benchmark, `run.wall_time_s`,
  `run.scoring_path` and whether the model saw the images (`run.has_vision`);
- `run.resumed`: when a run was interrupted (a killed worker, a restarted Space) and started again, per benchmark
  how many items reused the model's answers recorded by the earlier attempt (same prompt, same generation settings)
  and how many model requests were made afresh;
- `run.cost`: what the run cost (see What a run costs);
- the submitted and finished times, and the benchmarks that were skipped, with the reason.

**Batch size and the numbers.** The batch size, the GPU and the questions that share a batch change an answer only
at a near tie: every sampled answer (a benchmark that samples says so in its options below) draws from a seed of its
own, from the benchmark, the run's seed, the question and the repeat, whatever batch it is in. A different batch shape
rounds a little differently (in float32 on a CPU, logits move by about 1e-5), so where a greedy answer's two most
likely next tokens are within 0.001 logits, or a sampled answer's draw lies within 1e-4 of the edge between two
tokens, another batch may take the other token. Every such step is recorded in the details (`near_ties`: its
position, margin and the two tokens) and shown under the question in the Explorer. On the CPU in float32 every sample
suite gives the same answers, grades and choices at batch size 1 and 8 but at recorded near ties, and option scores
agree within 1e-5 per token. On a GPU in bfloat16 rounding moves log-probabilities further (not yet measured on a
GPU), so near ties matter more: submit in float32 where that must not happen. The batch size, dtype, device, GPU,
attention, generation path and library versions are shown in **Run details**; none of them ranks runs apart.
"""

COSTS = """\
## What a run costs
Every run published since costs are recorded says what it cost, in its results file (`run.cost`) and in the **Run
details** view and the results dataset (**Hardware**, **Hours (GPU)** or, for a run on a CPU, **Hours (CPU, wall)**, **Cost (USD)**; a served model's
tokens):
- **A Hugging Face Job** (`LEADERBOARD_EXECUTOR=hf-jobs`): its hardware flavor, and its time from when the Jobs API
  says it started running (`started_at`) to the publish of its results, which the Job itself does just before it
  ends; the cost is that time at the flavor's price on the Hub. Waiting for a machine is not billed, and the last
  seconds after the publish are not counted here.
- **The Space's own machine** (the local executor): its GPU's name and the evaluator's own wall time
  (`run.wall_time_s`), priced at `LEADERBOARD_GPU_PRICE_PER_HOUR` when that is set{gpu_price}; a run on the CPU
  records its wall time as CPU hours, never as GPU hours, with no cost.
- **A served model** uses no GPU time here: it records the prompt and completion tokens its endpoint reported,
  priced at `LEADERBOARD_MODEL_PRICE_PER_MTOK` when that is set{token_price}.

A run published before costs were recorded shows **not recorded**: never 0, and it counts in no estimate. When you
submit, and in the Queue, a request gets an **estimate**: the median run time (GPU hours, or wall time on a CPU) and cost of the earlier runs of models
within a factor of 2 in size on the same hardware, suite, item limit and benchmarks (a served model: the tokens of
earlier served runs), with how many runs it rests on, or "no estimate yet"; the Queue also shows when a pending
request will probably start.
"""


DOCS = (("using.md", "Using the Space", "the tabs, signing in, submitting and the API endpoints scripts call"),
        ("benchmarks.md", "The benchmarks", "each benchmark's full suite and where it differs from its reference"),
        ("models.md", "Model families", "every architecture transformers maps to image-text-to-text: which run "
         "here, and why each other one is refused"),
        ("cli.md", "The evaluator CLI", "running an evaluation by hand, the model families, GPU and CPU figures"),
        ("deploying.md", "Deploying as a Space", "hardware, storage, secrets, sign-in and every setting"),
        ("jobs.md", "Scaling out with Jobs", "one Hugging Face Job per request, what a run costs, the budget"),
        ("hub-costs.md", "What the Space costs the Hub", "API calls, downloads and commits"),
        ("model-pages.md", "Results on model pages", "the Hub's evaluation-results format, and registering a "
         "benchmark"),
        ("reliability.md", "Reliability", "what happens when files are damaged, workers die or the judge fails"),
        ("architecture.md", "Architecture", "how it is built and how to add a benchmark"))


def model_pages_markdown(settings: Settings) -> str:
    """Which benchmarks' numbers go to the Hub's evaluation results (their registered Hub dataset, task, metric and
    scale), which have none, and how a benchmark gets one."""
    mapped = settings.hub_evals
    lines = [f"- **{card.title}**: `{mapped[card.name].dataset}`, task `{mapped[card.name].task_id}`, its "
             f"**{card.metric(mapped[card.name].metric).label}** as a {mapped[card.name].scale}"
             for card in api.cards() if card.name in mapped]
    without = [card.title for card in api.cards() if card.name not in mapped]
    if without:
        lines.append(f"- no registered Hub dataset: {', '.join(without)}")
    return ("## Results on model pages\nEvery complete, unflagged run is also published in the Hub's evaluation-"
            "results format (`eval_results/<org>/<model>/<sha12>_<precision>.yaml` in the results dataset): one "
            "entry per benchmark with a benchmark dataset registered on the Hub, its value, when it finished, how it "
            "was measured and a link to its questions in the Explorer.\n\n" + "\n".join(lines) + "\n\nA "
            "benchmark's authors register its dataset by adding an `eval.yaml` to its dataset repo on the Hub (see "
            "Results on model pages below); the admins map a benchmark to a registered dataset with "
            "`LEADERBOARD_EVAL_DATASETS`.\n\n" + proposing_markdown(settings))


def proposing_markdown(settings: Settings) -> str:
    """Who may propose a run's results to its model page on this Space, and the limits."""
    if settings.eval_results_prs == "off":
        return "Proposing a run's results to its model page is turned off on this leaderboard."
    who = "the leaderboard's admins" if settings.eval_results_prs == "admins" else "any signed-in visitor"
    return (f"**Propose these results to the model page** (in the Explorer, above a run's questions): {who} can have "
            "the leaderboard open a pull request on the model's Hub repo adding `.eval_results/"
            f"{slug()}.yaml`, with the entries above. Only for complete runs the board ranks of a Hub "
            "model at its current revision (never a served endpoint); one pull request per run (asking again links "
            "it, and nothing reopens one the model's authors closed); at most "
            f"{settings.eval_prs_per_day} a day for the whole leaderboard and {PER_PERSON_PER_DAY} per person. The "
            "board shows a **PR** link beside a proposed run.")


def doc_link(space_id: str, name: str, title: str) -> str:
    """A docs page of this Space's repository: linked on the Hub when the Space is known (SPACE_ID), otherwise named
    by its path in the repository."""
    base = space_url(space_id)
    return f"[{title}]({base}/blob/main/docs/{name})" if base else f"**{title}** (`docs/{name}`)"


def docs_markdown(space_id: str) -> str:
    """Where to read more: the docs pages of this Space's repository (doc_link)."""
    lines = [f"- {doc_link(space_id, name, title)}: {what}" for name, title, what in DOCS]
    return "## Read more\nThe pages in this Space's repository go further:\n\n" + "\n".join(lines)


def families_sentence(space_id: str) -> str:
    """Which models run: the vision-language families by model type, text-only models, and where the reasons for
    every other architecture are (the Submit tab's rules and About say it alike)."""
    table = doc_link(space_id, api.FAMILIES_TABLE.removeprefix("docs/"), "The families table")
    families = ", ".join(f"`{name}`" for name in api.model_families())
    return (f"Vision-language families that run (by `model_type` in config.json): {families}; text-only decoder "
            f"models run too, and skip the benchmarks that need images. {table} says why every other architecture "
            "is refused.")


def families_markdown(space_id: str) -> str:
    return "## Model families\n" + families_sentence(space_id) + (
        " A family runs here only once a tiny model of it has passed every check: loading, prompts with and without "
        "images, the same answers at any batch size, option scoring by likelihood, the static KV cache and the "
        "image-features cache. A model that needs remote code is refused, whatever its family.")


def _bullets(columns) -> str:
    """One bullet per column; a `<` in a description (`<org>/<model>`) is shown, not read as HTML."""
    return "\n".join(f"- **{c.label}**: {c.description.replace('<', '&lt;')}" for c in columns)


def benchmark_markdown(card: api.Card, board: Schema) -> str:
    """One benchmark's section: its summary, paper, needs, the columns of its view, options, data."""
    needs = [what for what, needed in (("images", card.needs_images), ("an LLM judge", card.needs_judge)) if needed]
    parts = [f"### {card.title}", card.summary,
             f"[Paper]({card.paper})" + (f" · needs {' and '.join(needs)}" if needs else ""),
             f"Its headline score (in the Overview and the overall score) is **{card.short_title} "
             f"{headline(card).label}**. The **{card.title}** view of the board shows every column below:"]
    view = board.view(card.name)
    parts.append(_bullets([board.column(name) for name in view.columns if board.column(name).group == card.name]))
    if card.options:
        parts.append("Options (`LEADERBOARD_OPTIONS`, `--option`):\n\n" + "\n".join(
            f"- `{o.key}` (default `{o.default or 'unset'}`): {o.description}" for o in card.options))
    if card.sources:
        parts.append("Data for the full suite:\n\n" + "\n".join(
            f"- `{s.setting}` (default `{s.default or 'unset'}`): {s.accepts}" for s in card.sources))
    calls = api.calls_per_item(card.name)
    if calls:
        parts.append("**What one item asks**, by mode (the plan of every request counts these):\n\n" + "\n".join(
            f"- {mode}: {how}" for mode, how in calls))
    if card.full_suite_items:
        lite = f"; its lite suite {api.describe_lite(card.lite)}" if card.lite is not None else ""
        parts.append(f"**Its full suite**: {card.full_suite_items:,} items ({card.full_suite_note}){lite}.")
    if card.likelihood_rule:
        parts.append(f"**Choosing by likelihood**: {card.likelihood_rule}")
    parts.append("**Where this leaderboard differs from the reference implementation**" + (
        ":\n\n" + "\n".join(f"- {difference}" for difference in card.differences) if card.differences
        else ": nowhere; it follows the reference."))
    return "\n\n".join(parts)


BOARD = """\
## Reading the board
The board has views: **Overview** (the model, the overall score, each benchmark's headline score, and the flag and
notes that say whether two rows compare), one view per benchmark with all of its metrics (its main ones in the table,
the rest under **More columns**), and **Run details** (the Overview's rows with every run fact: what the overall score
is over, type, size, suite, limit, coverage, judge, details, times). When no complete run exists yet (a quick trial
with `LEADERBOARD_LIMIT`), the board shows the flagged runs, unranked: a run that is not ranked says **unranked** in
the **#** column, and such runs are grouped by the benchmarks they were scored on. A run graded by a trial judge (a
local judge under 7B parameters, for trying the machinery) is flagged and never ranked.

- **Overall score.** {overall}
- **Coverage.** For each benchmark: items that count in its scores / items in its suite. A run that used an item
  limit, or whose coverage of a benchmark is under {threshold}% (`LEADERBOARD_MIN_COVERAGE`), is **flagged**: it is
  published and can be shown (**Show flagged runs**), but it is never ranked with complete runs. The admins can also
  hide a run from the ranking (for example a model trained on the test data): its flag gives their reason.
- **Comparability.** Every row shows its suite, the judge that graded it (name and a short id), the benchmarks it
  skipped and why, and the answers a judge could not grade (counts, never in the percentages).
- **How it was asked.** A benchmark with multiple choices can be asked by generation (the model writes its answer)
  or by the likelihood of each option; the mode is part of comparability (**Asked by**): runs asked differently
  are never ranked together. A served model (an OpenAI-compatible endpoint, tagged "served" with its host) is
  asked by likelihood too where its server returns prompt log-probabilities, else by generation only; either way
  it is ranked with the runs asked the same way, whether served or run in-process, and its notes say which
  benchmarks were asked otherwise than by default.
"""


TRUST = """\
## How much to believe a number
- **Every score has its 95% interval.** A score reads **55.6 ± 11.2**: the score and half the width of its 95%
  interval; hover it for the interval itself (it stays inside 0-100), its n (the items or clusters it rests on), its
  standard error and how it was computed. Each benchmark's view shows every metric's interval as low-high with n (the
  **95%** columns), and **Run details** the overall score's and each headline score's. results.json keeps them as
  `benchmarks.<name>.intervals.<metric>` (stderr, low, high, n, method), leaderboard.parquet as the columns below. On
  a few dozen items an interval is wide: two rows ten points apart can be noise. {intervals}
- **Places claim no more than the data.** {rank}
- **Two runs are compared on the same questions.** Pick a run B in the **Explorer**: beside each run's accuracy it
  gives the paired difference on the questions both scored, `A - B = +4.2 points (95% -1.3 to +9.8), on 50 shared
  items, A right and B wrong on 9, the reverse on 7`, clustered as the scores are. `python -m evaluator compare A B`
  prints the same for two results folders.
- **The suite a row was scored on is in plain sight.** The sample suites are the project's own: small synthetic
  items made for it (pictures drawn with PIL, and questions written in each benchmark's form), shipped with it so
  that a run needs no download. They try the machinery and tell models roughly apart; they
  are not the papers' data, and their numbers are not comparable with the papers'. A public deployment sets
  `LEADERBOARD_SUITE=full` for the benchmarks' complete data, or `LEADERBOARD_SUITE=lite` for a seeded subset of it
  (The lite suite, below). Every row names its suite (a sample one reads **sample (synthetic)**, in its cells' hover
  text too), and runs on different suites are never ranked together. This Space runs the **{suite}** suite.
"""


def lite_markdown(cards: Sequence[api.Card]) -> str:
    """The lite suite: its rule per benchmark (api.describe_lite), its version, that it is ranked apart, each headline
    score's expected 95% half-width at the lite size beside the full suite's (api.expected_widths, never typed here),
    and how it compares with LMMs-Eval Lite and tinyBenchmarks."""
    titled = {card.name: card for card in cards}
    widths = [w for w in api.expected_widths() if w.benchmark in titled]
    rules = [f"- **{titled[w.benchmark].title}**: {api.describe_lite(titled[w.benchmark].lite)}." for w in widths]
    rows = [f"| {titled[w.benchmark].title} | {titled[w.benchmark].short_title} "
            f"{titled[w.benchmark].metric(w.metric).label} | {w.lite_items:,} | ±{w.lite_half_width:.1f} | "
            f"{w.full_items:,} | ±{w.full_half_width:.1f} |" for w in widths]
    if not widths:
        return ""
    lite, full = sum(w.lite_items for w in widths), sum(w.full_items for w in widths)
    error = math.sqrt(2 / math.pi) / 1.959963984540054  # a normal error's mean absolute value per 95% half-width
    low, high = (min(w.lite_half_width for w in widths), max(w.lite_half_width for w in widths))
    return "\n\n".join([
        "## The lite suite", f"`LEADERBOARD_SUITE=lite` (the CLI's `--suite lite`) runs each benchmark on a seeded, "
        "stratified subset of its full suite, chosen by a rule on each item's own key, never on the order of a "
        "download: every lite run of the same data asks the same items. The rule has a version (here "
        f"`{api.LITE_RULE}`), recorded in every lite run's results (`run.lite_rule`) and shown as **Lite rule** in "
        "Run details; lite, full and sample runs are never ranked together, nor lite runs of different rules. A "
        "lite row's **Suite** reads `lite`, and hovering it or a score gives the lite suite's size beside the full "
        "suite's.", "\n".join(rules),
        "What a lite score is worth: each headline score's expected 95% half-width, in points, at the lite suite's "
        "size beside the full suite's, at a 50% share (the widest case; Wilson's interval at the effective number "
        "of items). These are expectations from the sizes, not measurements:",
        "| Benchmark | Score | Lite items | Lite ± | Full items | Full ± |\n|---|---|---:|---:|---:|---:|\n"
        + "\n".join(rows),
        "**How this compares.** LMMs-Eval Lite reports 0.25 hours against 40 for its full suite (1 of 160) and "
        "correlations of 0.87-0.99 with the full suite's scores, from a coreset chosen on real models' embeddings; "
        f"this lite suite keeps {lite:,} of {full:,} items ({100 * lite / full:.1f}%), and its correlation with the "
        "full suite is not measured yet: that needs many models run on both. tinyBenchmarks reports 1-2.4 points "
        "of error (the mean absolute error against the full score) with 100 items per benchmark, by weighting "
        "items with item response theory fitted on many real models' full results; this project does not, as it "
        "needs those full results first. A lite score here is a plain stratified sample, so its error is the "
        f"sampling error above: ±{low:.1f} to ±{high:.1f} points at 95%, which as a mean absolute error "
        f"(tinyBenchmarks' measure) is about {error * low:.1f} to {error * high:.1f} points at a 50% share, less at "
        "others. It takes more items than tinyBenchmarks' 100 to get there, but it needs no earlier results, its "
        "items are known before any run, and every row's interval shows its width."])


def columns_markdown(board: Schema, threshold: float = 95.0, suite: str = "sample") -> str:
    """The glossary: how the board ranks, how much to believe a number, the model, run and board columns, then every
    benchmark from its card."""
    run = [c for c in board.columns if c.group == "run" and not c.interval_of]
    parts = [BOARD.format(overall=board.column("overall").description, threshold=format_number(threshold)),
             TRUST.format(intervals=INTERVALS_DESCRIPTION, rank=board.column("rank").description, suite=suite),
             lite_markdown(board.cards),
             "## The columns",
             "Scores are shown as percentages (0-100), each with half its 95% interval (**55.6 ± 11.2**); the data "
             "behind them are fractions in 0..1. **n/a** marks an undefined score (a ratio whose denominator is zero, "
             "such as a conditional ratio whose condition never held); **not run** a score of a benchmark the run did not run "
             "(skipped, or not asked for); both sort last. Higher is better except where a column says otherwise "
             "(counts of ungraded answers, instability, calibration error).",
             "### Model\n" + _bullets([c for c in board.columns if c.group == "model"]),
             "### Run\n" + _bullets(run),
             "### Board\n" + _bullets(board.board_only),
             "### Intervals\n" + INTERVALS_DESCRIPTION]
    parts += [benchmark_markdown(card, board) for card in board.cards]
    return "\n\n".join(parts)


def who_submits(settings: Settings) -> str:
    """How this Space knows who submits, and the limits per person (the judge playground's included)."""
    if not settings.require_sign_in:
        return ("Sign-in is off on this Space (it is for the machine's own user, who acts as an admin), so every "
                "request is submitted by the local user. " + playground_limits(settings))
    return (f"Submitting and cancelling need **Sign in with Hugging Face**: a request belongs to the Hugging Face user "
            f"who submitted it, who may have {settings.max_pending_per_user} pending at once and submit "
            f"{settings.max_submissions_per_week} in any 7 days; only that person or an admin may cancel it. Admins "
            "may also re-queue a failed request and hide a run from the ranking (the board flags it with their "
            "reason); every such action is recorded in the request. " + playground_limits(settings))


def playground_limits(settings: Settings) -> str:
    """Who may use the judge playground, and how often."""
    who = ("" if not settings.require_sign_in or settings.playground_anonymous
           else "Grading in the judge playground needs sign-in too. ")
    return (f"{who}The judge playground grades at most {settings.playground_per_minute} answers a minute for each "
            f"person and each client address, and {settings.playground_budget_per_minute} a minute for the whole "
            "Space.")


def citing_markdown(settings: Settings) -> str:
    """How to cite: the leaderboard's BibTeX entry (with the Space's address when known) and, beside it, the paper of
    each benchmark this Space runs, from its card."""
    cards = [api.card(name) for name in settings.benchmarks]
    own = "\n\n".join(benchmark_bibtex(cards))
    return ("## Citing\nCite the leaderboard (its repository's `CITATION.cff` says the same), and the paper of each "
            "benchmark whose numbers you use:\n\n```bibtex\n" + bibtex(space_url(settings.space_id)) + "\n```"
            + (f"\n\nThe benchmarks' papers:\n\n```bibtex\n{own}\n```" if own else ""))


def about_markdown(settings: Settings) -> str:
    steps = RUN_STEPS.format(who=who_submits(settings), interval=format_number(settings.scheduler_interval),
                             lease=format_number(settings.lease_seconds), attempts=settings.max_attempts, benchmarks=", ".join(settings.benchmarks) or "none",
                             suite=settings.suite)
    prices = settings.model_prices
    costs = COSTS.format(
        gpu_price=f" (here: ${format_number(settings.gpu_price_per_hour)} an hour)"
        if settings.gpu_price_per_hour is not None else " (here it is not)",
        token_price=f" (here: ${format_number(prices[0])} and ${format_number(prices[1])} per million input and "
                    "output tokens)" if prices else " (here it is not)")
    return "\n\n".join([columns_markdown(schema(settings.benchmarks), settings.min_coverage, settings.suite), steps, RECORDED, costs,
                        families_markdown(settings.space_id), model_pages_markdown(settings),
                        docs_markdown(settings.space_id), citing_markdown(settings)])


def build(demo: gr.Blocks, settings: Settings, store: Store) -> None:
    gr.Markdown(about_markdown(settings), elem_id="about-text")
