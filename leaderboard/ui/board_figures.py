"""The Leaderboard tab's block under the table: the download of the view as shown (CSV and parquet), and the two
figures (leaderboard.board.plots): score against size, and one or two runs by dimension.

Everything is drawn from the copy of the board this browser session already holds (the tab's gr.State), so no
button or picker reads the store. The download and the size figure take the view as the visitor sees it: its search,
filters and "Show flagged runs" (leaderboard.board.views.shown_rows, as the table). The files are written under the
system's temporary folder, which Gradio serves files from (leaderboard.board.exports keeps a few); the Space takes no
uploads (leaderboard.ui.uploads), and these are files of its own, handed out through a gr.File that takes none.
"""
from __future__ import annotations

import tempfile
from functools import partial
from pathlib import Path

import gradio as gr
import pandas as pd

from leaderboard.board.columns import Schema, View
from leaderboard.board.exports import export_frame, write_exports
from leaderboard.board.frames import board_frame, leaderboard_frame, run_choices
from leaderboard.board.plots import OVERALL_COLUMN, dimension_cards, dimension_figure, score_choices, size_figure
from leaderboard.board.views import Shown, shown_rows
from leaderboard.explorer.views import details_url
from leaderboard.settings import Settings
from leaderboard.store import Store

DOWNLOADS = "leaderboard-downloads"  # the folder under the system's temporary folder
DOWNLOAD_HELP = ("The view as shown, with its search and filters, and every column of it (the More columns' too): "
                 "scores as percentages, empty when undefined or not run. In the CSV file, a text cell that starts "
                 "like a spreadsheet formula (=, +, -, @) begins with an apostrophe, so that opening it runs nothing.")


def view_rows(raw: pd.DataFrame | None, board: Schema, settings: Settings, store: Store, view: str | None,
              search: str, model_types: list[str], sizes: list[str], show_all: bool) -> tuple[View, Shown]:
    """The rows the board's table shows for these choices (the same call as the table's)."""
    raw = leaderboard_frame([], board) if raw is None else raw
    picked = board.view(view)
    shown = shown_rows(raw, board, picked, threshold=settings.coverage_threshold, show_flagged=bool(show_all),
                       search=search or "", model_types=model_types or (), sizes=sizes or (),
                       details_url=partial(details_url, settings, store))
    return picked, shown


def download_files(folder: Path, raw, board: Schema, settings: Settings, store: Store, view, search, model_types,
                   sizes, show_all) -> list[str]:
    """The CSV and parquet files of the view as shown."""
    picked, shown = view_rows(raw, board, settings, store, view, search, model_types, sizes, show_all)
    frame = export_frame(board_frame(shown.rows, board, picked))
    return [str(path) for path in write_exports(frame, picked, folder)]


def build(board: Schema, settings: Settings, store: Store, raw_state: gr.State, view: gr.Radio, search: gr.Textbox,
          model_types: gr.CheckboxGroup, sizes: gr.CheckboxGroup, show_all: gr.Checkbox) -> None:
    """Lay out the download and the two figures inside the current Blocks context and wire their events."""
    folder = Path(tempfile.gettempdir()) / DOWNLOADS
    choices = [raw_state, view, search, model_types, sizes, show_all]
    with gr.Accordion("Download this view (CSV, parquet)", open=False, elem_id="board-download-box"):
        gr.Markdown(DOWNLOAD_HELP)
        make = gr.Button("Prepare the files", size="sm", elem_id="board-download")
        files = gr.File(label="The view as shown", file_count="multiple", interactive=False, visible=False,
                        elem_id="board-download-files")
    make.click(lambda *a: gr.File(value=download_files(folder, a[0], board, settings, store, *a[1:]), visible=True),
               inputs=choices, outputs=files, api_visibility="private")
    gr.on(triggers=[view.change, search.change, model_types.change, sizes.change, show_all.change, raw_state.change],
          fn=lambda: gr.File(value=None, visible=False), outputs=files, api_visibility="private",
          show_progress="hidden")

    with gr.Accordion("Score against model size", open=False, elem_id="board-size-plot-box"):
        gr.Markdown("Each run of the view as shown (its search and filters) with a known size, one point per run; "
                    "hover a point for the model.")
        score = gr.Dropdown(choices=score_choices(board), value=OVERALL_COLUMN, label="Score",
                            elem_id="board-size-score")
        size_plot = gr.Plot(label="Score against model size", elem_id="board-size-plot")

    def draw_size(raw, view_key, text, types, buckets, flagged, column):
        _, shown = view_rows(raw, board, settings, store, view_key, text, types, buckets, flagged)
        return size_figure(shown.rows, board, column or OVERALL_COLUMN)

    gr.on(triggers=[raw_state.change, view.change, search.change, model_types.change, sizes.change, show_all.change,
                    score.change], fn=draw_size, inputs=[*choices, score], outputs=size_plot,
          api_visibility="private", show_progress="hidden", trigger_mode="always_last")

    cards = dimension_cards(board)
    if not cards:
        return
    with gr.Accordion("By dimension (one or two runs)", open=False, elem_id="board-dimensions-box"):
        gr.Markdown("A benchmark's dimensions for one run, or two side by side, each score with its 95% interval "
                    "where the run has one.")
        with gr.Row():
            benchmark = gr.Dropdown(choices=[(card.title, card.name) for card in cards], value=cards[0].name,
                                    label="Benchmark", elem_id="board-dimensions-benchmark")
            run_a = gr.Dropdown(choices=[], value=None, label="Run (A)", elem_id="board-dimensions-a")
            run_b = gr.Dropdown(choices=[], value=None, label="Run (B, optional)", elem_id="board-dimensions-b")
        dim_plot = gr.Plot(label="By dimension", elem_id="board-dimensions-plot")

    def runs(raw, name, a, b):
        card = board.card(name) or cards[0]
        found = run_choices(raw, [f"{card.name}_{key}" for key in card.dimensions])
        keys = [key for _, key in found]
        first = a if a in keys else (keys[0] if keys else None)
        return (gr.Dropdown(choices=found, value=first),
                gr.Dropdown(choices=[("(none)", "")] + found, value=b if b in keys else ""))

    raw_state.change(runs, inputs=[raw_state, benchmark, run_a, run_b], outputs=[run_a, run_b],
                     api_visibility="private", show_progress="hidden")
    benchmark.change(runs, inputs=[raw_state, benchmark, run_a, run_b], outputs=[run_a, run_b],
                     api_visibility="private", show_progress="hidden")
    gr.on(triggers=[raw_state.change, benchmark.change, run_a.change, run_b.change],
          fn=lambda raw, name, a, b: dimension_figure(raw, board, name, [a, b]),
          inputs=[raw_state, benchmark, run_a, run_b], outputs=dim_plot, api_visibility="private",
          show_progress="hidden", trigger_mode="always_last")
