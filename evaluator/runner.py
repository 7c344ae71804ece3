"""Run benchmarks for one model and write DIR/results.json + DIR/details/<benchmark>.parquet.

results.json is written last and atomically: a run that dies part-way leaves no results.json, so
nothing partial can be published. DIR/progress.json is rewritten as items finish (the scheduler reads it).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.base import BenchmarkContext

PROJECT_DIR = Path(__file__).resolve().parent.parent
VERSIONED_PACKAGES = ("torch", "torchvision", "transformers", "tokenizers", "huggingface_hub", "datasets",
                      "pillow", "numpy", "pandas", "pyarrow")


@dataclass
class RunConfig:
    """What to run: one model at one revision, some benchmarks, one suite."""

    model: str  # Hub id or local folder
    revision: str | None = None
    precision: str = "auto"
    benchmarks: tuple[str, ...] = ("cure",)
    suite: str = "sample"
    limit: int = 0
    batch_size: int | str = "auto"
    judge: str = ""
    images_dir: Path = Path(".cache/images")
    sources: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    request: dict = field(default_factory=dict)  # the queue's request record, copied into results


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def json_safe(value):
    """NaN and infinities become null (undefined), recursively; JSON has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def library_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def project_commit() -> str:
    """The project's git commit (with '-dirty' when the tree has changes), or 'unknown'."""
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_DIR, capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=PROJECT_DIR,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def prompt_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class Progress:
    """Writes DIR/progress.json and drives a tqdm bar per benchmark."""

    def __init__(self, out_dir: Path, benchmarks: tuple[str, ...]):
        self.path = out_dir / "progress.json"
        self.benchmarks = benchmarks
        self.bar: tqdm | None = None
        self.name = ""
        self.started = time.monotonic()
        self.last_write = 0.0

    def start(self, name: str) -> None:
        self.close()
        self.name, self.started = name, time.monotonic()
        self.bar = tqdm(desc=name, unit="item", file=sys.stdout, mininterval=1.0, ascii=True)
        self.update(0, 0, force=True)

    def update(self, done: int, total: int, force: bool = False) -> None:
        if self.bar is not None:
            self.bar.total = total
            self.bar.n = done
            self.bar.refresh()
        now = time.monotonic()
        if not force and now - self.last_write < 0.5 and done < total:
            return
        self.last_write = now
        elapsed = max(now - self.started, 1e-9)
        state = {"benchmark": self.name, "done": done, "total": total, "rate": round(done / elapsed, 3),
                 "benchmark_index": self.benchmarks.index(self.name) + 1 if self.name in self.benchmarks else 0,
                 "benchmarks": len(self.benchmarks)}
        write_atomic(self.path, json.dumps(state).encode())

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def make_run_judge(config: RunConfig, modules: list):
    """The judge for this run, when a selected benchmark needs one (NEEDS_JUDGE); None otherwise.

    Its token comes from LEADERBOARD_JUDGE_TOKEN (or HF_TOKEN) in the environment, never from the command line.
    """
    needing = [m.NAME for m in modules if getattr(m, "NEEDS_JUDGE", False)]
    if not needing:
        return None
    if not config.judge:
        raise ValueError(f"{', '.join(needing)} needs a judge: set LEADERBOARD_JUDGE or pass --judge")
    from evaluator.judge import make_judge

    token = os.environ.get("LEADERBOARD_JUDGE_TOKEN") or os.environ.get("HF_TOKEN") or None
    return make_judge(config.judge, token=token)


def run(config: RunConfig, out_dir: Path) -> dict:
    """Evaluate config.model on each benchmark; write details, then results.json. Returns the results."""
    from evaluator.models import load_model

    started = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    modules = [get_benchmark(name) for name in config.benchmarks]  # unknown names fail before the model loads
    print(f"loading {config.model} @ {config.revision or 'default revision'} ({config.precision})", flush=True)
    model = load_model(config.model, revision=config.revision, precision=config.precision,
                       batch_size=config.batch_size)
    print(f"loaded on {model.device} as {model.dtype}; vision: {model.has_vision}", flush=True)
    judge = make_run_judge(config, modules)
    progress = Progress(out_dir, config.benchmarks)
    ctx = BenchmarkContext(suite=config.suite, limit=config.limit, images_dir=config.images_dir,
                           sources=config.sources, options=config.options, batch_size=model.batch_size,
                           progress=progress.update, judge=judge)
    benchmarks, skipped, prompt_hashes, item_counts = {}, {}, {}, {}
    for module in modules:
        if module.NEEDS_IMAGES and not model.has_vision:
            skipped[module.NAME] = "needs image input; the model is text-only"
            print(f"skipping {module.NAME}: {skipped[module.NAME]}", flush=True)
            continue
        progress.start(module.NAME)
        t0 = time.monotonic()
        result = module.run(model, ctx)
        progress.close()
        details = pd.DataFrame(result.details)
        details_path = out_dir / "details" / f"{module.NAME}.parquet"
        details_path.parent.mkdir(parents=True, exist_ok=True)
        details.to_parquet(details_path, index=False)
        benchmarks[module.NAME] = {"scores": result.scores, "counts": result.counts, "extra": result.extra,
                                   "wall_time_s": round(time.monotonic() - t0, 2)}
        prompt_hashes.update({f"{module.NAME}/{name}": prompt_hash(text) for name, text in result.prompts.items()})
        item_counts[module.NAME] = result.counts.get("items", len(result.details))
        print(f"{module.NAME}: {json.dumps(json_safe(result.scores))}", flush=True)
    request = config.request
    results = {
        "model": request.get("model", config.model),
        "revision": request.get("revision", config.revision),
        "precision": config.precision,
        "model_type": request.get("model_type"),
        "params_billions": request.get("params_billions"),
        "architecture": request.get("architecture"),
        "submitted_time": request.get("submitted_time"),
        "finished_time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run": {
            "dtype": model.dtype, "device": model.device, "batch_size": model.batch_size,
            "has_vision": model.has_vision, "scoring_path": model.scoring_path,
            "versions": library_versions(), "git_commit": project_commit(), "host": platform.node(),
            "judge": judge.identity if judge is not None else None, "prompt_hashes": prompt_hashes, "suite": config.suite, "limit": config.limit,
            "item_counts": item_counts, "wall_time_s": round(time.monotonic() - started, 2),
        },
        "benchmarks": benchmarks,
        "skipped": skipped,
    }
    results = json_safe(results)
    write_atomic(out_dir / "results.json", json.dumps(results, indent=2).encode())
    return results
