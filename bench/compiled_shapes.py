"""How many shapes each sample suite compiles on the compiled generation path, counted without a GPU.

The compiled path (evaluator.models.generation_cache) decodes in shapes of (batch size, cache length): every batch is
filled up to the batch size, and the cache length is the run's longest bucket so far (prompt plus new tokens, rounded
up to 256). This script asks each benchmark's sample suite as the executor does, in its chunks and the adapter's
batches, processes every batch's prompts (the processor, no model call) and counts the shapes the compiled path
would meet, so the number is known before any device time is spent. bench/gpu_check.py's part 4 reports the shapes a
real run on a GPU compiled (results.json's run.generation_cache).

Run: `.venv/bin/python bench/compiled_shapes.py [--batch-size 64] [--folder <model folder>] [--shape bench|tiny]`
(default: the bench-shaped LLaVA of bench/_models.py, 64 image tokens per picture; a LLaVA-1.5-7B folder has 576, so
its prompts are longer; tiny: the smoke test's, 4 image tokens).
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root)

BENCHMARKS = ("cure", "reform", "lave", "simpleqa")


def generation_batches(adapter, asks: list, chunk_items: int) -> list[list]:
    """The generation requests of a plan in the batches the adapter forms: the executor's chunks of `chunk_items`
    items, each split by the adapter (apart by images where the family cannot mix) into batches of its batch size."""
    from evaluator.runs.executor import _by_item, _fetch_images

    grouped = _by_item(asks)
    items = list(grouped)
    batches = []
    for start in range(0, len(items), chunk_items):
        chunk = [ask for item in items[start:start + chunk_items] for ask in grouped[item] if ask.options is None]
        _fetch_images(chunk)
        groups: dict[bool, list] = {}
        for ask in chunk:
            apart = adapter.has_vision and not adapter.style.mixes
            groups.setdefault(bool(ask.request.images) if apart else False, []).append(ask.request)
        for requests in groups.values():
            batches += [requests[i:i + adapter.batch_size] for i in range(0, len(requests), adapter.batch_size)]
    return batches


def count_shapes(adapter, plan) -> dict:
    """The compiled shapes a plan's generation meets: {batches, shapes, lengths (the cache lengths met)}."""
    from evaluator.models.generation_cache import COMPILED, GenerationCache

    cache = GenerationCache(choice="auto", path=COMPILED)
    batches = generation_batches(adapter, plan.asks, adapter.batch_size)
    lengths = []
    for batch in batches:
        prompt = adapter._encode([adapter.build_prompt(r) for r in batch], [r.images for r in batch])
        length = cache.generate_kwargs(prompt["input_ids"].shape[1], max(r.max_new_tokens for r in batch))
        cache.new_shape(adapter.batch_size, length["max_cache_len"])
        lengths.append(length["max_cache_len"])
    return {"batches": len(batches), "shapes": len(cache.shapes), "lengths": sorted(set(lengths))}


def main(batch_size: int, folder: str | None, shape: str = "bench") -> None:
    from evaluator.benchmarks import get_benchmark
    from evaluator.benchmarks.spec import PlanContext
    from evaluator.models import load_model

    work = Path(tempfile.mkdtemp(prefix="compiled-shapes-"))
    folder = folder or str(_models.build_llava(work / "model", shape))
    adapter = load_model(folder, batch_size=batch_size, device="cpu")
    print(f"compiled shapes per sample suite, batch size {batch_size}, cache lengths in buckets of 256 ({folder})")
    for name in BENCHMARKS:
        benchmark = get_benchmark(name)
        if benchmark.CARD.needs_images and not adapter.has_vision:
            continue
        options = {"cure.mode": "generation"} if name == "cure" else {}
        plan = benchmark.plan(PlanContext(suite="sample", images_dir=work / "images", options=options))
        found = count_shapes(adapter, plan)
        print(f"  {name}{' (by generation)' if options else ''}: {found['batches']} batches, {found['shapes']} "
              f"compiled shape(s), cache lengths {found['lengths']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--folder", default=None)
    parser.add_argument("--shape", choices=tuple(_models.SHAPES), default="bench",
                        help="the LLaVA built when no --folder is given (tiny: the smoke test's)")
    args = parser.parse_args()
    main(args.batch_size, args.folder, args.shape)
