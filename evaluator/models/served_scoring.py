"""Option scoring through a server that returns prompt log-probabilities (vLLM's OpenAI server, SGLang's), for the
served adapter.

An option is scored as the in-process adapter scores it: the log-likelihood of its tokens as the assistant's reply
after the chat-templated prompt. Through a chat-completions server that means two kinds of request, each one prefill
(max_tokens 1) asking for the log-probability of every prompt token (`prompt_logprobs: 0`) and the prompt's token ids
(`return_token_ids`):

- the question's prompt with its generation prompt (as a generation request renders it): where the reply starts;
- per option, the conversation with the option as the assistant's final message, continued (`add_generation_prompt:
  false, continue_final_message: true`): the server renders it with the model's own template and reads it.

SGLang's chat answers the prompt's token ids (`return_prompt_token_ids`) but not their log-probabilities: each
option's ids then go to its native /generate (`return_logprob`, `logprob_start_len: 0`, the images again as
`image_data`), which returns them (`meta_info.input_token_logprobs`).

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
from typing import Any, Callable

from evaluator.models.base import OptionScore

PROMPT_LOGPROBS = "prompt_logprobs"  # scoring_path of a server answering vLLM's prompt_logprobs
INPUT_LOGPROBS = "input_logprobs"  # scoring_path of SGLang's: the chat's prompt ids, then /generate's input logprobs
NO_SCORING = "none"  # scoring_path of a server without prompt log-probabilities: generation only
# what every scoring request asks besides the prompt: vLLM's fields and SGLang's (each server ignores the other's)
SCORED_FIELDS = {"prompt_logprobs": 0, "return_token_ids": True, "return_prompt_token_ids": True}
NO_PROMPT_LOGPROBS = ("gives no prompt log-probabilities (vLLM's prompt_logprobs, SGLang's return_logprob with "
                      "logprob_start_len)")


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


def sglang_prompt_ids(body: dict) -> list[int]:
    """The prompt's token ids an SGLang chat completion returns (`return_prompt_token_ids`: its choice's
    prompt_token_ids); NotScored without them."""
    choices = body.get("choices")
    ids = choices[0].get("prompt_token_ids") if isinstance(choices, list) and choices and isinstance(
        choices[0], dict) else None
    if not isinstance(ids, list) or not ids or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise NotScored("no prompt_token_ids in the answer")
    return ids


def generate_body(ids: list[int], images: list[str]) -> dict[str, Any]:
    """SGLang's native /generate request that reads every prompt token's log-probability (one token decoded)."""
    body: dict[str, Any] = {"input_ids": ids, "sampling_params": {"max_new_tokens": 1, "temperature": 0.0},
                            "return_logprob": True, "logprob_start_len": 0}
    if images:
        body["image_data"] = list(images)
    return body


def sglang_tokens(ids: list[int], body: dict) -> list[PromptToken]:
    """The prompt from /generate's meta_info.input_token_logprobs ([logprob, token id, text] per prompt token, the
    first logprob None), checked against the ids it was sent; NotScored when they do not agree."""
    meta = body.get("meta_info")
    rows = meta.get("input_token_logprobs") if isinstance(meta, dict) else None
    if not isinstance(rows, list) or len(rows) != len(ids):
        raise NotScored("no input_token_logprobs for every prompt token in the answer")
    tokens = []
    for index, (row, token) in enumerate(zip(rows, ids)):
        if not isinstance(row, list) or len(row) < 2 or row[1] != token:
            raise NotScored(f"input_token_logprobs that do not match the prompt's token {index}")
        logprob = None if index == 0 else _number(row[0])
        if index and logprob is None:
            raise NotScored(f"a log-probability that is no number for the prompt's token {index}")
        text = row[2] if len(row) > 2 and isinstance(row[2], str) else None
        tokens.append(PromptToken(token, logprob, text))
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


def score_tokens(prefix: list[int], joints: list[list[PromptToken]], options: list[str]) -> list[OptionScore]:
    """Every option's score: `prefix` the question's prompt ids, `joints` each option's conversation as read."""
    return [option_score(joint, option_start(prefix, joint, option)) for option, joint in zip(options, joints)]


def score_from_answers(prefix_body: dict, option_bodies: list[dict], options: list[str]) -> list[OptionScore]:
    """Every option's score from vLLM's answers: the question's prompt, then each option's conversation."""
    prefix = [token.id for token in prompt_tokens(prefix_body)]
    return score_tokens(prefix, [prompt_tokens(body) for body in option_bodies], options)


Chat = Callable[[list[dict], dict[str, Any]], dict]  # (messages, extra fields) -> a chat completion's body
Generate = Callable[[dict[str, Any]], dict]  # a /generate body -> its answer


def probe(chat: Chat, generate: Generate, text: str) -> str:
    """The scoring path a server offers, read on a short conversation (the user's `text`, a reply "OK" continued):
    PROMPT_LOGPROBS (vLLM's), INPUT_LOGPROBS (SGLang's), or NotScored saying what it lacked."""
    body = chat(with_option([{"role": "user", "content": text}], "OK"), option_params())
    try:
        prompt_tokens(body)
        return PROMPT_LOGPROBS
    except NotScored as vllm:
        try:
            ids = sglang_prompt_ids(body)
        except NotScored:
            raise vllm from None
    sglang_tokens(ids, generate(generate_body(ids, [])))
    return INPUT_LOGPROBS


def score(path: str, chat: Chat, generate: Generate, messages: list[dict], images: list[str],
          options: list[str]) -> list[OptionScore]:
    """Every (non-empty) option's score through the server's `path`: the question's prompt read once, then each
    option's conversation (and, on SGLang, its /generate)."""
    prefix = chat(messages, prefix_params())
    if path == PROMPT_LOGPROBS:
        return score_from_answers(prefix, [chat(with_option(messages, o), option_params()) for o in options], options)
    joints = []
    for option in options:
        ids = sglang_prompt_ids(chat(with_option(messages, option), option_params()))
        joints.append(sglang_tokens(ids, generate(generate_body(ids, images))))
    return score_tokens(sglang_prompt_ids(prefix), joints, options)
