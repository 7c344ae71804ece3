"""How generate keeps its KV cache: transformers' dynamic cache, or a static one in a few shapes, compiled on CUDA.

The setting (LEADERBOARD_GENERATION_CACHE, the CLI's --generation-cache) picks a path per run:
- `auto` (the default): "static-compiled" on CUDA, "dynamic" elsewhere;
- `static`: "static-compiled" on CUDA, "static" (the static cache, not compiled) elsewhere;
- `dynamic`: "dynamic" everywhere.

On the static paths the cache is sized in buckets: prompt plus new tokens rounded up to a multiple of CACHE_BUCKET
(transformers keeps the largest length a model has used, so a run's cache only grows). Compiled, a batch is also
padded to the adapter's batch size with copies of its last request, dropped after, so that a whole benchmark
decodes in a handful of shapes (batch size x cache length): the first batch of each new shape is preceded by a short
warm-up generate, timed as the compile time, and counted. transformers compiles the decode step itself (its
CompileConfig: torch.compile in "reduce-overhead" mode, CUDA graphs); the prefill is never compiled.

An architecture whose static cache or compile fails falls back to the dynamic path for the rest of the run: said
once in the log, recorded (`fallback`), and the batch is answered again on the dynamic path; the run goes on. One that
transformers itself does not compile into one graph (Idefics3, SmolVLM, PaliGemma) is never compiled, and a family
whose declaration says its static cache does not run (families.Family.static_cache) never takes it (for_device).

Compiled code is kept for the next process in PyTorch's own caches (inductor's FX-graph and autotuning caches,
Triton's kernels) under a folder of the run's home (use_compile_cache), so a second run's warm-up is shorter; that
folder is made only by a run that compiles (compile_cache_problem says why one cannot be used, never its path).
"""
from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.models.families import family

CHOICES = ("auto", "static", "dynamic")
DYNAMIC, STATIC, COMPILED = "dynamic", "static", "static-compiled"
CACHE_BUCKET = 256  # static cache lengths are multiples of this
WARM_UP_TOKENS = 4  # new tokens of the warm-up generate before a new compiled shape: the compile, the CUDA graphs

log = logging.getLogger(__name__)


def choice_problem(choice: str) -> str | None:
    """Why `choice` is no generation-cache setting (one line), or None."""
    if choice in CHOICES:
        return None
    return f"the generation cache must be one of {', '.join(CHOICES)}, not {choice!r}"


def resolve_path(choice: str, device: str) -> str:
    """The path a run takes: "static-compiled", "static" or "dynamic" (see the module docstring)."""
    problem = choice_problem(choice)
    if problem:
        raise ValueError(problem)
    cuda = str(device).startswith("cuda")
    if choice == DYNAMIC or (choice == "auto" and not cuda):
        return DYNAMIC
    return COMPILED if cuda else STATIC


def cache_length(prompt_tokens: int, new_tokens: int, bucket: int = CACHE_BUCKET) -> int:
    """The static cache's length for a batch: its prompt plus new tokens, rounded up to a multiple of `bucket`."""
    return max(bucket, math.ceil((prompt_tokens + new_tokens) / bucket) * bucket)


COMPILE_CACHE_SETTING = "LEADERBOARD_COMPILE_CACHE"  # the Space's setting; the CLI's --compile-cache


class CompileCacheUnusable(ValueError):
    """The compile cache's folder cannot be used: one line naming the setting, never the folder's path."""


def compile_cache_problem(folder: Path | str) -> str | None:
    """Why `folder` cannot hold the compile caches, in a few words that never hold its path: a file, a path through a
    file, a loop of symbolic links, not writable; None when it is a folder or can be made. Nothing is created."""
    try:
        path = Path(os.path.abspath(Path(folder).expanduser()))
        try:
            path = path.resolve()
        except RuntimeError:  # Python < 3.13 says a loop so; 3.13 raises OSError (ELOOP)
            return "its path goes round a loop of symbolic links"
        if path.is_dir():
            return None if os.access(path, os.W_OK | os.X_OK) else "it is a folder this process may not write in"
        if path.exists() or path.is_symlink():
            return "it is a file, not a folder"
        above = path.parent
        while not above.exists() and above != above.parent:
            above = above.parent
        if not above.is_dir():
            return "a part of its path is a file, not a folder"
        return None if os.access(above, os.W_OK | os.X_OK) else "it cannot be made: no right to write where it goes"
    except (OSError, ValueError) as exc:
        return f"it cannot be read ({getattr(exc, 'strerror', None) or 'not a path'})"


def use_compile_cache(folder: Path | str | None) -> Path | None:
    """Keep PyTorch's compile caches under `folder` (inductor's and Triton's), unless they were pointed elsewhere
    already; the folder used, or None when none is given. Call on the compiled path only, before anything compiles:
    the folder is made here. CompileCacheUnusable (naming the setting) when it cannot be."""
    if not folder:
        return None
    problem = compile_cache_problem(folder)
    if problem is None:
        try:
            root = Path(folder).expanduser().resolve()
            root.mkdir(parents=True, exist_ok=True)
        except (OSError, RuntimeError) as exc:  # made a file, or a loop, since the check
            problem = f"it cannot be made ({getattr(exc, 'strerror', None) or 'a loop of symbolic links'})"
    if problem:
        raise CompileCacheUnusable(f"the compile cache folder (--compile-cache, {COMPILE_CACHE_SETTING}) cannot be "
                                   f"used: {problem}")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(root / "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(root / "triton"))
    return Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]).parent


@dataclass
class GenerationCache:
    """One run's generation path and what it cost: the setting, the path taken, the compiled shapes, the warm-up
    seconds and, after a fallback, its reason."""

    choice: str = "auto"
    path: str = DYNAMIC
    compile_time_s: float = 0.0
    shapes: set[tuple[int, int]] = field(default_factory=set)
    fallback: str | None = None
    longest: int = 0  # the longest cache so far: a run's static cache only grows (as transformers keeps it)

    @classmethod
    def for_device(cls, choice: str, device: str, model=None) -> "GenerationCache":
        """The path of `choice` on `device`; a family whose static cache does not run takes the dynamic path, and a
        model that transformers does not compile into one graph (`_can_compile_fullgraph` False: Idefics3, SmolVLM
        and PaliGemma here) is not compiled: `auto` keeps the dynamic cache for it, `static` the static cache
        uncompiled. `fallback` says why, either way."""
        cache = cls(choice=choice, path=resolve_path(choice, device))
        why = family(getattr(getattr(model, "config", None), "model_type", None)).static_cache if model else ""
        if why and cache.static:
            cache.path, cache.fallback = DYNAMIC, f"no static cache: {why}"
            return cache
        if cache.compiled and model is not None and not getattr(model, "_can_compile_fullgraph", False):
            cache.path = DYNAMIC if choice == "auto" else STATIC
            cache.fallback = (f"not compiled: transformers does not compile {type(model).__name__} into one graph "
                              f"(_can_compile_fullgraph is False)")
        return cache

    @property
    def static(self) -> bool:
        return self.path in (STATIC, COMPILED)

    @property
    def compiled(self) -> bool:
        return self.path == COMPILED

    def generate_kwargs(self, prompt_tokens: int, new_tokens: int) -> dict:
        """What generate is told on this path (nothing on the dynamic one): a static cache of the run's longest
        bucket so far, compiled or not."""
        if not self.static:
            return {}
        self.longest = max(self.longest, cache_length(prompt_tokens, new_tokens))
        return {"cache_implementation": "static", "max_cache_len": self.longest, "disable_compile": not self.compiled}

    def new_shape(self, batch: int, length: int) -> bool:
        """Whether (batch, cache length) is a compiled shape not met before in this run (and note it)."""
        if not self.compiled or (batch, length) in self.shapes:
            return False
        self.shapes.add((batch, length))
        return True

    def warmed(self, seconds: float) -> None:
        self.compile_time_s += seconds

    def fall_back(self, error: BaseException) -> None:
        """Take the dynamic path for the rest of the run, and say why once."""
        self.fallback = " ".join(f"{type(error).__name__}: {error}".split())[:300]
        log.warning("the %s generation path failed (%s); this run generates with the dynamic cache", self.path,
                    self.fallback)
        self.path = DYNAMIC

    def record(self) -> dict:
        """What results.json says of it (run.generation_cache)."""
        return {"setting": self.choice, "path": self.path, "compile_time_s": round(self.compile_time_s, 2),
                "compiled_shapes": len(self.shapes), "fallback": self.fallback}


def timed(run) -> tuple[object, float]:
    """run()'s result and its seconds (CUDA synchronised, so that the GPU's work is counted)."""
    import torch

    started = time.perf_counter()
    result = run()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - started
