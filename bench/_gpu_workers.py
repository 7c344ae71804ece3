"""bench/gpu_check.py's jobs, each run in a process of its own (so that a part's time limit, a crash or an
out-of-memory error ends that part alone): `python bench/_gpu_workers.py <job> --folder <model folder> ...` prints
its figures as JSON on its last line, after the RESULT marker.

- build: build and save a LLaVA of --shape (bench/_models.py) into --folder; its parameters, bytes and the machine
  (on CUDA also the GPU's name and memory, for the per-call costs record);
- scoring: bench/option_scoring.py's many_questions on the saved model;
- generation: bench/generation.py's requests at each of --batches on the dynamic and the static KV cache (compiled
  on CUDA), each batch size warmed once first, the floor of a decode step, and the first generated position's
  log-probabilities at batch 1 against the largest batch (bench/batch_drift.py);
- warm_up: a second process's compile warm-up on the compiled path, for the same shapes, with the compile cache the
  generation job filled (CUDA only);
- answer: a judged benchmark's sample suite answered as the executor answers it (plan + the model's calls), with
  the full suite's default options, and never graded: no judge is needed; with the batch size and dtype it ran at.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root)
import sample_suites

RESULT = "GPU_CHECK_RESULT "  # a job's last line: this marker, then its figures as JSON
ANSWER_RUNS = ("simpleqa", "lave")  # judged benchmarks: their answering alone, in the answer job


def work_build(args) -> dict:
    """Build and save the model; its size, and the machine it will run on."""
    folder = _models.build_llava(Path(args.folder), args.shape)
    return {"params": sample_suites.parameter_count(folder),
            "bytes": sum(path.stat().st_size for path in folder.glob("*.safetensors")), "machine": machine(args),
            **gpu(args)}


def machine(args) -> str:
    """The GPU (name, memory, torch and its CUDA), or the CPU as bench/sample_suites.py describes it."""
    import torch

    if args.device != "cuda":
        return sample_suites.machine()
    props = torch.cuda.get_device_properties(0)
    return f"{props.name} ({props.total_memory / 2**30:.0f} GiB), torch {torch.__version__}, CUDA {torch.version.cuda}"


def gpu(args) -> dict:
    """The GPU's name as torch gives it (torch.cuda.get_device_name) and its memory in GiB; nothing on the CPU."""
    import torch

    if args.device != "cuda":
        return {}
    return {"device_name": torch.cuda.get_device_name(0),
            "memory_gib": torch.cuda.get_device_properties(0).total_memory / 2**30}


def work_scoring(args) -> dict:
    """Many questions batched against one at a time, the floor and the choices' agreement (option_scoring.py)."""
    import option_scoring

    return option_scoring.many_questions(_models.load_folder(Path(args.folder), device=args.device), args.questions,
                                         args.repeats)


def generation_setup(args) -> tuple:
    """The saved model loaded with end-of-sequence off (every request generates all its new tokens), the requests and
    the batch sizes of the generation jobs."""
    import generation

    adapter = _models.load_folder(Path(args.folder), device=args.device)
    adapter.model.generation_config.eos_token_id = None
    return (adapter, generation.make_requests(args.requests, args.new_tokens),
            tuple(int(b) for b in args.batches.split(",")))


def work_generation(args) -> dict:
    """The same requests at each batch size on the dynamic path and on the static one (generation.both_paths: compiled
    on CUDA), end-of-sequence off, with the floor of a decode step, and how far the largest batch moves the first
    generated position's log-probabilities (batch_drift.first_position_drift)."""
    import batch_drift
    import generation

    adapter, requests, sizes = generation_setup(args)
    figures = generation.both_paths(adapter, requests, sizes)
    figures["drift"] = batch_drift.first_position_drift(adapter, requests, max(sizes))
    return {"requests": len(requests), "new_tokens": args.new_tokens, "dtype": adapter.dtype, **figures}


def work_warm_up(args) -> dict:
    """A second process on the compiled path, with the compile cache the first one filled: its warm-up for the same
    shapes (generation.path_timings)."""
    import generation

    adapter, requests, sizes = generation_setup(args)
    timings = generation.path_timings(adapter, requests, sizes, "static-compiled")
    return {"warm_up_s": timings["warm_up_s"], "shapes": timings["shapes"], "fallback": timings["fallback"]}


def work_answer(args) -> dict:
    """A judged benchmark's sample suite answered (plan + the model's calls, as the executor makes them), not graded."""
    from evaluator.benchmarks import get_benchmark
    from evaluator.benchmarks.spec import PlanContext
    from evaluator.models.image_features import describe
    from evaluator.runs.executor import execute

    started = time.perf_counter()
    adapter = _models.load_folder(Path(args.folder), batch_size="auto", device=args.device)
    loaded = time.perf_counter()
    plan = get_benchmark(args.benchmark).plan(PlanContext(
        suite="sample", limit=args.limit, images_dir=Path(args.folder).parent / "cache" / "images",
        options=full_suite_options(args.benchmark)))
    answered = execute(adapter, plan, adapter.batch_size)
    done = time.perf_counter()
    return {"items": len(plan.items), "load_s": loaded - started, "total": done - started, "answer_s": done - loaded,
            "generation_s": answered.generate_s, "option_scoring_s": answered.score_s,
            "path": adapter.generation_path, "compile_s": adapter.cache.compile_time_s,
            "batch_size": adapter.batch_size, "dtype": adapter.dtype,
            "shapes": len(adapter.cache.shapes),
            "images": describe(adapter.image_features, adapter.model_type)}


def full_suite_options(benchmark: str) -> dict[str, str]:
    """Options that make a sample run ask what a full run asks by default: SimpleQA's calibration runs on the sample
    suite but by default not on the full one (simpleqa/options.py, calibration_defaults)."""
    if benchmark != "simpleqa":
        return {}
    from evaluator.benchmarks.simpleqa.options import read_settings

    full = read_settings("full", {})
    return {"simpleqa.confidence": "on" if full.confidence else "off",
            "simpleqa.frequency": "on" if full.frequency else "off"}


JOBS = {"build": work_build, "scoring": work_scoring, "generation": work_generation, "warm_up": work_warm_up,
        "answer": work_answer}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("job", choices=tuple(JOBS))
    parser.add_argument("--folder", required=True, help="the model's folder (build: where it is saved)")
    parser.add_argument("--shape", choices=tuple(_models.SHAPES), default="7b")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--questions", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--batches", default="1,8,64")
    parser.add_argument("--benchmark", choices=ANSWER_RUNS, default="simpleqa")
    parser.add_argument("--limit", type=int, default=0)
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse()
    print(RESULT + json.dumps(JOBS[args.job](args)), flush=True)
