"""The Leaderboard tab: a view selector (Overview, then one view per benchmark, from the cards), a search box and
the table first, so that it is the first thing under the header even on a phone; the filters, the help and each
benchmark's per-run sections (a plot or a table drawn from one run's results) below it.

The table's value is `leaderboard.board.frames.board_table` (what a pandas Styler gives gr.Dataframe, built directly because a
Styler is slow): numeric cells (percentages, counts; null when undefined) so that sorting a column in the browser is
numeric, displayed as text ("54.3", "n/a"), the model linked to its Hub page and the details to their files. Which
rows are shown, ranked and flagged is leaderboard.board.views. Through the API the same event gives `data` and
`metadata.display_value`.

A benchmark's view shows the columns that fit a 1,400 px screen (View.shown: its headline and first main metrics,
judge, flag, notes, precision and revision); the rest of its columns (other metrics, coverage, counts, run facts,
details) are in the More columns table, in a folded accordion under it. The `/leaderboard` endpoint gives every
column of the view.

The results are read from the store on page load, every REFRESH_SECONDS and on the Refresh button (the
`/leaderboard` API endpoint reads them the same way); changing the view, the search or a filter re-draws the copy this browser session
already holds (a gr.State), so it does not read the store again. Each section is an API endpoint named by its key
(e.g. `/calibration`), taking a run's key: only a run on the Space's copy of the board (leaderboard.board.space_copy) is
read from the store, so naming other runs costs no store read.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import gradio as gr
import pandas as pd

from evaluator import api
from leaderboard.board.columns import OVERVIEW, Schema, schema
from leaderboard.board.file import load_board, read_results
from leaderboard.board.frames import SIZE_BUCKETS, board_frame, board_table, datatypes, leaderboard_frame, run_choices
from leaderboard.board.space_copy import BoardCopy
from leaderboard.board.views import empty_text, shown_rows, status_text, view_board
from leaderboard.explorer.views import details_url
from leaderboard.formatting import format_number
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions.records import MODEL_TYPES, is_request_key
from leaderboard.ui import board_figures

REFRESH_SECONDS = 30

HELP = ("**How to read the board.** Scores are percentages (higher is better unless the About tab says otherwise); "
        "**n/a** means a score is undefined (for example a conditional share whose condition never held); columns "
        "marked *(count)* are numbers of answers. **Overall** is the mean of each benchmark's headline score over "
        "the benchmarks a run has a score on (**Scored on**): runs are ranked (**#**) only against runs of the same "
        "suite (full, lite or sample; a lite run's rule too) scored on the same benchmarks, each asked the same "
        "way (**Asked by**: by generation alone, or also by option likelihood), so a text-only model is ranked among text-only models and no model is averaged with a "
        "zero for a benchmark it did not run. A served model (an OpenAI-compatible endpoint the admins added) shows "
        "its display name tagged \"served\" with its endpoint's host; it is asked by generation only unless its "
        "server returns prompt log-probabilities (vLLM, SGLang). A run that "
        "used an item limit or scored fewer than {threshold}% of a benchmark's items, or that the admins hid (the "
        "flag says why), is **flagged** and not "
        "ranked, and neither is a run graded by a trial judge (a local judge under 7B parameters, for trying the "
        "machinery); a run that is not ranked says **unranked** in the **#** column, and such runs come after the "
        "ranked ones, grouped by the benchmarks they were scored on. While no complete run exists (a quick trial), "
        "the flagged runs are shown, unranked. Pick a benchmark above the table to see its main metrics, and "
        "**More columns** under the table for the rest of them (and the type, size, suite and details), or "
        "**Run details** for every fact of each run (what the overall score is over, type, size, suite, coverage, "
        "judge). Select a score to open that run's questions on that benchmark in the **Explorer**; the model name "
        "opens its Hub page and **Details** (in a benchmark's More columns and Run details) its per-question files. "
        "Every column is explained on the About tab.")

EMPTY = ("### No results yet\n"
         "Nothing has been evaluated on this leaderboard so far. To add a model, open the **Submit** tab, enter its "
         "Hugging Face Hub id (for example `org/model-name`), pick the precision and model type and press "
         "**Submit**. The request joins the queue (see the **Queue** tab); when its run finishes, the model's row "
         "appears here.")


def read_run(store: Store, key: str | None, board: BoardCopy | None = None) -> dict | None:
    """One run's results by its key; None for an empty or malformed key, a run not on the board (when given) or a
    missing run."""
    if not key or not is_request_key(key) or (board is not None and not board.has(key)):
        return None
    return read_results(store, f"results/{key}.json")


def section_state(section: api.Section, choices: list[tuple[str, str]]) -> str:
    """What a section says above its plot or table: why it is empty, or which run it shows."""
    if not choices:
        return section.empty or f"No finished run has {section.title} yet."
    return f"Showing the first run on the board by default; pick another above ({len(choices)} with {section.title})."


def _section(card: api.Card, section: api.Section, store: Store, raw_state: gr.State, board: BoardCopy) -> None:
    """One card section: a run picker, a line saying why it is empty (or what it shows), and the run's plot or table
    (API endpoint /<section key>)."""
    with gr.Accordion(section.title, open=False, elem_id=f"{section.key}-section"):
        gr.Markdown(section.description)
        pick = gr.Dropdown(choices=[], value=None, label="Run", elem_id=f"{section.key}-run",
                           allow_custom_value=True)  # the key is checked in read_run
        state = gr.Markdown(section_state(section, []), elem_id=f"{section.key}-state")
        if section.kind == "plot":
            output = gr.Plot(label=section.title, elem_id=f"{section.key}-output")
        else:
            output = gr.Dataframe(value=section.render(None), datatype="str", interactive=False, wrap=True,
                                  show_label=False, elem_id=f"{section.key}-output")
    column = f"{card.name}_{section.needs}"

    def runs(raw: pd.DataFrame | None, current: str | None):
        choices = run_choices(raw, [column])
        keys = [key for _, key in choices]
        value = current if current in keys else (keys[0] if keys else None)
        return gr.Dropdown(choices=choices, value=value), section_state(section, choices)

    raw_state.change(runs, inputs=[raw_state, pick], outputs=[pick, state], api_visibility="private",
                     show_progress="hidden")
    pick.change(lambda key: section.render(read_run(store, key, board)), inputs=pick, outputs=output,
                api_name=section.key, api_description=f"{section.title} of one run, by its key.",
                show_progress="hidden")


@dataclass(frozen=True)
class Drawn:
    """One view of the board as the tab draws it: each table's value as gr.Dataframe takes it with its columns'
    datatypes (the board table, its More columns table, and every column at once for the API), the status line and
    the empty-state text."""

    value: dict
    types: list[str]
    more: dict
    more_types: list[str]
    whole: dict
    status: str
    empty: str
    has_more: bool


def board_value(raw: pd.DataFrame | None, board: Schema, settings: Settings, store: Store, view: str | None,
                search: str, model_types: list[str], sizes: list[str], show_all: bool) -> Drawn:
    """One view of the board (see Drawn)."""
    raw = leaderboard_frame([], board) if raw is None else raw
    picked = board.view(view or OVERVIEW)
    shown = shown_rows(raw, board, picked, threshold=settings.coverage_threshold, show_flagged=bool(show_all),
                       search=search or "", model_types=model_types or (), sizes=sizes or (),
                       details_url=partial(details_url, settings, store))
    tables = []
    for columns, titles in ((picked.shown, True), (picked.more or ("rank", "model"), True), (picked.columns, False)):
        frame = board_frame(shown.rows, board, picked, columns)  # the API's (every column): plain text
        tables.append((board_table(frame, board, titles=titles), datatypes(frame, board)))
    (value, types), (more, more_types), (whole, _) = tables
    status, empty = ("", EMPTY) if len(raw) == 0 else (status_text(shown, board, picked),
                                                       empty_text(shown, picked) or "")
    return Drawn(value, types, more, more_types, whole, status, empty, bool(picked.more))


def build(demo: gr.Blocks, settings: Settings, store: Store, copy: BoardCopy | None = None) -> list[gr.Dataframe]:
    """Lay out the tab inside the current Blocks context and wire its events; returns the table and its More columns
    table (selecting a score in either opens the Explorer on that run and the benchmark of that column). `copy`: the
    Space's copy of the board, which the per-run sections check a run's key against."""
    board: Schema = schema(settings.benchmarks)
    copy = copy or BoardCopy(store, board)
    draw = partial(board_value, board=board, settings=settings, store=store)

    def table_only(raw, view, search, model_types, sizes, show_all):
        """The tables of another view or filter, with their columns' datatypes (Markdown links, numbers)."""
        drawn = draw(raw, view=view, search=search, model_types=model_types, sizes=sizes, show_all=show_all)
        return gr.Dataframe(value=drawn.value, datatype=drawn.types), gr.Dataframe(value=drawn.more,
                                                                                   datatype=drawn.more_types)

    def reload(search: str, model_types: list[str], sizes: list[str], view: str = OVERVIEW, show_all: bool = False):
        """The board read again, as the table's value with its view's datatypes in the same update (updates that
        race a change of view each bring a value and the datatypes that go with it)."""
        raw = load_board(store, board)
        return (*table_only(raw, view, search, model_types, sizes, show_all), raw)

    def leaderboard(search: str = "", model_types: list[str] | None = None, sizes: list[str] | None = None,
                    view: str = OVERVIEW, show_all: bool = False) -> dict:
        """The /leaderboard endpoint: the board read again, as the table's value ({headers, data, metadata})."""
        return draw(load_board(store, board), view=view, search=search, model_types=model_types or [],
                    sizes=sizes or [], show_all=show_all).whole

    def notes(raw, view, search, model_types, sizes, show_all):
        """The status line, the empty state, and the tables' visibility (never their datatypes: those come with a
        value, or a late one would render another view's links as raw Markdown)."""
        drawn = draw(raw, view=view, search=search, model_types=model_types, sizes=sizes, show_all=show_all)
        no_runs = raw is None or len(raw) == 0
        return (drawn.status, gr.Markdown(drawn.empty, visible=bool(drawn.empty)), gr.Dataframe(visible=not no_runs),
                gr.Accordion(visible=drawn.has_more and not no_runs))

    with gr.Row(equal_height=True):
        view = gr.Radio(choices=[(v.label, v.key) for v in board.views], value=OVERVIEW, show_label=False,
                        container=False, scale=3, min_width=240, elem_id="board-view")
        search = gr.Textbox(value="", show_label=False, container=False, placeholder="Search models (a; b)",
                            lines=1, max_lines=1, scale=2, min_width=160, elem_id="board-search")
        show_all = gr.Checkbox(value=False, label="Show flagged runs", container=False, scale=1,
                               min_width=160, elem_id="board-show-all")
        refresh = gr.Button("Refresh", size="sm", scale=0, min_width=90, elem_id="board-refresh")
    status = gr.Markdown(elem_id="board-status")
    empty = gr.Markdown(EMPTY, visible=False, elem_id="board-empty")
    first = view_board(leaderboard_frame([], board), board)[1]
    more_first = first.iloc[:, :2]  # the rank and the model; events fill it
    table = gr.Dataframe(
        value=board_table(first, board),  # headers only; events fill it with numbers + display text
        datatype=datatypes(first, board),  # no `headers=`: with it, Gradio keeps the first view's datatypes
        interactive=False,
        wrap=True,  # long flags and notes wrap inside their column (leaderboard.ui.CSS bounds it)
        pinned_columns=2,
        max_height=700,
        label="Leaderboard",
        show_label=False,
        elem_id="leaderboard-table",
    )
    with gr.Accordion("More columns (the rest of this view: metrics, coverage, counts, run facts, details)", open=False,
                      visible=False, elem_id="board-more") as more_box:
        more = gr.Dataframe(value=board_table(more_first, board), datatype=datatypes(more_first, board),
                            interactive=False, wrap=True, pinned_columns=2, max_height=700, show_label=False,
                            elem_id="leaderboard-more")
    with gr.Accordion("Filters", open=False, elem_id="board-filters"):
        with gr.Row(equal_height=True):
            model_types = gr.CheckboxGroup(choices=list(MODEL_TYPES), value=[], label="Model type", scale=2,
                                           elem_id="board-types")
            sizes = gr.CheckboxGroup(choices=list(SIZE_BUCKETS), value=[], label="Size (parameters)", scale=2,
                                     elem_id="board-sizes")
    gr.Markdown(HELP.format(threshold=format_number(settings.min_coverage)), elem_id="board-help")
    raw_state = gr.State(None)
    timer = gr.Timer(REFRESH_SECONDS)

    inputs = [search, model_types, sizes, view, show_all]
    state_inputs = [raw_state, view, search, model_types, sizes, show_all]
    gr.on(
        triggers=[demo.load, timer.tick, refresh.click],
        fn=reload,
        inputs=inputs,
        outputs=[table, more, raw_state],
        api_visibility="private",
        show_progress="hidden",
        trigger_mode="always_last",
        concurrency_limit=None,
    ).then(notes, inputs=state_inputs, outputs=[status, empty, table, more_box], api_visibility="private",
           show_progress="hidden")
    gr.api(leaderboard, api_name="leaderboard", concurrency_limit=None,
           api_description="The board: every column of one view (overview, runs or a benchmark's name), filtered "
                           "like the tab; flagged (limited, partial or trial-judged) runs when show_all is true or "
                           "when no complete run matches.")
    for card in board.cards:
        for section in card.sections:
            _section(card, section, store, raw_state, copy)
    # the download of the view as shown and the two figures (leaderboard.ui.board_figures)
    board_figures.build(board, settings, store, raw_state, view, search, model_types, sizes, show_all)

    gr.on(
        triggers=[view.change, search.submit, search.change, model_types.change, sizes.change, show_all.change],
        fn=table_only,
        inputs=state_inputs,
        outputs=[table, more],
        api_visibility="private",
        show_progress="hidden",
        trigger_mode="always_last",
        concurrency_limit=None,
    ).then(notes, inputs=state_inputs, outputs=[status, empty, table, more_box], api_visibility="private",
           show_progress="hidden")
    return [table, more]
