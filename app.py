"""The Open VLM Reasoning Leaderboard Space: `python app.py`.

Builds the Gradio app on the store named by the settings and starts the background evaluator
(an APScheduler job) unless LEADERBOARD_RUN_SCHEDULER=0.
"""
from __future__ import annotations

import os
import signal

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from leaderboard.scheduler import Scheduler  # noqa: E402
from leaderboard.settings import Settings  # noqa: E402
from leaderboard.store import open_store  # noqa: E402
from leaderboard.ui import build_app  # noqa: E402


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM (a Space stopping) unblocks launch() like Ctrl-C, so the scheduler shuts down


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    settings = Settings.from_env()
    store = open_store(settings)
    demo = build_app(settings, store)
    scheduler = Scheduler(settings, store) if settings.run_scheduler else None
    if scheduler:
        scheduler.start()
    print(f"store: {settings.store_backend} at {settings.home.resolve()}; suite: {settings.suite}; "
          f"scheduler: {'every %.0f s' % settings.scheduler_interval if scheduler else 'off'}", flush=True)
    try:
        demo.launch(server_name=settings.host, server_port=settings.port)
    finally:
        if scheduler:
            scheduler.shutdown()


if __name__ == "__main__":
    main()
