"""The explorer's data layer on real details written by tiny-model runs of every benchmark: item tables from the
cards, filtering, grouping, paging, sorting, compare, opened questions, the bounded cache, the URL state."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from evaluator import api
from leaderboard.board.columns import schema
from leaderboard.board.file import load_board
from leaderboard.explorer import queries as eq
from leaderboard.explorer.details_cache import DetailsCache, DetailsError, details_path
from leaderboard.explorer.views import list_items, listing_json, open_item, runs_for
from tests.explorer_runs import publish_runs


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("published-template")


@pytest.fixture
def published(store, settings, finished_runs, template):
    """A store holding the three finished runs (published once a module, then copied); returns their keys by name."""
    return publish_runs(store, settings, finished_runs, template)


BENCHMARKS = {"cure": "vision-a", "reform": "vision-a", "lave": "vision-a", "simpleqa": "text"}


@pytest.mark.parametrize("benchmark", list(BENCHMARKS))
def test_item_table_has_the_declared_shape_for_every_benchmark(benchmark, store, published):
    cache = DetailsCache(store)
    entry = cache.get(published[BENCHMARKS[benchmark]], benchmark)
    card = api.card(benchmark)
    items = entry.items
    assert list(items.columns) == [*api.ITEM_COLUMNS, *card.item_view.group_by]
    assert items["item"].is_unique and len(items) > 0
    assert set(items["outcome"]) <= set(api.OUTCOMES) | {""}
    assert "" not in eq.outcome_choices(items)  # never offered as an outcome
    if benchmark == "reform":  # a caption's score is its dataset's CIDEr: no outcome of its own, and not "ungraded"
        captions = items[items["form"] == "caption"]
        assert len(captions) and set(captions["outcome"]) == {""}
        assert set(captions["grade"]) == {"scored with its dataset (CIDEr)"}
    scored = items["score"].dropna()
    assert ((scored >= 0) & (scored <= 1)).all()
    # every question's rows are found, and its parts open
    for item in items["item"].head(3):
        rows = entry.item_rows(item)
        assert rows and all(r["item"] == item for r in rows)
        parts = card.item_view.parts(rows)
        assert parts and all(isinstance(p, api.ItemPart) for p in parts)


@pytest.mark.parametrize("benchmark", list(BENCHMARKS))
def test_an_opened_question_shows_the_near_ties_of_its_replies(benchmark, store, published):
    """Issue 69, point 2: a reply's near ties (the details column near_ties) show under it, escaped."""
    import json

    from leaderboard.explorer.item_html import item_html

    entry = DetailsCache(store).get(published[BENCHMARKS[benchmark]], benchmark)
    parts = api.card(benchmark).item_view.parts
    tie = json.dumps([{"step": 3, "kind": "top two", "margin": 2e-4, "tokens": ["<b>", " x"], "before": "ab12"}])
    shown = [item_html("q", [("run", parts([{**r, "near_ties": tie} for r in entry.item_rows(item)]), "")])
             for item in entry.items["item"].head(8)]
    said = "step 3: within 0.0002 logits: &#x27;&lt;b&gt;&#x27; (chosen) and &#x27; x&#x27;"
    assert any("Near ties" in html and said in html for html in shown), shown[0][-2000:]
    assert not any("Near ties" in item_html("q", [("run", parts(entry.item_rows(item)), "")])
                   for item in entry.items["item"].head(8) if not _tied(entry.item_rows(item)))


def _tied(rows: list[dict]) -> bool:
    """Whether any of a question's rows recorded a near tie (a tiny model's reply may have)."""
    return any(isinstance(r.get("near_ties"), str) and r["near_ties"] not in ("", "[]") for r in rows)


def test_item_tables_agree_with_the_results(store, published, finished_runs):
    """The explorer's accuracy over every question is the benchmark's own headline share where they are the same
    quantity: CURE's Ro, LAVE's score, SimpleQA's correct."""
    import json

    cache = DetailsCache(store)
    results = json.loads((finished_runs["vision-a"].out_dir / "results.json").read_text())["benchmarks"]
    text = json.loads((finished_runs["text"].out_dir / "results.json").read_text())["benchmarks"]
    cure = cache.get(published["vision-a"], "cure").items
    assert eq.accuracy(cure["score"]) == pytest.approx(results["cure"]["scores"]["Ro"])
    lave = cache.get(published["vision-a"], "lave").items
    assert eq.accuracy(lave["score"]) == pytest.approx(results["lave"]["scores"]["lave"])
    simpleqa = cache.get(published["text"], "simpleqa").items
    assert eq.accuracy(simpleqa["score"]) == pytest.approx(text["simpleqa"]["scores"]["correct"])
    assert (simpleqa["outcome"] == "ungraded").sum() == text["simpleqa"]["counts"]["ungraded"]


def test_filters_by_outcome_group_and_text(store, published):
    cache = DetailsCache(store)
    key = published["text"]
    table = cache.get(key, "simpleqa").items
    correct = eq.filtered(table, eq.Query(outcome="correct"))
    assert len(correct) == (table["outcome"] == "correct").sum() > 0
    assert set(correct["outcome"]) == {"correct"}
    topic = table["topic"].iloc[0]
    by_topic = eq.filtered(table, eq.Query(groups=(f"topic = {topic}",)))
    assert set(by_topic["topic"]) == {topic} and len(by_topic) == (table["topic"] == topic).sum()
    # two values of one column: either; two columns: both
    other = next(t for t in table["topic"] if t != topic)
    either = eq.filtered(table, eq.Query(groups=(f"topic = {topic}", f"topic = {other}")))
    assert len(either) == table["topic"].isin([topic, other]).sum()
    kind = by_topic["answer_type"].iloc[0]
    both = eq.filtered(table, eq.Query(groups=(f"topic = {topic}", f"answer_type = {kind}")))
    assert len(both) == ((table["topic"] == topic) & (table["answer_type"] == kind)).sum()
    found = eq.filtered(table, eq.Query(search="NOBEL prize"))
    assert len(found) == 1 and "Nobel" in found["question"].iloc[0]
    assert len(eq.filtered(table, eq.Query(search="no such words anywhere"))) == 0


def test_no_mark_filter_and_image_unavailable_outcome(store, published):
    cache = DetailsCache(store)
    reform = cache.get(published["vision-a"], "reform").items
    no_mark = eq.filtered(reform, eq.Query(outcome=eq.NO_MARK))
    assert len(no_mark) > 0 and set(no_mark["mode"]) == {"generation"}
    assert eq.NO_MARK in eq.outcome_choices(reform)


def test_sorting_paging_and_walking(store, published):
    cache = DetailsCache(store)
    table = cache.get(published["vision-a"], "reform").items
    by_score = eq.ordered(table, "score", descending=True)
    scores = by_score["score"].dropna().tolist()
    assert scores == sorted(scores, reverse=True)
    assert by_score["score"].isna().sum() == 0 or math.isnan(by_score["score"].iloc[-1])  # empty values last
    rows, page, pages = eq.page_of(table, 2, size=10)
    assert page == 2 and pages == math.ceil(len(table) / 10) and rows["item"].tolist() == table["item"][10:20].tolist()
    assert eq.page_of(table, 999, size=10)[1] == pages  # clamped
    assert eq.page_holding(table, table["item"].iloc[23], size=10) == 3
    first, second = table["item"].iloc[0], table["item"].iloc[1]
    assert eq.neighbour(table, first, 1) == second and eq.neighbour(table, second, -1) == first
    assert eq.neighbour(table, first, -1) is None
    assert eq.neighbour(table, "not-there", 1) == first


def test_group_table_counts_and_accuracy(store, published):
    cache = DetailsCache(store)
    table = cache.get(published["vision-a"], "lave").items
    groups = eq.group_table(table, ("kind",))
    assert groups["questions"].sum() == len(table)
    for row in groups.itertuples():
        part = table[table["kind"] == row.value]
        assert row.questions == len(part)
        assert getattr(row, "_4") == pytest.approx(round(eq.accuracy(part["score"]) * 100, 1))


def test_compare_two_runs(store, published):
    cache = DetailsCache(store)
    query = eq.Query(run=published["vision-a"], benchmark="lave", compare=published["vision-b"])
    listing = list_items(cache, query)
    table = listing.filtered
    assert {"answer_b", "score_b", "outcome_b"} <= set(table.columns)
    # run B's judge rated every answer 3: B is right everywhere
    assert (table["outcome_b"] == "correct").all()
    a_wrong = eq.filtered(table, eq.Query(outcome=eq.A_WRONG_B_RIGHT))
    assert len(a_wrong) == (table["outcome"] != "correct").sum() > 0
    assert len(eq.filtered(table, eq.Query(outcome=eq.A_RIGHT_B_WRONG))) == 0
    assert len(eq.filtered(table, eq.Query(outcome=eq.BOTH_RIGHT))) == (table["outcome"] == "correct").sum()
    assert listing.summary["accuracy_b"] == pytest.approx(1.0)
    assert {"accuracy A", "accuracy B", "B - A"} <= set(listing.groups.columns)
    row = listing.groups.iloc[0]
    assert row["B - A"] == pytest.approx(row["accuracy B"] - row["accuracy A"], abs=0.11)
    opened = open_item(cache, eq.Query(run=query.run, benchmark="lave", compare=query.compare,
                                       item=table["item"].iloc[0]), store.root / "images")
    assert opened.parts_b is not None and opened.parts_a != opened.parts_b


def test_compare_gives_the_paired_difference_on_the_listed_questions(store, published):
    """With a run B the listing carries A - B on the listed questions both scored (evaluator.api.paired_scores),
    the summary ends with its sentence and the API's JSON with its numbers; B's judge rated every answer 3, so no
    question is right in A alone, and each one A got wholly wrong is right in B alone."""
    import json
    from dataclasses import replace

    from leaderboard.explorer.views import summary_text

    cache = DetailsCache(store)
    query = eq.Query(run=published["vision-a"], benchmark="lave", compare=published["vision-b"])
    listing = list_items(cache, query)
    paired, table = listing.paired, listing.filtered
    both = table[table["score"].notna() & table["score_b"].notna()]
    assert paired.shared == len(both) > 0
    assert paired.difference == pytest.approx((both["score"] - both["score_b"]).mean())
    assert paired.a_only_right == 0 and paired.b_only_right == int((both["score"] == 0).sum())
    assert paired.interval.low <= paired.difference <= paired.interval.high
    said = summary_text(listing.summary, paired)
    assert said.endswith(f" scored · {paired.text()}") and f"on {paired.shared} shared items" in said
    out = listing_json(listing)
    json.dumps(out)
    assert set(out["paired"]) == {"difference", "low", "high", "stderr", "shared", "a_only_right", "b_only_right",
                                  "method", "text"}
    assert out["paired"]["shared"] == paired.shared and out["paired"]["text"] == paired.text()
    assert out["paired"]["difference"] == pytest.approx(paired.difference)
    # only the questions a filter lists: A's right ones are right in B too
    right = list_items(cache, replace(query, outcome="correct"))
    assert right.paired.shared == len(right.filtered) > 0
    assert right.paired.difference == 0.0 and right.paired.b_only_right == 0
    alone = list_items(cache, replace(query, compare=""))
    assert alone.paired is None and listing_json(alone)["paired"] is None
    assert " · A - B" not in summary_text(alone.summary, alone.paired)


def test_compare_clusters_reform_questions_by_their_instance(store, published, finished_runs):
    """ReForm-Eval's generation and likelihood questions of one instance are one unit of the paired difference; the
    Explorer and `python -m evaluator compare` (compare_details on the details files) give the same numbers."""
    cache = DetailsCache(store)
    listing = list_items(cache, eq.Query(run=published["vision-a"], benchmark="reform", compare=published["vision-b"]))
    paired, table = listing.paired, listing.filtered
    both = table[table["score"].notna() & table["score_b"].notna()]
    assert paired.shared == len(both) and "clustered clt by instance" in paired.interval.method
    instances = both["item"].str.rsplit("/", n=1).str[0].nunique()
    assert paired.interval.n == instances < len(both)
    files = [pd.read_parquet(finished_runs[name].out_dir / "details" / "reform.parquet")
             for name in ("vision-a", "vision-b")]
    assert api.compare_details(api.card("reform"), *files) == paired


def test_compare_cure_likelihood_with_generation(store, published):
    cache = DetailsCache(store)
    listing = list_items(cache, eq.Query(run=published["vision-a"], benchmark="cure", compare=published["vision-b"]))
    assert listing.summary["shown"] == 20 and "accuracy_b" in listing.summary
    opened = open_item(cache, eq.Query(run=published["vision-a"], benchmark="cure", compare=published["vision-b"],
                                       item="cure-0000"), store.root / "images")
    step_a = next(p for p in opened.parts_a if p.title == "Step 1")
    step_b = next(p for p in opened.parts_b if p.title == "Step 1")
    assert "mean log-likelihood" in step_a.table[0] and len(step_a.table) == 6  # six options, likelihoods shown
    assert "mean log-likelihood" not in step_b.table[0]  # generation: no likelihoods
    assert dict(step_b.facts)["how the answer was read"].startswith("generation")


def test_opened_questions_show_what_each_benchmark_promises(store, published):
    cache = DetailsCache(store)
    images = store.root / "images"
    cure = open_item(cache, eq.Query(run=published["vision-a"], benchmark="cure", item="cure-0001"), images)
    summary = dict(cure.parts_a[0].facts)
    assert {"whole chain right", "in Cf's denominator (chain right)", "in Cb's denominator (inference right)"} <= \
        set(summary)
    assert [p.title for p in cure.parts_a][-1] == "High-level inference"
    assert any(label == "Prompt as sent" and "red rectangle" in text for label, text in cure.parts_a[1].texts)
    assert cure.picture is not None and cure.picture_note == ""
    # the region is drawn as the model saw it: red pixels on the picture
    import numpy as np

    pixels = np.asarray(cure.picture.convert("RGB")).reshape(-1, 3)
    red = ((pixels[:, 0] > 200) & (pixels[:, 1] < 50) & (pixels[:, 2] < 50)).sum()
    assert red > 50

    reform = open_item(cache, eq.Query(run=published["vision-a"], benchmark="reform", item="coarse-01/gen"), images)
    question, repeats = reform.parts_a
    assert "entropy of the repeats' answers (instability)" in dict(question.facts)
    assert len(repeats.table) == 5 and {"template", "options as shown", "output", "answer"} <= set(repeats.table[0])
    assert "(" in repeats.table[0]["options as shown"]

    simpleqa = open_item(cache, eq.Query(run=published["text"], benchmark="simpleqa", item="simpleqa-0000"), images)
    titles = [p.title for p in simpleqa.parts_a]
    assert any(t.startswith("Stated confidence") for t in titles) and any(t.startswith("Sampled") for t in titles)
    sampled = next(p for p in simpleqa.parts_a if p.title.startswith("Sampled"))
    assert "most frequent answer" in dict(sampled.facts) and len(sampled.table) == 5
    answer = next(p for p in simpleqa.parts_a if p.title.startswith("Answer"))
    assert any(label == "Judge's raw output" and text for label, text in answer.texts)
    assert simpleqa.picture is None and simpleqa.picture_note == ""  # a text benchmark: no image, no complaint

    lave = open_item(cache, eq.Query(run=published["vision-a"], benchmark="lave", item="lave-01"), images)
    strict = next(p for p in lave.parts_a if p.title.startswith("Strict"))
    assert [r["metric"] for r in strict.table][:3] == ["VQA accuracy", "ANLS", "exact match (VQA-normalised)"]
    assert all(r["agrees with the judge"] in ("yes", "no") for r in strict.table)
    assert lave.picture is not None


def test_unavailable_image_shows_a_note_and_the_question_stays_listed(store, settings, published):
    """A LAVE row whose image cannot be read: still listed, marked image unavailable, opened with a note."""
    import io

    cache = DetailsCache(store)
    path = details_path(published["vision-a"], "lave")
    frame = pd.read_parquet(io.BytesIO(store.read_bytes(path)))
    frame.loc[0, "image_ref"] = "lave_sample/not-there.png"
    frame.loc[0, ["status", "error"]] = ["image_unavailable", "lave_sample/not-there.png: file not found"]
    frame.loc[0, ["rating", "lave", "score"]] = [math.nan] * 3
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    store.write_bytes(path, buffer.getvalue())
    listing = list_items(cache, eq.Query(run=published["vision-a"], benchmark="lave", outcome="image unavailable"))
    assert listing.rows["item"].tolist() == [frame.loc[0, "question_id"]]
    opened = open_item(cache, eq.Query(run=published["vision-a"], benchmark="lave", item="lave-01"),
                       store.root / "images")
    assert opened.picture is None and opened.picture_note.startswith("Image unavailable: file not found")


def test_the_cache_reads_each_run_once_and_stays_bounded(store, published):
    cache = DetailsCache(store, size=2)
    for _ in range(3):
        cache.get(published["vision-a"], "cure")
    assert cache.reads == 1
    cache.get(published["vision-a"], "lave")
    cache.get(published["vision-a"], "reform")  # drops cure, the least recently used
    cache.get(published["vision-a"], "cure")
    assert cache.reads == 4 and len(cache._entries) == 2


def test_bad_runs_and_damaged_details_give_a_message(store, published):
    cache = DetailsCache(store)
    for bad in ("../../etc/passwd", "org/../0123456789ab_auto", "org/.hidden/0123456789ab_auto"):
        with pytest.raises(DetailsError, match="is not a run's key"):
            cache.get(bad, "cure")
    with pytest.raises(DetailsError, match="has no SimpleQA details"):
        cache.get(published["vision-a"], "simpleqa")
    store.write_bytes(details_path(published["vision-b"], "cure"), b"not a parquet file")
    with pytest.raises(DetailsError, match="could not be read"):
        cache.get(published["vision-b"], "cure")
    with pytest.raises(DetailsError, match="no question"):
        open_item(cache, eq.Query(run=published["vision-a"], benchmark="cure", item="nope"), store.root)


def test_runs_for_lists_the_runs_that_have_the_benchmark(store, settings, published):
    raw = load_board(store, schema(settings.benchmarks))
    cure_runs = [key for _, key in runs_for(raw, "cure")]
    assert set(cure_runs) == {published["vision-a"], published["vision-b"]}
    assert [key for _, key in runs_for(raw, "simpleqa")] == [published["text"]]


def test_url_state_round_trips():
    query = eq.Query(run="org/m/abcdef012345_auto", benchmark="lave", compare="org/n/0123456789ab_float32",
                     outcome=eq.A_RIGHT_B_WRONG, groups=("kind = count", "kind = color"), search="red & blue",
                     sort="score", descending=True, page=3, item="lave-07")
    from urllib.parse import parse_qs

    params = parse_qs(eq.query_string(query))
    assert params["tab"] == ["explorer"]
    assert eq.from_params(params) == query
    assert eq.from_params({"at": ["-4"], "group": ["no separator"], "desc": ["yes"]}) == eq.Query()
    for junk in ("x", "Infinity", "-Infinity", "NaN", "1e999", "2.5", ""):
        assert eq.from_params({"at": junk}).page == 1
    assert eq.from_params({"at": "99999999999999999999999"}).page == eq.MAX_PAGE
    assert "page=" not in eq.query_string(query) and "at=3" in eq.query_string(query)


def test_listing_json_is_plain_data(store, published):
    import json

    cache = DetailsCache(store)
    out = listing_json(list_items(cache, eq.Query(run=published["text"], benchmark="simpleqa", page=2), ))
    json.dumps(out)  # serialisable: no NaN objects, no numpy values
    assert out["page"] == 2 and out["pages"] == 2 and len(out["items"]) == 31 - eq.PAGE_SIZE
    assert out["summary"]["total"] == 31


def test_take_the_data_download_and_datasets_snippet(store, settings, published, tmp_path, monkeypatch):
    import shutil
    from dataclasses import replace

    from leaderboard.explorer.views import details_file, load_snippet

    key = published["text"]
    path = details_file(store, settings, key, "simpleqa")
    assert path and path.endswith("simpleqa.parquet") and pd.read_parquet(path).shape[0] == 248
    snippet = load_snippet(store, settings, key, "simpleqa")
    assert str(store.root) not in snippet and str(Path(store.root).resolve()) not in snippet  # no server path
    monkeypatch.chdir(tmp_path)
    shutil.copy(path, tmp_path / Path(path).name)  # what the download button saves
    scope: dict = {}
    exec(snippet, scope)  # the line loads the downloaded details with datasets
    assert scope["details"].num_rows == 248 and "judge_rationale" in scope["details"].column_names
    assert details_file(store, settings, key, "cure") is None
    hub = replace(settings, store_backend="hub", results_repo="org/results")
    assert load_snippet(store, hub, key, "lave") == (
        'from datasets import load_dataset; details = load_dataset("org/results", '
        f'data_files="details/{key}/lave.parquet", split="train")')


def test_the_summary_says_the_runs_coverage_when_the_board_knows_it():
    from leaderboard.explorer.views import run_coverage, summary_text

    raw = pd.DataFrame({"key": ["a/b/0123456789ab_auto"], "cure_coverage": [0.56]})
    assert run_coverage(raw, "a/b/0123456789ab_auto", "cure") == 0.56
    assert run_coverage(raw, "a/b/0123456789ab_auto", "lave") is None and run_coverage(None, "x", "cure") is None
    summary = {"shown": 3, "total": 10, "accuracy": 0.5, "scored": 4}
    assert "coverage **56.0%** of the suite's items" in summary_text({**summary, "coverage": 0.56})
    assert "coverage" not in summary_text({**summary, "coverage": None})


def test_the_summary_ends_with_the_paired_difference_after_run_bs_accuracy():
    """A - B on three shared questions, by hand: differences 1, 0, 0, mean 1/3, SE = sqrt(6/9) / 3 = 0.272."""
    from leaderboard.explorer.views import summary_text

    summary = {"shown": 3, "total": 10, "accuracy": 2 / 3, "scored": 3, "accuracy_b": 1 / 3, "scored_b": 3}
    paired = api.paired_difference({"q1": 1.0, "q2": 0.0, "q3": 1.0}, {"q1": 0.0, "q2": 0.0, "q3": 1.0})
    assert summary_text(summary, paired) == (
        "**3** of 10 questions · accuracy **66.7%** over 3 scored · run B: **33.3%** over 3 scored · A - B = +33.3 "
        "points (95% -20.0 to +86.7), on 3 shared items, A right and B wrong on 1, the reverse on 0")
    none = api.paired_difference({"q1": 1.0}, {"q2": 1.0})
    assert summary_text(summary, none).endswith(" · no shared items: the two runs cannot be compared")
    assert summary_text(summary).endswith("run B: **33.3%** over 3 scored")


def test_a_board_score_lists_the_questions_behind_it_and_repeats_its_value(store, published):
    """ReForm-Eval's board metrics: each one's questions (mode, dimension), and the board's number on them."""
    from leaderboard.explorer.views import metric_choices, summary_text

    key = published["vision-a"]
    scores = store.read_json(f"results/{key}.json")["benchmarks"]["reform"]["scores"]
    keys = [k for _, k in metric_choices(api.card("reform"))]
    assert {"gen_overall", "lik_overall", "gen_spatial", "instability", "format_hit_rate"} <= set(keys)
    cache = DetailsCache(store)
    every = list_items(cache, eq.Query(run=key, benchmark="reform")).summary["total"]
    thinking = store.read_json(f"results/{key}.json")["benchmarks"]["reform"]["thinking"]
    for metric in keys:
        listing = list_items(cache, eq.Query(run=key, benchmark="reform", metric=metric), page_size=10_000)
        if metric == "thought_unclosed":  # a count: replies that ended inside their thought (none without thinking)
            assert listing.summary["metric_value"] == thinking["unclosed"] == 0 and len(listing.filtered) == 0
            continue
        value, board = listing.summary["metric_value"], scores.get(metric, math.nan)
        assert (math.isnan(value) and math.isnan(board)) or value == pytest.approx(board, abs=1e-12), metric
        rows = listing.filtered
        assert 0 < len(rows) < every
        if metric.startswith("gen_") or metric in ("instability", "format_hit_rate"):
            assert set(rows["mode"]) == {"generation"}
        else:  # likelihood questions, and the free-form ones (answered by generation) that enter both modes
            assert ((rows["mode"] == "likelihood") | (rows["form"] != "multiple_choice")).all()
    gen = list_items(cache, eq.Query(run=key, benchmark="reform", metric="gen_overall"))
    assert gen.query.metric == "gen_overall" and "metric=gen_overall" in eq.query_string(gen.query)
    assert "ReForm gen overall" in summary_text(gen.summary)
    assert list_items(cache, eq.Query(run=key, benchmark="reform", metric="nope")).query.metric == ""


def _behind_count(benchmark: str, metric: str, result: dict) -> int | None:
    """How many questions are behind a board metric, from the run's own results file (None: it does not say)."""
    counts, scores, extra = result["counts"], result["scores"], result.get("extra", {})
    if metric == "thought_unclosed":  # the questions whose reply ended inside its thought (none: no thinking model)
        return result["thinking"]["unclosed"]
    if benchmark == "cure":
        share = {"Cf": scores["Rcot"], "Cb": scores["Rh"]}.get(metric, 1.0)
        return round(share * counts["scored"])
    if benchmark == "lave":
        if metric.startswith("agree_"):
            return extra["agreement"][metric[len("agree_"):]]["n"]
        return {"lave": counts["rated"], "unrated": counts["unrated"], "rating_fallback": counts["rating_fallback"],
                "vqa_accuracy": counts["vqa_accuracy_items"]}.get(metric, counts["answered"])
    if metric == "correct_given_attempted":
        return round(extra["attempted"] * counts["graded"])
    if metric in ("ungraded", "hit_token_limit"):
        return counts[metric]
    return None if metric == "ece" else counts["graded"]


@pytest.mark.parametrize("benchmark", ["cure", "lave", "simpleqa"])
def test_every_board_score_lists_its_questions_and_repeats_its_value(benchmark, store, published):
    """A board score opens the explorer on exactly the questions behind it (CURE's Cf: the instances whose chain is
    right; LAVE's score: the rated answers; SimpleQA's correct given attempted: the attempted ones; ...), and the
    explorer's headline is the board's number, recomputed on those questions by the benchmark's own scoring."""
    from leaderboard.explorer.views import metric_choices, summary_text

    key = published[BENCHMARKS[benchmark]]
    result = store.read_json(f"results/{key}.json")["benchmarks"][benchmark]
    card = api.card(benchmark)
    keys = [k for _, k in metric_choices(card)]
    assert keys == [m.key for m in card.metrics]  # every board metric of the benchmark can be clicked
    cache = DetailsCache(store)
    for metric in keys:
        board = result
        for step in card.metric(metric).where:
            board = board.get(step) if isinstance(board, dict) else None
        board = math.nan if board is None else float(board)
        listing = list_items(cache, eq.Query(run=key, benchmark=benchmark, metric=metric), page_size=10_000)
        value = listing.summary["metric_value"]
        assert (math.isnan(value) and math.isnan(board)) or value == pytest.approx(board, rel=1e-9, abs=1e-12), metric
        expected = _behind_count(benchmark, metric, result)
        if expected is not None:
            assert len(listing.filtered) == expected, metric
        assert card.metric(metric).label in summary_text(listing.summary)
    # the runs hold questions that are not behind some metrics: the lists differ
    sizes = {len(list_items(cache, eq.Query(run=key, benchmark=benchmark, metric=m), page_size=10_000).filtered)
             for m in keys}
    assert len(sizes) > 1


def test_a_metric_older_details_cannot_measure_lists_every_question(store, published, monkeypatch):
    """Details without a column a metric needs (an older run's) list every question, without the metric; a value
    that cannot be computed reads n/a. Neither breaks the tab."""
    from leaderboard.explorer import views

    key = published["vision-a"]
    cache = DetailsCache(store)
    every = list_items(cache, eq.Query(run=key, benchmark="lave")).summary["total"]
    broken = api.Measure(rows=lambda table, details: details["no_such_column"] > 0, value=lambda details: 1.0)
    monkeypatch.setattr(views, "measure_of", lambda card, metric: broken)
    listing = list_items(cache, eq.Query(run=key, benchmark="lave", metric="lave"))
    assert listing.query.metric == "" and listing.summary["total"] == every and "metric" not in listing.summary
    no_value = api.Measure(rows=lambda table, details: table["item"] == table["item"],
                           value=lambda details: details["no_such_column"].mean())
    monkeypatch.setattr(views, "measure_of", lambda card, metric: no_value)
    listing = list_items(cache, eq.Query(run=key, benchmark="lave", metric="lave"))
    assert listing.query.metric == "lave" and math.isnan(listing.summary["metric_value"])
    assert "n/a" in views.summary_text(listing.summary)


def test_a_metric_is_computed_once_per_list_of_questions(store, published, monkeypatch):
    from leaderboard.explorer import views

    key, calls = published["vision-a"], []
    counted = api.Measure(rows=lambda table, details: table["item"] == table["item"],
                          value=lambda details: calls.append(len(details)) or 0.5)
    monkeypatch.setattr(views, "measure_of", lambda card, metric: counted)
    cache = DetailsCache(store)
    for page in (1, 2, 1):  # paging through one list: one computation
        assert list_items(cache, eq.Query(run=key, benchmark="lave", metric="lave", page=page),
                          page_size=10).summary["metric_value"] == 0.5
    assert len(calls) == 1
    list_items(cache, eq.Query(run=key, benchmark="lave", metric="lave", outcome="correct"))  # another list: again
    assert len(calls) == 2 and calls[1] < calls[0]


def test_reform_details_keep_an_image_reference_and_the_item_view_shows_it(store, published, tmp_path):
    key = published["vision-a"]
    cache = DetailsCache(store)
    details = cache.get(key, "reform").details
    assert details["image_ref"].str.fullmatch(r"reform_sample\.json#\d+").all()
    item = cache.get(key, "reform").items["item"].iloc[0]
    opened = open_item(cache, eq.Query(run=key, benchmark="reform", item=item), tmp_path)
    assert opened.picture is not None and opened.picture_note == "" and opened.image_ref.startswith("reform_sample")


def test_a_board_cell_carries_its_metric():
    from leaderboard.ui.explorer import board_cell_query

    headers = ["Model", "Revision", "Precision", "ReForm gen overall", "ReForm coverage"]
    row = ["org/m", "0123456789abcdef", "auto", "0.0", "100.0"]
    labels = {"ReForm gen overall": "reform", "ReForm coverage": "reform"}
    metrics = {"ReForm gen overall": "gen_overall", "ReForm coverage": "coverage"}
    query = board_cell_query(row, 3, headers, labels, metrics)
    assert (query.run, query.benchmark, query.metric) == ("org/m/0123456789ab_auto", "reform", "gen_overall")
    assert "metric=gen_overall" in eq.query_string(query)


def test_a_board_intervals_cell_opens_its_scores_questions():
    from leaderboard.board.columns import schema
    from leaderboard.ui.explorer import board_cell_query, board_labels

    labels, metrics = board_labels(schema(), ["cure", "reform"])
    assert (labels["CURE Ro 95%"], metrics["CURE Ro 95%"]) == ("cure", "Ro")
    assert metrics["ReForm gen overall"] == "gen_overall" and "LAVE score" not in labels
    headers = ["Model", "Revision", "Precision", "CURE Ro 95%"]
    query = board_cell_query(["org/m", "0123456789abcdef", "auto", "0.0-16.1 (n 20)"], 3, headers, labels, metrics)
    assert (query.benchmark, query.metric) == ("cure", "Ro")


def test_the_questions_table_shows_what_compares_and_the_groups_read_in_words():
    """The questions table: the columns a reader compares, in order (a second run's beside A's); the rest (no mark,
    the groups) in More columns with their values in words; the per-group table in percent, labels in words, its
    data the groups' own names (selecting a row filters on them)."""
    from leaderboard.explorer.views import group_labels, group_value, more_frame, page_frame

    rows = pd.DataFrame({"item": ["q1/gen"], "question": ["Q?"], "answer": ["a"], "gold": ["b"], "score": [0.5],
                         "outcome": ["partly correct"], "grade": ["1/2 repeats right"], "no_mark": [True],
                         "dimension": ["coarse_perception"], "dataset": ["TextVQA"], "answer_b": ["c"],
                         "score_b": [1.0], "outcome_b": ["correct"]})
    assert list(page_frame(rows).columns) == ["item", "question", "answer", "answer (B)", "gold", "score",
                                              "score (B)", "outcome", "outcome (B)", "grade"]
    more = more_frame(rows)
    assert more.iloc[0].to_dict() == {"item": "q1/gen", "no mark": "no mark", "dimension": "Coarse perception",
                                      "dataset": "TextVQA"}
    groups = pd.DataFrame({"group": ["dimension", "form"], "value": ["coarse_perception", "caption"],
                           "questions": [12, 3], "accuracy A": [41.7, math.nan], "accuracy B": [45.0, 0.0],
                           "B - A": [3.3, math.nan]})
    value = group_value(groups)
    assert value["data"][0] == ["dimension", "coarse_perception", 12, 41.7, 45.0, 3.3]
    assert value["metadata"]["display_value"] == [
        ["Dimension", "Coarse perception", "12", "41.7%", "45.0%", "+3.3 points"],
        ["Form", "Caption", "3", "n/a", "0.0%", "n/a"]]
    assert group_labels(["dimension = coarse_perception", "chain_length = 2"]) == [
        ("Dimension = Coarse perception", "dimension = coarse_perception"), ("Chain length = 2", "chain_length = 2")]
