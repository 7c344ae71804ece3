"""The Open VLM Reasoning Leaderboard Space: `python app.py`.

Builds the Gradio app on the store named by the settings and starts the background evaluator
(an APScheduler job) unless LEADERBOARD_RUN_SCHEDULER=0; on the Hub store, a timer keeps the store's picture of
the repos current (LEADERBOARD_HUB_REFRESH_SECONDS), so that no page asks the Hub itself.
"""
from __future__ import annotations

import os
import signal
import sys

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from leaderboard.running.scheduler import Scheduler  # noqa: E402
from leaderboard.settings import Settings  # noqa: E402
from leaderboard.store import open_store  # noqa: E402
from leaderboard.store.refresh_timer import RefreshTimer  # noqa: E402
from leaderboard.submissions.identity import seal_mock_sessions, sign_in_problem  # noqa: E402
from leaderboard.ui import build_app, launch_options, warm_store  # noqa: E402

PORT_BUSY = ("error: port {port} on {host} is already in use (another copy of the Space, or another server). Stop "
             "it, or start this one on a free port: LEADERBOARD_PORT=7861 python app.py (GRADIO_SERVER_PORT works "
             "too when LEADERBOARD_PORT is unset).")


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM (a Space stopping) unblocks launch() like Ctrl-C, so the scheduler shuts down


def main() -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    settings = Settings.from_env_or_exit()
    problem = sign_in_problem(settings)
    if problem:
        print(f"error: {problem}", file=sys.stderr, flush=True)
        return 1
    seal_mock_sessions(settings)
    store = open_store(settings)
    scheduler = Scheduler(settings, store) if settings.run_scheduler else None  # started once the Space listens
    demo = build_app(settings, store, jobs=scheduler.dispatcher if scheduler else None)
    try:  # listen first: a busy port says which variable to set, before any evaluation starts
        demo.launch(server_name=settings.host, server_port=settings.port, prevent_thread_lock=True,
                    **launch_options(settings, store))
    except OSError as exc:
        if "port" not in str(exc).lower():
            raise
        print(PORT_BUSY.format(port=settings.port, host=settings.host), file=sys.stderr, flush=True)
        return 1
    if scheduler:
        scheduler.start()
    timer = RefreshTimer(store, settings.hub_refresh_seconds, warm=lambda: warm_store(store)).start() \
        if settings.store_backend == "hub" else None
    print(f"listening on http://{settings.host}:{settings.port}; store: {settings.store_backend} at "
          f"{settings.home.resolve()}; suite: {settings.suite}; "
          f"scheduler: {'every %.0f s' % settings.scheduler_interval if scheduler else 'off'}", flush=True)
    try:
        demo.block_thread()  # until Ctrl-C or SIGTERM
    finally:
        if timer:
            timer.stop()
        if scheduler:
            scheduler.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
