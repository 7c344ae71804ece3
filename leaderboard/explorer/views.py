"""What the Explorer tab and its API endpoints show, as plain data: the runs to pick, one page of a run's questions
with its summary and per-group accuracy, and one opened question. The tab, the API (`/explorer_items`,
`/explorer_item`) and bench/explorer.py all call these functions.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

import pandas as pd
from PIL import Image

from evaluator import api
from leaderboard.board.frames import HUB_URL, run_choices
from leaderboard.explorer import queries as eq
from leaderboard.explorer.details_cache import DetailsCache, DetailsError, RunDetails, details_link, details_path
from leaderboard.formatting import (as_float, escape_markdown, format_label, format_measure, format_percent,
                                    format_score)
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions.records import is_request_key

log = logging.getLogger(__name__)

SHORT = 90  # characters of a question or an answer shown in the table (the opened question shows them whole)


def explorer_cards() -> list[api.Card]:
    """The benchmarks whose questions the explorer can open (their cards declare an item table)."""
    return [c for c in api.cards() if c.item_view.items is not None and c.item_view.key is not None]


def runs_for(raw: pd.DataFrame | None, benchmark: str) -> list[tuple[str, str]]:
    """(label, key) of the board's runs with a value for any of the benchmark's columns, in board order."""
    columns = [c for c in raw.columns if c.startswith(f"{benchmark}_")] if raw is not None else []
    return run_choices(raw, columns)


@dataclass(frozen=True)
class Listing:
    """One page of a run's questions: the query as applied (page clamped), the page's rows, the filter's summary,
    accuracy per group, and the choices the filters offer."""

    query: eq.Query
    rows: pd.DataFrame
    pages: int
    summary: dict
    groups: pd.DataFrame
    outcome_choices: list[str]
    group_choices: list[str]
    columns: list[str]
    filtered: pd.DataFrame  # the whole filtered, ordered list (prev / next walk it)
    paired: api.Paired | None = None  # with a run B: A - B on the listed questions both scored


def _compare_details(cache: DetailsCache, query: eq.Query) -> RunDetails | None:
    if not query.compare or query.compare == query.run:
        return None
    return cache.get(query.compare, query.benchmark)


def paired_on(a: RunDetails, b: RunDetails, shown: pd.DataFrame) -> api.Paired | None:
    """A - B on the listed questions both runs scored (evaluator.runs.compare, clustered by the card's unit); None
    when either run's details cannot say."""
    try:
        return api.paired_scores(a.scores, b.scores, shown["item"].tolist())
    except ValueError as exc:
        log.warning("%s and %s could not be compared on %s: %s", a.key, b.key, a.benchmark, exc)
        return None


def measure_of(card: api.Card, metric: str) -> api.Measure | None:
    """The card's Measure of one of its metrics (None: no such metric, or the card measures it by plain accuracy)."""
    if not metric or card.item_view.measure is None or metric not in {m.key for m in card.metrics}:
        return None
    return card.item_view.measure(metric)


def metric_choices(card: api.Card) -> list[tuple[str, str]]:
    """(label, key) of the card's board metrics whose questions the explorer can list (its Measures)."""
    return [(f"{card.short_title} {m.label}", m.key) for m in card.metrics if measure_of(card, m.key) is not None]


def _behind(measure: api.Measure, table: pd.DataFrame, details: pd.DataFrame):
    """The mask of the questions behind a metric; None when this run's details cannot say (an older run's details
    without the columns it needs): the explorer then lists every question, without the metric."""
    try:
        return measure.rows(table, details).to_numpy(dtype=bool)
    except Exception as exc:  # noqa: BLE001 - a run's details never break the tab
        log.warning("the questions behind a metric could not be found: %s: %s", type(exc).__name__, exc)
        return None


def metric_summary(card: api.Card, metric: str, measure: api.Measure, run: RunDetails,
                   shown: pd.DataFrame) -> dict:
    """{"metric", "metric_label", "metric_kind", "metric_value"}: the board metric on the shown questions' rows
    (computed once per list of questions: see RunDetails.measure)."""
    found = card.metric(metric)
    try:
        value = float(run.measure(metric, tuple(shown["item"]), measure.value))
    except Exception as exc:  # noqa: BLE001 - an older run's details: the headline says n/a, the list stays
        log.warning("%s could not be computed on these questions: %s: %s", metric, type(exc).__name__, exc)
        value = math.nan
    return {"metric": metric, "metric_label": f"{card.short_title} {found.label}", "metric_kind": found.kind,
            "metric_value": value}


def list_items(cache: DetailsCache, query: eq.Query, page_size: int = eq.PAGE_SIZE) -> Listing:
    """The questions of `query.run` on `query.benchmark` that pass its filters, one page of them (with a board
    metric, only the questions behind it, and its value in the summary); DetailsError when the run's details cannot
    be read."""
    card = api.card(query.benchmark)
    a = cache.get(query.run, query.benchmark)
    b = _compare_details(cache, query)
    table = eq.joined(a.items, b.items if b is not None else None)
    measure = measure_of(card, query.metric)
    behind = _behind(measure, table, a.details) if measure is not None else None
    if behind is None:
        query, measure = replace(query, metric=""), None
    else:
        table = table[behind]
    shown = eq.filtered(table, query)
    query = eq.with_page(query, shown) if query.item else query
    rows, page, pages = eq.page_of(shown, query.page, page_size)
    group_by = tuple(card.item_view.group_by)
    summary = eq.summary(shown, len(table))
    if measure is not None:
        summary.update(metric_summary(card, query.metric, measure, a, shown))
    return Listing(query=replace(query, page=page), rows=rows, pages=pages, summary=summary,
                   groups=eq.group_table(shown, group_by), outcome_choices=eq.outcome_choices(table),
                   group_choices=eq.group_choices(table, group_by), columns=list(table.columns), filtered=shown,
                   paired=paired_on(a, b, shown) if b is not None else None)


def run_coverage(raw: pd.DataFrame | None, run: str, benchmark: str) -> float | None:
    """The run's coverage of the benchmark on the board (items scored / items in the suite, 0..1); None when the
    board has no such run or the run predates coverage."""
    column = f"{benchmark}_coverage"
    if raw is None or column not in raw or "key" not in raw:
        return None
    values = raw.loc[raw["key"] == run, column]
    value = plain(values.iloc[0]) if len(values) else None
    return float(value) if isinstance(value, (int, float)) else None


def summary_text(summary: dict, paired: api.Paired | None = None) -> str:
    """"12 of 31 questions · accuracy 41.7% over 12 scored · coverage 100.0% of the suite" (and B's accuracy when
    comparing, then A - B on the listed questions both scored, as Paired.text() says it, and how A and B were asked
    differently, its "protocol"; the coverage when the summary has one)."""
    text = (f"**{summary['shown']}** of {summary['total']} questions · accuracy **{format_percent(summary['accuracy'])}** "
            f"over {summary['scored']} scored")
    if summary.get("metric"):
        value = summary["metric_value"]
        shown = format_percent(value) if summary["metric_kind"] in api.PERCENT_KINDS else format_measure(value)
        text = (f"{escape_markdown(summary['metric_label'])} **{shown}** on these questions, as the board computes "
                f"it · {text}")
    if summary.get("coverage") is not None:
        text += f" · coverage **{format_percent(summary['coverage'])}** of the suite's items"
    if "accuracy_b" in summary:
        text += f" · run B: **{format_percent(summary['accuracy_b'])}** over {summary['scored_b']} scored"
    if paired is not None:
        text += f" · {paired.text()}"
    if summary.get("protocol"):  # leaderboard.explorer.protocols: how A and B were asked differently
        text += f"\n\n**Asked differently:** {escape_markdown('; '.join(summary['protocol']), limit=None)}"
    return text


def _short(value: object, width: int = SHORT) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


HEADERS = {"answer_b": "answer (B)", "score_b": "score (B)", "outcome_b": "outcome (B)", "no_mark": "no mark"}


def header(column: str) -> str:
    """A column of the item table as the tab heads it ("answer_b" -> "answer (B)", "chain_length" -> "chain
    length")."""
    return HEADERS.get(column, column.replace("_", " "))


# the questions table's columns, in this order (those the table has): what a reader compares, so that it fits a
# 1,400 px screen with a second run's answers; the rest (no mark, the groups) are in its More columns table
MAIN_COLUMNS = ("item", "question", "answer", "answer_b", "gold", "score", "score_b", "outcome", "outcome_b", "grade")


def page_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """A page as the tab's questions table shows it: its MAIN_COLUMNS, long texts shortened, scores as percentages,
    headers in words."""
    return _frame(rows[[c for c in MAIN_COLUMNS if c in rows]])


def more_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """The rest of a page's columns (after the item, which names the question): whether no option mark was found
    and the benchmark's groups, their values in words ("coarse_perception" -> "Coarse perception")."""
    rest = [c for c in rows.columns if c not in MAIN_COLUMNS]
    out = _frame(rows[["item", *rest]])
    for column in rest:
        if column != "no_mark":
            out[header(column)] = out[header(column)].map(format_label)
    return out


def group_value(groups: pd.DataFrame) -> dict:
    """The per-group accuracy table as gr.Dataframe takes it: the numbers and the group's own names as data (so
    that sorting is numeric and selecting a row filters on it), shown with a percent sign ("41.7%", the difference
    in points: "+3.3 points") and in words ("Dimension", "Coarse perception")."""
    rows = [[plain(v) for v in row] for row in groups.itertuples(index=False)]
    shown = []
    for row in rows:
        cells = dict(zip(groups.columns, row))
        shown.append([format_label(v) if c in ("group", "value") else
                      _signed_points(v) if c == "B - A" else
                      format_percent(as_float(v) / 100) if c.startswith("accuracy") else
                      str(v) for c, v in cells.items()])
    return {"headers": list(groups.columns), "data": rows,
            "metadata": {"display_value": shown, "styling": [[""] * len(groups.columns) for _ in rows]}
            if rows else None}


def group_labels(choices: list[str]) -> list[tuple[str, str]]:
    """The group filter's choices ("<column> = <value>") as (label in words, choice): "Dimension = Coarse perception"."""
    pairs = [choice.partition(eq.GROUP_SEP) for choice in choices]
    return [(f"{format_label(column)}{sep}{format_label(value)}", f"{column}{sep}{value}")
            for column, sep, value in pairs]


def _signed_points(value) -> str:
    """A difference in points with its sign ("+3.3 points", "-1.0 points", "0.0 points"); NaN as "n/a"."""
    number = as_float(value)
    if math.isnan(number):
        return format_score(None)
    return f"{'+' if number > 0 else ''}{format_score(number / 100)} points"


def _frame(rows: pd.DataFrame) -> pd.DataFrame:
    out = rows.copy()
    for column in ("question", "answer", "gold", "answer_b"):
        if column in out:
            out[column] = out[column].map(_short)
    for column in ("score", "score_b"):
        if column in out:
            out[column] = out[column].map(lambda v: format_score(v))
    if "no_mark" in out:
        out["no_mark"] = out["no_mark"].map(lambda v: "no mark" if v else "")
    return out.astype(str).reset_index(drop=True).rename(columns=header)


def plain(value):
    """A value as JSON takes it: numpy scalars as Python ones, NaN as None."""
    value = value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value
    return None if isinstance(value, float) and math.isnan(value) else value


def listing_json(listing: Listing, coverage: float | None = None) -> dict:
    """A listing for the API: full texts, scores as fractions (null when none); the summary holds the run's coverage
    of the benchmark (null when unknown); paired: with a run B, A - B on the listed questions both scored
    (evaluator.api.paired_record: difference, low, high, stderr, shared, a_only_right, b_only_right, method, text),
    else null."""
    records = [{k: plain(v) for k, v in row.items()} for row in listing.rows.to_dict("records")]
    groups = [{k: plain(v) for k, v in row.items()} for row in listing.groups.to_dict("records")]
    summary = {**{k: plain(v) for k, v in listing.summary.items()}, "coverage": coverage}
    return {"query": eq.query_string(listing.query), "page": listing.query.page, "pages": listing.pages,
            "summary": summary, "items": records, "groups": groups, "outcomes": listing.outcome_choices,
            "group_filters": listing.group_choices,
            "paired": api.paired_record(listing.paired) if listing.paired is not None else None}


# --------------------------------------------------------------------------------------------- one question

@dataclass(frozen=True)
class OpenedItem:
    """One question of a run (and of the second run): its parts per run, its table row, and its picture (or why
    there is none)."""

    item: str
    row: dict
    parts_a: list[api.ItemPart]
    parts_b: list[api.ItemPart] | None
    missing_b: str
    picture: Image.Image | None
    picture_note: str
    image_ref: str  # the image the details name ("" when none)


def picture_of(card: api.Card, rows: list[dict], images_dir: Path) -> tuple[Image.Image | None, str]:
    """The image as the model saw it, or None and a sentence saying why there is none."""
    if card.item_view.picture is None:
        return None, ("" if not card.needs_images else
                      f"{card.title} details keep no image reference, so the image is not shown here.")
    try:
        found = card.item_view.picture(rows[0], Path(images_dir))
    except api.ImageUnavailable as exc:
        return None, f"Image unavailable: {exc.reason} ({exc.url})."
    except Exception as exc:  # noqa: BLE001 - a bad image must not break the question's view
        return None, f"Image unavailable: {type(exc).__name__}."
    return found, ""


def open_item(cache: DetailsCache, query: eq.Query, images_dir: Path, with_picture: bool = True) -> OpenedItem:
    """The opened question `query.item`; DetailsError when the run has no such question."""
    card = api.card(query.benchmark)
    a = cache.get(query.run, query.benchmark)
    rows = a.item_rows(query.item)
    if not rows:
        raise DetailsError(f"{query.run} has no question {query.item!r} in {card.title}")
    parts_b, missing_b = None, ""
    b = _compare_details(cache, query)
    if b is not None:
        rows_b = b.item_rows(query.item)
        parts_b = _parts(card, rows_b, query.item) if rows_b else None
        missing_b = "" if rows_b else "Run B has no such question."
    row = a.items[a.items["item"] == query.item].iloc[0].to_dict()
    picture, note = picture_of(card, rows, images_dir) if with_picture else (None, "")
    image_column = card.item_view.image
    image_ref = str(rows[0].get(image_column) or "") if image_column else ""
    return OpenedItem(item=query.item, row=row, parts_a=_parts(card, rows, query.item), parts_b=parts_b,
                      missing_b=missing_b, picture=picture, picture_note=note, image_ref=image_ref)


def _parts(card: api.Card, rows: list[dict], item: str) -> list[api.ItemPart]:
    """The card's parts of an opened question; DetailsError (never another exception) when its stored rows are
    damaged in a way the card's view cannot show."""
    try:
        return card.item_view.parts(rows)
    except Exception as exc:  # noqa: BLE001 - stored details are data from outside: one bad row must not break a page
        raise DetailsError(f"the question {item[:120]!r} of {card.title} could not be shown: its stored details are "
                           f"damaged ({type(exc).__name__})") from None


def parts_json(parts: list[api.ItemPart] | None) -> list[dict] | None:
    if parts is None:
        return None
    return [{"title": p.title, "facts": [list(f) for f in p.facts], "table": list(p.table),
             "texts": [list(t) for t in p.texts]} for p in parts]


def item_json(opened: OpenedItem) -> dict:
    """An opened question for the API (the image by its reference, not its bytes)."""
    row = {k: plain(v) for k, v in opened.row.items()}
    return {"item": opened.item, "row": row, "parts": parts_json(opened.parts_a), "parts_b": parts_json(opened.parts_b),
            "missing_b": opened.missing_b, "image": opened.image_ref, "picture_note": opened.picture_note}


# --------------------------------------------------------------------------------------------- the data

def details_file(store: Store, settings: Settings, key: str, benchmark: str) -> str | None:
    """A local file holding the run's details of the benchmark, for the download button: the store's own file on
    the local store (LocalStore.local_file), else a copy under <home>/cache/explorer (read from the store once); None when there is none."""
    path = details_path(key, benchmark)
    local_file = getattr(store, "local_file", None)
    if local_file is not None:  # the local store's own file (never one a symbolic link leads to out of the store)
        found = local_file(path)
        return str(found) if found is not None else None
    target = settings.home / "cache" / "explorer" / path
    if not target.is_file():
        data = store.read_bytes(path)
        if data is None:
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return str(target)


def details_url(settings: Settings, store: Store, key: str, benchmark: str) -> str | None:
    """A link to the run's details file of the benchmark: the file in the results dataset on the Hub store; on the
    local store the Space's route that serves it by the run's key (leaderboard.ui.downloads: no server path in the
    link); None for a key that is not a run's."""
    if not key or not is_request_key(key):
        return None
    if settings.store_backend == "hub":
        return f"{HUB_URL}/datasets/{settings.results_repo}/blob/main/{quote(details_path(key, benchmark))}"
    return quote(details_link(key, benchmark)) if getattr(store, "root", None) is not None else None


def load_snippet(store: Store, settings: Settings, key: str, benchmark: str) -> str:
    """Python that loads the same details with `datasets`: from the results dataset repo and file on the Hub store;
    on the local store from the file the download button saves (never the file's path on the server)."""
    path = details_path(key, benchmark)
    if settings.store_backend == "hub":
        return (f'from datasets import load_dataset; details = load_dataset("{settings.results_repo}", '
                f'data_files="{path}", split="train")')
    return ('# the file "Download the details (parquet)" saves\n'
            f'from datasets import load_dataset; details = load_dataset("parquet", data_files="{benchmark}.parquet", '
            'split="train")')
