"""The tiny models of the GLM-V family: GLM-4.1V-9B-Thinking (glm4v: a GLM-4 dense text model), GLM-4.5V (glm4v_moe:
its text model a GLM-4.5-Air style mixture of experts) and GLM-4.6V (glm46v: transformers' GLM-4.6V class, whose text
and vision models are whatever its config names; by default, and in its tester, GLM-4.1V's).

All three share GLM-4.1V's vision tower (patches with 2D rotary positions and interpolated learned position
embeddings, a conv downsample and a gated merger) and its M-RoPE text positions; their processors give every image
`<|begin_of_image|>` + one `<|image|>` per merged patch + `<|end_of_image|>` (the template writes the three markers;
the processor repeats `<|image|>`), with `image_grid_thw` and `mm_token_type_ids` beside the input ids.

Sizes come from transformers' own testers (tests/models/glm4v/test_modeling_glm4v.py,
glm4v_moe/test_modeling_glm4v_moe.py and glm46v/test_modeling_glm46v.py in the huggingface/transformers repository,
their VisionText2TextModelTester); each builder says where it departs from them. The tokenizer is a byte-level BPE
(vocab ~400) trained on common.SENTENCES, wrapped as GLM's checkpoints wrap theirs (a tokenizers-backed fast tokenizer
without BOS, with `<|endoftext|>` padding and ending), carrying GLM's special tokens and its thought markers as each
real tokenizer adds them. Chat templates live in templates/<model_type>.jinja; each builder says where its comes from.
"""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import SENTENCES, _save, family_template

# GLM-4's control tokens (ids 151329-151342 in the real vocabulary), all special tokens there.
GLM4_TOKENS = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
               "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>",
               "<|end_of_video|>"]
# GLM-4.5's further control tokens (GLM-4.5V's and GLM-4.6V's vocabulary: 151343-151349), its tool-call markers and
# "/nothink" (151352-151360, between the thought markers and the box markers; <|image|> and <|video|> follow at
# 151363-151364).
GLM45_TOKENS = ["<|begin_of_audio|>", "<|end_of_audio|>", "<|begin_of_transcription|>", "<|end_of_transcription|>",
                "<|code_prefix|>", "<|code_middle|>", "<|code_suffix|>"]
GLM45_TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<arg_key>", "</arg_key>",
                     "<arg_value>", "</arg_value>", "/nothink"]
IMAGE_TOKENS = ["<|image|>", "<|video|>"]
# The thought markers. GLM-4.1V-Thinking answers "<think>...</think><answer>...<|begin_of_box|>...<|end_of_box|>
# </answer>"; GLM-4.5V and GLM-4.6V "<think>...</think>" then the answer, its final value boxed.
GLM41V_THOUGHT = ["<think>", "</think>", "<answer>", "</answer>", "<|begin_of_box|>", "<|end_of_box|>"]
GLM45V_THOUGHT = ["<think>", "</think>", "<|begin_of_box|>", "<|end_of_box|>"]
# What ends an answer in GLM's generation configs: <|endoftext|>, <|user|> and <|observation|>.
STOP_TOKENS = ["<|endoftext|>", "<|user|>", "<|observation|>"]


def _glm_tokenizer(special: list[str], added: list[str], template: str, *, added_special: bool):
    """A byte-level BPE (vocab ~400) trained on SENTENCES, wrapped as GLM's fast tokenizer: no BOS, <|endoftext|> ends
    and pads, `special` are special tokens; `added` (the thought markers and the like) are added tokens, special or not
    as in the real tokenizer (`added_special`)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=[*special, *added],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(SENTENCES, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                        extra_special_tokens=[t for t in special if t != "<|endoftext|>"],
                                        chat_template=template)
    if added_special:
        tokenizer.add_special_tokens({"additional_special_tokens": list(added)},
                                     replace_extra_special_tokens=False)
    else:
        tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in added])
    return tokenizer


def _ids(tokenizer) -> dict:
    """The ids of the image and video markers, as the model config names them."""
    ids = tokenizer.convert_tokens_to_ids
    return {"image_token_id": ids("<|image|>"), "video_token_id": ids("<|video|>"),
            "image_start_token_id": ids("<|begin_of_image|>"), "image_end_token_id": ids("<|end_of_image|>"),
            "video_start_token_id": ids("<|begin_of_video|>"), "video_end_token_id": ids("<|end_of_video|>")}


def _text_ids(tokenizer) -> dict:
    """The text config's: GLM's stop tokens end an answer (its generation config's eos_token_id), <|endoftext|> pads."""
    return {"eos_token_id": [tokenizer.convert_tokens_to_ids(t) for t in STOP_TOKENS],
            "pad_token_id": tokenizer.pad_token_id}


# The testers' vision tower (all three): depth 2, hidden 48, intermediate 22, patch 14, no spatial merging (their
# spatial_merge_size 1), temporal patches of 2, the default 12 heads. Its learned position table is 4x4 (image_size
# 56; the default 336 makes a 24x24 table: the tower interpolates it to each image's grid either way).
VISION = dict(depth=2, hidden_act="silu", hidden_size=48, out_hidden_size=32, intermediate_size=22, patch_size=14,
              spatial_merge_size=1, temporal_patch_size=2, image_size=56)
# M-RoPE over the 4 rotary frequency pairs of head_dim 16 x partial_rotary_factor 0.5 (the real checkpoints rotate
# half of each head, as here): the testers' section [2, 1, 1].
ROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1], "partial_rotary_factor": 0.5}
# Text sizes beside the testers' (hidden 16, intermediate 22, 2 layers, 2 heads, 1 KV head): hidden 32 as every tiny
# model here, so head_dim 16, half of it rotary.
TEXT = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
            hidden_act="silu", max_position_embeddings=512, rope_parameters=ROPE)


def _processor(processor_class, image_class, video_class, tokenizer, template: str):
    """GLM-4.1V's image and video processors at the testers' patches (14, no merging, temporal 2), images resized to
    28x28 .. 56x56 pixels (2x2 to 4x4 image tokens; smart_resize counts the temporal pair in its pixel bounds)."""
    patches = dict(patch_size=14, merge_size=1, temporal_patch_size=2)
    size = {"shortest_edge": 2 * 28 * 28, "longest_edge": 2 * 56 * 56}
    return processor_class(image_processor=image_class(size=size, **patches),
                           video_processor=video_class(size=size, **patches), tokenizer=tokenizer,
                           chat_template=template)


def build_tiny_glm4v(folder: Path) -> Path:
    """A GLM-4.1V-9B-Thinking model (Glm4vForConditionalGeneration: GLM-4 dense text model) with its Glm4vProcessor.

    Sizes from Glm4vVisionText2TextModelTester: vision as VISION; text 2 layers, 2 heads, 1 KV head, mrope_section
    [2, 1, 1], but hidden 32 and intermediate 64 (the tester: 16 and 22) with half of each head rotary, as the real
    config (partial_rotary_factor 0.5). Untied embeddings, as the real checkpoint.

    Chat template: the real one of GLM-4.1V-9B-Thinking (its chat_template at revision 3c1471e5, quoted in a public
    GitHub record of official chat templates; the record's sha256 of the JSON-encoded template, 5232dbe7..., matches
    this file's text). It has no thinking switch: the generation prompt is "<|assistant|>\\n" and the model opens its
    own "<think>"; an earlier assistant turn is written as it is (a thought in it stays). It writes a system message's
    and an assistant turn's content as is (strings, not lists of parts).

    Thought markers: <think>, </think>, <answer>, </answer>, <|begin_of_box|>, <|end_of_box|>, added tokens that are
    not special (transformers' integration test of the real model decodes with skip_special_tokens=True and keeps
    "<think>").
    """
    import transformers as tf

    template = family_template("glm4v")
    tokenizer = _glm_tokenizer([*GLM4_TOKENS, *IMAGE_TOKENS], GLM41V_THOUGHT, template, added_special=False)
    processor = _processor(tf.Glm4vProcessor, tf.Glm4vImageProcessor, tf.Glm4vVideoProcessor, tokenizer, template)
    text = dict(TEXT, vocab_size=len(tokenizer), **_text_ids(tokenizer))
    config = tf.Glm4vConfig(text_config=text, vision_config=VISION, tie_word_embeddings=False, **_ids(tokenizer))
    return _save(folder, tf.Glm4vForConditionalGeneration, config, processor)


def build_tiny_glm4v_moe(folder: Path) -> Path:
    """A GLM-4.5V model (Glm4vMoeForConditionalGeneration: a mixture-of-experts text model) with Glm4vProcessor.

    Sizes from Glm4vMoeVisionText2TextModelTester: vision as VISION; text 2 layers, 2 heads, 1 KV head, one shared
    expert, one expert group; but hidden 32, intermediate 64, experts of 16, 4 routed experts of which each token
    takes 2 (the tester: 8 experts, all 8 taken), the first layer dense and the second a mixture of experts (the
    real config's first_k_dense_replace 1), query/key/value biases and half of each head rotary, as the real config.

    Chat template: GLM-V's, as the GLM-OCR checkpoint (Glm46VProcessor) carries it, quoted verbatim in a public
    GitHub test file; GLM-4.5V's own copy was not found in public sources. It is GLM-4.5's chat format with image
    parts, and has a thinking switch, enable_thinking, on unless set False: the generation prompt is
    "<|assistant|>\\n" (the model opens its own "<think>"), or with enable_thinking=False "<|assistant|>\\n
    <think></think>\\n" after a user turn ending "/nothink". An earlier assistant turn before the last user turn is
    written with an empty thought ("<think></think>" then its answer): its thought is dropped.

    Thought markers: <think>, </think>, <|begin_of_box|>, <|end_of_box|>, added tokens that are not special
    (transformers' integration test of the real GLM-4.5V decodes with skip_special_tokens=True and keeps "<think>"),
    as the tool-call markers and "/nothink" that sit beside them in the vocabulary.
    """
    import transformers as tf

    template = family_template("glm4v_moe")
    tokenizer = _glm_tokenizer([*GLM4_TOKENS, *GLM45_TOKENS, *IMAGE_TOKENS], [*GLM45V_THOUGHT, *GLM45_TOOL_TOKENS],
                               template, added_special=False)
    processor = _processor(tf.Glm4vProcessor, tf.Glm4vImageProcessor, tf.Glm4vVideoProcessor, tokenizer, template)
    text = dict(TEXT, vocab_size=len(tokenizer), moe_intermediate_size=16, n_routed_experts=4, num_experts_per_tok=2,
                n_shared_experts=1, n_group=1, topk_group=1, first_k_dense_replace=1, norm_topk_prob=True,
                attention_bias=True, head_dim=16, **_text_ids(tokenizer))
    config = tf.Glm4vMoeConfig(text_config=text, vision_config=VISION, tie_word_embeddings=False, **_ids(tokenizer))
    return _save(folder, tf.Glm4vMoeForConditionalGeneration, config, processor)


def build_tiny_glm46v(folder: Path) -> Path:
    """A GLM-4.6V model as transformers 5.23 builds its model type glm46v (Glm46VForConditionalGeneration: GLM-4.1V's
    model whose text and vision models come from their configs' model types; by default, and in its tester,
    glm4v_text and glm4v_vision) with its Glm46VProcessor.

    Sizes from Glm46VVisionText2TextModelTester: as GLM-4.1V's (the same tester values), text hidden 32 and
    intermediate 64 for the same reason.

    Chat template: GLM-V's, as the GLM-OCR checkpoint (which uses Glm46VProcessor) carries it, quoted verbatim in a
    public GitHub test file; GLM-4.6V's own copy was not found, but a public test of the GLM-4.6V-FP8 checkpoint
    asserts what this one does (the prompt starts "[gMASK]<sop>", writes each image as
    "<|begin_of_image|><|image|><|end_of_image|>", and with enable_thinking=False carries "/nothink" and
    "<think></think>"). Its thinking switch and its earlier assistant turns are as GLM-4.5V's (build_tiny_glm4v_moe).

    Thought markers: <think>, </think>, <|begin_of_box|>, <|end_of_box|>, special tokens here (with the tool-call
    markers and "/nothink"): GLM-OCR's tokenizer config (transformers 5 form, the GLM-4.6V processor) lists them among
    its extra special tokens; GLM-4.6V's own tokenizer config was not found.
    """
    import transformers as tf

    template = family_template("glm46v")
    tokenizer = _glm_tokenizer([*GLM4_TOKENS, *GLM45_TOKENS, *IMAGE_TOKENS], [*GLM45V_THOUGHT, *GLM45_TOOL_TOKENS],
                               template, added_special=True)
    processor = _processor(tf.Glm46VProcessor, tf.Glm46VImageProcessor, tf.Glm46VVideoProcessor, tokenizer, template)
    text = dict(TEXT, model_type="glm4v_text", vocab_size=len(tokenizer), **_text_ids(tokenizer))
    config = tf.Glm46VConfig(text_config=text, vision_config=dict(VISION, model_type="glm4v_vision"),
                             tie_word_embeddings=False, **_ids(tokenizer))
    return _save(folder, tf.Glm46VForConditionalGeneration, config, processor)
