"""The Explorer tab: every number on the board opens into the questions behind it.

Pick a run and a benchmark (or select a board cell: its run, the benchmark of its column and the questions behind
its score, whose value the summary repeats), filter the run's questions by outcome, group and text, sort them, page through them, open one (image as the model saw it, prompt
as sent, raw output, parsed answer, gold, grade and the benchmark's own parts), walk to the previous or next one,
and compare with a second run. Every state is in the page URL (`?tab=explorer&run=...`), so a copied link opens
the same view, and the browser's Back returns to the view before (see SET_URL). The tables hold untrusted text as plain text; the opened question is HTML escaped in
leaderboard.explorer.item_html.

API endpoints (leaderboard.ui.explorer_api): /explorer_items (a page of questions with filters) and /explorer_item
(one question).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import gradio as gr
import pandas as pd

from evaluator import api
from leaderboard.board.columns import schema
from leaderboard.board.space_copy import BoardCopy
from leaderboard.explorer import queries as eq
from leaderboard.explorer.details_cache import DetailsCache, DetailsError
from leaderboard.explorer.protocols import protocol_notes
from leaderboard.explorer.views import (details_file, explorer_cards, group_labels, group_value, header, list_items,
                                        load_snippet, metric_choices, more_frame, open_item, page_frame, run_coverage,
                                        runs_for, summary_text)
from leaderboard.explorer.item_html import item_html
from leaderboard.formatting import escape_markdown, format_score
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.ui import explorer_api, proposals
from leaderboard.ui.explorer_api import to_query

log = logging.getLogger(__name__)

HELP = ("Every question of a run, as the model answered it. Pick a run and a benchmark (or select a cell on the "
        "Leaderboard), filter and sort, select a row to open the question, and pick a second run to compare. "
        "The address bar always holds the current view: copy it (or the link below) to share it.")
ALL = ("every outcome", "")
NO_RUN = ("none", "")
EVERY_QUESTION = ("every question", "")
# The address follows the view: a new run, benchmark, compared run or question is a new entry of the browser's
# history (pushState), a filter, a search or a page replaces the current one; Back reloads the page from the address
# (LISTEN_BACK), so it shows the view the address names. `query` is a view's query or a link holding one.
_SET = """const text = query || ""; const at = text.indexOf("tab=");
  if (at < 0) { return query; }
  const url = new URL(window.location.href); const before = url.searchParams;
  const next = new URLSearchParams(text.slice(at).split("#")[0]);
  const moved = ["tab", "bench", "run", "vs", "item"].some((k) => before.get(k) !== next.get(k));
  url.search = "?" + next.toString();
  if (url.toString() !== window.location.href && OPENED) {
    window.history[moved ? "pushState" : "replaceState"](null, "", url.toString()); }"""
SET_URL = "(query) => {\n  " + _SET.replace("OPENED", "true") + "\n  return url.toString();\n}"
LISTEN_BACK = """if (!window.explorerFollowsBack) { window.explorerFollowsBack = true;
    window.addEventListener("popstate", () => window.location.reload()); }"""
HEAD = f"<script>{LISTEN_BACK}</script>"  # from the page's start (launch's head), not after its first event
# on page load the address changes only if it opened the Explorer (a bare address stays on the Leaderboard), and
# never adds an entry (the state it read is the address's own)
_READ = """window.explorerRead = true;
  const opened = new URL(window.location.href).searchParams.get("tab") === "explorer";"""
_REPLACE = _SET.replace("OPENED", "opened").replace('moved ? "pushState" : "replaceState"', '"replaceState"')
SET_URL_IF_OPENED = "(query) => {\n  " + LISTEN_BACK + "\n  " + _READ + "\n  " + _REPLACE + "\n  return url.toString();\n}"
# a board cell opened the Explorer: when its questions start below the first screen (a phone), the page scrolls to
# the summary (the number selected), with the first questions under it
FROM_BOARD = SET_URL.replace("  return url.toString();", """  requestAnimationFrame(() => {
    const summary = document.querySelector("#explorer-summary");
    const table = document.querySelector("#explorer-table");
    if (summary && table && (summary.getBoundingClientRect().top < 0
        || table.getBoundingClientRect().top + 200 > window.innerHeight)) { summary.scrollIntoView({block: "start"}); }
  });
  return url.toString();""")
# a tab other than the Explorer shown: the address loses the Explorer's parameters (a reload shows that tab's page);
# not before the page has read its address (the first tab says it was selected as the page starts)
LEAVE_URL = ("() => { if (!window.explorerRead) { return; }\n"
             "  const url = new URL(window.location.href); const names = NAMES;\n"
             "  names.forEach((n) => url.searchParams.delete(n));\n"
             "  if (url.toString() !== window.location.href) { window.history.pushState(null, '', url.toString()); }\n}"
             ).replace("NAMES", repr(["tab", *eq.URL_NAMES.values()]))


@dataclass(frozen=True)
class Controls:
    """The explorer's inputs, in the order every handler takes them."""

    benchmark: gr.Dropdown
    run: gr.Dropdown
    compare: gr.Dropdown
    outcome: gr.Dropdown
    groups: gr.Dropdown
    search: gr.Textbox
    sort: gr.Dropdown
    descending: gr.Checkbox
    page: gr.Number
    item: gr.Textbox
    metric: gr.Dropdown

    def all(self) -> list:
        return [self.benchmark, self.run, self.compare, self.outcome, self.groups, self.search, self.sort,
                self.descending, self.page, self.item, self.metric]


LINK_HEADERS = ("Model", "Details")  # their cells hold links: selecting one does not open the Explorer


def board_cell_query(row: list, column: int, headers: list[str], labels: dict[str, str],
                     metrics: dict[str, str] | None = None) -> eq.Query | None:
    """The explorer state a board cell opens: its row's run, the benchmark of its column (else the run's first
    benchmark; labels: column label -> benchmark name) and the metric it shows (metrics: column label -> metric
    key), so the Explorer lists the questions behind that number. None for a link cell or a row that names no run."""
    if isinstance(column, int) and 0 <= column < len(headers) and headers[column] in LINK_HEADERS:
        return None
    try:
        values = dict(zip(headers, row))
        key = f"{values['Model']}/{str(values['Revision'])[:12]}_{values['Precision']}"
    except (KeyError, TypeError):
        return None
    header = headers[column] if isinstance(column, int) and 0 <= column < len(headers) else ""
    return eq.Query(run=key, benchmark=labels.get(header, ""), metric=(metrics or {}).get(header, ""))


def board_labels(board_schema, names: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The board's column labels of the benchmarks in `names` -> their benchmark, and -> their metric key (an
    interval's column, "CURE Ro 95%", opens the questions of its score)."""
    shown = [c for c in (*board_schema.columns, *board_schema.board_only) if c.group in names]
    return ({c.label: c.group for c in shown},
            {c.label: (c.interval_of or c.name)[len(c.group) + 1:] for c in shown})


def build(demo: gr.Blocks, settings: Settings, store: Store, tabs: gr.Tabs,
          board_table: gr.Dataframe | list[gr.Dataframe] | None = None, board: BoardCopy | None = None) -> gr.Textbox:
    """Lay out the tab inside the current Blocks context and wire its events (and the cell selection of the board's
    tables); returns the link to the view (follow_tabs puts it in the address when the tab is shown).
    `board`: the Space's copy of the board (runs not on it are never read from the store)."""
    cards = explorer_cards()
    names = [c.name for c in cards]
    board_schema = schema(settings.benchmarks)
    board = board or BoardCopy(store, board_schema)
    cache = DetailsCache(store, settings.explorer_cache_runs, board=board)
    labels, metric_keys = board_labels(board_schema, names)
    board_copy = board.frame

    def runs(benchmark: str) -> list[tuple[str, str]]:
        return runs_for(board_copy(), benchmark)

    def settle(query: eq.Query) -> tuple[eq.Query, list[tuple[str, str]]]:
        """A complete query: a known benchmark (the first with runs), a run that has it, a different B."""
        benchmark = query.benchmark if query.benchmark in names else ""
        if not benchmark and query.run:  # the run's first benchmark
            benchmark = next((n for n in names if any(k == query.run for _, k in runs(n))), "")
        if not benchmark:
            benchmark = next((n for n in names if runs(n)), names[0] if names else "")
        choices = runs(benchmark) if benchmark else []
        keys = [k for _, k in choices]
        run = query.run if query.run in keys else (keys[0] if keys else "")
        compare = query.compare if query.compare in keys and query.compare != run else ""
        return replace(query, benchmark=benchmark, run=run, compare=compare), choices

    def show(*values, message: str = ""):
        """Every output of the tab for one state (an unexpected failure is logged and said, never raised: a page
        load that opens a deep link must not break)."""
        try:
            return view(*values, message=message)
        except Exception:  # noqa: BLE001
            log.exception("explorer: the view %s could not be drawn", eq.query_string(to_query(*values))[:300])
            return view(*values[:9], "", *values[10:], message="This view could not be drawn because of an "
                        "internal error; it was logged. Pick another run or question.")

    def view(*values, message: str = ""):
        """Every output of the tab for one state."""
        query, choices = settle(to_query(*values))
        compare_choices = [NO_RUN, *[(label, key) for label, key in choices if key != query.run]]
        base = [gr.Dropdown(value=query.benchmark), gr.Dropdown(choices=choices, value=query.run or None),
                gr.Dropdown(choices=compare_choices, value=query.compare)]
        metrics = [EVERY_QUESTION, *metric_choices(api.card(query.benchmark))] if query.benchmark else [EVERY_QUESTION]

        def nothing(note: str):
            """The outputs when there is no table to show, and why."""
            empty = pd.DataFrame()
            return (*base, gr.Dropdown(choices=[ALL], value=""), gr.Dropdown(choices=[], value=[]),
                    gr.Dropdown(choices=[("the benchmark's order", "")], value=""),  # "" must be a choice
                    gr.Checkbox(value=query.descending), gr.Number(value=1), "",
                    escape_markdown(note, limit=None), empty, empty, gr.Textbox(value=""), gr.Image(visible=False),
                    "", eq.query_string(query), gr.DownloadButton(visible=False), "",
                    gr.Dropdown(choices=metrics, value=""), empty)

        if not query.run:
            return nothing(message or (f"No run on the board has {api.card(query.benchmark).title} results yet."
                                       if query.benchmark else "No benchmark can be explored."))
        try:
            listing = list_items(cache, query)
        except DetailsError as exc:
            return nothing(str(exc))
        query = listing.query
        opened_html, picture, item_value = "", gr.Image(value=None, visible=False), ""
        if query.item:
            try:
                opened = open_item(cache, query, settings.images_dir)
                item_value = opened.item
                heading = (f"{opened.item} · {opened.row.get('outcome', '')} · score "
                           f"{format_score(opened.row.get('score'))}")
                columns = [(f"A: {_label(choices, query.run)}", opened.parts_a, "")]
                if query.compare:
                    columns.append((f"B: {_label(choices, query.compare)}", opened.parts_b, opened.missing_b))
                opened_html = item_html(heading, columns, opened.picture_note)
                picture = gr.Image(value=opened.picture, visible=opened.picture is not None)
            except DetailsError as exc:
                message = message or str(exc)
                query = replace(query, item="")
        outcome_choices = [ALL, *[(o, o) for o in listing.outcome_choices]]
        outcome = query.outcome if query.outcome in listing.outcome_choices else ""
        groups = [g for g in query.groups if g in listing.group_choices]
        sort_choices = [("the benchmark's order", ""), *[(header(c), c) for c in listing.columns]]
        board = board_copy()
        summary = summary_text({**listing.summary, "coverage": run_coverage(board, query.run, query.benchmark),
                                "protocol": protocol_notes(board, query.run, query.compare, query.benchmark)},
                               listing.paired)
        if message:
            summary = f"{escape_markdown(message, limit=None)}\n\n{summary}"
        return (*base, gr.Dropdown(choices=outcome_choices, value=outcome),
                gr.Dropdown(choices=group_labels(listing.group_choices), value=groups),
                gr.Dropdown(choices=sort_choices, value=query.sort if query.sort in listing.columns else ""),
                gr.Checkbox(value=query.descending), gr.Number(value=query.page), f"of {listing.pages}",
                summary, page_frame(listing.rows), group_value(listing.groups), gr.Textbox(value=item_value), picture,
                opened_html, eq.query_string(replace(query, outcome=outcome, groups=tuple(groups))),
                gr.DownloadButton(value=details_file(store, settings, query.run, query.benchmark), visible=True),
                load_snippet(store, settings, query.run, query.benchmark),
                gr.Dropdown(choices=metrics, value=query.metric), more_frame(listing.rows))

    # -- layout ---------------------------------------------------------------------------------------------------
    gr.Markdown(HELP)
    with gr.Row():
        benchmark = gr.Dropdown(choices=[(c.title, c.name) for c in cards], value=names[0] if names else None,
                                label="Benchmark", scale=1, elem_id="explorer-benchmark")
        run = gr.Dropdown(choices=[], value=None, label="Run (A)", scale=2, elem_id="explorer-run")
        compare = gr.Dropdown(choices=[NO_RUN], value="", label="Compare with run (B)", scale=2,
                              elem_id="explorer-compare")
    proposals.build(settings, store, run)
    with gr.Row():
        outcome = gr.Dropdown(choices=[ALL], value="", label="Outcome", scale=1, elem_id="explorer-outcome")
        groups = gr.Dropdown(choices=[], value=[], multiselect=True, label="Groups (select a row of the table "
                             "below to pick one)", scale=2, elem_id="explorer-groups")
        search = gr.Textbox(value="", label="Search (id, question, answer, gold)", scale=2,
                            elem_id="explorer-search")
    with gr.Row():
        sort = gr.Dropdown(choices=[("the benchmark's order", "")], value="", label="Sort by", scale=2,
                           elem_id="explorer-sort")
        descending = gr.Checkbox(value=False, label="descending", scale=1, elem_id="explorer-descending")
        metric = gr.Dropdown(choices=[EVERY_QUESTION], value="", label="Board score (its questions)", scale=2,
                             elem_id="explorer-metric")
        with gr.Group(elem_id="explorer-page-box"):  # the page number and "of N" in one box
            page = gr.Number(value=1, minimum=1, precision=0, label="Page", elem_id="explorer-page")
            pages = gr.Markdown("", elem_id="explorer-pages")
    summary = gr.Markdown("", elem_id="explorer-summary")
    table = gr.Dataframe(value=pd.DataFrame(), datatype="str", interactive=False, wrap=True, max_height=600,
                         label="Questions (select a row to open it)", elem_id="explorer-table")
    with gr.Accordion("More columns (each question's groups, and whether no option mark was found)", open=False):
        more = gr.Dataframe(value=pd.DataFrame(), datatype="str", interactive=False, wrap=True, max_height=600,
                            show_label=False, elem_id="explorer-more")
    with gr.Accordion("Accuracy by group (select a row to filter)", open=True):
        group_table = gr.Dataframe(value=pd.DataFrame(), interactive=False, max_height=300, show_label=False,
                                   elem_id="explorer-groups-table")
    with gr.Row():
        item = gr.Textbox(value="", label="Open question (id)", scale=2, elem_id="explorer-item")
        previous = gr.Button("◀ Previous", scale=0, elem_id="explorer-previous")
        following = gr.Button("Next ▶", scale=0, elem_id="explorer-next")
    link = gr.Textbox(value="", label="Link to this view (and to the open question)", buttons=["copy"],
                      interactive=False, elem_id="explorer-link")
    picture = gr.Image(value=None, type="pil", interactive=False, visible=False, label="Image as the model saw it",
                       elem_id="explorer-image")
    opened = gr.HTML("", elem_id="explorer-opened")
    with gr.Accordion("Take the data", open=False):
        download = gr.DownloadButton("Download the details (parquet)", visible=False, elem_id="explorer-download")
        code = gr.Code(value="", language="python", label="Load them with datasets", interactive=False,
                       elem_id="explorer-snippet")

    controls = Controls(benchmark, run, compare, outcome, groups, search, sort, descending, page, item, metric)
    outputs = [benchmark, run, compare, outcome, groups, sort, descending, page, pages, summary, table, group_table,
               item, picture, opened, link, download, code, metric, more]

    def then_url(event, js: str = SET_URL):
        event.then(None, inputs=link, outputs=link, js=js, api_visibility="private", show_progress="hidden")

    def on(trigger, fn):
        then_url(trigger(fn, inputs=controls.all(), outputs=outputs, api_visibility="private",
                         show_progress="hidden", trigger_mode="always_last"))

    def changed(*values):  # a filter changed: back to page 1
        return show(*values[:8], 1, *values[9:])

    def switched(*values):  # a new benchmark or run: nothing open
        return show(*values[:8], 1, "", *values[10:])

    on(benchmark.input, switched)
    on(run.input, switched)
    for trigger in (compare.input, outcome.input, groups.input, search.submit, sort.input, descending.input,
                    metric.input):
        on(trigger, changed)
    on(page.submit, show)
    on(item.submit, show)

    def step(direction: int):
        def walk(*values):
            query = to_query(*values)
            try:
                listing = list_items(cache, settle(query)[0])
            except DetailsError as exc:
                return show(*values, message=str(exc))
            target = eq.neighbour(listing.filtered, query.item, direction)
            message = "" if target else "No question further in this direction."
            return show(*values[:9], target or query.item, *values[10:], message=message)
        return walk

    on(previous.click, step(-1))
    on(following.click, step(1))

    # Gradio finds the event data by a parameter's annotation, so these spell out the controls' values
    def open_row(benchmark, run, compare, outcome, groups, search, sort, descending, page, item, metric,
                 evt: gr.SelectData):
        row = evt.row_value or []
        return show(benchmark, run, compare, outcome, groups, search, sort, descending, page,
                    str(row[0]) if row else item, metric)

    def pick_group(benchmark, run, compare, outcome, groups, search, sort, descending, page, item, metric,
                   evt: gr.SelectData):
        row = evt.row_value or []
        if len(row) >= 2:
            groups = [f"{row[0]}{eq.GROUP_SEP}{row[1]}"]
        return show(benchmark, run, compare, outcome, groups, search, sort, descending, 1, item, metric)

    on(table.select, open_row)
    on(more.select, open_row)
    on(group_table.select, pick_group)

    def from_url(request: gr.Request):
        params = request.query_params if request is not None else {}
        found = {name: params.getlist(name) for name in params.keys()} if hasattr(params, "getlist") else {}
        query = eq.from_params(found)
        selected = gr.Tabs() if found.get("tab") != ["explorer"] else gr.Tabs(selected="explorer")
        return (selected, *show(query.benchmark, query.run, query.compare, query.outcome, list(query.groups),
                                query.search, query.sort, query.descending, query.page, query.item, query.metric))

    then_url(demo.load(from_url, inputs=None, outputs=[tabs, *outputs], api_visibility="private",
                       show_progress="hidden"), js=SET_URL_IF_OPENED)

    for source in ([board_table] if isinstance(board_table, gr.Dataframe) else board_table or []):
        def from_board(board_value: pd.DataFrame, evt: gr.SelectData):
            headers = list(board_value.columns) if isinstance(board_value, pd.DataFrame) else []
            column = evt.index[1] if isinstance(evt.index, (list, tuple)) and len(evt.index) > 1 else -1
            query = board_cell_query(evt.row_value or [], column, headers, labels, metric_keys)
            if query is None:
                return tuple(gr.skip() for _ in range(1 + len(outputs)))
            return (gr.Tabs(selected="explorer"),
                    *show(query.benchmark, query.run, "", "", [], "", "", False, 1, "", query.metric))

        then_url(source.select(from_board, inputs=[source], outputs=[tabs, *outputs],
                               api_visibility="private", show_progress="hidden"), js=FROM_BOARD)

    # -- API ------------------------------------------------------------------------------------------------------
    explorer_api.register(cache, settings, names, board_copy, picture, lambda: demo.root_path)
    return link


def follow_tabs(explorer_tab: gr.Tab, other_tabs: list[gr.Tab], link: gr.Textbox) -> None:
    """Keep the address in step with the tab shown: the Explorer's view (its link) on its tab, no Explorer
    parameters on any other (a new entry of the browser's history each, so Back returns to the tab left)."""
    explorer_tab.select(None, inputs=link, js=SET_URL, api_visibility="private", show_progress="hidden")
    for tab in other_tabs:
        tab.select(None, js=LEAVE_URL, api_visibility="private", show_progress="hidden")


def _label(choices: list[tuple[str, str]], key: str) -> str:
    return next((label for label, k in choices if k == key), key)


__all__ = ["build", "follow_tabs", "board_cell_query", "board_labels", "to_query"]
