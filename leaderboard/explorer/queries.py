"""The explorer's questions about a run's item table (evaluator cards' ItemView.items): filter, sort, page, group,
compare with a second run, and the page URL that holds it all.

Everything works on the cached item table (leaderboard.explorer.details_cache) with pandas; nothing here reads the
store.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping
from urllib.parse import urlencode

import pandas as pd

from evaluator import api

PAGE_SIZE = 25
NO_MARK = "no option mark found"
A_RIGHT_B_WRONG, A_WRONG_B_RIGHT, BOTH_WRONG, BOTH_RIGHT = ("A right, B wrong", "A wrong, B right", "both wrong",
                                                           "both right")
COMPARE_OUTCOMES = (A_RIGHT_B_WRONG, A_WRONG_B_RIGHT, BOTH_WRONG, BOTH_RIGHT)
SEARCHED = ("item", "question", "answer", "gold", "answer_b")
GROUP_SEP = " = "
# the URL's query names for each field of a Query; none is a name a route of Gradio claims (its page route reads
# `page` and `deep_link`: a link holding `page=2` would be answered "Internal Server Error" for the whole Space)
URL_NAMES = {"run": "run", "compare": "vs", "benchmark": "bench", "metric": "metric", "outcome": "outcome",
             "groups": "group", "search": "q", "sort": "sort", "descending": "desc", "page": "at", "item": "item"}
MAX_PAGE = 1_000_000  # beyond any real run's pages; keeps a page number a plain int


@dataclass(frozen=True)
class Query:
    """One state of the explorer: which run (and second run), which benchmark, the filters, the order, the page
    and the opened question. Every field is in the page URL."""

    run: str = ""
    benchmark: str = ""
    compare: str = ""
    outcome: str = ""  # "" (every question), an outcome, NO_MARK, or one of COMPARE_OUTCOMES
    groups: tuple[str, ...] = ()  # "<column> = <value>": questions in any chosen value of each chosen column
    search: str = ""
    sort: str = ""  # a column of the table ("" = the benchmark's order)
    descending: bool = False
    page: int = 1
    item: str = ""
    metric: str = ""  # a board metric's key ("gen_overall"): only the questions behind it, and its value


def query_string(query: Query) -> str:
    """The URL query of a state (empty fields left out), e.g. "tab=explorer&run=org/m/abc_auto&bench=cure"."""
    params: list[tuple[str, str]] = [("tab", "explorer")]
    for name, url_name in URL_NAMES.items():
        value = getattr(query, name)
        if name == "groups":
            params.extend((url_name, g) for g in value)
        elif name == "descending":
            if value:
                params.append((url_name, "1"))
        elif name == "page":
            if value and value > 1:
                params.append((url_name, str(value)))
        elif value:
            params.append((url_name, str(value)))
    return urlencode(params)


def from_params(params: Mapping[str, object]) -> Query:
    """A state from URL query parameters (a mapping of name -> text, or -> list of texts for repeats); anything
    malformed falls back to the default, so a damaged link still opens the explorer."""

    def values(name: str) -> list[str]:
        raw = params.get(URL_NAMES[name])
        if raw is None:
            return []
        return [str(v) for v in raw] if isinstance(raw, (list, tuple)) else [str(raw)]

    def first(name: str) -> str:
        found = values(name)
        return found[0][:300] if found else ""

    page = as_page(first("page"))
    groups = tuple(g[:300] for g in values("groups") if GROUP_SEP in g)[:20]
    return Query(run=first("run"), benchmark=first("benchmark"), compare=first("compare"), outcome=first("outcome"),
                 groups=groups, search=first("search"), sort=first("sort"),
                 descending=first("descending") in ("1", "true"), page=page, item=first("item"),
                 metric=first("metric"))


def as_page(value: object) -> int:
    """A page number from anything a URL or a client sent: a whole number in 1..MAX_PAGE, else 1 (nothing finite,
    negative or unreadable raises)."""
    if isinstance(value, bool):
        return 1
    try:
        number = float(value) if isinstance(value, (int, float, str)) and value != "" else 1.0
    except (ValueError, OverflowError):
        return 1
    if not math.isfinite(number) or number != int(number):
        return 1
    return min(max(1, int(number)), MAX_PAGE)


# --------------------------------------------------------------------------------------------- the table

def joined(a: pd.DataFrame, b: pd.DataFrame | None) -> pd.DataFrame:
    """Run A's items with run B's answer, score and outcome beside them (answer_b, score_b, outcome_b; empty where
    B has no such question); A's table unchanged when there is no B."""
    if b is None:
        return a
    other = b[["item", "answer", "score", "outcome"]].rename(
        columns={"answer": "answer_b", "score": "score_b", "outcome": "outcome_b"})
    out = a.merge(other, on="item", how="left", sort=False)
    out["answer_b"] = out["answer_b"].fillna("").astype(object)
    out["outcome_b"] = out["outcome_b"].fillna("not in B").astype(object)
    return out


def _right(outcome: pd.Series) -> pd.Series:
    return outcome == api.CORRECT


def _wrong(score: pd.Series, outcome: pd.Series) -> pd.Series:
    return score.notna() & (outcome != api.CORRECT)


def group_filters(groups: tuple[str, ...]) -> dict[str, set[str]]:
    """{"<column>": {values}} from "<column> = <value>" choices."""
    chosen: dict[str, set[str]] = {}
    for group in groups:
        column, _, value = group.partition(GROUP_SEP)
        chosen.setdefault(column, set()).add(value)
    return chosen


def filtered(table: pd.DataFrame, query: Query) -> pd.DataFrame:
    """The questions that pass the outcome, group and text filters, in the query's order."""
    mask = pd.Series(True, index=table.index)
    outcome = query.outcome
    if outcome == NO_MARK:
        mask &= table["no_mark"]
    elif outcome in COMPARE_OUTCOMES and "score_b" in table:
        a_right, b_right = _right(table["outcome"]), _right(table["outcome_b"])
        a_wrong, b_wrong = _wrong(table["score"], table["outcome"]), _wrong(table["score_b"], table["outcome_b"])
        mask &= {A_RIGHT_B_WRONG: a_right & b_wrong, A_WRONG_B_RIGHT: a_wrong & b_right,
                 BOTH_WRONG: a_wrong & b_wrong, BOTH_RIGHT: a_right & b_right}[outcome]
    elif outcome:
        mask &= table["outcome"] == outcome
    for column, chosen in group_filters(query.groups).items():
        if column in table:
            mask &= table[column].isin(chosen)
    terms = query.search.strip().lower()
    if terms:
        hit = pd.Series(False, index=table.index)
        for column in SEARCHED:
            if column in table:
                hit |= table[column].str.lower().str.contains(terms, regex=False, na=False)
        mask &= hit
    return ordered(table[mask], query.sort, query.descending)


def ordered(table: pd.DataFrame, by: str, descending: bool) -> pd.DataFrame:
    """Sorted by one column (stable, empty values last); the benchmark's own order when `by` is not a column."""
    if not by or by not in table.columns:
        return table
    return table.sort_values(by, ascending=not descending, na_position="last", kind="stable")


def page_of(table: pd.DataFrame, page: int, size: int = PAGE_SIZE) -> tuple[pd.DataFrame, int, int]:
    """(the rows of page `page`, clamped into 1..pages, the page, the number of pages)."""
    pages = max(1, math.ceil(len(table) / size))
    page = min(max(1, int(page or 1)), pages)
    return table.iloc[(page - 1) * size: page * size], page, pages


def page_holding(table: pd.DataFrame, item: str, size: int = PAGE_SIZE) -> int | None:
    """The page of the filtered table that holds `item` (None when the filters hide it)."""
    where = (table["item"].to_numpy() == item).nonzero()[0]
    return int(where[0]) // size + 1 if len(where) else None


def neighbour(table: pd.DataFrame, item: str, step: int) -> str | None:
    """The question `step` places after (negative: before) `item` in the filtered list; the first one (or the last
    for a step back) when `item` is not in it; None when the list is empty or the walk leaves it."""
    ids = table["item"].tolist()
    if not ids:
        return None
    if item not in ids:
        return ids[0] if step > 0 else ids[-1]
    at = ids.index(item) + step
    return ids[at] if 0 <= at < len(ids) else None


# --------------------------------------------------------------------------------------------- summaries

def accuracy(scores: pd.Series) -> float:
    """Mean score over the questions that have one (NaN when none has)."""
    scored = scores.dropna()
    return float(scored.mean()) if len(scored) else math.nan


def summary(table: pd.DataFrame, total: int) -> dict:
    """{"shown", "total", "scored", "accuracy"[, "accuracy_b", "scored_b"]} of the filtered table."""
    out = {"shown": int(len(table)), "total": int(total), "scored": int(table["score"].notna().sum()),
           "accuracy": accuracy(table["score"])}
    if "score_b" in table:
        out.update(scored_b=int(table["score_b"].notna().sum()), accuracy_b=accuracy(table["score_b"]))
    return out


def group_table(table: pd.DataFrame, group_by: tuple[str, ...]) -> pd.DataFrame:
    """Accuracy per value of each group column (and B's and the difference when comparing): columns group,
    value, questions, accuracy A[, accuracy B, B - A], in points (percent)."""
    compare = "score_b" in table
    rows = []
    for column in group_by:
        if column not in table:
            continue
        for value, part in table.groupby(column, sort=True):
            row = {"group": column, "value": value, "questions": len(part),
                   "accuracy A": round(accuracy(part["score"]) * 100, 1)}
            if compare:
                row["accuracy B"] = round(accuracy(part["score_b"]) * 100, 1)
                row["B - A"] = round(row["accuracy B"] - row["accuracy A"], 1)
            rows.append(row)
    columns = ["group", "value", "questions", "accuracy A"] + (["accuracy B", "B - A"] if compare else [])
    return pd.DataFrame(rows, columns=columns)


def group_choices(table: pd.DataFrame, group_by: tuple[str, ...]) -> list[str]:
    """Every "<column> = <value>" a group filter can pick."""
    return [f"{column}{GROUP_SEP}{value}" for column in group_by if column in table
            for value in sorted(table[column].dropna().unique().tolist(), key=str)]


def outcome_choices(table: pd.DataFrame) -> list[str]:
    """The outcome filters that match something here (compare ones when there is a second run)."""
    found = [o for o in api.OUTCOMES if (table["outcome"] == o).any()]
    found += [o for o in table["outcome"].unique().tolist() if o and o not in found]  # "": no outcome of its own
    if table["no_mark"].any():
        found.append(NO_MARK)
    if "score_b" in table:
        found += list(COMPARE_OUTCOMES)
    return found


def known_outcomes(table: pd.DataFrame) -> list[str]:
    """Every outcome a filter may name on this table (matching or not): the benchmarks' outcomes, the table's own,
    the no-mark filter and, with a second run, the compare ones."""
    return list(dict.fromkeys([*api.OUTCOMES, NO_MARK, *outcome_choices(table)]))


def with_page(query: Query, table: pd.DataFrame) -> Query:
    """The query turned to the page that holds its opened question (unchanged when none is open or hidden)."""
    page = page_holding(table, query.item) if query.item else None
    return replace(query, page=page) if page else query
