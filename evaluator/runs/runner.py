"""Run benchmarks for one model and write DIR/results.json + DIR/details/<benchmark>.parquet.

For each benchmark: plan its rows and model requests, run them (evaluator.runs.executor), write the raw answers to
its details file, then score from that file (judging, where the benchmark needs a judge) and write the scored
details. results.json is written last and atomically: a run that dies part-way leaves no results.json, so nothing
partial can be published. DIR/progress.json is rewritten as model requests are answered (the scheduler reads it).

With a responses folder (RunConfig.responses), every model response is journaled as it comes (evaluator.runs.journal)
and a run of the same request that starts again reuses them; results["run"]["resumed"] says, per benchmark, how
many items were reused and how many model requests were made. Each benchmark's block has its coverage: the items
that count in its headline score against the items of the whole suite (a limit lowers it). A lite run records its
rule's version (run.lite_rule, evaluator.benchmarks.lite); a downloaded suite's strata are checked against the card's
table (benchmarks.<name>.suite_check, and a WARNING line where they differ).

What decides the numbers besides the model and its revision is recorded beside them: run.engine ("transformers",
"endpoint", or a Job's "vllm"), run.batch_size, run.dtype, run.device, run.hardware (the GPU's name among it),
run.attention, run.generation_path ("dynamic", "static", "static-compiled", or "served"; after a fallback, "dynamic"),
run.scoring_path, run.sampling and run.versions. run.compile_time_s is the compiled path's warm-up, and
run.generation_cache says what was asked, the shapes compiled and why a run fell back, if it did. Where the time
went: run.wall_time_s, run.load_time_s, each benchmark's wall_time_s and score_time_s (the judge's grading included),
and run.call_time_s (per benchmark, the seconds in the model's generation and option-scoring calls).
"""
from __future__ import annotations

import json
import math
import numbers
import os
import platform
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.lite import RULE as LITE_RULE
from evaluator.benchmarks.modes import generation_only, likelihood_refusal, mode_problem, run_modes
from evaluator.benchmarks.spec import LITE, Benchmark, PlanContext, ScoreContext, Scored
from evaluator.endpoints.names import is_model_spec
from evaluator.inputs.prompt_files import prompt_hash
from evaluator.runs.details import read_details, write_details
from evaluator.runs.executor import Answered, Usage, execute, replay
from evaluator.runs.files import json_safe, library_versions, project_commit, utc_now, write_atomic
from evaluator.runs.journal import Journal
from evaluator.runs.progress import ANSWERING, GRADING, LOADING, Progress
from evaluator.runs.summary import score_line, suite_check, trial_judge_warning


@dataclass
class RunConfig:
    """What to run: one model at one revision, some benchmarks, one suite."""

    model: str  # Hub id, local folder, or a served model's spec "endpoint:<base url>|<model>"
    revision: str | None = None
    precision: str = "auto"
    benchmarks: tuple[str, ...] = ("cure",)
    suite: str = "sample"
    limit: int = 0
    batch_size: int | str = "auto"
    device: str = "auto"  # auto (CUDA when usable, else the CPU with a warning), cuda (a GPU or fail at once) or cpu
    judge: str = ""
    images_dir: Path = Path(".cache/images")
    sources: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    request: dict = field(default_factory=dict)  # the queue's request record, copied into results
    responses: Path | None = None  # the responses journal's folder (None: no journal, nothing resumed)
    generation_cache: str = "auto"  # auto | static | dynamic (evaluator.models.generation_cache)
    compile_cache: Path | None = None  # where PyTorch keeps compiled code for the next run (None: its default)
    thinking: str = "auto"  # auto (the chat template's default) | on | off: its enable_thinking switch, if any
    thinking_budget: int | None = None  # tokens a thought may spend beyond a benchmark's answer budget (None: the
    # default, LEADERBOARD_THINKING_BUDGET or evaluator.models.thinking.DEFAULT_THINKING_BUDGET)
    engine: str = ""  # the engine serving a Hub request's model for this run (a Job's "vllm"); "": none started


@dataclass
class Evaluation:
    """One benchmark evaluated: its scored result, every prompt text used (model-side and judge-side), what
    answering took, and how many items its whole suite has (None: the plan did not say)."""

    scored: Scored
    prompts: dict[str, str]
    answered: Answered
    suite_items: int | None = None
    score_time_s: float = 0.0  # scoring, the judge's grading included
    strata: dict[str, int] | None = None  # the downloaded suite's items per lite stratum, as read (Plan.strata)


def judge_token() -> str | None:
    """The judge's bearer token: LEADERBOARD_JUDGE_TOKEN, else HF_TOKEN (never from the command line)."""
    return os.environ.get("LEADERBOARD_JUDGE_TOKEN") or os.environ.get("HF_TOKEN") or None


def make_run_judge(spec: str, benchmarks: list[Benchmark]):
    """The judge for this run when a selected benchmark needs one; None otherwise. No spec: a ValueError."""
    needing = [b.CARD.name for b in benchmarks if b.CARD.needs_judge]
    if not needing:
        return None
    if not spec:
        raise ValueError(f"{', '.join(needing)} needs a judge: set LEADERBOARD_JUDGE or pass --judge")
    from evaluator.judge import make_judge

    return make_judge(spec, token=judge_token())


def judge_record(judge) -> dict:
    """What the results say about the judge: its identity, its name for people, when it graded, its parameters
    (a local judge's; None for an endpoint) and whether it is a trial judge (a local one under 7B: evaluator.judge)."""
    from evaluator.judge import judge_name

    if judge is None:
        return {"judge": None, "judge_name": None, "judged_time": None, "judge_parameters": None, "judge_trial": False}
    return {"judge": dict(judge.identity), "judge_name": judge_name(judge.identity), "judged_time": utc_now(),
            "judge_parameters": getattr(judge, "parameters", None),
            "judge_trial": getattr(judge, "trial", False) is True}


def score_context(run: dict, judge, progress=None) -> ScoreContext:
    """The ScoreContext of a run, from its settings (as the results file records them)."""
    ctx = ScoreContext(suite=run.get("suite", "sample"), limit=int(run.get("limit") or 0),
                       sources=dict(run.get("sources") or {}), options=dict(run.get("options") or {}), judge=judge)
    if progress is not None:
        ctx.progress = progress
    return ctx


class ModeRefused(ValueError):
    """A mode a run cannot ask in (one a benchmark does not have, or option likelihoods from a served model); the
    message is the one line that says why."""


def served_metadata(model, usage: Usage) -> dict | None:
    """What a served model's details files and results say about it: its endpoint (public URL, host, model name,
    the server's own model id), `served: true` and the tokens its answers counted; None for an in-process model."""
    record = getattr(model, "record", None)
    if not callable(record):
        return None
    return {"served": True, **record(), "usage": {"prompt_tokens": usage.prompt_tokens,
                                                  "completion_tokens": usage.completion_tokens,
                                                  "requests": usage.answers}}


def evaluate(benchmark: Benchmark, model, plan_ctx: PlanContext, score_ctx: ScoreContext, batch_size: int,
             path: Path, progress: Progress | None = None, journal: Journal | None = None) -> Evaluation:
    """Plan (reusing what `journal` holds), answer, store the raw answers at `path`, then score from what is read
    back and store the scored rows (both as the card's details columns declare, evaluator.runs.details; a served model's
    files also say its endpoint and usage)."""
    name = benchmark.CARD.name
    if progress is not None:
        progress.start(name, LOADING)
    plan = benchmark.plan(plan_ctx)
    replayed = replay(model, plan, journal) if journal is not None else None
    if progress is not None:  # the resumed share is known before the stage's first write
        progress.planned(len(replayed.items) if replayed is not None else 0, len(plan.items))
        progress.start(name, ANSWERING)
    answered = execute(model, plan, batch_size,
                       progress.update if progress is not None else (lambda *counts, **more: None), replayed)
    metadata = served_metadata(model, answered.usage)
    write_details(path, plan.rows, benchmark.CARD, metadata)
    if progress is not None and benchmark.CARD.needs_judge:
        progress.start(name, GRADING)
        score_ctx.progress = progress.update
    scoring_started = time.monotonic()
    scored = benchmark.score(read_details(path), score_ctx)
    score_time_s = time.monotonic() - scoring_started
    write_details(path, scored.rows, benchmark.CARD, metadata)
    if progress is not None:
        progress.close()
    return Evaluation(scored, {**plan.prompts, **scored.prompts}, answered, getattr(plan, "suite_items", None),
                      score_time_s, getattr(plan, "strata", None))


def _count(value) -> int | None:
    """A count as an int; None for anything that is not a non-negative whole number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        return None
    return int(value) if float(value).is_integer() else None


def coverage_block(counts: dict, items: int | None, suite_items: int | None) -> dict:
    """A benchmark's coverage: {"scored": items in its headline score (its counts["scored"]), "items": items run,
    "suite_items": items in the whole suite, "share": scored / suite_items}; None where a value is unknown (a
    benchmark whose score or plan does not say)."""
    scored, suite = _count((counts or {}).get("scored")), _count(suite_items)
    return {"scored": scored, "items": _count(items), "suite_items": suite,
            "share": scored / suite if scored is not None and suite else None}


def run_identity(config: RunConfig) -> dict:
    """What the responses journal is scoped to: the request's model, revision and precision, and the suite."""
    request = config.request
    return {"model": request.get("model", config.model), "revision": request.get("revision", config.revision),
            "precision": config.precision, "suite": config.suite}


def run_benchmark(benchmark: Benchmark, model, config: RunConfig, judge, progress: Progress,
                  out_dir: Path) -> tuple[dict, dict[str, str], Answered]:
    """One benchmark of a run: its results block, the prompts it used, and what answering took."""
    started = time.monotonic()
    name = benchmark.CARD.name
    run = {"suite": config.suite, "limit": config.limit, "sources": config.sources, "options": config.options}
    plan_ctx = PlanContext(suite=config.suite, limit=config.limit, images_dir=config.images_dir,
                           sources=config.sources, options=config.options)
    path = out_dir / "details" / f"{name}.parquet"
    journal = Journal(config.responses, name, run_identity(config)) if config.responses is not None else None
    done = evaluate(benchmark, model, plan_ctx, score_context(run, judge), model.batch_size, path, progress, journal)
    scored = done.scored
    block = {"scores": scored.scores, "counts": scored.counts, "extra": scored.extra,
             "coverage": coverage_block(scored.counts, done.answered.items, done.suite_items),
             "wall_time_s": round(time.monotonic() - started, 2), "score_time_s": round(done.score_time_s, 2),
             "thinking": done.answered.thoughts.record(), "intervals": interval_records(scored)}
    if done.strata is not None and benchmark.CARD.lite is not None:
        block["suite_check"] = suite_check(benchmark.CARD, done.strata)
    return block, done.prompts, done.answered


def interval_records(scored: Scored) -> dict:
    """benchmarks.<name>.intervals: each score's stderr, low, high (95%, holding the score), n and method, for the
    scores that are not null, and of a value kept outside `scores` (LAVE's agree_<metric>, in extra, where defined)."""
    def defined(key: str) -> bool:
        value = scored.scores.get(key)
        return key not in scored.scores or (isinstance(value, (int, float)) and value == value)

    return {key: interval.record(scored.scores.get(key)) for key, interval in (scored.intervals or {}).items()
            if defined(key)}


def time_summary(answered: Answered, wall_s: float) -> str:
    """Where a benchmark's time went: items per second (the items answered now, the journal's aside) and the share
    of the wall time in the model's two calls."""
    fresh = answered.items - answered.reused
    rate = fresh / wall_s if wall_s > 0 else 0.0

    def share(seconds: float) -> str:
        return f"{seconds:.1f} s ({100 * seconds / wall_s:.0f} %)" if wall_s > 0 else f"{seconds:.1f} s"

    return (f"{fresh} item(s) in {wall_s:.1f} s, {rate:.2f} items/s; generation {share(answered.generate_s)}, "
            f"option scoring {share(answered.score_s)}")


def served_options(config: RunConfig, benchmarks: list[Benchmark], model=None) -> RunConfig:
    """The modes a run asks in: ModeRefused for a mode a benchmark lacks. Once probed, a served model that gives no
    prompt log-probabilities asks by generation (unset mode options set so) and ModeRefused where one asks for
    option likelihoods, before any benchmark's request; any other model runs as asked."""
    cards = [benchmark.CARD for benchmark in benchmarks]
    if problem := mode_problem(cards, config.options):
        raise ModeRefused(problem)
    if model is None or not is_model_spec(config.model) or model.scoring_path != "none":
        return config
    reason = getattr(model, "scoring_refusal", None) or "gives no prompt log-probabilities"
    options = generation_only(cards, config.options)
    if refusal := likelihood_refusal(cards, options, reason):
        raise ModeRefused(refusal)
    if options != config.options:
        print(f"the served model {reason}, so every benchmark is asked by generation", flush=True)
    return replace(config, options=options)


def load_run_model(config: RunConfig, benchmarks: list[Benchmark]):
    """The run's model and why the CPU was used (None otherwise): a served model, probed (an endpoint that cannot
    run the evaluation ends the run here, before any benchmark), or the model loaded in-process on the device; the
    compile cache's folder is made (and a bad one fails the run, naming the setting) only for the compiled path. A
    served run never imports torch."""
    if is_model_spec(config.model):
        from evaluator.models.served import load_served

        model = load_served(config.model, config.batch_size, any(b.CARD.needs_images for b in benchmarks),
                            model_id=config.request.get("model"), thinking_asked=config.thinking,
                            thinking_budget=config.thinking_budget)
        print(f"served by {model.url} as {', '.join(model.server_models) or model.endpoint.model}; "
              f"{model.batch_size} request(s) in flight; vision: {model.has_vision}", flush=True)
        return model, None
    from evaluator.models import load_model
    from evaluator.models.devices import device_notice, resolve_device
    from evaluator.models.generation_cache import COMPILED, use_compile_cache

    device, cpu_reason = resolve_device(config.device)  # --device cuda without a GPU fails here, before anything loads
    line, expected = device_notice(device, cpu_reason)  # once per run; a warning only where a GPU was expected
    print(f"WARNING: {line}" if expected else line, file=sys.stderr if expected else sys.stdout, flush=True)
    print(f"loading {config.model} @ {config.revision or 'default revision'} ({config.precision})", flush=True)
    model = load_model(config.model, revision=config.revision, precision=config.precision,
                       batch_size=config.batch_size, device=device, generation_cache=config.generation_cache,
                       thinking_asked=config.thinking, thinking_budget=config.thinking_budget)
    if model.generation_path == COMPILED:  # nothing compiles before the first generate; no other path makes it
        use_compile_cache(config.compile_cache)
    print(f"loaded as {model.dtype}; vision: {model.has_vision}; generation: {model.generation_path}", flush=True)
    return model, cpu_reason


def generation_record(model) -> dict:
    """How the model generated, for results.json: run.compile_time_s (the warm-up of the compiled shapes, 0 without
    compile), run.generation_cache (the setting, the path, the shapes compiled, a fallback's reason) and, for a vision
    model, run.image_features (images encoded and reused, or why its features are not kept) and run.image_settings
    (its processor's own resolution settings: image_settings.py); nothing for a served model."""
    cache = getattr(model, "cache", None)
    if cache is None or not callable(getattr(cache, "record", None)):
        return {}
    record = cache.record()
    found = {"compile_time_s": record["compile_time_s"], "generation_cache": record}
    if getattr(model, "has_vision", False):
        from evaluator.models.image_features import describe

        found["image_features"] = describe(getattr(model, "image_features", None), getattr(model, "model_type", None))
        found["image_settings"] = dict(getattr(model, "image_settings", None) or {})
    return found


def thinking_record(model, blocks: dict) -> dict:
    """run.thinking: the model's thought markers, the mode its prompts gave (on, off, may, none), what the run asked,
    the budget, and over every benchmark the replies, those with a thought, those that ended inside it, and the
    tokens spent on thoughts and on answers (thinking_run: some reply had a thought)."""
    found = getattr(model, "thinking", None)
    record = found.record() if callable(getattr(found, "record", None)) else {"mode": "none", "asked": "auto",
                                                                            "switch": None, "markers": None,
                                                                            "budget": 0}
    totals = {key: 0 for key in ("replies", "with_thought", "unclosed", "reasoning_tokens", "answer_tokens")}
    for block in blocks.values():
        for key in totals:
            totals[key] += int((block.get("thinking") or {}).get(key) or 0)
    return {**record, **totals, "thinking_run": totals["with_thought"] > 0}


def hardware_record(model, cpu_reason: str | None) -> dict:
    """What the run ran on: the GPUs and driver (evaluator.models.devices), or for a served model its endpoint."""
    served = getattr(model, "record", None)
    if callable(served):
        return {"device": model.device, "dtype": model.dtype, "endpoint": served()["base_url"], "cpu_reason": None}
    from evaluator.models.devices import describe_hardware

    return describe_hardware(model.device, model.dtype, cpu_reason)


def run(config: RunConfig, out_dir: Path) -> dict:
    """Evaluate config.model on each benchmark; write details, then results.json. Returns the results."""
    started = time.monotonic()
    benchmarks = [get_benchmark(name) for name in config.benchmarks]  # unknown names fail before the model loads
    config = served_options(config, benchmarks)  # a mode a benchmark does not have fails before the model loads
    judge = make_run_judge(config.judge, benchmarks)  # a missing judge fails before the model loads too
    warning = trial_judge_warning(judge)
    if warning:  # said before the run, as the board flags it after
        print(warning, file=sys.stderr, flush=True)
    loading = time.monotonic()
    model, cpu_reason = load_run_model(config, benchmarks)
    load_s = time.monotonic() - loading
    config = served_options(config, benchmarks, model)  # likelihoods from a server without them: refused here
    out_dir.mkdir(parents=True, exist_ok=True)
    progress = Progress(out_dir, config.benchmarks)
    blocks, skipped, prompt_hashes, item_counts, resumed, call_times = {}, {}, {}, {}, {}, {}
    usage = Usage()
    for benchmark in benchmarks:
        name = benchmark.CARD.name
        if benchmark.CARD.needs_images and not model.has_vision:
            refused = getattr(model, "vision_refusal", None)
            skipped[name] = f"needs image input; {refused or 'the model is text-only'}"
            print(f"skipping {name}: {skipped[name]}", flush=True)
            continue
        blocks[name], prompts, answered = run_benchmark(benchmark, model, config, judge, progress, out_dir)
        resumed[name] = {"reused": answered.reused, "items": answered.items, "model_requests": answered.model_requests}
        call_times[name] = {"generation": round(answered.generate_s, 2), "option_scoring": round(answered.score_s, 2)}
        prompt_hashes.update({f"{name}/{key}": prompt_hash(text) for key, text in prompts.items()})
        item_counts[name] = blocks[name]["counts"].get("items", 0)
        usage.prompt_tokens += answered.usage.prompt_tokens
        usage.completion_tokens += answered.usage.completion_tokens
        usage.answers += answered.usage.answers
        print(score_line(benchmark.CARD, blocks[name]["scores"]), flush=True)
        print(f"{name}: {time_summary(answered, blocks[name]['wall_time_s'])}", flush=True)
    request = config.request
    served, thought = served_metadata(model, usage), thinking_record(model, blocks)
    results = {
        "model": request.get("model", model.model_id if served else config.model),
        "revision": request.get("revision", config.revision),
        "precision": config.precision, "thinking": thought["mode"],  # as it ran: on, off, may (the model's), none
        "model_type": request.get("model_type"),
        "params_billions": request.get("params_billions"),
        "architecture": request.get("architecture"),
        "submitted_time": request.get("submitted_time"), "finished_time": utc_now(),
        "served": served is not None and not config.engine,  # a Job's own engine runs the Hub model, unserved
        "display_name": request.get("display_name"),
        "run": {
            "dtype": model.dtype, "device": model.device, "batch_size": model.batch_size,
            "has_vision": model.has_vision, "scoring_path": model.scoring_path, "engine": config.engine or (
                "endpoint" if served else "transformers"),
            "generation_path": getattr(model, "generation_path", None), "attention": getattr(model, "attention", None),
            "sampling": getattr(model, "sampling", None), **generation_record(model),
            "thinking": thought, "decoding": getattr(model, "decoding", None),
            "hardware": hardware_record(model, cpu_reason), "served": served,
            "modes": run_modes([benchmark.CARD for benchmark in benchmarks], config.options),
            "versions": library_versions(), "git_commit": project_commit(), "host": platform.node(),
            **judge_record(judge), "prompt_hashes": prompt_hashes, "suite": config.suite, "limit": config.limit,
            **({"lite_rule": LITE_RULE} if config.suite == LITE else {}),
            "options": dict(config.options), "sources": dict(config.sources),
            "item_counts": item_counts, "resumed": resumed, "load_time_s": round(load_s, 2), "call_time_s": call_times,
            "wall_time_s": round(time.monotonic() - started, 2),
        },
        "benchmarks": blocks,
        "skipped": skipped,
    }
    results = json_safe(results)
    write_atomic(out_dir / "results.json", json.dumps(results, indent=2).encode())
    return results
