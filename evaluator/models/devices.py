"""Where and how a model runs: the device and dtype for a precision, whether a model is split across the GPUs, the
generation batch size (and "auto"'s starting size per device), and freeing CUDA memory after an out-of-memory batch."""
from __future__ import annotations

import torch

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

# batch_size="auto": where generation starts before out-of-memory backoff halves it (CUDA), and the CPU default.
AUTO_BATCH_SIZE = {"cuda": 64, "cpu": 4}


def pick_device_dtype(precision: str = "auto", device: str | None = None) -> tuple[str, torch.dtype]:
    """CUDA + bfloat16 when available, else CPU + float32; an explicit precision or device wins."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if precision in (None, "", "auto"):
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    elif precision in DTYPES:
        dtype = DTYPES[precision]
    else:
        raise ValueError(f"unknown precision {precision!r}; expected auto, {', '.join(DTYPES)}")
    return device, dtype


def split_across_gpus(device: str, gpus: int | None = None) -> bool:
    """Whether a model is split across the GPUs (device_map="auto", as on a multi-GPU Job flavor): on CUDA with more
    than one GPU visible."""
    if not device.startswith("cuda"):
        return False
    return (torch.cuda.device_count() if gpus is None else gpus) > 1


def resolve_batch_size(batch_size: int | str | None, device: str) -> int:
    """An explicit batch size (>= 1), or for "auto" / 0 / None the starting size for the device."""
    if batch_size in (None, 0, "0", "auto"):
        return AUTO_BATCH_SIZE["cuda" if device.startswith("cuda") else "cpu"]
    try:
        size = int(batch_size)
    except (TypeError, ValueError):
        raise ValueError(f"batch size must be a positive integer or 'auto', got {batch_size!r}") from None
    if size < 1:
        raise ValueError(f"batch size must be a positive integer or 'auto', got {batch_size!r}")
    return size


def free_cuda_memory() -> None:
    """Give the CUDA cache back after an out-of-memory batch (nothing on the CPU)."""
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
