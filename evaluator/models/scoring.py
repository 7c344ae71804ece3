"""Option scoring: the log-likelihood of each candidate continuation of one prompt.

Inputs are model-agnostic: `prompt_inputs` is the processed prompt (batch of 1, image tokens expanded, on the
model's device, floats in the model's dtype) and `option_ids` holds each option's token ids as a 1-D tensor (what
follows the prompt). Per-token side inputs (attention_mask, token_type_ids, mm_token_type_ids, ...) are extended
over the option tokens with the family's fill (families.Family.fill).

- `score_reference`: one full forward pass over prompt + option for each option (the plain, trusted path).
- `score_shared_prefix`: the prompt is encoded once and its KV cache reused for all options (the fast path).
"""
from __future__ import annotations

import copy
import inspect

import torch

from evaluator.models.base import OptionScore
from evaluator.models.families import LANGUAGE_MODEL, REFERENCE, SIDE_INPUT_FILL, checked_decoders, family

def model_family(model):
    """The declared family of a loaded model (or of a BLIP-2 style model's language model)."""
    config = getattr(model, "config", None)
    return family(getattr(config, "model_type", None), has_vision=True)


def extend_side_inputs(prompt_inputs: dict, option_ids: torch.Tensor, fill=None,
                       last_row: tuple[str, ...] = ()) -> dict:
    """Inputs for prompt + option (batch of 1): input_ids concatenated, per-token side inputs extended (with
    `fill(key)`, by default SIDE_INPUT_FILL's; those named in `last_row` with the prompt's last row)."""
    fill = fill or (lambda key: SIDE_INPUT_FILL.get(key, 0))
    prompt_ids = prompt_inputs["input_ids"][0]
    n_prompt, n_option = prompt_ids.shape[0], option_ids.shape[0]
    inputs = dict(prompt_inputs)
    inputs["input_ids"] = torch.cat([prompt_ids, option_ids]).unsqueeze(0)
    for key, value in prompt_inputs.items():
        if key in last_row and torch.is_tensor(value):
            inputs[key] = torch.cat([value, last_rows(value, 1, n_option)], dim=1)
            continue
        if key == "input_ids" or not torch.is_tensor(value) or value.dim() != 2:
            continue
        if key in SIDE_INPUT_FILL or (value.shape == (1, n_prompt) and key.endswith(("_mask", "_ids"))):
            extra = torch.full((1, n_option), fill(key), dtype=value.dtype, device=value.device)
            inputs[key] = torch.cat([value, extra], dim=1)
    return inputs


@torch.inference_mode()
def score_reference(model, prompt_inputs: dict, option_ids: list[torch.Tensor]) -> list[OptionScore]:
    """One forward pass per option over prompt + option; sums the option tokens' log-probabilities.

    The option's tokens are found by position: everything before the prompt's processed length is masked out.
    """
    n_prompt = prompt_inputs["input_ids"].shape[1]
    declared = model_family(model)
    scores = []
    for ids in option_ids:
        n_tokens = int(ids.shape[0])
        if n_tokens == 0:
            scores.append(OptionScore(0.0, 0.0, 0))
            continue
        inputs = extend_side_inputs(prompt_inputs, ids, declared.fill, declared.last_row_inputs)
        logits = model(**inputs).logits[0].float()
        logprobs = torch.log_softmax(logits[n_prompt - 1:-1], dim=-1)
        total = float(logprobs.gather(1, ids.unsqueeze(1)).sum())
        scores.append(OptionScore(total, total / n_tokens, n_tokens))
    return scores


# ---- shared prefix ---------------------------------------------------------------------------------------------
#
# The prompt (image tokens included) is run once with use_cache=True. Its last position's logits score every
# option's first token; its KV cache, repeated K times, then serves one right-padded batch of the K options (all but
# each option's last token: nothing follows it), whose logits score the remaining tokens. Images are not encoded
# again: the continuation carries text tokens only.
#
# Families are let onto this path by their declaration (families.py: option_scoring, decoder, attention_layers)
# after tests/test_scoring.py checked that the scores equal the reference path's (within 1e-4 in float32) on tiny
# models of each family. Everything else falls back to the reference path, for one of these reasons:
# - undeclared architectures, and decoders no family was checked with;
# - encoder-decoder language models (BLIP-2 / InstructBLIP with Flan-T5, ...): the prompt goes to the encoder and the
#   options are decoded against it, which is another scheme than a decoder-only KV cache;
# - attention layers of a kind not checked with that decoder (a sliding window where only global attention was
#   checked, linear attention, convolutions): their cache may hold more than keys and values, or trim itself.

DEFAULT_MAX_OPTIONS_PER_BATCH = 16


def _text_config(config):
    try:
        return config.get_text_config(decoder=True)
    except (AttributeError, TypeError, ValueError):
        return config


def supports_shared_prefix(model) -> bool:
    """Whether score_shared_prefix is correct for this model: its family takes the shared prefix, and its text decoder
    and attention layer kinds were checked against the reference (tests/test_scoring.py)."""
    config = getattr(model, "config", None)
    declared = model_family(model)
    if declared.option_scoring == REFERENCE:
        return False
    if declared.continuation == LANGUAGE_MODEL and not getattr(config, "use_decoder_only_language_model", True):
        return False  # an encoder-decoder language model (Flan-T5)
    text = _text_config(config)
    checked = checked_decoders().get(getattr(text, "model_type", None))
    if getattr(text, "is_encoder_decoder", False) or checked is None:
        return False
    layer_types = getattr(text, "layer_types", None) or _inferred_layer_types(text)
    if any(kind not in checked for kind in layer_types):
        return False
    if ("sliding_attention" not in checked and getattr(text, "use_sliding_window", False)
            and getattr(text, "sliding_window", None)):
        return False
    return True


def _inferred_layer_types(text) -> list[str]:
    """The layer kinds of a text config without layer_types, as transformers' caches infer them: a sliding window or
    attention chunks set on the config apply to every layer (Mistral, Mixtral); none, full attention."""
    if getattr(text, "sliding_window", None) is not None and getattr(text, "use_sliding_window", True):
        return ["sliding_attention"]
    if getattr(text, "attention_chunk_size", None) is not None:
        return ["chunked_attention"]
    return []


def forward_params(module) -> set[str]:
    try:
        return set(inspect.signature(module.forward).parameters)
    except (TypeError, ValueError):
        return set()


def continuation_module(model):
    """The module that runs the options over the cache: the model itself, or its language model (BLIP-2 style)."""
    if model_family(model).continuation == LANGUAGE_MODEL:
        return model.language_model
    return model


def past_key_values(output):
    cache = getattr(output, "past_key_values", None)
    if cache is None:  # BLIP-2 style outputs keep the language model's output apart
        cache = getattr(getattr(output, "language_model_outputs", None), "past_key_values", None)
    if cache is None:
        raise RuntimeError("the model returned no past_key_values with use_cache=True")
    return cache


def rebatched_cache(cache, layer_batch, other_caches):
    """A cache whose batch is made from `cache`'s, `cache` itself left as it is (reused per chunk): each layer's keys
    and values become layer_batch(tensor) (a DynamicCache of DynamicLayers: updates replace a layer's tensors, via
    torch.cat, rather than write into them, so shallow copies of the layers are enough). Linear-attention layers
    (Qwen3.5's Gated DeltaNet: a conv and a recurrent state per row, which transformers has no batch_repeat_interleave
    or batch_select_indices for) get fresh copies of layer_batch(state), as their updates write into the states in
    place. Any other cache is deep-copied and other_caches(copy) rebatches it in place."""
    from transformers.cache_utils import DynamicCache, DynamicLayer, LinearAttentionLayer

    kinds = (DynamicLayer, LinearAttentionLayer)
    if isinstance(cache, DynamicCache) and all(type(layer) in kinds for layer in cache.layers):
        rebatched = copy.copy(cache)
        rebatched.layers = []
        for layer in cache.layers:
            layer = copy.copy(layer)
            if type(layer) is LinearAttentionLayer:
                _rebatch_linear_layer(layer, layer_batch)
            elif layer.is_initialized and layer.keys is not None and layer.keys.numel():
                layer.keys, layer.values = layer_batch(layer.keys), layer_batch(layer.values)
            rebatched.layers.append(layer)
        return rebatched
    rebatched = copy.deepcopy(cache)
    other_caches(rebatched)
    return rebatched


def _rebatch_linear_layer(layer, layer_batch) -> None:
    """A shallow copy of a LinearAttentionLayer made to hold its own rebatched states (its flag dicts copied too)."""
    for name, value in list(vars(layer).items()):
        if isinstance(value, dict):
            setattr(layer, name, dict(value))
    for states in (layer.conv_states, layer.recurrent_states):
        for index, state in states.items():
            if state is not None:
                states[index] = layer_batch(state).clone(memory_format=torch.contiguous_format)


def _repeat_cache(cache, repeats: int):
    """A cache holding `repeats` copies of `cache`'s batch of 1 (expanded, not copied)."""
    return rebatched_cache(cache, lambda tensor: tensor.expand(repeats, *tensor.shape[1:]),
                           lambda other: other.batch_repeat_interleave(repeats))


def per_token_keys(inputs: dict) -> list[str]:
    """Side inputs aligned with input_ids (besides input_ids and attention_mask), as extend_side_inputs finds them."""
    shape = tuple(inputs["input_ids"].shape)
    return [key for key, value in inputs.items()
            if key not in ("input_ids", "attention_mask") and torch.is_tensor(value) and value.dim() == 2
            and (key in SIDE_INPUT_FILL or (tuple(value.shape) == shape and key.endswith(("_mask", "_ids"))))]


def last_rows(value: torch.Tensor, rows: int, width: int, owners: torch.Tensor | None = None) -> torch.Tensor:
    """A per-token side input (batch, tokens, ...) over `width` continuation tokens of `rows` rows: each row's last
    position repeated (Family.last_row_inputs), the rows taken from `owners` (default: the one prompt's row)."""
    last = value[:, -1:] if owners is None else value[owners, -1:]
    return last.expand(rows, width, *value.shape[2:])


def mrope_starts(model, inputs: dict) -> torch.Tensor:
    """M-RoPE: the position that follows each prompt (the rope index's largest position + 1; without images the
    padded length, as the model's own text positions count)."""
    input_ids = inputs["input_ids"]
    if inputs.get("image_grid_thw") is None and inputs.get("video_grid_thw") is None:
        return torch.full((input_ids.shape[0],), input_ids.shape[1], dtype=torch.long, device=input_ids.device)
    inner = getattr(model, "model", model)
    get_rope_index = getattr(inner, "get_rope_index", None) or model.get_rope_index
    accepted = set(inspect.signature(get_rope_index).parameters)
    kwargs = {k: v for k, v in inputs.items() if k in accepted and k != "input_ids"}
    positions, _ = get_rope_index(input_ids, **kwargs)
    return positions.amax(dim=(0, 2)).long() + 1


def log_probs_of(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log_softmax(logits)[..., target], without materialising the whole log-softmax."""
    logits = logits.float()
    return logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)


@torch.inference_mode()
def score_shared_prefix(model, prompt_inputs: dict, option_ids: list[torch.Tensor],
                        max_options_per_batch: int | None = DEFAULT_MAX_OPTIONS_PER_BATCH) -> list[OptionScore]:
    """Encode the prompt once and score every option against its KV cache.

    The options run as right-padded batches of at most `max_options_per_batch` (None: all at once) over the prompt's
    cache repeated to the batch size. Empty options score 0 with n_tokens 0, as in score_reference.
    """
    scores: list[OptionScore | None] = [None] * len(option_ids)
    todo = []
    for i, ids in enumerate(option_ids):
        if int(ids.shape[0]) == 0:
            scores[i] = OptionScore(0.0, 0.0, 0)
        else:
            todo.append(i)
    if not todo:
        return scores  # type: ignore[return-value]

    input_ids = prompt_inputs["input_ids"]
    n_prompt = int(input_ids.shape[1])
    device = input_ids.device
    prompt_mask = prompt_inputs.get("attention_mask")
    if prompt_mask is None:
        prompt_mask = torch.ones_like(input_ids)

    # 1. The prompt, once: its cache, and the distribution of the first option token.
    prefill = dict(prompt_inputs, use_cache=True)
    if "logits_to_keep" in forward_params(model):
        prefill["logits_to_keep"] = 1
    output = model(**prefill)
    first = output.logits[0, -1].float()
    first = first - torch.logsumexp(first, dim=-1)
    cache = past_key_values(output)
    del output

    # 2. The options over that cache, longest first so that each batch pads little.
    continuation = continuation_module(model)
    declared = model_family(model)
    side_keys = [] if continuation is not model else per_token_keys(prompt_inputs)
    last_row_keys = [key for key in declared.last_row_inputs if torch.is_tensor(prompt_inputs.get(key))]
    mrope = model_family(model).mrope
    after_prompt = int(mrope_starts(model, prompt_inputs)[0]) if mrope else n_prompt
    todo.sort(key=lambda i: -int(option_ids[i].shape[0]))
    step = len(todo) if not max_options_per_batch else max(1, int(max_options_per_batch))
    for start in range(0, len(todo), step):
        chunk = todo[start:start + step]
        lengths = [int(option_ids[i].shape[0]) for i in chunk]
        totals = [float(first[option_ids[i][0]]) for i in chunk]
        width = max(lengths) - 1  # each option's last token is never fed: nothing follows it
        if width > 0:
            k = len(chunk)
            fed = torch.zeros((k, width), dtype=input_ids.dtype, device=device)
            real = torch.zeros((k, width), dtype=torch.bool, device=device)
            for row, i in enumerate(chunk):
                ids = option_ids[i][:-1]
                fed[row, :ids.shape[0]] = ids
                fed[row, ids.shape[0]:] = ids[-1] if ids.shape[0] else option_ids[i][0]  # any text token
                real[row, :ids.shape[0]] = True
            mask = torch.cat([prompt_mask.expand(k, -1), real.to(prompt_mask.dtype)], dim=1)
            inputs = {"input_ids": fed, "attention_mask": mask, "past_key_values": _repeat_cache(cache, k),
                      "use_cache": True}
            for key in side_keys:
                value = prompt_inputs[key]
                inputs[key] = torch.full((k, width), declared.fill(key), dtype=value.dtype, device=device)
            for key in last_row_keys:
                inputs[key] = last_rows(prompt_inputs[key], k, width)
            if mrope:
                positions = torch.arange(after_prompt, after_prompt + width, device=device)
                inputs["position_ids"] = positions.view(1, 1, -1).expand(3, k, -1)
            logits = continuation(**inputs).logits
            targets = torch.zeros_like(fed)
            for row, i in enumerate(chunk):
                targets[row, :lengths[row] - 1] = option_ids[i][1:]
            token_logprobs = log_probs_of(logits, targets)
            for row in range(k):
                totals[row] += float(token_logprobs[row, :lengths[row] - 1].sum())
        for i, total, n in zip(chunk, totals, lengths):
            scores[i] = OptionScore(total, total / n, n)
    return scores  # type: ignore[return-value]
