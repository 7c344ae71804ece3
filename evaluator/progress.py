"""A run's progress: DIR/progress.json (the scheduler copies it into the request) and a tqdm bar in the log."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tqdm import tqdm

from evaluator.run_files import write_atomic


class Progress:
    """Writes DIR/progress.json and drives a tqdm bar per benchmark and stage ("answering", "grading")."""

    def __init__(self, out_dir: Path, benchmarks: tuple[str, ...]):
        self.path = out_dir / "progress.json"
        self.benchmarks = benchmarks
        self.bar: tqdm | None = None
        self.name = ""
        self.stage = ""
        self.started = time.monotonic()
        self.last_write = 0.0

    def start(self, name: str, stage: str) -> None:
        self.close()
        self.name, self.stage, self.started = name, stage, time.monotonic()
        self.bar = tqdm(desc=f"{name} {stage}", unit="item", file=sys.stdout, mininterval=1.0, ascii=True)
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
        state = {"benchmark": self.name, "stage": self.stage, "done": done, "total": total,
                 "rate": round(done / elapsed, 3),
                 "benchmark_index": self.benchmarks.index(self.name) + 1 if self.name in self.benchmarks else 0,
                 "benchmarks": len(self.benchmarks)}
        write_atomic(self.path, json.dumps(state).encode())

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
