"""The tiny models of Qwen3-VL and Qwen3.5 (natively multimodal; its text model mixes Gated DeltaNet linear-attention
layers with full-attention ones). Sizes from transformers' own testers (tests/models/qwen3_vl/test_modeling_qwen3_vl.py
and tests/models/qwen3_5/test_modeling_qwen3_5.py, their VisionText2TextModelTester), the Qwen tokenizer classes over
the shared byte-level BPE with Qwen's special tokens, and each family's real chat template
(templates/qwen3_vl.jinja, templates/qwen3_5.jinja; each builder says where it comes from)."""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import SENTENCES, _save, _token_ids, family_template


# What Qwen's tokenizers carry: <|endoftext|> (padding), the ChatML turn markers (<|im_end|> ends an answer) and the
# vision markers the processor and the model look for.
QWEN_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
               "<|video_pad|>"]
# Qwen3.5's tokenizer also has the thinking markers (ordinary added tokens there, not special ones).
THINK_TOKENS = ["<think>", "</think>"]


def _qwen_tokenizer(tokenizer_class, template: str, added: list[str] = ()):
    """Qwen's tokenizer class (its own pre-tokenizer: Qwen's split regex, byte-level, NFC) over a byte-level BPE
    (vocab ~400) trained on SENTENCES; <|im_end|> ends an answer, <|endoftext|> pads, and there is no BOS, as in the
    real checkpoints."""
    import json

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=[*QWEN_TOKENS, *added],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(SENTENCES, trainer=trainer)
    state = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in state["merges"]]
    tokenizer = tokenizer_class(vocab=state["vocab"], merges=merges, unk_token="<|endoftext|>",
                                eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None,
                                extra_special_tokens=QWEN_TOKENS[1:], chat_template=template)
    if added:
        tokenizer.add_tokens(list(added))
    return tokenizer


def _vision_ids(tokenizer) -> dict:
    return {name: tokenizer.convert_tokens_to_ids(token) for name, token in [
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>")]}


def _processor(tokenizer, template: str):
    """Qwen3-VL's processor (Qwen3.5 uses the same class): Qwen2-VL's image processor at patch 16 without merging (the
    testers' spatial_merge_size 1), images resized to 32x32 .. 64x64 pixels, so 2x2 to 4x4 image tokens; Qwen3-VL's
    video processor with the same patches (the processor requires one)."""
    import transformers as tf

    patches = dict(patch_size=16, merge_size=1, temporal_patch_size=2, image_mean=[0.5, 0.5, 0.5],
                   image_std=[0.5, 0.5, 0.5])
    size = {"shortest_edge": 32 * 32, "longest_edge": 64 * 64}
    image_processor = tf.Qwen2VLImageProcessor(size=size, **patches)
    video_processor = tf.Qwen3VLVideoProcessor(size=size, **patches)
    return tf.Qwen3VLProcessor(image_processor=image_processor, tokenizer=tokenizer, video_processor=video_processor,
                               chat_template=template)


# The testers' vision tower (both families): depth 2, hidden 32, 4 heads, patch 16, no spatial merging.
VISION = dict(depth=2, hidden_act="gelu_pytorch_tanh", intermediate_size=32, out_hidden_size=32, hidden_size=32,
              num_heads=4, patch_size=16, spatial_merge_size=1, temporal_patch_size=2, num_position_embeddings=16)
# M-RoPE over the 4 rotary frequency pairs of head_dim 8 (Qwen3-VL) or of 32 x partial_rotary_factor 0.25 (Qwen3.5):
# Qwen3.5's tester's section (Qwen3-VL's tester writes [16, 8, 8], sized for a larger head).
ROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1], "mrope_interleaved": True}


def build_tiny_qwen3_vl(folder: Path) -> Path:
    """A Qwen3-VL model (interleaved M-RoPE, DeepStack features from both vision layers) with its processor.

    Sizes from Qwen3VLVisionText2TextModelTester: text hidden 32, intermediate 37, 2 layers, 4 heads, 2 KV heads,
    head_dim 8; vision as VISION with deepstack_visual_indexes [0, 1]. Untied embeddings (the tester ties them): a
    random model with tied ones mostly repeats the prompt's last token. Chat template: the real Qwen3-VL Instruct
    one (the tokenizer.chat_template of the Qwen3-VL-30B-A3B-Instruct GGUF, quoted in a public GitHub collection of
    chat templates; the Qwen3-VL Instruct checkpoints share it); it has no thinking block.
    """
    import transformers as tf

    template = family_template("qwen3_vl")
    tokenizer = _qwen_tokenizer(tf.Qwen2Tokenizer, template)
    processor = _processor(tokenizer, template)
    text = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=8, hidden_act="silu",
                max_position_embeddings=512, rope_parameters=ROPE, **_token_ids(tokenizer))
    config = tf.Qwen3VLConfig(text_config=text, vision_config=dict(VISION, deepstack_visual_indexes=[0, 1]),
                              tie_word_embeddings=False, **_vision_ids(tokenizer))
    return _save(folder, tf.Qwen3VLForConditionalGeneration, config, processor)


def build_tiny_qwen3_5(folder: Path) -> Path:
    """A Qwen3.5 model (one Gated DeltaNet linear-attention layer, then one full-attention layer) with its processor.

    Sizes from Qwen3_5VisionText2TextModelTester: text hidden 32, intermediate 37, 2 layers, 4 heads, 2 KV heads,
    head_dim 32, linear attention with conv kernel 2, 4 key heads and 8 value heads of 16; vision as VISION. The
    tester orders its layers [full, linear]; here they come as in the real checkpoints, linear layers first and a
    full-attention layer closing each block (full_attention_interval 2), so the cache's first layer is a linear one.
    Untied embeddings, as for Qwen3-VL.

    Chat template: the real one of the small Qwen3.5 checkpoints (the tokenizer.chat_template of Qwen3.5-0.8B, as its
    GGUF carries it, quoted in a public GitHub docs page). It has a thinking switch, enable_thinking, off unless set:
    the prompt it renders ends with an empty thinking block ("<think>\\n\\n</think>\\n\\n"), the non-thinking prompt.
    (The larger Qwen3.5 checkpoints' template differs only in that default: it thinks unless enable_thinking=False.)
    """
    import transformers as tf

    template = family_template("qwen3_5")
    tokenizer = _qwen_tokenizer(tf.Qwen3_5Tokenizer, template, THINK_TOKENS)
    processor = _processor(tokenizer, template)
    text = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=32, hidden_act="silu",
                max_position_embeddings=512, rope_parameters=ROPE,
                layer_types=["linear_attention", "full_attention"], linear_conv_kernel_dim=2,
                linear_key_head_dim=16, linear_value_head_dim=16, linear_num_key_heads=4, linear_num_value_heads=8,
                **_token_ids(tokenizer))
    config = tf.Qwen3_5Config(text_config=text, vision_config=VISION, tie_word_embeddings=False,
                              **_vision_ids(tokenizer))
    return _save(folder, tf.Qwen3_5ForConditionalGeneration, config, processor)
