"""Folders holding only the config.json (and a chat template) of real models' shapes, for plans: a run's cost is
counted from config.json alone, never from weights. The fields are those the models' published config.json files
state for the sizes that matter (layers, widths, heads, vocabulary, experts, the vision tower).

    python tests/shaped_configs.py DIR   writes DIR/llava-1.5-7b, DIR/qwen3-vl-8b (a thinking template) and
                                         DIR/llama-4-scout
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

# a chat template that writes a thought and takes the switch, as Qwen3's do (the parts the plan reads)
THINKING_TEMPLATE = ("{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}"
                     "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- if enable_thinking is defined and "
                     "enable_thinking is false %}<think>\n\n</think>\n\n{%- else %}<think>\n{%- endif %}{%- endif %}")

SHAPES = {
    "llava-1.5-7b": {
        "architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "image_token_index": 32000,
        "vision_feature_select_strategy": "default", "vision_feature_layer": -2,
        "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
                        "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
                        "vocab_size": 32064, "max_position_embeddings": 4096},
        "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024, "image_size": 336,
                          "intermediate_size": 4096, "num_attention_heads": 16, "num_hidden_layers": 24,
                          "patch_size": 14, "projection_dim": 768}},
    "qwen3-vl-8b": {
        "architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
        "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 4096, "intermediate_size": 12288,
                        "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
                        "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": False},
        "vision_config": {"model_type": "qwen3_vl", "depth": 27, "hidden_size": 1152, "intermediate_size": 4304,
                          "num_heads": 16, "patch_size": 16, "spatial_merge_size": 2, "out_hidden_size": 4096}},
    "llama-4-scout": {
        "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
        "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                        "intermediate_size_mlp": 16384, "num_attention_heads": 40, "num_hidden_layers": 48,
                        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048, "num_local_experts": 16,
                        "num_experts_per_tok": 1, "interleave_moe_layer_step": 1},
        "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408, "num_hidden_layers": 34,
                          "intermediate_size": 5632, "image_size": 336, "patch_size": 14,
                          "pixel_shuffle_ratio": 0.5}},
}


def write(folder: Path, shape: str) -> Path:
    """`folder` holding `shape`'s config.json (qwen3-vl-8b: with a thinking chat template too)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(SHAPES[shape], indent=1), encoding="utf-8")
    if shape == "qwen3-vl-8b":
        (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": THINKING_TEMPLATE}),
                                                      encoding="utf-8")
    return folder


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "shaped-configs")
    for name in SHAPES:
        print(write(root / name, name))
