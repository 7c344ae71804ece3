"""The standalone worker (`python -m leaderboard.running.worker`) for bench/chaos.py, with the store's writes of a
publish slowed and announced, so that the chaos script can kill the worker inside publish.

Every write of details/, results/ and leaderboard.parquet, and the request write that closes a run after its results
(the FINISHED step), first writes `<CHAOS_MARKERS>/<pid>` with "<phase> <path>" (phase: publish, close or board),
then waits CHAOS_WRITE_DELAY seconds, then writes. Nothing else of the worker changes.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard.running import worker  # noqa: E402
from leaderboard.store.local import LocalStore  # noqa: E402

DELAY = float(os.environ.get("CHAOS_WRITE_DELAY", "0.3"))
MARKER = Path(os.environ["CHAOS_MARKERS"]) / str(os.getpid())
_write = LocalStore.write_bytes
_state = {"published": False}


def _phase(path: str) -> str | None:
    if path.startswith(("details/", "results/")):
        _state["published"] = path.startswith("results/")
        return "publish"
    if path == "leaderboard.parquet":
        return "board"
    if path.startswith("requests/") and _state["published"]:
        _state["published"] = False
        return "close"
    return None


def announced_write(self, path: str, data: bytes) -> None:
    phase = _phase(path)
    if phase is not None:
        MARKER.write_text(f"{phase} {path}")
        time.sleep(DELAY)
    _write(self, path, data)
    if phase is not None:
        MARKER.write_text("")


LocalStore.write_bytes = announced_write

if __name__ == "__main__":
    sys.exit(worker.main())
