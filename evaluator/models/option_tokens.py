"""Where an option's tokens start after a processed prompt, found from the text alone (no image processed again).

The prompt's text after its last special token (an image placeholder) is tokenized as the processor tokenizes it, so
an option appended to the prompt is found as the processor would find it. A family that adds text around the prompt
(the processed prompt does not end as the text does) gets None, and the adapter asks the processor instead.
"""
from __future__ import annotations

from typing import Any


def special_ids(tokenizer: Any) -> set[int]:
    """The tokenizer's special and added special token ids (an image placeholder among them)."""
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    return set(tokenizer.all_special_ids) | {i for i, tok in added.items() if getattr(tok, "special", False)}


def options_from_text(tokenizer: Any, special: set[int], prompt: str, options: list[str],
                      prompt_ids: Any) -> list[list[int]] | None:
    """Each option's token ids as a continuation of the prompt (`prompt_ids`: the processed prompt, 1-D), or None when
    the processed prompt does not end as the text does."""
    bos = tokenizer.bos_token
    add_special = not (bos and prompt.startswith(bos))
    text_ids = tokenizer(prompt, add_special_tokens=add_special)["input_ids"]
    last = max((j for j, token in enumerate(text_ids) if token in special), default=-1)
    segment = text_ids[last + 1:]
    processed = prompt_ids.tolist()
    if len(segment) > len(processed) or (segment and processed[-len(segment):] != segment):
        return None
    if last >= 0 and (len(processed) <= len(segment) or processed[-len(segment) - 1] not in special):
        return None
    joints = tokenizer([prompt + option for option in options], add_special_tokens=add_special)["input_ids"]
    found = []
    for option, joint in zip(options, joints):
        if len(joint) > len(text_ids) and joint[:len(text_ids)] == text_ids:
            found.append(list(joint[len(text_ids):]))
        else:
            found.append(list(tokenizer(option, add_special_tokens=False)["input_ids"]))
    return found
