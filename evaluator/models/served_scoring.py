"""Option scoring through a server that returns prompt log-probabilities (vLLM's OpenAI server), for the served adapter.

An option is scored as the in-process adapter scores it: the log-likelihood of its tokens as the assistant's reply
after the chat-templated prompt. Through a chat-completions server that means two kinds of request, each one prefill
(max_tokens 1) asking for the log-probability of every prompt token (`prompt_logprobs: 0`) and the prompt's token ids
(`return_token_ids`):

- the question's prompt with its generation prompt (as a generation request renders it): where the reply starts;
- per option, the conversation with the option as the assistant's final message, continued (`add_generation_prompt:
  false, continue_final_message: true`): the server renders it with the model's own template and reads it.

The option's tokens are read from the server's own prompt token ids, never re-tokenized here: those of the option
request after the question's prompt (where the two part, the first token that differs; a template that writes more
between its generation prompt and a reply, such as an empty thought, is passed over by the tokens' own text, which
must still cover the option). The option's score is the sum (and mean) of those tokens' log-probabilities.

It equals the in-process score where the template writes a reply right after its generation prompt (most templates);
a template that writes a reply otherwise (a space after "ASSISTANT:") scores the option as that template places it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evaluator.models.base import OptionScore

PROMPT_LOGPROBS = "prompt_logprobs"  # scoring_path of a server answering vLLM's prompt_logprobs
NO_SCORING = "none"  # scoring_path of a server without prompt log-probabilities: generation only
SCORED_FIELDS = {"prompt_logprobs": 0, "return_token_ids": True}  # what every scoring request asks besides the prompt
NO_PROMPT_LOGPROBS = "gives no prompt log-probabilities (vLLM's prompt_logprobs)"


class NotScored(ValueError):
    """A scoring answer without what scoring reads (its one line says what was missing)."""


@dataclass(frozen=True)
class PromptToken:
    """One token of a prompt as the server read it: its id, its log-probability given the tokens before it (None for
    the first) and its text as the server decoded it (None where unsaid)."""

    id: int
    logprob: float | None
    text: str | None


def prefix_params() -> dict[str, Any]:
    """The extra body of the request that reads the question's prompt (its generation prompt added, as when asked)."""
    return {**SCORED_FIELDS, "add_generation_prompt": True}


def option_params() -> dict[str, Any]:
    """The extra body of an option's request: its final assistant message continued, not a new reply."""
    return {**SCORED_FIELDS, "add_generation_prompt": False, "continue_final_message": True}


def with_option(messages: list[dict], option: str) -> list[dict]:
    """The conversation with `option` as the assistant's final message."""
    return [*messages, {"role": "assistant", "content": option}]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else -9999.0  # vLLM sends -inf as -9999.0


def _entry(position: Any, token: int | None) -> tuple[int, float | None, str | None]:
    """(id, log-probability, text) of one prompt_logprobs position: the entry of `token` (the prompt's own token at
    that position), else the only entry (prompt_logprobs 0 sends the prompt's token alone)."""
    if not isinstance(position, dict) or not position:
        raise NotScored("a prompt position without log-probabilities")
    key = str(token) if token is not None else None
    if key is None:
        if len(position) != 1:
            raise NotScored("prompt log-probabilities without the prompt's token ids")
        key = next(iter(position))
    found = position.get(key)
    if not isinstance(found, dict):
        raise NotScored(f"no log-probability for the prompt's token {key}")
    logprob = _number(found.get("logprob"))
    if logprob is None:
        raise NotScored(f"a log-probability that is no number for the prompt's token {key}")
    text = found.get("decoded_token")
    try:
        return int(key), logprob, text if isinstance(text, str) else None
    except ValueError:
        raise NotScored(f"a prompt token id that is no integer: {key[:40]!r}") from None


def prompt_tokens(body: dict) -> list[PromptToken]:
    """The prompt as the server read it, from a chat completion's `prompt_token_ids` and `prompt_logprobs` (vLLM's);
    NotScored when they are missing or do not agree."""
    logprobs = body.get("prompt_logprobs")
    if not isinstance(logprobs, list) or not logprobs:
        raise NotScored("no prompt_logprobs in the answer")
    ids = body.get("prompt_token_ids")
    if ids is not None and (not isinstance(ids, list) or len(ids) != len(logprobs)
                            or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
        raise NotScored("prompt_token_ids that do not match prompt_logprobs")
    tokens = []
    for index, position in enumerate(logprobs):
        token = ids[index] if ids is not None else None
        if index == 0 and position is None:  # nothing before the first token
            if token is None:
                raise NotScored("the prompt's first token id is unsaid (no prompt_token_ids)")
            tokens.append(PromptToken(token, None, None))
            continue
        tokens.append(PromptToken(*_entry(position, token)))
    return tokens


def option_start(prefix: list[int], joint: list[PromptToken], option: str) -> int:
    """Where the option's tokens start in `joint` (the conversation with the option as the reply): after the tokens it
    shares with `prefix` (the question's prompt), then past any token the template wrote before the reply while the
    tokens after it still spell the whole option (by the server's own token texts, where it sent them)."""
    shared = 0
    for a, b in zip(prefix, joint):
        if a != b.id:
            break
        shared += 1
    start = min(shared, len(joint))
    wanted = option.strip()
    texts = [token.text for token in joint]
    if wanted and None not in texts[start:]:
        while start < len(joint) - 1 and "".join(texts[start + 1:]).rstrip().endswith(wanted):
            start += 1
    return start


def option_score(joint: list[PromptToken], start: int) -> OptionScore:
    """The summed and mean log-probability of the joint's tokens from `start` (the option's)."""
    scored = [token.logprob for token in joint[max(1, start):] if token.logprob is not None]
    if not scored:
        return OptionScore(0.0, 0.0, 0)
    total = float(sum(scored))
    return OptionScore(total, total / len(scored), len(scored))


def score_from_answers(prefix_body: dict, option_bodies: list[dict], options: list[str]) -> list[OptionScore]:
    """Every option's score from the server's answers: the question's prompt, then each option's conversation."""
    prefix = [token.id for token in prompt_tokens(prefix_body)]
    scores = []
    for option, body in zip(options, option_bodies):
        joint = prompt_tokens(body)
        scores.append(option_score(joint, option_start(prefix, joint, option)))
    return scores
