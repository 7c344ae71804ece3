"""Issue 52, point 3: a way in without the Hub. tools/tiny_model.py builds a tiny random-weight LLaVA folder with no
download and queues it through the Submit tab's own checks on the local store; the Submit tab says local folders
work where they do."""
from __future__ import annotations

import sys

from leaderboard.settings import Settings
from leaderboard.store import open_store
from leaderboard.submissions import records as queue
from tests.conftest import PROJECT


def test_the_tool_builds_a_model_and_queues_it_on_the_local_store(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(PROJECT / "tools"))
    try:
        import tiny_model
    finally:
        sys.path.remove(str(PROJECT / "tools"))
    home = tmp_path / "home"
    monkeypatch.setenv("LEADERBOARD_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert tiny_model.main([str(tmp_path / "tiny-llava"), "--submit"]) == 0
    said = capsys.readouterr().out
    assert "built a tiny random-weight LLaVA" in said and "Queued local/tiny-llava @ " in said, said
    [request] = queue.all_requests(open_store(Settings.from_env({"LEADERBOARD_HOME": str(home)})))
    assert request.source == "local" and request.status == queue.PENDING and request.model == "local/tiny-llava"


def test_the_submit_tab_says_local_folders_work_where_they_do(settings, store):
    from leaderboard.ui import build_app

    def help_text(chosen) -> str:
        config = build_app(chosen, store).get_config_file()
        return next(c["props"]["value"] for c in config["components"]
                    if c.get("props", {}).get("elem_id") == "submit-help")

    assert "Local folders work here too" in help_text(settings.with_(allow_local_models=True))
    assert "Local folders" not in help_text(settings.with_(allow_local_models=False))
