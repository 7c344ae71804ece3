"""The evaluator loop without the UI, for a GPU machine: `python -m leaderboard.running.worker`.

It reads the same settings (and so the same store) as the Space, and stops cleanly on SIGTERM or
Ctrl-C: a run in progress is stopped and its request goes back to the queue.
"""
from __future__ import annotations

import signal
import sys
import threading

from leaderboard import console_logging
from leaderboard.running.scheduler import run_worker_loop
from leaderboard.settings import Settings
from leaderboard.store import open_store


def main() -> int:
    console_logging()
    settings = Settings.from_env_or_exit()
    store = open_store(settings)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"[worker] store: {settings.store_backend} ({settings.home}); polling every {settings.scheduler_interval:.0f} s",
          flush=True)
    runs = run_worker_loop(settings, store, stop)
    print(f"[worker] stopped after {runs} run(s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
