"""The Space in a real browser: Playwright for Python (sync API) driving Debian's chromium.

Gradio 6 keeps hidden copies of tables in the DOM, so every check waits on *visible* elements. `open_page(url)`
opens a page on the served app and waits for Gradio to be up; reuse it for longer flows.
"""
from __future__ import annotations

import pytest

from leaderboard.board.columns import schema
from leaderboard.submissions import records as q
from tests.results_files import SHA_A, SHA_B, result, write_result

pytestmark = pytest.mark.slow  # browser tests (Playwright)


def board_cells(page, col: int) -> list[str]:
    """The visible texts of one column of the leaderboard table, top to bottom."""
    return page.locator(f"#leaderboard-table [role=gridcell][data-col='{col}']:visible").all_inner_texts()


def sort_board(page, col: int, direction: str) -> None:
    header = page.locator(f"#leaderboard-table th[data-heading='{col}']")
    header.hover()
    header.locator("button[aria-label='Open cell menu']").click()
    page.get_by_role("menuitem", name=f"Sort {direction}").click()


def test_board_shows_results_as_text_and_sorts_numerically(store, app_url, open_page):
    write_result(store, result("tiny-org/tiny-llava", Ro=0.1, Cf=None))
    write_result(store, result("tiny-org/tiny-llama", sha=SHA_B, Ro=0.09))
    write_result(store, result("evil/<b>bold</b>", Ro=1.0))  # would render bold if the cell were HTML
    page = open_page(app_url)
    table = page.locator("#leaderboard-table")
    table.get_by_text("tiny-org/tiny-llava", exact=True).filter(visible=True).first.wait_for(state="visible")
    page.locator("#board-view").get_by_label("CURE", exact=True).check()  # once the board is up
    headers = [c.label for c in (schema().column(n) for n in schema().view("cure").shown)]  # the board table's
    model, ro, cf = headers.index("Model"), headers.index("CURE Ro"), headers.index("CURE Cf")
    table.locator("th").filter(has_text="CURE Cf").filter(visible=True).first.wait_for(state="visible")
    assert board_cells(page, model) == ["evil/<b>bold</b>", "tiny-org/tiny-llava", "tiny-org/tiny-llama"]
    assert board_cells(page, headers.index("Revision"))[1] == SHA_A[:12]
    assert board_cells(page, ro) == ["100.0", "10.0", "9.0"]  # CURE Ro, ranked
    assert board_cells(page, cf)[1] == "n/a"  # CURE Cf undefined
    assert table.locator("b").count() == 0  # the model id was not rendered as HTML

    sort_board(page, ro, "ascending")  # numbers, not strings: 9.0 < 10.0 < 100.0
    page.wait_for_function(
        f"() => [...document.querySelectorAll(\"#leaderboard-table [role=gridcell][data-col='{ro}']\")]"
        ".filter(e => e.offsetParent !== null).map(e => e.innerText.trim()).join(',') === '9.0,10.0,100.0'")

    page.locator("#board-search input, #board-search textarea").first.fill("LLAVA")
    page.wait_for_function(
        f"() => [...document.querySelectorAll(\"#leaderboard-table [role=gridcell][data-col='{model}']\")]"
        ".filter(e => e.offsetParent !== null).map(e => e.innerText.trim()).join(',') === 'tiny-org/tiny-llava'")


def test_empty_board_explains_how_to_submit(app_url, open_page):
    page = open_page(app_url)
    page.get_by_text("No results yet").wait_for(state="visible")
    assert page.locator("#board-empty").get_by_text("Submit", exact=False).first.is_visible()
    assert not page.locator("#leaderboard-table").is_visible()  # no empty table under the message
    page.get_by_text("SimpleQA calibration").first.click()  # a section with no run says why it is empty
    page.locator("#calibration-state").get_by_text("No finished run has SimpleQA calibration yet",
                                                   exact=False).wait_for(state="visible")


def test_empty_submission_is_refused_in_the_browser(store, app_url, open_page):
    page = open_page(app_url)
    page.get_by_role("tab", name="Submit").click()
    page.locator("#submit-button").wait_for(state="visible")
    page.locator("#submit-button").click()
    message = page.locator("#submit-message")
    message.get_by_text("Please enter a model id").wait_for(state="visible")
    assert q.all_requests(store) == []


def test_queue_tab_lists_requests_shows_a_failed_log_and_cancels(store, app_url, open_page):
    pending = q.Request(model="tiny-org/tiny-llava", revision=SHA_A)
    q.save(store, pending)
    q.save(store, q.Request(model="org/broken", revision=SHA_B, status=q.FAILED, error="worker exited with code 1",
                            log_tail="loading weights\nRuntimeError: <b>boom</b>",
                            finished_time="2026-11-22T03:00:00+00:00"))
    page = open_page(app_url)
    page.get_by_role("tab", name="Queue").click()
    pending_table = page.locator("#queue-pending")
    pending_table.get_by_text("tiny-org/tiny-llava", exact=True).filter(visible=True).first.wait_for()
    page.get_by_text("Pending (1)").filter(visible=True).first.wait_for()

    page.locator("#queue-failed").get_by_text("org/broken", exact=True).filter(visible=True).first.click()
    log_box = page.locator("#queue-failed-log textarea")
    page.wait_for_function("() => document.querySelector('#queue-failed-log textarea').value.includes('boom')")
    assert "RuntimeError: <b>boom</b>" in log_box.input_value()

    page.locator("#queue-cancel-pick input").fill(pending.key)
    page.locator("#queue-cancel").click()
    page.locator("#queue-cancel-message").get_by_text("Done").wait_for(state="visible")
    assert q.load(store, pending.path).status == q.CANCELLED
    page.get_by_text("Cancelled (1)").filter(visible=True).first.wait_for()
