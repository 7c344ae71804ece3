"""Option scoring for many questions at once: the prompts of a batch of questions prefilled together (left-padded,
with their attention mask, images batched through the processor once), then every option of every question scored
together over the prompts' KV caches.

It computes what scoring.score_shared_prefix computes for one question, question by question (tests/test_scoring.py
checks every cleared family within 1e-4 in float32): an option's first token is scored from the last position of
its prompt, its other tokens by one continuation forward over the rows of the cache its question owns. Left padding
shifts every position of a row by the same amount, which rotary positions do not see; M-RoPE models get their
continuation positions from their own rope index, and learned positions (OPT) are counted from the attention mask.
"""
from __future__ import annotations

import torch

from evaluator.models.base import OptionScore
from evaluator.models.families import BATCHED
from evaluator.models.scoring import (continuation_module, forward_params, last_rows, log_probs_of, model_family,
                                      mrope_starts, past_key_values, per_token_keys, rebatched_cache,
                                      supports_shared_prefix)

# Families declared BATCHED (families.py) had their batched scores checked against one question at a time
# (tests/test_scoring.py); others score their questions one by one (InstructBLIP: its processor puts the query tokens
# in front of the left padding, which moves the rotary distance between them and the text; BLIP-2's OPT counts its
# learned positions from the attention mask, so it is not moved).
MIN_ROWS_PER_FORWARD = 16  # continuation rows per forward at least (a batch's questions x options otherwise)


def supports_batched(model) -> bool:
    """Whether score_questions is correct for this model: a shared-prefix model of a family declared BATCHED."""
    return model_family(model).option_scoring == BATCHED and supports_shared_prefix(model)


def select_cache_rows(cache, rows: torch.Tensor):
    """A cache whose batch is `cache`'s rows `rows` (a row may repeat); `cache` itself is left as it is."""
    return rebatched_cache(cache, lambda tensor: tensor.index_select(0, rows),
                           lambda other: other.batch_select_indices(rows))


@torch.inference_mode()
def score_questions(model, inputs: dict, option_ids: list[list[torch.Tensor | list[int]]],
                    max_rows: int | None = None) -> list[list[OptionScore]]:
    """Each question's option scores. `inputs` are the questions' prompts processed as one left-padded batch (on
    the model's device, floats in its dtype); `option_ids[q]` holds question q's options as token ids (lists, or
    1-D tensors). Continuation rows run `max_rows` at a time (default: the number of questions, at least
    MIN_ROWS_PER_FORWARD). The rows are assembled on the host and sent once per forward, and the scores read back
    once per forward, so the loop does not wait on the GPU option by option."""
    input_ids = inputs["input_ids"]
    batch = int(input_ids.shape[0])
    if len(option_ids) != batch:
        raise ValueError(f"{batch} prompts but options for {len(option_ids)} questions")
    device = input_ids.device
    mask = inputs.get("attention_mask")
    if mask is None:
        mask = torch.ones_like(input_ids)
    options = [[ids.tolist() if torch.is_tensor(ids) else list(ids) for ids in question] for question in option_ids]

    # 1. Every prompt at once: its cache rows, and the distribution of each question's first option token.
    prefill = dict(inputs, use_cache=True)
    if "logits_to_keep" in forward_params(model):
        prefill["logits_to_keep"] = 1
    output = model(**prefill)
    first = output.logits[:, -1].float()
    first = first - torch.logsumexp(first, dim=-1, keepdim=True)
    cache = past_key_values(output)
    del output

    scores: list[list[OptionScore | None]] = [[None] * len(question) for question in options]
    singles, rows = [], []
    for q, question in enumerate(options):
        for i, ids in enumerate(question):
            if not ids:
                scores[q][i] = OptionScore(0.0, 0.0, 0)
            else:
                (singles if len(ids) == 1 else rows).append((q, i))
    if singles:
        owners = torch.tensor([q for q, _ in singles], device=device)
        tokens = torch.tensor([options[q][i][0] for q, i in singles], device=device)
        for (q, i), total in zip(singles, first[owners, tokens].tolist()):
            scores[q][i] = OptionScore(total, total, 1)

    # 2. Every longer option over its question's cache rows, longest first so that each forward pads little.
    continuation = continuation_module(model)
    declared = model_family(model)
    side_keys = [] if continuation is not model else per_token_keys(inputs)
    last_row_keys = [key for key in declared.last_row_inputs if torch.is_tensor(inputs.get(key))]
    starts = mrope_starts(model, inputs) if declared.mrope else None
    rows.sort(key=lambda row: -len(options[row[0]][row[1]]))
    step = max_rows or max(batch, MIN_ROWS_PER_FORWARD)
    for begin in range(0, len(rows), step):
        chunk = rows[begin:begin + step]
        k = len(chunk)
        width = max(len(options[q][i]) for q, i in chunk) - 1  # an option's last token is never fed
        fed, real, targets = [], [], []
        for q, i in chunk:
            ids = options[q][i]
            pad = width - (len(ids) - 1)
            fed.append(ids[:-1] + [ids[-2]] * pad)  # any text token under the padding
            real.append([1] * (len(ids) - 1) + [0] * pad)
            targets.append(ids[1:] + [0] * pad)
        real_t = torch.tensor(real, dtype=mask.dtype, device=device)
        owners = torch.tensor([q for q, _ in chunk], device=device)
        step_inputs = {"input_ids": torch.tensor(fed, dtype=input_ids.dtype, device=device),
                       "attention_mask": torch.cat([mask[owners], real_t], dim=1),
                       "past_key_values": select_cache_rows(cache, owners), "use_cache": True}
        for key in side_keys:
            value = inputs[key]
            step_inputs[key] = torch.full((k, width), declared.fill(key), dtype=value.dtype, device=device)
        for key in last_row_keys:
            step_inputs[key] = last_rows(inputs[key], k, width, owners)
        if starts is not None:
            positions = starts[owners].view(-1, 1) + torch.arange(width, device=device)
            step_inputs["position_ids"] = positions.unsqueeze(0).expand(3, k, width)
        token_logprobs = log_probs_of(continuation(**step_inputs).logits,
                                      torch.tensor(targets, dtype=input_ids.dtype, device=device))
        firsts = first[owners, torch.tensor([options[q][i][0] for q, i in chunk], device=device)]
        totals = (firsts + (token_logprobs * real_t).sum(dim=1)).tolist()
        for (q, i), total in zip(chunk, totals):
            n = len(options[q][i])
            scores[q][i] = OptionScore(total, total / n, n)
    return scores  # type: ignore[return-value]
