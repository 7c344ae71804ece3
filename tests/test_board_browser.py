"""The board in a real browser (Playwright + Debian chromium): the Overview fits 1,400 px, ranks a vision run and a
text-only run in their own cohorts and hides a limited run until asked; the model links to its Hub page and Details
(a link, not Markdown) to its file; the LAVE view and its section; empty states say why; on a 390 px wide phone every
tab is reachable, the first screen shows the model and the overall score, the table scrolls sideways on its own, and
no header or label (the board's, the Queue's) wraps letter by letter."""
from __future__ import annotations

import io
import urllib.request

import pandas as pd
import pytest

from leaderboard.board.columns import schema
from leaderboard.submissions import records as q
from tests.results_files import SHA_B, TEXT_ONLY, board_result, write_result

pytestmark = pytest.mark.slow  # browser tests (Playwright)

S = schema()
JUDGE = {"kind": "endpoint", "model": "judge-x", "base_url": "http://judge.example/v1"}
TRIAL_JUDGE = {"kind": "local", "model": "HuggingFaceTB/SmolLM2-135M", "revision": "0123456789ab"}
LAVE = {"scores": {"lave": 0.75, "vqa_accuracy": 0.3, "anls": 0.4, "exact_match": 0.25, "bleu4": 0.01, "cider": 1.234},
        "counts": {"items": 4, "answered": 4, "rated": 4, "unrated": 0, "rating_fallback": 1, "image_unavailable": 0},
        "extra": {"ratings": {"1": 1, "2": 0, "3": 3},
                  "agreement": {m: {"n": 4, "agreement": 0.5, "spearman": 0.25, "rule": "x"}
                                for m in ("vqa_accuracy", "anls", "exact_match", "bleu4", "cider")}},
        "coverage": {"scored": 4, "items": 4, "suite_items": 4, "share": 1.0}}


def publish_board(store) -> dict:
    vision = board_result("org/vlm", {"cure": 0.4, "simpleqa": 0.3, "reform": 0.5, "lave": 0.75}, judge=JUDGE)
    vision["benchmarks"]["lave"] = LAVE
    text = board_result("org/chat", {"simpleqa": 0.55}, skipped={n: TEXT_ONLY for n in ("cure", "reform", "lave")},
                        counts={"simpleqa": {"ungraded": 2}}, judge=JUDGE)
    limited = board_result("org/quick", {"cure": 0.9}, sha=SHA_B, limit=2, coverage={"cure": 0.1})
    for res in (vision, text, limited):
        write_result(store, res)
    buffer = io.BytesIO()
    pd.DataFrame({"question_id": ["q1"], "prediction": ["a cat"]}).to_parquet(buffer, index=False)
    store.write_bytes(f"details/{vision['key']}/lave.parquet", buffer.getvalue())
    return {"vision": vision, "text": text, "limited": limited}


def cells(page, header: str, view: str = "overview", table: str = "leaderboard-table") -> list[str]:
    """The visible texts of one column of the board's table (or of its More columns table, `leaderboard-more`)."""
    names = S.view(view).shown if table == "leaderboard-table" else S.view(view).more
    col = [S.column(n).label for n in names].index(header)
    return page.locator(f"#{table} [role=gridcell][data-col='{col}']:visible").all_inner_texts()


# the visible elements under `selector` whose text breaks inside a word (a word wider than the element's box)
BROKEN_WORDS = """(selector) => { const ctx = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll(selector)].filter(e => e.offsetParent !== null && e.innerText.trim())
    .filter(e => { const style = getComputedStyle(e); ctx.font = style.font;
      const box = e.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return e.innerText.split(/\\s+/).some(w => ctx.measureText(w).width > box + 1); })
    .map(e => e.innerText.trim()); }"""


def wait_until_fits(page) -> None:
    """Wait (columns are sized after the rows arrive) until the board table is no wider than its box."""
    page.wait_for_function(
        "() => { const t = [...document.querySelectorAll('#leaderboard-table table')].find(e => e.offsetParent);"
        " const box = t && (t.closest('.table-wrap') || t.parentElement);"
        " return t && t.getBoundingClientRect().width <= box.clientWidth + 1"
        " && document.documentElement.scrollWidth <= window.innerWidth; }", timeout=10_000)


def test_overview_links_views_flags_and_sections(store, app_url, open_page):
    runs = publish_board(store)
    page = open_page(app_url)
    table = page.locator("#leaderboard-table")
    table.get_by_text("org/chat", exact=True).filter(visible=True).first.wait_for(state="visible")

    # the overview: each run ranked in its own cohort, the limited run hidden and said so; no sideways scrolling
    assert cells(page, "Model") == ["org/vlm", "org/chat"]
    assert cells(page, "#") == ["1 of 1 · on all 4", "1 of 1 · on SimpleQA"]  # two groups, said: never a tie
    assert cells(page, "Overall") == ["48.8", "55.0"]
    wait_until_fits(page)
    page.wait_for_function(f"() => ({BROKEN_WORDS})('#leaderboard-table th .header').length === 0", timeout=10_000)
    assert cells(page, "Notes")[1] == f"skipped CURE, ReForm, LAVE: {TEXT_ONLY}; SimpleQA: 2 ungraded"
    said = "1 flagged run(s) (limited, partial, graded by a trial judge or hidden by the admins) left out"
    # the status line may still show Gradio's pending timer ("0.2s") while its text arrives: wait for the text
    page.wait_for_function(f"() => document.querySelector('#board-status').innerText.includes({said!r})",
                           timeout=10_000)
    assert said in page.locator("#board-status").inner_text()

    # links: the model's Hub page
    model = table.locator("a:visible", has_text="org/vlm").first
    assert model.get_attribute("href") == "https://huggingface.co/org/vlm" and model.get_attribute("target") == "_blank"

    # shown on request: the limited run, unranked, with its flag
    page.locator("#board-show-all input").check()
    table.get_by_text("org/quick", exact=True).filter(visible=True).first.wait_for(state="visible")
    assert cells(page, "Model")[-1] == "org/quick" and cells(page, "#")[-1] == "unranked"
    assert cells(page, "Flag")[-1] == "limit: 2 items per benchmark; coverage under 95.0%: CURE 10.0%"
    page.locator("#board-show-all input").uncheck()

    # the LAVE view: its main metrics, only the runs that ran it, the rest in More columns, and its section
    page.locator("#board-view").get_by_label("LAVE", exact=True).check()
    table.locator("th").filter(has_text="LAVE exact match").filter(visible=True).first.wait_for()
    assert cells(page, "Model", "lave") == ["org/vlm"] and cells(page, "LAVE score", "lave") == ["75.0"]
    page.locator("#board-more").get_by_text("More columns", exact=False).first.click()
    more = page.locator("#leaderboard-more")
    more.locator("th").filter(has_text="LAVE agrees with exact match").filter(visible=True).first.wait_for()
    assert cells(page, "Model", "lave", "leaderboard-more") == ["org/vlm"]
    assert cells(page, "LAVE CIDEr", "lave", "leaderboard-more") == ["1.23"]
    assert cells(page, "Details", "lave", "leaderboard-more") == ["LAVE"]  # a link, not raw Markdown
    details = more.locator("a:visible", has_text="LAVE").first.get_attribute("href")  # served by the Space
    with urllib.request.urlopen(app_url + details) as reply:
        assert pd.read_parquet(io.BytesIO(reply.read()))["prediction"].tolist() == ["a cat"]
    page.wait_for_function("() => document.querySelector('#board-status').innerText.includes('2 without LAVE')")
    page.get_by_text("LAVE against strict metrics").first.click()
    section = page.locator("#lave_agreement-output")  # the first run is picked for the reader
    section.get_by_text("3 rated 3", exact=False).filter(visible=True).first.wait_for(state="visible")

    # an empty view says why
    page.locator("#board-search input, #board-search textarea").first.fill("chat")
    page.locator("#board-empty").get_by_text("No finished run has LAVE yet", exact=False).wait_for(state="visible")
    assert runs["text"]["key"]


def test_phone_width_puts_the_table_on_the_first_screen(store, app_url, open_page):
    publish_board(store)
    q.save(store, q.Request(model="org/running", revision=SHA_B, status=q.RUNNING,
                            started_time="2026-11-22T03:00:00+00:00"))
    page = open_page(app_url, width=390, height=844)
    page.locator("#leaderboard-table").get_by_text("org/chat", exact=True).filter(visible=True).first.wait_for()
    for tab in ("Leaderboard", "Explorer", "Submit", "Queue", "Judge playground", "About"):
        assert page.get_by_role("tab", name=tab).is_visible(), tab  # none hidden behind "..."
    headers = page.locator("#leaderboard-table th:visible")
    for label in ("Model", "Overall"):  # on the first screen, without scrolling
        box = headers.filter(has_text=label).first.bounding_box()
        assert box["x"] + box["width"] <= 390 and box["y"] + box["height"] < 844, (label, box)
    title = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('#intro h1')).fontSize)")
    assert title <= 20, title  # the page title shrinks on a phone (1.25rem; 26 px on a wide screen)
    first_row = page.locator("#leaderboard-table [role=gridcell][data-col='2']:visible").first.bounding_box()
    assert first_row["y"] + first_row["height"] <= 844, first_row  # the first run's overall score is in view
    assert page.evaluate(BROKEN_WORDS, "#leaderboard-table th .header, #board-show-all label span") == []
    widths = page.evaluate(
        "() => { const t = document.querySelector('#leaderboard-table');"
        " const wide = [...t.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 20"
        " && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX));"
        " return {page: document.documentElement.scrollWidth, scrollers: wide.length}; }")
    assert widths["page"] <= 400 and widths["scrollers"] >= 1, widths  # the table scrolls, the page does not

    page.get_by_role("tab", name="Queue").click()  # the Queue's headers wrap between words, if at all
    page.locator("#queue-running").get_by_text("org/running", exact=True).filter(visible=True).first.wait_for()
    assert page.evaluate(BROKEN_WORDS, "#queue-running th .header, #queue-pending th .header") == []


# the visible table under `selector`: its width, its right edge, and its scrolling box's visible and whole widths
TABLE_WIDTHS = """(selector) => { const t = [...document.querySelectorAll(selector + ' table')].find(e => e.offsetParent);
  if (!t) { return null; } const box = t.closest('.table-wrap') || t.parentElement; const r = t.getBoundingClientRect();
  return {width: Math.round(r.width), right: Math.round(r.right), box: box.clientWidth, scroll: box.scrollWidth}; }"""


def publish_wide_board(store) -> None:
    """Runs of every benchmark with long flags and notes: a judged vision run, a limited partial one (flagged), a
    text-only one, and a run graded by a trial judge."""
    publish_board(store)
    everything = {"cure": 0.4, "simpleqa": 0.3, "reform": 0.5, "lave": 0.75}
    partial = board_result("org/a-rather-long-model-name-for-a-vision-model", everything, sha=SHA_B, limit=5,
                           coverage={n: 0.2 for n in everything}, judge=JUDGE,
                           counts={"simpleqa": {"ungraded": 3}, "lave": {"unrated": 2}})
    trial = board_result("org/trial", everything, judge=JUDGE)
    trial["run"].update(judge=TRIAL_JUDGE, judge_name=None, judge_trial=True, judge_parameters=135_000_000)
    for res in (partial, trial):
        write_result(store, res)


def test_every_view_fits_1400_px_and_flagged_runs_say_unranked(store, app_url, open_page):
    publish_wide_board(store)
    page = open_page(app_url)
    table = page.locator("#leaderboard-table")
    table.get_by_text("org/chat", exact=True).filter(visible=True).first.wait_for(state="visible")
    page.locator("#board-show-all input").check()
    table.get_by_text("org/trial", exact=True).filter(visible=True).first.wait_for(state="visible")
    widths = {}
    for view in S.views[1:-1]:  # each benchmark's view (Run details holds every fact and may scroll sideways)
        page.locator("#board-view").get_by_label(view.label, exact=True).check()
        last = S.column(view.shown[-3]).label  # a column only this view's table has, in its place
        page.wait_for_function(
            "([label, n]) => { const t = [...document.querySelectorAll('#leaderboard-table table')]"
            ".find(e => e.offsetParent); const heads = t ? [...t.querySelectorAll('th')] : [];"
            " return heads.length === n && heads.some(h => h.innerText.trim() === label); }",
            arg=[last, len(view.shown)], timeout=10_000)
        page.wait_for_timeout(300)  # columns are sized after the rows arrive
        widths[view.label] = page.evaluate(TABLE_WIDTHS, "#leaderboard-table")
    assert all(w["width"] <= w["box"] + 1 and w["right"] <= 1400 for w in widths.values()), widths

    # the runs that are not ranked say so, grouped by the benchmarks they were scored on (never one list by score):
    # the two 4-benchmark runs (one graded by a trial judge), then the CURE-only one, though its score is the highest
    page.locator("#board-view").get_by_label("Overview", exact=True).check()
    table.get_by_text("org/quick", exact=True).filter(visible=True).first.wait_for(state="visible")
    page.wait_for_function("() => document.querySelectorAll('#leaderboard-table th').length > 0")
    models, ranks = cells(page, "Model"), cells(page, "#")
    assert ranks == ["1 of 1 · on all 4", "1 of 1 · on SimpleQA", "unranked · on all 4", "unranked · on all 4",
                     "unranked · on CURE"], (models, ranks)  # the unranked runs say their group too
    assert models[2:] == ["org/a-rather-long-model-name-for-a-vision-model", "org/trial", "org/quick"]
    assert cells(page, "Flag")[3].startswith("trial judge: graded by a local judge under 7B parameters")
    page.locator("#board-view").get_by_label("SimpleQA", exact=True).check()
    table.locator("th").filter(has_text="Judge").filter(visible=True).first.wait_for()
    judges = dict(zip(cells(page, "Model", "simpleqa"), cells(page, "Judge", "simpleqa")))
    assert judges["org/trial"] == ("HuggingFaceTB/SmolLM2-135M @ 0123456789ab (local) — trial judge, not for "
                                   "scores"), judges


def test_on_a_phone_run_details_tells_two_runs_of_one_model_apart(store, app_url, open_page):
    """Issue 62, point 6: at 390 px Run details showed #, Model and Overall only, the same for two runs of one
    model. Their precision comes next, on the first screen, and their revision right after it."""
    for precision, sha in (("bfloat16", SHA_B), ("float32", SHA_B)):
        write_result(store, board_result("org/vlm", {"cure": 0.4, "simpleqa": 0.3, "reform": 0.5, "lave": 0.75},
                                         sha=sha, precision=precision, judge=JUDGE))
    page = open_page(app_url, width=390, height=844)
    page.locator("#leaderboard-table").get_by_text("org/vlm", exact=True).filter(visible=True).first.wait_for()
    page.locator("#board-view").get_by_label("Run details", exact=True).check()
    table = page.locator("#leaderboard-table")
    table.locator("th").filter(has_text="Hours (GPU)").filter(visible=True).first.wait_for(state="attached")
    assert sorted(cells(page, "Precision", "runs")) == ["bfloat16", "float32"]
    assert cells(page, "Revision", "runs") == [SHA_B[:12]] * 2
    for label in ("Model", "Precision"):  # on the first screen, without scrolling sideways
        box = table.locator("th:visible").filter(has_text=label).first.bounding_box()
        assert box["x"] + box["width"] <= 390, (label, box)
    precision = cells(page, "Precision", "runs")
    col = [S.column(n).label for n in S.view("runs").shown].index("Precision")
    first = table.locator(f"[role=gridcell][data-col='{col}']:visible").first.bounding_box()
    assert first["x"] + first["width"] <= 390 and first["y"] + first["height"] <= 844, (precision, first)
