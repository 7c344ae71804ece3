"""The Leaderboard tab: search and filters over a sortable, read-only table of every finished run, and below it
each benchmark's per-run sections (declared on its card: a plot or a table drawn from one run's results).

The table's value is `board_frames.board_table` (what a pandas Styler gives gr.Dataframe, built directly because a
Styler is slow): numeric cells (percentages; null when undefined) so that sorting a column in the browser is
numeric, displayed as text ("54.3", "n/a"). Through the API the same event gives `data` (numbers, null when
undefined) and `metadata.display_value` (the text shown).

The results are read from the store on page load, every REFRESH_SECONDS and on the Refresh button (that event is
the `/leaderboard` API endpoint); typing in the search box or changing a filter re-filters the copy this browser
session already holds (a gr.State), so it does not read the store again. Each section is an API endpoint named by
its key (e.g. `/calibration`), taking a run's key.
"""
from __future__ import annotations

import gradio as gr
import pandas as pd

from evaluator import api
from leaderboard.board_file import load_board
from leaderboard.board_frames import SIZE_BUCKETS, board_frame, board_table, display_frame, filter_runs, \
    leaderboard_frame, run_choices
from leaderboard.columns import Schema, schema
from leaderboard.request_queue import MODEL_TYPES, is_request_key
from leaderboard.settings import Settings
from leaderboard.store import Store

REFRESH_SECONDS = 30

HELP = ("Scores are percentages (higher is better unless the About tab says otherwise); **n/a** means the ratio "
        "is undefined (for example a conditional share whose condition never held). Ranked by **{ranked}**; to "
        "sort by another column, use the menu in its header. Select a cell to open that run's questions on that "
        "benchmark in the **Explorer**. The metrics are explained in the About tab.")

EMPTY = ("### No results yet\n"
         "Nothing has been evaluated on this leaderboard so far. To add a model, open the **Submit** tab, enter its "
         "Hugging Face Hub id (for example `org/model-name`), pick the precision and model type and press "
         "**Submit**. The request joins the queue (see the **Queue** tab); when its run finishes, the model's row "
         "appears here.")

NO_MATCH = "No run matches the search and filters."


def read_run(store: Store, key: str | None) -> dict | None:
    """One run's results by its key; None for an empty or malformed key or a missing run."""
    if not key or not is_request_key(key):
        return None
    return store.read_json(f"results/{key}.json")


def _section(card: api.Card, section: api.Section, store: Store, raw_state: gr.State) -> None:
    """One card section: a run picker and the run's plot or table (API endpoint /<section key>)."""
    with gr.Accordion(section.title, open=False, elem_id=f"{section.key}-section"):
        gr.Markdown(section.description)
        pick = gr.Dropdown(choices=[], value=None, label="Run", elem_id=f"{section.key}-run",
                           allow_custom_value=True)  # the key is checked in read_run
        if section.kind == "plot":
            output = gr.Plot(label=section.title, elem_id=f"{section.key}-output")
        else:
            output = gr.Dataframe(value=section.render(None), datatype="str", interactive=False, wrap=True,
                                  show_label=False, elem_id=f"{section.key}-output")
    column = f"{card.name}_{section.needs}"
    raw_state.change(lambda raw: gr.Dropdown(choices=run_choices(raw, [column])), inputs=raw_state, outputs=pick,
                     api_visibility="private", show_progress="hidden")
    pick.change(lambda key: section.render(read_run(store, key)), inputs=pick, outputs=output,
                api_name=section.key, api_description=f"{section.title} of one run, by its key.",
                show_progress="hidden")


def build(demo: gr.Blocks, settings: Settings, store: Store) -> gr.Dataframe:
    """Lay out the tab inside the current Blocks context and wire its events; returns the table (selecting a
    cell opens the Explorer on that run and the benchmark of that column)."""
    board: Schema = schema(settings.benchmarks)

    def shown(raw: pd.DataFrame, search: str, model_types: list[str], sizes: list[str], extra: list[str] = ()):
        return board_table(board_frame(raw, board, search or "", model_types or (), sizes or (), extra or ()),
                           board)

    def reload(search: str, model_types: list[str], sizes: list[str]):
        raw = load_board(store, board)
        return shown(raw, search, model_types, sizes), raw

    def with_extra(raw: pd.DataFrame | None, search: str, model_types: list[str], sizes: list[str],
                   extra: list[str]):
        """The table with the chosen extra columns (the /leaderboard endpoint shows the standard ones)."""
        return shown(load_board(store, board) if raw is None else raw, search, model_types, sizes, extra)

    def empty_state(raw: pd.DataFrame | None, search: str, model_types: list[str], sizes: list[str]):
        if raw is None or len(raw) == 0:
            return gr.Markdown(EMPTY, visible=True), gr.Dataframe(visible=False)
        if len(filter_runs(raw, search or "", model_types or (), sizes or ())) == 0:
            return gr.Markdown(NO_MATCH, visible=True), gr.Dataframe(visible=True)
        return gr.Markdown(visible=False), gr.Dataframe(visible=True)

    gr.Markdown(HELP.format(ranked=board.column(board.default_sort).label if board.default_sort in board.by_name
                            else "model"))
    with gr.Row(equal_height=True):
        search = gr.Textbox(value="", label="Search models", placeholder="Part of a model name; separate several with ;",
                            scale=2, elem_id="board-search")
        model_types = gr.CheckboxGroup(choices=list(MODEL_TYPES), value=[], label="Model type", scale=2,
                                       elem_id="board-types")
        sizes = gr.CheckboxGroup(choices=list(SIZE_BUCKETS), value=[], label="Size (parameters)", scale=2,
                                 elem_id="board-sizes")
    with gr.Row():
        refresh = gr.Button("Refresh", size="sm", scale=0, elem_id="board-refresh")
        extra = gr.CheckboxGroup(choices=[(c.label, c.name) for c in board.optional], value=[],
                                 label="More columns (each is explained on the About tab)", scale=4,
                                 elem_id="board-dimensions")
    empty = gr.Markdown(EMPTY, visible=False, elem_id="board-empty")
    empty_raw = leaderboard_frame([], board)
    table = gr.Dataframe(
        value=display_frame(empty_raw, board),  # headers only; events fill it with numbers + display text
        headers=[c.label for c in board.shown],
        datatype="str",
        interactive=False,
        wrap=False,
        pinned_columns=1,
        max_height=700,
        label="Leaderboard",
        show_label=False,
        elem_id="leaderboard-table",
    )
    raw_state = gr.State(None)
    timer = gr.Timer(REFRESH_SECONDS)

    filters = [search, model_types, sizes]
    gr.on(
        triggers=[demo.load, timer.tick, refresh.click],
        fn=reload,
        inputs=filters,
        outputs=[table, raw_state],
        api_name="leaderboard",
        api_description="The board as shown (percentages, n/a for undefined), filtered like the tab.",
        show_progress="hidden",
        trigger_mode="always_last",
        concurrency_limit=None,
    ).then(with_extra, inputs=[raw_state, *filters, extra], outputs=table, api_visibility="private",
           show_progress="hidden").then(empty_state, inputs=[raw_state, *filters], outputs=[empty, table],
                                        api_visibility="private", show_progress="hidden")
    for card in board.cards:
        for section in card.sections:
            _section(card, section, store, raw_state)

    gr.on(
        triggers=[search.submit, search.change, model_types.change, sizes.change, extra.change],
        fn=with_extra,
        inputs=[raw_state, *filters, extra],
        outputs=table,
        api_visibility="private",
        show_progress="hidden",
        trigger_mode="always_last",
        concurrency_limit=None,
    ).then(empty_state, inputs=[raw_state, *filters], outputs=[empty, table], api_visibility="private",
           show_progress="hidden")
    return table
