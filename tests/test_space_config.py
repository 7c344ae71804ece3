"""The Space's configuration: the YAML front matter at the top of README.md, which the Hub reads."""
from __future__ import annotations

from leaderboard.board.dataset_card import front_matter
from tests.conftest import PROJECT


def test_the_front_matter_configures_a_gradio_space_the_hub_can_describe_and_find():
    meta = front_matter((PROJECT / "README.md").read_text(encoding="utf-8"))
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["python_version"] == "3.11"
    assert meta["hf_oauth"] is True  # sign-in with Hugging Face
    description = meta["short_description"]
    assert isinstance(description, str) and 0 < len(description) <= 60 and "\n" not in description
    assert {"leaderboard", "evaluation", "vision-language"} <= set(meta["tags"])
