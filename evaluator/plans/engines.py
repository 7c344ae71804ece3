"""The engine a run is priced on, and the mark every figure of the plan carries.

- transformers (`python -m evaluator run`, and a Job by default): in-process, static batches of up to 64 requests
  padded to their longest reply: a generation of N tokens is N decode steps of its whole batch, and a question scored
  by likelihood is one request with its options (costs.py, measured.json);
- vLLM (LEADERBOARD_ENGINE=vllm: the Job serves the model on its loopback): continuous batching, so every request is
  counted by its own tokens and a reply that ends early frees its place at once; no batch waits for its longest
  reply, which is what a thinking model's long, uneven replies cost a static batch. A run's model time is

      prompt tokens (images included) / prefill tokens a second + answer tokens (thinking included) / decode tokens
      a second

  where a question scored by likelihood is 1 + K requests (its prompt, then each of its K options), each a full
  prefill with max_tokens=1 and prompt log-probabilities (vLLM reuses no cached prefix for a request that asks for
  them); plus the server's start once per run. The rates are vLLM's published ones (published.json) until a GPU
  measures them here.

Both scale with the parameters a token reads and, on a GPU without a record of its own, by memory bandwidth (costs.py;
prefill is compute-bound, so that ratio is a rougher guide for it). Every figure is marked "measured (GPU, date)",
"published (source)" or "assumed (source)".
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from evaluator.benchmarks.workloads import Workload
from evaluator.plans.costs import BANDWIDTH_TBPS, Hardware, Measured, gpu_family, on_flavor

PUBLISHED = Path(__file__).with_name("published.json")
TRANSFORMERS, VLLM = "transformers", "vllm"
ENGINES = (TRANSFORMERS, VLLM)
STYLE = {TRANSFORMERS: "in-process, static batches padded to their longest reply",
         VLLM: "served, continuous batching: no batch waits for its longest reply"}
# what each figure is, in the plan's words and the record's keys: (option scoring and prompts, answers, start)
FIGURES = ("prompts", "generation", "loading")


@dataclass(frozen=True)
class Figure:
    """One figure the plan prices with, its unit in words, and where it comes from: `status` "measured",
    "published" or "assumed" (published.json writes "published, not measured here"), `source` the GPU and date of a
    measurement or the address of a publication."""

    value: float
    words: str
    status: str
    source: str
    basis: str

    def mark(self) -> str:
        """"measured (H200, 2026-11-26)", "published (https://...)", "assumed (https://...)"."""
        return f"{self.status.split(',')[0].strip()} ({self.source})"


@dataclass(frozen=True)
class EngineRecord:
    """An engine's figures on one GPU (a record of published.json)."""

    key: str
    engine: str
    hardware: str
    gpu: str
    params_billions: float
    version: str
    model: str
    decode: Figure
    prefill: Figure
    start: Figure


def _figure(record: dict, name: str, words: str) -> Figure:
    found = record["figures"][name]
    value = float(found["value"])
    if value <= 0:
        raise ValueError(f"{name} is not above 0")
    return Figure(value, words, str(found["status"]), str(found["source"]), str(found["basis"]))


def engine_records(path: Path = PUBLISHED) -> dict[str, EngineRecord]:
    """The records of published.json, by key ("vllm-h100"); ValueError naming the file when one is malformed."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    found = {}
    for key, record in (data.get("records") or {}).items():
        try:
            found[key] = EngineRecord(
                key, str(record["engine"]), str(record["hardware"]), str(record["gpu"]),
                float(record["params_billions"]), str(record["engine_version"]), str(record["model"]),
                _figure(record, "decode_tokens_s", "answer tokens a second"),
                _figure(record, "prefill_tokens_s", "prompt tokens a second"),
                _figure(record, "start_s", "s to start the server"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{Path(path).name}: record {key!r} is malformed ({exc})") from None
    return found


def on_engine(flavor: str, records: dict[str, Measured], engine: str = TRANSFORMERS,
              prices: dict[str, float] | None = None, served: dict[str, EngineRecord] | None = None) -> Hardware:
    """A Jobs flavor priced for `engine`: transformers from measured.json (costs.on_flavor); vLLM from its own GPU's
    record of published.json, else the first vLLM record's by memory bandwidth, its price as on_flavor's."""
    if engine not in ENGINES:
        raise ValueError(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    base = on_flavor(flavor, records, prices)
    if engine == TRANSFORMERS:
        return base
    candidates = [r for r in (engine_records() if served is None else served).values() if r.engine == engine]
    if not candidates:
        raise ValueError(f"no {engine} figures in {PUBLISHED.name}")
    family = gpu_family(flavor) or ""
    record = next((r for r in candidates if r.gpu == family), candidates[0])
    slowdown = BANDWIDTH_TBPS[record.gpu] / BANDWIDTH_TBPS[family]
    speed = (f"{record.hardware}'s {engine} figures" + ("" if record.gpu == family else
             f" x {slowdown:.2f} (memory bandwidth {BANDWIDTH_TBPS[record.gpu]:g} against "
             f"{BANDWIDTH_TBPS[family]:g} TB/s; prefill is compute-bound, so a rougher guide for it)"))
    if base.gpus > 1:
        speed += f"; {base.gpus} GPUs priced at one GPU's speed (tensor parallelism would be faster: not counted)"
    return replace(base, slowdown=slowdown, speed_basis=speed, engine=engine, served=record)


def figures(machine: Hardware) -> dict[str, Figure]:
    """The figures a machine is priced with, by FIGURES' names, each with its mark."""
    record = machine.served
    if record is not None:
        return {"prompts": record.prefill, "generation": record.decode, "loading": record.start}
    m = machine.measured
    where = f"{(m.gpu or 'cpu').upper()}, {m.measured}"
    return {"prompts": Figure(m.request_s, "s a request with one image, prepared and prefilled", "measured", where,
                              m.request_basis),
            "generation": Figure(m.step_s, f"s a decode step of a batch of up to {m.batch_size}", "measured", where,
                                 m.step_basis),
            "loading": Figure(m.load_s, "s loading the model", "measured", where, m.load_basis)}


def marks(machine: Hardware) -> dict[str, str]:
    """Each figure's mark, by name: what the plan's record carries."""
    return {name: figure.mark() for name, figure in figures(machine).items()}


def served_seconds(workload: Workload, machine: Hardware, active: float, thinking_tokens: int,
                   image_tokens: float) -> float:
    """The model's part of one benchmark's workload served by an engine (module docstring)."""
    record = machine.served
    size = active / (record.params_billions * 1e9)
    prompt_s = answer_s = 0.0
    for part in workload.parts:
        prompt = part.prompt_tokens + part.images * image_tokens
        requests = part.items * (part.generations + part.scorings * (1 + part.options))
        prompt_s += requests * prompt / record.prefill.value
        answers = part.items * (part.generations * (part.new_tokens + thinking_tokens)
                                + part.scorings * (1 + part.options))  # max_tokens=1 for each scoring request
        answer_s += answers / record.decode.value
    return (prompt_s + answer_s) * size * machine.slowdown


def start_seconds(machine: Hardware, params: float) -> float:
    """Loading the model (transformers), or starting the server that loads it (an engine), once per run."""
    record = machine.served or machine.measured
    start = machine.served.start.value if machine.served is not None else machine.measured.load_s
    return start * params / (record.params_billions * 1e9) * machine.slowdown
