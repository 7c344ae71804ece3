"""The Space's Gradio app: one module per tab, wired together by `build_app`.

No global mutable state: each tab's `build(demo, settings, store)` closes over the settings and the store it is given.
Endpoints for clients (gradio_client): /leaderboard, /explorer_items, /explorer_item, /queue, /submit, /cancel, and
for admins /requeue_request, /hide_run, /show_run, /damaged_files. With sign-in required, the acting endpoints take the
visitor from the OAuth session cookie: a client without one is refused.
"""
from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr  # noqa: E402

from leaderboard.board.columns import schema  # noqa: E402
from leaderboard.board.space_copy import BoardCopy  # noqa: E402
from leaderboard.settings import Settings  # noqa: E402
from leaderboard.store import Store  # noqa: E402
from leaderboard.ui import about, board, explorer, playground, queue_tab, submit  # noqa: E402
from leaderboard.ui.downloads import details_routes  # noqa: E402
from leaderboard.ui.rate_limits import trusting_no_proxy  # noqa: E402
from leaderboard.ui.sessions import session_middleware  # noqa: E402
from leaderboard.ui.uploads import no_uploads  # noqa: E402

TITLE = "Open VLM Reasoning Leaderboard"
INTRO = (f"# {TITLE}\n"
         "Submit any public Hugging Face Hub model; a background evaluator runs the benchmarks at a pinned commit "
         "and the board ranks the results. Scores are percentages.")

# Passed to launch() (Gradio 6 takes CSS there). Headers and labels wrap between words, never letter by letter; the
# columns of the board's table are at most 116 px wide, but its model column (the second) 152 px and its last (the
# revision: 12 characters on one line) 124 px, as Run details' fourth (its revision: the only view of 30 columns or more),
# and those of its
# More columns table and of the Explorer's questions 160 px (long flags, notes and answers wrap inside them), so that
# every view of the board (scores read "55.6 ± 11.2") and the questions table fit a 1,400 px screen (the page uses its
# whole width) and a phone's first screen shows the model and the overall score (the legend under the status line
# is left out there: a phone has no hover titles, and the table comes first); "Show flagged runs" keeps its
# width and goes to a line of its own on a phone, and so do the Explorer's Propose button and its text (stacked,
# each the screen's width, the button one line high), and its run pickers (each the screen's width, a smaller font:
# the model, revision and precision read whole); the Explorer's "of N" pages sit in the page number's box.
CSS = """
.gradio-container th .header, .gradio-container label span { word-break: normal !important;
  overflow-wrap: normal !important; hyphens: manual; }
#leaderboard-more .table-wrap, #explorer-table .table-wrap,
#explorer-more .table-wrap { --df-max-col-width: 160px !important; }
#leaderboard-table .table-wrap { --df-max-col-width: 116px !important; }
#leaderboard-table .sizing-body td:nth-child(2), #leaderboard-table .header-cell:nth-child(2) {
  max-width: 152px !important; }
#leaderboard-table .sizing-body td:last-child, #leaderboard-table .header-cell:last-child {
  max-width: 124px !important; }
#leaderboard-table .table-wrap:has(.header-cell:nth-child(30)) .sizing-body td:nth-child(4),
#leaderboard-table .table-wrap:has(.header-cell:nth-child(30)) .header-cell:nth-child(4) { max-width: 124px !important; }
#board-show-all { min-width: 170px !important; flex: 1 1 170px !important; }
#board-show-all label span { white-space: nowrap; }
@media (max-width: 640px) {
  #intro h1 { font-size: 1.25rem; margin-bottom: 0.25rem; }
  #intro p { font-size: 0.85rem; }
  #board-status p { font-size: 0.8rem; line-height: 1.3; margin: 0.1rem 0; }
  #board-status p + p { display: none; }
  #board-view .wrap { gap: 4px !important; }
  #board-view label { padding: 2px 8px !important; }
  #explorer-propose-row { flex-direction: column !important; align-items: stretch !important; }
  #explorer-propose-row > * { min-width: 0 !important; width: 100% !important; flex: 0 0 auto !important; }
  #explorer-propose { height: auto !important; min-height: 0 !important; }
  #explorer-run, #explorer-compare { flex: 1 1 100% !important; min-width: 100% !important; }
  #explorer-run input, #explorer-compare input { font-size: 0.8rem !important; }
}
#explorer-pages { background: var(--block-background-fill); }
#explorer-pages p { margin: 0 !important; padding: 0 12px 8px !important; }
"""


def launch_options(settings: Settings, store: Store) -> dict:
    """What `launch()` needs besides the address: the CSS; the script that makes the browser's Back show the view its
    address names (leaderboard.ui.explorer.HEAD); no uploads (no component takes files): the upload routes
    and any multipart body are answered 403 with the reason, unread and nothing stored (leaderboard.ui.uploads), no
    static file workers (they would serve uploads outside the app), LEADERBOARD_MAX_FILE_SIZE kept as Gradio's per-file
    limit behind that; on the local store, the route that serves a run's details file by its key
    (leaderboard.ui.downloads: the board's Details links) and the details folder as a path Gradio may copy from (the
    Explorer's download button); nothing else on the machine is served. With sign-in, the middleware that ends
    sessions on the server (leaderboard.ui.sessions: signing out, LEADERBOARD_SESSION_HOURS)."""
    options: dict = {"max_file_size": settings.max_file_size, "css": CSS, "head": explorer.HEAD, "num_workers": 0,
                     "app_kwargs": {"middleware": no_uploads() + session_middleware(settings, store)}}
    root = getattr(store, "root", None)
    if settings.store_backend != "local" or root is None:
        return options
    details = Path(root) / "details"
    details.mkdir(parents=True, exist_ok=True)
    return {**options, "allowed_paths": [str(details.resolve())],
            "app_kwargs": {**options["app_kwargs"], "routes": details_routes(store)}}


def warm_store(store: Store) -> None:
    """Read what the pages read when they load (the queue, the results, the board, the list of details files), so
    that on the Hub store the first visitor finds it in the store's picture and no page asks the Hub itself."""
    from leaderboard.board.file import LEADERBOARD_PATH, published_results

    published_results(store)
    store.read_bytes(LEADERBOARD_PATH)
    store.list("details")


# How often Gradio's event queue looks for a new event while it has none (Gradio's default on Linux: every 1 ms), and
# for progress to send (every 10 ms; the Space reports no gr.Progress). With Gradio's defaults an idle Space woke its
# event loop 1,100 times a second: 62 ms of CPU a second with nobody on it (measured on 2 cores), 16 ms with these. An
# event that arrives at an idle queue starts at most 20 ms later.
QUEUE_IDLE_POLL_S, QUEUE_PROGRESS_POLL_S = 0.02, 0.1


class LeaderboardBlocks(gr.Blocks):
    """gr.Blocks whose server keeps each request's TCP peer as its client address (rate_limits.trusting_no_proxy):
    only the app itself reads X-Forwarded-For, as far as LEADERBOARD_PROXY_HOPS says to trust it; and whose idle
    event queue polls every QUEUE_IDLE_POLL_S (for progress: QUEUE_PROGRESS_POLL_S), not every millisecond."""

    def queue(self, *args: Any, **kwargs: Any) -> Any:
        """Gradio's queue (Blocks makes it at its start, and again when asked) with the Space's polling intervals.
        Gradio keeps them in the queue's `sleep_when_free` and `progress_update_sleep_when_free`; a Gradio that
        renames them fails tests/test_ui.py's check rather than burning CPU unseen."""
        made = super().queue(*args, **kwargs)
        for name, seconds in (("sleep_when_free", QUEUE_IDLE_POLL_S),
                              ("progress_update_sleep_when_free", QUEUE_PROGRESS_POLL_S)):
            if hasattr(self._queue, name):
                setattr(self._queue, name, seconds)
        return made

    def launch(self, *args: Any, **kwargs: Any) -> Any:
        """Gradio's launch, without its start probe: Gradio asks its own server once, with a 3 s timeout, whether
        localhost answers (for notebooks that need a share link), and on a busy machine a slow first answer stopped
        the Space with "When localhost is not accessible, a shareable link must be created". The server is this
        process's own, on the address the settings name; it never needs a share link."""
        if "_frontend" in inspect.signature(super().launch).parameters:
            kwargs.setdefault("_frontend", False)
        with trusting_no_proxy():
            return super().launch(*args, **kwargs)


def build_app(settings: Settings, store: Store, jobs=None) -> gr.Blocks:
    """The whole Space: Leaderboard, Explorer, Submit, Queue, Judge playground and About tabs. `jobs`: the
    dispatcher of Hugging Face Jobs, when evaluations run as Jobs (the Queue tab shows them)."""
    board_copy = BoardCopy(store, schema(settings.benchmarks))  # what visitors' lookups of runs are answered from
    with LeaderboardBlocks(title=TITLE, analytics_enabled=False, fill_width=True) as demo:
        with gr.Row(equal_height=True):
            gr.Markdown(INTRO, elem_id="intro")
            if settings.require_sign_in:  # Gradio's real OAuth routes on a Space; without sign-in, no button at all
                gr.LoginButton(scale=0, min_width=240, elem_id="login-button")
        with gr.Tabs(overflow_behavior="wrap") as tabs:  # every tab reachable on a phone
            with gr.Tab("Leaderboard", id="leaderboard") as board_tab:
                board_table = board.build(demo, settings, store, board_copy)
            with gr.Tab("Explorer", id="explorer") as explorer_tab:
                link = explorer.build(demo, settings, store, tabs, board_table, board_copy)
            with gr.Tab("Submit", id="submit") as submit_tab:
                submit.build(demo, settings, store, board_copy)
            with gr.Tab("Queue", id="queue") as queue_tab_:
                queue_tab.build(demo, settings, store, jobs, board_copy)
            with gr.Tab("Judge playground", id="judge") as judge_tab:
                playground.build(demo, settings, store)
            with gr.Tab("About", id="about") as about_tab:
                about.build(demo, settings, store)
        explorer.follow_tabs(explorer_tab, [board_tab, submit_tab, queue_tab_, judge_tab, about_tab], link)
    return demo


__all__ = ["build_app", "launch_options", "warm_store", "QUEUE_IDLE_POLL_S", "QUEUE_PROGRESS_POLL_S", "TITLE"]
