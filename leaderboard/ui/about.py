"""The About tab: what each column means (read from tables.COLUMNS), how a run works and what is recorded."""
from __future__ import annotations

import gradio as gr

from leaderboard import tables
from leaderboard.settings import Settings
from leaderboard.store import Store

RUN_STEPS = """\
## How a run works
1. **Submit.** The Submit tab checks the model id on the Hub, pins it to a full commit sha, refuses models that need
   remote code, lack safetensors weights or are too large, and writes a **PENDING** request
   (`requests/<org>/<model>/<sha12>_<precision>.json`).
2. **Claim.** A scheduler tick (every {interval:g} s) recovers stale work and claims the oldest pending request
   atomically, with a **lease** of {lease:g} s that a heartbeat renews while the run is alive; the request is
   **RUNNING**. A lease that expires (a crashed worker) sends the request back to the queue, at most
   {attempts} attempt(s) in all.
3. **Evaluate.** A worker subprocess (`python -m evaluator run ...`) loads the model at the pinned commit and runs
   the benchmarks ({benchmarks}; suite: {suite}), reporting progress to the Queue tab.
4. **Publish.** The aggregate scores go to `results/<org>/<model>/<sha12>_<precision>.json`, one row per question
   to `details/<org>/<model>/<sha12>_<precision>/<benchmark>.parquet`, and `leaderboard.parquet` (one row per
   finished run, scores as fractions, loadable with `datasets.load_dataset("parquet", ...)`) is rebuilt.
   The request becomes **FINISHED** and the model appears on the board, or **FAILED** with the reason and the
   last lines of the worker's log.
"""

RECORDED = """\
## What is recorded for reproducibility
Every results file records, besides the scores and per-benchmark counts (items, scored, images unavailable):
- the model id, the **full commit sha**, the precision, the model type, the parameter count and architecture;
- `run.dtype`, `run.device` and `run.batch_size` used;
- `run.versions`: the versions of torch, transformers and the other libraries involved;
- `run.git_commit`: this project's commit that ran the evaluation;
- `run.judge`: the judge's identity (model id and revision, or endpoint and model name) where a judge grades;
- `run.prompt_hashes`: a sha256 of every prompt template and demonstration file used;
- `run.suite` (sample or full), `run.item_counts` per benchmark, `run.wall_time_s`, `run.scoring_path` and
  whether the model saw the images (`run.has_vision`);
- the submitted and finished times, and the benchmarks that were skipped, with the reason.
"""


def columns_markdown() -> str:
    """The metric glossary, generated from the column schema."""
    parts = ["## The columns",
             "Scores are shown as percentages (0-100, higher is better); the data behind them are fractions in 0..1. "
             "**n/a** marks an undefined score (a ratio whose denominator is zero); it sorts last."]
    model_cols = [c for c in tables.COLUMNS if c.group == "model" and c.shown]
    parts.append("### Model\n" + "\n".join(f"- **{c.label}**: {c.description}" for c in model_cols))
    for bench in tables.BENCHMARKS:
        cols = [c for c in tables.COLUMNS if c.group == bench.name and c.shown]
        if cols:
            parts.append(f"### {bench.title}\n{bench.summary}\n\n"
                         + "\n".join(f"- **{c.label}**: {c.description}" for c in cols))
    parts.append("### Columns you can add\nChosen under **More columns** on the Leaderboard tab.\n\n"
                 + "\n".join(f"- **{c.label}**: {c.description}" for c in tables.EXTRA_COLUMNS))
    return "\n\n".join(parts)


def about_markdown(settings: Settings) -> str:
    steps = RUN_STEPS.format(interval=settings.scheduler_interval, lease=settings.lease_seconds,
                             attempts=settings.max_attempts, benchmarks=", ".join(settings.benchmarks) or "none",
                             suite=settings.suite)
    return "\n\n".join([columns_markdown(), steps, RECORDED])


def build(demo: gr.Blocks, settings: Settings, store: Store) -> None:
    gr.Markdown(about_markdown(settings), elem_id="about-text")
