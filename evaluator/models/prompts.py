"""How a model family is prompted: PromptStyle (each family's is declared in families.py), and the folding of earlier
conversation turns into one text for families without a chat template (fold_history, fold_qa_history)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PromptStyle:
    """How one family is prompted and fed.

    prompt:        "chat" (the processor's / tokenizer's chat template; plain text if it has none),
                   "plain" (the text as is) or "qa" ("Question: {text} Answer:").
    image_marker:  "plain"/"qa" prompts: put the processor's image token before the text, once per image.
    nested_images: hand images to the processor as one list per prompt (else one flat list).
    mixes:         one processor call may hold prompts with and without images; if not, generate() splits
                   such batches by "has images" (callers never see the difference).
    text_only:     how a prompt without images runs: "processor" (the processor, then the full model),
                   "language_model" (the tokenizer, then the model's language model alone), or a format for the
                   tokenizer such as "{bos}{text}\\n" (what the processor would build around the text; full model).
    max_images:    the most images one prompt may carry (None: no limit).
    """

    prompt: str = "chat"
    image_marker: bool = False
    nested_images: bool = False
    mixes: bool = True
    text_only: str = "processor"
    max_images: int | None = None


TEXT_STYLE = PromptStyle()  # text-only causal LMs: the tokenizer's chat template


def chat_role(turn: dict) -> str:
    """A history turn's chat role: "assistant" or "user"."""
    return "assistant" if str(turn.get("role", "")).lower() in ("assistant", "gpt", "model") else "user"


def fold_history(history: list[dict], text: str) -> str:
    """Earlier turns folded into one text for families without a chat template ("User: ...\nAssistant: ...")."""
    if not history:
        return text
    lines = [f"{'Assistant' if chat_role(t) == 'assistant' else 'User'}: {t.get('content', '')}" for t in history]
    return "\n".join(lines + [f"User: {text}"])


def fold_qa_history(history: list[dict], text: str) -> str:
    """The question-answer form of BLIP-2-style models, earlier turns chained before the question.

    "Question: <user> Answer: <assistant> Question: <text> Answer:"; a user turn without its answer keeps an
    empty "Answer:", an assistant turn without a question gets none.
    """
    parts: list[str] = []
    for turn in history:
        content = str(turn.get("content", ""))
        if chat_role(turn) != "assistant":
            parts.append(f"Question: {content} Answer:")
        elif parts and parts[-1].startswith("Question:") and parts[-1].endswith(" Answer:"):
            parts[-1] += f" {content}"
        else:
            parts.append(f"Answer: {content}")
    parts.append(f"Question: {text} Answer:")
    return " ".join(parts)
