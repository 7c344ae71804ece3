"""The tiny model of Meta's Llama 3.2 Vision (MllamaForConditionalGeneration): a tiled ViT whose output the Llama text
model reads through cross-attention layers (no image tokens in the text besides one <|image|> marker per image).

Sizes from transformers' own tester (tests/models/mllama/test_modeling_mllama.py, MllamaVisionText2TextModelTester),
the shared byte-level BPE (common.py) carrying Llama 3's special tokens, and the real chat template of
meta-llama/Llama-3.2-11B-Vision-Instruct (templates/mllama.jinja; the builder says where it comes from).
"""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import _tokenizer, family_template

# Llama 3's special tokens (all special in the real tokenizer_config.json's added_tokens): the header markers around a
# turn's role, <|eot_id|> (ends a turn, and the Instruct tokenizer's eos_token), <|eom_id|> and <|python_tag|> (tool
# use), <|end_of_text|>, and <|finetune_right_pad_id|> (the padding token of Llama 3.2 Vision).
LLAMA3_TOKENS = ["<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|python_tag|>"]
BOS, EOT, PAD = "<|begin_of_text|>", "<|eot_id|>", "<|finetune_right_pad_id|>"
IMAGE = "<|image|>"  # the last id of the real vocabulary (128256 = the text model's vocab_size): never generated
# Zero-initialised gates: tanh(0) = 0 would make a random model ignore its images (the cross-attention layers' gates)
# and the tiles' positions (the vision tower's tile and position embedding gates).
GATES = ("cross_attn_attn_gate", "cross_attn_mlp_gate", "embedding.gate")


def build_tiny_mllama(folder: Path) -> Path:
    """A Llama 3.2 Vision model: 4 text layers (the second cross-attends to the image, the others self-attend), a
    tiled ViT.

    Sizes: MllamaVisionText2TextModelTester. Text: hidden 32, 4 layers, cross_attention_layers [1], 4 heads, 4 KV
    heads, intermediate 37, gelu (as in the real model, a self-attention layer comes first, so the cache's first layer
    counts the text tokens, and self-attention layers follow the cross-attention one, so what a token read from the
    image reaches the tokens after it).
    Vision: image (tile) 30, hidden 16, 4 heads, intermediate 37, intermediate_layers_indices [0], vision_output_dim
    32, 4 tiles at most with the default aspect ratios, 2 global layers; 2 local layers (the tester's 6 cut to 2) and
    patch 5 (the tester's patch 2 makes 226 patches a tile, whose tile position table alone would be 520 KB; with 5,
    37 patches a tile and 148 image states per image for the cross-attention). The gates, zero at initialisation,
    are drawn from a seeded normal so that the images and their tiles count. The processor is MllamaProcessor over
    MllamaImageProcessor (tiles of 30x30, 4 at most).

    The tokenizer puts <|image|> last, as the real one (id 128256, one past the text model's vocab_size, so the LM head
    never writes it): the text config's vocab_size is the tokenizer's length less one. The chat template is the real
    one of meta-llama/Llama-3.2-11B-Vision-Instruct (its chat_template.json), as mirrored verbatim in
    maiqingqiang/Jinja's Tests/JinjaTests/ChatTemplateTests.swift (llama3_2visionChatTemplate, commit 81d16b1f) and in
    NVIDIA NeMo's MLlamaTemplateConfig: it writes no system turn when the prompt has images (and raises on a system
    message beside images), and without images a system turn carrying the knowledge cut-off and today's date."""
    import torch
    from transformers import (AddedToken, MllamaConfig, MllamaForConditionalGeneration, MllamaImageProcessor,
                              MllamaProcessor, MllamaTextConfig, MllamaVisionConfig)

    template = family_template("mllama")
    tokenizer = _tokenizer(LLAMA3_TOKENS, template, bos=BOS, eos=EOT, pad=PAD, unk=None)
    tokenizer.add_tokens([AddedToken(IMAGE, special=True, normalized=False)], special_tokens=True)
    image_id = tokenizer.convert_tokens_to_ids(IMAGE)
    assert image_id == len(tokenizer) - 1
    image_processor = MllamaImageProcessor(size={"height": 30, "width": 30}, max_image_tiles=4)
    processor = MllamaProcessor(image_processor=image_processor, tokenizer=tokenizer, chat_template=template)
    ends = [tokenizer.convert_tokens_to_ids(token) for token in ("<|end_of_text|>", "<|eom_id|>", EOT)]
    text = MllamaTextConfig(vocab_size=image_id, hidden_size=32, num_hidden_layers=4, num_attention_heads=4,
                            num_key_value_heads=4, intermediate_size=37, hidden_act="gelu",
                            max_position_embeddings=512, cross_attention_layers=[1], tie_word_embeddings=False,
                            pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                            eos_token_id=ends)
    vision = MllamaVisionConfig(image_size=30, patch_size=5, num_channels=3, hidden_size=16, attention_heads=4,
                                intermediate_size=37, num_hidden_layers=2, num_global_layers=2,
                                intermediate_layers_indices=[0], vision_output_dim=32, max_num_tiles=4)
    config = MllamaConfig(vision_config=vision, text_config=text, image_token_index=image_id)

    folder = Path(folder)
    torch.manual_seed(0)
    model = MllamaForConditionalGeneration(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith(GATES):
                parameter.normal_(0.0, 1.0)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = ends
    model.save_pretrained(folder, safe_serialization=True)
    processor.save_pretrained(folder)
    return folder
