"""The Queue tab: pending, running (with progress), finished, failed (reason + log tail) and cancelled requests,
a box to cancel one of your PENDING requests (admins: any), and for admins the admin actions (re-queue a failed
request, hide a run from the board or show it again, the free disk of the store's folder and of the Hub cache, add a
served model: an OpenAI-compatible endpoint, leaderboard.submissions.served) and the damaged files of the store.
Refreshed on load, every REFRESH_SECONDS and on the Refresh button (that event is the `/queue` API endpoint: five
tables, in the order of SECTIONS). Who may do what is decided from the session
(leaderboard.submissions.identity), never from what the client sends."""
from __future__ import annotations

import logging

import gradio as gr
import pandas as pd

from leaderboard.board.columns import schema
from leaderboard.board.estimates import queue_estimates
from leaderboard.board.eval_results import follow_hiding
from leaderboard.board.file import published_results
from leaderboard.board.publish import rebuild_board
from leaderboard.board.space_copy import BoardCopy
from leaderboard.formatting import escape_markdown, format_number
from leaderboard.running.model_cache import free_disk
from leaderboard.settings import Settings
from leaderboard.store import Store, StoreConflict
from leaderboard.submissions import budget_notes, identity
from leaderboard.submissions import records as q
from leaderboard.submissions.actions import act
from leaderboard.submissions.served import add_served
from leaderboard.submissions.views import QUEUE_COLUMNS, queue_frame

log = logging.getLogger(__name__)

REFRESH_SECONDS = 5

# status -> section title
SECTIONS: dict[str, str] = {
    q.PENDING: "Pending",
    q.RUNNING: "Running",
    q.FINISHED: "Finished",
    q.FAILED: "Failed",
    q.CANCELLED: "Cancelled",
}
_OPEN = {q.PENDING: True, q.RUNNING: True, q.FINISHED: False, q.FAILED: True, q.CANCELLED: False}
# fixed column widths (in QUEUE_COLUMNS order) where a long text must wrap, not widen the table: the Running table's
# Progress stays in view at 1400 px; in pixels, so that a phone scrolls the table instead of stacking its headers
_WIDTHS = {q.RUNNING: ("170px", "300px", "110px", "150px", "110px", "100px", "110px", "110px", "110px", "100px")}

HELP = ("Requests move from **Pending** to **Running** when the evaluator claims them, then to **Finished** (the "
        "model appears on the board) or **Failed** (with the reason and the last lines of the worker's log). "
        "A running request shows which benchmark it is on, its items done, speed and time left, and when the "
        "evaluator last reported; a run that was stopped (a restart) starts again where it stopped, reusing the "
        "answers it had (\"resumed: ... items reused\"). A pending or running request can be cancelled below by the person "
        "who submitted it (or an admin): a running evaluation is stopped. Click a failed run to read its log tail. "
        "Each request's **Plan** is what its run was planned to take at most when it was submitted (hours, and dollars "
        "where its hardware has a price; \"not planned\" for requests from before plans were recorded); under a Jobs "
        "budget, a plan over the whole budget is refused at submission, and a pending one fails with its numbers. "
        "A pending request's **Estimate** is the median run time (GPU hours; on a CPU, wall time) and cost of the earlier runs like it (a model within "
        "a factor of 2 in size, on the same hardware, suite and benchmarks; a served model: its tokens), with how many "
        "runs it rests on; its **Expected start** adds up the estimates of the requests ahead of it (as many at once "
        "as run at once), from when the running ones end, and is unknown when one of them has no estimate.")


DAMAGED_COLUMNS = ("Path", "Reason")
ADMIN_HELP = ("**Admin actions**, recorded in the request (who, when, why): re-queue a FAILED request (its attempts "
              "start again from zero), hide a finished run from the board's ranking (the board flags it with your "
              "reason, which is public) or show it again. Pick a request or paste its key.")
SERVED_HELP = ("**Add a served model**: a model behind an OpenAI-compatible chat-completions endpoint (vLLM, TGI, the "
               "Hugging Face router, OpenAI...), evaluated by generation only, so it is ranked with runs asked the "
               "same way. The endpoint is called with `LEADERBOARD_MODEL_TOKEN` as its bearer token (a Space secret): "
               "never put a key in the URL. It is queued like any request and runs on this Space (no GPU needed).")
DAMAGED_HELP = ("Files of the store that could not be read (not JSON, not UTF-8, a field missing or of the wrong kind). "
                "Everything else keeps working: these are left out of the queue and the board until someone with "
                "write access to the store repairs or removes them. Their content is never shown here.")


def disk_text(settings: Settings, by: identity.Visitor) -> str:
    """Admins: the free space of the disk holding LEADERBOARD_HOME and of the one holding the Hub cache, as
    Markdown; "" for everyone else (nothing of it reaches their page)."""
    if not by.admin:
        return ""
    parts = [f"{what} ({escape_markdown(folder)}): {format_number(free / 1e9)} GB free of {format_number(total / 1e9)} GB"
             for what, folder, free, total in free_disk(settings)]
    return "**Free disk**: " + ("; ".join(parts) if parts else "could not be read") + "."


def damaged_frame(damaged: list) -> pd.DataFrame:
    """The damaged files as a table of text (path and reason, nothing of their content)."""
    rows = [(str(path), str(reason)) for path, reason in damaged]
    return pd.DataFrame(rows, columns=list(DAMAGED_COLUMNS))


def _section_label(status: str, count: int) -> str:
    return f"{SECTIONS[status]} ({count})"


def _choices(frame: pd.DataFrame | None, submitters: dict[str, str]) -> list[tuple[str, str, str]]:
    """(label, key, submitter) of each row of a queue table."""
    if frame is None or len(frame) == 0 or "Key" not in frame.columns:
        return []
    choices = []
    for _, row in frame.iterrows():
        key = str(row["Key"] or "")
        if key:
            choices.append((f"{row['Model']} @ {row['Revision']} ({row['Precision']})", key, submitters.get(key, "")))
    return choices


def _request_path(key: str) -> tuple[str, str]:
    """(requests/<key>.json, "") for a request key (a path or a file name is accepted too); ("", why) otherwise."""
    key = key.strip() if isinstance(key, str) else ""
    if key.startswith("requests/"):
        key = key[len("requests/"):]
    if key.endswith(".json"):
        key = key[: -len(".json")]
    if not key:
        return "", "Pick a request (or paste its key) first."
    if not q.is_request_key(key):
        return "", (f"**{escape_markdown(key, limit=120)}** is not a request key; a key looks like "
                    "`org/model/0123456789ab_auto` (see the Key column).")
    return f"requests/{key}.json", ""


def _cancel_job(store: Store, path: str, jobs) -> None:
    """Cancel the Hugging Face Job of a request just cancelled, if it ran as one."""
    try:
        request = q.load(store, path)
    except Exception:  # noqa: BLE001 - the dispatcher's next tick cancels it anyway
        return
    job_id = (request.job or {}).get("id") if request else None
    if job_id:
        jobs.cancel(job_id)


def request_action(settings: Settings, store: Store, key: str, action: str, by: identity.Visitor,
                   reason: str = "", jobs=None) -> str:
    """Cancel, re-queue, hide or show the request named by its key (<org>/<model>/<sha12>_<precision>) as the
    visitor `by`; a Markdown message. A hidden or shown run rebuilds the board; a cancelled request running as a
    Hugging Face Job has its Job cancelled through `jobs` (the dispatcher; its next tick would too)."""
    path, problem = _request_path(key)
    if problem:
        return problem
    try:
        done, message = act(store, path, action, by, reason)
    except (StoreConflict, ValueError, OSError, TimeoutError) as error:
        log.warning("%s of %s failed: %s", action, path, settings.scrub(str(error)))
        return f"The request could not be changed right now ({action}); please try again."
    if done and action in ("hide", "show"):  # the board follows at once (the next tick would notice too)
        rebuild_board(settings, store)
        follow_hiding(settings, store, key, (reason or "hidden") if action == "hide" else None)
    if done and action == "cancel" and jobs is not None:
        _cancel_job(store, path, jobs)
    return ("Done: " if done else "Not done: ") + message


def pending_estimates(settings: Settings, requests: list, copy: BoardCopy | None, board=None) -> dict:
    """Pending request key -> (its estimate, its expected start) from the earlier runs on the Space's copy of the
    board (leaderboard.board.estimates); {} when the board cannot be read."""
    try:
        raw = copy.frame() if copy is not None else None
        return queue_estimates(settings, board or schema(settings.benchmarks), requests, raw)
    except Exception as error:  # noqa: BLE001 - the queue is shown without its estimates
        log.warning("the estimates could not be made: %s", settings.scrub(str(error)))
        return {}


def build(demo: gr.Blocks, settings: Settings, store: Store, jobs=None, copy=None) -> None:
    """Lay out the tab inside the current Blocks context and wire its events. `jobs`: the dispatcher of the
    Hugging Face Jobs (LEADERBOARD_EXECUTOR=hf-jobs), whose last look at each Job the Running table shows; `copy`:
    the Space's copy of the board, whose earlier runs give the pending requests' estimates."""
    board = schema(settings.benchmarks)
    copy = copy or BoardCopy(store, board)

    def visitor(profile) -> identity.Visitor:
        return identity.visitor(settings, profile)

    def frames() -> tuple:
        """The five tables (the /queue endpoint's outputs), then a summary kept in a gr.State (clients skip it)."""
        try:
            requests, problem = q.all_requests(store), ""
        except Exception as error:  # noqa: BLE001 - an outage of the store must not break the tab
            log.warning("the queue could not be read: %s", error)
            requests, problem = [], "The queue could not be read right now; it is tried again in a few seconds."
        live, prices = (jobs.live, jobs.prices()) if jobs is not None else ({}, {})
        estimates = pending_estimates(settings, requests, copy, board)
        rates = jobs.budget.known_rates() if hasattr(jobs, "budget") else None  # the Jobs budget's waiting notes
        waiting = budget_notes.notes_for(settings, store, requests, rates)
        shown = tuple(queue_frame(requests, status, jobs=live, prices=prices, max_attempts=settings.max_attempts,
                                  estimates=estimates, waiting=waiting, judge_stall_s=settings.judge_stall_seconds)
                      for status in SECTIONS)
        failed = shown[list(SECTIONS).index(q.FAILED)]
        submitters = {r.key: r.submitter for r in requests}
        summary = {
            "counts": [len(df) for df in shown],
            "choices": _choices(shown[0], submitters),
            "admin_choices": [*_choices(failed, submitters), *_choices(shown[list(SECTIONS).index(q.FINISHED)],
                                                                        submitters)],
            "failed": {str(row["Key"]): f"{row['Model']} @ {row['Revision']}: {row['Error']}\n\n{row['Log tail']}"
                       for _, row in failed.iterrows()},
            "damaged": store.damaged.listing(),
            "problem": problem,
            "budget": budget_notes.admin_text_for(settings, store),  # admins only: the window's spend, reservations
        }
        return (*shown, summary)

    def decorate(summary: dict | None, profile: gr.OAuthProfile | None):
        """Section counts, and what this visitor may act on: their own pending requests (an admin: every one, the
        admin actions and the damaged files)."""
        summary = summary or {}
        by = visitor(profile)
        counts = summary.get("counts") or [0] * len(SECTIONS)
        labels = [gr.Accordion(label=_section_label(status, n)) for status, n in zip(SECTIONS, counts)]
        mine = [(label, key) for label, key, who in summary.get("choices") or []
                if by.admin or (by.signed_in and who == by.name)]
        admin = [(label, key) for label, key, _ in summary.get("admin_choices") or []] if by.admin else []
        damaged = (summary.get("damaged") or []) if by.admin else []
        return (*labels, gr.Dropdown(choices=mine), gr.Dropdown(choices=admin), gr.Accordion(visible=by.admin),
                gr.Accordion(visible=by.admin),
                gr.Accordion(label=f"Damaged files ({len(damaged)})", open=bool(damaged), visible=by.admin),
                damaged_frame(damaged), summary.get("problem") or "", disk_text(settings, by),
                (summary.get("budget") or "") if by.admin else "")

    def show_log(summary: dict | None, evt: gr.SelectData) -> str:
        row = evt.row_value or []
        key = str(row[-1]) if row else ""  # Key is the last column (survives sorting in the browser)
        return ((summary or {}).get("failed") or {}).get(key, "")

    gr.Markdown(HELP)
    with gr.Row():
        refresh = gr.Button("Refresh", size="sm", scale=0, min_width=120, elem_id="queue-refresh")
    accordions: list[gr.Accordion] = []
    outputs: list[gr.Dataframe] = []
    failed_log = pick = cancel = cancel_message = None
    for status, title in SECTIONS.items():
        failed = status == q.FAILED
        wrapped = True  # every section wraps: a pending estimate, long progress texts, notes and reasons
        with gr.Accordion(label=_section_label(status, 0), open=_OPEN[status],
                          elem_id=f"queue-section-{status.lower()}") as accordion:
            table = gr.Dataframe(
                value=queue_frame([], status),
                headers=list(QUEUE_COLUMNS[status]),
                datatype="str",
                interactive=False,
                wrap=wrapped,
                column_widths=list(_WIDTHS[status]) if status in _WIDTHS else None,
                max_chars=160 if failed else None,  # the whole log tail is in the box below the table
                max_height=400,
                show_label=False,
                label=title,
                elem_id=f"queue-{status.lower()}",
            )
            if failed:
                failed_log = gr.Textbox(label="Error and log tail of the selected failed run (click a row)",
                                        lines=4, max_lines=25, interactive=False, elem_id="queue-failed-log")
            if status == q.PENDING:
                with gr.Row(equal_height=False):
                    pick = gr.Dropdown(choices=[], value=None, allow_custom_value=True,
                                       label="Cancel one of your pending requests",
                                       info="Pick one, or paste its key (org/model/sha12_precision)", scale=4,
                                       elem_id="queue-cancel-pick")
                    cancel = gr.Button("Cancel request", variant="stop", scale=1, min_width=140,
                                       elem_id="queue-cancel")
                cancel_message = gr.Markdown(elem_id="queue-cancel-message")
        accordions.append(accordion)
        outputs.append(table)

    with gr.Accordion(label="Admin actions", open=True, visible=False, elem_id="queue-section-admin") as admin_section:
        gr.Markdown(ADMIN_HELP)
        with gr.Row(equal_height=False):
            admin_pick = gr.Dropdown(choices=[], value=None, allow_custom_value=True, label="Request",
                                     info="A failed request, or a finished run", scale=3, elem_id="queue-admin-pick")
            admin_reason = gr.Textbox(label="Reason", max_length=300, scale=3, elem_id="queue-admin-reason",
                                      placeholder="shown on the board when hiding a run")
        with gr.Row():
            requeue = gr.Button("Re-queue failed request", size="sm", elem_id="queue-admin-requeue")
            hide = gr.Button("Hide run from the board", size="sm", variant="stop", elem_id="queue-admin-hide")
            show = gr.Button("Show run again", size="sm", elem_id="queue-admin-show")
        admin_message = gr.Markdown(elem_id="queue-admin-message")
        admin_disk = gr.Markdown(elem_id="queue-admin-disk")
        admin_budget = gr.Markdown(elem_id="queue-admin-budget")
    with gr.Accordion(label="Add a served model", open=False, visible=False,
                      elem_id="queue-section-served") as served_section:
        gr.Markdown(SERVED_HELP)
        with gr.Row(equal_height=False):
            served_url = gr.Textbox(label="Base URL", placeholder="https://router.huggingface.co/v1", max_length=2000,
                                    scale=3, elem_id="queue-served-url")
            served_model = gr.Textbox(label="Model name", placeholder="Qwen/Qwen2.5-VL-72B-Instruct",
                                      max_length=300, scale=3, elem_id="queue-served-model")
        with gr.Row(equal_height=False):
            served_name = gr.Textbox(label="Display name (for the board)", placeholder="Qwen2.5-VL 72B (router)",
                                     max_length=80, scale=3, elem_id="queue-served-name")
            served_type = gr.Dropdown(choices=list(q.MODEL_TYPES), value="instruction-tuned", label="Model type",
                                      scale=2, elem_id="queue-served-type")
            add = gr.Button("Add served model", variant="primary", scale=1, min_width=160, elem_id="queue-served-add")
        served_message = gr.Markdown(elem_id="queue-served-message")
    with gr.Accordion(label="Damaged files (0)", open=False, visible=False,
                      elem_id="queue-section-damaged") as damaged_section:
        gr.Markdown(DAMAGED_HELP)
        damaged_table = gr.Dataframe(value=damaged_frame([]), headers=list(DAMAGED_COLUMNS), datatype="str",
                                     interactive=False, wrap=True, max_height=300, show_label=False,
                                     label="Damaged files", elem_id="queue-damaged")
    problem = gr.Markdown(elem_id="queue-problem")
    decorated = [*accordions, pick, admin_pick, admin_section, served_section, damaged_section, damaged_table, problem,
                 admin_disk, admin_budget]

    summary = gr.State(None)
    timer = gr.Timer(REFRESH_SECONDS)
    gr.on(
        triggers=[demo.load, timer.tick, refresh.click],
        fn=frames,
        outputs=[*outputs, summary],
        api_name="queue",
        api_description="The queue: pending, running, finished, failed and cancelled requests, as five tables.",
        show_progress="hidden",
        trigger_mode="always_last",
        concurrency_limit=None,
    ).then(decorate, inputs=summary, outputs=decorated, api_visibility="private", show_progress="hidden")

    def on_cancel(key: str, profile: gr.OAuthProfile | None) -> str:
        return request_action(settings, store, key, "cancel", visitor(profile), jobs=jobs)

    def refreshed(event):
        """After an action: clear the pick, then redraw the tables for this visitor."""
        return event.then(lambda: None, outputs=pick, api_visibility="private", show_progress="hidden").then(
            frames, outputs=[*outputs, summary], api_visibility="private", show_progress="hidden").then(
            decorate, inputs=summary, outputs=decorated, api_visibility="private", show_progress="hidden")

    refreshed(cancel.click(on_cancel, inputs=pick, outputs=cancel_message, api_name="cancel",
                           api_description="Cancel one of your PENDING requests (admins: any) by its key; returns "
                                           "a message."))
    def admin_handler(action: str):
        def on_admin(key: str, reason: str, profile: gr.OAuthProfile | None) -> str:
            return request_action(settings, store, key, action, visitor(profile), reason)

        return on_admin

    for button, action, description in (
            (requeue, "requeue", "Admins: put a FAILED request back in the queue (key, reason); returns a message."),
            (hide, "hide", "Admins: hide a finished run from the board's ranking with a reason the board shows."),
            (show, "show", "Admins: show a hidden run on the board again.")):
        refreshed(button.click(admin_handler(action), inputs=[admin_pick, admin_reason], outputs=admin_message,
                               api_name=f"{action}_request" if action == "requeue" else f"{action}_run",
                               api_description=description))

    def on_add(base_url: str, model: str, display_name: str, model_type: str, profile: gr.OAuthProfile | None) -> str:
        """Admins: queue a served model; anyone else is refused, from the session, with nothing written."""
        outcome = add_served(settings, store, base_url, model, display_name, model_type, visitor(profile))
        if not outcome.ok:
            return f"Not done: {outcome.message}"
        if outcome.duplicate or outcome.request is None:
            return outcome.message
        from leaderboard.ui.submit import estimate_sentence  # the Submit tab's words, from the same earlier runs

        return f"{outcome.message} {estimate_sentence(settings, outcome.request, copy)}"

    refreshed(add.click(on_add, inputs=[served_url, served_model, served_name, served_type], outputs=served_message,
                        api_name="add_served_model",
                        api_description="Admins: queue a served model (base URL, model name, display name, model "
                                        "type) evaluated through its OpenAI-compatible endpoint; returns a message."))

    def damaged_files(profile: gr.OAuthProfile | None) -> list[dict]:
        """Admins: the store's damaged files, each {path, reason} (the requests and results are read now to find
        them); others get an error."""
        if not visitor(profile).admin:
            raise gr.Error("Only the leaderboard's admins can list the damaged files.")
        q.all_requests(store)
        published_results(store)
        return [{"path": path, "reason": reason} for path, reason in store.damaged.listing()]

    gr.api(damaged_files, api_name="damaged_files")

    outputs[list(SECTIONS).index(q.FAILED)].select(show_log, inputs=summary, outputs=failed_log,
                                                    api_visibility="private")
