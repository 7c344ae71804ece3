"""The Explorer's "Propose these results to the model page" button, under its run picker (selecting a board row opens
the Explorer on that run, so the board's rows reach it in one click): it proposes the run shown as Run (A) to its
model page (leaderboard.board.proposals) as the signed-in visitor, and says in one sentence what came of it. Where
it can only refuse, it is greyed out with the reason beside it: for a run that cannot be proposed (a served
endpoint's or a local folder's, which have no model page, a flagged one, one with no benchmark that has a registered
Hub dataset), said first, and on a Space that cannot propose at all (no HF_TOKEN, as on the local default). API
endpoint: /propose_results (the run's key; the visitor is the session's, never a parameter)."""
from __future__ import annotations

import threading

import gradio as gr
from huggingface_hub import HfApi

from leaderboard.board.proposals import propose, refused_run, space_problem, stored_run
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import identity
from leaderboard.submissions import records as q

LABEL = "Propose these results to the model page"
HELP = ("Opens a pull request on the model's Hub repo adding this run's scores in the Hub's evaluation-results "
        "format, with links back to every question: for complete runs of Hub models the board ranks, at the "
        "model's current revision; sign in first.")


def build(settings: Settings, store: Store, run: gr.Dropdown) -> None:
    """Lay out the button and its answer inside the current Blocks context, acting on the run picker's value;
    nothing is laid out when LEADERBOARD_EVAL_RESULTS_PRS is off."""
    if settings.eval_results_prs == "off":
        return
    lock = threading.Lock()  # this Space's: two clicks on one run never open two pull requests
    hub = HfApi(token=settings.hf_token) if settings.hf_token else None  # one client: it keeps its whoami
    unavailable = space_problem(settings)
    help_text = unavailable or HELP

    with gr.Row(equal_height=True, elem_id="explorer-propose-row"):  # stacked on a phone (leaderboard.ui CSS)
        button = gr.Button(LABEL, size="sm", scale=0, min_width=300, elem_id="explorer-propose",
                           interactive=not unavailable)
        answer = gr.Markdown(help_text, elem_id="explorer-propose-answer")

    def for_run(key: str | None):
        """The button and its text for the run picked: greyed out, with the reason, where it can only refuse."""
        problem = unavailable  # the run's own reason first: a local folder has no model page, token or not
        if isinstance(key, str) and q.is_request_key(key):
            try:
                problem = refused_run(settings, *stored_run(store, key))
            except Exception:  # noqa: BLE001 - a damaged or unreadable run: the click says why
                problem = unavailable
        return gr.Button(interactive=not problem), problem or HELP

    def on_propose(key: str | None, profile: gr.OAuthProfile | None) -> str:
        by = identity.visitor(settings, profile)
        return propose(settings, store, key if isinstance(key, str) else "", by, hub=hub, lock=lock).message

    def propose_results(key: str, profile: gr.OAuthProfile | None) -> str:
        """The /propose_results endpoint: propose the run named by its key as the session's visitor."""
        return on_propose(key, profile)

    button.click(on_propose, inputs=run, outputs=answer, api_visibility="private", concurrency_limit=2)
    gr.api(propose_results, api_name="propose_results", concurrency_limit=2,
           api_description="Propose one finished run's results (by its key) to its model page as a pull request on "
                           "the model repo; returns a message.")
    run.change(for_run, inputs=run, outputs=[button, answer], api_visibility="private", show_progress="hidden")
