"""The Leaderboard tab: search and filters over a sortable, read-only table of every finished run.

The table's value is `tables.board_table` (what a pandas Styler gives gr.Dataframe, built directly because a Styler
is slow): numeric cells (percentages; null when undefined) so that sorting a column in the browser is numeric,
displayed as text ("54.3", "n/a"). Through the API the same event gives `data` (numbers, null when undefined) and
`metadata.display_value` (the text shown).

The results are read from the store on page load, every REFRESH_SECONDS and on the Refresh button (that event is
the `/leaderboard` API endpoint); typing in the search box or changing a filter re-filters the copy this browser
session already holds (a gr.State), so it does not read the store again.
"""
from __future__ import annotations

import gradio as gr
import pandas as pd

from leaderboard import plots, tables
from leaderboard.queue import MODEL_TYPES, is_request_key as queue_key_ok
from leaderboard.settings import Settings
from leaderboard.store import Store

REFRESH_SECONDS = 30

HELP = ("Scores are percentages (higher is better); **n/a** means the ratio is undefined (for example CURE Cf when "
        "no chain was fully right). Ranked by **CURE Ro**; to sort by another column, use the menu in its header. "
        "The metrics are explained in the About tab.")

EMPTY = ("### No results yet\n"
         "Nothing has been evaluated on this leaderboard so far. To add a model, open the **Submit** tab, enter its "
         "Hugging Face Hub id (for example `org/model-name`), pick the precision and model type and press "
         "**Submit**. The request joins the queue (see the **Queue** tab); when its run finishes, the model's row "
         "appears here.")

NO_MATCH = "No run matches the search and filters."


def _empty_raw() -> pd.DataFrame:
    return tables.leaderboard_frame([])


def build(demo: gr.Blocks, settings: Settings, store: Store) -> None:
    """Lay out the tab inside the current Blocks context and wire its events."""

    def shown(raw: pd.DataFrame, search: str, model_types: list[str], sizes: list[str]):
        return tables.board_table(tables.board_frame(raw, search or "", model_types or (), sizes or ()))

    def reload(search: str, model_types: list[str], sizes: list[str]):
        raw = tables.load_board(store)
        return shown(raw, search, model_types, sizes), raw

    def with_dimensions(raw: pd.DataFrame | None, search: str, model_types: list[str], sizes: list[str],
                        extra: list[str]):
        """The table with the chosen extra columns (the /leaderboard endpoint shows the standard ones)."""
        if raw is None:
            raw = tables.load_board(store)
        return tables.board_table(tables.board_frame(raw, search or "", model_types or (), sizes or (),
                                                     extra or ()))

    def empty_state(raw: pd.DataFrame | None, search: str, model_types: list[str], sizes: list[str]):
        if raw is None or len(raw) == 0:
            return gr.Markdown(EMPTY, visible=True), gr.Dataframe(visible=False)
        shown = tables.filter_runs(raw, search or "", model_types or (), sizes or ())
        if len(shown) == 0:
            return gr.Markdown(NO_MATCH, visible=True), gr.Dataframe(visible=True)
        return gr.Markdown(visible=False), gr.Dataframe(visible=True)

    gr.Markdown(HELP)
    with gr.Row(equal_height=True):
        search = gr.Textbox(value="", label="Search models", placeholder="Part of a model name; separate several with ;",
                            scale=2, elem_id="board-search")
        model_types = gr.CheckboxGroup(choices=list(MODEL_TYPES), value=[], label="Model type", scale=2,
                                       elem_id="board-types")
        sizes = gr.CheckboxGroup(choices=list(tables.SIZE_BUCKETS), value=[], label="Size (parameters)", scale=2,
                                 elem_id="board-sizes")
    with gr.Row():
        refresh = gr.Button("Refresh", size="sm", scale=0, elem_id="board-refresh")
        dimensions = gr.CheckboxGroup(choices=[(c.label, c.name) for c in tables.EXTRA_COLUMNS], value=[],
                                      label="More columns: ReForm-Eval dimensions, LAVE agreement with strict metrics",
                                      scale=4, elem_id="board-dimensions")
    empty = gr.Markdown(EMPTY, visible=False, elem_id="board-empty")
    table = gr.Dataframe(
        value=tables.display_frame(_empty_raw()),  # headers only; events fill it with numbers + display text
        headers=tables.display_headers(),
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
    ).then(with_dimensions, inputs=[raw_state, *filters, dimensions], outputs=table, api_visibility="private",
           show_progress="hidden").then(empty_state, inputs=[raw_state, *filters], outputs=[empty, table], api_visibility="private",
           show_progress="hidden")
    # SimpleQA section: one run's calibration plot
    with gr.Accordion("SimpleQA calibration", open=False, elem_id="simpleqa-section"):
        gr.Markdown("Accuracy against the model's stated confidence (it is asked for an answer and a 0-100 "
                    "confidence) and against how often its most frequent answer came up among samples at "
                    "temperature 1. Points on the diagonal are perfectly calibrated; the ECE is the weighted mean "
                    "gap.")
        run_pick = gr.Dropdown(choices=[], value=None, label="Run", elem_id="calibration-run",
                               allow_custom_value=True)  # the key is checked in calibration()
        calibration_plot = gr.Plot(label="Calibration", elem_id="calibration-plot")

    def calibration(key: str | None):
        if not key or not queue_key_ok(key):
            return None
        result = store.read_json(f"results/{key}.json")
        return plots.calibration_figure(result) if result else None

    # LAVE section: one run's LAVE beside the strict string metrics, and how often they agree
    with gr.Accordion("LAVE against strict metrics", open=False, elem_id="lave-section"):
        gr.Markdown("The same free-form answers scored by the LLM judge (LAVE) and by the strict string metrics. "
                    "*Agrees with LAVE* is the share of answers on which the metric and the judge agree (correct or "
                    "not); where they disagree, usually a correct answer phrased differently from the references "
                    "scored 0 by the strict metric. Every answer, rating and rationale is in the run's details.")
        lave_pick = gr.Dropdown(choices=[], value=None, label="Run", elem_id="lave-run",
                                allow_custom_value=True)  # the key is checked in lave_table()
        lave_agreement = gr.Dataframe(value=tables.lave_agreement_frame(None), datatype="str", interactive=False,
                                      wrap=True, show_label=False, elem_id="lave-agreement")

    def runs_with(raw: pd.DataFrame | None, column: str):
        if raw is None or len(raw) == 0 or column not in raw:
            return gr.Dropdown(choices=[], value=None)
        runs = raw[raw[column].notna()]
        return gr.Dropdown(choices=[(f"{r.model} @ {str(r.revision)[:12]} ({r.precision})", r.key)
                                    for r in runs.itertuples()])

    def lave_table(key: str | None):
        if not key or not queue_key_ok(key):
            return tables.lave_agreement_frame(None)
        return tables.lave_agreement_frame(store.read_json(f"results/{key}.json"))

    raw_state.change(lambda raw: runs_with(raw, "lave_lave"), inputs=raw_state, outputs=lave_pick,
                     api_visibility="private", show_progress="hidden")
    lave_pick.change(lave_table, inputs=lave_pick, outputs=lave_agreement, api_name="lave_agreement",
                     show_progress="hidden")

    raw_state.change(lambda raw: runs_with(raw, "simpleqa_f_score"), inputs=raw_state, outputs=run_pick, api_visibility="private",
                     show_progress="hidden")
    run_pick.change(calibration, inputs=run_pick, outputs=calibration_plot, api_name="calibration",
                    show_progress="hidden")

    gr.on(
        triggers=[search.submit, search.change, model_types.change, sizes.change, dimensions.change],
        fn=with_dimensions,
        inputs=[raw_state, *filters, dimensions],
        outputs=table,
        api_visibility="private",
        show_progress="hidden",
        trigger_mode="always_last",
        concurrency_limit=None,
    ).then(empty_state, inputs=[raw_state, *filters], outputs=[empty, table], api_visibility="private",
           show_progress="hidden")
