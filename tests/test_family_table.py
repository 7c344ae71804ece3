"""The families table (docs/models.md): written from the code, every image-text-to-text type of the pinned
transformers in it once, the ones that run exactly the declared families, every other one with its reason, and that
reason what a refusal says."""
from __future__ import annotations

import importlib.util
import json

import pytest

from evaluator.models import UnsupportedModelError, describe_model_folder, family_table
from evaluator.models.families import FAMILIES
from tests.conftest import PROJECT


@pytest.fixture(scope="module")
def tool():
    """tools/families_table.py, loaded as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("families_table", PROJECT / "tools" / "families_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows():
    return family_table.rows()


def test_the_page_is_the_codes(tool):
    """A family added, a refusal reworded or transformers moved without `python tools/families_table.py --write`
    fails here."""
    page = (PROJECT / "docs" / "models.md").read_text(encoding="utf-8")
    assert page == tool.page(), "docs/models.md differs from the code: python tools/families_table.py --write"


def test_every_image_text_type_is_listed_once_and_the_runners_are_the_families(rows, tool):
    types = family_table.image_text_types()
    assert [row.model_type for row in rows] == sorted(types)
    assert {row.model_type for row in rows if row.runs} == set(FAMILIES)
    assert set(FAMILIES) <= set(types)  # no family that transformers does not map
    assert set(family_table.NOT_RUN) <= set(types) - set(FAMILIES)  # no stale or contradicting refusal
    page = tool.page()
    for row in rows:
        assert page.count(f"| `{row.model_type}` | `{row.model_class}` |") == 1, row.model_type
        if row.runs:
            assert row.options and row.images and row.static_path and not row.why
        else:
            assert row.why.split(":")[0] in (family_table.VIDEO_ONLY, family_table.ENCODER_DECODER,
                                               family_table.SPECIAL_PURPOSE, family_table.NOT_VERIFIED)
    assert family_table.TEXT_RULE in page and family_table.REMOTE_RULE in page


@pytest.mark.parametrize("model_type,architecture,reason", [
    ("fuyu", "FuyuForCausalLM", "not yet verified"),
    ("florence2", "Florence2ForConditionalGeneration", "encoder-decoder (a BART-style encoder-decoder)"),
    ("got_ocr2", "GotOcr2ForConditionalGeneration", "OCR or special-purpose"),
    ("instructblipvideo", "InstructBlipVideoForConditionalGeneration", "video only"),
])
def test_a_refused_type_says_why_and_names_the_table(tmp_path, model_type, architecture, reason):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": [architecture]}))
    with pytest.raises(UnsupportedModelError) as refused:
        describe_model_folder(tmp_path)
    said = str(refused.value)
    assert said.startswith(f"unsupported architecture {architecture} (model_type '{model_type}'): {reason}")
    assert "docs/models.md" in said and "\n" not in said


def test_the_submit_tab_and_about_list_the_families_and_link_the_table(settings, store):
    """A visitor reads which families run before submitting, and where every other architecture's reason is: the
    Submit tab's rules and About alike, linked on the Hub where the Space is known."""
    from leaderboard.ui import build_app
    from leaderboard.ui.about import about_markdown

    def help_text(chosen) -> str:
        config = build_app(chosen, store).get_config_file()
        return next(c["props"]["value"] for c in config["components"]
                    if c.get("props", {}).get("elem_id") == "submit-help")

    for said in (help_text(settings), about_markdown(settings)):
        assert all(f"`{name}`" in said for name in FAMILIES)
        assert "**The families table** (`docs/models.md`) says why every other architecture is refused" in said
    known = settings.with_(space_id="org/space")
    link = "[The families table](https://huggingface.co/spaces/org/space/blob/main/docs/models.md)"
    assert link in help_text(known) and link in about_markdown(known)
    assert "[Model families](https://huggingface.co/spaces/org/space/blob/main/docs/models.md)" in about_markdown(known)


def test_the_readme_counts_the_families_that_run():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert f"It runs {len(FAMILIES)} vision-language families" in readme
    assert "(docs/models.md)" in readme
