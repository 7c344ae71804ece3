"""The tiny models of Mistral 3 (Mistral Small 3.1/3.2: a Pixtral vision tower over a Mistral text model), Aya Vision
(a SigLIP tower with pixel shuffle over a Cohere2 text model that mixes sliding-window and global attention layers) and
LFM2-VL (a SigLIP2 NaFlex tower over an LFM2 text model that mixes short-convolution and attention layers).

Sizes come from transformers' own testers of each family (tests/models/<family>/test_modeling_<family>.py in the
huggingface/transformers repository: Mistral3VisionText2TextModelTester, AyaVisionVisionText2TextModelTester,
Lfm2VlModelTester); each builder says where it departs from them and why. The tokenizer is a byte-level BPE (vocab
~400) trained on common.SENTENCES, carrying each family's own BOS / EOS / padding names and the special tokens its
real processor looks for. Chat templates live in templates/<model_type>.jinja; each builder says where its comes from.
"""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import _save, _token_ids, _tokenizer, family_template


# Mistral's control tokens (its tekken vocabulary has them at fixed ids; the processor and template use these).
MISTRAL_TOKENS = ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[IMG]", "[IMG_BREAK]", "[IMG_END]"]
# Aya Vision's: Cohere's turn markers and the image markers of AyaVisionProcessor. Each tile of an image is announced
# by one token, "TILE_<n>" for the n-th crop and "TILE_GLOBAL" for the thumbnail (one token each in the real
# vocabulary: the processor counts one token per tile label).
AYA_MAX_PATCHES = 3  # crops per image at most, the thumbnail included (the real preprocessor: 12)
AYA_TOKENS = ["<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>",
              "<|SYSTEM_TOKEN|>", "<image>", "<|START_OF_IMG|>", "<|END_OF_IMG|>", "<|IMG_PATCH|>",
              "<|IMG_LINE_BREAK|>", "TILE", "TILE_GLOBAL", *[f"TILE_{i}" for i in range(1, AYA_MAX_PATCHES)]]
# LFM2-VL's: ChatML turn markers, the image token and the markers around an image and its tiles.
LFM2_VL_MAX_TILES = 4
LFM2_VL_TOKENS = ["<|im_start|>", "<|im_end|>", "<image>", "<|image_start|>", "<|image_end|>", "<|img_thumbnail|>",
                  *[f"<|img_row_{r}_col_{c}|>" for r in range(1, LFM2_VL_MAX_TILES + 1)
                    for c in range(1, LFM2_VL_MAX_TILES + 1)]]


# ---- Mistral 3 (Mistral Small 3.1 / 3.2) --------------------------------------------------------------------------

def build_tiny_mistral3(folder: Path) -> Path:
    """A Mistral3ForConditionalGeneration (Pixtral tower, 2x2 patch merger, Mistral text) with its PixtralProcessor.

    Sizes from Mistral3VisionText2TextModelTester: text hidden 32, intermediate 37, 2 layers, 4 heads, 2 KV heads,
    rope theta 1e9, no sliding window (as Mistral Small 3.1's text config); Pixtral hidden 32, intermediate 37,
    2 layers, 4 heads, patch 6; spatial merge 2. Departures: the vision image_size is 36 (the tester's 30 is no
    multiple of patch x merge = 12; the real checkpoint's image_size equals the processor's longest edge, 1540 = 55 x
    28), so images are resized to a longest edge of 36 and their sides rounded up to multiples of 12: a 3x3 grid of
    merged patches (3 [IMG] per row, each row closed by [IMG_BREAK], the last by [IMG_END]), a narrower one for a
    portrait image; untied embeddings (random tied ones only ever repeat the last prompt token).
    Chat template: the real one of mistralai/Mistral-Small-3.1-24B-Instruct-2503, from ggml-org/llama.cpp
    models/templates/mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja (verbatim): a system prompt (or its dated
    default), strictly alternating user/assistant turns, [IMG] per image part.
    """
    from transformers import (MistralConfig, Mistral3Config, Mistral3ForConditionalGeneration, PixtralImageProcessor,
                              PixtralProcessor, PixtralVisionConfig)

    template = family_template("mistral3")
    tokenizer = _tokenizer(MISTRAL_TOKENS, template, bos="<s>", eos="</s>", pad="<pad>", unk="<unk>")
    image_processor = PixtralImageProcessor(size={"longest_edge": 36}, patch_size={"height": 6, "width": 6})
    processor = PixtralProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=6,
                                 spatial_merge_size=2, chat_template=template)
    text = MistralConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         rope_parameters={"rope_type": "default", "rope_theta": 1000000000.0}, sliding_window=None,
                         tie_word_embeddings=False, **_token_ids(tokenizer))
    vision = PixtralVisionConfig(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
                                 image_size=36, patch_size=6)
    config = Mistral3Config(text_config=text, vision_config=vision, spatial_merge_size=2, vision_feature_layer=-1,
                            image_token_index=tokenizer.convert_tokens_to_ids("[IMG]"), tie_word_embeddings=False)
    return _save(folder, Mistral3ForConditionalGeneration, config, processor)


# ---- Aya Vision ---------------------------------------------------------------------------------------------------

def build_tiny_aya_vision(folder: Path) -> Path:
    """An AyaVisionForConditionalGeneration (SigLIP tower, 2x2 pixel shuffle, Cohere2 text) with its AyaVisionProcessor.

    Sizes from AyaVisionVisionText2TextModelTester: SigLIP hidden 32, intermediate 128, 2 layers, 4 heads, image 64,
    patch 8, no head; downsample factor 2 (16 <|IMG_PATCH|> per crop); Cohere2 intermediate 37, 2 layers, 4 heads.
    Departures: Cohere2 hidden 32 (the tester's 128 makes a 1.3 MB folder) and untied embeddings (random tied ones
    only ever repeat the last prompt token, <|CHATBOT_TOKEN|>, so every answer decodes empty). Cohere2's two layers
    are one sliding-window layer and one global layer (the real 3-sliding-1-global pattern has both kinds; the
    default pattern would make both sliding) with a window of 8 tokens, so that every test prompt crosses it. The
    processor splits each image into up to AYA_MAX_PATCHES crops of 64 px (a thumbnail added whenever there is more
    than one), as the real one does with up to 12 crops of 364 px.
    Chat template: written after the model card (Cohere's turn tokens as in Aya Expanse's public template and vLLM's
    Aya Vision example prompt "<|START_OF_TURN_TOKEN|><|USER_TOKEN|><image>{question}<|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"); no public copy of aya-vision's own chat_template.json was found.
    """
    from transformers import (AyaVisionConfig, AyaVisionForConditionalGeneration, AyaVisionProcessor, Cohere2Config,
                              GotOcr2ImageProcessor, SiglipVisionConfig)

    template = family_template("aya_vision")
    tokenizer = _tokenizer(AYA_TOKENS, template, bos="<BOS_TOKEN>", eos="<|END_OF_TURN_TOKEN|>", pad="<PAD>",
                           unk="<UNK>")
    image_processor = GotOcr2ImageProcessor(size={"height": 64, "width": 64}, crop_to_patches=True, min_patches=1,
                                            max_patches=AYA_MAX_PATCHES)
    processor = AyaVisionProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=8, img_size=64,
                                   downsample_factor=2, chat_template=template)
    text = Cohere2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
                         layer_types=["sliding_attention", "full_attention"], sliding_window=8,
                         tie_word_embeddings=False, **_token_ids(tokenizer))
    vision = SiglipVisionConfig(hidden_size=32, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                image_size=64, patch_size=8, vision_use_head=False)
    config = AyaVisionConfig(text_config=text, vision_config=vision, downsample_factor=2, vision_feature_layer=-1,
                             vision_feature_select_strategy="full",
                             image_token_index=tokenizer.convert_tokens_to_ids("<|IMG_PATCH|>"),
                             tie_word_embeddings=False, **_token_ids(tokenizer))
    return _save(folder, AyaVisionForConditionalGeneration, config, processor)


# ---- LFM2-VL ------------------------------------------------------------------------------------------------------

def build_tiny_lfm2_vl(folder: Path) -> Path:
    """An Lfm2VlForConditionalGeneration (SigLIP2 NaFlex tower, pixel unshuffle, LFM2 text) with its Lfm2VlProcessor.

    Sizes from Lfm2VlModelTester: SigLIP2 hidden 32, intermediate 37, 2 layers, 2 heads, patch 4, 16 position
    patches; LFM2 hidden 32, intermediate 37, 2 layers (layer 0 attention, layer 1 short convolution with a 3-token
    cache), 4 heads, 2 KV heads, rope theta 1e6, block_multiple_of 2; downsample factor 4, projector 32. Departure:
    untied embeddings (random tied ones only ever repeat the prompt's last token, a newline). The image processor
    keeps the real layout at a tiny scale (encoder patch 4, downsample 4, tiles of 32 px = 4 tokens, 1 to 4 image
    tokens for a whole image, 2 to LFM2_VL_MAX_TILES tiles plus a thumbnail for an image too large for one), so
    larger test images are split into tiles, smaller ones are not; pixel rows are padded to 64 patches with a
    pixel_attention_mask, and spatial_shapes gives each row's patch grid.
    Chat template: the real one of LiquidAI's LFM2-VL checkpoints (ChatML with "<image>" per image part), as stored in
    onnx-community/LFM2-VL-3B-ONNX's tokenizer_config.json.
    """
    from transformers import (Lfm2Config, Lfm2VlConfig, Lfm2VlForConditionalGeneration, Lfm2VlImageProcessor,
                              Lfm2VlProcessor, Siglip2VisionConfig)

    template = family_template("lfm2_vl")
    named = dict(image_token="<image>", image_start_token="<|image_start|>", image_end_token="<|image_end|>",
                 image_thumbnail_token="<|img_thumbnail|>")
    tokenizer = _tokenizer([t for t in LFM2_VL_TOKENS if t != "<|im_end|>"], template, bos="<|startoftext|>",
                           eos="<|im_end|>", pad="<|pad|>", unk="<|unk|>", named=named)
    image_processor = Lfm2VlImageProcessor(encoder_patch_size=4, downsample_factor=4, tile_size=32,
                                           min_image_tokens=1, max_image_tokens=4, min_tiles=2,
                                           max_tiles=LFM2_VL_MAX_TILES, use_thumbnail=True)
    processor = Lfm2VlProcessor(image_processor=image_processor, tokenizer=tokenizer, chat_template=template)
    text = Lfm2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                      rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, conv_bias=False,
                      conv_L_cache=3, block_multiple_of=2, full_attn_idxs=[0], tie_word_embeddings=False,
                      **_token_ids(tokenizer))
    vision = Siglip2VisionConfig(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=2,
                                 num_channels=3, num_patches=16, patch_size=4, hidden_act="gelu_pytorch_tanh",
                                 layer_norm_eps=1e-6, attention_dropout=0.0)
    config = Lfm2VlConfig(text_config=text, vision_config=vision, downsample_factor=4, projector_hidden_size=32,
                          image_token_id=tokenizer.convert_tokens_to_ids("<image>"), tie_word_embeddings=False)
    return _save(folder, Lfm2VlForConditionalGeneration, config, processor)
