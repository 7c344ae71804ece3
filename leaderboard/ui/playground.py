"""The Judge playground tab: try the leaderboard's judge on one answer to one question, live.

Its modes are the graders that the judged benchmarks declare on their cards (evaluator.api.graders()): each says
how to build the judge's messages from (question, gold, candidate), how to read the judge's reply into a Verdict,
which questions it offers, and what its gold box holds. A visitor picks the mode, then a question of the mode's
suite (a searchable dropdown, or "Random question"; its image shown, through the card's item view, when it has
one) or types a question and its gold answer, writes a candidate
answer (or loads the stored answer of a finished run from its details, through the card's item view), and
presses Grade. The judge (settings.judge, built once and lazily, with a short timeout and few retries) streams its
reply into the raw output; then the verdict, the rationale and the judge's name show.

The Grade button is the `/grade` API endpoint: inputs (mode, question, gold, candidate); outputs (message, verdict,
rationale, judge, raw judge output). Every text shown comes from plain textboxes, except the message, whose user-
or judge-derived parts are escaped Markdown. Refusals (no judge, not signed in, empty or too long inputs, a rate
limit) call no judge and count nothing.

Who grades is decided on the server, whatever session or client calls `/grade`: the visitor of the OAuth session
(leaderboard.submissions.identity; Gradio injects the profile and the request, they are no API inputs) and the client
address as the Space's proxy reports it (leaderboard.ui.rate_limits.client_address, LEADERBOARD_PROXY_HOPS). With
sign-in required, a signed-out visitor may grade only with LEADERBOARD_PLAYGROUND_ANONYMOUS. Each grading counts, over
the last 60 s, against the signed-in user (LEADERBOARD_PLAYGROUND_PER_MINUTE), the client address (the same limit) and
the whole Space (LEADERBOARD_PLAYGROUND_BUDGET_PER_MINUTE); it is refused when any is full, and the refusal names that
limit and says in how many seconds to try again. Without sign-in every visitor is the local user, so the address and the
whole-Space limits hold there. The limiter, the suites and the judge live per app (per build_app, closed over by the
handlers), never in module-global state.
"""
from __future__ import annotations

import io
import logging
import random
import threading

import gradio as gr
import pandas as pd

from evaluator import api
from leaderboard.board.columns import schema
from leaderboard.board.file import load_board
from leaderboard.explorer.details_cache import details_path
from leaderboard.formatting import escape_markdown
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions.identity import Visitor, visitor
from leaderboard.ui.rate_limits import Bucket, Refusal, SlidingWindow, address_key, client_address

log = logging.getLogger(__name__)

JUDGE_TIMEOUT = 30.0  # seconds per attempt: a live UI, not a batch run
JUDGE_DEADLINE = 120.0  # seconds for a whole grading at most (LEADERBOARD_ENDPOINT_DEADLINE, when shorter)
JUDGE_RETRIES = 1
JUDGE_BACKOFF = 0.5
JUDGE_MAX_TOKENS = 256
WINDOW_SECONDS = 60.0
MAX_LIMITED_KEYS = 10_000  # users and addresses the limiter remembers at most (the least recent are forgotten)

INTRO = ("Try the leaderboard's judge on one answer to one question, in one of {n} modes.\n\n")
HOW = ("\n\nChoose the mode, pick a question of its suite (or press **Random question**), or type your own question "
       "and its answers; write a candidate answer, or load the stored answer of an evaluated model; then press "
       "**Grade**.")
NO_JUDGE = ("**No judge is configured** on this leaderboard (`LEADERBOARD_JUDGE` is empty), so answers cannot be "
            "graded here.")
NO_MODE = "**No benchmark of this leaderboard has a judge grader**; there is nothing to try here."
EMPTY_FIELD = "**Please fill in the {field}**; nothing was sent to the judge."
TOO_LONG = ("**The {field} is too long** ({length:,} characters; at most {limit:,}); nothing was sent to the judge.")
SIGN_IN_TO_GRADE = ("Please **sign in with Hugging Face** (the button at the top of the page) to use the judge "
                    "playground; nothing was sent to the judge.")
RATE_LIMITED = {  # by the kind of the full bucket
    "user": "**Too many gradings**: at most {limit} per minute for one signed-in user.",
    "address": "**Too many gradings**: at most {limit} per minute from one client address.",
    "space": ("**Too many gradings on this Space**: at most {limit} per minute from all visitors together (the "
              "judge's budget)."),
}
TRY_AGAIN = " Please wait {wait} s and try again; nothing was sent to the judge."
GRADING = "Grading…"
DONE = "Graded."
NOT_GRADED = ("**Not graded**: {label}. The judge replied, but its reply holds no verdict this mode can read; it is "
              "shown below as sent, and a run would count this answer ungraded (left out of the scores).")
TRIAL = (" This judge is a **trial judge** (a local model under 7B parameters): it shows the machinery works; its "
         "grades are not scores.")


def question_label(entry: dict, width: int = 90) -> str:
    """"<id> · <question text>" (whitespace collapsed, cut at `width`)."""
    text = " ".join(str(entry.get("question") or "").split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{entry['question_id']} · {text}"


def buckets(settings: Settings, who: Visitor, address: str) -> list[Bucket]:
    """The limits one grading counts against: the signed-in user's (not the local user's: without sign-in every
    visitor is the local user), the client address's, and the whole Space's."""
    per_minute = settings.playground_per_minute
    mine = [Bucket("user", who.name.lower(), per_minute)] if who.signed_in and not who.local else []
    return mine + [Bucket("address", address_key(address), per_minute),
                   Bucket("space", "", settings.playground_budget_per_minute)]


def rate_limited(refusal: Refusal) -> str:
    """The message of a refusal by the limiter: which limit, and in how many seconds to try again."""
    text = RATE_LIMITED.get(refusal.bucket.kind, RATE_LIMITED["space"])
    return text.format(limit=refusal.bucket.limit) + TRY_AGAIN.format(wait=refusal.wait)


def may_grade(settings: Settings, who: Visitor) -> bool:
    """Whether a visitor may grade at all: with sign-in required, only signed in (or anyone, with
    LEADERBOARD_PLAYGROUND_ANONYMOUS)."""
    return who.signed_in or not settings.require_sign_in or settings.playground_anonymous


def _same_text(a, b) -> bool:
    return " ".join(str(a).split()) == " ".join(str(b).split())


def stored_answer(frame: pd.DataFrame, view: api.ItemView, entry: dict) -> tuple[str | None, str]:
    """(the answer a run stored for `entry`, or None, and why not): its main row's parsed answer, when the run
    asked the same question under that id."""
    rows = frame[frame["question_id"] == entry["question_id"]]
    if view.main_rows and view.main_rows[0] in frame.columns:
        rows = rows[rows[view.main_rows[0]] == view.main_rows[1]]
    if len(rows) == 0:
        return None, "missing"
    row = rows.iloc[0]
    asked = row.get(view.question) if view.question and view.question in frame.columns else None
    if isinstance(asked, str) and asked.strip() and not _same_text(asked, entry["question"]):
        return None, "different"
    answer = row.get(view.parsed_answer) if view.parsed_answer in frame.columns else None
    return ("" if answer is None or (isinstance(answer, float) and pd.isna(answer)) else str(answer)), ""


def build(demo: gr.Blocks, settings: Settings, store: Store) -> None:
    """Lay out the tab inside the current Blocks context and wire its events."""
    graders = api.graders()
    modes = list(graders)
    lock = threading.Lock()
    cache: dict = {"suites": {}}  # this app's lazily loaded judge and suites (per build_app, not module-global)
    limiter = SlidingWindow(WINDOW_SECONDS, max_keys=MAX_LIMITED_KEYS)  # this app's gradings, from every session

    def grader_of(mode: str | None):
        return graders.get(mode or "") or graders[modes[0]]

    # -- the suites ---------------------------------------------------------------------------------------------
    def suite(mode: str | None) -> dict:
        """{"entries": [{question_id, question, gold}], "by_id", "note"} of a mode, loaded on first use."""
        mode = mode if mode in graders else modes[0]
        with lock:
            if mode not in cache["suites"]:
                entries, note = grader_of(mode)[1].questions(settings.suite, dict(settings.sources))
                cache["suites"][mode] = {"entries": entries, "by_id": {e["question_id"]: e for e in entries},
                                         "note": note}
            return cache["suites"][mode]

    def by_id(question_id: str | None, mode: str | None) -> dict | None:
        return suite(mode)["by_id"].get(question_id or "")

    def choices(mode: str | None) -> list[tuple[str, str]]:
        return [(question_label(e), e["question_id"]) for e in suite(mode)["entries"]]

    def suite_choices(mode: str | None):
        return gr.Dropdown(choices=choices(mode)), escape_markdown(suite(mode)["note"], limit=None)

    def on_mode(mode: str | None):
        """The mode changed: the mode's suite in the dropdown (nothing picked), its note, the gold box's label; the
        last grading's message, verdict, rationale, judge and raw output cleared."""
        return (gr.Dropdown(choices=choices(mode), value=None), escape_markdown(suite(mode)["note"], limit=None),
                gr.Textbox(label=grader_of(mode)[1].gold_label), "", "", "", "", "")

    def picture_of(entry: dict, mode: str | None):
        """The question's image through the card's item view (None without one, or when it cannot be read)."""
        view = grader_of(mode)[0].item_view
        if view.picture is None or not view.image or not entry.get(view.image):
            return None
        try:
            return view.picture(entry, settings.images_dir)
        except Exception:  # noqa: BLE001 - the question can be graded without its image
            log.warning("playground: the image of %s could not be read", entry.get("question_id"), exc_info=True)
            return None

    def on_pick(question_id: str | None, mode: str | None):
        """A question of the suite picked: its text, its gold and its image (hidden when it has none)."""
        entry = by_id(question_id, mode)
        if entry is None:
            return gr.Textbox(), gr.Textbox(), gr.Image(value=None, visible=False)
        picture = picture_of(entry, mode)
        return entry["question"], entry["gold"], gr.Image(value=picture, visible=picture is not None)

    def on_random(current: str | None, mode: str | None):
        """Another question of the mode's suite, picked at random (never the one shown, so the pick changes)."""
        others = [e["question_id"] for e in suite(mode)["entries"] if e["question_id"] != current]
        return random.choice(others) if others else current

    # -- stored answers of finished runs ------------------------------------------------------------------------
    def runs_with_details(mode: str | None) -> list[tuple[str, str]]:
        name = f"{grader_of(mode)[0].name}.parquet"
        try:
            board = load_board(store, schema(settings.benchmarks))
            present = set(store.list("details", suffix=name))
        except Exception:  # noqa: BLE001 - the playground works without stored answers
            log.exception("playground: could not list the runs with %s details", name)
            return []
        return [(f"{row.get('model') or row.get('key')} ({row.get('key')})", str(row.get("key")))
                for _, row in board.iterrows() if row.get("key") and f"details/{row.get('key')}/{name}" in present]

    def run_choices(mode: str | None):
        return gr.Dropdown(choices=runs_with_details(mode), value=None)

    def on_run(run_key: str | None, question_id: str | None, mode: str | None):
        if not run_key:
            return gr.Textbox(), ""
        card, _ = grader_of(mode)
        entry = by_id(question_id, mode)
        if entry is None:
            return gr.Textbox(), "**Pick a question of the suite first** to load a model's stored answer to it."
        shown_key, shown_id = escape_markdown(run_key), escape_markdown(entry["question_id"])
        try:
            data = store.read_bytes(details_path(run_key, card.name))
            frame = pd.read_parquet(io.BytesIO(data)) if data is not None else None
        except Exception:  # noqa: BLE001
            log.exception("playground: unreadable %s details for %s", card.name, run_key)
            frame = None
        if frame is None or "question_id" not in frame.columns:
            return gr.Textbox(), f"**The stored answers of {shown_key} could not be read.**"
        answer, why = stored_answer(frame, card.item_view, entry)
        if why == "missing":
            return gr.Textbox(), (f"**{shown_key} has no stored answer for {shown_id}**"
                                  " (its run may have used a smaller limit or another suite).")
        if why == "different":
            return gr.Textbox(), (f"**{shown_key} answered a different question under the id {shown_id}** "
                                  "(its run used another suite).")
        return answer, f"Loaded the stored answer of {shown_key} to {shown_id}."

    # -- the judge ----------------------------------------------------------------------------------------------
    def judge():
        """The judge, built once; raises (ValueError, OSError, ...) when it cannot be built."""
        with lock:
            if "judge" not in cache:
                limits = api.EndpointLimits(min(settings.endpoint_deadline, JUDGE_DEADLINE),
                                            max(1, int(settings.endpoint_max_reply_mb * 1024 * 1024)))
                cache["judge"] = api.make_judge(settings.judge, settings.judge_bearer,
                                                timeout=JUDGE_TIMEOUT, max_retries=JUDGE_RETRIES,
                                                backoff=JUDGE_BACKOFF, concurrency=1, limits=limits)
            return cache["judge"]

    redact = settings.scrub

    def refusal(mode: str, question: str, gold: str, candidate: str, who: Visitor) -> str | None:
        """Why nothing is sent to the judge, before the rate limits, or None."""
        if mode not in graders:
            return "**Unknown grading mode**; choose one of: " + ", ".join(modes) + "."
        if not settings.judge:
            return NO_JUDGE
        if not may_grade(settings, who):
            return SIGN_IN_TO_GRADE
        grader = graders[mode][1]
        fields = (("question", question), (grader.gold_field, gold), ("candidate answer", candidate))
        for name, value in fields:
            if not isinstance(value, str) or not value.strip():
                return EMPTY_FIELD.format(field=name)
        for name, value in fields:
            if len(value) > settings.playground_max_chars:
                return TOO_LONG.format(field=name, length=len(value), limit=settings.playground_max_chars)
        return None

    def admit(mode: str, question: str, gold: str, candidate: str, who: Visitor, address: str) -> str | None:
        """Why this grading is refused (nothing counted), or None once it is counted against every limit."""
        refused = refusal(mode, question, gold, candidate, who)
        if refused:
            return refused
        limited = limiter.acquire(buckets(settings, who, address))
        return rate_limited(limited) if limited else None

    def grade(mode: str, question: str, gold: str, candidate: str, profile: gr.OAuthProfile | None,
              request: gr.Request):
        """Generator: (message, verdict, rationale, judge, raw) as the judge's reply streams in. `profile` and
        `request` are injected by Gradio (the OAuth session's user, the HTTP request), never sent by a client."""
        who = visitor(settings, profile)
        refused = admit(mode, question, gold, candidate, who, client_address(request, settings.trusted_proxy_hops))
        if refused:
            yield refused, "", "", "", ""
            return
        grader = graders[mode][1]
        try:
            the_judge = judge()
        except Exception as exc:  # noqa: BLE001 - a bad spec or a model that will not load
            log.warning("playground: the judge could not be built: %s", redact(str(exc)))
            yield "**The judge could not be loaded**: " + escape_markdown(redact(str(exc)), 300), "", "", "", ""
            return
        name = api.judge_name(getattr(the_judge, "identity", None))
        trial = getattr(the_judge, "trial", False) is True
        if trial:
            name += " — trial judge, not for scores"
        messages = grader.messages(question.strip(), gold.strip(), candidate.strip())
        raw = ""
        yield GRADING, "", "", name, raw
        try:
            for piece in the_judge.stream(messages, max_tokens=JUDGE_MAX_TOKENS, temperature=0.0):
                raw += piece
                yield GRADING, "", "", name, raw
        except (api.JudgeError, api.JudgeStalled) as exc:
            what = "could not be reached" if not raw else "broke off"
            yield ("**The judge " + what + "**: " + escape_markdown(redact(str(exc)), 300),
                   grader.broken_label if raw else "", "", name, raw)
            return
        except Exception:  # noqa: BLE001 - never a traceback in the page
            log.exception("playground: the judge failed")
            yield "**The judge failed** because of an internal error; please try again later.", "", "", name, raw
            return
        verdict = grader.verdict(raw)
        said = DONE if verdict.score is not None else NOT_GRADED.format(label=escape_markdown(verdict.label, 200))
        yield said + (TRIAL if trial else ""), verdict.label, verdict.rationale, name, raw

    # -- layout -------------------------------------------------------------------------------------------------
    if not modes:
        gr.Markdown(NO_MODE)
        return
    gr.Markdown(INTRO.format(n=len(modes)) + "\n".join(f"- {grader.help}" for _, grader in graders.values()) + HOW)
    mode = gr.Radio(choices=modes, value=modes[0], label="Grading mode", elem_id="judge-mode")
    lazy = settings.suite != "sample"  # a full or lite suite is loaded on the first page load, not at build time
    initial, note = ([], "Loading the suite…") if lazy else (choices(modes[0]), suite(modes[0])["note"])
    with gr.Row(equal_height=True):
        pick = gr.Dropdown(choices=initial, value=None, label="Question of the suite", filterable=True, scale=4,
                           elem_id="judge-question-pick")
        random_button = gr.Button("Random question", scale=1, elem_id="judge-random")
    suite_note = gr.Markdown(escape_markdown(note, limit=None), elem_id="judge-suite-note")
    question_box = gr.Textbox(label="Question", lines=2, max_lines=8, elem_id="judge-question")
    image_box = gr.Image(value=None, type="pil", interactive=False, visible=False, height=240,
                         label="The question's image (the judge sees text only)", elem_id="judge-image")
    gold_box = gr.Textbox(label=grader_of(modes[0])[1].gold_label, lines=1, max_lines=10, elem_id="judge-gold")
    with gr.Row(equal_height=True):
        run_pick = gr.Dropdown(choices=[], value=None, label="Load the stored answer of an evaluated model",
                               filterable=True, scale=4, elem_id="judge-run-pick")
        runs_refresh = gr.Button("Refresh models", size="sm", scale=1, elem_id="judge-runs-refresh")
    candidate_box = gr.Textbox(label="Candidate answer", lines=2, max_lines=8, elem_id="judge-candidate")
    run_note = gr.Markdown("", elem_id="judge-run-note")
    grade_button = gr.Button("Grade", variant="primary", elem_id="judge-grade")
    message = gr.Markdown("", elem_id="judge-message")
    with gr.Row():
        verdict_box = gr.Textbox(label="Verdict", interactive=False, scale=1, elem_id="judge-verdict")
        identity_box = gr.Textbox(label="Judge", interactive=False, scale=2, elem_id="judge-identity")
    rationale_box = gr.Textbox(label="Rationale", interactive=False, lines=2, elem_id="judge-rationale")
    raw_box = gr.Textbox(label="Raw judge output", interactive=False, lines=6, max_lines=20, elem_id="judge-raw")

    # -- events -------------------------------------------------------------------------------------------------
    if lazy:  # one queue with the mode's change, so a slow first load never lists its suite after a later mode's
        demo.load(suite_choices, inputs=mode, outputs=[pick, suite_note], api_visibility="private",
                  show_progress="hidden", concurrency_id="judge-suite")
    mode.change(on_mode, inputs=mode, outputs=[pick, suite_note, gold_box, message, verdict_box, rationale_box,
                                               identity_box, raw_box], api_visibility="private", show_progress="hidden",
                concurrency_id="judge-suite")
    # always_last: a mode chosen while the page's first listing is pending is listed after it, never dropped
    gr.on(triggers=[demo.load, runs_refresh.click, mode.change], fn=run_choices, inputs=mode, outputs=run_pick,
          api_visibility="private", show_progress="hidden", trigger_mode="always_last")
    pick.change(on_pick, inputs=[pick, mode], outputs=[question_box, gold_box, image_box], api_visibility="private",
                show_progress="hidden")
    random_button.click(on_random, inputs=[pick, mode], outputs=pick, api_visibility="private",
                        show_progress="hidden")
    gr.on(triggers=[run_pick.change, pick.change], fn=on_run, inputs=[run_pick, pick, mode],
          outputs=[candidate_box, run_note], api_visibility="private", show_progress="hidden")
    grade_button.click(
        grade,
        inputs=[mode, question_box, gold_box, candidate_box],
        outputs=[message, verdict_box, rationale_box, identity_box, raw_box],
        api_name="grade",
        api_description="Grade a candidate answer with the judge: (mode, question, gold, candidate) -> "
                        "(message, verdict, rationale, judge, raw judge output). Modes: " + ", ".join(modes)
                        + "; each mode's gold box is described on the tab. Limited per signed-in user, per client "
                        "address and for the whole Space, per minute; with sign-in required, signed-out callers are "
                        "refused unless the Space lets anonymous visitors grade.",
        concurrency_limit=4,
    )
