"""The evaluator's one door for the Space: everything `leaderboard/` uses from the evaluator comes from here.

- the benchmarks' cards (what each measures, its metrics, sources, options, item view, board sections, grader,
  details columns);
- the details files' schema (every run's details of a benchmark: the card's columns, each of its declared type;
  details_schema for the arrow schema, DETAIL_DTYPES for each type's `datasets` dtype);
- the explorer's view of a run's questions (each card's ItemView: its item table, an opened question's parts,
  the image as the model saw it);
- the judge for the playground and its grading (each benchmark's Grader returns a typed Verdict);
- what submission needs to know about a model folder (its architecture, or why it cannot be evaluated; its
  config.json and small JSON files read as the CLI reads them: read_model_config, read_model_json, remote_code), the
  vision-language families that run (model_families; docs/models.md is their table, FAMILIES_TABLE), the one rule
  for a Hub model id (model_id_problem, which the CLI applies too) and the CLI's preflight rules a request is checked
  by before it is queued (images_needed: a text-only model asked only for image benchmarks; judge_problem: a judge
  that cannot be had, known without a call; NOTHING_RAN: the mark of a queued run refused before it ran);
- grading a finished run again with another judge (rescore_run);
- served models: the spec `endpoint:<base url>|<model>` (parse_model_spec, public_url, MODEL_TOKEN_SETTING) and
  how each benchmark of a run was asked (scoring_modes: by generation alone, or also by option likelihood);
- the one secret redactor;
- how much to believe a score (intervals: Z95, the interval rule for ranks, paired differences of two runs);
- two runs compared on the questions both scored (question_scores, paired_scores, compare_details: the Explorer's
  compare view and `python -m evaluator compare`; paired_record for the API; protocol_differences: how they were
  asked differently);
- the generation-cache choices a run may be given (GENERATION_CACHES: auto, static, dynamic);
- the suites (SUITES: sample, lite, full; LITE_RULE: the lite rule's version, recorded in a lite run's results);
- what a run will cost, before it runs (evaluator.plans): plan_facts (a model's cost-relevant facts from what the
  submission checks read), plan_run (its workload priced on given Jobs flavors, with the Hub's live prices where
  known) on either engine (ENGINES: transformers, vllm), plan_lines / plan_summary / plan_duration (the plan in
  words), plan_marks (each figure's mark: measured, published or assumed), jobs_hardware (a flavor priced for an
  engine) and expected_widths (each lite score's expected 95% half-width beside the full suite's);
- what a Job's vLLM engine is started with: the most images a run's benchmarks put in one prompt (images_per_prompt)
  and vLLM's pinned image (VLLM_IMAGE: the version docs/models.md's vLLM column is read for);
- how a worker ties the evaluator's life to its own (PARENT_PID_ENV).
The Space runs the evaluator itself as a subprocess (`python -m evaluator run ...`), never in-process.
"""
from __future__ import annotations

from pathlib import Path

from evaluator.benchmarks import DEFAULT_BENCHMARKS, REGISTRY, cards, hub_eval_problems
from evaluator.benchmarks.modes import GENERATION, run_modes, scoring_mode
from evaluator.benchmarks.spec import (CORRECT, COUNT, DETAIL_TYPES, FRACTION, IMAGE_UNAVAILABLE, ITEM_COLUMNS, NUMBER,
                                       OUTCOMES, PERCENT_KINDS, RATIO, Card, DetailColumn, Grader, HubEval, ItemPart,
                                       ItemView, Measure, Metric, Option, Section, Source, Verdict)
from evaluator.endpoints.limits import Limits as EndpointLimits
from evaluator.endpoints.limits import limits_from_env as endpoint_limits
from evaluator.endpoints.limits import limit_problem as endpoint_limit_problem
from evaluator.endpoints.names import (ENDPOINT_PREFIX, MODEL_TOKEN_SETTING, Endpoint, is_model_spec,
                                      parse_model_spec, public_url, shown_name)
from evaluator.endpoints.redaction import redact
from evaluator.inputs.images import ImageUnavailable
from evaluator.inputs.model_ids import model_id_problem
from evaluator.metrics.intervals import Z95, Interval, Paired, paired_difference
from evaluator.metrics.intervals import ranks as interval_ranks
from evaluator.judge import (JudgeError, JudgeStalled, judge_id, judge_name, judge_problem, make_judge,
                             parse_judge_spec)
from evaluator.models.base import UnsupportedModelError
from evaluator.models.family_table import TABLE as FAMILIES_TABLE
from evaluator.models.generation_cache import CACHE_BUCKET, compile_cache_problem
from evaluator.models.generation_cache import CHOICES as GENERATION_CACHES
from evaluator.models.model_config import UnreadableConfig, remote_code
from evaluator.models.model_config import read_config as read_model_config
from evaluator.models.model_config import read_generation_config
from evaluator.models.model_config import read_json_object as read_model_json
from evaluator.models.model_config import safetensors_parameters
from evaluator.models.thinking import default_budget as thinking_budget
from evaluator.models.thinking import find_markers as thought_markers
from evaluator.models.thinking import template_switch
from evaluator.models.vllm_models import VLLM_IMAGE
from evaluator.runs.compare import QuestionScores, compare_details, paired_record, paired_scores, question_scores
from evaluator.runs.compare import protocol_differences
from evaluator.runs.details import DETAIL_DTYPES
from evaluator.runs.parent_watch import PARENT_PID_ENV
from evaluator.runs.preflight import NOTHING_RAN, images_needed
from evaluator.benchmarks.lite import RULE as LITE_RULE, describe as describe_lite
from evaluator.benchmarks.spec import LITE, SUITES
from evaluator.plans.engines import ENGINES
from evaluator.plans.estimate import Priced, RunPlan

__all__ = ["DEFAULT_BENCHMARKS", "FAMILIES_TABLE", "architecture_has_vision", "ENDPOINT_PREFIX", "Endpoint", "GENERATION", "GENERATION_CACHES", "MODEL_TOKEN_SETTING", "CORRECT",
           "COUNT", "DETAIL_DTYPES", "DETAIL_TYPES", "FRACTION", "IMAGE_UNAVAILABLE", "ITEM_COLUMNS", "NUMBER",
           "OUTCOMES", "PARENT_PID_ENV", "PERCENT_KINDS", "RATIO", "Card", "DetailColumn", "Grader", "HubEval",
           "EndpointLimits", "ImageUnavailable", "ItemPart", "ItemView", "JudgeError", "JudgeStalled", "Measure", "Metric", "Option", "Section",
           "Source", "UnsupportedModelError", "Verdict", "benchmark_names", "card", "cards", "describe_model_folder",
           "details_schema", "endpoint_limits", "endpoint_limit_problem", "compile_cache_problem", "graders", "hub_eval_problems", "judge_id", "judge_name", "judged_benchmarks",
           "make_judge", "model_families", "model_id_problem", "parse_judge_spec", "default_mode", "is_model_spec", "parse_model_spec", "public_url",
           "redact", "rescore_run", "scoring_modes", "shown_name", "sources", "thinking_budget", "thought_markers",
           "template_switch",
           "CACHE_BUCKET", "Z95", "Interval", "Paired", "paired_difference", "interval_ranks",
           "QuestionScores", "compare_details", "paired_record", "paired_scores", "protocol_differences",
           "question_scores",
           "UnreadableConfig", "read_generation_config", "read_model_config", "read_model_json", "remote_code",
           "NOTHING_RAN", "images_needed", "judge_problem",
           "LITE", "LITE_RULE", "SUITES", "describe_lite", "Priced", "RunPlan", "plan_facts", "plan_run", "plan_lines",
           "plan_summary", "plan_duration", "plan_marks", "jobs_hardware", "expected_widths", "ENGINES",
           "calls_per_item", "safetensors_parameters", "chat_template", "gpu_memory_gb", "images_per_prompt",
           "VLLM_IMAGE"]


def benchmark_names() -> tuple[str, ...]:
    """The registered benchmarks, in registry order."""
    return tuple(REGISTRY)


def card(name: str) -> Card:
    """One benchmark's card; ValueError for an unknown name."""
    for found in cards():
        if found.name == name:
            return found
    raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(REGISTRY)}")


def details_schema(name: str):
    """The pyarrow schema of one benchmark's details files (its card's details columns, in order, each of its
    declared type); ValueError for an unknown name."""
    from evaluator.runs.details import details_schema as schema

    return schema(card(name))


def sources() -> tuple[Source, ...]:
    """Every data location a deployer may set, over all benchmarks."""
    return tuple(source for found in cards() for source in found.sources)


def graders() -> dict[str, tuple[Card, Grader]]:
    """The judge playground's modes: mode name -> (card, grader), for every benchmark with a grader."""
    return {found.grader.mode: (found, found.grader) for found in cards() if found.grader is not None}


def judged_benchmarks(results: dict) -> list[str]:
    """The benchmarks of a results file that a judge graded (those a rescore grades again)."""
    from evaluator.runs.rescore import judged_benchmarks as judged

    return judged(results)


def describe_model_folder(folder: Path | str) -> dict:
    """{"architecture", "model_type", "has_vision"} from a model folder's config.json, without loading weights.
    Raises UnsupportedModelError ("unsupported architecture ...", remote code) when no adapter can load it."""
    from evaluator.models import describe_model_folder as describe

    return describe(folder)


def model_families() -> tuple[str, ...]:
    """The vision-language model types that run, in alphabetical order (FAMILIES_TABLE says why others do not)."""
    from evaluator.models.families import FAMILIES

    return tuple(sorted(FAMILIES))


def architecture_has_vision(architecture: str | None) -> bool | None:
    """Whether a recorded architecture (class name or model type) takes images; None when it cannot be told."""
    from evaluator.models.architectures import architecture_has_vision as has_vision

    return has_vision(architecture)


def rescore_run(run_dir: Path, out_dir: Path, judge_spec: str, token: str | None = None) -> dict:
    """Grade a finished run (results.json + details/) again with the judge `judge_spec`; returns the new results."""
    from evaluator.runs.rescore import rescore

    return rescore(Path(run_dir), Path(out_dir), make_judge(judge_spec, token=token))


def default_mode(found: Card) -> str:
    """How a benchmark is asked when no option says otherwise ("generation" for one that only generates)."""
    return scoring_mode(found, {})


def scoring_modes(results: dict) -> dict[str, str]:
    """How each registered benchmark of a results file was asked: {name: mode}, "generation" (by generation alone),
    or its mode option's value ("likelihood", "both"). The run's record of it where there is one, else read from
    the run's options and the cards' defaults (runs from before modes were recorded)."""
    results = results if isinstance(results, dict) else {}
    run = results.get("run") if isinstance(results.get("run"), dict) else {}
    ran = results.get("benchmarks") if isinstance(results.get("benchmarks"), dict) else {}
    names = [name for name in REGISTRY if name in ran]
    options = run.get("options") if isinstance(run.get("options"), dict) else {}
    modes = run_modes([card(name) for name in names], {str(k): str(v) for k, v in options.items()})
    recorded = run.get("modes") if isinstance(run.get("modes"), dict) else {}
    modes.update({name: recorded[name] for name in names
                  if isinstance(recorded.get(name), str) and recorded[name].strip()})
    return modes


def plan_facts(name: str, config: dict, architecture: str, has_vision: bool, params: float | None,
               template: str = "", params_basis: str = "counted from its safetensors files on the Hub"):
    """A model's cost-relevant facts from what submission read of it (config.json, its parameter count, its chat
    template); the parameters estimated from config.json when the count is unknown."""
    from evaluator.plans.facts import build_facts, estimate_parameters

    if not params:
        params, params_basis = estimate_parameters(config), "estimated from config.json"
    return build_facts(name, config, architecture, has_vision, float(params), params_basis, template)


def chat_template(folder: Path | None = None, tokenizer_config: dict | None = None) -> str:
    """A model's chat template as transformers looks for it (evaluator.plans.facts.chat_template)."""
    from evaluator.plans.facts import chat_template as find

    return find(folder, tokenizer_config)


def gpu_memory_gb(flavor: str) -> float | None:
    """A Jobs flavor's GPU memory in GB over all its GPUs (None: a CPU flavor or one not known)."""
    from evaluator.plans.costs import gpu_memory_gb as memory

    return memory(flavor)


def jobs_hardware(flavor: str, prices: dict[str, float] | None = None, engine: str = "transformers"):
    """A Jobs flavor (or "cpu", always transformers') priced for `engine` (evaluator.plans.engines: measured or
    published figures; prices: the Hub's live list where known)."""
    from evaluator.plans.costs import CPU, measured_records, on_cpu
    from evaluator.plans.engines import on_engine

    records = measured_records()
    return on_cpu(records) if flavor == CPU else on_engine(flavor, records, engine, prices)


def plan_run(facts, benchmarks, suite: str, flavors: list[str], *, thinking: str = "auto", thinking_budget: int = 4096,
             limit: int = 0, options: dict | None = None, sources: dict | None = None,
             prices: dict[str, float] | None = None, batch: int | None = None, engine: str = "transformers") -> RunPlan:
    """A run's plan (evaluator.plans.estimate.plan_run) priced on each of `flavors` for `engine`."""
    from evaluator.plans.estimate import plan_run as make

    return make(facts, list(benchmarks), suite, [jobs_hardware(f, prices, engine) for f in flavors],
                thinking=thinking, thinking_budget=thinking_budget, limit=limit, options=options, sources=sources,
                batch=batch)


def plan_marks(run: RunPlan, flavor: str) -> dict[str, str]:
    """Each figure the plan priced `flavor` with (prompts, generation, loading), marked "measured (GPU, date)",
    "published (source)" or "assumed (source)"; {} when the plan did not price it."""
    from evaluator.plans.engines import marks

    priced = run.on(flavor)
    return marks(priced.hardware) if priced is not None else {}


def plan_lines(run: RunPlan) -> list[str]:
    from evaluator.plans.text import plan_lines as lines

    return lines(run)


def plan_summary(run: RunPlan, flavor: str) -> str:
    from evaluator.plans.text import summary

    return summary(run, flavor)


def plan_duration(seconds: float) -> str:
    """A plan's time as its text writes it: "0:18" (hours:minutes), "3 d 4:05" past a day, "<0:01" under a minute."""
    from evaluator.plans.text import duration

    return duration(seconds)


def expected_widths() -> list:
    """Each benchmark's headline score's expected 95% half-width, lite and full (evaluator.plans.widths)."""
    from evaluator.plans.widths import expected

    return [found for found in (expected(name) for name in REGISTRY) if found is not None]


def calls_per_item(name: str) -> list[tuple[str, str]]:
    """(mode, the model and judge calls one item of the benchmark's full suite makes in it, in words), per mode."""
    from evaluator.benchmarks.listing import calls_per_item as calls

    return calls(name)


def images_per_prompt(benchmarks, suite: str, options: dict | None = None, sources: dict | None = None) -> int:
    """The most images one request of these benchmarks holds (each one's workload, as the plan counts it; 0 when none
    sends an image): what an engine serving the run must accept per prompt (vLLM's --limit-mm-per-prompt)."""
    import math

    from evaluator.benchmarks.spec import PlanContext
    from evaluator.plans.estimate import benchmark_workload

    ctx = PlanContext(suite=suite, options=dict(options or {}), sources=dict(sources or {}))
    most = 0
    for name in benchmarks:
        workload = benchmark_workload(name, ctx)
        if workload is None:  # not counted on this suite: a benchmark that needs images sends at least one
            most = max(most, 1 if card(name).needs_images else 0)
            continue
        most = max([most, *(math.ceil(part.images) for part in workload.parts)])
    return most
