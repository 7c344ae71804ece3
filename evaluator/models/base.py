"""The small interface every model adapter offers to the benchmarks (after lm-evaluation-harness)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

from PIL import Image


@dataclass
class GenerationRequest:
    """One prompt: zero or more images and a user text. The adapter applies the chat template."""

    text: str
    images: list[Image.Image] = field(default_factory=list)
    max_new_tokens: int = 32
    temperature: float = 0.0  # 0 = greedy
    stop: list[str] = field(default_factory=list)
    system: str | None = None
    seed: int | None = None
    # earlier turns before the user turn: [{"role": "user"|"assistant", "content": str}, ...]
    history: list[dict] = field(default_factory=list)


@dataclass
class GenerationResult:
    """One completion and how it ended.

    text: the answer, what benchmarks parse (a thinking model's thought taken out, evaluator.models.thinking).
    n_tokens: new tokens the model generated for it (up to its end-of-sequence token, not counting it); None when
    the adapter does not say. hit_limit: it stopped because it reached max_new_tokens, not at its end-of-sequence
    token or a stop string (so the text may be cut off mid-sentence); None when the adapter does not say.
    thought: the reasoning a thinking model wrote before its answer (None: the reply had none); thought_tokens: the
    tokens it spent on it (None: unsaid); thought_unclosed: the reply ended inside its thought, so it has no answer.
    """

    text: str
    n_tokens: int | None = None
    hit_limit: bool | None = None
    prompt_tokens: int | None = None  # tokens of the prompt as the model read it (a served model's usage); None: unsaid
    thought: str | None = None
    thought_tokens: int | None = None
    thought_unclosed: bool = False
    near_ties: list[dict] | None = None  # steps where another batch may pick another token (near_ties.py)

    def near_ties_cell(self) -> str | None:
        """The details cell of its near ties: JSON, "[]" when none was seen, None when nothing watched. (Here, not
        beside NearTieWatch, so that a served run never imports torch.)"""
        return None if self.near_ties is None else json.dumps(self.near_ties, ensure_ascii=False)


@dataclass
class OptionScore:
    """Log-likelihood of one candidate continuation given the prompt."""

    sum_logprob: float
    mean_logprob: float
    n_tokens: int


class ModelAdapter(Protocol):
    model_id: str
    revision: str | None
    dtype: str
    device: str
    has_vision: bool
    batch_size: int
    scoring_path: str  # how score_options computes ("reference": one forward per option)
    generation_path: str  # how generate runs ("dynamic", "static", "static-compiled"; "served": an endpoint's)
    attention: str | None  # the attention implementation ("sdpa", "eager", ...); None where unknown
    sampling: str  # how sampled requests draw (recorded as run.sampling)

    def generate(self, requests: list[GenerationRequest]) -> list[str]:
        """Greedy (or sampled, per request) completions, in the order of `requests`.

        An adapter may also offer generate_results(requests) -> list[GenerationResult], the same completions with
        how each ended; the executor uses it when it is there. Either may take `on_answered`, a callback told the
        indices of each batch as it is answered (the executor's progress then moves inside a call).
        """
        ...

    def score_options(self, request: GenerationRequest, options: list[str]) -> list[OptionScore]:
        """Summed and per-token-mean log-likelihood of each option as the assistant's reply.

        An adapter may also offer score_options_many([(request, options), ...]) -> [scores, ...], the same scores for
        many questions at once; the executor hands it every option-scoring question of a chunk when it is there.
        """
        ...


def cut_at_stop(text: str, stop: list[str]) -> str:
    """Text up to the earliest occurrence of any stop string."""
    cut = len(text)
    for s in stop:
        if s:
            i = text.find(s)
            if 0 <= i < cut:
                cut = i
    return text[:cut]


def ending(new_tokens: list[int], limit: int, eos_ids: set[int]) -> tuple[int, bool]:
    """(tokens generated, whether it ran out of budget) for one row of new token ids: the tokens before the first
    end-of-sequence id within `limit`, and True when there is none and the row reached `limit`."""
    tokens = new_tokens[:limit]
    for index, token in enumerate(tokens):
        if token in eos_ids:
            return index, False
    return len(tokens), len(tokens) >= limit


class UnsupportedModelError(ValueError):
    """The model cannot be loaded by any adapter (architecture, remote code, ...)."""


class DeviceUnavailable(RuntimeError):
    """The device asked for cannot be used (--device cuda without a usable GPU); its message is one line saying what
    was found, shown as is (no traceback)."""
