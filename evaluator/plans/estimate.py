"""A run's plan: what it will ask (each benchmark's workload, thinking added) and what that costs on each machine.

Counts come from each benchmark's `workload` (counted without the data: the sample suite from its own plan, the full
and lite suites from the cards' tables); a benchmark without one is counted from its plan on the sample suite and
left uncounted on a downloaded one, said so. Seconds come from the measured per-call costs (costs.py):

    requests (option scorings and generations) x request_s x (active parameters / the record's)
                                                 x (prompt tokens, images included / the record's)
  + batches x (answer budget + thinking budget) x step_s x (active parameters / the record's)
  + loading (once per run) x (parameters / the record's), all x the hardware's slowdown against the record
  + the judge: calls x JUDGE_CALL_S / JUDGE_IN_FLIGHT (an assumption: no judge's pace is measured here), during
    which the machine waits and is paid for.

That is transformers' static batches; a run served by vLLM is counted by its tokens at the engine's rates instead
(engines.py). Every answer is counted at its full budget (a reply that stops early costs less): the hours are an
upper bound for the model's part, and the dollars with them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.spec import SAMPLE, PlanContext
from evaluator.benchmarks.workloads import Workload, count_plan
from evaluator.plans.costs import Hardware
from evaluator.plans.engines import TRANSFORMERS, served_seconds, start_seconds
from evaluator.plans.facts import ModelFacts

JUDGE_CALL_S = 3.0  # seconds one judge call takes (an assumption for a hosted judge writing a few hundred tokens)
JUDGE_IN_FLIGHT = 8  # the judge's calls in flight (evaluator.judge: an endpoint's concurrency)
GPU_BATCH = 64  # --batch-size auto on a GPU (evaluator.models.devices)
THINKING = ("auto", "on", "off")


@dataclass(frozen=True)
class BenchmarkPlan:
    """One benchmark of the plan: its workload (None: not counted), or why it does not run, and its totals."""

    name: str
    workload: Workload | None
    skipped: str = ""
    thinking_tokens: int = 0  # per generation
    image_tokens: float = 0.0

    def total(self, what: str) -> float:
        if self.workload is None or self.skipped:
            return 0.0
        if what == "thinking":
            return self.workload.total("generations") * self.thinking_tokens
        if what == "prompt_tokens":  # text and images
            images = sum(p.items * p.images * (p.generations + p.scorings) for p in self.workload.parts)
            return self.workload.total("prompt_tokens") + images * self.image_tokens
        return self.workload.total(what)

    def seconds(self, on: Hardware, facts: ModelFacts, batch: int) -> float:
        """The model's part of this benchmark on `on` (loading and the judge apart)."""
        if self.workload is None or self.skipped:
            return 0.0
        if on.served is not None:
            return served_seconds(self.workload, on, facts.active, self.thinking_tokens, self.image_tokens)
        record = on.measured
        size = facts.active / (record.params_billions * 1e9)
        total = 0.0
        for part in self.workload.parts:
            requests = part.items * (part.generations + part.scorings)
            prompt = part.prompt_tokens + part.images * self.image_tokens
            total += requests * record.request_s * size * prompt / record.prompt_tokens
            generations = part.items * part.generations
            if generations:
                steps = part.new_tokens + self.thinking_tokens
                total += math.ceil(generations / batch) * steps * record.step_s * size
        return total * on.slowdown

    def judge_seconds(self) -> float:
        return self.total("judge_calls") * JUDGE_CALL_S / JUDGE_IN_FLIGHT


@dataclass(frozen=True)
class Priced:
    """The plan on one machine: the model's seconds, loading, the judge's wait, in all, and its price."""

    hardware: Hardware
    model_s: float
    load_s: float
    judge_s: float
    batch: int

    @property
    def seconds(self) -> float:
        return self.model_s + self.load_s + self.judge_s

    @property
    def hours(self) -> float:
        return self.seconds / 3600.0

    @property
    def usd(self) -> float | None:
        return None if self.hardware.usd_per_hour is None else self.hours * self.hardware.usd_per_hour


@dataclass
class RunPlan:
    """A whole run's plan: the model, what was asked, each benchmark and each machine priced."""

    facts: ModelFacts
    suite: str
    thinking: str  # "on" or "off": whether the budget is counted
    thinking_note: str
    thinking_budget: int
    limit: int
    benchmarks: list[BenchmarkPlan]
    priced: list[Priced] = field(default_factory=list)

    def total(self, what: str) -> float:
        return sum(b.total(what) for b in self.benchmarks)

    def on(self, name: str) -> Priced | None:
        return next((p for p in self.priced if p.hardware.name == name), None)

    @property
    def engine(self) -> str:
        """What runs the model on the plan's GPUs (transformers when it prices none)."""
        return next((p.hardware.engine for p in self.priced if p.hardware.gpus), TRANSFORMERS)


def thinking_counted(facts: ModelFacts, asked: str) -> tuple[bool, str]:
    """Whether the thinking budget is counted, and why: `off` never; `on` and `auto` when the template writes a
    thought (`auto` then counts it as an upper bound: the template's default decides at run time)."""
    if asked not in THINKING:
        raise ValueError(f"--thinking must be one of {', '.join(THINKING)}, got {asked!r}")
    if asked == "off":
        return False, "off: no thinking budget"
    if not facts.thinks:
        return False, f"{asked}: {facts.thinking_basis}, so no thinking budget"
    if asked == "on":
        return True, f"on: {facts.thinking_basis}"
    default = "the template's default decides at run time" + ("" if facts.switch else ": it always thinks")
    return True, f"auto: {facts.thinking_basis}; counted as thinking ({default})"


def benchmark_workload(name: str, ctx: PlanContext) -> Workload | None:
    """A benchmark's workload: its own `workload`, else its plan counted on the sample suite, else None."""
    benchmark = get_benchmark(name)
    if hasattr(benchmark, "workload"):
        return benchmark.workload(ctx)
    if ctx.suite == SAMPLE:
        return count_plan(benchmark.plan(ctx), name, ctx.suite, "item", "counted from its plan")
    return None


def plan_run(facts: ModelFacts, benchmarks: list[str], suite: str, hardware: list[Hardware], *,
             thinking: str = "auto", thinking_budget: int = 4096, limit: int = 0, options: dict | None = None,
             sources: dict | None = None, batch: int | None = None) -> RunPlan:
    """The plan of a run of `benchmarks` on `suite`, priced on each of `hardware` (batch: the GPU batch size; a CPU
    record's own batch on the CPU)."""
    counted, note = thinking_counted(facts, thinking)
    budget = max(0, int(thinking_budget)) if counted else 0
    ctx = PlanContext(suite=suite, limit=limit, options=dict(options or {}), sources=dict(sources or {}))
    found = []
    for name in benchmarks:
        card = get_benchmark(name).CARD
        if card.needs_images and not facts.has_vision:
            found.append(BenchmarkPlan(name, None, skipped="skipped: a text-only model, and it needs images"))
            continue
        workload = benchmark_workload(name, ctx)
        uncounted = "" if workload is not None else f"not counted: {name} has no workload for the {suite} suite"
        found.append(BenchmarkPlan(name, workload, skipped=uncounted, thinking_tokens=budget,
                                   image_tokens=facts.image_tokens))
    run = RunPlan(facts, suite, "on" if counted else "off", note, budget, limit, found)
    for machine in hardware:
        size = machine.measured.batch_size if not machine.gpus else (batch or GPU_BATCH)
        model_s = sum(b.seconds(machine, facts, size) for b in found)
        load_s = start_seconds(machine, facts.params)
        judge_s = sum(b.judge_seconds() for b in found)
        run.priced.append(Priced(machine, model_s, load_s, judge_s, size))
    return run


def fits(facts: ModelFacts, hardware: Hardware, precision_bytes: float = 2.0, headroom: float = 0.85) -> bool:
    """Whether the model's weights fit the hardware's GPU memory (less headroom for the cache and activations)."""
    return hardware.gpu_gb is not None and facts.params * precision_bytes <= hardware.gpu_gb * 1e9 * headroom
