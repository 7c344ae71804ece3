"""Thinking models: the reasoning block a model writes before its answer, kept apart from the answer.

Qwen3-VL-Thinking, Qwen3.5, GLM-4.1V-Thinking, GLM-4.5V/4.6V and Gemma 4 (with thinking on) write a thought between
two markers, then their answer. Every benchmark parses, and every judge grades, the answer alone (`split_reply`); the
thought is kept in the details ("reasoning") and counted in tokens. A reply that ends inside its thought (its budget
ran out, or it stopped before closing it) has no answer: it is never parsed from the thought, and it is counted
("thought_unclosed").

A model's markers are the first known pair (KNOWN_MARKERS) whose two texts its chat template writes, or that its
tokenizer holds as tokens (then replies are split on them, but the model is not taken to think: Qwen3-based models
that never think carry <think> in their vocabulary). Whether it thinks in a run (`Thinking.mode`) comes from its
rendered generation prompt:
"on" when the prompt opens a thought the model is to go on with (Qwen3-VL-Thinking), "off" when it writes an empty,
closed thought (Qwen3.5 and Gemma 4 with thinking off), "may" when it writes neither but the template knows the markers
(GLM-4.1V-Thinking, which opens its thought itself), "none" when there are no markers. A template that takes an
`enable_thinking` switch is rendered with the run's choice (`asked`: auto keeps the template's own default). A model
that thinks or may think gets the run's thinking budget on top of each benchmark's own max_new_tokens.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

from evaluator.models.base import GenerationResult, cut_at_stop

THINKING_CHOICES = ("auto", "on", "off")  # --thinking: the template's default, or its enable_thinking switch set
# Tokens a model that may think can spend on its thought, on top of a benchmark's own answer budget. Thinking VLMs'
# thoughts on a multiple-choice or short-answer question run from a few hundred to a couple of thousand tokens; 4,096
# lets most finish while a run of a few thousand items stays within hours on one GPU. A thought cut off by the budget
# is counted per benchmark (never parsed), so a budget too small for a model shows on the board.
DEFAULT_THINKING_BUDGET = 4096
BUDGET_SETTING = "LEADERBOARD_THINKING_BUDGET"  # the default's override (the Space's setting; --thinking-budget wins)
ON, OFF, MAY, NONE = "on", "off", "may", "none"  # Thinking.mode


@dataclass(frozen=True)
class Markers:
    """The texts around a thought, and wrappers a family puts around its final answer (removed, their content
    kept: GLM-4.1V's <answer>...</answer>, GLM-4.5V's <|begin_of_box|>...<|end_of_box|>)."""

    open: str
    close: str
    answer_wrappers: tuple[tuple[str, str], ...] = ()


THINK = Markers("<think>", "</think>", (("<answer>", "</answer>"), ("<|begin_of_box|>", "<|end_of_box|>")))
# Gemma 4 writes its thought in a channel: <|channel>thought\n ... <channel|>
GEMMA_CHANNEL = Markers("<|channel>", "<channel|>")
KNOWN_MARKERS = (THINK, GEMMA_CHANNEL)


@dataclass(frozen=True)
class Reply:
    """A reply split: the answer every benchmark reads, the thought (None when the reply had none) and whether the
    reply ended inside its thought (then the answer is empty)."""

    answer: str
    thought: str | None = None
    unclosed: bool = False


def find_markers(template: str | None, vocabulary: Iterable[str] = ()) -> Markers | None:
    """The first known pair of thought markers a chat template writes (both texts in it), else one a tokenizer holds
    as tokens (both in its vocabulary); None when neither."""
    text = template or ""
    for markers in KNOWN_MARKERS:
        if markers.open in text and markers.close in text:
            return markers
    tokens = set(vocabulary)
    for markers in KNOWN_MARKERS:
        if markers.open in tokens and markers.close in tokens:
            return markers
    return None


def prompt_mode(prompt: str, markers: Markers | None) -> str:
    """Whether a rendered generation prompt lets the model think: ON (it ends inside an open thought), OFF (it ends
    with a closed, empty thought), MAY (neither), NONE (no markers)."""
    if markers is None:
        return NONE
    tail = prompt.rstrip()
    opened, closed = tail.rfind(markers.open), tail.rfind(markers.close)
    if opened > closed:
        return ON
    empty = 0 <= opened < closed and tail[opened + len(markers.open):closed].strip() in ("", "thought")
    if empty and len(tail) - closed <= 64:  # e.g. "<think>\n\n</think>\n\n", then perhaps the assistant's header
        return OFF
    return MAY


def _unwrap(answer: str, markers: Markers) -> str:
    """An answer with its family's wrappers taken off (their content kept); an answer without any as it is."""
    wrapped = False
    for start, end in markers.answer_wrappers:
        if start in answer or end in answer:
            answer, wrapped = answer.replace(start, "").replace(end, ""), True
    return answer.strip() if wrapped else answer


def split_reply(text: str, markers: Markers | None, opened: bool = False) -> Reply:
    """A reply's answer and thought.

    opened: the prompt ended inside an open thought, so the reply starts in it. A reply with a close marker has its
    thought before the first one (a leading open marker dropped: a template may open the thought itself, so a close
    marker alone also ends one) and its answer after it. A reply without one that started in a
    thought, or starts with an open marker, ended inside its thought: no answer. Any other reply is all answer.
    """
    if markers is None:
        return Reply(text)
    close = text.find(markers.close)
    stripped = text.lstrip()
    if close >= 0:
        thought = text[:close].lstrip()
        if thought.startswith(markers.open):
            thought = thought[len(markers.open):]
        return Reply(_unwrap(text[close + len(markers.close):], markers).strip(), thought.strip())
    if opened or stripped.startswith(markers.open):
        thought = stripped[len(markers.open):] if stripped.startswith(markers.open) else text
        return Reply("", thought.strip(), unclosed=True)
    return Reply(_unwrap(text, markers))


def marker_ids(tokenizer: Any, markers: Markers | None) -> dict[int, str]:
    """Token id -> marker text, for each marker (and answer wrapper) the tokenizer holds as one token."""
    if markers is None or tokenizer is None:
        return {}
    texts = [markers.open, markers.close, *(t for pair in markers.answer_wrappers for t in pair)]
    vocabulary = tokenizer.get_vocab()
    return {int(vocabulary[text]): text for text in texts if text in vocabulary}


def decode_keeping(tokenizer: Any, ids: list[int], keep: dict[int, str]) -> str:
    """Token ids as text with special tokens skipped, except the thought markers in `keep` (id -> text), which are
    written out: a family whose markers are special tokens keeps them to split on."""
    if not keep:
        return tokenizer.decode(ids, skip_special_tokens=True)
    parts, start = [], 0
    for index, token in enumerate(ids):
        if token in keep:
            parts.append(tokenizer.decode(ids[start:index], skip_special_tokens=True))
            parts.append(keep[token])
            start = index + 1
    parts.append(tokenizer.decode(ids[start:], skip_special_tokens=True))
    return "".join(parts)


def thought_token_count(ids: list[int], n_tokens: int, reply: Reply, keep: dict[int, str], markers: Markers | None,
                        tokenizer: Any) -> int:
    """Tokens a reply spent on its thought (its markers included): up to and including the close marker's token,
    all of them when the thought was not closed, 0 without a thought."""
    if reply.thought is None or markers is None:
        return 0
    if reply.unclosed:
        return n_tokens
    close_ids = [i for i, text in keep.items() if text == markers.close]
    if close_ids:
        for index, token in enumerate(ids[:n_tokens]):
            if token == close_ids[0]:
                return index + 1
    return min(n_tokens, len(tokenizer(reply.thought, add_special_tokens=False)["input_ids"]) + 2)


@dataclass(frozen=True)
class Thinking:
    """What a run knows of a model's thinking: its markers, whether its template takes enable_thinking (`switch`),
    what the run asked (auto, on, off), the mode its prompts give, and the budget a thought may spend."""

    markers: Markers | None = None
    switch: bool = False
    asked: str = "auto"
    mode: str = NONE
    budget: int = DEFAULT_THINKING_BUDGET

    @property
    def extra_tokens(self) -> int:
        """Tokens added to each generation's budget: the thinking budget for a model that thinks or may."""
        return self.budget if self.mode in (ON, MAY) else 0

    def template_kwargs(self) -> dict[str, bool]:
        """What the chat template is rendered with: enable_thinking when the run set it and the template takes it."""
        return {"enable_thinking": self.asked == "on"} if self.switch and self.asked != "auto" else {}

    def record(self) -> dict[str, Any]:
        """run.thinking in results.json (the counts of replies are added by the runner)."""
        return {"mode": self.mode, "asked": self.asked, "switch": "enable_thinking" if self.switch else None,
                "markers": [self.markers.open, self.markers.close] if self.markers else None,
                "budget": self.budget if self.extra_tokens else 0}


def default_budget() -> int:
    """The thinking budget when a run names none: LEADERBOARD_THINKING_BUDGET, else DEFAULT_THINKING_BUDGET;
    ValueError naming the setting when it is not a whole number from 0 to 1,000,000."""
    raw = os.environ.get(BUDGET_SETTING, "").strip()
    if not raw:
        return DEFAULT_THINKING_BUDGET
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{BUDGET_SETTING} must be a whole number of tokens, got {raw[:40]!r}") from None
    if not 0 <= value <= 1_000_000:
        raise ValueError(f"{BUDGET_SETTING} must be from 0 to 1000000 tokens, got {value}")
    return value


def check_choice(asked: str) -> str:
    """A --thinking value, or ValueError naming the choices."""
    value = str(asked or "auto").strip().lower()
    if value not in THINKING_CHOICES:
        raise ValueError(f"--thinking must be one of {', '.join(THINKING_CHOICES)}, got {asked!r}")
    return value


def template_switch(template: str | None) -> bool:
    """Whether a chat template reads an enable_thinking switch."""
    return "enable_thinking" in (template or "")


def detect(template: Any, vocabulary: Iterable[str], asked: str, budget: int,
           render: Callable[[Thinking], str]) -> Thinking:
    """A model's thinking: its markers (from its chat template, else its tokenizer's vocabulary), whether its template
    takes enable_thinking, and the mode of the generation prompt `render(found)` writes under the run's choice (MAY
    when a text-only prompt cannot be rendered). Markers found only in the vocabulary split replies but give mode
    NONE: a template that never writes a thought does not get the thinking budget."""
    if isinstance(template, dict):  # a processor's named templates
        template = " ".join(map(str, template.values()))
    text = template if isinstance(template, str) else ""
    written = find_markers(text)
    markers = written or find_markers("", vocabulary)
    found = Thinking(markers, template_switch(text), asked, NONE, max(0, budget))
    if written is None:  # markers the tokenizer holds but the template never writes (a Qwen3-based model that does
        return found     # not think): replies are still split on them, but no budget is added
    try:
        probe = render(found)
    except Exception:  # noqa: BLE001 - a family that cannot render a text-only prompt: it may think
        return replace(found, mode=MAY)
    return replace(found, mode=prompt_mode(probe, markers))


def closed(prompt: str, markers: Markers | None) -> str:
    """A prompt with the thought it opened closed empty (what options are scored after: an option is the model's
    answer, never its thought); any other prompt as it is."""
    if markers is not None and prompt_mode(prompt, markers) == ON:
        return prompt + markers.close + "\n\n"
    return prompt


def completion(tokenizer: Any, ids: list[int], n_tokens: int, ran_out: bool, prompt: str, stop: list[str],
               found: Thinking, keep: dict[int, str]) -> GenerationResult:
    """One generated reply as a GenerationResult: its ids (up to its end) decoded with the thought markers kept, split
    into answer and thought (the prompt may have opened the thought), stop strings applied to the answer, and the
    tokens its thought spent."""
    markers = found.markers
    text = decode_keeping(tokenizer, ids, keep)
    reply = split_reply(text, markers, prompt_mode(prompt, markers) == ON)
    cut = cut_at_stop(reply.answer, stop)
    spent = thought_token_count(ids, n_tokens, reply, keep, markers, tokenizer)
    return GenerationResult(cut, n_tokens=n_tokens, hit_limit=ran_out and cut == reply.answer, thought=reply.thought,
                            thought_tokens=spent if markers is not None else None, thought_unclosed=reply.unclosed)
