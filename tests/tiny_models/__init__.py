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
}
# The text-only families among them (no processor, no images).
TEXT_ONLY = frozenset({"llama", "qwen2"})
# The families checked through the CLI as well (tests/test_family_cli.py): those added for today's VLMs (the 2023-24
# ones are checked there by tests/test_batch_invariance.py's tiny LLaVA and by bench/batch_drift.py).
CLI_FAMILIES: tuple[str, ...] = ("llava",)

__all__ = ["CHAT_TEMPLATE", "CLI_FAMILIES", "FAMILIES", "IDEFICS3_TOKENS", "SENTENCES", "TEXT_ONLY", "_save", "_token_ids",
           "_tokenizer", "build_tiny_blip2", "build_tiny_idefics3", "build_tiny_instructblip", "build_tiny_llama",
           "build_tiny_llava", "build_tiny_llava_next", "build_tiny_paligemma", "build_tiny_qwen2",
           "build_tiny_qwen2_5_vl", "build_tiny_qwen2_vl", "build_tiny_smolvlm", "chat_template"]
