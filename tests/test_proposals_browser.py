"""Issue 42 in a real browser (Playwright + Debian chromium): a board row opens its run in the Explorer, whose
"Propose these results to the model page" button opens the pull request on the loopback Hub and links it, and the
board then shows a PR link beside the run's model."""
from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.conftest import free_port
from tests.published_runs import publish_hub_model_run

pytestmark = pytest.mark.slow  # browser tests (Playwright)


def test_a_board_row_leads_to_the_button_and_the_board_links_the_pull_request(hub, settings, store, tmp_path,
                                                                              open_page, monkeypatch):
    from huggingface_hub import constants

    from leaderboard.ui import build_app, launch_options

    monkeypatch.setattr(constants, "ENDPOINT", hub.url)  # what HF_ENDPOINT sets when the Space starts
    space = settings.with_(hf_token=hub.issue_token("leaderboard-bot"))
    request = publish_hub_model_run(hub, space, store, tmp_path / "run", "acme/vlm")
    demo = build_app(space, store)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(space, store))
    try:
        page = open_page(f"http://127.0.0.1:{port}/")
        table = page.locator("#leaderboard-table")
        table.get_by_text("acme/vlm", exact=True).filter(visible=True).first.wait_for(state="visible")
        table.locator("[role=gridcell][data-col='2']:visible").first.click()  # the Overall score of its row
        page.locator("#explorer-summary").get_by_text("questions", exact=False).first.wait_for(state="visible")
        assert quote(request.key, safe="") in page.locator("#explorer-link textarea").first.input_value()

        page.locator("#explorer-propose").click()
        answer = page.locator("#explorer-propose-answer")
        answer.get_by_text("Opened pull request #1", exact=False).wait_for(state="visible")
        assert answer.locator("a").first.get_attribute("href") == f"{hub.url}/acme/vlm/discussions/1"
        [pull] = hub.discussions("acme/vlm")
        assert pull["is_pull_request"] and pull["status"] == "open"

        page.get_by_role("tab", name="Leaderboard").click()
        page.locator("#board-refresh").click()
        link = table.locator("a", has_text="PR").filter(visible=True).first
        link.wait_for(state="visible")
        assert link.get_attribute("href") == f"{hub.url}/acme/vlm/discussions/1"
    finally:
        demo.close()
