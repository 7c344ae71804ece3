"""The Explorer in a real browser (Playwright + Debian chromium) on runs the tiny models finished: board cell ->
explorer -> filter -> question -> next -> compare -> the copied link opens the same question; and untrusted text
(answers, rationales) shown literally, never run."""
from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from leaderboard.board.columns import schema
from leaderboard.explorer.details_cache import details_path
from tests.explorer_runs import publish_run

pytestmark = pytest.mark.slow  # browser tests (Playwright)

EXPLORER_LOAD = "#explorer-opened h2"


def pick(page, elem_id: str, text: str) -> None:
    """Choose `text` in the dropdown `elem_id`."""
    box = page.locator(f"#{elem_id} input").first
    box.click()
    page.get_by_role("option", name=text, exact=True).filter(visible=True).first.click()


def opened_heading(page) -> str:
    heading = page.locator(EXPLORER_LOAD).filter(visible=True).first
    heading.wait_for(state="visible")
    return heading.inner_text()


def wait_heading(page, prefix: str) -> None:
    page.wait_for_function(
        "(p) => { const h = document.querySelector('#explorer-opened h2'); return h && h.innerText.startsWith(p); }",
        arg=prefix)


METRIC_PREFIX = "(?:[^·]+ on these questions, as the board computes it · )?"  # a board score's value, when one


def wait_summary(page, pattern: str) -> str:
    """Wait until the Explorer's summary, settled (no progress note before it), matches the regex `pattern` at its
    start (after a board score's value, when the view has one); return that text."""
    settled = page.wait_for_function(
        "(p) => { const e = document.querySelector('#explorer-summary'); const t = e ? e.innerText.trim() : '';"
        " return new RegExp('^' + p).test(t) ? t : false; }", arg=METRIC_PREFIX + pattern)
    return settled.json_value()


def test_board_to_explorer_filter_open_walk_compare_and_share(store, settings, finished_runs, app_url, open_page):
    key_a = publish_run(store, settings, finished_runs["vision-a"])
    key_b = publish_run(store, settings, finished_runs["vision-b"])
    publish_run(store, settings, finished_runs["text"])
    page = open_page(app_url)

    # the board: select vision-a's LAVE score cell -> the Explorer on that run and LAVE
    board = schema(settings.benchmarks)
    headers = [board.column(name).label for name in board.view("overview").columns]
    column = headers.index("LAVE score")
    table = page.locator("#leaderboard-table")
    table.get_by_text("tiny-org/tiny-llava", exact=True).filter(visible=True).first.wait_for(state="visible")
    precision = headers.index("Precision")
    rows = page.locator(f"#leaderboard-table [role=gridcell][data-col='{precision}']:visible").all_inner_texts()
    row = rows.index("auto")
    cell = page.locator(f"#leaderboard-table [role=gridcell][data-col='{column}']:visible").nth(row)
    clicked = cell.inner_text().strip().split(" ±")[0]  # the score, without half its interval ("61.7 ± 14.4")
    cell.click()
    page.get_by_role("tab", name="Explorer", selected=True).wait_for(state="visible")
    # the questions behind that score (the answers the judge rated: all 30 here), headed by the number clicked
    assert wait_summary(page, "30 of 30 questions").startswith(f"LAVE score {clicked}% on these questions")
    assert page.locator("#explorer-benchmark input").first.input_value() == "LAVE"
    assert "(auto)" in page.locator("#explorer-run input").first.input_value()

    # filter: the wrong answers only
    pick(page, "explorer-outcome", "wrong")
    assert "accuracy 0.0%" in wait_summary(page, "7 of 30 questions")

    # a group of the per-group table filters on it; then back to every group
    group_rows = page.locator("#explorer-groups-table [role=gridcell][data-col='1']:visible")
    group_rows.filter(has_text="count").first.click()
    page.wait_for_function("() => document.querySelector('#explorer-groups').innerText.includes('Kind = Count')")
    wait_summary(page, "[1-6] of 30 questions")  # settled, and fewer than the 7 wrong ones
    page.locator("#explorer-groups button[aria-label*='Remove'], #explorer-groups .token-remove").first.click()
    wait_summary(page, "7 of 30 questions")

    # open the first question of the filtered list, then the next one
    cells = page.locator("#explorer-table [role=gridcell][data-col='0']:visible")
    first, second = cells.nth(0).inner_text(), cells.nth(1).inner_text()
    cells.nth(0).click()
    wait_heading(page, f"{first} · wrong")
    page.locator("#explorer-image img").filter(visible=True).first.wait_for(state="visible")  # its image
    page.locator("#explorer-next").click()
    wait_heading(page, f"{second} · wrong")

    # compare with run B: both answers side by side
    pick(page, "explorer-compare", "tiny-org/tiny-llava @ " + key_b.split("/")[-1][:12] + " (float32)")
    page.locator("#explorer-opened h3").filter(has_text="B: tiny-org/tiny-llava").first.wait_for(state="visible")
    page.wait_for_function("() => document.querySelector('#explorer-summary').innerText.includes('run B')")
    said = page.locator("#explorer-summary").inner_text()  # the paired difference on the questions listed
    assert re.search(r"run B: .* · A - B = [+-]\d+\.\d points \(95% [+-]\d+\.\d to [+-]\d+\.\d\), on \d+ shared "
                     r"items, A right and B wrong on \d+, the reverse on \d+", said), said
    headers = page.locator("#explorer-table th, #explorer-table [role=columnheader]").all_inner_texts()
    assert any("answer (B)" in h for h in headers) and not any("_" in h for h in headers)

    # the link holds the whole state: a new page opens the same question, compared, filtered
    link = page.locator("#explorer-link textarea, #explorer-link input").first
    page.wait_for_function(
        "() => { const e = document.querySelector('#explorer-link textarea, #explorer-link input');"
        " return e && e.value.includes('item=') && e.value.includes('vs='); }")
    url = link.input_value()
    assert "outcome=wrong" in url and f"item={second}" in url and page.url == url
    again = open_page(url)
    again.get_by_role("tab", name="Explorer", selected=True).wait_for(state="visible")
    wait_heading(again, f"{second} · wrong")
    again.locator("#explorer-opened h3").filter(has_text="B: tiny-org/tiny-llava").first.wait_for(state="visible")
    wait_summary(again, "7 of 30 questions")

    # a board score's link: the questions behind ReForm gen overall, the board's number, a question's image
    scored = open_page(f"{app_url}?tab=explorer&bench=reform&run={key_a}&metric=gen_overall&item=coarse-01/gen")
    assert wait_summary(scored, "ReForm gen overall 0.0% on these questions")
    assert scored.locator("#explorer-metric input").first.input_value() == "ReForm gen overall"
    scored.locator("#explorer-image img").filter(visible=True).first.wait_for(state="visible")


PAYLOADS = {
    "prediction": "<img src=x onerror=alert(1)> and <script>alert(2)</script>",
    "parsed_answer": "<img src=x onerror=alert(1)>",
    "judge_rationale": "[click me](http://evil.example/) <script>alert(3)</script>",
    "judge_raw": "<b>bold</b> So rating=3",
}


def test_untrusted_answers_and_rationales_are_shown_literally(store, settings, finished_runs, app_url, open_page):
    key = publish_run(store, settings, finished_runs["vision-a"], model="evil-org/xss-model")
    path = details_path(key, "lave")
    frame = pd.read_parquet(io.BytesIO(store.read_bytes(path)))
    for column, value in PAYLOADS.items():
        frame.loc[0, column] = value
    frame.loc[0, "question"] = "[a link](http://evil.example/) <img src=y onerror=alert(4)>"
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    store.write_bytes(path, buffer.getvalue())
    item = frame.loc[0, "question_id"]

    page = open_page(f"{app_url}?tab=explorer&bench=lave&run={key}&item={item}")
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    wait_heading(page, item)
    opened = page.locator("#explorer-opened").filter(visible=True).first
    for details in opened.locator("details").all():
        details.locator("summary").click()  # unfold the prompt, output and judge texts
    opened.get_by_text("So rating=3", exact=False).first.wait_for(state="visible")
    text = opened.inner_text()
    assert "<img src=x onerror=alert(1)>" in text and "<script>alert(3)</script>" in text
    assert "[click me](http://evil.example/)" in text and "<b>bold</b>" in text
    table = page.locator("#explorer-table").filter(visible=True).first
    table.get_by_text("<img src=x onerror=alert(1)>", exact=False).first.wait_for(state="visible")
    page.wait_for_timeout(500)
    assert page.locator("img[src='x'], img[src='y'], #explorer-opened script, #explorer-table script").count() == 0
    assert page.locator("a[href^='http://evil.example']").count() == 0
    assert page.locator("#explorer-opened b").count() == 0
    assert dialogs == []


# the visible table under `selector`: its width, its right edge and its box's width; and its headers
TABLE_WIDTHS = """(selector) => { const t = [...document.querySelectorAll(selector + ' table')].find(e => e.offsetParent);
  if (!t) { return null; } const box = t.closest('.table-wrap') || t.parentElement; const r = t.getBoundingClientRect();
  return {width: Math.round(r.width), right: Math.round(r.right), box: box.clientWidth,
          headers: [...t.querySelectorAll('th')].map(h => h.innerText.trim()),
          cols: [...t.querySelectorAll('th')].map(h => Math.round(h.getBoundingClientRect().width))}; }"""


def test_questions_fit_1400_px_and_groups_and_labels_read(store, settings, finished_runs, app_url, open_page):
    from tests.test_board_browser import BROKEN_WORDS

    key_a = publish_run(store, settings, finished_runs["vision-a"])
    key_b = publish_run(store, settings, finished_runs["vision-b"])
    page = open_page(f"{app_url}?tab=explorer&bench=reform&run={key_a}&vs={key_b}&item=coarse-01/gen")
    wait_heading(page, "coarse-01/gen")
    page.locator("#explorer-opened h3").filter(has_text="B: tiny-org/tiny-llava").first.wait_for(state="visible")
    page.wait_for_timeout(500)  # columns are sized after the rows arrive
    widths = page.evaluate(TABLE_WIDTHS, "#explorer-table")
    # every column of the questions table on the screen, the compared run's too; the groups are in More columns
    assert widths["width"] <= widths["box"] + 1 and widths["right"] <= 1400, list(zip(widths["headers"], widths["cols"]))
    assert widths["headers"] == ["item", "question", "answer", "answer (B)", "gold", "score", "score (B)", "outcome",
                                 "outcome (B)", "grade"], widths
    # labels and headers wrap between words, never inside one (the opened question's facts side by side)
    assert page.evaluate(BROKEN_WORDS, "#explorer-opened th, #explorer-table th .header") == []

    # the per-group table: percentages with their sign, labels in words; selecting a row still filters on it
    groups = page.locator("#explorer-groups-table").filter(visible=True).first
    groups.get_by_text("Coarse perception", exact=True).first.wait_for(state="visible")
    texts = page.locator("#explorer-groups-table [role=gridcell]:visible").all_inner_texts()
    assert "coarse_perception" not in texts and "dimension" not in texts and "Dimension" in texts, texts
    accuracy = page.locator("#explorer-groups-table [role=gridcell][data-col='3']:visible").all_inner_texts()
    assert any(a.endswith("%") for a in accuracy) and all(a.endswith("%") or a == "n/a" for a in accuracy), accuracy
    groups.get_by_text("Coarse perception", exact=True).first.click()
    page.wait_for_function("() => document.querySelector('#explorer-groups').innerText.includes('Coarse perception')")
    wait_summary(page, "[0-9]+ of [0-9]+ questions")
    assert "group=dimension" in page.locator("#explorer-link textarea, #explorer-link input").first.input_value()


def test_on_a_phone_the_propose_row_stacks_and_the_questions_start_within_two_screens(store, settings, finished_runs,
                                                                                       app_url, open_page):
    """Issue 52, point 1: at 390 px the Propose button was a grey block 2,000 px tall beside a text one letter
    wide, and the questions started several screens down."""
    key = publish_run(store, settings, finished_runs["vision-a"])
    page = open_page(f"{app_url}?tab=explorer&run={key}&bench=reform&metric=gen_overall", width=390, height=844)
    button = page.locator("#explorer-propose").filter(visible=True).first
    button.wait_for(state="visible")
    table = page.locator("#explorer-table").filter(visible=True).first
    table.locator("[role=gridcell]").first.wait_for(state="visible")
    box, answer = button.bounding_box(), page.locator("#explorer-propose-answer").first.bounding_box()
    assert box["height"] < 100 and box["width"] <= 390, box  # one line high, within the screen
    assert answer["y"] >= box["y"] + box["height"] - 1 and answer["width"] > 300, (box, answer)  # under it, full width
    top = page.evaluate("(s) => document.querySelector(s).getBoundingClientRect().top + window.scrollY",
                        "#explorer-table")
    assert top < 2 * 844, top


RELOADED = "() => !window.notReloaded"  # the mark set before Back is gone: the page was loaded again


def back(page) -> None:
    """Press the browser's Back after marking the page, then wait until the page was loaded again (the Explorer
    reloads the view its address names) and its tab bar is up."""
    page.evaluate("() => { window.notReloaded = true; }")
    page.go_back()
    page.wait_for_function(RELOADED)
    page.locator("#board-view").wait_for(state="attached")


def test_back_returns_to_the_view_before_and_the_address_follows_the_tab(store, settings, finished_runs, app_url,
                                                                        open_page):
    """Issue 62, point 5: the Explorer replaced the address, so Back left the Space; back on the board by its tab,
    the address still opened the Explorer on a reload."""
    key = publish_run(store, settings, finished_runs["vision-a"])
    page = open_page(app_url)
    board = schema(settings.benchmarks)
    column = [board.column(n).label for n in board.view("overview").columns].index("ReForm gen overall")
    page.locator(f"#leaderboard-table [role=gridcell][data-col='{column}']:visible").first.click()
    page.get_by_role("tab", name="Explorer", selected=True).wait_for(state="visible")
    wait_summary(page, "ReForm gen overall")
    assert "tab=explorer" in page.url and "bench=reform" in page.url

    # a filter replaces the address (no new entry); opening a question is a new entry
    length = page.evaluate("() => history.length")
    pick(page, "explorer-outcome", "wrong")
    page.wait_for_url(re.compile("outcome=wrong"))
    assert page.evaluate("() => history.length") == length
    first = page.locator("#explorer-table [role=gridcell][data-col='0']:visible").nth(0)
    item = first.inner_text()
    first.click()
    wait_heading(page, item)
    page.wait_for_url(re.compile("item="))
    assert page.evaluate("() => history.length") == length + 1

    # Back: the list without the question, as the address says, filtered still
    back(page)
    assert "item=" not in page.url and "outcome=wrong" in page.url
    page.get_by_role("tab", name="Explorer", selected=True).wait_for(state="visible")
    wait_summary(page, "[0-9]+ of [0-9]+ questions")
    assert page.locator(EXPLORER_LOAD).filter(visible=True).count() == 0

    # the Leaderboard by its tab: no Explorer parameters, and a reload stays on the board
    page.get_by_role("tab", name="Leaderboard").click()
    page.wait_for_url(lambda url: "tab=" not in url and "run=" not in url)
    page.reload()
    page.get_by_role("tab", name="Leaderboard", selected=True).wait_for(state="visible")
    assert page.get_by_role("tab", name="Explorer", selected=True).count() == 0

    # Back again: the Explorer as it was; and once more: the board the cell was selected on
    back(page)
    page.get_by_role("tab", name="Explorer", selected=True).wait_for(state="visible")
    assert "outcome=wrong" in page.url and key.split("/")[-1] in page.url.replace("%2F", "/")
    wait_summary(page, "[0-9]+ of [0-9]+ questions")
    back(page)
    page.get_by_role("tab", name="Leaderboard", selected=True).wait_for(state="visible")
    assert page.url == app_url


# the page number's box (the nearest element around its input that draws a border on every side) and whether its
# "of N" text lies inside it (off its edges)
PAGE_BOX = """() => { const bordered = (e) => { const s = getComputedStyle(e); return ['Top', 'Right', 'Bottom', 'Left']
    .every((side) => parseFloat(s['border' + side + 'Width']) > 0 && s['border' + side + 'Style'] !== 'none'); };
  let box = document.querySelector('#explorer-page input').parentElement;
  while (box && !bordered(box)) { box = box.parentElement; }
  const of = document.querySelector('#explorer-pages'); const text = document.createRange();
  text.selectNodeContents(of.querySelector('p') || of); const r = text.getBoundingClientRect();
  const b = box.getBoundingClientRect();
  return {text: of.innerText.trim(), inside: r.width > 0 && r.left >= b.left + 4 && r.right <= b.right - 4
          && r.top >= b.top && r.bottom <= b.bottom - 4, box: Math.round(b.width)}; }"""
PAGE_SHOWN = f"() => /^of [0-9]+$/.test(({PAGE_BOX})().text)"  # the page count, no update pending over it
IN_VIEW = """(s) => { const e = [...document.querySelectorAll(s)].find((x) => x.offsetParent);
  const r = e && e.getBoundingClientRect(); return !!r && r.top >= 0 && r.bottom <= window.innerHeight; }"""
# whether a dropdown's text is cut: wider than its input, or running under the arrow at its right
CUT = """(s) => { const e = document.querySelector(s + ' input'); const style = getComputedStyle(e);
  const ctx = document.createElement('canvas').getContext('2d'); ctx.font = style.font;
  const left = e.getBoundingClientRect().left + parseFloat(style.paddingLeft);
  const icons = [...e.closest('.wrap').querySelectorAll('svg')].map((i) => i.getBoundingClientRect().left)
    .filter((x) => x > left);
  const end = Math.min(e.getBoundingClientRect().right - parseFloat(style.paddingRight), ...icons);
  return left + ctx.measureText(e.value).width > end + 1; }"""


def test_on_a_phone_a_score_opens_on_its_number_and_pickers_show_the_whole_run(store, settings, finished_runs,
                                                                                  app_url, open_page):
    """Issue 62, point 6: at 390x844 the number and the questions started two screens down, the Run (A) picker was
    cut to "tiny-org/tiny-llava @ 7", and the page box's "of 1" sat outside its box (at 1,400 px too)."""
    keys = [publish_run(store, settings, finished_runs[name]) for name in ("vision-a", "vision-b")]
    labels = [f"tiny-org/tiny-llava @ {k.split('/')[-1][:12]} ({k.rsplit('_', 1)[1]})" for k in keys]
    page = open_page(app_url, width=390, height=844)
    board = schema(settings.benchmarks)
    column = [board.column(n).label for n in board.view("overview").columns].index("LAVE score")
    page.locator(f"#leaderboard-table [role=gridcell][data-col='{column}']:visible").first.click()
    page.get_by_role("tab", name="Explorer", selected=True).wait_for(state="visible")
    wait_summary(page, "30 of 30 questions")
    # the summary (the number tapped) and the first question on the screen, without scrolling
    page.wait_for_function(IN_VIEW, arg="#explorer-table [role=gridcell]")
    assert page.evaluate(IN_VIEW, "#explorer-summary"), page.evaluate("() => window.scrollY")

    # the pickers show the whole run: model, revision and precision
    run = page.locator("#explorer-run input").first.input_value()
    assert run in labels and not page.evaluate(CUT, "#explorer-run"), run
    pick(page, "explorer-compare", next(label for label in labels if label != run))
    page.locator("#explorer-summary").get_by_text("run B", exact=False).wait_for(state="visible")
    assert not page.evaluate(CUT, "#explorer-compare"), page.locator("#explorer-compare input").first.input_value()

    # "of N" inside the page number's box, on a phone and at 1,400 px (once the last update's "processing" is gone)
    page.wait_for_function(PAGE_SHOWN)
    box = page.evaluate(PAGE_BOX)
    assert re.fullmatch("of [0-9]+", box["text"]) and box["inside"] and box["box"] < 390, box
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.wait_for_function("() => window.innerWidth === 1400")
    page.wait_for_function(PAGE_SHOWN)
    box = page.evaluate(PAGE_BOX)
    assert re.fullmatch("of [0-9]+", box["text"]) and box["inside"] and box["box"] < 1400, box
