"""tools/screenshots.py, the README's screenshots: on the tests' finished runs (the same runs the script makes) it
photographs the served app into two PNGs of the window's width, the board and an opened Explorer question. The runs
come from the session's `finished_runs` (shared with the Explorer's tests); the script's main() makes them itself."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import PROJECT
from tests.explorer_runs import publish_run


def load_script():
    spec = importlib.util.spec_from_file_location("screenshots", PROJECT / "tools" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_screenshots_of_the_board_and_an_opened_question(settings, store, finished_runs, browser, tmp_path,
                                                         environ_kept):  # the script pops LEADERBOARD_ at import
    script = load_script()
    keys = {name: publish_run(store, settings, run) for name, run in finished_runs.items()}
    # at the README's width: the board fits 1,400 px (with each score's interval), and the script waits until it does
    paths = script.serve_and_shoot(settings, store, keys, tmp_path / "images", width=1400, browser=browser)
    assert [p.name for p in paths] == ["board.png", "explorer.png"]
    for path in paths:
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width == 1400 and 300 < image.height <= 2000, (path, image.size)
        assert Path(path).stat().st_size < 400_000
