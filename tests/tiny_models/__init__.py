"""Tiny random-weight models built at test time (a few hundred KB each, built in about a second), one per family.

Each builder writes a folder that `from_pretrained` loads like a real Hub model: config, safetensors weights,
tokenizer (or processor) and, where the real family has one, a chat template. Weights are seeded, so a build is
deterministic. common.py holds what they share; classic.py the 2023-24 families (hidden 32, 2 layers, 2 heads, images
32 px, patch 8); each newer family's module takes its sizes from transformers' own tester of that family, its real
special tokens and image-token layout, and its real chat template where a public copy exists (its builder says which).
"""
from __future__ import annotations

from tests.tiny_models.classic import (build_tiny_blip2, build_tiny_idefics3, build_tiny_instructblip,
                                       build_tiny_llama, build_tiny_llava, build_tiny_llava_next,
                                       build_tiny_paligemma, build_tiny_qwen2, build_tiny_qwen2_5_vl,
                                       build_tiny_qwen2_vl, build_tiny_smolvlm)
from tests.tiny_models.common import (CHAT_TEMPLATE, IDEFICS3_TOKENS, SENTENCES, _save, _token_ids, _tokenizer,
                                      chat_template)
from tests.tiny_models.gemma import build_tiny_gemma3, build_tiny_gemma4
from tests.tiny_models.glm import build_tiny_glm4v, build_tiny_glm4v_moe, build_tiny_glm46v
from tests.tiny_models.llama4 import build_tiny_llama4
from tests.tiny_models.mixed import build_tiny_aya_vision, build_tiny_lfm2_vl, build_tiny_mistral3
from tests.tiny_models.mllama import build_tiny_mllama
from tests.tiny_models.molmo2 import build_tiny_molmo2
from tests.tiny_models.qwen import build_tiny_qwen3_5, build_tiny_qwen3_vl
from tests.tiny_models.qwen_moe import build_tiny_qwen3_5_moe, build_tiny_qwen3_vl_moe
from tests.tiny_models.tiles import build_tiny_idefics2, build_tiny_internvl, build_tiny_llava_onevision
from tests.tiny_models.timm_towers import build_tiny_gemma3n, build_tiny_perception_lm

# family name -> builder. Tests parametrised over families read this; a new family is one builder + one line.
FAMILIES = {
    "llava": build_tiny_llava,
    "llava_next": build_tiny_llava_next,
    "idefics3": build_tiny_idefics3,
    "smolvlm": build_tiny_smolvlm,
    "qwen2_vl": build_tiny_qwen2_vl,
    "qwen2_5_vl": build_tiny_qwen2_5_vl,
    "paligemma": build_tiny_paligemma,
    "blip2": build_tiny_blip2,
    "instructblip": build_tiny_instructblip,
    "llama": build_tiny_llama,
    "qwen2": build_tiny_qwen2,
    "qwen3_vl": build_tiny_qwen3_vl,
    "qwen3_5": build_tiny_qwen3_5,
    "internvl": build_tiny_internvl,
    "llava_onevision": build_tiny_llava_onevision,
    "idefics2": build_tiny_idefics2,
    "gemma3": build_tiny_gemma3,
    "gemma4": build_tiny_gemma4,
    "mistral3": build_tiny_mistral3,
    "aya_vision": build_tiny_aya_vision,
    "lfm2_vl": build_tiny_lfm2_vl,
    "gemma3n": build_tiny_gemma3n,
    "perception_lm": build_tiny_perception_lm,
    "qwen3_vl_moe": build_tiny_qwen3_vl_moe,
    "qwen3_5_moe": build_tiny_qwen3_5_moe,
    "molmo2": build_tiny_molmo2,
    "llama4": build_tiny_llama4,
    "mllama": build_tiny_mllama,
    "glm4v": build_tiny_glm4v,
    "glm4v_moe": build_tiny_glm4v_moe,
    "glm46v": build_tiny_glm46v,
}
# The families the quick tier (-m "not slow") runs the family matrix on: a 2023-24 classic and a text-only model (two,
# so the quick tier stays within a minute: issue 70); the whole suite runs every family (tests/conftest.py marks the
# others' matrix tests slow).
QUICK_FAMILIES = frozenset({"llava", "llama"})
# The text-only families among them (no processor, no images).
TEXT_ONLY = frozenset({"llama", "qwen2"})
# The families checked through the CLI as well (tests/test_family_cli.py): those added for today's VLMs (the 2023-24
# ones are checked there by tests/test_batch_invariance.py's tiny LLaVA and by bench/batch_drift.py), the slowest
# first so that the test workers start on them.
CLI_FAMILIES: tuple[str, ...] = ("gemma4", "gemma3n", "qwen3_5", "gemma3", "mistral3", "perception_lm", "internvl",
                                 "qwen3_vl", "llava_onevision", "aya_vision", "lfm2_vl", "idefics2",
                                 "qwen3_vl_moe", "qwen3_5_moe", "molmo2", "llama4", "mllama",
                                 "glm4v", "glm4v_moe", "glm46v")

__all__ = ["CHAT_TEMPLATE", "CLI_FAMILIES", "FAMILIES", "QUICK_FAMILIES", "IDEFICS3_TOKENS", "SENTENCES", "TEXT_ONLY", "_save",
           "_token_ids", "_tokenizer", "build_tiny_blip2", "build_tiny_idefics3", "build_tiny_instructblip",
           "build_tiny_llama", "build_tiny_llava", "build_tiny_llava_next", "build_tiny_paligemma",
           "build_tiny_qwen2", "build_tiny_qwen2_5_vl", "build_tiny_qwen2_vl", "build_tiny_smolvlm", "chat_template"]
