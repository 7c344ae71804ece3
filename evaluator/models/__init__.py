"""Model adapters behind one small interface: generate(...) and score_options(...).

base.py holds the interface; transformers_adapter.py the one adapter, with families.py (every family it runs, one
declaration each: prompt style, option scoring, image features, static cache), family_table.py (every image-text-to-text
type of transformers: runs, or why not), prompts.py (prompt styles), image_settings.py (the processor's own resolution
settings, recorded), architectures.py (which model folders run; model_config.py reads their config.json as
untrusted data), devices.py (device, dtype, batch size), scoring.py and batched_scoring.py
(option scoring), sampling.py (each sampled row from its own seed) and generation_cache.py (the dynamic or static KV
cache, compiled on CUDA); served.py is the adapter for a model behind an endpoint.

This room may import the endpoints room alone (served.py's chat client).
"""
from __future__ import annotations

from pathlib import Path

from evaluator.models.architectures import describe_model_folder
from evaluator.models.base import (DeviceUnavailable, GenerationRequest, ModelAdapter, OptionScore,
                                   UnsupportedModelError)

__all__ = ["DeviceUnavailable", "GenerationRequest", "ModelAdapter", "OptionScore", "UnsupportedModelError",
           "describe_model_folder", "load_model", "resolve_model_folder"]

# Weight formats that are never downloaded: only safetensors weights are loaded.
_IGNORE_PATTERNS = ["*.bin", "*.pt", "*.pth", "*.ckpt", "*.h5", "*.msgpack", "*.onnx", "*.ot", "*.gguf",
                    "*.tflite", "original/*"]


def resolve_model_folder(source: str, revision: str | None = None) -> tuple[Path, str | None]:
    """A local folder as is, or a Hub id through snapshot_download (which also serves an offline cache).

    Returns the folder and the revision (for a Hub model, the commit sha of the snapshot).
    """
    local = Path(source).expanduser()
    if local.is_dir():
        return local, revision
    from huggingface_hub import snapshot_download

    folder = Path(snapshot_download(source, revision=revision, ignore_patterns=_IGNORE_PATTERNS))
    return folder, folder.name


def load_model(source: str, revision: str | None = None, precision: str = "auto", batch_size: int | str = 4,
               device: str | None = None, generation_cache: str = "auto", thinking_asked: str = "auto",
               thinking_budget: int | None = None) -> ModelAdapter:
    """Load a Hub model (`org/name`, at `revision`) or a local folder behind the ModelAdapter interface.

    device: "cuda" or "cpu" (evaluator.models.devices.resolve_device's choice); None: CUDA when available.
    precision: "auto" (bfloat16 on CUDA, float16 on a GPU without native bfloat16 such as a T4, float32 on the CPU),
    "float32", "bfloat16" or "float16".
    batch_size: generation batch size, or "auto" (64 on CUDA, 4 on the CPU). Either way a batch that runs out of
    GPU memory is retried at half the size, and later batches keep the smaller size (adapter.batch_size).
    generation_cache: "auto" (a static KV cache with a compiled decode step on CUDA, the dynamic cache elsewhere),
    "static" (static everywhere, compiled on CUDA) or "dynamic" (evaluator.models.generation_cache).
    thinking_asked: a chat template's enable_thinking switch: "auto" (its default), "on" or "off"; thinking_budget:
    tokens a thinking model may spend on its thought beyond each benchmark's budget (evaluator.models.thinking).
    Raises UnsupportedModelError ("unsupported architecture ...", "needs remote code") before loading weights.
    """
    from evaluator.models.transformers_adapter import TransformersAdapter

    folder, resolved = resolve_model_folder(source, revision)
    budget = {} if thinking_budget is None else {"thinking_budget": thinking_budget}
    return TransformersAdapter.from_folder(folder, model_id=source, revision=resolved, precision=precision,
                                           batch_size=batch_size, device=device, generation_cache=generation_cache,
                                           thinking_asked=thinking_asked, **budget)
