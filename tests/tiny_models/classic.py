"""The tiny models of the 2023-24 families (LLaVA 1.5 and NeXT, Idefics3, SmolVLM, Qwen2-VL and 2.5-VL, PaliGemma,
BLIP-2, InstructBLIP) and of the text-only Llama and Qwen2: hidden 32, 2 layers, 2 heads, images 32 px, patch 8. Their
chat template is the simple `role: content` one (common.CHAT_TEMPLATE), with each family's image placeholder."""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import (CHAT_TEMPLATE, IDEFICS3_TOKENS, QWEN2_VL_IMAGE, QWEN2_VL_TOKENS, TEXT, VISION,
                                      _llama_config, _save, _token_ids, _tokenizer, chat_template)


# ---- text-only causal LMs -----------------------------------------------------------------------------------

def build_tiny_llama(folder: Path) -> Path:
    """A 2-layer Llama text model with its tokenizer and chat template, saved into `folder`."""
    from transformers import LlamaForCausalLM

    tokenizer = _tokenizer([])
    return _save(folder, LlamaForCausalLM, _llama_config(tokenizer), tokenizer)


def build_tiny_qwen2(folder: Path) -> Path:
    """A 2-layer Qwen2 text model (ChatML special tokens) with its tokenizer and chat template."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = _tokenizer(["<|im_start|>", "<|im_end|>"])
    config = Qwen2Config(vocab_size=len(tokenizer), num_key_value_heads=1, max_position_embeddings=512,
                         tie_word_embeddings=False, **TEXT, **_token_ids(tokenizer))
    return _save(folder, Qwen2ForCausalLM, config, tokenizer)


# ---- LLaVA ----------------------------------------------------------------------------------------------------

def _clip_vision():
    from transformers import CLIPVisionConfig

    return CLIPVisionConfig(projection_dim=32, **VISION)


def build_tiny_llava(folder: Path) -> Path:
    """A LLaVA-1.5 model (CLIP vision tower, Llama text model) with its processor, saved into `folder`."""
    from transformers import CLIPImageProcessor, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    tokenizer = _tokenizer(["<image>"])
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=8,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1,
                               chat_template=CHAT_TEMPLATE)
    config = LlavaConfig(vision_config=_clip_vision(), text_config=_llama_config(tokenizer),
                         image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
                         vision_feature_layer=-1, vision_feature_select_strategy="default",
                         pad_token_id=tokenizer.pad_token_id)
    return _save(folder, LlavaForConditionalGeneration, config, processor)


def build_tiny_llava_next(folder: Path) -> Path:
    """A LLaVA-NeXT model (any-resolution tiles of 32 px) with its processor."""
    from transformers import (LlavaNextConfig, LlavaNextForConditionalGeneration, LlavaNextImageProcessor,
                              LlavaNextProcessor)

    pinpoints = [[32, 32], [32, 64], [64, 32]]
    tokenizer = _tokenizer(["<image>"])
    image_processor = LlavaNextImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32},
                                              image_grid_pinpoints=pinpoints)
    processor = LlavaNextProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=8,
                                   vision_feature_select_strategy="default", num_additional_image_tokens=1,
                                   chat_template=CHAT_TEMPLATE)
    config = LlavaNextConfig(vision_config=_clip_vision(), text_config=_llama_config(tokenizer),
                             image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
                             vision_feature_layer=-1, vision_feature_select_strategy="default",
                             image_grid_pinpoints=pinpoints, image_seq_length=16,
                             pad_token_id=tokenizer.pad_token_id)
    return _save(folder, LlavaNextForConditionalGeneration, config, processor)


# ---- Idefics3 / SmolVLM ---------------------------------------------------------------------------------------

def _idefics3_like(folder: Path, smol: bool) -> Path:
    """Idefics3 and SmolVLM share a layout: images 32 px, no splitting, 4 image tokens after pixel shuffle."""
    import transformers as tf

    prefix = "SmolVLM" if smol else "Idefics3"
    tokenizer = _tokenizer(IDEFICS3_TOKENS)
    image_processor = getattr(tf, f"{prefix}ImageProcessor")(
        do_image_splitting=False, size={"longest_edge": 32}, max_image_size={"longest_edge": 32})
    extra = {}
    if smol:
        extra["video_processor"] = tf.SmolVLMVideoProcessor(size={"longest_edge": 32},
                                                            max_image_size={"longest_edge": 32})
    processor = getattr(tf, f"{prefix}Processor")(image_processor=image_processor, tokenizer=tokenizer,
                                                   image_seq_len=4, chat_template=CHAT_TEMPLATE, **extra)
    vision = getattr(tf, f"{prefix}VisionConfig")(**VISION)
    config = getattr(tf, f"{prefix}Config")(vision_config=vision, text_config=_llama_config(tokenizer),
                                            scale_factor=2, image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
                                            pad_token_id=tokenizer.pad_token_id)
    return _save(folder, getattr(tf, f"{prefix}ForConditionalGeneration"), config, processor)


def build_tiny_idefics3(folder: Path) -> Path:
    """An Idefics3 model (SigLIP-like tower, pixel shuffle, Llama text) with its processor."""
    return _idefics3_like(folder, smol=False)


def build_tiny_smolvlm(folder: Path) -> Path:
    """A SmolVLM model (Idefics3 layout with SmolVLM classes and a video processor) with its processor."""
    return _idefics3_like(folder, smol=True)


# ---- Qwen2-VL / Qwen2.5-VL ------------------------------------------------------------------------------------

def _qwen_vl(folder: Path, v25: bool) -> Path:
    import transformers as tf

    tokenizer = _tokenizer(QWEN2_VL_TOKENS, template=chat_template(QWEN2_VL_IMAGE))
    size = dict(min_pixels=56 * 56, max_pixels=56 * 56, patch_size=14, merge_size=2, temporal_patch_size=2)
    image_processor = tf.Qwen2VLImageProcessor(**size)
    video_processor = tf.Qwen2VLVideoProcessor(**size)
    processor_class = tf.Qwen2_5_VLProcessor if v25 else tf.Qwen2VLProcessor
    processor = processor_class(image_processor=image_processor, tokenizer=tokenizer, video_processor=video_processor,
                                chat_template=chat_template(QWEN2_VL_IMAGE))
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in [
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>")]}
    text = dict(vocab_size=len(tokenizer), num_key_value_heads=1, max_position_embeddings=512,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 2, 2]},
                **TEXT, **_token_ids(tokenizer))
    if v25:
        vision = dict(depth=2, hidden_size=32, intermediate_size=64, out_hidden_size=32, num_heads=2,
                      patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=56,
                      fullatt_block_indexes=[1])
        config = tf.Qwen2_5_VLConfig(text_config=text, vision_config=vision, **ids)
        model_class = tf.Qwen2_5_VLForConditionalGeneration
    else:
        vision = dict(depth=2, embed_dim=32, hidden_size=32, mlp_ratio=2, num_heads=2, patch_size=14,
                      spatial_merge_size=2, temporal_patch_size=2)
        config = tf.Qwen2VLConfig(text_config=text, vision_config=vision, **ids)
        model_class = tf.Qwen2VLForConditionalGeneration
    return _save(folder, model_class, config, processor)


def build_tiny_qwen2_vl(folder: Path) -> Path:
    """A Qwen2-VL model (M-RoPE, 2x2 patch merging) with its processor (images are resized to 56x56 pixels)."""
    return _qwen_vl(folder, v25=False)


def build_tiny_qwen2_5_vl(folder: Path) -> Path:
    """A Qwen2.5-VL model (windowed vision attention) with its processor."""
    return _qwen_vl(folder, v25=True)


# ---- PaliGemma ------------------------------------------------------------------------------------------------

def build_tiny_paligemma(folder: Path) -> Path:
    """A PaliGemma model (SigLIP tower, Gemma text). No chat template: the prompt is the text (real checkpoints
    have none either); the processor adds the image tokens, BOS and the newline that ends the prefix."""
    from transformers import (GemmaConfig, PaliGemmaConfig, PaliGemmaForConditionalGeneration,
                              PaliGemmaProcessor, SiglipImageProcessor, SiglipVisionConfig)

    tokenizer = _tokenizer(["<image>"], template=None)
    image_processor = SiglipImageProcessor(size={"height": 32, "width": 32})
    image_processor.image_seq_length = 16
    processor = PaliGemmaProcessor(image_processor=image_processor, tokenizer=tokenizer)
    tokenizer = processor.tokenizer  # the processor adds <loc....>/<seg...> tokens
    # Untied embeddings: with tied ones a random model only ever repeats the last prompt token.
    text = GemmaConfig(vocab_size=len(tokenizer), num_key_value_heads=1, head_dim=16, tie_word_embeddings=False,
                       initializer_range=0.2, max_position_embeddings=512, **TEXT, **_token_ids(tokenizer))
    vision = SiglipVisionConfig(**VISION)
    config = PaliGemmaConfig(vision_config=vision, text_config=text, projection_dim=32, hidden_size=32,
                             tie_word_embeddings=False,
                             vocab_size=len(tokenizer), image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
                             pad_token_id=tokenizer.pad_token_id)
    return _save(folder, PaliGemmaForConditionalGeneration, config, processor)


# ---- BLIP-2 / InstructBLIP ------------------------------------------------------------------------------------

def _blip_vision_qformer(tf, prefix: str, tokenizer):
    vision = getattr(tf, f"{prefix}VisionConfig")(**VISION)
    qformer = getattr(tf, f"{prefix}QFormerConfig")(vocab_size=len(tokenizer), encoder_hidden_size=32,
                                                    max_position_embeddings=512, pad_token_id=tokenizer.pad_token_id,
                                                    **TEXT)
    return vision, qformer


def build_tiny_blip2(folder: Path) -> Path:
    """A BLIP-2 model (Q-Former with 4 queries, OPT text model). No chat template: "Question: ... Answer:"."""
    import transformers as tf

    tokenizer = _tokenizer(["<image>"], template=None)
    image_processor = tf.BlipImageProcessor(size={"height": 32, "width": 32})
    processor = tf.Blip2Processor(image_processor=image_processor, tokenizer=tokenizer, num_query_tokens=4)
    vision, qformer = _blip_vision_qformer(tf, "Blip2", tokenizer)
    text = tf.OPTConfig(vocab_size=len(tokenizer), hidden_size=32, ffn_dim=64, num_hidden_layers=2,
                        num_attention_heads=2, word_embed_proj_dim=32, max_position_embeddings=512, init_std=0.2,
                        **_token_ids(tokenizer))
    config = tf.Blip2Config(vision_config=vision, qformer_config=qformer, text_config=text, num_query_tokens=4,
                            image_token_index=tokenizer.convert_tokens_to_ids("<image>"))
    return _save(folder, tf.Blip2ForConditionalGeneration, config, processor)


def build_tiny_instructblip(folder: Path) -> Path:
    """An InstructBLIP model (instruction-aware Q-Former, Llama text model, as in the Vicuna checkpoints)."""
    import transformers as tf

    tokenizer = _tokenizer(["<image>"], template=None)
    qformer_tokenizer = _tokenizer([], template=None)
    image_processor = tf.BlipImageProcessor(size={"height": 32, "width": 32})
    processor = tf.InstructBlipProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                         qformer_tokenizer=qformer_tokenizer, num_query_tokens=4)
    vision, qformer = _blip_vision_qformer(tf, "InstructBlip", qformer_tokenizer)
    config = tf.InstructBlipConfig(vision_config=vision, qformer_config=qformer,
                                   text_config=_llama_config(tokenizer), num_query_tokens=4,
                                   image_token_index=tokenizer.convert_tokens_to_ids("<image>"))
    return _save(folder, tf.InstructBlipForConditionalGeneration, config, processor)
