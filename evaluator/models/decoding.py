"""How a benchmark decodes, whatever the model's generation_config.json asks.

Many checkpoints ship a generation_config.json that asks for sampling, a temperature, a repetition penalty or a
max_length (most Qwen and GLM ones do). generate() would apply every such field silently. Here each field that changes
which tokens come out is decided once:

- overridden (OVERRIDDEN): the benchmark's value is passed to every generate call. A benchmark decodes greedily, or
  samples at its own temperature from a seeded stream per item and repeat (evaluator.models.sampling), with no
  penalty, no forced or suppressed tokens and one beam, as the benchmarks' papers score them; each benchmark sets its
  own max_new_tokens (a thinking model's budget on top), which decides over max_length;
- honoured (HONOURED): the model's own end-of-sequence, padding and start tokens, which say where its reply ends.

`record(generation_config)` is what results.json keeps as run.decoding: for every decided field the model asked for
(a value in its generation_config that differs from transformers' default), the value it asked, the value used and
the decision; and the rule as a whole. `generation_problem(config)` says why a generation_config.json's object cannot
be read as decoding reads it (a token id that is no whole number, a length that is none, a probability out of its
range), before any model loads.
"""
from __future__ import annotations

import json
from typing import Any

OVERRIDE, HONOUR = "overridden", "honoured"

# field -> the value every generate call passes (None: no such processor), over whatever the model asks
OVERRIDDEN: dict[str, Any] = {
    "do_sample": False,  # greedy; a sampled request draws from its own stream, not generate's sampler
    "temperature": None, "top_k": None, "top_p": None, "min_p": None, "typical_p": None,
    "epsilon_cutoff": None, "eta_cutoff": None, "top_h": None,
    "repetition_penalty": None, "encoder_repetition_penalty": None, "no_repeat_ngram_size": None,
    "encoder_no_repeat_ngram_size": None, "sequence_bias": None, "bad_words_ids": None,
    "suppress_tokens": None, "begin_suppress_tokens": None, "forced_bos_token_id": None,
    "forced_eos_token_id": None, "exponential_decay_length_penalty": None, "renormalize_logits": False,
    "min_length": None, "min_new_tokens": None, "max_length": None, "max_time": None,
    "num_beams": 1, "num_beam_groups": 1, "diversity_penalty": None, "length_penalty": None,
    "penalty_alpha": None, "dola_layers": None, "guidance_scale": None, "num_return_sequences": 1,
    "watermarking_config": None, "remove_invalid_values": False,
}
# the model's own tokens that end (or start, or pad) its reply: kept as it says
HONOURED = ("eos_token_id", "pad_token_id", "bos_token_id", "decoder_start_token_id", "stop_strings")
RULE = ("The benchmark decodes: greedy, or sampled at its own temperature from a seeded stream per item and repeat; "
        "no repetition penalty, n-gram ban, minimum length, beams or forced/suppressed tokens; each benchmark's "
        "max_new_tokens (plus a thinking model's budget) over any max_length. The model's own end-of-sequence, "
        "padding and start tokens are honoured.")


# the fields decoding (ours or transformers') reads from a generation_config.json, by the kind each must be
TOKEN_IDS = ("eos_token_id", "pad_token_id", "bos_token_id", "decoder_start_token_id", "forced_bos_token_id",
             "forced_eos_token_id")  # a whole number, or (eos) a list of them
TOKEN_LISTS = ("suppress_tokens", "begin_suppress_tokens")  # a list of token ids
WHOLE = ("max_length", "max_new_tokens", "min_length", "min_new_tokens", "top_k", "num_beams", "num_beam_groups",
         "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "num_return_sequences")  # whole numbers, 0 or more
PROBABILITIES = ("top_p", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff")  # from 0 to 1
NON_NEGATIVE = ("temperature", "repetition_penalty", "encoder_repetition_penalty", "diversity_penalty")
SWITCHES = ("do_sample", "renormalize_logits", "remove_invalid_values")  # true/false


def _whole(value: Any) -> bool:
    return type(value) is int and value >= 0


def _number(value: Any) -> bool:
    return type(value) in (int, float) and value == value and abs(value) != float("inf")


def _field_problem(key: str, value: Any) -> str:
    """What is wrong with one field's value ("" nothing), in words."""
    if key in TOKEN_IDS and not (_whole(value) or isinstance(value, list) and all(map(_whole, value))):
        return "not a token id (a whole number 0 or more) or a list of them"
    if key in TOKEN_LISTS and not (isinstance(value, list) and all(map(_whole, value))):
        return "not a list of token ids (whole numbers 0 or more)"
    if key == "bad_words_ids" and not (isinstance(value, list) and all(
            isinstance(ids, list) and all(map(_whole, ids)) for ids in value)):
        return "not a list of lists of token ids"
    if key in WHOLE and not _whole(value):
        return "not a whole number 0 or more"
    if key in PROBABILITIES and not (_number(value) and 0 <= value <= 1):
        return "not a probability from 0 to 1"
    if key in NON_NEGATIVE and not (_number(value) and value >= 0):
        return "not a number 0 or more"
    if key in SWITCHES and not isinstance(value, bool):
        return "not true or false"
    if key == "stop_strings" and not (isinstance(value, str) or isinstance(value, list) and all(
            isinstance(text, str) for text in value)):
        return "not text or a list of texts"
    return ""


def generation_problem(config: dict) -> str:
    """Why a generation_config.json's object cannot be decoded by ("" when it can): its first field of the wrong
    kind, as "<field> is <its JSON, at most 60 characters, escaped>, <what it should be>". Null is unset, never
    wrong."""
    for key, value in config.items():
        problem = "" if value is None else _field_problem(key, value)
        if problem:
            shown = json.dumps(value)
            return f"{key} is {shown[:60]}{'…' if len(shown) > 60 else ''}, {problem}"
    return ""


def generate_kwargs() -> dict[str, Any]:
    """What every generate call passes so that the model's generation_config decides nothing overridden."""
    return dict(OVERRIDDEN)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def asked(generation_config: Any) -> dict[str, Any]:
    """The decoding fields a model's generation_config sets to something other than transformers' defaults."""
    if generation_config is None:
        return {}
    try:
        diff = generation_config.to_diff_dict()
    except Exception:  # noqa: BLE001 - a config that cannot say: nothing asked
        return {}
    decided = set(OVERRIDDEN) | set(HONOURED)
    return {key: _jsonable(value) for key, value in diff.items() if key in decided and value is not None}


def record(generation_config: Any, max_new_tokens: str = "each benchmark's max_new_tokens") -> dict[str, Any]:
    """run.decoding: the rule, and each field the model asked for with its value, the value used and the decision."""
    fields = {}
    for key, value in sorted(asked(generation_config).items()):
        if key in HONOURED:
            fields[key] = {"asked": value, "used": value, "decision": HONOUR}
        else:
            used = max_new_tokens if key == "max_length" else OVERRIDDEN[key]
            fields[key] = {"asked": value, "used": _jsonable(used), "decision": OVERRIDE}
    return {"rule": RULE, "fields": fields}
