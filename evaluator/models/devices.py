"""Where and how a model runs: the device (a GPU or a clear failure, or the CPU; said once, as a warning only where a
GPU was expected), the dtype for a precision, whether a model is split across the GPUs, the generation batch size
(and "auto"'s starting size per device), what hardware a run used, and freeing CUDA memory after an out-of-memory
batch."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings

import torch

from evaluator.models.base import DeviceUnavailable

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
DEVICES = ("auto", "cuda", "cpu")
# the oldest NVIDIA driver (Linux) that runs each CUDA major version torch may be built for (the pinned wheel: 13)
MIN_DRIVER = {13: 580, 12: 525, 11: 450}

# batch_size="auto": where generation starts before out-of-memory backoff halves it (CUDA), and the CPU default.
AUTO_BATCH_SIZE = {"cuda": 64, "cpu": 4}


def nvidia_driver() -> str:
    """The NVIDIA driver version nvidia-smi reports (e.g. "580.65.06"), else what went wrong ("nvidia-smi not
    found", "nvidia-smi failed: ..."); never raises."""
    if shutil.which("nvidia-smi") is None:
        return "nvidia-smi not found"
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"nvidia-smi failed: {type(exc).__name__}"
    lines = [line.strip() for line in (done.stdout or "").splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        said = ((done.stderr or "").strip() or (done.stdout or "").strip() or f"exit code {done.returncode}")
        return "nvidia-smi failed: " + " ".join(said.split())[:200]
    return lines[0]


def driver_major(driver: str) -> int | None:
    """The major version of a driver version ("580.65.06" -> 580); None for nvidia_driver()'s failure texts."""
    found = re.fullmatch(r"(\d+)(\.\d+)*", driver.strip())
    return int(found.group(1)) if found else None


def cuda_findings(driver: str | None = None, torch_said: str | None = None) -> str:
    """One line on why CUDA may not work here: torch's CUDA build, the NVIDIA driver (and whether it is too old for
    that build), CUDA_VISIBLE_DEVICES, and what torch warned while looking for a GPU."""
    driver = nvidia_driver() if driver is None else driver
    built = torch.version.cuda
    parts = [f"torch {torch.__version__} built for CUDA {built}" if built else
             f"torch {torch.__version__} is a CPU-only build (no CUDA)"]
    major, needs = driver_major(driver), MIN_DRIVER.get(int(built.split(".")[0])) if built else None
    if major is None:
        parts.append(driver)
    elif needs and major < needs:
        parts.append(f"NVIDIA driver {driver} is too old for CUDA {built} (it needs driver >= {needs}): update the "
                     f"driver, or install a torch wheel built for an older CUDA")
    else:
        parts.append(f"NVIDIA driver {driver}")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    parts.append("CUDA_VISIBLE_DEVICES unset" if visible is None else
                 f"CUDA_VISIBLE_DEVICES={visible!r}" + (" (hides every GPU)" if not visible.strip() else ""))
    if torch_said:
        parts.append(f"torch said: {torch_said}")
    return "; ".join(parts)


def cuda_usable() -> tuple[bool, str | None]:
    """(whether torch sees a usable CUDA GPU, the warning torch gave while looking, on one line, or None)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        usable = torch.cuda.is_available()
    said = " ".join(" ".join(str(w.message).split()) for w in caught)[:300]
    return usable, said or None


def resolve_device(requested: str = "auto") -> tuple[str, str | None]:
    """(device, why the CPU is used when "auto" found no usable CUDA, else None) for --device auto|cuda|cpu.
    "cuda" without a usable GPU raises DeviceUnavailable (one line: what was found), before any weights load."""
    if requested not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {requested!r}")
    if requested == "cpu":
        return "cpu", None
    usable, torch_said = cuda_usable()
    if usable:
        return "cuda", None
    found = cuda_findings(torch_said=torch_said)
    if requested == "cuda":
        raise DeviceUnavailable(f"--device cuda asks for a GPU, but CUDA is not usable: {found}")
    return "cpu", f"no usable CUDA GPU, running on the CPU (far slower): {found}"


def gpu_expected() -> str | None:
    """Why this machine should have a usable GPU, or None: LEADERBOARD_DEVICE=cuda (how a Hugging Face Job on a GPU
    flavor is started), or an NVIDIA driver that nvidia-smi reports (a GPU that torch cannot use)."""
    if os.environ.get("LEADERBOARD_DEVICE", "").strip().lower() == "cuda":
        return "LEADERBOARD_DEVICE=cuda"
    driver = nvidia_driver()
    return f"NVIDIA driver {driver} found" if driver_major(driver) is not None else None


def device_notice(device: str, cpu_reason: str | None = None) -> tuple[str, bool]:
    """The one line a run says about its device, and whether it is a warning: on the CPU because "auto" found no
    usable GPU, a warning only where a GPU was expected (gpu_expected); otherwise a plain line."""
    if device.startswith("cuda"):
        count = torch.cuda.device_count()
        names = " + ".join(dict.fromkeys(torch.cuda.get_device_name(i) for i in range(count))) or "a CUDA GPU"
        return f"device: {device} ({names}{f', {count} GPUs' if count > 1 else ''})", False
    if not cpu_reason:
        return "device: cpu (as asked)", False
    expected = gpu_expected()
    return f"device: cpu; {cpu_reason}" + (f" (a GPU was expected: {expected})" if expected else ""), bool(expected)


def bf16_native(device: str = "cuda") -> bool:
    """Whether the CUDA device computes in bfloat16 natively (compute capability 8.0 or later; a T4, 7.5, does not)."""
    if torch.version.hip:
        return True
    index = int(device.partition(":")[2] or 0)
    return tuple(torch.cuda.get_device_capability(index)) >= (8, 0)


def pick_device_dtype(precision: str = "auto", device: str | None = None) -> tuple[str, torch.dtype]:
    """CUDA when available, else the CPU; "auto" precision: bfloat16 on a GPU that computes in it natively, float16
    on an older one, float32 on the CPU. An explicit precision or device wins."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if precision in (None, "", "auto"):
        if device.startswith("cuda"):
            dtype = torch.bfloat16 if bf16_native(device) else torch.float16
        else:
            dtype = torch.float32
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


def describe_hardware(device: str, dtype: str, cpu_reason: str | None = None) -> dict:
    """What a run ran on, for its results: the device and dtype used, the visible GPUs (name, count, total memory
    per GPU in GiB), the NVIDIA driver, torch's CUDA build, and why the CPU was used when "auto" fell back to it."""
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    names = [torch.cuda.get_device_name(i) for i in range(count)]
    memory = [round(torch.cuda.get_device_properties(i).total_memory / 2**30, 1) for i in range(count)]
    driver = nvidia_driver()
    version = driver if driver_major(driver) is not None else None
    return {"device": device, "dtype": dtype, "gpu_name": " + ".join(dict.fromkeys(names)) or None,
            "gpu_count": count, "gpu_memory_gib": memory, "driver": version,
            "torch_cuda": torch.version.cuda, "cpu_reason": cpu_reason}
