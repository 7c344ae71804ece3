"""The Space's Gradio app: one module per tab, wired together by `build_app`.

No global mutable state: each tab's `build(demo, settings, store)` closes over the settings and the store it is given.
Endpoints for clients (gradio_client): /leaderboard, /explorer_items, /explorer_item, /queue, /submit, /cancel, and
for admins /requeue_request, /hide_run, /show_run, /damaged_files. With sign-in required, the acting endpoints take the
visitor from the OAuth session cookie: a client without one is refused.
"""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr  # noqa: E402

from leaderboard.settings import Settings  # noqa: E402
from leaderboard.store import Store  # noqa: E402
from leaderboard.ui import about, board, explorer, playground, queue_tab, submit  # noqa: E402

TITLE = "Open VLM Reasoning Leaderboard"
INTRO = (f"# {TITLE}\n"
         "Submit any public Hugging Face Hub model; a background evaluator runs the benchmarks at a pinned commit "
         "and the board ranks the results. Scores are percentages.")


def launch_options(settings: Settings, store: Store) -> dict:
    """What `launch()` needs besides the address: on the local store, the details folder is served (read-only) so
    that the board's Details links open the files; nothing else on the machine is."""
    root = getattr(store, "root", None)
    if settings.store_backend != "local" or root is None:
        return {}
    details = Path(root) / "details"
    details.mkdir(parents=True, exist_ok=True)
    return {"allowed_paths": [str(details.resolve())]}


def build_app(settings: Settings, store: Store, jobs=None) -> gr.Blocks:
    """The whole Space: Leaderboard, Explorer, Submit, Queue, Judge playground and About tabs. `jobs`: the
    dispatcher of Hugging Face Jobs, when evaluations run as Jobs (the Queue tab shows them)."""
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        with gr.Row(equal_height=True):
            gr.Markdown(INTRO)
            if settings.require_sign_in:  # Gradio's real OAuth routes on a Space; without sign-in, no button at all
                gr.LoginButton(scale=0, min_width=240, elem_id="login-button")
        with gr.Tabs() as tabs:
            with gr.Tab("Leaderboard", id="leaderboard"):
                board_table = board.build(demo, settings, store)
            with gr.Tab("Explorer", id="explorer"):
                explorer.build(demo, settings, store, tabs, board_table)
            with gr.Tab("Submit", id="submit"):
                submit.build(demo, settings, store)
            with gr.Tab("Queue", id="queue"):
                queue_tab.build(demo, settings, store, jobs)
            with gr.Tab("Judge playground", id="judge"):
                playground.build(demo, settings, store)
            with gr.Tab("About", id="about"):
                about.build(demo, settings, store)
    return demo


__all__ = ["build_app", "launch_options", "TITLE"]
