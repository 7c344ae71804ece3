"""A LLaVA of realistic shape (random weights) for the bench scripts, loaded through the real adapter.

Text model: Llama, 8 layers, hidden 512, intermediate 1376, 8 heads. Vision tower: CLIP, 4 layers, hidden 384,
image 128 / patch 16, so one image becomes 64 image tokens in the prompt (the CLS token is dropped, "default"
strategy). The tokenizer and chat template are the tests' (tests/tiny_models.py): a byte-level BPE of ~400 tokens,
padded with added tokens to a real vocabulary's size (32,000, as Llama's) so that the LM head costs what it does in a
real model.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# the prompts bench/generation.py and bench/served.py time (cycled when more are asked for)
QUESTIONS = [
    "What colour is the ball in the picture?",
    "How many people are standing near the blue car?",
    "What is written on the sign?",
    "Describe the image.",
    "Is the small green box next to the cat on the mat?",
    "Answer with the letter of the correct option: A, B, C or D.",
    "What colour is the ball in the picture, and how many people are standing near the blue car?",
    "Let's think step by step. First, count the objects; then compare their sizes.",
]

VOCAB_SIZE = 32_000
# 38 tokens with the tests' tokenizer (~40, as a short benchmark question).
QUESTION = "What colour is the ball in the picture, and how many people are standing near the blue car?"


# shape -> (text: hidden, intermediate, layers, heads; vision: hidden, intermediate, layers, heads, image, patch;
#          vision feature layer). "7b": LLaVA-1.5-7B (Llama-2-7B text, CLIP ViT-L/14-336: 576 image tokens); "tiny":
#          the smallest that runs every path, for the tests' quick run of a whole check on the CPU.
SHAPES = {"tiny": ((64, 128, 2, 4), (32, 64, 2, 2, 32, 16), -1),
          "bench": ((512, 1376, 8, 8), (384, 1536, 4, 6, 128, 16), -1),
          "7b": ((4096, 11008, 32, 32), (1024, 4096, 24, 16, 336, 14), -2)}


def build_llava(folder: Path, shape: str = "bench") -> Path:
    """Save a LLaVA of `shape` (weights seeded; "7b" in bfloat16) with its processor into `folder`."""
    import torch
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlamaConfig, LlavaConfig,
                              LlavaForConditionalGeneration, LlavaProcessor)

    from tests.tiny_models import CHAT_TEMPLATE, _tokenizer

    folder = Path(folder)
    tokenizer = _tokenizer(["<image>"])
    # A real vocabulary's size (Llama's 32,000): the LM head then costs what it costs in a real model, which matters
    # at every decoding step. The extra entries are plain added tokens; the questions still tokenize as before.
    tokenizer.add_tokens([f"<w{i}>" for i in range(VOCAB_SIZE - len(tokenizer))])
    (hidden, intermediate, layers, heads), (v_hidden, v_intermediate, v_layers, v_heads, size, patch), feature = \
        SHAPES[shape]
    image_processor = CLIPImageProcessor(size={"shortest_edge": size}, crop_size={"height": size, "width": size})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=patch,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1,
                               chat_template=CHAT_TEMPLATE)
    text = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=intermediate,
                       num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                       max_position_embeddings=4096,
                       bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                       pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False)
    vision = CLIPVisionConfig(hidden_size=v_hidden, intermediate_size=v_intermediate, num_hidden_layers=v_layers,
                              num_attention_heads=v_heads, image_size=size, patch_size=patch, projection_dim=512)
    config = LlavaConfig(vision_config=vision, text_config=text,
                         image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
                         vision_feature_layer=feature, vision_feature_select_strategy="default",
                         pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    if shape == "7b":  # built in bfloat16 on the GPU: 7 B parameters in float32 on the CPU would take minutes
        torch.set_default_dtype(torch.bfloat16)
        with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
            model = LlavaForConditionalGeneration(config).eval()
        torch.set_default_dtype(torch.float32)
    else:
        model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def load_llava(batch_size: int = 1, shape: str = "bench"):
    """Build the model into a temporary folder and load it with evaluator.models.load_model (the real adapter)."""
    return load_folder(build_llava(Path(tempfile.mkdtemp(prefix="bench-llava-")), shape), batch_size)


def load_folder(folder: Path, batch_size: int | str = 1, device: str | None = None):
    """A saved model, loaded with evaluator.models.load_model (the real adapter) on `device` (None: CUDA when
    available)."""
    from evaluator.models import load_model

    return load_model(str(folder), batch_size=batch_size, device=device)


def image(seed: int, size: tuple[int, int] = (160, 120)):
    """A synthetic picture: a coloured background with a few rectangles."""
    import random

    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    img = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(img)
    for _ in range(4):
        x, y = rng.randrange(size[0] - 20), rng.randrange(size[1] - 20)
        draw.rectangle([x, y, x + rng.randrange(10, 40), y + rng.randrange(10, 40)],
                       fill=tuple(rng.randrange(256) for _ in range(3)))
    return img


def median_seconds(fn, repeats: int) -> float:
    import statistics
    import time

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
