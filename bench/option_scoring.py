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

Run: `.venv/bin/python bench/option_scoring.py [repeats]`. Not part of the test suite.
"""
from __future__ import annotations

import math
import sys

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


def main(repeats: int = 9) -> None:
    import torch

    from evaluator.models import GenerationRequest

    adapter = _models.load_llava()
    request = GenerationRequest(_models.QUESTION, images=[_models.image(0)])
    prompt_ids = adapter._encode([adapter.build_prompt(request)], [request.images])["input_ids"]
    lengths = [len(adapter.tokenizer(o, add_special_tokens=False)["input_ids"]) for o in OPTIONS]
    question = len(adapter.tokenizer(_models.QUESTION, add_special_tokens=False)["input_ids"])
    print(f"model: LLaVA (Llama 8x512, CLIP 128/16), torch threads {torch.get_num_threads()}; "
          f"prompt {prompt_ids.shape[1]} tokens (question {question}), {len(OPTIONS)} options of {lengths} tokens")

    shared = adapter.score_options(request, OPTIONS, path="shared_prefix")
    reference = adapter.score_options(request, OPTIONS, path="reference")
    worst = max(abs(s.sum_logprob - r.sum_logprob) for s, r in zip(shared, reference))
    print(f"largest difference between the two ways' summed log-likelihoods: {worst:.2e}")
    assert all(s.n_tokens == r.n_tokens for s, r in zip(shared, reference)) and math.isfinite(worst)

    times = {"shared_prefix": [], "reference": []}
    for _ in range(repeats):
        for path in times:
            times[path].append(_models.median_seconds(lambda p=path: adapter.score_options(request, OPTIONS, path=p),
                                                      repeats=1))
    import statistics

    shared_s, reference_s = (statistics.median(times[p]) for p in ("shared_prefix", "reference"))
    print(f"shared prefix (one prompt pass + one batch of {len(OPTIONS)} options): median {shared_s * 1000:.1f} ms")
    print(f"reference (one forward pass per option): median {reference_s * 1000:.1f} ms")
    print(f"option scoring: shared prefix is {reference_s / shared_s:.2f}x faster than one pass per option")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
