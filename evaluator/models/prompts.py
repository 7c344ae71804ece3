"""How a model family is prompted: PromptStyle (each family's is declared in families.py), a request's chat messages
(chat_messages) or, for families without a chat template, its plain text (plain_prompt, folding earlier conversation
turns into one text: fold_history, fold_qa_history), and the check that a prompt carries one image placeholder per
image (placeholder_problem)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
    system_text:   "chat" prompts to a vision model: the system message's content is its text, not a list of parts
                   (a chat template that writes the system content as is, Gemma 4's).
    system_in_user: "chat" prompts to a vision model whose chat template takes no system role (Molmo 2's: roles must
                   alternate user/assistant): the system text opens the text of the first user turn, a blank line
                   after it, with or without images.
    no_system_with_images: "chat" prompts with images to a vision model whose chat template refuses a system message
                   beside images (Llama 3.2 Vision's raises): there the system text opens the text of the first user
                   turn, a blank line after it; a prompt without images keeps its system message.
    history_text:  "chat" prompts to a vision model: earlier turns' content is their text, not a list of parts (a
                   chat template that writes an assistant turn's content as is, GLM-4.1V's).
    """

    prompt: str = "chat"
    image_marker: bool = False
    nested_images: bool = False
    mixes: bool = True
    text_only: str = "processor"
    max_images: int | None = None
    system_text: bool = False
    system_in_user: bool = False
    no_system_with_images: bool = False
    history_text: bool = False


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


def chat_messages(request: Any, style: PromptStyle, has_vision: bool) -> list[dict[str, Any]]:
    """A request's messages for a chat template: its system message, its earlier turns, then the user turn (for a
    vision model, its images as {"type": "image"} parts before its text part)."""
    history = list(getattr(request, "history", None) or [])
    messages: list[dict[str, Any]] = []
    if not has_vision:
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend({"role": chat_role(t), "content": str(t.get("content", ""))} for t in history)
        messages.append({"role": "user", "content": request.text})
        return messages
    folded = bool(request.system and (style.system_in_user or (style.no_system_with_images and request.images)))
    if request.system and not folded:
        system = request.system if style.system_text else [{"type": "text", "text": request.system}]
        messages.append({"role": "system", "content": system})
    messages.extend({"role": chat_role(t), "content": str(t.get("content", "")) if style.history_text
                     else [{"type": "text", "text": str(t.get("content", ""))}]} for t in history)
    content = [{"type": "image"} for _ in request.images] + [{"type": "text", "text": request.text}]
    messages.append({"role": "user", "content": content})
    if folded:
        first = next(m for m in messages if m["role"] == "user")
        if isinstance(first["content"], str):
            first["content"] = f"{request.system}\n\n{first['content']}"
        else:
            part = next(p for p in first["content"] if p["type"] == "text")
            part["text"] = f"{request.system}\n\n{part['text']}"
    return messages


def plain_prompt(request: Any, style: PromptStyle, image_token: str) -> str:
    """A family without a chat template: its system text, its image markers (style.image_marker) and the text with
    the earlier turns folded in ("qa": the question-answer form)."""
    history = list(getattr(request, "history", None) or [])
    system = f"{request.system}\n\n" if request.system else ""
    fold = fold_qa_history if style.prompt == "qa" else fold_history
    marker = image_token * len(request.images) if style.image_marker else ""
    return f"{system}{marker}{fold(history, request.text)}"


def token_text(owner: Any, attribute: str | None) -> str:
    """The text of a processor's special token attribute ("" when it has none); BLIP processors hold an AddedToken."""
    token = getattr(owner, attribute, None) if attribute else None
    return str(getattr(token, "content", token) or "")


def placeholder_problem(prompt: str, placeholder: str, images: int) -> str | None:
    """Why a prompt does not carry one image placeholder per image (a template that drops or repeats an image, or a
    text that holds the placeholder itself), or None."""
    if not placeholder or prompt.count(placeholder) == images:
        return None
    return f"the prompt carries {prompt.count(placeholder)} image placeholder(s) {placeholder!r} for {images} image(s)"
