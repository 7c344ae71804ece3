"""The Explorer's API endpoints for scripts (gradio_client): /explorer_items (a page of a run's questions, with the
tab's filters) and /explorer_item (one question, with a URL of its image). Every answer is plain JSON; a mistake
comes back as {"error": ...} naming what was wrong (the run key, the benchmark, the outcome, the metric), never a
traceback.
"""
from __future__ import annotations

import logging
from typing import Callable

import gradio as gr
import pandas as pd
from gradio import processing_utils, route_utils

from evaluator import api
from leaderboard.explorer import queries as eq
from leaderboard.explorer.details_cache import DetailsCache, DetailsError
from leaderboard.explorer.protocols import protocol_notes
from leaderboard.explorer.views import item_json, list_items, listing_json, measure_of, open_item, run_coverage
from leaderboard.settings import Settings

log = logging.getLogger(__name__)

INTERNAL = "the explorer failed because of an internal error (it was logged); nothing was changed"
NO_RUN = "no run given: name a run by its key, <org>/<model>/<sha12>_<precision> (the Explorer's address holds it)"
API_KINDS = {"groups": "a list of texts", "descending": "true or false",
             "page": f"a whole number from 1 to {eq.MAX_PAGE:,}"}


def _text(value: object, limit: int = 300) -> str:
    return value[:limit] if isinstance(value, str) else ""


def to_query(benchmark, run, compare, outcome, groups, search, sort, descending, page, item,
             metric="") -> eq.Query:
    """A state from the controls' values (or an API call's): a value of the wrong type counts as empty."""
    groups = tuple(_text(g) for g in groups if isinstance(g, str))[:20] if isinstance(groups, (list, tuple)) else ()
    return eq.Query(run=_text(run), benchmark=_text(benchmark), compare=_text(compare), outcome=_text(outcome),
                    groups=groups, search=_text(search), sort=_text(sort), descending=descending is True,
                    page=eq.as_page(page), item=_text(item).strip(), metric=_text(metric))


def _shown(value: object) -> str:
    """A short quotation of a value a client sent (an int too long for str() is said by its length)."""
    try:
        return repr(str(value)[:40])
    except ValueError:  # more digits than Python turns into text
        return f"of {value.bit_length()} bits" if isinstance(value, int) else "(unreadable)"


def api_problem(**values) -> str | None:
    """Why an API call's arguments are not what the endpoint takes (None when they are): texts, a list of texts for
    groups, true/false for descending, a finite whole number for page; null means "not given"."""
    for name, value in values.items():
        if value is None:
            continue
        if name == "groups":
            fits = isinstance(value, list) and all(isinstance(g, str) for g in value)
        elif name == "descending":
            fits = isinstance(value, bool)
        elif name == "page":  # compared, never converted: an int of 400 digits is no float
            fits = (isinstance(value, (int, float)) and not isinstance(value, bool) and 1 <= value <= eq.MAX_PAGE
                    and value == int(value))
        else:
            fits = isinstance(value, str)
        if not fits:
            return f"{name} must be {API_KINDS.get(name, 'a text')}, not {type(value).__name__} {_shown(value)}"
    return None


def query_problem(query: eq.Query, names: list[str]) -> str | None:
    """What a query names that does not exist (None when all is known): no run, an unknown benchmark or metric."""
    if not query.run:
        return NO_RUN
    if query.benchmark not in names:
        return f"unknown benchmark {query.benchmark[:60]!r}; known: {', '.join(names)}"
    if query.metric:
        card = api.card(query.benchmark)
        known = [m.key for m in card.metrics if measure_of(card, m.key) is not None]
        if query.metric not in known:
            return (f"unknown metric {query.metric[:60]!r} of {card.title}; known: "
                    f"{', '.join(known) or 'none (its questions are listed without a metric)'}")
    return None


def outcome_problem(outcome: str, offered: list[str]) -> str | None:
    """An outcome filter that names no outcome (None when it is one, matching or not)."""
    known = list(dict.fromkeys([*api.OUTCOMES, eq.NO_MARK, *offered]))
    if outcome and outcome not in known:
        return f"unknown outcome {outcome[:60]!r}; known: {', '.join(known)}"
    return None


def root_url(request: gr.Request | None, root_path: str) -> str:
    """The app's public address as the request reached it ("" when unknown)."""
    inner = getattr(request, "request", None) if request is not None else None
    if inner is None or not hasattr(inner, "url"):
        return ""
    return route_utils.get_root_url(inner, inner.url.path, root_path or None)


def picture_url(picture, image_component: gr.Image, root: str) -> str | None:
    """Put the picture in Gradio's cache (as an Image output would) and give its address on Gradio's file route."""
    if picture is None:
        return None
    path = processing_utils.save_pil_to_cache(picture, cache_dir=image_component.GRADIO_CACHE, format="png")
    image_component.temp_files.add(path)  # files the app created are the ones its file route serves
    return f"{root}/gradio_api/file={path}"


def register(cache: DetailsCache, settings: Settings, names: list[str], board_copy: Callable[[], pd.DataFrame | None],
             image_component: gr.Image, root_path: Callable[[], str]) -> None:
    """Declare the two endpoints (inside the app's Blocks context)."""

    def explorer_items(run: str, benchmark: str, compare: str = "", outcome: str = "", groups: list[str] | None = None,
                       search: str = "", sort: str = "", descending: bool = False, page: int = 1,
                       metric: str = "") -> dict:
        """One page of a run's questions on a benchmark, filtered and sorted as in the Explorer tab (metric: a board
        metric's key, e.g. "gen_overall": only the questions behind it, its value in the summary): {query, page,
        pages, summary, items, groups, outcomes, group_filters, paired}; paired, with a second run (compare): A - B
        on the listed questions both scored ({difference, low, high, stderr, shared, a_only_right, b_only_right,
        method, text}), null without one, and summary.protocol a sentence for each way the two were asked
        differently (suite, limit, mode, thinking, judge); {"error": ...} naming what was wrong."""
        problem = api_problem(run=run, benchmark=benchmark, compare=compare, outcome=outcome, groups=groups,
                              search=search, sort=sort, descending=descending, page=page, metric=metric)
        query = to_query(benchmark, run, compare, outcome, groups, search, sort, descending, page, "", metric)
        problem = problem or query_problem(query, names)
        if problem:
            return {"error": problem}
        try:
            listing = list_items(cache, query)
            problem = outcome_problem(query.outcome, listing.outcome_choices)
            if problem:
                return {"error": problem}
            board = board_copy()
            found = listing_json(listing, run_coverage(board, query.run, query.benchmark))
            found["summary"]["protocol"] = protocol_notes(board, query.run, query.compare, query.benchmark)
            return found
        except DetailsError as exc:
            return {"error": str(exc)}
        except Exception:  # noqa: BLE001 - an API answer, never a traceback
            log.exception("explorer_items failed for %s", eq.query_string(query)[:300])
            return {"error": INTERNAL}

    def explorer_item(run: str, benchmark: str, item: str, compare: str = "", request: gr.Request = None) -> dict:
        """One question of a run (and of a second run): {item, row, parts, parts_b, missing_b, has_picture, image,
        image_url, picture_note}; image_url: an absolute URL (Gradio's file route) of the image as the model saw
        it, null when there is none; {"error": ...} naming what was wrong."""
        problem = api_problem(run=run, benchmark=benchmark, item=item, compare=compare)
        query = to_query(benchmark, run, compare, "", [], "", "", False, 1, item)
        problem = problem or query_problem(query, names)
        if problem:
            return {"error": problem}
        try:
            opened = open_item(cache, query, settings.images_dir, with_picture=True)
            url = picture_url(opened.picture, image_component, root_url(request, root_path()))
            return {**item_json(opened), "has_picture": url is not None, "image_url": url}
        except DetailsError as exc:
            return {"error": str(exc)}
        except Exception:  # noqa: BLE001 - an API answer, never a traceback
            log.exception("explorer_item failed for %s", eq.query_string(query)[:300])
            return {"error": INTERNAL}

    gr.api(explorer_items, api_name="explorer_items")
    gr.api(explorer_item, api_name="explorer_item")


__all__ = ["api_problem", "register", "to_query", "INTERNAL"]
