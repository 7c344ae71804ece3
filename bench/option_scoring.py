"""Option scoring: shared prefix (the prompt's KV cache reused for every option) vs one forward pass per option.

A LLaVA of realistic shape with random weights (bench/_models.py: Llama 8 layers / hidden 512, CLIP tower giving
64 image tokens) is saved to a temporary folder and loaded through evaluator.models.load_model. One request (an
image and a ~40-token question) is scored against 6 options (CURE's count) of sentence length (~8-15 tokens) with
`adapter.score_options(request, options, path="shared_prefix")` and with `path="reference"`; both ways run in
this process, several repetitions each (interleaved), and the medians are printed with their ratio. Both ways
include the adapter's own work (prompt templating, processing the image, tokenizing each option).

Where the time goes (torch.profiler; ~80% of it is matrix products in both ways): the reference path runs the
vision tower and the whole ~125-token sequence 6 times; the shared prefix runs them once (the prefill costs about one
reference forward) plus one batch of 6 x 14 option tokens over the repeated cache (each option's last token is not
fed: nothing follows it), so the ratio stays below 6 by that batch and by the adapter's own per-call work.

Many questions (the executor's way, `adapter.score_options_many`): Q questions (default 32), each with its own
image and 6 options, scored in batches of Q (the prompts processed and prefilled together, then every option over
the prompts' caches: evaluator/models/batched_scoring.py) against one question at a time (batches of 1), with the
largest difference between the two ways' log-likelihoods, and the floor: the bare model's work for the same batch
(the prompts already processed, one prefill forward and one forward of every option row over the caches). The last
line reads `option scoring, <Q> questions: batched is <x>x faster than one at a time; <y>x the floor`.

Run: `.venv/bin/python bench/option_scoring.py [--repeats 9] [--questions 32] [--shape bench|7b|tiny]`. Not part of
the test suite. On any CUDA machine, the 7B figure (a LLaVA-1.5-7B-shaped model, random weights, bfloat16, 576 image
tokens; about 15 GB of disk for the saved folder): `python bench/option_scoring.py --shape 7b --questions 32`
(bench/gpu_check.py runs `many_questions` so, among its other checks).
"""
from __future__ import annotations

import math

import _models  # noqa: E402  (sets sys.path to the project root)

# 13, 11, 10, 13, 15 and 8 tokens with the tests' tokenizer.
OPTIONS = [
    " The ball is blue, there are three.",
    " A cat sits on a mat.",
    " There are three people.",
    " The small green box is red.",
    " The ball is red and the car is blue.",
    " The ball is on the left.",
]


def main(repeats: int = 9, questions: int = 32, shape: str = "bench") -> None:
    import torch

    from evaluator.models import GenerationRequest

    adapter = _models.load_llava(shape=shape)
    request = GenerationRequest(_models.QUESTION, images=[_models.image(0)])
    prompt_ids = adapter._encode([adapter.build_prompt(request)], [request.images])["input_ids"]
    lengths = [len(adapter.tokenizer(o, add_special_tokens=False)["input_ids"]) for o in OPTIONS]
    question = len(adapter.tokenizer(_models.QUESTION, add_special_tokens=False)["input_ids"])
    print(f"model: LLaVA ({shape} shape) on {adapter.device} as {adapter.dtype}, torch threads "
          f"{torch.get_num_threads()}; prompt {prompt_ids.shape[1]} tokens (question {question}), {len(OPTIONS)} "
          f"options of {lengths} tokens")
    one_question(adapter, request, repeats)
    many_questions(adapter, questions, max(3, repeats // 3))


def one_question(adapter, request, repeats: int) -> None:
    """One question's 6 options: shared prefix against one forward pass per option."""
    import statistics

    shared = adapter.score_options(request, OPTIONS, path="shared_prefix")
    reference = adapter.score_options(request, OPTIONS, path="reference")
    worst = max(abs(s.sum_logprob - r.sum_logprob) for s, r in zip(shared, reference))
    print(f"largest difference between the two ways' summed log-likelihoods: {worst:.2e}")
    assert all(s.n_tokens == r.n_tokens for s, r in zip(shared, reference)) and math.isfinite(worst)

    times = {"shared_prefix": [], "reference": []}
    for _ in range(repeats):
        for path in times:
            times[path].append(_models.median_seconds(lambda p=path: forget_images(adapter) or adapter.score_options(
                request, OPTIONS, path=p), repeats=1))
    shared_s, reference_s = (statistics.median(times[p]) for p in ("shared_prefix", "reference"))
    print(f"shared prefix (one prompt pass + one batch of {len(OPTIONS)} options): median {shared_s * 1000:.1f} ms")
    print(f"reference (one forward pass per option): median {reference_s * 1000:.1f} ms")
    print(f"option scoring: shared prefix is {reference_s / shared_s:.2f}x faster than one pass per option")


def many_questions(adapter, count: int, repeats: int) -> dict:
    """`count` questions through score_options_many, in one batch against one at a time, and the floor; printed,
    and returned as {questions, batched_s, single_s, floor_s (medians), agree (questions where both ways chose the
    same option), worst (the largest difference between their log-likelihoods)}."""
    import statistics

    from evaluator.models import GenerationRequest, batched_scoring

    suffixes = ["", " Answer briefly.", " Look at the left side.", " Count carefully, please."]
    asks = [(GenerationRequest(_models.QUESTION + suffixes[q % len(suffixes)], images=[_models.image(q)]),
             OPTIONS[q % 3:] + OPTIONS[:q % 3]) for q in range(count)]

    def scored(size: int):
        adapter.scoring_batch_size = size
        forget_images(adapter)
        return adapter.score_options_many(asks)

    batched, single = scored(count), scored(1)
    worst = max(abs(b.sum_logprob - s.sum_logprob) for bs, ss in zip(batched, single) for b, s in zip(bs, ss))
    agree = sum(max(range(len(bs)), key=lambda i: bs[i].sum_logprob) == max(range(len(ss)), key=lambda i:
                ss[i].sum_logprob) for bs, ss in zip(batched, single))
    print(f"{count} questions: largest difference between batched and one-at-a-time log-likelihoods {worst:.2e}; "
          f"the same option chosen in {agree} of {count}")

    prompts = [adapter.build_prompt(request) for request, _ in asks]
    inputs = adapter._cast(adapter._encode(prompts, [request.images for request, _ in asks]))
    mask = inputs["attention_mask"]
    option_ids = [adapter._all_option_ids(prompt, request.images, options, inputs["input_ids"][q][mask[q].bool()])
                  for q, (prompt, (request, options)) in enumerate(zip(prompts, asks))]
    rows = sum(len(options) for options in option_ids)

    def floor():
        batched_scoring.score_questions(adapter.model, inputs, option_ids, max_rows=rows)
        if adapter.device == "cuda":
            torch_sync()

    def timed(fn):
        def run():
            fn()
            if adapter.device == "cuda":
                torch_sync()
        return run

    times = {"batched": [], "single": [], "floor": []}
    for _ in range(repeats):
        times["batched"].append(_models.median_seconds(timed(lambda: scored(count)), repeats=1))
        times["single"].append(_models.median_seconds(timed(lambda: scored(1)), repeats=1))
        times["floor"].append(_models.median_seconds(floor, repeats=1))
    batched_s, single_s, floor_s = (statistics.median(times[k]) for k in ("batched", "single", "floor"))
    print(f"{count} questions x {len(OPTIONS)} options: batched {batched_s * 1000:.1f} ms, one at a time "
          f"{single_s * 1000:.1f} ms, floor (bare model: one prefill of the {count} prompts + one forward of the "
          f"{rows} option rows) {floor_s * 1000:.1f} ms")
    print(f"option scoring, {count} questions: batched is {single_s / batched_s:.2f}x faster than one at a time; "
          f"{batched_s / floor_s:.2f}x the floor")
    return {"questions": count, "batched_s": batched_s, "single_s": single_s, "floor_s": floor_s, "agree": agree,
            "worst": worst}


def forget_images(adapter) -> None:
    """Let the adapter's kept image features go (evaluator.models.image_features), so that each timing encodes its
    images once, as the floor does."""
    if getattr(adapter, "image_features", None) is not None:
        adapter.image_features.clear()


def torch_sync() -> None:
    import torch

    torch.cuda.synchronize()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Option scoring: one question's ways, and many questions at once.")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--questions", type=int, default=32)
    parser.add_argument("--shape", choices=tuple(_models.SHAPES), default="bench")  # tiny: the smoke test's
    args = parser.parse_args()
    main(args.repeats, args.questions, args.shape)
