"""The Judge playground tab: grade one answer to one SimpleQA question with the leaderboard's judge, live.

A visitor picks a question of the suite (a searchable dropdown, or "Random question") or types a question and its
gold answer, writes a candidate answer (or loads the stored answer of a finished run), and presses Grade. The judge
(settings.judge, built once and lazily, with a short timeout and few retries) grades it with the project's SimpleQA
grader prompt; the raw output grows as it streams in, then the verdict, the rationale and the judge's identity show.

The Grade button is the `/grade` API endpoint: inputs (mode, question, gold, candidate); outputs (message, verdict,
rationale, judge identity, raw judge output). Every text shown comes from plain textboxes, except the message,
whose user- or judge-derived parts are escaped Markdown. Refusals (no judge, empty or too long inputs, the rate
limit) call no judge. The rate limit counts gradings per browser session (a gr.State) over the last minute.
"""
from __future__ import annotations

import io
import logging
import random
import threading
import time

import gradio as gr
import pandas as pd

from leaderboard import tables
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.ui.submit import escape_markdown

log = logging.getLogger(__name__)

SIMPLEQA_MODE = "SimpleQA grade"
MODES = (SIMPLEQA_MODE,)  # a LAVE rater can join here later
JUDGE_TIMEOUT = 30.0  # seconds per attempt: a live UI, not a batch run
JUDGE_RETRIES = 1
JUDGE_BACKOFF = 0.5
JUDGE_MAX_TOKENS = 256
WINDOW_SECONDS = 60.0

VERDICTS = {"A": "A CORRECT", "B": "B INCORRECT", "C": "C NOT ATTEMPTED"}
UNGRADED = "ungraded: the judge's reply had no grade line"

HELP = ("Try the leaderboard's judge on one SimpleQA question. Pick a question of the suite (or press **Random "
        "question**), or type your own question and its gold answer; write a candidate answer, or load the stored "
        "answer of an evaluated model; then press **Grade**. The judge grades it with the same prompt the "
        "leaderboard uses: **A** correct, **B** incorrect, **C** not attempted.")

NO_JUDGE = ("**No judge is configured** on this leaderboard (`LEADERBOARD_JUDGE` is empty), so answers cannot be "
            "graded here.")
EMPTY_FIELD = "**Please fill in the {field}**; nothing was sent to the judge."
TOO_LONG = ("**The {field} is too long** ({length:,} characters; at most {limit:,}); nothing was sent to the judge.")
RATE_LIMITED = ("**Too many gradings**: at most {limit} per minute from one browser session. Please wait "
                "{wait} s and try again.")
UNKNOWN_MODE = "**Unknown grading mode**; choose one of: " + ", ".join(MODES) + "."
GRADING = "Grading…"
DONE = "Graded."


def identity_text(identity: dict | None) -> str:
    """The judge named for people: endpoint + model, or local model + revision (never a token)."""
    identity = identity or {}
    if identity.get("kind") == "endpoint":
        return f"endpoint {identity.get('base_url', '?')} · model {identity.get('model', '?')}"
    if identity.get("kind") == "local":
        return f"local model {identity.get('model', '?')} @ {identity.get('revision') or 'unpinned revision'}"
    return ", ".join(f"{k}={v}" for k, v in identity.items()) or "unknown judge"


def question_label(question: dict, width: int = 90) -> str:
    text = " ".join(question["problem"].split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{question['question_id']} · {text}"


def recent(stamps: list[float] | None, now: float) -> list[float]:
    return [t for t in (stamps or []) if now - t < WINDOW_SECONDS]


def build(demo: gr.Blocks, settings: Settings, store: Store) -> None:
    """Lay out the tab inside the current Blocks context and wire its events."""
    from evaluator.benchmarks import simpleqa

    template = simpleqa.load_prompts()["simpleqa_grader"]
    lock = threading.Lock()
    cache: dict = {}  # this app's lazily loaded judge and suite (per build_app, not module-global)

    # -- the suite ------------------------------------------------------------------------------------------------
    def suite() -> tuple[list[dict], str]:
        """(questions, note); the full suite is loaded on first use, the sample when that fails."""
        with lock:
            if "questions" not in cache:
                note = ""
                questions = None
                if settings.suite == "full":
                    try:
                        questions = simpleqa.load_questions(settings.simpleqa_full)
                        note = f"The full SimpleQA suite ({len(questions):,} questions)."
                    except Exception as exc:  # noqa: BLE001 - any failure falls back to the sample
                        log.warning("playground: the full SimpleQA suite could not be loaded: %s", exc)
                        questions = None
                        note = ("The full SimpleQA suite could not be loaded, so the questions below are the "
                                "sample suite shipped with the project.")
                if questions is None:
                    questions = simpleqa.load_questions(simpleqa.SAMPLE_PATH)
                    note = note or f"The SimpleQA sample suite ({len(questions)} questions)."
                cache["questions"] = questions
                cache["by_id"] = {q["question_id"]: q for q in questions}
                cache["note"] = note
            return cache["questions"], cache["note"]

    def by_id(question_id: str | None) -> dict | None:
        suite()
        return cache["by_id"].get(question_id or "")

    def suite_choices():
        questions, note = suite()
        return (gr.Dropdown(choices=[(question_label(q), q["question_id"]) for q in questions]),
                escape_markdown(note))

    def on_pick(question_id: str | None):
        question = by_id(question_id)
        if question is None:
            return gr.Textbox(), gr.Textbox()
        return question["problem"], question["answer"]

    def on_random(current: str | None):
        """Another question of the suite, picked at random (never the one shown, so the pick always changes)."""
        questions, _ = suite()
        others = [q["question_id"] for q in questions if q["question_id"] != current]
        return random.choice(others) if others else current

    # -- stored answers of finished runs ----------------------------------------------------------------------------
    def runs_with_details() -> list[tuple[str, str]]:
        try:
            board = tables.load_board(store)
            present = set(store.list("details", suffix="simpleqa.parquet"))
        except Exception:  # noqa: BLE001 - the playground works without stored answers
            log.exception("playground: could not list the runs with SimpleQA details")
            return []
        choices = []
        for _, row in board.iterrows():
            key = row.get("key")
            if key and f"details/{key}/simpleqa.parquet" in present:
                choices.append((f"{row.get('model') or key} ({key})", str(key)))
        return choices

    def run_choices():
        return gr.Dropdown(choices=runs_with_details(), value=None)

    def on_run(run_key: str | None, question_id: str | None):
        if not run_key:
            return gr.Textbox(), ""
        question = by_id(question_id)
        if question is None:
            return gr.Textbox(), "**Pick a question of the suite first** to load a model's stored answer to it."
        shown_key = escape_markdown(run_key)
        try:
            data = store.read_bytes(f"details/{run_key}/simpleqa.parquet")
            frame = pd.read_parquet(io.BytesIO(data)) if data is not None else None
        except Exception:  # noqa: BLE001
            log.exception("playground: unreadable SimpleQA details for %s", run_key)
            frame = None
        if frame is None:
            return gr.Textbox(), f"**The stored answers of {shown_key} could not be read.**"
        rows = frame[(frame["question_id"] == question["question_id"])]
        if "part" in frame.columns:
            rows = rows[rows["part"] == "answer"]
        if len(rows) == 0:
            return gr.Textbox(), (f"**{shown_key} has no stored answer for {escape_markdown(question['question_id'])}**"
                                  " (its run may have used a smaller limit or another suite).")
        row = rows.iloc[0]
        prompt = row.get("prompt") if "prompt" in rows.columns else None
        if isinstance(prompt, str) and prompt.strip() and " ".join(prompt.split()) != " ".join(question["problem"].split()):
            return gr.Textbox(), (f"**{shown_key} answered a different question under the id "
                                  f"{escape_markdown(question['question_id'])}** (its run used another suite).")
        prediction = row.get("prediction")
        prediction = "" if prediction is None or (isinstance(prediction, float) and pd.isna(prediction)) else str(prediction)
        return prediction, f"Loaded the stored answer of {shown_key} to {escape_markdown(question['question_id'])}."

    # -- the judge --------------------------------------------------------------------------------------------------
    def judge():
        """The judge, built once; raises (ValueError, OSError, ...) when it cannot be built."""
        with lock:
            if "judge" not in cache:
                from evaluator.judge import make_judge

                cache["judge"] = make_judge(settings.judge, settings.judge_token or settings.hf_token or None,
                                            timeout=JUDGE_TIMEOUT, max_retries=JUDGE_RETRIES,
                                            backoff=JUDGE_BACKOFF, concurrency=1)
            return cache["judge"]

    def redact(text: str) -> str:
        for token in (settings.judge_token, settings.hf_token):
            if token:
                text = text.replace(token, "[redacted]")
        return text

    def grade(mode: str, question: str, gold: str, candidate: str, stamps: list[float] | None):
        """Generator: (message, verdict, rationale, identity, raw, stamps) as the judge's reply streams in."""
        now = time.monotonic()
        stamps = recent(stamps, now)

        def refuse(message: str):
            return message, "", "", "", "", stamps

        if mode not in MODES:
            yield refuse(UNKNOWN_MODE)
            return
        if not settings.judge:
            yield refuse(NO_JUDGE)
            return
        fields = (("question", question), ("gold answer", gold), ("candidate answer", candidate))
        for name, value in fields:
            if not isinstance(value, str) or not value.strip():
                yield refuse(EMPTY_FIELD.format(field=name))
                return
        for name, value in fields:
            if len(value) > settings.playground_max_chars:
                yield refuse(TOO_LONG.format(field=name, length=len(value), limit=settings.playground_max_chars))
                return
        if len(stamps) >= settings.playground_per_minute:
            wait = max(1, int(WINDOW_SECONDS - (now - min(stamps))) + 1)
            yield refuse(RATE_LIMITED.format(limit=settings.playground_per_minute, wait=wait))
            return
        stamps = stamps + [now]

        try:
            the_judge = judge()
        except Exception as exc:  # noqa: BLE001 - a bad spec or a model that will not load
            log.warning("playground: the judge could not be built: %s", redact(str(exc)))
            yield refuse("**The judge could not be loaded**: " + escape_markdown(redact(str(exc)), 300))
            return
        identity = identity_text(getattr(the_judge, "identity", None))
        prompt = simpleqa.grader_prompt(template, question.strip(), gold.strip(), candidate.strip())
        raw = ""
        yield GRADING, "", "", identity, raw, stamps
        from evaluator.judge import JudgeError, parse_simpleqa_grade

        try:
            for piece in the_judge.stream([{"role": "user", "content": prompt}], max_tokens=JUDGE_MAX_TOKENS,
                                          temperature=0.0):
                raw += piece
                yield GRADING, "", "", identity, raw, stamps
        except JudgeError as exc:
            what = "could not be reached" if not raw else "broke off"
            yield ("**The judge " + what + "**: " + escape_markdown(redact(str(exc)), 300),
                   UNGRADED if raw else "", "", identity, raw, stamps)
            return
        except Exception:  # noqa: BLE001 - never a traceback in the page
            log.exception("playground: the judge failed")
            yield "**The judge failed** because of an internal error; please try again later.", "", "", identity, raw, stamps
            return
        letter = parse_simpleqa_grade(raw)
        verdict = VERDICTS.get(letter or "", UNGRADED)
        rationale = simpleqa.split_judge_reply(raw, letter if letter in VERDICTS else None)
        yield DONE, verdict, rationale, identity, raw, stamps

    # -- layout -----------------------------------------------------------------------------------------------------
    gr.Markdown(HELP)
    questions, note = suite() if settings.suite != "full" else ([], "Loading the full SimpleQA suite…")
    with gr.Row(equal_height=True):
        pick = gr.Dropdown(choices=[(question_label(q), q["question_id"]) for q in questions], value=None,
                           label="Question of the suite", filterable=True, scale=4, elem_id="judge-question-pick")
        random_button = gr.Button("Random question", scale=1, elem_id="judge-random")
    suite_note = gr.Markdown(escape_markdown(note), elem_id="judge-suite-note")
    question_box = gr.Textbox(label="Question", lines=2, max_lines=8, elem_id="judge-question")
    gold_box = gr.Textbox(label="Gold answer", lines=1, max_lines=4, elem_id="judge-gold")
    with gr.Row(equal_height=True):
        run_pick = gr.Dropdown(choices=[], value=None, label="Load the stored answer of an evaluated model",
                               filterable=True, scale=4, elem_id="judge-run-pick")
        runs_refresh = gr.Button("Refresh models", size="sm", scale=1, elem_id="judge-runs-refresh")
    candidate_box = gr.Textbox(label="Candidate answer", lines=2, max_lines=8, elem_id="judge-candidate")
    run_note = gr.Markdown("", elem_id="judge-run-note")
    mode = gr.Radio(choices=list(MODES), value=SIMPLEQA_MODE, label="Grading mode", elem_id="judge-mode")
    grade_button = gr.Button("Grade", variant="primary", elem_id="judge-grade")
    message = gr.Markdown("", elem_id="judge-message")
    with gr.Row():
        verdict_box = gr.Textbox(label="Verdict", interactive=False, scale=1, elem_id="judge-verdict")
        identity_box = gr.Textbox(label="Judge", interactive=False, scale=2, elem_id="judge-identity")
    rationale_box = gr.Textbox(label="Rationale", interactive=False, lines=2, elem_id="judge-rationale")
    raw_box = gr.Textbox(label="Raw judge output", interactive=False, lines=6, max_lines=20, elem_id="judge-raw")
    stamps = gr.State([])

    # -- events -----------------------------------------------------------------------------------------------------
    if settings.suite == "full":  # loaded lazily: on the first page load, not when the app is built
        demo.load(suite_choices, outputs=[pick, suite_note], api_visibility="private", show_progress="hidden")
    gr.on(triggers=[demo.load, runs_refresh.click], fn=run_choices, outputs=run_pick, api_visibility="private",
          show_progress="hidden")
    pick.change(on_pick, inputs=pick, outputs=[question_box, gold_box], api_visibility="private",
                show_progress="hidden")
    random_button.click(on_random, inputs=pick, outputs=pick, api_visibility="private", show_progress="hidden")
    gr.on(triggers=[run_pick.change, pick.change], fn=on_run, inputs=[run_pick, pick],
          outputs=[candidate_box, run_note], api_visibility="private", show_progress="hidden")
    grade_button.click(
        grade,
        inputs=[mode, question_box, gold_box, candidate_box, stamps],
        outputs=[message, verdict_box, rationale_box, identity_box, raw_box, stamps],
        api_name="grade",
        api_description="Grade a candidate answer with the judge: (mode, question, gold, candidate) -> "
                        "(message, verdict, rationale, judge identity, raw judge output).",
        concurrency_limit=4,
    )
