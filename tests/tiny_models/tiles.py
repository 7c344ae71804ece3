"""The tiny models of the families whose images become tiles or resampled queries: InternVL (the -hf ports,
GotOcr2-style tiles and a thumbnail, Qwen3 text), LLaVA-OneVision (any-resolution tiles over a grid of pinpoints,
SigLIP tower, Qwen2 text) and Idefics2 (perceiver resampler, Mistral text). Sizes come from transformers' own
ModelTester of each family, the special tokens and image-token layout are the real processors', and each chat
template is the family's real one (templates/<model_type>.jinja; each builder says where it comes from)."""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import BOS, EOS, PAD, UNK, _save, _token_ids, _tokenizer, family_template

CHATML = ["<|im_start|>", "<|im_end|>"]


# ---- InternVL -------------------------------------------------------------------------------------------------

INTERNVL_TOKENS = {"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
                   "video_token": "<video>"}


def build_tiny_internvl(folder: Path) -> Path:
    """An InternVL model as the -hf ports ship it (OpenGVLab/InternVL3_5-1B-HF): an InternViT tower, pixel shuffle
    (downsample 0.5) and an MLP projector over a Qwen3 text model, with the InternVLProcessor, a GotOcr2 image processor
    and the InternVL video processor. Each image becomes tiles of 32 px (1 to 12, and a thumbnail when there are
    several: the processor always crops to patches) of 16 <IMG_CONTEXT> tokens each, between <img> and </img>.

    Sizes: vision tower as InternVLVisionText2TextModelTester (tests/models/internvl/test_modeling_internvl.py: hidden
    32, 2 layers, 4 heads, intermediate 128, patch 4, quick_gelu) with 32 px tiles; text a Qwen3 of hidden 32, 2
    layers, 4 heads, 2 KV heads (head_dim 8). Tiles: min_patches 1, max_patches 12, as the real checkpoints.
    Chat template: the real one (templates/internvl.jinja), `chat_template` of transformers' InternVL conversion script
    (src/transformers/models/internvl/convert_internvl_weights_to_hf.py), which the -hf checkpoints carry."""
    import transformers as tf

    tokenizer = _tokenizer(CHATML, family_template("internvl"), bos=None, eos="<|im_end|>", named=INTERNVL_TOKENS)
    tile = 32
    image_processor = tf.GotOcr2ImageProcessor(size={"height": tile, "width": tile}, crop_to_patches=True,
                                               min_patches=1, max_patches=12, image_mean=[0.485, 0.456, 0.406],
                                               image_std=[0.229, 0.224, 0.225])
    video_processor = tf.InternVLVideoProcessor(size={"height": tile, "width": tile},
                                                image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])
    processor = tf.InternVLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                     video_processor=video_processor, image_seq_length=16,
                                     chat_template=family_template("internvl"))
    vision = tf.InternVLVisionConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=128, image_size=tile, patch_size=4, hidden_act="quick_gelu",
                                     use_absolute_position_embeddings=True)
    text = tf.Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=4096,
                          tie_word_embeddings=False, **_token_ids(tokenizer))
    config = tf.InternVLConfig(vision_config=vision, text_config=text, image_seq_length=16, downsample_ratio=0.5,
                               image_token_id=tokenizer.context_image_token_id, tie_word_embeddings=False,
                               vision_feature_layer=-1, vision_feature_select_strategy="default")
    return _save(folder, tf.InternVLForConditionalGeneration, config, processor)


# ---- LLaVA-OneVision ------------------------------------------------------------------------------------------

def build_tiny_llava_onevision(folder: Path) -> Path:
    """A LLaVA-OneVision model as llava-hf/llava-onevision-qwen2-0.5b-ov-hf ships it: a SigLIP tower (no CLS token,
    "full" features), a 2-layer projector, an image newline and a Qwen2 text model, with its processor, image processor
    and video processor. A prompt's only image becomes a base tile and any-resolution tiles of 16 px over the grid of
    pinpoints (tile multiples of 1 to 6 each way, as the real 384 px ones), unpadded and pooled to at most 9 tiles'
    worth ("anyres_max_9"); an image among several in one prompt is padded to a square, one tile.

    Sizes: LlavaOnevisionVisionText2TextModelTester (tests/models/llava_onevision/test_modeling_llava_onevision.py):
    vision image 16, patch 8, hidden 32, 2 layers, 4 heads, intermediate 37 (4 tokens a tile); text a Qwen2 of hidden
    32, 2 layers, 4 heads, 4 KV heads, intermediate 37.
    Chat template: the real one (templates/llava_onevision.jinja), `chat_template` of transformers' conversion script
    (src/transformers/models/llava_onevision/convert_llava_onevision_weights_to_hf.py), which the -hf checkpoints
    carry."""
    import transformers as tf

    tokenizer = _tokenizer(CHATML, family_template("llava_onevision"), bos=None, eos="<|im_end|>",
                           named={"image_token": "<image>", "video_token": "<video>"})
    tile = 16
    pinpoints = [[tile * rows, tile * cols] for rows in range(1, 7) for cols in range(1, 7)]
    size = {"height": tile, "width": tile}
    image_processor = tf.LlavaOnevisionImageProcessor(size=size, image_grid_pinpoints=pinpoints,
                                                      image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
    video_processor = tf.LlavaOnevisionVideoProcessor(size=size, image_mean=[0.5, 0.5, 0.5],
                                                      image_std=[0.5, 0.5, 0.5])
    processor = tf.LlavaOnevisionProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                           video_processor=video_processor, num_image_tokens=(tile // 8) ** 2,
                                           vision_feature_select_strategy="full", vision_aspect_ratio="anyres_max_9",
                                           chat_template=family_template("llava_onevision"))
    vision = tf.SiglipVisionConfig(image_size=tile, patch_size=8, hidden_size=32, num_hidden_layers=2,
                                   num_attention_heads=4, intermediate_size=37, vision_use_head=False)
    text = tf.Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=4096,
                          tie_word_embeddings=False, **_token_ids(tokenizer))
    config = tf.LlavaOnevisionConfig(vision_config=vision, text_config=text, image_grid_pinpoints=pinpoints,
                                     image_token_index=tokenizer.image_token_id,
                                     video_token_index=tokenizer.video_token_id,
                                     vision_feature_select_strategy="full", vision_feature_layer=-1,
                                     vision_aspect_ratio="anyres_max_9", tie_word_embeddings=False)
    return _save(folder, tf.LlavaOnevisionForConditionalGeneration, config, processor)


# ---- Idefics2 -------------------------------------------------------------------------------------------------

IDEFICS2_TOKENS = ["<fake_token_around_image>", "<image>", "<end_of_utterance>"]


def build_tiny_idefics2(folder: Path) -> Path:
    """An Idefics2 model as HuggingFaceM4/idefics2-8b ships it: a SigLIP-style tower at the image's own aspect ratio
    (padded to the batch's largest image, with a pixel attention mask), a perceiver resampler to a fixed number of
    latents per image and a Mistral text model with a sliding window; its tokenizer adds BOS, as Mistral's does. Each
    image is <fake_token_around_image>, its latents as <image> tokens, <fake_token_around_image>; no image splitting
    (do_image_splitting false, as the real checkpoint's preprocessor_config.json).

    Sizes: Idefics2VisionText2TextModelTester (tests/models/idefics2/test_modeling_idefics2.py): vision patch 12,
    hidden 32, 2 layers, 4 heads, intermediate 32; perceiver 2 latents, depth 2, 2 heads, 1 KV head, head_dim 12;
    text a Mistral of hidden 32, 2 layers, 2 heads, 2 KV heads, with a sliding window of 16 tokens (the tester's 32,
    halved so that every test prompt crosses it). Images: shortest edge 24, longest 60 (378 and 980 in the real one).
    Chat template: the real one (templates/idefics2.jinja), `chat_template` of HuggingFaceM4/idefics2-8b's
    processor_config.json (as quoted by its model card and by mistral.rs's chat-template tests)."""
    import transformers as tf
    from tokenizers import processors

    template = family_template("idefics2")
    base = _tokenizer(IDEFICS2_TOKENS, template=None)
    bos_id = base.convert_tokens_to_ids(BOS)
    base._tokenizer.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B",
                                                                   special_tokens=[(BOS, bos_id)])
    tokenizer = tf.PreTrainedTokenizerFast(tokenizer_object=base._tokenizer, bos_token=BOS, eos_token=EOS,
                                           pad_token=PAD, unk_token=UNK, extra_special_tokens=IDEFICS2_TOKENS,
                                           chat_template=template)
    image_processor = tf.Idefics2ImageProcessor(do_image_splitting=False,
                                                size={"shortest_edge": 24, "longest_edge": 60},
                                                image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
    processor = tf.Idefics2Processor(image_processor=image_processor, tokenizer=tokenizer, image_seq_len=2,
                                     chat_template=template)
    vision = tf.Idefics2VisionConfig(image_size=60, patch_size=12, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=32)
    perceiver = tf.Idefics2PerceiverConfig(hidden_act="silu", resampler_n_latents=2, resampler_depth=2,
                                           resampler_n_heads=2, num_key_value_heads=1, resampler_head_dim=12,
                                           hidden_size=32, rms_norm_eps=1e-5)
    text = tf.MistralConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=56, num_hidden_layers=2,
                            num_attention_heads=2, num_key_value_heads=2, sliding_window=16, rms_norm_eps=1e-5,
                            max_position_embeddings=4096, tie_word_embeddings=False, **_token_ids(tokenizer))
    config = tf.Idefics2Config(vision_config=vision, perceiver_config=perceiver, text_config=text,
                               image_token_id=tokenizer.convert_tokens_to_ids("<image>"), tie_word_embeddings=False)
    return _save(folder, tf.Idefics2ForConditionalGeneration, config, processor)
