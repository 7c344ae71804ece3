"""Option scoring: the log-likelihood of each candidate continuation of one prompt.

Inputs are model-agnostic: `prompt_inputs` is the processed prompt (batch of 1, image tokens expanded, on the
model's device, floats in the model's dtype) and `option_ids` holds each option's token ids as a 1-D tensor (what
follows the prompt). Per-token side inputs (attention_mask, token_type_ids, mm_token_type_ids, ...) are extended
over the option tokens with SIDE_INPUT_FILL.

- `score_reference`: one full forward pass over prompt + option for each option (the plain, trusted path).
- `score_shared_prefix`: the prompt is encoded once and its KV cache reused for all options (the fast path).
"""
from __future__ import annotations

import torch

from evaluator.models.base import OptionScore

# Per-token side inputs and the value used for appended option tokens (PaliGemma marks its suffix with
# token_type_ids=1; Qwen2-VL marks text tokens with mm_token_type_ids=0).
SIDE_INPUT_FILL = {"attention_mask": 1, "token_type_ids": 1, "mm_token_type_ids": 0}


def extend_side_inputs(prompt_inputs: dict, option_ids: torch.Tensor) -> dict:
    """Inputs for prompt + option (batch of 1): input_ids concatenated, per-token side inputs extended."""
    prompt_ids = prompt_inputs["input_ids"][0]
    n_prompt, n_option = prompt_ids.shape[0], option_ids.shape[0]
    inputs = dict(prompt_inputs)
    inputs["input_ids"] = torch.cat([prompt_ids, option_ids]).unsqueeze(0)
    for key, value in prompt_inputs.items():
        if key == "input_ids" or not torch.is_tensor(value) or value.dim() != 2:
            continue
        if key in SIDE_INPUT_FILL or (value.shape == (1, n_prompt) and key.endswith(("_mask", "_ids"))):
            fill = torch.full((1, n_option), SIDE_INPUT_FILL.get(key, 0), dtype=value.dtype, device=value.device)
            inputs[key] = torch.cat([value, fill], dim=1)
    return inputs


@torch.inference_mode()
def score_reference(model, prompt_inputs: dict, option_ids: list[torch.Tensor]) -> list[OptionScore]:
    """One forward pass per option over prompt + option; sums the option tokens' log-probabilities.

    The option's tokens are found by position: everything before the prompt's processed length is masked out.
    """
    n_prompt = prompt_inputs["input_ids"].shape[1]
    scores = []
    for ids in option_ids:
        n_tokens = int(ids.shape[0])
        if n_tokens == 0:
            scores.append(OptionScore(0.0, 0.0, 0))
            continue
        inputs = extend_side_inputs(prompt_inputs, ids)
        logits = model(**inputs).logits[0].float()
        logprobs = torch.log_softmax(logits[n_prompt - 1:-1], dim=-1)
        total = float(logprobs.gather(1, ids.unsqueeze(1)).sum())
        scores.append(OptionScore(total, total / n_tokens, n_tokens))
    return scores


def supports_shared_prefix(model) -> bool:
    """Whether score_shared_prefix is correct for this architecture (checked against the reference in tests)."""
    return False


@torch.inference_mode()
def score_shared_prefix(model, prompt_inputs: dict, option_ids: list[torch.Tensor]) -> list[OptionScore]:
    """Encode the prompt once and score every option against its KV cache."""
    raise NotImplementedError("shared-prefix scoring is not available yet; use score_reference")
