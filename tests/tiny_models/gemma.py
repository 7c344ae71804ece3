"""The tiny models of Google's Gemma 3 (Gemma3ForConditionalGeneration) and Gemma 4 (Gemma4ForConditionalGeneration).

Sizes are transformers' own testers' (tests/models/gemma3/test_modeling_gemma3.py: Gemma3Vision2TextModelTester over
GemmaModelTester, i.e. CausalLMModelTester's defaults; tests/models/gemma4/test_modeling_gemma4.py:
Gemma4Vision2TextModelTester over Gemma4TextModelTester), with the shared byte-level BPE tokenizer (common.py) carrying
each family's real special tokens, and each family's real chat template (templates/gemma3.jinja, gemma4.jinja).

Both text models mix sliding-window and global attention layers; the tiny sliding window is 8 tokens, so that the
tests' prompts (tens of tokens) cross it and the sliding layers' caches (which keep only the window) are exercised.
"""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import _tokenizer, family_template

SLIDING_WINDOW = 8  # tokens: the tests' prompts are longer, so every sliding layer drops keys from its cache


def _save_randomized(folder: Path, model_class, config, processor, constant: tuple[str, ...] = ()) -> Path:
    """common._save, with the parameters whose names end as in `constant` drawn from a seeded normal instead of the
    constant the family initialises them to (Gemma 3's image projection, zeros: a random model would ignore its
    images; Gemma 4's patch position table, ones: it would ignore where a patch is)."""
    import torch

    folder = Path(folder)
    torch.manual_seed(0)
    model = model_class(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith(constant):
                parameter.normal_(0.0, 0.2)
    model.generation_config.pad_token_id = getattr(processor, "tokenizer", processor).pad_token_id
    model.save_pretrained(folder, safe_serialization=True)
    processor.save_pretrained(folder)
    return folder


# ---- Gemma 3 --------------------------------------------------------------------------------------------------

GEMMA3_TOKENS = {"boi_token": "<start_of_image>", "image_token": "<image_soft_token>", "eoi_token": "<end_of_image>"}
GEMMA3_TURNS = ["<start_of_turn>", "<end_of_turn>"]


def build_tiny_gemma3(folder: Path) -> Path:
    """A Gemma 3 model (SigLIP tower, 4 pooled soft tokens per image, Gemma 3 text with a sliding and a global layer).

    Sizes: Gemma3Vision2TextModelTester (vision image 20, patch 5, hidden 32, 2 layers, 4 heads, intermediate 37)
    over GemmaModelTester (text hidden 32, intermediate 37, 2 layers, 2 heads, 2 KV heads, head_dim 16);
    mm_tokens_per_image 4 (the tester's 2 is no square, which its projector's 2-D pooling needs), the sliding window
    8 and one layer of each kind (the tester's 2 layers would both be sliding). Images: 20x20, pan and scan off (the
    real checkpoints' preprocessor_config.json leaves it null, which the processor takes as off). The chat template
    is the real one of google/gemma-3-*-it, as transformers' converter writes it (huggingface/transformers
    src/transformers/models/gemma3/convert_gemma3_weights.py, _CHAT_TEMPLATE): the processor expands its
    <start_of_image> into "\\n\\n<start_of_image>" + 4 x <image_soft_token> + "<end_of_image>\\n\\n"."""
    from transformers import (Gemma3Config, Gemma3ForConditionalGeneration, Gemma3ImageProcessor, Gemma3Processor,
                              Gemma3TextConfig, SiglipVisionConfig)

    template = family_template("gemma3")
    tokenizer = _tokenizer(GEMMA3_TURNS, template, named=GEMMA3_TOKENS)
    image_processor = Gemma3ImageProcessor(size={"height": 20, "width": 20}, do_pan_and_scan=False)
    processor = Gemma3Processor(image_processor=image_processor, tokenizer=tokenizer, image_seq_length=4,
                                chat_template=template)
    ids = dict(pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
               eos_token_id=tokenizer.eos_token_id)
    # Untied embeddings and a wider init, as the tiny PaliGemma's: random answers that vary more with the prompt.
    text = Gemma3TextConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                            num_attention_heads=2, num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
                            layer_types=["sliding_attention", "full_attention"], sliding_window=SLIDING_WINDOW,
                            tie_word_embeddings=False, initializer_range=0.2, **ids)
    vision = SiglipVisionConfig(image_size=20, patch_size=5, num_channels=3, hidden_size=32, num_hidden_layers=2,
                                num_attention_heads=4, intermediate_size=37, vision_use_head=False)
    config = Gemma3Config(text_config=text, vision_config=vision, mm_tokens_per_image=4,
                          image_token_index=tokenizer.image_token_id, boi_token_index=tokenizer.boi_token_id,
                          eoi_token_index=tokenizer.eoi_token_id,
                          tie_word_embeddings=False, **ids)
    return _save_randomized(folder, Gemma3ForConditionalGeneration, config, processor,
                            constant=("mm_input_projection_weight",))


# ---- Gemma 4 --------------------------------------------------------------------------------------------------

GEMMA4_TOKENS = {
    "image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>",
    "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>",
    "sot_token": "<|turn>", "eot_token": "<turn|>", "soc_token": "<|channel>", "eoc_token": "<channel|>",
    "think_token": "<|think|>", "escape_token": '<|"|>', "str_token": "<|tool_response>",
    "etr_token": "<tool_response|>", "stc_token": "<|tool_call>", "etc_token": "<tool_call|>", "std_token": "<|tool>",
    "etd_token": "<tool|>",
}
GEMMA4_VIDEO = "<|video|>"
GEMMA4_PATCH, GEMMA4_POOLING, GEMMA4_SOFT_TOKENS = 5, 2, 70  # 70: the fewest soft tokens its processor allows


def build_tiny_gemma4(folder: Path) -> Path:
    """A Gemma 4 model (its own vision encoder over patches with 2-D positions, soft tokens pooled 2x2; Gemma 4 text
    with per-layer inputs, key/value sharing, mixture-of-experts blocks and bidirectional attention over images).

    Sizes: Gemma4Vision2TextModelTester (vision patch 5, hidden 32, 2 layers, 4 heads, 1 KV head, intermediate 37,
    pooling kernel 2; head_dim 8, hidden / heads, where the tester keeps the config's 64) over Gemma4TextModelTester
    (text hidden 32, intermediate 37, 4 layers sliding/full/sliding/full with the last 2 reusing the first 2's keys
    and values, 2 heads, 2 KV heads, head_dim 16, per-layer inputs of 16, MoE with 8 experts of 16, top 2,
    use_bidirectional_attention "vision"). Beyond the tester, the global layers are the 26B/31B checkpoints' kind
    (transformers' convert_gemma4_weights.py): keys used as values (attention_k_eq_v), their own head size (32) and
    KV heads (1), so a cache's layers differ in shape. The per-layer input vocabulary is the tokenizer's (the
    tester's 99 is its vocabulary), the sliding window 8 and the vision position table 140 (the longest side an image
    can have, in patches). Images: at most 70 soft tokens (the fewest the processor allows; a 40x30 image becomes
    90x70 pixels, 63 tokens). The chat template is the real one of google/gemma-4-*-it (ggml-org/llama.cpp
    models/templates/gemma4.jinja); the processor expands its <|image|> into <|image> + n x <|image|> + <image|>;
    the audio tokens are there because the processor requires them."""
    from transformers import (Gemma4AudioFeatureExtractor, Gemma4Config, Gemma4ForConditionalGeneration,
                              Gemma4ImageProcessor, Gemma4Processor, Gemma4TextConfig, Gemma4VideoProcessor,
                              Gemma4VisionConfig)

    template = family_template("gemma4")
    tokenizer = _tokenizer([GEMMA4_VIDEO], template, named=GEMMA4_TOKENS)
    patches = dict(patch_size=GEMMA4_PATCH, pooling_kernel_size=GEMMA4_POOLING, max_soft_tokens=GEMMA4_SOFT_TOKENS)
    processor = Gemma4Processor(feature_extractor=Gemma4AudioFeatureExtractor(),
                                image_processor=Gemma4ImageProcessor(**patches),
                                tokenizer=tokenizer, video_processor=Gemma4VideoProcessor(**patches),
                                chat_template=template, image_seq_length=GEMMA4_SOFT_TOKENS)
    ids = dict(pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
               eos_token_id=tokenizer.eos_token_id)
    # Untied embeddings and a wider init, as the tiny PaliGemma's: random answers that vary more with the prompt.
    text = Gemma4TextConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=4,
                            layer_types=["sliding_attention", "full_attention"] * 2, num_kv_shared_layers=2,
                            num_attention_heads=2, num_key_value_heads=2, head_dim=16,
                            attention_k_eq_v=True, global_head_dim=32, num_global_key_value_heads=1,
                            vocab_size_per_layer_input=len(tokenizer), hidden_size_per_layer_input=16,
                            enable_moe_block=True, num_experts=8, moe_intermediate_size=16, top_k_experts=2,
                            use_bidirectional_attention="vision", sliding_window=SLIDING_WINDOW,
                            max_position_embeddings=512, tie_word_embeddings=False, initializer_range=0.2, **ids)
    longest_side = GEMMA4_SOFT_TOKENS * GEMMA4_POOLING  # patches along an image's longest side, at most
    vision = Gemma4VisionConfig(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
                                num_key_value_heads=1, head_dim=8, patch_size=GEMMA4_PATCH,
                                pooling_kernel_size=GEMMA4_POOLING, position_embedding_size=longest_side)
    config = Gemma4Config(text_config=text, vision_config=vision, audio_config=None,
                          image_token_id=tokenizer.image_token_id, boi_token_id=tokenizer.boi_token_id,
                          eoi_token_id=tokenizer.eoi_token_id,
                          video_token_id=tokenizer.convert_tokens_to_ids(GEMMA4_VIDEO),
                          audio_token_id=tokenizer.audio_token_id, boa_token_id=tokenizer.boa_token_id,
                          eoa_token_index=tokenizer.eoa_token_id, tie_word_embeddings=False, **ids)
    return _save_randomized(folder, Gemma4ForConditionalGeneration, config, processor,
                            constant=("position_embedding_table",))
