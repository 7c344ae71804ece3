"""Tiny random-weight models built at test time (a few hundred KB each, built in about a second).

Each builder writes a folder that `from_pretrained` loads like a real Hub model: config, safetensors weights,
tokenizer (or processor) and a chat template. Weights are seeded, so a build is deterministic.
"""
from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "What colour is the ball in the picture? The ball is red.",
    "Answer with the letter of the correct option: A, B, C or D.",
    "A cat sits on a mat next to a small green box.",
    "How many people are standing near the blue car? There are three.",
    "Question: what is written on the sign? Answer: stop.",
    "user: describe the image. assistant: a yellow square on a white background.",
    "Let's think step by step. First, count the objects; then compare their sizes.",
    "Paris is the capital of France, and Rome is the capital of Italy.",
    "0 1 2 3 4 5 6 7 8 9 yes no true false left right up down",
]

# `role: content` lines; image parts become the image placeholder; ends with `assistant:` for generation.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'] }}: "
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}{{ '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)

BOS, EOS, PAD, UNK = "<s>", "</s>", "<pad>", "<unk>"


def _tokenizer(extra_special: list[str]):
    """A byte-level BPE (vocab ~400) trained on SENTENCES, wrapped as a PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=[PAD, BOS, EOS, UNK, *extra_special],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(SENTENCES, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD,
                                   unk_token=UNK, extra_special_tokens=extra_special, chat_template=CHAT_TEMPLATE)


def _llama_config(tokenizer):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                       bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                       pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False)


def build_tiny_llama(folder: Path) -> Path:
    """A 2-layer Llama text model with its tokenizer and chat template, saved into `folder`."""
    import torch
    from transformers import LlamaForCausalLM

    folder = Path(folder)
    tokenizer = _tokenizer([])
    torch.manual_seed(0)
    model = LlamaForCausalLM(_llama_config(tokenizer)).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_llava(folder: Path) -> Path:
    """A LLaVA model (CLIP vision tower, Llama text model) with its processor, saved into `folder`."""
    import torch
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration,
                              LlavaProcessor)

    folder = Path(folder)
    tokenizer = _tokenizer(["<image>"])
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=8,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1,
                               chat_template=CHAT_TEMPLATE)
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                              image_size=32, patch_size=8, projection_dim=32)
    config = LlavaConfig(vision_config=vision, text_config=_llama_config(tokenizer),
                         image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
                         vision_feature_layer=-1, vision_feature_select_strategy="default",
                         pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder, safe_serialization=True)
    processor.save_pretrained(folder)
    return folder


# family name -> builder. Tests parametrised over families read this; a new family is one builder + one line.
FAMILIES = {
    "llava": build_tiny_llava,
    "llama": build_tiny_llama,
}
