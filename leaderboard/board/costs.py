"""What a run cost, computed in one place at publish (leaderboard.board.publish) and recorded as `run.cost` in its
results file:

    {"executor": "hf-jobs" | "local", "flavor": Job flavor | None, "gpu": run.hardware.gpu_name | None,
     "device": "cuda" | "cpu" | "served", "seconds": billed seconds | None, "measured": how | None,
     "usd": dollars | None, "price": {"usd_per_hour": x} | {"usd_per_mtok_input": a, "usd_per_mtok_output": b} | None,
     "prompt_tokens": n | None, "completion_tokens": n | None}

- A Hugging Face Job publishes before it ends, so its seconds are what the Jobs API says at publish: now minus the
  Job's `started_at` (when it turned RUNNING); its price is the Hub's rate for its flavor. The exact billed time is
  settled once the Job has ended (the Jobs budget's ledger).
- A run of the local executor records the evaluator's own wall time (`run.wall_time_s`), on a GPU priced at
  LEADERBOARD_GPU_PRICE_PER_HOUR when that is set; on the CPU its seconds, with no GPU and no cost.
- A served model uses no GPU time: it records the tokens its endpoint reported (`run.served.usage`), priced at
  LEADERBOARD_MODEL_PRICE_PER_MTOK when that is set. A run served inside its own Job (LEADERBOARD_ENGINE=vllm: the
  Job's vLLM on its loopback) costs its Job's time as any Job's (device "cuda"), its tokens recorded beside.

A results file without `run.cost` (published before costs were recorded) reads as "not recorded", never as 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from leaderboard.formatting import as_float
from leaderboard.settings import Settings

JOB_MEASURE = "Jobs API started_at to publish"
LOCAL_MEASURE = "evaluator wall time (run.wall_time_s)"
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class JobSeen:
    """What the Jobs API said of the Job publishing a run (leaderboard.running.job_clock): any field None when it
    could not say."""

    id: str | None = None
    flavor: str | None = None
    started_at: datetime | None = None  # when the Job turned RUNNING
    usd_per_hour: float | None = None  # the flavor's price


def _number(value) -> float | None:
    """A finite number of 0 or more; None for anything else."""
    number = as_float(value)
    return number if number >= 0 else None  # NaN compares False


def _count(value) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def is_served(results: dict) -> bool:
    """A served model's run (its endpoint's tokens are its cost); not a run a Job's own engine served (run.engine
    "vllm": its Job's time is)."""
    if "served" in results:
        return results.get("served") is True
    return bool(_dict(_dict(results.get("run")).get("served")))  # a results file from before the flag


def by_job_engine(results: dict) -> bool:
    """Whether the Job's own engine (LEADERBOARD_ENGINE=vllm) served the run's model."""
    return str(_dict(results.get("run")).get("engine") or "") not in ("", "transformers", "endpoint")


def _job_seconds(job: JobSeen, now: datetime) -> float | None:
    started = job.started_at
    if started is None:
        return None
    if started.tzinfo is None:
        started = started.replace(tzinfo=timezone.utc)
    return max(0.0, (now - started).total_seconds())


def run_cost(results: dict, settings: Settings, job: JobSeen | None = None, now: datetime | None = None) -> dict:
    """The run's `run.cost` (see the module's docstring). `job`: what the Jobs API said of the Job publishing it
    (None: the run did not run as a Job); `now`: the time of the publish."""
    run = _dict(results.get("run"))
    engine = by_job_engine(results) or (is_served(results) and job is not None)  # a Job's own engine served it
    served = engine or is_served(results)
    device = "cuda" if engine else "served" if served else (str(run["device"]) if run.get("device") else None)
    gpu = _dict(run.get("hardware")).get("gpu_name") if device == "cuda" else None
    cost = {"executor": "hf-jobs" if job is not None else "local", "flavor": job.flavor if job else None,
            "gpu": str(gpu) if gpu else None, "device": device, "seconds": None, "measured": None, "usd": None,
            "price": None, "prompt_tokens": None, "completion_tokens": None}
    if served:
        usage = _dict(_dict(run.get("served")).get("usage"))
        prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        cost.update(prompt_tokens=prompt, completion_tokens=completion)
        prices = None if engine else settings.model_prices
        if prices is not None:
            cost["price"] = {"usd_per_mtok_input": prices[0], "usd_per_mtok_output": prices[1]}
            if prompt is not None and completion is not None:
                cost["usd"] = round((prompt * prices[0] + completion * prices[1]) / 1e6, 6)
        if not engine:
            return cost
    if job is not None:
        seconds = _job_seconds(job, now or datetime.now(timezone.utc))
        rate = job.usd_per_hour
        measured = JOB_MEASURE
    else:
        seconds = _number(run.get("wall_time_s"))
        rate = settings.gpu_price_per_hour if device == "cuda" else None
        measured = LOCAL_MEASURE
    if seconds is not None:
        seconds = round(seconds, 2)  # the dollars follow from the seconds as published, so a reader gets them again
        cost.update(seconds=seconds, measured=measured)
    if rate is not None:
        cost["price"] = {"usd_per_hour": rate}
        if seconds is not None:
            cost["usd"] = round(rate * seconds / 3600, 6)
    return cost


def hardware(results: dict) -> str | None:
    """Where a run ran, as its cost records it: the Job's flavor, else the GPU's name, else the device ("cpu",
    "served"); None for a run published before costs were recorded."""
    cost = _dict(_dict(results.get("run")).get("cost"))
    if not cost:
        return None
    found = cost.get("flavor") or cost.get("gpu") or cost.get("device")
    return str(found) if found else None


def on_cpu(results: dict) -> bool:
    """Whether the run ran on a CPU: a CPU Job flavor (cpu-basic, cpu-upgrade), or the CPU device without a Job."""
    cost = _dict(_dict(results.get("run")).get("cost"))
    flavor = str(cost.get("flavor") or "")
    return flavor.startswith("cpu") if flavor else (not cost.get("gpu") and cost.get("device") == "cpu")


def _hours(results: dict) -> float | None:
    seconds = _number(_dict(_dict(results.get("run")).get("cost")).get("seconds"))
    return None if seconds is None else seconds / 3600


def gpu_hours(results: dict) -> float | None:
    """The run's recorded hours on a GPU (None: not recorded, a CPU run, or a served model's)."""
    return None if on_cpu(results) else _hours(results)


def cpu_hours(results: dict) -> float | None:
    """The wall time in hours of a run on a CPU (None: not recorded, or a run on a GPU or a served model's)."""
    return _hours(results) if on_cpu(results) else None
