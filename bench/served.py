"""Served generation: `transformers serve` through ServedAdapter at 1, 8 and 32 requests in flight, against the
in-process adapter at batch sizes 1, 8 and 32, on the same requests.

A tiny LLaVA (tests/tiny_models.py: Llama 2 layers / hidden 32, CLIP 32 px / patch 8, random seeded weights) is
built into a temporary folder. The same list of generation requests (`--requests`, half with one small synthetic
picture, half text-only, greedy, `--max-new-tokens` each) is run

- in this process through evaluator.models.load_model(folder, device="cpu", batch_size=b), b = 1, 8, 32;
- through a real `transformers serve` on 127.0.0.1 (tests/served_servers.TransformersServe, offline) and
  evaluator.models.served.ServedAdapter with 1, 8 and 32 requests in flight (`--continuous-batching` passes that
  flag to the server);
- with `--base-url URL --model NAME`, also through that endpoint (token from LEADERBOARD_MODEL_TOKEN) at 1, 8, 32.

Each way is warmed up (one small untimed call), then timed `--repeats` times; the median is reported as requests per
second, with the ratios to the same way at 1 and whether the answers equal the in-process greedy answers at batch 1
(the reference; an endpoint serving another model is not compared). When more requests in flight do not make the
server faster, a line says so and why, from what was measured and from the server's own log.

Run: `.venv/bin/python bench/served.py [--requests 64] [--max-new-tokens 16] [--repeats 3] [--continuous-batching]
[--base-url URL --model NAME]`. Not part of the test suite. With a model this small, what is timed is the
per-request cost around the model (HTTP, JSON, base64 PNGs, the processor, generate()'s set-up) more than the model.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root)

LEVELS = (1, 8, 32)
# Below this ratio (8 or 32 in flight over 1) the server does not batch: overlapping the HTTP, JSON, PNG and
# processor work of one request with the generation of another gives up to ~1.6x alone; batching gives several x.
SCALING = 2.0


def make_requests(count: int, max_new_tokens: int):
    """`count` deterministic requests: even ones carry one small picture, odd ones are text-only."""
    from evaluator.models import GenerationRequest

    return [GenerationRequest(_models.QUESTIONS[i % len(_models.QUESTIONS)],
                              images=[_models.image(i, size=(48, 40))] if i % 2 == 0 else [],
                              max_new_tokens=max_new_tokens, temperature=0.0)
            for i in range(count)]


def run_ways(ways: dict, repeats: int) -> dict:
    """{(way, level): (median seconds, texts of the last run)} for ways {name: (adapter, requests)}.

    Each adapter is warmed up once (an untimed call on two requests); then the runs are interleaved (every way at
    every level, `repeats` rounds), so that a change in the machine's load falls on all of them alike."""
    for adapter, requests in ways.values():
        adapter.batch_size = 1
        adapter.generate_results(requests[:2])
    times: dict[tuple[str, int], list[float]] = {}
    texts: dict[tuple[str, int], list[str]] = {}
    for _ in range(repeats):
        for name, (adapter, requests) in ways.items():
            for level in LEVELS:
                adapter.batch_size = level
                start = time.perf_counter()
                results = adapter.generate_results(requests)
                times.setdefault((name, level), []).append(time.perf_counter() - start)
                texts[(name, level)] = [r.text for r in results]
    return {key: (statistics.median(seconds), texts[key]) for key, seconds in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--continuous-batching", action="store_true",
                        help="start transformers serve with --continuous-batching")
    parser.add_argument("--base-url", help="also time this OpenAI-compatible endpoint (with --model)")
    parser.add_argument("--model", help="the model name to ask --base-url for")
    args = parser.parse_args()
    if bool(args.base_url) != bool(args.model):
        parser.error("--base-url and --model go together")

    import torch

    from evaluator.models import load_model
    from evaluator.models.served import ServedAdapter
    from tests.served_servers import TransformersServe
    from tests.tiny_models import build_tiny_llava

    requests = make_requests(args.requests, args.max_new_tokens)
    n_images = sum(1 for r in requests if r.images)
    workdir = tempfile.TemporaryDirectory(prefix="bench-served-")
    folder = build_tiny_llava(Path(workdir.name) / "tiny-llava")
    print(f"model: tiny LLaVA (Llama 2x32, CLIP 32 px / patch 8) in {folder}; {os.cpu_count()} CPUs, "
          f"torch threads {torch.get_num_threads()}")
    print(f"{len(requests)} requests ({n_images} with one picture, {len(requests) - n_images} text-only), greedy, "
          f"max {args.max_new_tokens} new tokens; median of {args.repeats} interleaved runs after a warm-up call")

    local = load_model(str(folder), device="cpu", batch_size=1)
    extra = ["--continuous-batching"] if args.continuous_batching else []
    serve_label = "transformers serve" + (" --continuous-batching" if extra else "")
    local_way, served_way = "in-process (batch)", f"{serve_label} (in flight)"
    ways = {local_way: (local, requests)}
    with TransformersServe(folder, extra_args=extra) as serve:
        print(f"{serve_label}: ready in {serve.started_in:.1f} s on {serve.base_url}")
        adapter = ServedAdapter(serve.base_url, serve.model, None, batch_size=1, timeout=120.0)
        adapter.probe(images=True)
        ways[served_way] = (adapter, requests)
        if args.base_url:
            remote = ServedAdapter(args.base_url, args.model, os.environ.get("LEADERBOARD_MODEL_TOKEN") or None,
                                   batch_size=1, timeout=300.0)
            remote.probe(images=True)
            asked = requests if remote.has_vision else [r for r in requests if not r.images]
            if not remote.has_vision:
                print(f"{args.model} at {remote.url} is text-only ({remote.vision_refusal}): timing its "
                      f"{len(asked)} text-only requests")
            ways[f"{args.model} at {remote.url} (in flight)"] = (remote, asked)
        measured = run_ways(ways, args.repeats)
        server_log = serve.log_tail(200_000)
        server_models = adapter.record().get("server_model")
    workdir.cleanup()
    reference = measured[(local_way, 1)][1]
    rows = [(name, level, *measured[(name, level)]) for name in ways for level in LEVELS]
    count_for = {name: len(asked_requests) for name, (_, asked_requests) in ways.items()}
    comparable = {local_way, served_way}

    print()
    print(f"{'way':<58} {'at':>3} {'req/s':>8} {'x vs at 1':>10} {'= in-process greedy (batch 1)':>30}")
    by_way: dict[str, dict[int, float]] = {}
    for way, level, seconds, texts in rows:
        rate = count_for[way] / seconds
        by_way.setdefault(way, {})[level] = rate
        same = "n/a" if way not in comparable else f"{sum(a == b for a, b in zip(texts, reference))}/{len(reference)}"
        print(f"{way:<58} {level:>3} {rate:>8.1f} {rate / by_way[way][1]:>9.2f}x {same:>30}")
    print()
    for way, rates in by_way.items():
        name = way.rsplit(" (", 1)[0]
        print(f"{name}: " + ", ".join(f"{level} / 1 = {rates[level] / rates[1]:.2f}x" for level in LEVELS[1:]))
    local_1, served_1 = by_way[local_way][1], by_way[served_way][1]
    print(f"served at 1 / in-process at batch 1 = {served_1 / local_1:.2f}x "
          f"({1000 / served_1:.0f} ms vs {1000 / local_1:.0f} ms a request)")
    if server_models:
        print(f"the server names its model {server_models!r}")

    served = by_way[served_way]
    best = max(served[level] / served[1] for level in LEVELS[1:])
    if best < SCALING:
        fallback = [line.strip() for line in server_log.splitlines()
                    if "does not support continuous batching" in line]
        if fallback:
            why = (f"its log says {fallback[0]!r} (transformers serve batches only text-only LLMs; a VLM runs "
                   "through model.generate() on one inference thread, one request after another)")
        elif args.continuous_batching:
            why = "continuous batching was asked for, yet requests were not answered faster side by side"
        else:
            why = ("without --continuous-batching, transformers serve runs every request through model.generate() "
                   "on one inference thread, one request after another; more in flight only queue on the server")
        print(f"in-flight scaling does not follow: {serve_label} answered at best {best:.2f}x as many requests a "
              f"second with 8 or 32 in flight as with 1 (measured; what it gains is the overlap of one request's "
              f"HTTP and preprocessing with another's generation): {why}.")
    for way, rates in by_way.items():
        if way in comparable:
            continue
        if max(rates[level] / rates[1] for level in LEVELS[1:]) < SCALING:
            print(f"in-flight scaling does not follow at {way.rsplit(' (', 1)[0]} (at best "
                  f"{max(rates[level] / rates[1] for level in LEVELS[1:]):.2f}x): it answers one request at a time, "
                  "or something between here and it does (a proxy, a rate limit)")


if __name__ == "__main__":
    main()
