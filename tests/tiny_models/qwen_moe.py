"""The tiny models of the Qwen mixture-of-experts VLMs: Qwen3-VL-MoE (Qwen3-VL-30B-A3B, Qwen3-VL-235B-A22B; built
here as their Thinking checkpoints) and Qwen3.5-MoE (Qwen3.5-397B-A17B; its text model mixes Gated DeltaNet
linear-attention layers with full-attention ones, and each layer's MLP is a routed mixture of experts beside a gated
shared expert). Their dense siblings' pieces (tests/tiny_models/qwen.py: the Qwen tokenizer over the shared BPE, the
processor, the vision tower, the M-RoPE) are reused; the sizes of the experts come from transformers' own testers
(tests/models/qwen3_vl_moe/test_modeling_qwen3_vl_moe.py, tests/models/qwen3_5_moe/test_modeling_qwen3_5_moe.py).

Both are thinking models: their tokenizers carry <think> and </think> as ordinary added tokens (not special ones, as
in the real tokenizer_config.json's added_tokens), and their real chat templates open a thought in the generation
prompt (templates/qwen3_vl_moe.jinja, templates/qwen3_5_moe.jinja; each builder says where it comes from)."""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import _save, _token_ids, family_template
from tests.tiny_models.qwen import ROPE, THINK_TOKENS, VISION, _processor, _qwen_tokenizer, _vision_ids

# The routed experts of Qwen3VLMoeVisionText2TextModelTester: 8 experts of 16, 4 chosen per token, every layer sparse
# (decoder_sparse_step 1).
QWEN3_VL_EXPERTS = dict(num_experts=8, num_experts_per_tok=4, moe_intermediate_size=16, decoder_sparse_step=1)
# Qwen3_5MoeVisionText2TextModelTester's: 8 experts of 16, 2 chosen per token, and a shared expert of 36.
QWEN3_5_EXPERTS = dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=16,
                       shared_expert_intermediate_size=36)


def build_tiny_qwen3_vl_moe(folder: Path) -> Path:
    """A Qwen3-VL-MoE model (interleaved M-RoPE, DeepStack features from both vision layers, a routed mixture of
    experts in every text layer) with its processor and the Qwen3-VL Thinking chat template.

    Sizes from Qwen3VLMoeVisionText2TextModelTester: text hidden 32, 2 layers, 4 heads, 2 KV heads, head_dim 8,
    QWEN3_VL_EXPERTS; vision as Qwen3-VL's (qwen.VISION) with deepstack_visual_indexes [0, 1]. M-RoPE section [2, 1, 1]
    over head_dim 8's 4 frequency pairs (the tester's [16, 8, 8] is sized for a larger head). Untied embeddings (the
    tester ties them): a random model with tied ones mostly repeats the prompt's last token.

    Chat template: the real one of the Qwen3-VL Thinking checkpoints (Qwen3-VL-30B-A3B-Thinking and
    Qwen3-VL-235B-A22B-Thinking share it), as public GitHub copies quote it: Unsloth's Qwen3-VL-235B-A22B-Thinking GGUF
    carries it in a llama.cpp server log quoted in an ik_llama.cpp issue (there with one Unsloth edit, marked, that
    rewrites a split as a loop; not taken), and LM Studio presets and a llama-cpp-python agent quote it unedited. It
    has no enable_thinking switch: the generation prompt always opens a thought ("<|im_start|>assistant\\n<think>\\n").
    An earlier assistant turn is written without its thought (the template drops "...</think>" from the content of
    assistant turns before the last user turn); only turns after the last user query keep a <think> block.
    """
    import transformers as tf

    template = family_template("qwen3_vl_moe")
    tokenizer = _qwen_tokenizer(tf.Qwen2Tokenizer, template, THINK_TOKENS)
    processor = _processor(tokenizer, template)
    text = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=8, hidden_act="silu",
                max_position_embeddings=512, rope_parameters=ROPE, **QWEN3_VL_EXPERTS, **_token_ids(tokenizer))
    config = tf.Qwen3VLMoeConfig(text_config=text, vision_config=dict(VISION, deepstack_visual_indexes=[0, 1]),
                                 tie_word_embeddings=False, **_vision_ids(tokenizer))
    return _save(folder, tf.Qwen3VLMoeForConditionalGeneration, config, processor)


def build_tiny_qwen3_5_moe(folder: Path) -> Path:
    """A Qwen3.5-MoE model (one Gated DeltaNet linear-attention layer, then one full-attention layer, each with a
    routed mixture of experts and a gated shared expert) with its processor and Qwen3.5's large-checkpoint template.

    Sizes from Qwen3_5MoeVisionText2TextModelTester: text hidden 32, 2 layers, 4 heads, 2 KV heads, linear attention
    with conv kernel 2, 4 key heads and 8 value heads of 16, QWEN3_5_EXPERTS; vision as qwen.VISION. head_dim 32, as
    the dense Qwen3.5 tester's, not this tester's 8: with Qwen3.5's partial_rotary_factor 0.25, head_dim 8 rotates
    one frequency pair, too few for M-RoPE's three axes ([2, 1, 1] over 4 pairs here). Layers ordered as in the real
    checkpoints, linear first and a full-attention layer closing the block (the tester orders them [full, linear]).
    Untied embeddings, as for Qwen3-VL.

    Chat template: the real one of the large Qwen3.5 checkpoints (Qwen3.5-397B-A17B, 122B-A10B, ...): the
    tokenizer.chat_template of Qwen3.5-122B-A10B as llama.cpp's /props returns it, quoted in a public GitHub test. It
    is the small checkpoints' template (templates/qwen3_5.jinja) but for its thinking switch's default: thinking
    unless enable_thinking=False, so the generation prompt opens a thought ("<think>\\n"), and with
    enable_thinking=False it ends with an empty one ("<think>\\n\\n</think>\\n\\n"). Earlier assistant turns are written
    without their thought (reasoning_content, or "...</think>" in the content, is dropped before the last user turn).
    """
    import transformers as tf

    template = family_template("qwen3_5_moe")
    tokenizer = _qwen_tokenizer(tf.Qwen3_5Tokenizer, template, THINK_TOKENS)
    processor = _processor(tokenizer, template)
    text = dict(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, head_dim=32, hidden_act="silu", max_position_embeddings=512,
                rope_parameters=ROPE, layer_types=["linear_attention", "full_attention"], linear_conv_kernel_dim=2,
                linear_key_head_dim=16, linear_value_head_dim=16, linear_num_key_heads=4, linear_num_value_heads=8,
                **QWEN3_5_EXPERTS, **_token_ids(tokenizer))
    config = tf.Qwen3_5MoeConfig(text_config=text, vision_config=VISION, tie_word_embeddings=False,
                                 **_vision_ids(tokenizer))
    return _save(folder, tf.Qwen3_5MoeForConditionalGeneration, config, processor)
