"""A request's two plans, made when it is submitted (leaderboard.submissions.checks) and recorded in it:

- the memory plan (`run_plan`, with LEADERBOARD_EXECUTOR=hf-jobs): the flavor and batch size that hold the run
  (leaderboard.running.run_memory); a model that fits no flavor is refused with the numbers (check_hardware);
- the cost plan (`cost_plan`, leaderboard.submissions.cost_plans): the evaluator's plan of this Space's run
  (evaluator.api.plan_run) on the hardware and the engine it will run on (plan_cost).

The cost plan counts the Space's run (LEADERBOARD_SUITE, LEADERBOARD_BENCHMARKS, LEADERBOARD_LIMIT,
LEADERBOARD_OPTIONS, the data locations, LEADERBOARD_THINKING and LEADERBOARD_THINKING_BUDGET, the batch size) from
what the submission checks already read of the model: config.json, the parameter count of its safetensors files and
the chat template of its tokenizer_config.json, else its chat_template.jinja where the checks have the model's
folder on disk (online only the small JSON files are fetched: a model whose template is only in chat_template.jinja is
then planned as not thinking, which the Submit tab's plan says). Its hardware:
- hf-jobs: the memory plan's flavor (else the table's choice from the weights), priced at the Hub's prices as the
  dispatcher last wrote them into the Jobs budget's ledger (read from the store: no Hub call per submission), else at
  the plan's list prices; its basis says which;
- local: "cpu" when the runs go to the CPU (LEADERBOARD_DEVICE=cpu, or auto on a machine without nvidia-smi), else
  "h200", the GPU the plan's figures were measured on (this machine's own GPU is not looked up), priced at
  LEADERBOARD_GPU_PRICE_PER_HOUR when it is set, else unpriced (a local run costs no Jobs money).
Its engine: with hf-jobs, LEADERBOARD_ENGINE (a Job served by vLLM is priced at vLLM's published throughput, until a
GPU measures it, and says so in each figure's mark); a local run is transformers'. A cost plan that cannot be made is
logged and left out (the request is then "not planned"): it never refuses a model.
"""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

from evaluator import api as evaluator_api
from leaderboard.formatting import escape_markdown as md
from leaderboard.formatting import money
from leaderboard.running import job_flavors, run_memory
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import jobs_ledger
from leaderboard.submissions.cost_plans import CostPlan
from leaderboard.submissions.outcomes import Refusal

log = logging.getLogger(__name__)

CPU, LOCAL_GPU = "cpu", "h200"  # the local executor's hardware: the CPU record, or the measured GPU's


# ---------------------------------------------------------------- the memory plan (hf-jobs)
def check_hardware(settings: Settings, shown: str, params_billions: float, precision: str,
                   config: dict | None = None, side_configs: dict | None = None) -> run_memory.RunPlan | None:
    """With LEADERBOARD_EXECUTOR=hf-jobs, refuse a model larger than the largest hardware of
    LEADERBOARD_JOBS_FLAVORS (a float32 model counts double), or one whose run (weights, KV cache at the run's
    longest sequence and batch size, a thinking model's budget unless thinking is off, the image-features cache) fits
    no flavor of it; a bad table is refused with a clear message. The run's plan (flavor, batch size, memory) where it could be counted."""
    if settings.executor != "hf-jobs":
        return None
    try:
        rules = job_flavors.parse_flavors(settings.jobs_flavors)
    except ValueError as error:
        log.error("submission refused: %s", error)
        raise Refusal(f"This leaderboard's hardware table is misconfigured ({md(str(error), 300)}); nothing was "
                      "queued. Please tell its maintainers.") from None
    try:
        job_flavors.choose_flavor(rules, params_billions, precision)
        return run_memory.plan_run(rules, config, params_billions, precision, evaluator_api.thinking_budget(),
                                   run_memory.may_think(side_configs or {}) and settings.thinking != "off")
    except job_flavors.TooLarge as error:
        raise Refusal(f"Model {shown}: {md(str(error), 600)}") from None


def check_thinking(shown: str, thinking: str, side_configs: dict | None, folder: Path | None = None) -> None:
    """Refusal when thinking is set on or off for a model whose chat template, where it can be read, takes no
    enable_thinking switch (evaluator.api.template_switch): the run would be the template's own under another key."""
    template = chat_template(side_configs, folder) if thinking in ("on", "off") else ""
    if template and not evaluator_api.template_switch(template):
        raise Refusal(f"Model {shown}'s chat template takes no enable_thinking switch, so thinking cannot be set "
                      f"{thinking}; submit it with thinking auto (the template's own). Nothing was queued.")


# ---------------------------------------------------------------- the cost plan
def chat_template(side_configs: dict | None, folder: Path | None = None) -> str:
    """A model's chat template (evaluator.api.chat_template: the folder's chat_template.jinja where the checks have
    the model on disk, else its tokenizer_config.json as the checks read it; online only the small JSON files are
    fetched); "" when none holds one."""
    tokenizer = (side_configs or {}).get("tokenizer_config.json")
    return evaluator_api.chat_template(folder, tokenizer if isinstance(tokenizer, dict) else {})


def hardware(settings: Settings, memory: run_memory.RunPlan | None, params_billions: float, precision: str) -> str:
    """What the run will be priced on (module docstring): a Jobs flavor, CPU or LOCAL_GPU."""
    if settings.executor == "hf-jobs":
        return memory.flavor if memory is not None else job_flavors.flavor_for(settings, params_billions, precision)
    if settings.device == "cpu" or (settings.device != "cuda" and shutil.which("nvidia-smi") is None):
        return CPU
    return LOCAL_GPU


def ledger_rates(store: Store) -> dict[str, float]:
    """The Hub's Jobs prices as the dispatcher last wrote them into the Jobs budget's ledger ({} when there is none
    or it cannot be read)."""
    try:
        ledger = jobs_ledger.read(store)
    except Exception:  # noqa: BLE001 - an outage of the store: the plan uses its list prices
        return {}
    return {} if ledger.damaged else dict(ledger.rates)


def engine(settings: Settings) -> str:
    """What runs the model in this Space's runs: LEADERBOARD_ENGINE in a Job, transformers on this machine."""
    return settings.engine if settings.executor == "hf-jobs" else "transformers"


def _batch(settings: Settings, memory: run_memory.RunPlan | None) -> int | None:
    if memory is not None and memory.batch_size:
        return memory.batch_size
    return int(settings.batch_size) if settings.batch_size.isdigit() else None


def _options(settings: Settings) -> dict[str, str]:
    """LEADERBOARD_OPTIONS as the evaluator's --option pairs."""
    pairs = (option.partition("=") for option in settings.options)
    return {key.strip(): value.strip() for key, sep, value in pairs if sep and key.strip()}


def make_cost_plan(settings: Settings, store: Store, name: str, config: dict, side_configs: dict | None,
                   architecture: str, params: float | None, precision: str, memory: run_memory.RunPlan | None = None,
                   folder: Path | None = None) -> tuple[CostPlan, evaluator_api.RunPlan]:
    """The cost plan of this Space's run of a model (module docstring) and the evaluator's whole plan (for its
    per-benchmark figures). Raises what the evaluator's plan raises."""
    flavor = hardware(settings, memory, (params or 0) / 1e9, precision)
    local = settings.executor != "hf-jobs"
    prices = ledger_rates(store) if not local else \
        {flavor: settings.gpu_price_per_hour} if flavor != CPU and settings.gpu_price_per_hour is not None else {}
    facts = evaluator_api.plan_facts(name, config, architecture,
                                     evaluator_api.architecture_has_vision(architecture) is not False, params,
                                     chat_template(side_configs, folder),
                                     params_basis="counted from its safetensors files")
    run = evaluator_api.plan_run(facts, settings.benchmarks, settings.suite, [flavor], thinking=settings.thinking,
                                 thinking_budget=int(settings.thinking_budget.strip() or 0), limit=settings.limit,
                                 options=_options(settings), sources={k: v for k, v in settings.sources.items() if v},
                                 prices=prices, batch=_batch(settings, memory), engine=engine(settings))
    priced = run.on(flavor)
    rate, basis = priced.hardware.usd_per_hour, priced.hardware.price_basis
    if local:
        rate = None if flavor == CPU else settings.gpu_price_per_hour
        basis = ("a run on this machine's CPU: no price" if flavor == CPU else
                 f"a run on this machine's GPU, timed as one {LOCAL_GPU.upper()}: " +
                 ("LEADERBOARD_GPU_PRICE_PER_HOUR" if rate is not None else
                  "no price (LEADERBOARD_GPU_PRICE_PER_HOUR is not set)"))
    usd = None if rate is None else priced.hours * rate
    head = f"at most {evaluator_api.plan_duration(priced.seconds)} on {flavor} ({money(usd)})"
    summary = f"{head}: {evaluator_api.plan_summary(run, flavor).partition(': ')[2]}"
    return CostPlan(flavor, priced.hours, usd, rate, run.suite, run.thinking, summary, basis, run.engine,
                    evaluator_api.plan_marks(run, flavor)), run


def plan_cost(settings: Settings, store: Store, *args, **kwargs) -> tuple[CostPlan | None, object]:
    """make_cost_plan, or (None, None) logged when the plan cannot be made (the request is then "not planned")."""
    try:
        return make_cost_plan(settings, store, *args, **kwargs)
    except Exception:  # noqa: BLE001 - a plan is an addition: a model the checks took is never refused for it
        log.exception("the cost plan of %s could not be made", settings.scrub(str(args[0] if args else "?")))
        return None, None
