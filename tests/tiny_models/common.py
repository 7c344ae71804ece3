"""What every tiny model shares: the byte-level BPE tokenizer trained on SENTENCES, the simple `role: content` chat
template, the Llama text config, the sizes of the 2023-24 families, and the seeded save."""
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


def chat_template(image_placeholder: str = "<image>") -> str:
    """`role: content` lines; image parts become the family's image placeholder; ends with `assistant:`."""
    return (
        "{% for message in messages %}"
        "{{ message['role'] }}: "
        "{% if message['content'] is string %}{{ message['content'] }}"
        "{% else %}{% for part in message['content'] %}"
        "{% if part['type'] == 'image' %}" + image_placeholder + "{% elif part['type'] == 'text' %}"
        "{{ part['text'] }}{% endif %}"
        "{% endfor %}{% endif %}{{ '\\n' }}"
        "{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )


CHAT_TEMPLATE = chat_template("<image>")

BOS, EOS, PAD, UNK = "<s>", "</s>", "<pad>", "<unk>"
TEMPLATES = Path(__file__).resolve().parent / "templates"  # the newer families' chat templates

# Special tokens per family (what the real processors look for).
IDEFICS3_TOKENS = ["<fake_token_around_image>", "<image>", "<global-img>", "<end_of_utterance>"]
QWEN2_VL_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>", "<|im_start|>",
                   "<|im_end|>"]
QWEN2_VL_IMAGE = "<|vision_start|><|image_pad|><|vision_end|>"

# Text model and vision tower sizes shared by every family.
TEXT = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=32,
              patch_size=8)


def _tokenizer(extra_special: list[str], template: str | None = CHAT_TEMPLATE, bos: str | None = BOS, *,
               eos: str = EOS, pad: str = PAD, unk: str = UNK, named: dict[str, str] | None = None):
    """A byte-level BPE (vocab ~400) trained on SENTENCES, wrapped as a PreTrainedTokenizerFast, with the family's
    padding, BOS (None: none), end and unknown tokens and its special tokens. `named` (attribute -> token, e.g.
    {"image_token": "<image>"}) are special tokens the processor reads by attribute (tokenizer.image_token,
    .image_token_id); the other extra_special ones are plain special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    named = dict(named or {})
    own = [token for token in (pad, bos, eos, unk) if token]
    special = list(dict.fromkeys([*named.values(), *extra_special]))
    tok = Tokenizer(models.BPE(unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=list(dict.fromkeys([*own, *special])),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(SENTENCES, trainer=trainer)
    kwargs = {"chat_template": template} if template else {}
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=bos, eos_token=eos, pad_token=pad,
                                      unk_token=unk, extra_special_tokens=named or special, **kwargs)
    if named:  # the rest of the special tokens, not read by name
        rest = [token for token in special if token not in named.values() and token not in own]
        wrapped.add_special_tokens({"additional_special_tokens": rest})
    return wrapped


def family_template(model_type: str) -> str:
    """A family's chat template, as stored in templates/<model_type>.jinja (its builder says where it comes from)."""
    return (TEMPLATES / f"{model_type}.jinja").read_text(encoding="utf-8")


def _token_ids(tokenizer) -> dict:
    return dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id)


def _llama_config(tokenizer):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=len(tokenizer), num_key_value_heads=2, max_position_embeddings=512,
                       tie_word_embeddings=False, **TEXT, **_token_ids(tokenizer))


def _save(folder: Path, model_class, config, processor) -> Path:
    """Seeded random weights for `config`, saved (safetensors) with the processor or tokenizer into `folder`."""
    import torch

    folder = Path(folder)
    torch.manual_seed(0)
    model = model_class(config).eval()
    model.generation_config.pad_token_id = getattr(processor, "tokenizer", processor).pad_token_id
    model.save_pretrained(folder, safe_serialization=True)
    processor.save_pretrained(folder)
    return folder
