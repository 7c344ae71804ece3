"""The Judge playground tab: try the leaderboard's judge on one answer to one question, live, in one of two modes.

- **SimpleQA grade**: a SimpleQA question, its gold answer and a candidate answer; the judge grades the candidate with
  the project's SimpleQA grader prompt: A correct, B incorrect, C not attempted. The questions of the suite are the
  leaderboard's SimpleQA suite (the full one when settings.suite is "full" and it loads, else the sample).
- **LAVE rating** (LLM-Assisted VQA Evaluation, arXiv 2310.02567; BENCHMARKS.md): a VQA question, its reference
  answers (one per line in the gold box) and a candidate answer; the judge rates the candidate 1 (incorrect or
  irrelevant), 2 (ambiguous or incomplete) or 3 (correct) with a one-sentence rationale, with the LAVE prompt of
  evaluator.benchmarks.lave_rater (8 demonstrations, the yes/no ones for a yes/no question). The score is
  (r - 1) / 2; a reply without a rating counts as 2 and is flagged (the paper's fallback). The questions of the
  suite are always the LAVE sample file (the images are not shown: the judge sees text only).

A visitor picks the mode, then a question of the mode's suite (a searchable dropdown, or "Random question") or types
a question and its gold answer (or reference answers), writes a candidate answer (or loads the stored answer of a
finished run that has details for the mode's benchmark), and presses Grade. The judge (settings.judge, built once
and lazily, with a short timeout and few retries) streams its reply into the raw output; then the verdict, the
rationale and the judge's identity show.

The Grade button is the `/grade` API endpoint: inputs (mode, question, gold, candidate); outputs (message, verdict,
rationale, judge identity, raw judge output). Every text shown comes from plain textboxes, except the message,
whose user- or judge-derived parts are escaped Markdown. Refusals (no judge, empty or too long inputs, the rate
limit) call no judge. The rate limit counts gradings per browser session (a gr.State) over the last minute.
The suites and the judge are cached per app (per build_app), never in module-global state.
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
LAVE_MODE = "LAVE rating"
MODES = (SIMPLEQA_MODE, LAVE_MODE)
JUDGE_TIMEOUT = 30.0  # seconds per attempt: a live UI, not a batch run
JUDGE_RETRIES = 1
JUDGE_BACKOFF = 0.5
JUDGE_MAX_TOKENS = 256
WINDOW_SECONDS = 60.0
LAVE_SHOTS = 8

VERDICTS = {"A": "A CORRECT", "B": "B INCORRECT", "C": "C NOT ATTEMPTED"}
UNGRADED = "ungraded: the judge's reply had no grade line"
LAVE_WORDS = {1: "incorrect", 2: "ambiguous or incomplete", 3: "correct"}
LAVE_FALLBACK = "no rating in the judge's reply: the paper's fallback"
LAVE_UNRATED = "unrated: the judge's reply broke off"

GOLD_LABELS = {SIMPLEQA_MODE: "Gold answer", LAVE_MODE: "Reference answers (one per line)"}
GOLD_FIELDS = {SIMPLEQA_MODE: "gold answer", LAVE_MODE: "reference answers"}
DETAILS_FILES = {SIMPLEQA_MODE: "simpleqa.parquet", LAVE_MODE: "lave.parquet"}

HELP = ("Try the leaderboard's judge on one answer to one question, in one of two modes.\n\n"
        "- **SimpleQA grade**: a SimpleQA question and its gold answer. The judge grades the candidate answer with "
        "the same prompt the leaderboard uses: **A** correct, **B** incorrect, **C** not attempted.\n"
        "- **LAVE rating** (LLM-assisted VQA evaluation): a question about an image and its reference answers, "
        "**one per line**. The judge rates the candidate answer **1** (incorrect or irrelevant), **2** (ambiguous "
        "or incomplete) or **3** (correct) with a one-sentence rationale, as the leaderboard's LAVE benchmark "
        "does; the score is 0, 0.5 or 1. A reply without a rating counts as 2 (the paper's fallback). The judge "
        "sees text only: the image is not shown to it.\n\n"
        "Choose the mode, pick a question of its suite (or press **Random question**), or type your own question "
        "and its answers; write a candidate answer, or load the stored answer of an evaluated model; then press "
        "**Grade**.")

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
    """"<id> · <question text>" (whitespace collapsed, cut at `width`); a SimpleQA question ("problem") or a
    playground entry / LAVE item ("question")."""
    text = " ".join(str(question.get("problem") or question.get("question") or "").split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{question['question_id']} · {text}"


def reference_lines(text: str | None) -> list[str]:
    """The reference answers of the gold box in LAVE mode: one per line, each stripped, blank lines ignored."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def lave_verdict(rating: int | None) -> str:
    """"3 correct (score 1)", ...; None (no rating in the reply) -> the paper's fallback 2, flagged."""
    from evaluator.metrics.lave import lave_score

    if rating is None:
        return f"2 ({LAVE_FALLBACK}) (score {lave_score(2):g})"
    return f"{rating} {LAVE_WORDS[rating]} (score {lave_score(rating):g})"


def recent(stamps: list[float] | None, now: float) -> list[float]:
    return [t for t in (stamps or []) if now - t < WINDOW_SECONDS]


def _same_text(a, b) -> bool:
    return " ".join(str(a).split()) == " ".join(str(b).split())


def build(demo: gr.Blocks, settings: Settings, store: Store) -> None:
    """Lay out the tab inside the current Blocks context and wire its events."""
    from evaluator.benchmarks import lave, lave_rater, simpleqa

    template = simpleqa.load_prompts()["simpleqa_grader"]
    lave_prompts = lave_rater.load_lave_prompts()
    lock = threading.Lock()
    cache: dict = {"suites": {}}  # this app's lazily loaded judge and suites (per build_app, not module-global)

    # -- the suites -----------------------------------------------------------------------------------------------
    # A suite is {"entries": [{question_id, question, gold}], "by_id": {...}, "note": str}; gold is the text the
    # gold box gets (the SimpleQA answer, or the LAVE references one per line).
    def load_simpleqa() -> tuple[list[dict], str]:
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
        return [{"question_id": q["question_id"], "question": q["problem"], "gold": q["answer"]}
                for q in questions], note

    def load_lave() -> tuple[list[dict], str]:
        try:
            items = lave.load_vqa_file(lave.SAMPLE_PATH, "sample")
        except Exception as exc:  # noqa: BLE001 - the playground works without the suite (typed questions)
            log.warning("playground: the LAVE sample suite could not be loaded: %s", exc)
            return [], "The LAVE sample suite could not be loaded; type a question and its reference answers."
        entries = [{"question_id": item["question_id"], "question": item["question"],
                    "gold": "\n".join(a.strip() for a in item["answers"] if a.strip())} for item in items]
        return entries, (f"The LAVE sample suite ({len(entries)} questions): the playground always uses the sample "
                         "file shipped with the project, whatever suite the leaderboard runs.")

    def suite(mode: str | None) -> dict:
        """The suite of a mode (SimpleQA for an unknown one), loaded on first use."""
        mode = mode if mode in MODES else SIMPLEQA_MODE
        with lock:
            if mode not in cache["suites"]:
                entries, note = load_lave() if mode == LAVE_MODE else load_simpleqa()
                cache["suites"][mode] = {"entries": entries, "by_id": {e["question_id"]: e for e in entries},
                                         "note": note}
            return cache["suites"][mode]

    def by_id(question_id: str | None, mode: str | None) -> dict | None:
        return suite(mode)["by_id"].get(question_id or "")

    def choices(mode: str | None) -> list[tuple[str, str]]:
        return [(question_label(e), e["question_id"]) for e in suite(mode)["entries"]]

    def suite_choices(mode: str | None):
        return gr.Dropdown(choices=choices(mode)), escape_markdown(suite(mode)["note"])

    def on_mode(mode: str | None):
        """The mode changed: the mode's suite in the dropdown (nothing picked), its note, the gold box's label."""
        shown = suite(mode)
        return (gr.Dropdown(choices=choices(mode), value=None), escape_markdown(shown["note"]),
                gr.Textbox(label=GOLD_LABELS.get(mode, GOLD_LABELS[SIMPLEQA_MODE])))

    def on_pick(question_id: str | None, mode: str | None):
        entry = by_id(question_id, mode)
        if entry is None:
            return gr.Textbox(), gr.Textbox()
        return entry["question"], entry["gold"]

    def on_random(current: str | None, mode: str | None):
        """Another question of the mode's suite, picked at random (never the one shown, so the pick changes)."""
        others = [e["question_id"] for e in suite(mode)["entries"] if e["question_id"] != current]
        return random.choice(others) if others else current

    # -- stored answers of finished runs ----------------------------------------------------------------------------
    def runs_with_details(mode: str | None) -> list[tuple[str, str]]:
        name = DETAILS_FILES.get(mode or "", DETAILS_FILES[SIMPLEQA_MODE])
        try:
            board = tables.load_board(store)
            present = set(store.list("details", suffix=name))
        except Exception:  # noqa: BLE001 - the playground works without stored answers
            log.exception("playground: could not list the runs with %s details", name)
            return []
        runs = []
        for _, row in board.iterrows():
            key = row.get("key")
            if key and f"details/{key}/{name}" in present:
                runs.append((f"{row.get('model') or key} ({key})", str(key)))
        return runs

    def run_choices(mode: str | None):
        return gr.Dropdown(choices=runs_with_details(mode), value=None)

    def on_run(run_key: str | None, question_id: str | None, mode: str | None):
        if not run_key:
            return gr.Textbox(), ""
        mode = mode if mode in MODES else SIMPLEQA_MODE
        entry = by_id(question_id, mode)
        if entry is None:
            return gr.Textbox(), "**Pick a question of the suite first** to load a model's stored answer to it."
        shown_key = escape_markdown(run_key)
        shown_id = escape_markdown(entry["question_id"])
        benchmark = "LAVE" if mode == LAVE_MODE else "SimpleQA"
        try:
            data = store.read_bytes(f"details/{run_key}/{DETAILS_FILES[mode]}")
            frame = pd.read_parquet(io.BytesIO(data)) if data is not None else None
        except Exception:  # noqa: BLE001
            log.exception("playground: unreadable %s details for %s", benchmark, run_key)
            frame = None
        if frame is None or "question_id" not in frame.columns:
            return gr.Textbox(), f"**The stored answers of {shown_key} could not be read.**"
        rows = frame[(frame["question_id"] == entry["question_id"])]
        if mode == SIMPLEQA_MODE and "part" in frame.columns:
            rows = rows[rows["part"] == "answer"]
        if len(rows) == 0:
            return gr.Textbox(), (f"**{shown_key} has no stored answer for {shown_id}**"
                                  " (its run may have used a smaller limit or another suite).")
        row = rows.iloc[0]
        # the stored question: SimpleQA keeps the prompt it asked, LAVE the question text
        asked_column, answer_column = ("question", "parsed_answer") if mode == LAVE_MODE else ("prompt", "prediction")
        asked = row.get(asked_column) if asked_column in rows.columns else None
        if isinstance(asked, str) and asked.strip() and not _same_text(asked, entry["question"]):
            return gr.Textbox(), (f"**{shown_key} answered a different question under the id {shown_id}** "
                                  "(its run used another suite).")
        answer = row.get(answer_column) if answer_column in rows.columns else None
        answer = "" if answer is None or (isinstance(answer, float) and pd.isna(answer)) else str(answer)
        return answer, f"Loaded the stored answer of {shown_key} to {shown_id}."

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
        fields = (("question", question), (GOLD_FIELDS[mode], gold), ("candidate answer", candidate))
        for name, value in fields:
            if not isinstance(value, str) or not value.strip():
                yield refuse(EMPTY_FIELD.format(field=name))
                return
        references = reference_lines(gold) if mode == LAVE_MODE else []
        if mode == LAVE_MODE and not references:
            yield refuse(EMPTY_FIELD.format(field=GOLD_FIELDS[mode]))
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
        if mode == LAVE_MODE:
            messages = lave_rater.lave_messages(lave_rater.build_lave_prompt(
                lave_prompts, question.strip(), references, candidate.strip(), shots=LAVE_SHOTS))
        else:
            prompt = simpleqa.grader_prompt(template, question.strip(), gold.strip(), candidate.strip())
            messages = [{"role": "user", "content": prompt}]
        raw = ""
        yield GRADING, "", "", identity, raw, stamps
        from evaluator.judge import JudgeError, parse_lave_rating, parse_simpleqa_grade

        try:
            for piece in the_judge.stream(messages, max_tokens=JUDGE_MAX_TOKENS, temperature=0.0):
                raw += piece
                yield GRADING, "", "", identity, raw, stamps
        except JudgeError as exc:
            what = "could not be reached" if not raw else "broke off"
            broken = (LAVE_UNRATED if mode == LAVE_MODE else UNGRADED) if raw else ""
            yield ("**The judge " + what + "**: " + escape_markdown(redact(str(exc)), 300),
                   broken, "", identity, raw, stamps)
            return
        except Exception:  # noqa: BLE001 - never a traceback in the page
            log.exception("playground: the judge failed")
            yield "**The judge failed** because of an internal error; please try again later.", "", "", identity, raw, stamps
            return
        if mode == LAVE_MODE:
            yield DONE, lave_verdict(parse_lave_rating(raw)), lave_rater.split_lave_reply(raw), identity, raw, stamps
            return
        letter = parse_simpleqa_grade(raw)
        verdict = VERDICTS.get(letter or "", UNGRADED)
        rationale = simpleqa.split_judge_reply(raw, letter if letter in VERDICTS else None)
        yield DONE, verdict, rationale, identity, raw, stamps

    # -- layout -----------------------------------------------------------------------------------------------------
    gr.Markdown(HELP)
    mode = gr.Radio(choices=list(MODES), value=SIMPLEQA_MODE, label="Grading mode", elem_id="judge-mode")
    if settings.suite != "full":
        initial, note = choices(SIMPLEQA_MODE), suite(SIMPLEQA_MODE)["note"]
    else:
        initial, note = [], "Loading the full SimpleQA suite…"
    with gr.Row(equal_height=True):
        pick = gr.Dropdown(choices=initial, value=None, label="Question of the suite", filterable=True, scale=4,
                           elem_id="judge-question-pick")
        random_button = gr.Button("Random question", scale=1, elem_id="judge-random")
    suite_note = gr.Markdown(escape_markdown(note), elem_id="judge-suite-note")
    question_box = gr.Textbox(label="Question", lines=2, max_lines=8, elem_id="judge-question")
    gold_box = gr.Textbox(label=GOLD_LABELS[SIMPLEQA_MODE], lines=1, max_lines=10, elem_id="judge-gold")
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
    stamps = gr.State([])

    # -- events -----------------------------------------------------------------------------------------------------
    if settings.suite == "full":  # loaded lazily: on the first page load, not when the app is built
        demo.load(suite_choices, inputs=mode, outputs=[pick, suite_note], api_visibility="private",
                  show_progress="hidden")
    mode.change(on_mode, inputs=mode, outputs=[pick, suite_note, gold_box], api_visibility="private",
                show_progress="hidden")
    gr.on(triggers=[demo.load, runs_refresh.click, mode.change], fn=run_choices, inputs=mode, outputs=run_pick,
          api_visibility="private", show_progress="hidden")
    pick.change(on_pick, inputs=[pick, mode], outputs=[question_box, gold_box], api_visibility="private",
                show_progress="hidden")
    random_button.click(on_random, inputs=[pick, mode], outputs=pick, api_visibility="private",
                        show_progress="hidden")
    gr.on(triggers=[run_pick.change, pick.change], fn=on_run, inputs=[run_pick, pick, mode],
          outputs=[candidate_box, run_note], api_visibility="private", show_progress="hidden")
    grade_button.click(
        grade,
        inputs=[mode, question_box, gold_box, candidate_box, stamps],
        outputs=[message, verdict_box, rationale_box, identity_box, raw_box, stamps],
        api_name="grade",
        api_description="Grade a candidate answer with the judge: (mode, question, gold, candidate) -> "
                        "(message, verdict, rationale, judge identity, raw judge output). Modes: "
                        + ", ".join(MODES) + "; in LAVE mode, gold holds the reference answers, one per line.",
        concurrency_limit=4,
    )
