"""The Submit tab: who you are (signed in with Hugging Face, or the local user), a Hub model id, an optional revision,
a precision, a model type and thinking (auto: the chat template's own; on or off: its enable_thinking switch); the
Submit button (the `/submit` API endpoint) answers with one Markdown message (a queued request: with its plan's
one-line summary); the See the plan button (the `/plan` API endpoint) runs the same checks up to the plan and shows
it, per benchmark, with nothing queued; your own requests with their status below.
The submitter is the visitor of the session (leaderboard.submissions.identity), never a value the client sends."""
from __future__ import annotations

import logging

import gradio as gr

from leaderboard.board.columns import schema
from leaderboard.board.estimates import estimate
from leaderboard.board.space_copy import BoardCopy
from leaderboard.formatting import escape_markdown as md
from leaderboard.formatting import format_number
from leaderboard.ui.about import families_sentence
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import budget_notes, identity
from leaderboard.submissions.cost_plans import as_cost_plan
from leaderboard.submissions.outcomes import shown_request
from leaderboard.submissions.records import MODEL_TYPES, PRECISIONS, THINKING, all_requests
from leaderboard.submissions.views import MY_COLUMNS, my_requests_frame

log = logging.getLogger(__name__)

EMPTY_ID = ("**Please enter a model id**, the Hugging Face Hub name of the model such as `org/model-name`; "
            "nothing was submitted.")

HELP = ("Enter the id of a public model on the Hugging Face Hub (`org/model-name`, or paste its Hub page's URL). "
        "The model is pinned to the commit of the revision you give (a branch, tag or commit sha; empty: `main`, or "
        "the `/tree/<revision>` of a pasted URL), must keep its weights in safetensors, must not need remote code "
        "and may have at most {max_params}B parameters. "
        "**auto** precision means bfloat16 on a GPU and float32 on the CPU. **Thinking** on or off sets the "
        "enable_thinking switch of a chat template that takes one (auto: the template's own); a run each way is "
        "a row of its own, tagged.")
LOCAL_HINT = (" **Local folders work here too:** give a model folder's absolute path on this machine instead of a "
              "Hub id (no Hub access needed; `python tools/tiny_model.py ./tiny-llava` builds a tiny one to try).")
LIMITS = ("Each person may have at most {pending} pending request(s) at once and submit at most {week} in any 7 days; "
          "a request you submitted can be cancelled in the Queue tab while it is pending or running.")


def _checked(settings: Settings, store: Store, model_id, revision, precision, model_type, by: identity.Visitor,
             queue: bool, thinking=None):
    """leaderboard.submissions.checks.submit of the form's values (`queue` False: checked and planned, nothing
    queued): its Outcome, or the Markdown message that stands for one (signed out, no model id, an internal error)."""
    model_id = (model_id or "").strip() if isinstance(model_id, str) else ""
    revision = (revision or "").strip() if isinstance(revision, str) else ""
    if not by.signed_in:
        return f"**Not submitted.** {identity.SIGN_IN_NEEDED}"
    if not model_id:
        return EMPTY_ID
    try:
        from leaderboard.submissions.checks import submit  # imported lazily: it pulls in the Hub client
    except ImportError:  # pragma: no cover - only before the submission module exists
        log.exception("leaderboard.submissions.checks is not importable")
        return "Submissions are not open on this leaderboard yet; nothing was submitted."
    try:
        return submit(settings, store, model_id, revision=revision, precision=precision, model_type=model_type,
                      by=by, queue=queue, thinking=thinking)  # a precision or model type left out (null) is refused;
        # thinking left out (an older client): the Space's LEADERBOARD_THINKING
    except Exception:  # submit() refuses with an Outcome; this is a bug or an outage, never the visitor's fault
        log.exception("submit() raised for %r", model_id[:200])
        return "The submission could not be processed because of an internal error; nothing was queued. Please try again later."


def submit_message(settings: Settings, store: Store, model_id: str, revision: str = "", precision: str = "auto",
                   model_type: str = "pretrained", by: identity.Visitor = identity.SIGNED_OUT,
                   copy: BoardCopy | None = None, thinking: str | None = None) -> str:
    """Validate and queue a submission by the visitor `by`; the Markdown message shown under the form (a queued
    request: with what it will probably take, from the earlier runs on `copy`, the Space's copy of the board, and its
    plan's one-line summary)."""
    outcome = _checked(settings, store, model_id, revision, precision, model_type, by, queue=True, thinking=thinking)
    if isinstance(outcome, str):
        return outcome
    # Outcome.message is Markdown-safe by contract (submission escapes the user's text in it).
    message = outcome.message or ("Submitted." if outcome.ok else "The submission was refused.")
    if outcome.ok and outcome.position and "position" not in message.lower():
        message += f" Position {outcome.position} in the queue."
    if outcome.ok and not outcome.duplicate and outcome.request is not None:
        message += " " + estimate_sentence(settings, outcome.request, copy)
        plan = as_cost_plan(outcome.request.cost_plan)
        message += f" Its plan: {md(plan.summary, limit=400)}." if plan is not None else " Its run was not planned."
    return message if outcome.ok else f"**Not submitted.** {message}"


PLAN_COLUMNS = ("Benchmark", "Items", "Generations", "Option scorings", "Answer tokens at most", "Judge calls")


def plan_table(run) -> str:
    """The plan per benchmark (an evaluator.api.RunPlan) as a Markdown table, every cell escaped."""
    rows = ["| " + " | ".join(PLAN_COLUMNS) + " |", "|" + "---|" * len(PLAN_COLUMNS)]
    for b in run.benchmarks:
        if b.skipped or b.workload is None:
            cells = [md(b.name, 60), md(b.skipped or "not counted", limit=120), "", "", "", ""]
        else:
            cells = [md(b.name, 60), f"{b.workload.items:,}", f"{b.total('generations'):,.0f}",
                     f"{b.total('scorings'):,.0f}", f"{b.total('new_tokens') + b.total('thinking'):,.0f}",
                     f"{b.total('judge_calls'):,.0f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def plan_message(settings: Settings, store: Store, model_id: str, revision: str = "", precision: str = "auto",
                 model_type: str = "pretrained", by: identity.Visitor = identity.SIGNED_OUT,
                 thinking: str | None = None) -> str:
    """A model's plan as this leaderboard would run it, checked as a submission is (up to its plan) with nothing
    queued, as Markdown: its one-line summary, a table per benchmark and what the price rests on; a model already
    submitted: that request's answer and its recorded plan; a refusal as Submit would answer it."""
    outcome = _checked(settings, store, model_id, revision, precision, model_type, by, queue=False, thinking=thinking)
    if isinstance(outcome, str):
        return outcome.replace("**Not submitted.**", "**No plan.**")
    if not outcome.ok:
        return f"**No plan.** {outcome.message}"
    plan = as_cost_plan(outcome.request.cost_plan) if outcome.request is not None else None
    if outcome.duplicate:
        return outcome.message + (f" Its plan: {md(plan.summary, limit=400)}." if plan is not None else
                                  " It was queued before runs were planned.")
    if plan is None or outcome.plan is None:
        return f"{outcome.message} Its run could not be planned."
    return (f"**The plan** of {shown_request(outcome.request)}: {md(plan.summary, limit=400)}. Nothing was queued; "
            f"press Submit to queue it.\n\n{plan_table(outcome.plan)}\n\nThinking: "
            f"{md(outcome.plan.thinking_note, limit=300)}. Price: {md(plan.basis, limit=300)}. {figures_sentence(plan)}"
            "Every answer is counted at its full budget, so the time and cost are upper bounds.")


def figures_sentence(plan) -> str:
    """"Engine: vllm; its figures: prompts published (https://...), ... " from a recorded cost plan ("" without
    marks)."""
    if not plan.figures:
        return ""
    marks = "; ".join(f"{md(name, 40)} {md(mark, 200)}" for name, mark in plan.figures.items())
    return f"Engine: {md(plan.engine, 40)}; its figures: {marks}. "


def estimate_sentence(settings: Settings, request, copy: BoardCopy | None) -> str:
    """What a queued request will probably take (leaderboard.board.estimates), or that there is no estimate yet."""
    try:
        raw = copy.frame() if copy is not None else None
        return estimate(settings, schema(settings.benchmarks), request, raw).sentence()
    except Exception:  # noqa: BLE001 - the request is queued; only its estimate is missing
        log.exception("the estimate of %s failed", request.key)
        return "No estimate yet of its time and cost."


def my_requests(settings: Settings, store: Store, by: identity.Visitor):
    """The visitor's own requests (an empty table when signed out or when the queue cannot be read)."""
    if not by.signed_in:
        return my_requests_frame([], "")
    try:
        requests = all_requests(store)  # a request waiting for the Jobs budget says so, and until about when
        return my_requests_frame(requests, by.name, limit=settings.limit,
                                 waiting=budget_notes.notes_for(settings, store, requests),
                                 judge_stall_s=settings.judge_stall_seconds)
    except Exception as error:  # noqa: BLE001 - an outage of the store must not break the tab
        log.warning("the queue could not be read: %s", settings.scrub(str(error)))
        return my_requests_frame([], "")


def build(demo: gr.Blocks, settings: Settings, store: Store, copy: BoardCopy | None = None) -> None:
    """Lay out the tab inside the current Blocks context and wire its events (`copy`: the Space's copy of the board,
    for the estimates)."""
    copy = copy or BoardCopy(store, schema(settings.benchmarks))

    def on_submit(model_id: str, revision: str, precision: str, model_type: str, thinking: str | None,
                  profile: gr.OAuthProfile | None) -> str:
        by = identity.visitor(settings, profile)
        return submit_message(settings, store, model_id, revision, precision, model_type, by=by, copy=copy,
                              thinking=thinking)

    def on_plan(model_id: str, revision: str, precision: str, model_type: str, thinking: str | None,
                profile: gr.OAuthProfile | None) -> str:
        return plan_message(settings, store, model_id, revision, precision, model_type,
                            by=identity.visitor(settings, profile), thinking=thinking)

    def on_show(profile: gr.OAuthProfile | None):
        by = identity.visitor(settings, profile)
        return by.describe(), my_requests(settings, store, by)

    def on_refresh(profile: gr.OAuthProfile | None):
        return my_requests(settings, store, identity.visitor(settings, profile))

    who = gr.Markdown(elem_id="submit-who")
    gr.Markdown(HELP.format(max_params=format_number(settings.max_params_billions)) + " "
                + families_sentence(settings.space_id) + (LOCAL_HINT if settings.allow_local_models else ""),
                elem_id="submit-help")
    with gr.Row():
        model_id = gr.Textbox(value="", label="Model id", placeholder="org/model-name", max_length=300, scale=3,
                              elem_id="submit-model")
        revision = gr.Textbox(value="", label="Revision (optional)", placeholder="main", max_length=300, scale=2,
                              elem_id="submit-revision")
    with gr.Row():
        precision = gr.Dropdown(choices=list(PRECISIONS), value=PRECISIONS[0], label="Precision",
                                elem_id="submit-precision")
        model_type = gr.Dropdown(choices=list(MODEL_TYPES), value=MODEL_TYPES[0], label="Model type",
                                 elem_id="submit-type")
        thinking = gr.Dropdown(choices=list(THINKING), value=settings.thinking if settings.thinking in THINKING
                               else THINKING[0], label="Thinking", elem_id="submit-thinking",
                               info="auto: the chat template's own; on/off: its enable_thinking switch")
    with gr.Row():
        button = gr.Button("Submit", variant="primary", elem_id="submit-button")
        see_plan = gr.Button("See the plan", elem_id="submit-plan-button")
    message = gr.Markdown(elem_id="submit-message")
    gr.Markdown(LIMITS.format(pending=settings.max_pending_per_user, week=settings.max_submissions_per_week))
    with gr.Row():
        gr.Markdown("### Your requests")
        refresh = gr.Button("Refresh", size="sm", scale=0, min_width=120, elem_id="submit-mine-refresh")
    mine = gr.Dataframe(value=my_requests_frame([], ""), headers=list(MY_COLUMNS), datatype="str", interactive=False,
                        wrap=True, max_height=400, show_label=False, label="Your requests", elem_id="submit-mine")
    demo.load(on_show, outputs=[who, mine], api_visibility="private", show_progress="hidden")
    refresh.click(on_refresh, outputs=mine, api_visibility="private", show_progress="hidden")
    button.click(
        on_submit,
        inputs=[model_id, revision, precision, model_type, thinking],
        outputs=message,
        api_name="submit",
        api_description="Submit a model for evaluation as the signed-in visitor; returns a Markdown message "
                        "(queued: with the position).",
        concurrency_limit=4,
    ).then(on_refresh, outputs=mine, api_visibility="private", show_progress="hidden")
    see_plan.click(on_plan, inputs=[model_id, revision, precision, model_type, thinking], outputs=message,
                   api_name="plan",
                   api_description="Check a model as Submit does and show its run's plan (hours, dollars, per "
                                   "benchmark) without queueing anything; returns a Markdown message.",
                   concurrency_limit=4)
    model_id.submit(on_submit, inputs=[model_id, revision, precision, model_type, thinking], outputs=message,
                    api_visibility="private", concurrency_limit=4).then(
        on_refresh, outputs=mine, api_visibility="private", show_progress="hidden")
