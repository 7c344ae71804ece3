"""The tiny models whose vision towers transformers builds through timm: Gemma 3n (a MobileNetV5 encoder, plus an audio
tower, per-layer embeddings, AltUp and KV-sharing layers) and PerceptionLM (a Perception Encoder ViT, through
TimmWrapper). timm creates both towers from their config with pretrained weights off, so nothing is downloaded.
"""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import _save, _tokenizer, family_template



def _named_tokenizer(trained: list[str], named: dict[str, str], template: str, **special: str):
    """The shared BPE tokenizer (common._tokenizer) with `trained` special tokens among its first ids, then the
    `named` ones (tokenizer.<name> attributes, as the real processors read them) appended after the vocabulary in the
    dict's order; `special` overrides bos/eos/pad tokens by name."""
    from transformers import PreTrainedTokenizerFast

    base = _tokenizer(trained, template=None)
    tokens = {key: getattr(base, key) for key in ("bos_token", "eos_token", "pad_token", "unk_token")}
    tokens.update(special)
    return PreTrainedTokenizerFast(tokenizer_object=base.backend_tokenizer, extra_special_tokens=named,
                                   chat_template=template, **tokens)


# ---- Gemma 3n -------------------------------------------------------------------------------------------------

# MobileNetV5 cut down to one block per stage (in the last two, an inverted-residual block, a multi-query attention
# block and the inverted-residual block a stage ends with, as in the real one), 8 to 16 channels; its multi-scale
# fusion adapter (2048 output channels, fixed by timm) pools the last two stages of a 64 px image to 2x2, so an image
# is 4 soft tokens.
GEMMA3N_IMAGE = 64
GEMMA3N_SOFT_TOKENS = 4
GEMMA3N_BLOCKS = [["er_r1_k3_s2_e4_c8"], ["uir_r1_a3_k5_s2_e6_c8"],
                  ["uir_r1_a5_k5_s2_e6_c16", "mqa_r1_k3_h2_v2_s1_d8_c16", "uir_r1_a0_k0_s1_e2_c16"],
                  ["uir_r1_a5_k5_s2_e6_c16", "mqa_r1_k3_h2_s1_d8_c16", "uir_r1_a0_k0_s1_e2_c16"]]


def build_tiny_gemma3n(folder: Path) -> Path:
    """A Gemma 3n model (Gemma3nForConditionalGeneration) with its processor (Gemma3nProcessor: a SigLIP image
    processor, the Gemma 3n audio feature extractor, the tokenizer), saved into `folder`.

    Text sizes from transformers' Gemma3nTextModelTester (tests/models/gemma3n/test_modeling_gemma3n.py): hidden 16,
    per-layer input hidden 16, 4 layers of which the last 2 share the KV of the first two (layer types full, sliding,
    full, sliding), 2 heads, 2 KV heads, head_dim 8, AltUp over 2 inputs, intermediate 21 (LAuReL rank and activation
    sparsity left at their defaults, as there); the sliding window is 8 tokens here, so that the tests' prompts
    cross it. Audio tower from its Gemma3nAudioModelTester (input features
    32, hidden 32, 4 heads, 2 conformer layers, subsampling channels 16 and 8, kernel 3, chunk 4, left context 5);
    never fed, but the processor's feature extractor must load. The vision tester there is skipped (a SigLIP
    leftover), so the MobileNetV5 tower is cut down here (GEMMA3N_BLOCKS); images are 64 px (768 real), 4 soft tokens
    each (256 real). Token layout as the real checkpoints: the text vocabulary, then the vision tokens
    (<end_of_image>, <image_soft_token>: the vision vocab_offset), then the audio ones (<end_of_audio>,
    <audio_soft_token>), the per-layer vocabulary ending where the vision one starts; the vision and audio
    vocabularies hold 2 tokens each here (128 real).

    Chat template: the real one (tests/tiny_models/templates/gemma3n.jinja), copied from _CHAT_TEMPLATE of
    transformers' src/transformers/models/gemma3n/convert_gemma3n_weights.py (huggingface/transformers), the template
    the google/gemma-3n-E*-it checkpoints carry (unslothai/unsloth's chat_templates.py holds the same text, printed
    from the tokenizer).
    """
    import transformers as tf
    from timm.models._efficientnet_builder import decode_arch_def

    named = {"boi_token": "<start_of_image>", "boa_token": "<start_of_audio>",  # in the text vocabulary
             "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>",  # the vision vocabulary
             "eoa_token": "<end_of_audio>", "audio_token": "<audio_soft_token>"}  # the audio vocabulary
    tokenizer = _named_tokenizer(["<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<start_of_audio>"],
                                 named, family_template("gemma3n"))
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in named.items()}
    vision_offset, audio_offset = ids["eoi_token"], ids["eoa_token"]
    assert ids["image_token"] == vision_offset + 1 and ids["audio_token"] == audio_offset + 1 == len(tokenizer) - 1

    image_processor = tf.SiglipImageProcessor(size={"height": GEMMA3N_IMAGE, "width": GEMMA3N_IMAGE},
                                              image_mean=[0.5] * 3, image_std=[0.5] * 3, do_normalize=False,
                                              resample=2)  # bilinear, as the real processor
    feature_extractor = tf.Gemma3nAudioFeatureExtractor(feature_size=32, sampling_rate=16_000, dither=0.0)
    processor = tf.Gemma3nProcessor(feature_extractor=feature_extractor, image_processor=image_processor,
                                    tokenizer=tokenizer, image_seq_length=GEMMA3N_SOFT_TOKENS, audio_seq_length=4,
                                    chat_template=family_template("gemma3n"))

    text = tf.Gemma3nTextConfig(
        vocab_size=len(tokenizer), vocab_size_per_layer_input=vision_offset, hidden_size=16,
        hidden_size_per_layer_input=16, intermediate_size=21, num_hidden_layers=4, num_kv_shared_layers=2,
        layer_types=["full_attention", "sliding_attention", "full_attention", "sliding_attention"],
        num_attention_heads=2, num_key_value_heads=2, head_dim=8, altup_num_inputs=2, sliding_window=8,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=[tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids("<end_of_turn>")])  # as the -it ones
    vision = tf.Gemma3nVisionConfig(
        architecture="mobilenetv5_300m_enc", hidden_size=2048, vocab_size=2, vocab_offset=vision_offset,
        model_args={"block_args": decode_arch_def(GEMMA3N_BLOCKS), "stem_size": 8,
                    "msfa_output_resolution": int(GEMMA3N_SOFT_TOKENS ** 0.5)})
    audio = tf.Gemma3nAudioConfig(
        vocab_size=2, vocab_offset=audio_offset, input_feat_size=32, hidden_size=32, conf_num_attention_heads=4,
        conf_num_hidden_layers=2, sscp_conv_channel_size=[16, 8], conf_conv_kernel_size=3,
        conf_attention_chunk_size=4, conf_attention_context_left=5)
    config = tf.Gemma3nConfig(
        text_config=text, vision_config=vision, audio_config=audio, vision_soft_tokens_per_image=GEMMA3N_SOFT_TOKENS,
        audio_soft_tokens_per_image=4, boi_token_id=ids["boi_token"], eoi_token_id=ids["eoi_token"],
        image_token_id=ids["image_token"], boa_token_id=ids["boa_token"], eoa_token_id=ids["eoa_token"],
        audio_token_id=ids["audio_token"])
    return _save(folder, _gemma3n_model, config, processor)


def _gemma3n_model(config):
    """Gemma3nForConditionalGeneration(config), its config's vision block arguments kept as given: timm's block
    builder edits the block dicts it is handed (pops block_type, adds layer classes), which would leave the config
    unsaveable."""
    import copy

    from transformers import Gemma3nForConditionalGeneration

    model_args = copy.deepcopy(config.vision_config.model_args)
    model = Gemma3nForConditionalGeneration(config)
    model.config.vision_config.model_args = model_args
    return model


# ---- PerceptionLM ---------------------------------------------------------------------------------------------

PLM_TILE = 56  # the tile side: 4x4 patches of 14 px, pooled 2x2 -> 4 tokens a tile


def build_tiny_perception_lm(folder: Path) -> Path:
    """A PerceptionLM model (PerceptionLMForConditionalGeneration: a Perception Encoder ViT through TimmWrapper, a
    Llama text model) with its processor (PerceptionLMProcessor: image and video processors, the tokenizer).

    Sizes from transformers' PerceptionLMVisionText2TextModelTester (tests/models/perception_lm/
    test_modeling_perception_lm.py): text Llama hidden 32, 2 layers, 4 heads, intermediate 37; vision
    vit_pe_core_large_patch14_336 with width 64, depth 2, class token, no post-transformer norm, layer-scale init
    0.1, global_pool "". Tiles of 56 px (the tester's 14 px image is one patch), patch 14, pooled 2x2 as the real
    checkpoints (processor and projector pooling ratio 2; the tester pools 1): 4 tokens a tile. Images are tiled as
    the real processor does ("thumb+tile": a thumbnail and up to 6 tiles here, 36 real), so images of different
    shapes carry different numbers of tiles (Family.ragged_tiles): the tests' 32x32 image 5, their other ones 7.
    Special tokens as the real tokenizer: <|begin_of_text|> (bos), <|eot_id|> (eos), <|end_of_text|> (pad), <|image|>,
    <|video|>, <|start_header_id|>, <|end_header_id|>.

    Chat template: the real one (tests/tiny_models/templates/perception_lm.jinja), CHAT_TEMPLATE of transformers'
    src/transformers/models/perception_lm/convert_perception_lm_weights_to_hf.py (huggingface/transformers), which
    the converted facebook/Perception-LM-* checkpoints carry.
    """
    import transformers as tf

    named = {"image_token": "<|image|>", "video_token": "<|video|>"}
    tokenizer = _named_tokenizer(["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                                  "<|eot_id|>"], named, family_template("perception_lm"),
                                 bos_token="<|begin_of_text|>", eos_token="<|eot_id|>", pad_token="<|end_of_text|>")
    size = {"height": PLM_TILE, "width": PLM_TILE}
    image_processor = tf.PerceptionLMImageProcessor(vision_input_type="thumb+tile", tile_size=PLM_TILE,
                                                    max_num_tiles=6, size=size, image_mean=[0.5] * 3,
                                                    image_std=[0.5] * 3)
    video_processor = tf.PerceptionLMVideoProcessor(size=size)
    processor = tf.PerceptionLMProcessor(video_processor=video_processor, image_processor=image_processor,
                                         tokenizer=tokenizer, patch_size=14, pooling_ratio=2,
                                         chat_template=family_template("perception_lm"))
    text = dict(model_type="llama", vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37,
                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
                tie_word_embeddings=False, bos_token_id=tokenizer.bos_token_id,
                eos_token_id=[tokenizer.convert_tokens_to_ids("<|end_of_text|>"), tokenizer.eos_token_id],
                pad_token_id=tokenizer.pad_token_id)
    vision = tf.TimmWrapperConfig(
        architecture="vit_pe_core_large_patch14_336", do_pooling=False,
        model_args={"embed_dim": 64, "depth": 2, "img_size": [PLM_TILE, PLM_TILE], "global_pool": "",
                    "use_post_transformer_norm": False, "init_values": 0.1,
                    "ref_feat_shape": [PLM_TILE // 14, PLM_TILE // 14]})
    config = tf.PerceptionLMConfig(text_config=text, vision_config=vision, vision_use_cls_token=True,
                                   projector_pooling_ratio=2, image_token_id=tokenizer.image_token_id,
                                   video_token_id=tokenizer.video_token_id, tie_word_embeddings=False)
    return _save(folder, tf.PerceptionLMForConditionalGeneration, config, processor)
