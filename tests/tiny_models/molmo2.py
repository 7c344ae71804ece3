"""The tiny model of AllenAI's Molmo 2 (Molmo2ForConditionalGeneration, in transformers 5.23 itself: no remote
code). Sizes from transformers' own tester (tests/models/molmo2/test_modeling_molmo2.py,
Molmo2VisionText2TextModelTester), Qwen's tokenizer class over the shared byte-level BPE with the real checkpoints'
special tokens in their order (the image tokens after the text vocabulary, in the embedding's additional rows, as in
allenai/Molmo2-4B and -8B), and the real chat template (templates/molmo2.jinja)."""
from __future__ import annotations

from pathlib import Path

from tests.tiny_models.common import SENTENCES, family_template

# Qwen3's special tokens the template and the processor use: <|endoftext|> pads, <|im_end|> ends an answer and is the
# BOS the processor puts before every prompt (the real tokenizer_config.json: bos_token and eos_token <|im_end|>).
QWEN_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Left out: the real Qwen3 vocabulary's <think> and </think> (ordinary added tokens there, special: false). Molmo 2
# never thinks (its template writes no thought), but evaluator.models.thinking takes a vocabulary that holds them for
# a model that may think and gives it the thinking budget on top of every answer: a random model, which never ends
# its answer, would then write thousands of tokens per request.
# Molmo 2's own tokens, special, in the real order (ids 151936..151945 there, past the text vocabulary of 151936): the
# processor expands <|image|> into <low_res_im_start> / <im_start>, rows of <im_patch> each closed by <im_col>, and
# <im_end>; <|video|> and the frame markers are for videos.
MOLMO2_TOKENS = ["<im_start>", "<im_end>", "<im_patch>", "<im_col>", "<low_res_im_start>", "<|image|>", "<im_low>",
                 "<frame_start>", "<frame_end>", "<|video|>"]


def _save_with_live_adapter(folder: Path, model_class, config, processor) -> Path:
    """common._save, with the adapter's weights (its attention pooling and its projector) drawn from a seeded normal of
    std 0.2 instead of the family's 0.02: through four such layers and a gated product the image features come out
    around 1e-7, which a random model's text embeddings (0.02) drown, so it would answer alike whatever the image."""
    import torch

    folder = Path(folder)
    torch.manual_seed(0)
    model = model_class(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.startswith("model.multi_modal_projector.") and name.endswith(".weight"):
                parameter.normal_(0.0, 0.2)
    model.generation_config.pad_token_id = processor.tokenizer.pad_token_id
    model.save_pretrained(folder, safe_serialization=True)
    processor.save_pretrained(folder)
    return folder


def _molmo2_tokenizer(template: str):
    """Qwen's tokenizer class over a byte-level BPE (vocab ~400) trained on SENTENCES, then Molmo 2's special tokens
    (the last ids, as in the real checkpoints)."""
    import json

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=QWEN_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(SENTENCES, trainer=trainer)
    state = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in state["merges"]]
    tokenizer = Qwen2Tokenizer(vocab=state["vocab"], merges=merges, unk_token=None, bos_token="<|im_end|>",
                               eos_token="<|im_end|>", pad_token="<|endoftext|>",
                               extra_special_tokens=QWEN_TOKENS[1:2], chat_template=template)
    tokenizer.add_special_tokens({"additional_special_tokens": MOLMO2_TOKENS})
    return tokenizer


def build_tiny_molmo2(folder: Path) -> Path:
    """A Molmo 2 model: a ViT over square crops, an attention-pooling adapter (2x2 patches per token) and a Qwen3-style
    text model, with its processor (Molmo2Processor: Molmo2ImageProcessor and Molmo2VideoProcessor).

    Sizes from Molmo2VisionText2TextModelTester: text hidden 32, intermediate 37, 2 layers, 4 heads, 2 KV heads,
    head_dim 128, RoPE theta 10000; vision hidden 32, intermediate 37, 2 layers, 4 heads, head_dim 8, patch 14;
    adapter reading vision layer 1, hidden 32, 4 heads, head_dim 8, intermediate 37. The crops are 56 px (4x4 patches
    of 14; the tester's and the real 378 px would make hundreds of image tokens), with overlap margins of 1 patch (the
    real 4 do not fit a crop of 4), at most 4 crops, 2x2 pooling: a small image is a low-resolution view of 2x2 tokens
    and a 2x2 (or larger) high-resolution grid whose rows are each closed by <im_col> (not the low-resolution view's:
    use_single_crop_col_tokens False, as the real processor_config.json has it). Untied embeddings, as in the real
    checkpoints.

    Chat template: the real one of allenai/Molmo2-4B (chat_template.jinja of the checkpoint, as mirrored in the public
    GitHub repository albud1978/CV, src/models/Molmo2-4B/): every image of the conversation goes first ("<|image|>",
    or "Image 1<|image|>Image 2<|image|>..." for several), then ChatML-style user and assistant turns; it takes no
    system role (roles must alternate user/assistant), and the processor puts the BOS (<|im_end|>) in front.
    """
    import transformers as tf

    template = family_template("molmo2")
    tokenizer = _molmo2_tokenizer(template)
    image_processor = tf.Molmo2ImageProcessor(size={"height": 56, "width": 56}, patch_size=14, max_crops=4,
                                              overlap_margins=[1, 1], pooling_size=[2, 2], image_mean=[0.5] * 3,
                                              image_std=[0.5] * 3)
    video_processor = tf.Molmo2VideoProcessor(size={"height": 56, "width": 56}, patch_size=14, pooling_size=[2, 2],
                                              image_mean=[0.5] * 3, image_std=[0.5] * 3)
    processor = tf.Molmo2Processor(image_processor=image_processor, video_processor=video_processor,
                                   tokenizer=tokenizer, chat_template=template, use_single_crop_col_tokens=False)
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in MOLMO2_TOKENS}
    text = tf.Molmo2TextConfig(vocab_size=ids["<im_start>"], additional_vocab_size=128, hidden_size=32,
                               intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
                               num_key_value_heads=2, head_dim=128, hidden_act="silu", max_position_embeddings=512,
                               rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, rms_norm_eps=1e-6,
                               bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                               pad_token_id=tokenizer.pad_token_id)
    vision = tf.Molmo2VisionConfig(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=4, head_dim=8, hidden_act="gelu_pytorch_tanh",
                                   layer_norm_eps=1e-6, image_size=[56, 56], patch_size=14)
    adapter = tf.Molmo2AdapterConfig(vision_feature_layer=[1], hidden_size=32, num_attention_heads=4,
                                     num_key_value_heads=4, head_dim=8, intermediate_size=37, text_hidden_size=32,
                                     hidden_act="silu")
    config = tf.Molmo2Config(text_config=text, vision_config=vision, adapter_config=adapter,
                             image_start_token_id=ids["<im_start>"], image_end_token_id=ids["<im_end>"],
                             low_res_image_start_token_id=ids["<low_res_im_start>"], image_patch_id=ids["<im_patch>"],
                             frame_start_token_id=ids["<frame_start>"], frame_end_token_id=ids["<frame_end>"],
                             tie_word_embeddings=False, bos_token_id=tokenizer.bos_token_id,
                             eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return _save_with_live_adapter(folder, tf.Molmo2ForConditionalGeneration, config, processor)
