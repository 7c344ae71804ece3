"""Which architectures run: the facts of a model folder's config.json (architecture, model_type, has_vision), read
without loading weights (model_config.read_config: a hostile file is "unreadable config.json: <reason>"), and the
refusal of remote code (an auto_map at any depth) and of families this leaderboard does not run."""
from __future__ import annotations

from pathlib import Path
from functools import lru_cache
from typing import Any

from evaluator.models.base import UnsupportedModelError
from evaluator.models.families import FAMILIES
from evaluator.models.family_table import TABLE, refusal
from evaluator.models.model_config import named, quoted, read_config, read_generation_config, remote_code


def _not_text_generators() -> set[str]:
    """Model types in the causal-LM mapping that are encoders or encoder-decoders, not decoder-only LMs."""
    from transformers.models.auto import modeling_auto as auto

    return (set(auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES) | set(auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES)
            | {"bert-generation", "trocr", "xlnet"})


def describe_model_folder(folder: Path | str) -> dict[str, Any]:
    """Architecture facts from `folder/config.json`, without loading weights.

    Raises UnreadableConfig when its config.json or generation_config.json cannot be read as they should be, and
    UnsupportedModelError ("unsupported architecture X ...") when the model needs remote code or is not
    one of the families this adapter runs: a vision-language model must be in FAMILIES, a text model must be
    a decoder-only causal LM known to transformers.
    """
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)

    config_file = Path(folder) / "config.json"
    if not config_file.is_file():
        raise UnsupportedModelError(f"no config.json in {folder}")
    config = read_config(config_file)  # UnreadableConfig: "unreadable config.json: <reason>"
    if (Path(folder) / "generation_config.json").is_file():  # checked too, before any load
        read_generation_config(Path(folder) / "generation_config.json")
    model_type = config.get("model_type")
    architectures = config.get("architectures") or []
    architecture = architectures[0] if architectures else model_type
    shown = named(architecture or model_type or "?")  # a hostile name is quoted, cut and escaped
    code = remote_code(config)
    if code:
        raise UnsupportedModelError(f"model {shown} needs remote code (config.json has {code}), which this "
                                    "leaderboard never runs")
    if model_type not in CONFIG_MAPPING_NAMES:
        raise UnsupportedModelError(f"unsupported architecture {shown} (model_type {quoted(model_type)} is unknown to "
                                    "transformers)")
    if model_type in FAMILIES:
        text_config = config.get("text_config") or {}
        text_type = text_config.get("model_type")
        if text_type in _not_text_generators() or text_config.get("is_encoder_decoder"):
            # e.g. BLIP-2 / InstructBLIP with Flan-T5: generation slices and option scoring assume a decoder-only LM
            raise UnsupportedModelError(f"unsupported architecture {shown} with the encoder-decoder language "
                                        f"model {quoted(text_type)}: only decoder-only language models are run")
        return {"architecture": architecture, "model_type": model_type, "has_vision": True}
    if model_type in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        category, detail = refusal(model_type)
        raise UnsupportedModelError(f"unsupported architecture {shown} (model_type {model_type!r}): "
                                    f"{category}{f' ({detail})' if detail else ''}; the families table, {TABLE}, "
                                    "lists the families that run and why others do not")
    if (model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES or model_type in _not_text_generators()
            or config.get("is_encoder_decoder")):
        raise UnsupportedModelError(f"unsupported architecture {shown} (model_type {model_type!r} is "
                                    "neither a decoder-only causal language model nor a vision-language family that "
                                    f"runs here; the families table, {TABLE}, lists those that do)")
    return {"architecture": architecture, "model_type": model_type, "has_vision": False}


@lru_cache(maxsize=1)
def _classes() -> tuple[frozenset[str], frozenset[str]]:
    """(vision-language class names, text causal-LM class names) transformers maps model types to."""
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)

    def names(mapping) -> frozenset[str]:
        return frozenset(c for v in mapping.values() for c in (v if isinstance(v, (tuple, list)) else (v,)))

    return names(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES), names(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)


def architecture_has_vision(architecture: str | None) -> bool | None:
    """Whether a recorded architecture (a class name such as LlavaForConditionalGeneration, or a model type) takes
    images: True, False, or None when it cannot be told."""
    if not isinstance(architecture, str) or not architecture:
        return None
    vision, text = _classes()
    if architecture in vision or architecture in FAMILIES:
        return True
    if architecture in text:
        return False
    return None
