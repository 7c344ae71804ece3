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

from evaluator import api  # noqa: E402
from leaderboard import console_logging  # noqa: E402
from leaderboard.running.scheduler import Scheduler  # noqa: E402
from leaderboard.settings import Settings  # noqa: E402
from leaderboard.store import open_store  # noqa: E402
from leaderboard.store.refresh_timer import RefreshTimer  # noqa: E402
from leaderboard.submissions.identity import seal_mock_sessions, sign_in_problem  # noqa: E402

PORT_BUSY = ("error: port {port} on {host} is already in use (another copy of the Space, or another server). Stop "
             "it, or start this one on a free port: LEADERBOARD_PORT=7861 python app.py (GRADIO_SERVER_PORT works "
             "too when LEADERBOARD_PORT is unset).")
SHUTDOWN_GRACE_S = 1  # seconds the server waits for open connections (pages' event streams) when stopping


def judge_text(settings: Settings) -> str:
    """The judge for people: its public name (model, and endpoint URL without user, password or query, or revision
    and "local"), never a token; "none" without one."""
    if not settings.judge:
        return "none"
    try:
        spec = api.parse_judge_spec(settings.judge, settings.judge_bearer)
    except ValueError:
        return settings.scrub(settings.judge)
    if spec.kind == "endpoint":
        return api.judge_name({"kind": "endpoint", "model": spec.model, "base_url": spec.base_url})
    return api.judge_name({"kind": "local", "model": spec.source, "revision": spec.revision})


def start_line(settings: Settings, scheduler: bool) -> str:
    """The Space's start line: where it listens, the store, what each request runs (benchmarks, suite, limit, judge),
    where evaluations run (the executor) and the scheduler; secrets are scrubbed."""
    limit = f"{settings.limit} items per benchmark" if settings.limit else "none (every item)"
    if settings.executor == "hf-jobs":
        executor = (f"Hugging Face Jobs (up to {settings.jobs_max} at once, under "
                    f"{settings.jobs_namespace or 'the owner of HF_TOKEN'})")
    else:
        executor = f"local process (device: {settings.device})"
    line = (f"listening on http://{settings.host}:{settings.port}; store: {settings.store_backend} at "
            f"{settings.home.resolve()}; benchmarks: {', '.join(settings.benchmarks)}; suite: {settings.suite}; "
            f"limit: {limit}; judge: {judge_text(settings)}; executor: {executor}; "
            f"scheduler: {'every %.0f s' % settings.scheduler_interval if scheduler else 'off'}")
    return settings.scrub(line)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM (a Space stopping) unblocks launch() like Ctrl-C, so the scheduler shuts down


def main() -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    console_logging()  # the project's INFO lines (admin actions, cache deletions) reach the console
    settings = Settings.from_env_or_exit()
    problem = sign_in_problem(settings)
    if problem:
        print(f"error: {problem}", file=sys.stderr, flush=True)
        return 1
    from leaderboard.ui import build_app, launch_options, warm_store  # Gradio: some 4 s, after what can refuse

    seal_mock_sessions(settings)
    store = open_store(settings)
    scheduler = Scheduler(settings, store) if settings.run_scheduler else None  # started once the Space listens
    demo = build_app(settings, store, jobs=scheduler.dispatcher if scheduler else None)
    try:  # listen first: a busy port says which variable to set, before any evaluation starts
        demo.launch(server_name=settings.host, server_port=settings.port, prevent_thread_lock=True, quiet=True,
                    **launch_options(settings, store))
    except OSError as exc:
        if "port" not in str(exc).lower():
            raise
        print(PORT_BUSY.format(port=settings.port, host=settings.host), file=sys.stderr, flush=True)
        return 1
    if demo.server is not None:  # on SIGTERM, pages' open streams get 1 s, not Gradio's 5 s wait for its thread
        demo.server.config.timeout_graceful_shutdown = SHUTDOWN_GRACE_S
    if scheduler:
        scheduler.start()
    timer = RefreshTimer(store, settings.hub_refresh_seconds, warm=lambda: warm_store(store)).start() \
        if settings.store_backend == "hub" else None
    print(start_line(settings, scheduler is not None), flush=True)
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
