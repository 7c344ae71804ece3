"""How long the sample suites take on a CPU, and what a quick trial with LEADERBOARD_LIMIT costs.

What it measures: two random-weight models with the sizes of two small real models, typed in from their public
config.json below (the weights cannot be downloaded here): text, HuggingFaceTB/SmolLM2-135M-Instruct (Llama, 30
layers of 576, vocab 49,152); vision, HuggingFaceTB/SmolVLM-256M-Instruct (Idefics3: a 12-layer SigLIP-style tower
at 512 px, pixel shuffle by 4, a SmolLM2-135M-shaped text model). Each is evaluated by the real evaluator in a
subprocess as the Space's worker runs it (`python -m evaluator run --suite sample ... --batch-size auto`):

1. one run of all four benchmarks with `--limit 2` (what `LEADERBOARD_LIMIT=2` does): the "quick trial" figure
   (run.wall_time_s) and each benchmark's wall_time_s in it (reform: 2 items per dimension, 16 items);
2. one run per benchmark on the full sample suite: its `wall_time_s`. A benchmark estimated over
   --max-full-seconds runs on fewer items (`--limit N`), its time extrapolated per item ("~" in the table).

The text model skips cure, reform and lave (they need images). The judge: with --judge local (the default) the
quick trials are graded by a local judge, the SmolLM2-135M-shaped model itself (`local:<its folder>`, as the README's
quick trial suggests a small local judge), so their figures include grading's time (the trial's "grading" column:
SimpleQA's and LAVE's scoring time); the full-sample runs, and everything with --judge scripted, are graded by a
scripted judge on 127.0.0.1 (tests.judge_servers) that answers at once: those figures are the model's time.

What the figures are not: a real model's time. Random weights almost never emit end-of-sequence, so every answer
runs to its max_new_tokens (the card defaults, printed with the figures: simpleqa 256, 96 for stated confidence, 7
generations per item); a real model's answers differ, and a loaded machine is slower: a real SmolLM2-135M-Instruct
took 11.5 minutes at LEADERBOARD_LIMIT=2 on a loaded machine (3:45 CPU-minutes). The tokenizer is the tests' tiny
byte-level BPE padded to the real vocabulary size (so the LM head costs what it does): it makes prompts longer than
the real tokenizer. Images stay unsplit at 512 px (64 tokens); the real SmolVLM processor splits large images into
up to 17 x 64 tokens. The "cores" column (CPU s / wall s, about 2 with both cores free) shows which runs shared the
CPU with other processes; rerun those with --models/--benchmarks when the machine is quiet.

Run: `HF_HUB_OFFLINE=1 .venv/bin/python bench/sample_suites.py [--models text,vision] [--benchmarks cure,...]
[--max-full-seconds 900] [--trial-only] [--keep]` (about 45 minutes with both cores free: 10 text, 35 vision;
--trial-only: the LEADERBOARD_LIMIT=2 figures alone, about 12), always with --device cpu. Its smoke form (the tests'
tiny models, a tiny local judge: `--models tiny-vision --trial-only`, all four benchmarks) runs in the test suite.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root, HF_HUB_OFFLINE and TOKENIZERS_PARALLELISM)

ROOT = _models.ROOT
BENCHMARKS = ("cure", "simpleqa", "reform", "lave")
TRIAL_LIMIT = 2

# Typed in from HuggingFaceTB/SmolLM2-135M-Instruct/config.json (LlamaForCausalLM).
SMOLLM2_135M = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, vocab_size=49152, max_position_embeddings=8192, rope_theta=100000.0,
                    rms_norm_eps=1e-5, hidden_act="silu", tie_word_embeddings=True)

# Typed in from HuggingFaceTB/SmolVLM-256M-Instruct/config.json (Idefics3ForConditionalGeneration, model_type
# idefics3): the text model is SmolLM2-135M's shape with the vocabulary grown to 49,280 and untied embeddings.
SMOLVLM_256M_TEXT = dict(SMOLLM2_135M, vocab_size=49280, tie_word_embeddings=False)
SMOLVLM_256M_VISION = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                           image_size=512, patch_size=16, layer_norm_eps=1e-6)
SMOLVLM_256M = dict(scale_factor=4, image_seq_len=64, tie_word_embeddings=False)  # (512/16)^2 / 4^2 = 64 tokens


@dataclass
class Shape:
    """One model shape to measure: how to build it and what it runs."""

    key: str
    label: str  # in the table
    build: object  # (folder: Path) -> Path
    benchmarks: tuple[str, ...]
    params: int = 0  # counted once the model is built


@dataclass
class Figure:
    """One benchmark's figures on one model shape."""

    shape: str
    benchmark: str
    items: int
    requests: int
    measured_limit: int = 0  # 0: the full sample suite ran; else the items that ran (time extrapolated)
    wall_s: float = math.nan  # the benchmark's wall_time_s on the full sample suite (extrapolated if limited)
    run_s: float = math.nan  # that run's run.wall_time_s (model loading included; extrapolated if limited)
    cores_used: float = math.nan  # CPU s / wall s of the full (or limited) run: ~2 when it had both cores
    trial_items: int = 0  # items the --limit 2 run answered (reform's limit is per dimension: 8 x 2)
    trial_s: float = math.nan  # the benchmark's wall_time_s in the --limit 2 run

    @property
    def per_item_s(self) -> float:
        return self.wall_s / self.items if self.items else math.nan


# ---- models ---------------------------------------------------------------------------------------------------

def _padded_tokenizer(extra_special: list[str], vocab_size: int):
    """The tests' tiny BPE, padded with plain added tokens to `vocab_size` (random outputs then decode to text)."""
    from tests.tiny_models import _tokenizer

    tokenizer = _tokenizer(extra_special)
    tokenizer.add_tokens([f"<w{i}>" for i in range(vocab_size - len(tokenizer))])
    return tokenizer


def build_smollm2_135m(folder: Path) -> Path:
    """A random-weight Llama with SmolLM2-135M-Instruct's sizes, with the tests' tokenizer and chat template."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.tiny_models import _save, _token_ids

    tokenizer = _padded_tokenizer([], SMOLLM2_135M["vocab_size"])
    config = LlamaConfig(**SMOLLM2_135M, **_token_ids(tokenizer))
    return _save(folder, LlamaForCausalLM, config, tokenizer)


def build_smolvlm_256m(folder: Path) -> Path:
    """A random-weight Idefics3 with SmolVLM-256M-Instruct's sizes; the processor keeps 512 px images unsplit."""
    import transformers as tf

    from tests.tiny_models import CHAT_TEMPLATE, IDEFICS3_TOKENS, _save, _token_ids

    tokenizer = _padded_tokenizer(IDEFICS3_TOKENS, SMOLVLM_256M_TEXT["vocab_size"])
    edge = {"longest_edge": SMOLVLM_256M_VISION["image_size"]}
    image_processor = tf.Idefics3ImageProcessor(do_image_splitting=False, size=edge, max_image_size=edge)
    processor = tf.Idefics3Processor(image_processor=image_processor, tokenizer=tokenizer,
                                     image_seq_len=SMOLVLM_256M["image_seq_len"], chat_template=CHAT_TEMPLATE)
    text = tf.LlamaConfig(**SMOLVLM_256M_TEXT, **_token_ids(tokenizer))
    config = tf.Idefics3Config(vision_config=tf.Idefics3VisionConfig(**SMOLVLM_256M_VISION), text_config=text,
                               scale_factor=SMOLVLM_256M["scale_factor"],
                               tie_word_embeddings=SMOLVLM_256M["tie_word_embeddings"],
                               image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
                               pad_token_id=tokenizer.pad_token_id)
    return _save(folder, tf.Idefics3ForConditionalGeneration, config, processor)


def build_tiny_text(folder: Path) -> Path:
    """The tests' 2-layer Llama: the script's smoke form (seconds, not a size anyone runs)."""
    from tests.tiny_models import build_tiny_llama

    return build_tiny_llama(folder)


def build_tiny_vision(folder: Path) -> Path:
    """The tests' tiny Idefics3 (SmolVLM's family): the script's smoke form."""
    from tests.tiny_models import build_tiny_idefics3

    return build_tiny_idefics3(folder)


SHAPES = {
    "text": Shape("text", "SmolLM2-135M shape (text)", build_smollm2_135m, ("simpleqa",)),
    "vision": Shape("vision", "SmolVLM-256M shape (vision)", build_smolvlm_256m, BENCHMARKS),
    "tiny-text": Shape("tiny-text", "tiny Llama (smoke form)", build_tiny_text, ("simpleqa",)),
    "tiny-vision": Shape("tiny-vision", "tiny Idefics3 (smoke form)", build_tiny_vision, BENCHMARKS),
}


def judge_shape(models: list[str]) -> Shape:
    """The local judge of the quick trials: the SmolLM2-135M shape, or the tiny Llama when only tiny models run."""
    return SHAPES["tiny-text" if all(key.startswith("tiny-") for key in models) else "text"]


def parameter_count(folder: Path) -> int:
    from safetensors import safe_open

    total = 0
    for path in folder.glob("*.safetensors"):
        with safe_open(str(path), "pt") as f:
            total += sum(math.prod(f.get_slice(k).get_shape()) for k in f.keys())
    return total


def image_tokens(folder: Path) -> int:
    """Image tokens one picture becomes in a prompt (through the saved processor)."""
    from PIL import Image
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(folder)
    image_id = processor.tokenizer.convert_tokens_to_ids("<image>")
    ids = processor(text=["<image>What is it?"], images=[[Image.new("RGB", (640, 480))]])["input_ids"][0]
    return int(sum(int(i) == image_id for i in ids))


# ---- the sample suites and the evaluator ---------------------------------------------------------------------

def suite_size(benchmark: str, images_dir: Path) -> tuple[int, int]:
    """(items, model requests) of a benchmark's sample suite with default options, from its own plan."""
    from evaluator.benchmarks import get_benchmark
    from evaluator.benchmarks.spec import PlanContext

    plan = get_benchmark(benchmark).plan(PlanContext(suite="sample", limit=0, images_dir=images_dir))
    return len(plan.items), len(plan.asks)


def judge_reply(index: int, body: dict):
    """The scripted judge for both judged benchmarks: SimpleQA grades or LAVE ratings, by the prompt's form."""
    from tests import scripted_judges
    from tests.judge_servers import Reply

    prompt = body["messages"][-1]["content"]
    try:
        if "Candidate answer: '" in prompt:
            return scripted_judges.lave_ratings(index, body)
        return scripted_judges.simpleqa_grades(index, body)
    except (IndexError, KeyError):
        return Reply(content="Scripted.\nA")


@dataclass
class Process:
    """What one evaluator subprocess cost: wall and CPU seconds, and the 1-minute load average at its end."""
    wall_s: float
    cpu_s: float
    load: float

    @property
    def cores_used(self) -> float:  # about the torch threads (2) when the process had the cores to itself
        return self.cpu_s / self.wall_s if self.wall_s else math.nan


def evaluate(model: Path, benchmarks: tuple[str, ...], limit: int, out: Path, judge: str, device: str = "cpu",
             timeout: float | None = None, compile_cache: Path | None = None) -> tuple[dict, Process]:
    """Run the evaluator as the worker does (with `compile_cache` as its --compile-cache); its results.json and what
    the subprocess cost. RuntimeError (with the log's tail) when it fails; subprocess.TimeoutExpired (the evaluator
    killed) when it runs past `timeout` s."""
    command = [sys.executable, "-m", "evaluator", "run", "--model", str(model), "--suite", "sample",
               "--benchmarks", ",".join(benchmarks), "--out", str(out), "--batch-size", "auto",
               "--limit", str(limit), "--images-dir", str(out.parent / "cache" / "images"), "--judge", judge,
               "--device", device] + (["--compile-cache", str(compile_cache)] if compile_cache else [])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    out.mkdir(parents=True, exist_ok=True)
    started, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out / "worker.log", "wb") as log:
        code = subprocess.call(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cost = Process(time.monotonic() - started, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
                   os.getloadavg()[0])
    if code != 0:
        raise RuntimeError(f"evaluator exited {code}: {(out / 'worker.log').read_text()[-2000:]}")
    return json.loads((out / "results.json").read_text()), cost


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def measure_shape(shape: Shape, work: Path, judge: str, max_full_s: float,
                  only: tuple[str, ...] = BENCHMARKS, trial_judge: str | None = None) -> tuple[list[Figure], dict]:
    """The figures of the shape's benchmarks (those in `only`), and the quick trial's results (all four benchmarks,
    --limit 2, graded by `trial_judge` when given, else by `judge`)."""
    folder = shape.build(work / f"model-{shape.key}")
    shape.params = parameter_count(folder)
    say(f"{shape.label}: {shape.params / 1e6:.0f}M parameters"
        + (f", {image_tokens(folder)} image tokens per picture" if shape.key == "vision" else ""))
    figures = [Figure(shape.label, b, *suite_size(b, work / "cache" / "images")) for b in shape.benchmarks
               if b in only]

    trial, cost = evaluate(folder, BENCHMARKS, TRIAL_LIMIT, work / f"{shape.key}-trial", trial_judge or judge)
    trial["cores_used"] = cost.cores_used  # kept beside the results, for the report
    trial["grading_s"] = grading_seconds(trial)
    say(f"{shape.label}: quick trial (--limit {TRIAL_LIMIT}, {','.join(BENCHMARKS)}): "
        f"run {trial['run']['wall_time_s']:.0f} s (process {cost.wall_s:.0f} s, {cost.cores_used:.2f} cores used, "
        f"load {cost.load:.1f}); grading {trial['grading_s']:.0f} s by {trial['run'].get('judge_name')}; "
        f"skipped: {', '.join(trial['skipped']) or 'none'}")
    for fig in figures:
        fig.trial_s = trial["benchmarks"][fig.benchmark]["wall_time_s"]
        fig.trial_items = trial["run"]["item_counts"][fig.benchmark]
        measure_full(fig, folder, work / f"{shape.key}-{fig.benchmark}", judge, max_full_s)
    return figures, trial


def grading_seconds(results: dict) -> float:
    """The judge's share of a run: the judged benchmarks' scoring time (score_time_s), 0 where none ran."""
    return sum(float(block.get("score_time_s") or 0) for block in results.get("benchmarks", {}).values()
               if isinstance(block, dict))


def measure_full(fig: Figure, model: Path, out: Path, judge: str, max_full_s: float) -> None:
    """The benchmark on the full sample suite; if the estimate from the quick trial is over `max_full_s`, with a
    --limit that should take about half of that (more items than the trial), extrapolated linearly per item."""
    estimate = fig.trial_s / fig.trial_items * fig.items
    limit = 0
    if estimate > max_full_s:
        items_per_limit = fig.trial_items / TRIAL_LIMIT  # 1, or reform's 8 dimensions
        limit = max(TRIAL_LIMIT + 1, int(max_full_s / 2 / (estimate / fig.items) / items_per_limit))
        if limit * items_per_limit >= fig.items:
            limit = 0
    say(f"  {fig.benchmark}: {fig.items} items, {fig.requests} requests; estimated {estimate:.0f} s; running "
        + (f"--limit {limit} (extrapolated)" if limit else "the full sample suite"))
    results, cost = evaluate(model, (fig.benchmark,), limit, out, judge)
    fig.cores_used = cost.cores_used
    wall = results["benchmarks"][fig.benchmark]["wall_time_s"]
    load = results["run"]["wall_time_s"] - wall
    ran = results["run"]["item_counts"][fig.benchmark]
    scale = fig.items / ran if limit else 1.0
    fig.measured_limit, fig.wall_s, fig.run_s = limit, wall * scale, wall * scale + load
    say(f"  {fig.benchmark}: {ran} items in {wall:.0f} s (+{load:.0f} s loading)"
        + (f" -> ~{fig.wall_s:.0f} s for all {fig.items}" if limit else "")
        + f"; {cost.cores_used:.2f} cores used, load {cost.load:.1f}")


# ---- the report -----------------------------------------------------------------------------------------------

def minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def table(figures: list[Figure], trials: dict[str, dict]) -> str:
    header = ("model shape", "benchmark", "items", "requests", "wall time (s)", "s / item", "run incl. load (s)",
              "cores", f"--limit {TRIAL_LIMIT} items", f"--limit {TRIAL_LIMIT} (s)")
    rows = []
    for label, trial in trials.items():
        shape_figs = [f for f in figures if f.shape == label]
        for fig in shape_figs:
            mark = "~" if fig.measured_limit else ""
            rows.append((fig.shape, fig.benchmark, str(fig.items), str(fig.requests), f"{mark}{fig.wall_s:.0f}",
                         f"{mark}{fig.per_item_s:.1f}", f"{mark}{fig.run_s:.0f}", f"{fig.cores_used:.2f}",
                         str(fig.trial_items), f"{fig.trial_s:.0f}"))
        total = sum(f.wall_s for f in shape_figs)
        mark = "~" if any(f.measured_limit for f in shape_figs) else ""
        rows.append((label, "total", str(sum(f.items for f in shape_figs)),
                     str(sum(f.requests for f in shape_figs)), f"{mark}{total:.0f}", "",
                     f"{mark}{total + load_seconds(trial):.0f}", "",
                     str(sum(f.trial_items for f in shape_figs)), f"{trial['run']['wall_time_s']:.0f}"))
    return aligned(header, rows, right=range(2, len(header)))


def aligned(header: tuple[str, ...], rows: list[tuple[str, ...]], right=()) -> str:
    """A plain-text table, a rule under its header: the columns numbered in `right` aligned right, the others left."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    line = lambda r: "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join(text.rstrip() for text in [line(header), line(tuple("-" * w for w in widths)), *map(line, rows)])


def load_seconds(trial: dict) -> float:
    """Time of the quick trial outside its benchmarks (loading the model, writing results)."""
    return trial["run"]["wall_time_s"] - sum(b["wall_time_s"] for b in trial["benchmarks"].values())


def machine() -> str:
    """The machine the figures were measured on: CPU model, cores, torch threads (no GPU is used: --device cpu)."""
    import torch

    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    names = [line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")]
    cpu = names[0] if names else platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} threads, no GPU"


def budgets() -> str:
    """Each benchmark's answer budgets (the card defaults the runs used), which random weights use up in full."""
    from evaluator import api
    return "; ".join(f"{c.name} " + ", ".join(f"{o.key.split('.', 1)[1]} {o.default}" for o in c.options
                                               if o.key.endswith("max_new_tokens"))
                     for c in (api.card(b) for b in BENCHMARKS))


def summary(figures: list[Figure], trials: dict[str, dict]) -> str:
    """The README's figures and what exactly they measured (round and reword as needed)."""
    full, trial, models = [], [], []
    for shape in SHAPES.values():
        if shape.label not in trials:
            continue
        shape_figs = [f for f in figures if f.shape == shape.label]
        total = sum(f.wall_s for f in shape_figs) + load_seconds(trials[shape.label])
        each = ", ".join(f"{f.benchmark} {minutes(f.wall_s)}" for f in shape_figs)
        if shape_figs:
            full.append(f"{minutes(total)} for the {shape.key} model" + (f" ({each})" if len(shape_figs) > 1 else ""))
        graded = trials[shape.label]
        local = judge_shape([s.key for s in SHAPES.values() if s.label in trials]).label.split(" (")[0]
        judge = f"a local judge of the {local}" if graded["run"].get("judge_trial") else "the scripted judge"
        trial.append(f"{minutes(graded['run']['wall_time_s'])} for the {shape.key} model "
                     f"({graded['cores_used']:.1f} cores used; grading {minutes(graded['grading_s'])} of it, by "
                     f"{judge})")
        models.append(f"{shape.key}: {shape.params / 1e6:.0f}M parameters, {shape.label.split(' (')[0]}")
    measured = (f"Measured on {machine()}, with random-weight models ({'; '.join(models)}) and the tests' tiny "
                f"tokenizer; random weights use up every answer budget ({budgets()}).")
    sample = (" The full sample suites take about " + " and about ".join(full) + ", model loading included."
              if full else "")
    return (measured + sample + f" LEADERBOARD_LIMIT={TRIAL_LIMIT} (all four benchmarks chosen; reform: "
            f"{TRIAL_LIMIT} per dimension) takes about " + " and about ".join(trial) + ". A real model's answers "
            "are not random weights' and a loaded machine is slower: not a real model's time.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="text,vision",
                        help="comma-separated: text, vision (tiny-text, tiny-vision: the smoke form, seconds)")
    parser.add_argument("--max-full-seconds", type=float, default=900.0,
                        help="a benchmark estimated longer than this runs on fewer items, extrapolated")
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS),
                        help="benchmarks to time on the full sample suite (the quick trial always runs all four)")
    parser.add_argument("--trial-only", action="store_true",
                        help=f"only the --limit {TRIAL_LIMIT} quick trial of each model (minutes, not half an hour)")
    parser.add_argument("--judge", choices=("local", "scripted"), default="local",
                        help="the quick trials' judge: the SmolLM2-135M-shaped model, local (its grading timed), "
                             "or the scripted one that answers at once")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (models, runs, logs)")
    args = parser.parse_args()
    models = [key.strip() for key in args.models.split(",") if key.strip()]
    if not models or set(models) - set(SHAPES):
        parser.error(f"--models: comma-separated, of {', '.join(SHAPES)}")
    only = () if args.trial_only else tuple(b.strip() for b in args.benchmarks.split(",") if b.strip())

    from tests.judge_servers import ScriptedServer

    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="bench-sample-suites-"))
    say(f"{machine()}; work folder {work}")
    figures, trials = [], {}
    try:
        with ScriptedServer(judge_reply) as server:
            judge = f"endpoint:{server.base_url}|scripted-judge"
            trial_judge = None
            if args.judge == "local":
                judge_model = judge_shape(models)
                trial_judge = f"local:{judge_model.build(work / f'judge-{judge_model.key}')}"
            for key in models:
                shape = SHAPES[key]
                shape_figures, trials[shape.label] = measure_shape(shape, work, judge, args.max_full_seconds,
                                                                   only, trial_judge)
                figures += shape_figures
            judge_calls = len(server.requests)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print()
    print(table(figures, trials))
    print()
    print("wall time: the benchmark's wall_time_s on the full sample suite (~: fewer items, extrapolated per item); "
          "run incl. load: plus loading the model;\ncores: CPU s / wall s of that run (about 2 with both cores); "
          f"--limit {TRIAL_LIMIT}: the benchmark's time in one run of all four with --limit {TRIAL_LIMIT} (the "
          "'total' row: that run's wall_time_s; a text model skips cure, reform and lave).")
    shared = [f"{f.shape} {f.benchmark}" for f in figures if f.cores_used < 1.7] + [
        f"{label} quick trial" for label, trial in trials.items() if trial["cores_used"] < 1.7]
    print("Caveats: random weights almost never stop early, so every answer runs to its max_new_tokens, which is "
          "not a real model's answer length; the tests' tiny tokenizer makes prompts longer than the real one; "
          "images are not split into tiles (64 tokens each); these are wall times under whatever load there was ("
          + (f"runs that shared the CPU: {', '.join(shared)}" if shared else "every run had about both cores")
          + f"). The scripted judge answered {judge_calls} calls at once"
          + ("; the quick trials were graded by the local judge (their grading time is in the figures)." if
             args.judge == "local" else "."))
    print()
    print("README figures:", summary(figures, trials))
    print()
    print(f"bench/sample_suites.py ran for {minutes(time.monotonic() - started)}.")


if __name__ == "__main__":
    main()
