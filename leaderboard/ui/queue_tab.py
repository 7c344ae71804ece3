"""The Queue tab: pending, running (with progress), finished, failed (reason + log tail) and cancelled requests,
and a box to cancel a PENDING request. Refreshed on load, every REFRESH_SECONDS and on the Refresh button
(that event is the `/queue` API endpoint: five tables, in the order of SECTIONS)."""
from __future__ import annotations

import logging
from pathlib import PurePosixPath

import gradio as gr
import pandas as pd

from leaderboard import request_queue as q
from leaderboard.board_file import published_results
from leaderboard.formatting import escape_markdown
from leaderboard.queue_views import QUEUE_COLUMNS, queue_frame
from leaderboard.settings import Settings
from leaderboard.store import Store

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
# fixed column widths (in QUEUE_COLUMNS order) where a long text must wrap inside the page, not widen the table:
# the Running table's Progress stays in view at 1400 px
_WIDTHS = {q.RUNNING: ("15%", "29%", "9%", "6%", "8%", "8%", "8%", "6%", "11%")}

HELP = ("Requests move from **Pending** to **Running** when the evaluator claims them, then to **Finished** (the "
        "model appears on the board) or **Failed** (with the reason and the last lines of the worker's log). "
        "A running request shows which benchmark it is on, its items done, speed and time left, and when the "
        "evaluator last reported; a run that was stopped (a restart) starts again where it stopped, reusing the "
        "answers it had (\"resumed: ... items reused\"). A pending request can be cancelled below. Click a failed "
        "run to read its log tail.")


DAMAGED_COLUMNS = ("Path", "Reason")
DAMAGED_HELP = ("Files of the store that could not be read (not JSON, not UTF-8, a field missing or of the wrong kind). "
                "Everything else keeps working: these are left out of the queue and the board until someone with "
                "write access to the store repairs or removes them. Their content is never shown here.")


def damaged_frame(damaged: list) -> pd.DataFrame:
    """The damaged files as a table of text (path and reason, nothing of their content)."""
    rows = [(str(path), str(reason)) for path, reason in damaged]
    return pd.DataFrame(rows, columns=list(DAMAGED_COLUMNS))


def _section_label(status: str, count: int) -> str:
    return f"{SECTIONS[status]} ({count})"


def _pending_choices(pending: pd.DataFrame | None) -> list[tuple[str, str]]:
    if pending is None or len(pending) == 0 or "Key" not in pending.columns:
        return []
    choices = []
    for _, row in pending.iterrows():
        key = str(row["Key"] or "")
        if key:
            choices.append((f"{row['Model']} @ {row['Revision']} ({row['Precision']})", key))
    return choices


def cancel_request(store: Store, key: str) -> str:
    """Cancel the PENDING request named by its key (<org>/<model>/<sha12>_<precision>); a Markdown message."""
    key = (key or "").strip()
    if key.startswith("requests/"):
        key = key[len("requests/"):]
    if key.endswith(".json"):
        key = key[: -len(".json")]
    if not key:
        return "Pick a pending request (or paste its key) first."
    if not q.is_request_key(key) or any(part in (".", "..") for part in PurePosixPath(key).parts):
        return (f"**{escape_markdown(key, limit=120)}** is not a request key; a key looks like "
                "`org/model/0123456789ab_auto` (see the Key column).")
    try:
        done, message = q.cancel(store, f"requests/{key}.json")
    except (ValueError, OSError, TimeoutError) as error:
        log.warning("cancel of %s failed: %s", key, error)
        return "The request could not be cancelled right now; please try again."
    return ("Done: " if done else "Not cancelled: ") + escape_markdown(message, limit=300)


def build(demo: gr.Blocks, settings: Settings, store: Store) -> None:
    """Lay out the tab inside the current Blocks context and wire its events."""

    def frames() -> tuple:
        """The five tables (the /queue endpoint's outputs), then a summary kept in a gr.State (clients skip it)."""
        try:
            requests, problem = q.all_requests(store), ""
        except Exception as error:  # noqa: BLE001 - an outage of the store must not break the tab
            log.warning("the queue could not be read: %s", error)
            requests, problem = [], "The queue could not be read right now; it is tried again in a few seconds."
        shown = tuple(queue_frame(requests, status) for status in SECTIONS)
        failed = shown[list(SECTIONS).index(q.FAILED)]
        summary = {
            "counts": [len(df) for df in shown],
            "choices": _pending_choices(shown[0]),
            "failed": {str(row["Key"]): f"{row['Model']} @ {row['Revision']}: {row['Error']}\n\n{row['Log tail']}"
                       for _, row in failed.iterrows()},
            "damaged": store.damaged.listing(),
            "problem": problem,
        }
        return (*shown, summary)

    def decorate(summary: dict | None):
        summary = summary or {}
        counts = summary.get("counts") or [0] * len(SECTIONS)
        labels = [gr.Accordion(label=_section_label(status, n)) for status, n in zip(SECTIONS, counts)]
        damaged = summary.get("damaged") or []
        return (*labels, gr.Dropdown(choices=summary.get("choices") or []),
                gr.Accordion(label=f"Damaged files ({len(damaged)})", open=bool(damaged)),
                damaged_frame(damaged), summary.get("problem") or "")

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
        wrapped = status in (q.RUNNING, q.FINISHED, q.FAILED)  # long progress texts, notes and reasons wrap
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
                                       label="Cancel a pending request",
                                       info="Pick one, or paste its key (org/model/sha12_precision)", scale=4,
                                       elem_id="queue-cancel-pick")
                    cancel = gr.Button("Cancel request", variant="stop", scale=1, min_width=140,
                                       elem_id="queue-cancel")
                cancel_message = gr.Markdown(elem_id="queue-cancel-message")
        accordions.append(accordion)
        outputs.append(table)

    with gr.Accordion(label="Damaged files (0)", open=False, elem_id="queue-section-damaged") as damaged_section:
        gr.Markdown(DAMAGED_HELP)
        damaged_table = gr.Dataframe(value=damaged_frame([]), headers=list(DAMAGED_COLUMNS), datatype="str",
                                     interactive=False, wrap=True, max_height=300, show_label=False,
                                     label="Damaged files", elem_id="queue-damaged")
    problem = gr.Markdown(elem_id="queue-problem")
    decorated = [*accordions, pick, damaged_section, damaged_table, problem]

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

    cancel.click(
        lambda key: cancel_request(store, key),
        inputs=pick,
        outputs=cancel_message,
        api_name="cancel",
        api_description="Cancel a PENDING request by its key; returns a message.",
    ).then(lambda: None, outputs=pick, api_visibility="private", show_progress="hidden").then(
        frames, outputs=[*outputs, summary], api_visibility="private", show_progress="hidden").then(
        decorate, inputs=summary, outputs=decorated, api_visibility="private", show_progress="hidden")

    def damaged_files() -> list[dict]:
        """The store's damaged files, each {path, reason}: the requests and results are read now to find them."""
        q.all_requests(store)
        published_results(store)
        return [{"path": path, "reason": reason} for path, reason in store.damaged.listing()]

    gr.api(damaged_files, api_name="damaged_files")

    outputs[list(SECTIONS).index(q.FAILED)].select(show_log, inputs=summary, outputs=failed_log,
                                                    api_visibility="private")
