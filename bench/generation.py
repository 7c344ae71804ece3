"""Generation: one batch of 8 requests (left-padded) vs the same 8 requests one at a time.

A LLaVA of realistic shape with random weights (bench/_models.py: Llama 8 layers / hidden 512, CLIP tower giving
64 image tokens, a 32,000-entry vocabulary) is saved to a temporary folder and loaded through
evaluator.models.load_model. The same 8 requests, each with its own image and a question
of its own length, are generated greedily (16 new tokens) with `adapter.batch_size = 8` and with
`adapter.batch_size = 1`; both ways run in this process, several repetitions each (interleaved), and the medians are
printed with their ratio. The model's end-of-sequence token is switched off for the run so that every request
generates all 16 tokens in both ways (random weights could otherwise stop one request early in one way only).

Why the ratio is not larger on this machine (profiled with torch.profiler, 2-core AMD EPYC, MKL, AVX2): the prompts
(64 image tokens + the question, 84-112 tokens) make the prefill compute-bound already at batch 1, so the batch-8
prefill costs ~7x one prefill (GEMMs of 896 rows run only ~1.3x more efficiently than of 112 rows); batching pays
in the decode steps (above all in the LM head, whose 512 x 32,000 weights are read once per step for all 8 rows),
but there a GEMM of 8 rows still costs ~2.5-3x one of 1 row here, and the growing DynamicCache is re-concatenated
at every step for all 8 rows. The more tokens generated, the larger the ratio
(CURE's chain-of-thought answers are far longer than 16 tokens): pass `--new-tokens 32` to see it.

Run: `.venv/bin/python bench/generation.py [repeats] [--new-tokens N] [--shape bench|tiny]` (tiny: the smoke
test's 2-layer LLaVA, for a check that the script runs, not for its figures). bench/gpu_check.py times the same
requests (make_requests, both_paths) on a LLaVA-1.5-7B-shaped model at batch 1, 8 and 64, on the dynamic KV cache
and on the static one with its compiled decode step, against the floor of a decode step.
"""
from __future__ import annotations

import math
import statistics
import time

import _models  # noqa: E402  (sets sys.path to the project root)

NEW_TOKENS = 16


def make_requests(count: int, new_tokens: int) -> list:
    """`count` requests, each with an image of its own, cycling through _models.QUESTIONS (8 of them)."""
    from evaluator.models import GenerationRequest

    return [GenerationRequest(_models.QUESTIONS[i % len(_models.QUESTIONS)], images=[_models.image(i)],
                              max_new_tokens=new_tokens) for i in range(count)]


def generate_at(adapter, requests: list, batch_size: int) -> list[str]:
    """The requests' answers, generated in batches of `batch_size`."""
    adapter.batch_size = batch_size
    return adapter.generate(requests)


def timed_batches(adapter, requests: list, batch_sizes: tuple[int, ...],
                  repeats: int) -> tuple[dict[int, float], dict[int, list[str]]]:
    """The median seconds to generate every request at each batch size (the sizes interleaved, `repeats` times),
    and each size's answers from its last repetition."""
    times: dict[int, list[float]] = {size: [] for size in batch_sizes}
    answers: dict[int, list[str]] = {}
    for _ in range(repeats):
        for size in batch_sizes:
            started = time.perf_counter()
            answers[size] = generate_at(adapter, requests, size)
            times[size].append(time.perf_counter() - started)
    return {size: statistics.median(seconds) for size, seconds in times.items()}, answers


BATCH_1_REQUESTS = 8  # batch 1 answers this many of the requests (one at a time is slow; 8 tell its pace)


def weight_bytes(adapter) -> int:
    """The bytes of the model's weights (and buffers): what every decode step must read at least once."""
    model = adapter.model
    return sum(t.numel() * t.element_size() for t in [*model.parameters(), *model.buffers()])


def copy_bandwidth(device: str, megabytes: int = 1024, repeats: int = 5) -> float:
    """Bytes per second of a device-to-device copy (read and write counted), the best of `repeats`: the memory's
    pace, against which a decode step's floor is set."""
    import torch

    size = megabytes * 2 ** 20 // 4
    source = torch.empty(size, dtype=torch.float32, device=device)
    target = torch.empty_like(source)
    best = math.inf
    for _ in range(repeats + 1):  # the first copy warms
        started = time.perf_counter()
        target.copy_(source)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - started)
    return 2 * source.numel() * source.element_size() / best


def path_timings(adapter, requests: list, sizes: tuple[int, ...], path: str) -> dict:
    """The requests at each batch size on one generation path (evaluator.models.generation_cache): per size the
    seconds, ms per decode step and the answers, after one warm-up batch of that size (on the compiled path, the
    compile: its seconds are the path's warm_up_s, apart from the timings). Batch 1 answers the first
    BATCH_1_REQUESTS requests."""
    from evaluator.models.generation_cache import GenerationCache

    choice = "dynamic" if path == "dynamic" else "static"
    adapter.cache = GenerationCache.for_device(choice, adapter.device)
    if adapter.cache.path != path:
        raise ValueError(f"the {path} path is not this device's ({adapter.cache.path})")
    found = {"path": path, "seconds": {}, "ms_per_step": {}, "answers": {}, "warm_up_s": 0.0}
    for size in sizes:
        asked = requests[:BATCH_1_REQUESTS] if size == 1 else requests
        started = time.perf_counter()
        generate_at(adapter, asked[:size], size)  # warm: one batch of this size
        warm = time.perf_counter() - started
        started = time.perf_counter()
        answers = generate_at(adapter, asked, size)
        seconds = time.perf_counter() - started
        steps = math.ceil(len(asked) / size) * max(r.max_new_tokens for r in asked)
        found["seconds"][size], found["answers"][size] = seconds, answers
        found["ms_per_step"][size] = 1000 * seconds / steps
        found["warm_up_s"] += adapter.cache.compile_time_s if adapter.cache.compiled else warm
        adapter.cache.compile_time_s = 0.0
    found["shapes"] = len(adapter.cache.shapes)
    found["fallback"] = adapter.cache.fallback
    return found


def both_paths(adapter, requests: list, sizes: tuple[int, ...]) -> dict:
    """The dynamic path against the static one this device takes (compiled on CUDA, not on the CPU): each path's
    path_timings, how many answers agree at each size, and the floor of a decode step (the weights' bytes over the
    device's copy bandwidth)."""
    static = "static-compiled" if adapter.device.startswith("cuda") else "static"
    dynamic = path_timings(adapter, requests, sizes, "dynamic")
    fixed = path_timings(adapter, requests, sizes, static)
    agree = {size: sum(a == b for a, b in zip(dynamic["answers"][size], fixed["answers"][size])) for size in sizes}
    asked = {size: len(dynamic["answers"][size]) for size in sizes}
    bandwidth = copy_bandwidth(adapter.device, 1024 if adapter.device.startswith("cuda") else 256)
    weights = weight_bytes(adapter)
    for timings in (dynamic, fixed):
        timings.pop("answers")
    return {"dynamic": dynamic, "static": fixed, "agree": agree, "asked": asked, "weight_bytes": weights,
            "bandwidth": bandwidth, "floor_ms": 1000 * weights / bandwidth}


def main(repeats: int = 9, new_tokens: int = NEW_TOKENS, shape: str = "bench") -> None:
    import torch

    adapter = _models.load_llava(shape=shape)
    adapter.model.generation_config.eos_token_id = None  # every request generates new_tokens tokens
    requests = make_requests(len(_models.QUESTIONS), new_tokens)
    lengths = [adapter._encode([adapter.build_prompt(r)], [r.images])["input_ids"].shape[1] for r in requests]
    print(f"model: LLaVA ({shape} shape), torch threads {torch.get_num_threads()}; "
          f"{len(requests)} requests with one image each, prompts of {min(lengths)}-{max(lengths)} tokens, "
          f"greedy, {new_tokens} new tokens")

    batched, single = generate_at(adapter, requests, 8), generate_at(adapter, requests, 1)
    same = sum(a == b for a, b in zip(batched, single))
    print(f"identical outputs in both ways: {same}/{len(requests)}")

    medians, _ = timed_batches(adapter, requests, (8, 1), repeats)
    batch_s, single_s = medians[8], medians[1]
    print(f"batch 8: median {batch_s * 1000:.0f} ms")
    print(f"one at a time: median {single_s * 1000:.0f} ms")
    print(f"generation: batch 8 is {single_s / batch_s:.2f}x faster than one at a time")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repeats", nargs="?", type=int, default=9)
    parser.add_argument("--new-tokens", type=int, default=NEW_TOKENS)
    parser.add_argument("--shape", choices=tuple(_models.SHAPES), default="bench")  # tiny: the smoke test's
    args = parser.parse_args()
    main(args.repeats, args.new_tokens, args.shape)
