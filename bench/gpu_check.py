"""The one command for a GPU loan: the model tests on CUDA, option scoring and generation on a LLaVA-1.5-7B-shaped
model, the sample suites through the CLI, a projection of each benchmark's full suite and the per-call costs record
the plan reads; one summary at the end.

Parts (each in a subprocess with its own time limit, all within --budget-s, 540 s by default so that the whole command
ends within 9 minutes and one device call of 10 minutes holds it, the model's building included; a part that fails or runs out of time is reported with its
one-line reason and the rest still run):
  build  a LLaVA of --shape (bench/_models.py: "7b" is LLaVA-1.5-7B's shape, random weights in bfloat16, about 14 GB
         on disk; "bench" a 0.07 B one for a CPU; "tiny" the tests' quick one) saved to a work folder, which every
         later part loads;
  1. tests/test_families.py and tests/test_models.py (pytest, started while the model is built): on CUDA with
     --device cuda, on the CPU with --device cpu; passed, failed, skipped and each failure's line;
  2. option scoring: bench/option_scoring.py's many-questions figure, 32 questions batched against one at a time and
     the bare model's floor, and in how many both ways choose the same option (bfloat16 on a GPU); against the 7B
     shape's targets on one H100: under 0.6 s for 32 questions, within 1.2x the floor, the same choice in >= 99 %;
  3. generation: bench/generation.py's requests, 64 x 32 new tokens (end-of-sequence off; batch 1 answers the first
     8), at batch 1, 8 and 64 on the dynamic KV cache and on the static one with transformers' compiled decode step
     (on the CPU: the static cache uncompiled), each with its warm-up apart (the compile, on CUDA), ms per decode step,
     the floor of a decode step (the weights' bytes over the bandwidth of a device-to-device copy measured in the same
     run), and how many answers the two paths share; on CUDA a second process then warms the same shapes with the
     compile cache the first filled. Against the 7B shape's targets: a decode step at batch 1 within 2.5x the floor,
     64 x 32 tokens at batch 64 in at most 1.2 s, a sample suite's warm-up in at most 90 s, less in a second
     process. Also how far the largest batch moves the log-probabilities of the first generated position
     (bench/batch_drift.py; the summary's "batch size and the numbers" line, beside part 2's largest option-score
     difference);
  4. sample suites: CURE and ReForm-Eval through the CLI (`python -m evaluator run --model <folder> --suite sample`),
     on the path the evaluator takes (auto: compiled on CUDA, with the check's compile cache), timed by phase from
     their results.json: loading (run.load_time_s), the model's generation and option-scoring calls
     (run.call_time_s) and everything else, with each suite's compile warm-up and the shapes it compiled. SimpleQA
     and LAVE need a judge: only their answering is timed (plan + the model's calls, in a worker, with the full
     suite's default options, on the same path), never their grading;
  5. projection: each benchmark's time per item in part 4 (loading aside) x its full suite's items
     (Card.full_suite_items), or per 1,000 items where the card does not know the count; no judge time;
  6. costs record: the per-call costs `python -m evaluator plan` prices a run with (evaluator/plans/measured.json,
     read by evaluator.plans.costs), from part 4's own runs: request_s = CURE's option-scoring phase / its
     option-scoring requests (counted as the plan counts the sample: its workload at --limit), prompt_tokens = their
     mean text tokens + the model's image tokens, step_s = SimpleQA's generation phase (its compile warm-up taken
     out) / its decode steps (batches of up to the batch size it ran at x each one's max_new_tokens), load_s = CURE's
     loading, with the parameters, dtype, batch size, generation path, the GPU (torch.cuda.get_device_name and its
     family: "h100", "a100", ...; "cpu" on the CPU), today's date and each figure's basis. Printed at the end;
     --write-costs PATH merges it into PATH (measured.json's shape; a missing file starts as a copy of the shipped
     measured.json) under its family, keeping the other records. A record with a figure that is not a positive
     number is refused in one line and nothing is written.

To bring a GPU's record home: run the check with --write-costs (e.g. `--write-costs $OUT/measured.json` on a device
machine, whose $OUT comes back), then copy the written file over evaluator/plans/measured.json (or, where only the
printed record came back, paste it under its key there) and commit it. The plan then prices that GPU's flavors from
their own record (evaluator.plans.costs.on_flavor prefers a GPU's own record to the H200's scaled by memory
bandwidth); a record measured on --shape 7b is the one to keep, since the plan scales every figure by parameters.

On a GPU machine of this project (one H100 80 GB, Python 3.12, torch 2.11 with CUDA 13, no network) the image lacks
our pinned packages; they travel as cp312 wheels in .whl/, a folder git ignores (a run carries at most 64 MiB):
  1. here, once: echo /.whl/ >> .git/info/exclude, then
       python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\
         --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \\
         transformers==5.23.0 huggingface_hub==2.4.0 httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5 \\
         click==8.5.1 plotly==7.1.0 rapidfuzz==3.14.6 num2words==0.5.14
     pycocoevalcap's wheel (~100 MB, mostly Java) does not fit, so ReForm-Eval's caption scoring cannot run there
     and its run is reported failed, unless its two pure-Python scorers (all our code imports of it, ~80 KB) travel:
       mkdir -p .whl/coco/pycocoevalcap && cp -r .venv/lib/python3.11/site-packages/pycocoevalcap/{bleu,cider} \\
         .whl/coco/pycocoevalcap/
  2. there (carry .whl), in one command: install the wheels into a folder of their own, put it on the path, run:
       rm -rf /tmp/site; python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \\
         --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD/.whl/coco HF_HUB_OFFLINE=1 \\
         PYTHONUNBUFFERED=1 && python3 bench/gpu_check.py
Here, without a GPU: `.venv/bin/python bench/gpu_check.py --shape bench --device cpu`, which asks less by default
(1 timed repetition in part 2; 16 requests at batch 1, 4 and 16; 4 items per benchmark, per dimension for ReForm-Eval)
and ends within 5 minutes on 2 cores.
The exit code is 0 when every part asked for ran, 1 when one failed or ran out of time.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root)
import sample_suites
from _gpu_workers import ANSWER_RUNS, RESULT
from sample_suites import aligned, say

ROOT = _models.ROOT
TESTS = ("tests/test_families.py", "tests/test_models.py")
PARTS = ("tests", "scoring", "generation", "suites")
CLI_RUNS = ("cure", "reform")  # through `python -m evaluator run`
# each part's own limit in seconds (the budget left cuts it shorter)
LIMITS = {"build": 150, "tests": 240, "scoring": 120, "generation": 240, "warm_up": 120, "cure": 120, "reform": 150,
          "simpleqa": 90, "lave": 90}
MIN_S = 10  # a part with less time left than this is not started
# what each device runs unless told otherwise: the CPU's is smaller, to end within 5 minutes on 2 cores
DEFAULTS = {"cuda": {"questions": 32, "repeats": 3, "requests": 64, "batches": "1,8,64", "limit": 0},
            "cpu": {"questions": 32, "repeats": 1, "requests": 16, "batches": "1,4,16", "limit": 4}}
TARGETS = {"batched_s": 0.6, "over_floor": 1.2, "agreement": 0.99}  # part 2's, for the 7B shape on one H100
# part 3's, for the 7B shape on one H100 or H200: a decode step at batch 1 within this many times the floor, 64 x 32
# new tokens at batch 64 in at most this many seconds, a sample suite's compile warm-up in at most this many seconds
GENERATION_TARGETS = {"step_over_floor": 2.5, "batch_64_s": 1.2, "suite_warm_up_s": 90.0}
OK, FAILED, TIMED_OUT, SKIPPED, NOT_ASKED = "ok", "failed", "timed out", "skipped", "not asked"


@dataclass
class Part:
    """One row of the summary: a part's status, its seconds and its result (or its one-line reason)."""

    key: str
    title: str
    status: str = NOT_ASKED
    seconds: float = math.nan
    result: str = ""
    data: dict = field(default_factory=dict)

    def fail(self, status: str, reason: str) -> None:
        self.status, self.result = status, reason


@dataclass
class Clock:
    """The check's deadline: each part gets its own limit or what is left, whichever is less."""

    deadline: float

    def limit(self, key: str) -> float:
        return min(LIMITS[key], self.deadline - time.monotonic())


# ---- running things ---------------------------------------------------------------------------------------------

def last_line(text: str) -> str:
    """The one-line reason in a failed command's output: its last `error:`/`ERROR`/exception line, else its last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    marked = [line for line in lines if line.startswith(("error:", "ERROR", "E  ")) or "Error:" in line]
    return (marked or lines or ["no output"])[-1][:300]


def run_command(command: list[str], timeout: float, log: Path, env: dict | None = None) -> tuple[int | None, str]:
    """Run `command` in the project root, its output into `log`: (exit code, None when killed at `timeout`; output)."""
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
        code = wait(process, timeout)
    return code, log.read_text(errors="replace")


def wait(process: subprocess.Popen, timeout: float) -> int | None:
    """The process's exit code, or None after killing it at `timeout` seconds."""
    try:
        return process.wait(timeout=max(timeout, 0))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def child_env(device: str, work: Path | None = None) -> dict:
    """The environment of every subprocess: offline, no GPU visible on a CPU run, and PyTorch's compile caches in the
    work folder (fresh for each check, so that the first compile is a cold one and a second process finds it)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    if work is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(compile_cache(work) / "inductor")
        env["TRITON_CACHE_DIR"] = str(compile_cache(work) / "triton")
    return env


def compile_cache(work: Path) -> Path:
    return work / "compile-cache"


def timed(part: Part, clock: Clock, key: str, run) -> None:
    """Run `run(limit)` for `part` if time is left (else mark it skipped), recording its seconds and any error."""
    limit = clock.limit(key)
    if limit < MIN_S:
        part.fail(SKIPPED, f"out of time: less than {MIN_S} s of the budget left")
        return
    started = time.monotonic()
    try:
        run(limit)
    except TimeoutError as exc:
        part.fail(TIMED_OUT, str(exc))
    except Exception as exc:  # noqa: BLE001  (a part's failure is reported, the rest still run)
        part.fail(FAILED, f"{type(exc).__name__}: {exc}".splitlines()[0][:300])
    part.seconds = time.monotonic() - started


def worker(args, name: str, limit: float, work: Path, *extra: str) -> dict:
    """Run the job `name` of bench/_gpu_workers.py in a subprocess: its figures; TimeoutError, or RuntimeError with
    the output's one line."""
    command = [sys.executable, str(Path(__file__).resolve().parent / "_gpu_workers.py"), name, "--folder",
               str(work / "model"), "--device", args.device, "--shape", args.shape, *map(str, extra)]
    code, output = run_command(command, limit, work / f"{name}.log", child_env(args.device, work))
    if code is None:
        raise TimeoutError(f"ran past its {limit:.0f} s limit")
    found = [line[len(RESULT):] for line in output.splitlines() if line.startswith(RESULT)]
    if code != 0 or not found:
        raise RuntimeError(last_line(output))
    return json.loads(found[-1])


# ---- the parts ---------------------------------------------------------------------------------------------------

def start_tests(args, work: Path) -> tuple[subprocess.Popen, float]:
    """Part 1 started in the background (pytest, its report as JUnit XML): the process and when it started."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={work / 'tests.xml'}",
               *args.tests.split(",")]
    with open(work / "tests.log", "wb") as log:
        return subprocess.Popen(command, cwd=ROOT, env=child_env(args.device), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL), time.monotonic()


def finish_tests(part: Part, started: tuple[subprocess.Popen, float], clock: Clock, work: Path) -> None:
    """Part 1's outcome: its counts and failures from the JUnit XML (the output's last line when there is none)."""
    process, since = started
    code = wait(process, min(since + LIMITS["tests"], clock.deadline) - time.monotonic())
    part.seconds = time.monotonic() - since
    output = (work / "tests.log").read_text(errors="replace")
    if code is None:
        part.fail(TIMED_OUT, f"ran past its limit ({LIMITS['tests']} s or the budget)")
        return
    report = work / "tests.xml"
    if not report.is_file() or code not in (0, 1):
        part.fail(FAILED, f"pytest exited {code}: {last_line(output)}")
        return
    counts, failures = junit_counts(report)
    part.data = {**counts, "failures": failures}
    part.status = OK if code == 0 else FAILED
    part.result = ", ".join(f"{n} {what}" for what, n in counts.items()) + (
        f"; first failure: {failures[0]}" if failures else "")


def junit_counts(report: Path) -> tuple[dict[str, int], list[str]]:
    """({passed, failed, errors, skipped}, each failure's one line) from pytest's JUnit XML."""
    failures, counts = [], {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        outcome = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
        kind = {"failure": "failed", "error": "errors", "skipped": "skipped"}.get(getattr(outcome, "tag", ""),
                                                                                   "passed")
        counts[kind] += 1
        if kind in ("failed", "errors"):
            message = (outcome.get("message") or outcome.text or "").strip().splitlines() or ["(no message)"]
            failures.append(f"{case.get('classname', '')}::{case.get('name', '')}: {message[0][:200]}")
    return counts, failures


def build(part: Part, args, clock: Clock, work: Path) -> None:
    """The model every later part loads, built and saved by a worker."""
    def run(limit: float) -> None:
        part.data = worker(args, "build", limit, work)
        part.status = OK
        part.result = (f"LLaVA, {args.shape} shape: {part.data['params'] / 1e9:.2f} B parameters, "
                       f"{part.data['bytes'] / 1e9:.1f} GB saved; {part.data['machine']}")
    timed(part, clock, "build", run)


def scoring(part: Part, args, clock: Clock, work: Path) -> None:
    """Part 2: many questions batched against one at a time, the floor, and the choices' agreement."""
    def run(limit: float) -> None:
        figures = worker(args, "scoring", limit, work, "--questions", args.questions, "--repeats", args.repeats)
        part.data, part.status = figures, OK
        q, b, s, f = figures["questions"], figures["batched_s"], figures["single_s"], figures["floor_s"]
        part.result = (f"{q} questions x 6 options: batched {b * 1000:.0f} ms, one at a time {s * 1000:.0f} ms "
                       f"({s / b:.1f}x), floor {f * 1000:.0f} ms ({b / f:.2f}x the floor); the same choice in "
                       f"{figures['agree']} of {q} ({100 * figures['agree'] / q:.0f} %)")
    timed(part, clock, "scoring", run)


def generation(part: Part, args, clock: Clock, work: Path) -> None:
    """Part 3: the same requests at each batch size, on the dynamic KV cache and on the static one (compiled on
    CUDA), and on CUDA a second process's compile warm-up."""
    def run(limit: float) -> None:
        figures = worker(args, "generation", limit, work, "--requests", args.requests, "--new-tokens",
                         args.new_tokens, "--batches", args.batches)
        part.data, part.status = figures, OK
        part.result = generation_text(figures)
    timed(part, clock, "generation", run)
    if part.status != OK or args.device != "cuda":
        return
    second = Part("warm_up", "second process")
    timed(second, clock, "warm_up", lambda limit: second.data.update(worker(
        args, "warm_up", limit, work, "--requests", args.requests, "--new-tokens", args.new_tokens, "--batches",
        args.batches)))
    part.data["second_process"] = second.data if not second.result else {"error": second.result}
    part.result += (f"; a second process's warm-up {second.data['warm_up_s']:.1f} s" if not second.result
                    else f"; the second process: {second.status}: {second.result}")


def generation_text(figures: dict) -> str:
    """Part 3's result: each path's seconds and ms per decode step per batch size, its warm-up, the floor and how
    many answers agree."""
    def path_text(timings: dict) -> str:
        cells = ", ".join(f"batch {b} {s:.2f} s ({timings['ms_per_step'][b]:.1f} ms/step)"
                          for b, s in timings["seconds"].items())
        fell = f", fell back: {timings['fallback']}" if timings.get("fallback") else ""
        return (f"{timings['path']}: {cells}; warm-up {timings['warm_up_s']:.1f} s"
                + (f" ({timings['shapes']} shapes)" if timings.get("shapes") else "") + fell)

    agree = ", ".join(f"batch {b} {n} of {figures['asked'][b]}" for b, n in figures["agree"].items())
    return (f"{figures['requests']} requests x {figures['new_tokens']} new tokens ({figures['dtype']}; batch 1 "
            f"answers the first {min(figures['asked'].values())}): {path_text(figures['dynamic'])}; "
            f"{path_text(figures['static'])}; the floor {figures['floor_ms']:.1f} ms/step "
            f"({figures['weight_bytes'] / 1e9:.2f} GB of weights at {figures['bandwidth'] / 1e9:.0f} GB/s); the same "
            f"answers on both paths: {agree}")


def suites(part: Part, args, clock: Clock, work: Path) -> None:
    """Part 4: each sample suite timed by phase (a CLI run, or a judged benchmark's answering in a worker)."""
    runs = {}
    for name in CLI_RUNS + ANSWER_RUNS:
        run = Part(name, name)
        timed(run, clock, name, lambda limit, n=name, r=run: suite_run(r, n, args, limit, work))
        runs[name] = run
        say(f"  {name}: {run.status}" + (f", {run.seconds:.0f} s" if not math.isnan(run.seconds) else "")
            + (f": {run.result}" if run.status != OK else ""))
    part.data = runs
    failed = [run for run in runs.values() if run.status != OK]
    part.status = OK if not failed else FAILED
    part.seconds = sum(run.seconds for run in runs.values() if not math.isnan(run.seconds))
    part.result = "; ".join(
        f"{run.key} {run.data['items']} items in {run.data['total']:.1f} s ({run.data.get('path')}"
        + (f", warm-up {run.data['compile_s']:.1f} s for {run.data['shapes']} shapes" if run.data.get("shapes")
           else "") + vision_passes(run.data.get("images") or {}) + ")" if run.status == OK
        else f"{run.key} {run.status}: {run.result}" for run in runs.values())


def vision_passes(images: dict) -> str:
    """How many vision passes a suite saved (each image encoded once), for its summary."""
    if not images.get("cached") or not (images.get("encoded") or images.get("reused")):
        return ""
    return f", {images['encoded']} images encoded, {images['reused']} vision passes saved"


def suite_run(run: Part, name: str, args, limit: float, work: Path) -> None:
    """One benchmark's sample suite: its phases in seconds and its item count in run.data."""
    if name in ANSWER_RUNS:
        figures = worker(args, "answer", limit, work, "--benchmark", name, "--limit", args.limit)
        run.data = {"how": "answering only", **figures}
    else:
        run.data = {"how": "CLI run", **cli_phases(name, args, limit, work)}
    run.status = OK


def cli_phases(name: str, args, limit: float, work: Path) -> dict:
    """A CLI run of one benchmark's sample suite, and its phases from results.json."""
    out = work / f"run-{name}"
    try:
        results, _ = sample_suites.evaluate(work / "model", (name,), args.limit, out, "", args.device, limit,
                                            compile_cache(work))
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"ran past its {limit:.0f} s limit") from None
    except RuntimeError:
        raise RuntimeError(last_line((out / "worker.log").read_text(errors="replace"))) from None
    run, calls = results["run"], results["run"]["call_time_s"][name]
    cache = run.get("generation_cache") or {}
    return {"items": run["item_counts"][name], "total": run["wall_time_s"], "load_s": run["load_time_s"],
            "generation_s": calls["generation"],
            "option_scoring_s": calls["option_scoring"], "answer_s": results["benchmarks"][name]["wall_time_s"],
            "path": run.get("generation_path"), "compile_s": cache.get("compile_time_s", 0.0),
            "shapes": cache.get("compiled_shapes", 0), "images": run.get("image_features") or {}}


# ---- the per-call costs the plan reads (evaluator/plans/measured.json) ------------------------------------------

# a GPU's name as torch gives it (words of it, in this order) -> its family in evaluator.plans.costs
GPU_NAMES = (("rtx pro 6000", "rtx-pro-6000"), ("h200", "h200"), ("h100", "h100"), ("a100", "a100"),
             ("l40s", "l40s"), ("a10g", "a10g"), ("l4", "l4"), ("t4", "t4"))
MODELS = {"7b": "a LLaVA-1.5-7B-shaped model", "bench": "a LLaVA of the bench shape", "tiny": "the tests' tiny LLaVA"}


def gpu_family(device_name: str) -> str:
    """The family of a GPU named as torch names it ("NVIDIA H100 80GB HBM3" -> "h100", "Tesla T4" -> "t4"); a name
    of no known family: the name itself, lower-cased, each run of other characters a hyphen."""
    words = " ".join(re.findall(r"[a-z0-9]+", device_name.lower()))
    for name, family in GPU_NAMES:
        if re.search(rf"(^| ){name}( |$)", words):
            return family
    return words.replace(" ", "-")


def image_tokens(shape: str) -> int:
    """One image's tokens in the prompt of a LLaVA of `shape` ((image / patch) squared, the CLS token dropped)."""
    (_, _, _, _, size, patch) = _models.SHAPES[shape][1]
    return (size // patch) ** 2


def sample_workload(name: str, limit: int):
    """What the sample suite of `name` asks at --limit, counted as the plan counts it (for a judged benchmark with
    the full suite's default options, as the answer job runs it)."""
    from _gpu_workers import full_suite_options
    from evaluator.benchmarks import get_benchmark
    from evaluator.benchmarks.spec import PlanContext

    return get_benchmark(name).workload(PlanContext(suite="sample", limit=limit, options=full_suite_options(name)))


def figure(value: float, digits: int = 4) -> float:
    return float(f"{value:.{digits}g}")


def costs_record(build: dict, cure: dict, simpleqa: dict, cure_work, simpleqa_work, tokens: float, today: str,
                 by: str) -> dict:
    """A record of measured.json from this check's own measurements: `build` (the build job's figures: params and,
    on CUDA, device_name and memory_gib; else machine), `cure` (the CURE sample's CLI phases: items, load_s,
    option_scoring_s), `simpleqa` (its answering: items, generation_s, compile_s, batch_size, path, dtype), each
    sample's counted workload and one image's tokens. request_s: the option-scoring phase over its requests;
    prompt_tokens: their mean prompt (text, as the plan counts it, + images); step_s: the generation phase, its compile
    warm-up taken out, over its decode steps (each batch of up to batch_size generations runs its budget's steps);
    load_s: the CURE run's loading. ValueError in one line where the counts do not fit the runs."""
    for name, run, work in (("cure", cure, cure_work), ("simpleqa", simpleqa, simpleqa_work)):
        if run["items"] != work.items:
            raise ValueError(f"the {name} run answered {run['items']} items, its counted workload has {work.items}")
    scorings = cure_work.total("scorings")
    if scorings <= 0:
        raise ValueError("the CURE sample counts no option-scoring request")
    requests = sum(p.items * (p.generations + p.scorings) for p in cure_work.parts)
    prompt = sum(p.items * (p.generations + p.scorings) * (p.prompt_tokens + p.images * tokens)
                 for p in cure_work.parts) / requests
    images = sum(p.items * p.scorings * p.images for p in cure_work.parts) / scorings
    batch = int(simpleqa["batch_size"])
    generations = simpleqa_work.total("generations")
    batches = sum(math.ceil(round(p.items * p.generations) / batch) for p in simpleqa_work.parts if p.generations)
    steps = sum(math.ceil(round(p.items * p.generations) / batch) * p.new_tokens for p in simpleqa_work.parts
                if p.generations)
    if steps <= 0:
        raise ValueError("the SimpleQA sample counts no decode step")
    decoding = simpleqa["generation_s"] - simpleqa.get("compile_s", 0.0)
    params = build["params"] / 1e9
    if build.get("device_name"):
        hardware, gpu = f"one {build['device_name']} ({build['memory_gib']:.0f} GiB)", gpu_family(build["device_name"])
    else:
        hardware, gpu = build["machine"], ""
    warm = (f" ({simpleqa['generation_s']:.1f} s of generation calls less a {simpleqa['compile_s']:.1f} s compile "
            "warm-up)" if simpleqa.get("compile_s") else "")
    pictures = "one image" if images == 1 else f"{images:g} images on average"
    return {
        "hardware": hardware, "gpu": gpu, "params_billions": figure(params), "dtype": simpleqa["dtype"],
        "batch_size": batch, "generation_path": simpleqa["path"], "measured": today, "by": by,
        "request_s": figure(cure["option_scoring_s"] / scorings),
        "request_basis": (f"CURE sample through the CLI: {counted(scorings, 'option-scoring request')} "
                          f"({counted(cure['items'], 'item')}), each with {pictures} ({tokens:g} image tokens), in "
                          f"{cure['option_scoring_s']:.2f} s"),
        "prompt_tokens": figure(prompt, 3),
        "step_s": figure(decoding / steps),
        "step_basis": (f"SimpleQA sample, answered in a worker: {counted(steps, 'decode step')} "
                       f"({counted(batches, 'batch', 'batches')} of up to {batch} of its "
                       f"{counted(generations, 'text request')}, each batch its budget's {steps / batches:.0f} new "
                       f"tokens) in {decoding:.2f} s{warm}; their prompts' prefill included"),
        "load_s": figure(cure["load_s"], 3),
        "load_basis": f"loading the {params:.3g} B model from local disk in the CURE sample's CLI run"}


def counted(number: float, one: str, many: str = "") -> str:
    """"1 item", "77 option-scoring requests"."""
    return f"{number:,.0f} {one if round(number) == 1 else many or one + 's'}"


def record_text(record: dict) -> str:
    """The record's figures in one line, for the summary."""
    return (f"{record['request_s'] * 1000:.4g} ms a request ({record['prompt_tokens']:g} prompt tokens), "
            f"{record['step_s'] * 1000:.4g} ms a decode step (batch {record['batch_size']}, "
            f"{record['generation_path']}), loading {record['load_s']:g} s; {record['params_billions']:g} B "
            f"parameters, {record['dtype']}, {record['hardware']}")


def costs(part: Part, parts: dict[str, Part], args) -> None:
    """Part 6: the record of measured.json this check measured (CURE's option scoring, SimpleQA's generation, the
    loading), printed, and with --write-costs merged into that file under its GPU family ("cpu" on the CPU)."""
    runs = parts["suites"].data or {}
    missing = [name for name in ("cure", "simpleqa") if name not in runs or runs[name].status != OK]
    if parts["build"].status != OK or missing:
        why = "the model was not built" if parts["build"].status != OK else f"{' and '.join(missing)} did not run"
        part.fail(FAILED if args.write_costs else SKIPPED, f"not measured: {why}")
        return
    from evaluator.plans.costs import CPU, record_problem, write_record

    try:
        record = costs_record(parts["build"].data, runs["cure"].data, runs["simpleqa"].data,
                              sample_workload("cure", args.limit), sample_workload("simpleqa", args.limit),
                              image_tokens(args.shape), datetime.date.today().isoformat(),
                              f"bench/gpu_check.py --shape {args.shape} on {MODELS[args.shape]}, random weights")
        problem = record_problem(record)
        if problem:
            raise ValueError(problem)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        part.fail(FAILED, f"refused: {exc}".splitlines()[0][:300])
        return
    key = record["gpu"] or CPU
    part.data = {"key": key, "record": record}
    part.status, part.result = OK, f"{key!r}: {record_text(record)}; "
    if not args.write_costs:
        part.result += "printed below (--write-costs PATH writes it)"
        return
    try:
        write_record(Path(args.write_costs), key, record)
    except (OSError, ValueError) as exc:
        part.fail(FAILED, f"not written: {exc}".splitlines()[0][:300])
        return
    part.result += f"written to {args.write_costs}"


def costs_target_problem(path: str) -> str | None:
    """Why --write-costs PATH cannot take a record (said before the check runs, not after it): a file that is not
    of measured.json's shape, or a folder that does not exist."""
    target = Path(path)
    if not target.exists():
        return None if target.parent.is_dir() else f"--write-costs {path}: the folder {target.parent} does not exist"
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"--write-costs {path}: cannot be read as measured.json ({exc})"
    if not isinstance(data, dict) or not isinstance(data.get("records"), dict):
        return f"--write-costs {path}: not of measured.json's shape (no \"records\" object)"
    return None


# ---- the report --------------------------------------------------------------------------------------------------

def phase_rows(runs: dict[str, Part]) -> list[tuple[str, ...]]:
    """Part 4's table: per benchmark, each phase's seconds, per item and share."""
    rows = []
    for run in runs.values():
        if run.status != OK:
            rows.append((run.key, run.status, *[""] * 7))  # its reason is in the summary
            continue
        d = run.data
        other = d["total"] - d["load_s"] - d["generation_s"] - d["option_scoring_s"]
        cells = [phase(seconds, d["items"], d["total"]) for seconds in
                 (d["load_s"], d["generation_s"], d["option_scoring_s"], other)]
        rows.append((run.key, d["how"], str(d["items"]), f"{d['total']:.1f}", *cells,
                     f"{d['answer_s'] / d['items']:.3f}"))
    return rows


def phase(seconds: float, items: int, total: float) -> str:
    return f"{seconds:.1f} s, {1000 * seconds / items:.0f} ms/item, {100 * seconds / total:.0f} %"


def projection_rows(runs: dict[str, Part] | None) -> list[tuple[str, ...]]:
    """Part 5's table: per registered benchmark, its full suite's items and the projected time."""
    from evaluator.benchmarks import cards

    rows = []
    for card in cards():
        run = (runs or {}).get(card.name)
        count = f"{card.full_suite_items:,}" if card.full_suite_items else "not known"
        if run is None or run.status != OK:
            why = "part 4 did not run" if run is None else f"{run.status}"
            rows.append((card.name, count, "", f"not measured ({why})"))
            continue
        per_item = run.data["answer_s"] / run.data["items"]
        if card.full_suite_items:
            projected = f"{duration(per_item * card.full_suite_items)} + loading {run.data['load_s']:.0f} s"
        else:
            projected = f"{duration(per_item * 1000)} per 1,000 items"
        if card.name in ANSWER_RUNS:
            projected += " (answering only; judge not included)"
        rows.append((card.name, count, f"{per_item:.3f}", projected))
    return rows


def duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else (f"{seconds / 60:.1f} min" if seconds < 7200
                                                     else f"{seconds / 3600:.1f} h")


def targets(figures: dict, shape: str, device: str) -> str:
    """Part 2 against its targets (set for the 7B shape on one H100)."""
    agreement = figures["agree"] / figures["questions"]
    over = figures["batched_s"] / figures["floor_s"]
    checks = [(f"batched under {TARGETS['batched_s']} s", f"{figures['batched_s']:.2f} s",
               figures["batched_s"] < TARGETS["batched_s"]),
              (f"within {TARGETS['over_floor']}x the floor", f"{over:.2f}x", over <= TARGETS["over_floor"]),
              (f"the same choice in >= {TARGETS['agreement']:.0%}", f"{agreement:.0%}",
               agreement >= TARGETS["agreement"])]
    note = "" if (shape, device) == ("7b", "cuda") else " (set for the 7b shape on one H100: for reference only)"
    return "part 2 targets" + note + ": " + "; ".join(f"{what}: {value}, {'met' if ok else 'missed'}"
                                                       for what, value, ok in checks)


def generation_targets(figures: dict, runs: dict, shape: str, device: str) -> str:
    """Part 3 against its targets (set for the 7B shape on one H100 or H200), on the path the evaluator takes."""
    static = {key: ({int(b): v for b, v in value.items()} if isinstance(value, dict) else value)
              for key, value in figures["static"].items()}  # batch sizes come back from JSON as text
    checks = []
    if 1 in static["ms_per_step"]:
        over = static["ms_per_step"][1] / figures["floor_ms"]
        checks.append((f"a decode step at batch 1 within {GENERATION_TARGETS['step_over_floor']}x the floor",
                       f"{over:.2f}x", over <= GENERATION_TARGETS["step_over_floor"]))
    if 64 in static["seconds"]:
        checks.append((f"64 x 32 new tokens at batch 64 in at most {GENERATION_TARGETS['batch_64_s']} s",
                       f"{static['seconds'][64]:.2f} s", static["seconds"][64] <= GENERATION_TARGETS["batch_64_s"]))
    warm = [run.data["compile_s"] for run in runs.values() if run.status == OK and "compile_s" in run.data]
    if warm:
        checks.append((f"a sample suite's warm-up at most {GENERATION_TARGETS['suite_warm_up_s']:.0f} s",
                       f"{max(warm):.1f} s", max(warm) <= GENERATION_TARGETS["suite_warm_up_s"]))
    second = figures.get("second_process") or {}
    if "warm_up_s" in second:
        checks.append(("less in a second process", f"{second['warm_up_s']:.1f} s against {static['warm_up_s']:.1f} s",
                       second["warm_up_s"] < static["warm_up_s"]))
    note = "" if (shape, device) == ("7b", "cuda") else " (set for the 7b shape on a GPU: for reference only)"
    return f"part 3 targets ({static['path']}){note}: " + "; ".join(
        f"{what}: {value}, {'met' if ok else 'missed'}" for what, value, ok in checks)


def batch_effect(scoring: Part, generation: Part) -> str:
    """What the batch size does to the numbers, from parts 2 and 3: how far log-probabilities moved between batch 1
    and the largest batch, and how many requests could change their first token by it."""
    found = []
    if generation.status == OK and "drift" in generation.data:
        d, g = generation.data["drift"], generation.data
        found.append(f"at the first generated position ({g.get('dtype', '?')}) log-probabilities moved by up to "
                     f"{d['drift']:.2e} between batch 1 and batch {max(int(b) for b in g['asked'])} (over each "
                     f"request's 20 most likely tokens); {d['could_flip']} of {d['requests']} requests have their two "
                     f"most likely tokens closer than that (the smallest gap {d['min_gap']:.2e}), and only those can "
                     f"change their first token with the batch; the most likely token was the same in "
                     f"{d['same_top']} of {d['requests']}")
    if scoring.status == OK and "worst" in scoring.data:
        found.append(f"option scores moved by up to {scoring.data['worst']:.2e} (summed log-likelihood, "
                     f"{scoring.data['questions']} questions batched against one at a time)")
    return "batch size and the numbers: " + ("; ".join(found) if found else "not measured (parts 2 and 3 did "
                                                                            "not run)")


def report(parts: dict[str, Part], args) -> str:
    """The summary, part 4's phases and part 5's projection, as printed at the end."""
    summary = aligned(("part", "status", "time (s)", "result"),
                      [(p.title, p.status, "" if math.isnan(p.seconds) else f"{p.seconds:.1f}", p.result)
                       for p in parts.values()], right=(2,))
    lines = [f"summary (--shape {args.shape} --device {args.device})", summary]
    failures = parts["tests"].data.get("failures", [])
    lines += [f"part 1 failure: {line}" for line in failures[:10]]
    if parts["scoring"].status == OK:
        lines.append(targets(parts["scoring"].data, args.shape, args.device))
    if parts["generation"].status == OK:
        lines.append(generation_targets(parts["generation"].data, parts["suites"].data or {}, args.shape,
                                        args.device))
    lines.append(batch_effect(parts["scoring"], parts["generation"]))
    runs = parts["suites"].data or None
    if runs:
        lines += ["", "sample suites by phase (seconds, per item, share of the run)", aligned(
            ("benchmark", "how", "items", "total (s)", "loading", "generation calls", "option-scoring calls",
             "everything else", "s/item"), phase_rows(runs), right=range(2, 9)),
            "CLI run: run.wall_time_s of `python -m evaluator run`, loading = run.load_time_s, the calls = "
            "run.call_time_s; answering only: loading, plan and the model's calls in a worker, no grading; s/item: "
            "the benchmark's time without loading, per item."]
    lines += ["", "projection (a full suite on this machine: s/item above x the full suite's items, plus loading "
              "once)", aligned(("benchmark", "full suite items", "s/item", "projected"), projection_rows(runs),
                               right=(1, 2)),
              "SimpleQA's and LAVE's judge time is not included. Random weights never stop early: every answer runs "
              "to its max_new_tokens, so generation is at its budget's upper bound. Where each count comes from "
              "(Card.full_suite_note):"]
    from evaluator.benchmarks import cards

    lines += [f"  {card.name}: {card.full_suite_note}" for card in cards()]
    if parts["costs"].status == OK:
        found = parts["costs"].data
        where = (f"written to {args.write_costs}; copy that file over evaluator/plans/measured.json to bring it home"
                 if args.write_costs else "not written: --write-costs PATH merges it into a copy of measured.json")
        lines += ["", f"per-call costs record {found['key']!r} for evaluator/plans/measured.json ({where}):",
                  json.dumps(found["record"], indent=2, ensure_ascii=False)]
    return "\n".join(lines)


# ---- the command -------------------------------------------------------------------------------------------------

def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=tuple(_models.SHAPES), default="7b")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)} "
                        "(the projection follows the suites)")
    parser.add_argument("--tests", default=",".join(TESTS), help="part 1's pytest targets, comma-separated")
    parser.add_argument("--questions", type=int, help="part 2's questions")
    parser.add_argument("--repeats", type=int, help="part 2's timed repetitions (medians)")
    parser.add_argument("--requests", type=int, help="part 3's requests")
    parser.add_argument("--new-tokens", type=int, default=32, help="part 3's new tokens per request")
    parser.add_argument("--batches", help="part 3's batch sizes, comma-separated")
    parser.add_argument("--limit", type=int, help="part 4's items per benchmark (per dimension for ReForm-Eval; 0: "
                        "the whole sample suite)")
    parser.add_argument("--budget-s", type=float, default=540.0, help="the whole check's time, every part in it")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (model, runs, logs)")
    parser.add_argument("--write-costs", metavar="PATH", help="merge the per-call costs record this check measures "
                        "into PATH (measured.json's shape; a missing file starts as a copy of "
                        "evaluator/plans/measured.json), under its GPU family, keeping the other records")
    args = parser.parse_args(argv)
    if args.write_costs and "suites" not in args.parts.split(","):
        parser.error("--write-costs needs part 4 (suites): its CURE and SimpleQA runs are what the record measures")
    for name, value in DEFAULTS[args.device].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def device_problem(device: str) -> str | None:
    """Why --device cannot be used here (evaluator.models.devices' own line), or None."""
    from evaluator.models.base import DeviceUnavailable
    from evaluator.models.devices import resolve_device

    try:
        resolve_device(device)
    except DeviceUnavailable as exc:
        return f"{exc} (without a GPU: --shape bench --device cpu)"
    return None


def check(args, work: Path) -> dict[str, Part]:
    """Every part asked for, in order, each within its limit and the budget."""
    clock = Clock(time.monotonic() + args.budget_s)
    asked = set(args.parts.split(","))
    parts = {key: Part(key, title) for key, title in (
        ("build", "build the model"), ("tests", "1 tests"), ("scoring", "2 option scoring"),
        ("generation", "3 generation"), ("suites", "4 sample suites"), ("projection", "5 projection"),
        ("costs", "6 costs record"))}
    tests = start_tests(args, work) if "tests" in asked else None
    say(f"work folder {work}; building the {args.shape}-shaped model" + (", part 1 running" if tests else ""))
    build(parts["build"], args, clock, work)
    say(f"build: {parts['build'].status}: {parts['build'].result}")
    if tests:
        finish_tests(parts["tests"], tests, clock, work)
        say(f"part 1: {parts['tests'].status}: {parts['tests'].result}")
    for key, step in (("scoring", scoring), ("generation", generation), ("suites", suites)):
        if key not in asked:
            continue
        if parts["build"].status != OK:
            parts[key].fail(SKIPPED, "the model was not built")
            continue
        step(parts[key], args, clock, work)
        say(f"part {parts[key].title}: {parts[key].status}: {parts[key].result}")
    if "suites" in asked:
        parts["projection"].status = OK
        parts["projection"].result = "the projection table below"
        costs(parts["costs"], parts, args)
        say(f"part {parts['costs'].title}: {parts['costs'].status}: {parts['costs'].result}")
    return parts


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    problem = device_problem(args.device) or (costs_target_problem(args.write_costs) if args.write_costs else None)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    try:
        parts = check(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(report(parts, args))
    print(f"\nbench/gpu_check.py ran for {time.monotonic() - started:.0f} s.")
    return 0 if all(p.status in (OK, NOT_ASKED) for p in parts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
