"""Loading a model folder for the transformers adapter: the model class picked from its config (never remote code),
its processor or tokenizer, the device, dtype and batch size (devices.py), SDPA attention where the architecture has
it, its layers spread over several GPUs when one cannot hold it, and on the CPU routed experts computed pair by pair
(moe_experts.py)."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from evaluator.models.architectures import describe_model_folder
from evaluator.models.devices import pick_device_dtype, resolve_batch_size, split_across_gpus
from evaluator.models.moe_experts import use_row_invariant_experts

log = logging.getLogger(__name__)


def load_pretrained(folder: Path | str, model_id: str, precision: str, batch_size: int | str,
                    device: str | None) -> tuple[Any, Any, Any, dict, int]:
    """(model, processor or None, tokenizer, describe_model_folder's facts, batch size) of a model folder, the model
    on its device in eval mode."""
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText, AutoProcessor, AutoTokenizer

    info = describe_model_folder(folder)
    device, dtype = pick_device_dtype(precision, device)
    size = resolve_batch_size(batch_size, device)
    kwargs = {"dtype": dtype, "trust_remote_code": False, "attn_implementation": "sdpa"}
    split = split_across_gpus(device)
    if split:  # a model too large for one GPU: its layers spread over all of them
        kwargs["device_map"] = "auto"
    if info["has_vision"]:
        processor = AutoProcessor.from_pretrained(folder, trust_remote_code=False)
        tokenizer = getattr(processor, "tokenizer", processor)
        model_class = AutoModelForImageTextToText
    else:
        processor = None
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
        model_class = AutoModelForCausalLM
    try:
        model = model_class.from_pretrained(folder, **kwargs)
    except (ValueError, ImportError) as exc:  # an architecture without SDPA: its default attention
        if "sdpa" not in str(exc).lower():
            raise
        log.warning("%s: SDPA attention unavailable (%s); using the default", model_id, exc)
        kwargs.pop("attn_implementation")
        model = model_class.from_pretrained(folder, **kwargs)
    if not split:
        model.to(device)
    model.eval()
    use_row_invariant_experts(model, str(device))  # on the CPU, routed experts independent of the batch
    return model, processor, tokenizer, info, size
