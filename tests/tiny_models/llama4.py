"""The tiny model of Meta's Llama 4 (Scout / Maverick: Llama4ForConditionalGeneration), a natively multimodal
mixture-of-experts model whose text layers mix chunked-attention RoPE layers with global no-RoPE (NoPE) ones.

Sizes come from transformers' own tester of the family (tests/models/llama4/test_modeling_llama4.py in the
huggingface/transformers repository: Llama4ForVisionText2TextModelTester; some versions of the file hold integration
tests only); the builder says where it departs from them and why. The tokenizer is the shared byte-level BPE
(common.py) with Llama 4's own BOS / end-of-turn / padding names (no unknown token, as the real one) and the special
tokens its processor writes; the chat template is the family's real one (templates/llama4.jinja).
"""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import _save, _tokenizer, family_template

# What Llama 4's tokenizer carries (all special tokens in the real one): the text markers (BOS, end of text, the turn
# headers, end of message / of turn, the tool-call markers, padding) and the vision markers its processor writes.
LLAMA4_BOS, LLAMA4_EOT, LLAMA4_PAD = "<|begin_of_text|>", "<|eot|>", "<|finetune_right_pad|>"
LLAMA4_TEXT_TOKENS = ["<|end_of_text|>", "<|header_start|>", "<|header_end|>", "<|eom|>", "<|python_start|>",
                      "<|python_end|>"]
LLAMA4_VISION_TOKENS = ["<|image_start|>", "<|image_end|>", "<|tile_x_separator|>", "<|tile_y_separator|>",
                        "<|image|>", "<|patch|>"]
LLAMA4_TILE, LLAMA4_PATCH = 8, 2  # pixels: a tile of 4x4 patches, 2x2 <|patch|> tokens after the pixel shuffle
LLAMA4_MAX_TILES = 4  # tiles per image at most (the real preprocessor: 16), a global tile beside them
CHUNK = 8  # tokens: the tests' prompts are longer, so the chunked layers' caches drop keys and chunks start anew


def build_tiny_llama4(folder: Path) -> Path:
    """A Llama4ForConditionalGeneration (its own vision encoder over tiles with a pixel-shuffle adapter, Llama 4 text
    with mixture-of-experts feed-forward blocks) with its Llama4Processor and Llama4ImageProcessor.

    Sizes from Llama4ForVisionText2TextModelTester: vision hidden 32, 2 layers, 4 heads, intermediate 128, image 8,
    patch 2, pixel shuffle 0.5, vision_output_dim / projector in and out 32; text hidden 32, 2 layers, vocabulary the
    tokenizer's. Departures, each to keep the model tiny or to exercise what the real checkpoints have: text 4 heads
    of 8 (2 KV heads) where the tester keeps the config's 40 heads of 128 (a 32 -> 5120 query projection); 4 experts
    of 32 (the tester's intermediate 128) with top-1 sigmoid routing and a shared expert, as Scout (every layer MoE,
    num_experts_per_tok 1); layer 0 a chunked-attention RoPE layer with QK norm, layer 1 a global NoPE layer with
    attention temperature tuning (no_rope_layer_interval 2 where the real one is 4: the real 3-to-1 pattern at 1-to-1),
    attention_chunk_size 8 (real 8192) so that every test prompt crosses a chunk; RoPE theta 5e5 without Scout's llama3
    scaling (whose 8192-token original length a 512-position tiny model cannot have); the real temperature-tuning
    floor (8192) and scale (0.1). Untied embeddings, as the real ones.

    Images: tiles of 8 px (the vision image_size; real 336 with patch 14), at most LLAMA4_MAX_TILES per image on the
    best-fitting canvas, plus a global tile when there are several; each tile becomes 4 <|patch|> tokens. The
    processor expands each <|image|> into <|image_start|>, the tiles' <|patch|> runs separated by
    <|tile_x_separator|> / <|tile_y_separator|>, then <|image|> and the global tile's <|patch|> run, <|image_end|>;
    the model's image token is <|patch|> (image_token_index), as in the real config.
    Chat template: the real one of meta-llama/Llama-4-Scout-17B-16E-Instruct and -Maverick-17B-128E-Instruct, as
    transformers' conversion script writes it (src/transformers/models/llama4/convert_llama4_weights_to_hf.py,
    write_tokenizer's chat_template; Llama4Processor's default chat_template is the same text), verbatim.
    """
    from transformers import (Llama4Config, Llama4ForConditionalGeneration, Llama4ImageProcessor, Llama4Processor,
                              Llama4TextConfig, Llama4VisionConfig)

    template = family_template("llama4")
    tokenizer = _tokenizer([LLAMA4_EOT, *LLAMA4_TEXT_TOKENS, *LLAMA4_VISION_TOKENS], template, bos=LLAMA4_BOS,
                           eos=LLAMA4_EOT, pad=LLAMA4_PAD, unk=None)
    image_processor = Llama4ImageProcessor(size={"height": LLAMA4_TILE, "width": LLAMA4_TILE},
                                           max_patches=LLAMA4_MAX_TILES, resize_to_max_canvas=False)
    processor = Llama4Processor(image_processor=image_processor, tokenizer=tokenizer, patch_size=LLAMA4_PATCH,
                                pixel_shuffle_ratio=0.5, chat_template=template)
    ids = tokenizer.convert_tokens_to_ids
    # As the real text config: BOS, the three tokens that end an answer (end of text, of message, of turn), padding.
    text = Llama4TextConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            num_key_value_heads=2, head_dim=8, intermediate_size=32, intermediate_size_mlp=64,
                            num_local_experts=4, num_experts_per_tok=1, interleave_moe_layer_step=1,
                            no_rope_layer_interval=2, attention_chunk_size=CHUNK, use_qk_norm=True,
                            attn_temperature_tuning=True, floor_scale=8192, attn_scale=0.1,
                            rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
                            max_position_embeddings=512, tie_word_embeddings=False,
                            bos_token_id=ids(LLAMA4_BOS), pad_token_id=ids(LLAMA4_PAD),
                            eos_token_id=[ids("<|end_of_text|>"), ids("<|eom|>"), ids(LLAMA4_EOT)])
    vision = Llama4VisionConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                                image_size=LLAMA4_TILE, patch_size=LLAMA4_PATCH, pixel_shuffle_ratio=0.5,
                                vision_output_dim=32, projector_input_dim=32, projector_output_dim=32,
                                rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    config = Llama4Config(text_config=text, vision_config=vision, image_token_index=ids("<|patch|>"),
                          boi_token_index=ids("<|image_start|>"), eoi_token_index=ids("<|image_end|>"),
                          tie_word_embeddings=False)
    return _save(folder, Llama4ForConditionalGeneration, config, processor)
