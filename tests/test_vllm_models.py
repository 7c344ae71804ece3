"""vLLM's supported-models list for the pinned version (evaluator/models/vllm_models.py): a few facts it states, its
tables consistent with one another, and docs/models.md's vLLM column the module's answer for every family."""
from __future__ import annotations

import re

import pytest

from evaluator.models import vllm_models
from evaluator.models.families import FAMILIES
from evaluator.models.family_table import rows
from evaluator.models.vllm_models import NOT_LISTED, SERVED, served_by_vllm, vllm_note
from tests.conftest import PROJECT


@pytest.mark.parametrize("architecture", [
    "LlavaForConditionalGeneration",  # LLaVA-1.5
    "Qwen2_5_VLForConditionalGeneration",
    "Qwen3VLForConditionalGeneration",
    "Llama4ForConditionalGeneration",
    "LlamaForCausalLM",  # text-only
    "Qwen2ForCausalLM",
    "SmolLM3ForCausalLM",  # through the Transformers backend
])
def test_the_list_serves_these(architecture):
    assert served_by_vllm(architecture) is True
    assert vllm_note(architecture).startswith("yes")


@pytest.mark.parametrize("architecture", [
    "Idefics2ForConditionalGeneration",
    "InstructBlipForConditionalGeneration",
    "PerceptionLMForConditionalGeneration",
    "MllamaForConditionalGeneration",  # dropped with V0's encoder-decoder support
    "Molmo2ForConditionalGeneration",  # listed only by a later vLLM
    "MotifForCausalLM",  # listed for V0 alone
])
def test_the_list_does_not_serve_these(architecture):
    assert served_by_vllm(architecture) is False
    assert vllm_note(architecture).startswith("no")


def test_no_name_is_no_answer():
    assert served_by_vllm(None) is None and served_by_vllm("") is None
    assert vllm_note(None) == "—"


def test_caveats_and_reasons_read_as_the_list_says():
    assert vllm_note("LlavaForConditionalGeneration") == "yes"
    assert vllm_note("SmolVLMForConditionalGeneration") == "yes; one image a prompt"
    assert "causally" in vllm_note("Gemma3ForConditionalGeneration")
    assert "one image a prompt" in vllm_note("PaliGemmaForConditionalGeneration")
    assert "causally" in vllm_note("PaliGemmaForConditionalGeneration")
    assert "Transformers backend" in vllm_note("Emu3ForConditionalGeneration")
    assert "V0" in vllm_note("MllamaForConditionalGeneration")
    assert vllm_note("Qwen3_5ForConditionalGeneration") == f"no; {vllm_models.LATER}"
    assert vllm_note("V0_or_anything_unlisted") == "no"


def test_the_tables_agree_with_one_another():
    assert vllm_models.VLLM_VERSION == "0.11.0"
    assert f"v{vllm_models.VLLM_VERSION}" in vllm_models.SOURCE and vllm_models.VLLM_VERSION in vllm_models.VLLM_IMAGE
    assert len(vllm_models.VLLM_COMMIT) == 40
    multimodal = vllm_models.MULTIMODAL_GENERATION
    assert vllm_models.ONE_IMAGE | vllm_models.NO_IMAGE | vllm_models.CAUSAL_IMAGE_ATTENTION <= multimodal
    assert not vllm_models.ONE_IMAGE & vllm_models.NO_IMAGE
    assert vllm_models.TRANSFORMERS_BACKEND | vllm_models.HF_OVERRIDES <= SERVED
    assert not vllm_models.V0_ONLY & SERVED
    assert not set(NOT_LISTED) & SERVED  # a reason for not listing is never given to a listed architecture


def test_every_family_has_an_answer_and_the_docs_column_is_the_modules():
    page = (PROJECT / "docs" / "models.md").read_text(encoding="utf-8")
    assert "| model type | class | options | images | on a GPU | vLLM |" in page
    assert vllm_models.SOURCE in page and f"vLLM {vllm_models.VLLM_VERSION}" in page
    running = [row for row in rows() if row.runs]
    assert {row.model_type for row in running} == set(FAMILIES)
    start = page.index("| model type | class | options | images | on a GPU | vLLM |")
    table = {}
    for line in page[start:].split("\n\n")[0].splitlines()[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]  # an escaped pipe stays put
        table[cells[0].strip("`")] = cells
    assert set(table) == set(FAMILIES)
    for row in running:
        assert served_by_vllm(row.model_class) is not None
        assert len(table[row.model_type]) == 6 and table[row.model_type][1] == f"`{row.model_class}`"
        assert table[row.model_type][-1] == vllm_note(row.model_class).replace("|", "\\|"), row.model_type
    served = {row.model_type for row in running if served_by_vllm(row.model_class)}
    assert {"llava", "qwen2_5_vl", "qwen2_vl", "internvl"} <= served
    assert {"idefics2", "instructblip", "mllama"}.isdisjoint(served)
