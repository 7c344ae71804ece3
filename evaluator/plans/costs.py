"""The per-call costs a plan prices a run with, and the hardware it prices it on.

A run's time is counted from three measured figures (measured.json; each record says where it comes from):
- `request_s`: one request with one image, prepared and prefilled (an option scoring, or a generation's prompt);
  scaled by the request's prompt tokens against the record's `prompt_tokens` (a text-only request: its text alone);
- `step_s`: one decode step of a batch of up to `batch_size` requests (a generation of N tokens is N steps for its
  batch; thinking adds its budget's steps);
- `load_s`: loading the model from local disk.
Every figure is for the record's model size and scales linearly with the parameters a token reads (all of them for
a dense model, the active ones for a mixture of experts: a decode step reads them from memory, a prefill multiplies
by them); loading scales with all the parameters.

A GPU's figures carry to another GPU by the ratio of their memory bandwidths (the vendors' figures, BANDWIDTH_TBPS):
a decode step of a 7B model is bound by reading its weights, as the H200 measurement showed (31 ms a step at batch 1
against 3.3 ms to read the weights: overhead-bound there, so this ratio is a rough guide, said as one). A flavor with
several GPUs splits the model's layers across them (device_map="auto"): they run one after another, so it is priced
at one GPU's speed. The Jobs flavors and their list prices (PRICES, the Hub's published prices when this was written;
the Space prices with the Hub's own list when it can read it) come from huggingface_hub's JobHardware names.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # engines imports this module
    from evaluator.plans.engines import EngineRecord

MEASURED = Path(__file__).with_name("measured.json")
REFERENCE_GPU = "h200"  # the record GPUs are priced from when no record of their own exists
# one H100 (no Jobs flavor): the hardware the lite suites are sized for (a 7B model, all four benchmarks, no thinking,
# within LITE_TARGET_S by the plan) and priced beside the flavors for comparison
REFERENCE = "h100"
LITE_TARGET_S = 30 * 60
CPU = "cpu"
# memory bandwidth of one GPU of each family, TB/s (the vendors' data sheets: T4 320 GB/s, L4 300 GB/s, A10G 600
# GB/s, L40S 864 GB/s, A100 80 GB 2.0 TB/s, H100 SXM 3.35 TB/s, H200 4.8 TB/s, RTX PRO 6000 1.8 TB/s)
BANDWIDTH_TBPS = {"t4": 0.32, "l4": 0.30, "a10g": 0.60, "l40s": 0.864, "a100": 2.0, "h100": 3.35, "h200": 4.8,
                  "rtx-pro-6000": 1.8}
# GPU memory of one GPU of each family, GB (the vendors' figures; leaderboard.running.run_memory plans with them)
GPU_GB = {"t4": 16, "l4": 24, "l40s": 48, "a10g": 24, "a100": 80, "h100": 80, "h200": 141, "rtx-pro-6000": 96}
# US dollars an hour: the Hub's published Jobs prices as read in November 2026 (huggingface.co/docs/hub/jobs-pricing;
# the Space uses the Hub's own list when it can read it, leaderboard.running.job_flavors.hardware_rates)
PRICES = {"cpu-basic": 0.01, "cpu-upgrade": 0.03, "cpu-xl": 1.00, "t4-small": 0.40, "t4-medium": 0.60, "l4x1": 0.80,
          "l4x4": 3.80, "a10g-small": 1.00, "a10g-large": 1.50, "a10g-largex2": 3.00, "a10g-largex4": 5.00,
          "l40sx1": 1.80, "l40sx4": 8.30, "l40sx8": 23.50, "a100-large": 2.50, "a100x4": 10.00, "a100x8": 20.00,
          "h200": 5.00, "h200x2": 10.00, "h200x4": 20.00, "h200x8": 40.00}
PRICES_BASIS = ("list prices of November 2026 (the Jobs pricing page's T4 prices; the others as the Hub lists them "
                "for the same hardware on Spaces)")
_FAMILY = re.compile(r"^(rtx-pro-6000|t4|l40s|l4|a10g|a100|h100|h200)")
_COUNT = re.compile(r"x(\d+)$")


@dataclass(frozen=True)
class Measured:
    """One machine's measured per-call costs (a record of measured.json)."""

    key: str
    hardware: str
    gpu: str
    params_billions: float
    batch_size: int
    request_s: float
    prompt_tokens: float
    step_s: float
    load_s: float
    measured: str
    by: str
    request_basis: str
    step_basis: str
    load_basis: str


@dataclass(frozen=True)
class Hardware:
    """Where a run is priced: a Jobs flavor (or this machine's CPU), its measured record, how much slower than that
    record it runs (`slowdown`), its price an hour (None: unknown) and what these rest on; `engine` what runs the
    model and, for a served engine, `served` its figures (an engines.EngineRecord, which `slowdown` is then against)."""

    name: str
    measured: Measured
    slowdown: float
    usd_per_hour: float | None
    gpus: int
    gpu_gb: float | None
    speed_basis: str
    price_basis: str
    engine: str = "transformers"
    served: EngineRecord | None = None


def measured_records(path: Path = MEASURED) -> dict[str, Measured]:
    """The records of measured.json, by key ("h200", "cpu"); ValueError naming the file when one is malformed."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    found = {}
    for key, record in (data.get("records") or {}).items():
        try:
            found[key] = Measured(key=key, hardware=str(record["hardware"]), gpu=str(record.get("gpu") or ""),
                                  params_billions=float(record["params_billions"]),
                                  batch_size=int(record["batch_size"]), request_s=float(record["request_s"]),
                                  prompt_tokens=float(record["prompt_tokens"]), step_s=float(record["step_s"]),
                                  load_s=float(record["load_s"]), measured=str(record["measured"]),
                                  by=str(record["by"]), request_basis=str(record["request_basis"]),
                                  step_basis=str(record["step_basis"]), load_basis=str(record["load_basis"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{Path(path).name}: record {key!r} is malformed ({exc})") from None
        if min(found[key].params_billions, found[key].request_s, found[key].step_s, found[key].batch_size) <= 0:
            raise ValueError(f"{Path(path).name}: record {key!r} has a figure that is not above 0")
    return found


# a record's figures that must be positive numbers for the plan to divide by and multiply with (write_record)
FIGURES = ("params_billions", "batch_size", "request_s", "prompt_tokens", "step_s", "load_s")
# the words each record holds beside its figures (measured_records reads every one)
WORDS = ("hardware", "gpu", "dtype", "generation_path", "measured", "by", "request_basis", "step_basis", "load_basis")


def record_problem(record: dict) -> str | None:
    """Why `record` cannot be a record of measured.json (a figure that is not a positive number, a field missing),
    in one line; None when it can."""
    missing = [name for name in FIGURES + WORDS if name not in record]
    if missing:
        return f"the record lacks {', '.join(missing)}"
    bad = [f"{name} {record[name]!r}" for name in FIGURES
           if isinstance(record[name], bool) or not isinstance(record[name], (int, float))
           or not math.isfinite(record[name]) or record[name] <= 0]
    if bad:
        return f"a figure is not a positive number: {', '.join(bad)}"
    if not isinstance(record["batch_size"], int):
        return f"batch_size is not a whole number: {record['batch_size']!r}"
    return None


def write_record(path: Path, key: str, record: dict) -> None:
    """Merge `record` into the measured.json-shaped file `path` under `key`, keeping its other records (a missing
    file starts as a copy of the shipped measured.json); ValueError in one line, and nothing written, for a record
    that record_problem refuses or a file that is not of that shape."""
    path = Path(path)
    problem = record_problem(record)
    if problem:
        raise ValueError(f"record {key!r} refused: {problem}")
    source = path if path.exists() else MEASURED
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{source}: cannot be read as measured.json ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("records"), dict):
        raise ValueError(f"{source}: not of measured.json's shape (no \"records\" object)")
    data["records"][key] = record
    staged = path.with_name(f".{path.name}.writing")
    staged.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    try:
        measured_records(staged)  # what the plan will read: checked before it replaces anything
    except ValueError:
        staged.unlink()
        raise
    staged.replace(path)


def gpu_family(flavor: str) -> str | None:
    """The GPU family of a Jobs flavor ("a100-large" -> "a100"); None for a CPU flavor or an unknown name."""
    match = _FAMILY.match(flavor)
    return match.group(1) if match else None


def gpu_count(flavor: str) -> int:
    match = _COUNT.search(flavor)
    return int(match.group(1)) if match else 1


def gpu_memory_gb(flavor: str) -> float | None:
    """A Jobs flavor's GPU memory in GB over all its GPUs; None for a CPU flavor or one not known here."""
    family = gpu_family(str(flavor).strip().lower())
    return GPU_GB[family] * gpu_count(str(flavor).strip().lower()) if family in GPU_GB else None


def jobs_flavors() -> tuple[str, ...]:
    """The GPU flavors of Hugging Face Jobs (huggingface_hub's JobHardware names; the price table's when it has
    none)."""
    try:
        from huggingface_hub import JobHardware

        names = tuple(item.value for item in JobHardware)
    except ImportError:  # an older huggingface_hub
        names = tuple(PRICES)
    return tuple(name for name in names if gpu_family(name) in BANDWIDTH_TBPS)


def on_flavor(flavor: str, records: dict[str, Measured], prices: dict[str, float] | None = None) -> Hardware:
    """A Jobs flavor priced from its own GPU's record, else from the reference GPU's by bandwidth (prices: the
    Hub's own list where the caller has it, else PRICES)."""
    family = gpu_family(flavor) or ""
    own = next((r for r in records.values() if r.gpu == family), None)
    reference = own or records[REFERENCE_GPU]
    if own is not None:
        slowdown, speed = 1.0, f"measured on {own.hardware}"
    else:
        slowdown = BANDWIDTH_TBPS[reference.gpu] / BANDWIDTH_TBPS[family]
        speed = (f"{reference.hardware}'s figures x {slowdown:.2f} (memory bandwidth {BANDWIDTH_TBPS[reference.gpu]:g} "
                 f"against {BANDWIDTH_TBPS[family]:g} TB/s; not measured on it)")
    gpus = gpu_count(flavor)
    if gpus > 1:
        speed += f"; {gpus} GPUs split the layers and run one after another: one GPU's speed"
    live = (prices or {}).get(flavor)
    price = live if live is not None else PRICES.get(flavor)
    price_basis = ("the Hub's current list" if live is not None else PRICES_BASIS if price is not None else
                   "no Jobs flavor: priced for comparison" if flavor == REFERENCE else "unknown")
    return Hardware(flavor, reference, slowdown, price, gpus, gpu_memory_gb(flavor), speed, price_basis)


def cheapest_per_gpu(machines: list[Hardware], holds) -> list[Hardware]:
    """Of each GPU family, the cheapest flavor that holds the model (`holds(hardware)`): more GPUs of one kind run
    no faster here (their layers run one after another), so they only matter where one GPU cannot hold it."""
    best: dict[str, Hardware] = {}
    for machine in machines:
        family = gpu_family(machine.name) or machine.name
        if not holds(machine):
            continue
        known = best.get(family)
        if known is None or (machine.usd_per_hour or 1e9, machine.gpus) < (known.usd_per_hour or 1e9, known.gpus):
            best[family] = machine
    return sorted(best.values(), key=lambda m: (m.usd_per_hour is None, m.usd_per_hour or 0.0, m.name))


def on_cpu(records: dict[str, Measured]) -> Hardware:
    """This machine's CPU, priced from the CPU record (no price: a local run costs no Jobs money)."""
    record = records[CPU]
    return Hardware(CPU, record, 1.0, None, 0, None, f"measured on {record.hardware}", "a local run: no Jobs price")


def reference(records: dict[str, Measured]) -> Hardware:
    """One H100, the lite suites' sizing reference."""
    return on_flavor(REFERENCE, records)
