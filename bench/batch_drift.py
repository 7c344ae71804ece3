"""How far the batch moves what a model computes: the same requests alone and in one batch, per model family.

For each family's tiny model (tests/tiny_models.py, random weights, float32 on the CPU) and 8 requests of differing
lengths (with an image of its own each, for the vision families), it prints:
- greedy: how many of the 8 answers are identical at batch 1 and at batch 8;
- sampled: the same at temperature 1, each request with a seed of its own (evaluator.models.sampling);
- first position: the largest difference in log-probability, batch 1 against batch 8, at the first generated
  position, over each request's 20 most likely tokens (first_position_drift);
- option scores: the largest difference in an option's summed log-likelihood, one question at a time against 8
  together (score_options_many; families scored by the reference path score one question at a time anyway);
- the smallest gap between the two most likely first tokens, and how many requests have a gap below the drift (only
  those could change their first token with the batch).

bench/gpu_check.py's parts 2 and 3 measure the same two drifts on a LLaVA-1.5-7B-shaped model in bfloat16 on a GPU
(first_position_drift is shared).

Run: `.venv/bin/python bench/batch_drift.py [--families llava,qwen2_vl] [--requests 8]`. Not part of the test suite;
tests/test_families.py asserts the float32 invariance it prints.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root)

TOP = 20  # the first position's drift is read over each request's TOP most likely tokens


def first_logprobs(adapter, requests: list, size: int) -> list:
    """Each request's log-probabilities (float32, on the CPU) at the first generated position, as generate computes
    them (left-padded batches of `size`, with the attention mask and generate's own position ids)."""
    import torch

    found = []
    with torch.inference_mode():
        for start in range(0, len(requests), size):
            chunk = requests[start:start + size]
            inputs = adapter._cast(adapter._encode([adapter.build_prompt(r) for r in chunk],
                                                   [r.images for r in chunk]))
            runner = adapter._runner(any(r.images for r in chunk))
            out = runner.generate(**inputs, max_new_tokens=1, do_sample=False, temperature=None, top_k=None,
                                  top_p=None, output_logits=True, return_dict_in_generate=True,
                                  pad_token_id=adapter.tokenizer.pad_token_id)
            found.extend(out.logits[0].float().log_softmax(-1).cpu())
    return found


def first_position_drift(adapter, requests: list, size: int, top: int = TOP) -> dict:
    """Batch 1 against batch `size` at the first generated position: {drift (the largest log-probability difference
    over each request's `top` most likely tokens at batch 1), min_gap (the smallest gap between a request's two most
    likely tokens), could_flip (requests whose gap is below the drift), same_top (requests whose most likely token
    is the same both ways), requests}."""
    alone, together = first_logprobs(adapter, requests, 1), first_logprobs(adapter, requests, size)
    drift, gaps, same = 0.0, [], 0
    for a, b in zip(alone, together):
        best = a.topk(min(top, a.shape[-1])).indices
        drift = max(drift, float((a[best] - b[best]).abs().max()))
        two = a.topk(2).values
        gaps.append(float(two[0] - two[1]))
        same += int(a.argmax() == b.argmax())
    return {"requests": len(requests), "drift": drift, "min_gap": min(gaps),
            "could_flip": sum(gap < drift for gap in gaps), "same_top": same}


def option_drift(adapter, asks: list, size: int) -> float:
    """The largest difference in an option's summed log-likelihood: one question at a time against `size` together."""
    adapter.scoring_batch_size = 1
    alone = adapter.score_options_many(asks)
    adapter.scoring_batch_size = size
    together = adapter.score_options_many(asks)
    return max(abs(a.sum_logprob - b.sum_logprob) for xs, ys in zip(alone, together) for a, b in zip(xs, ys))


def requests_for(adapter, count: int, temperature: float = 0.0, new_tokens: int = 8) -> list:
    """`count` requests of differing lengths (an image each for a vision model); sampled ones with seeds of their
    own."""
    from evaluator.benchmarks.seeds import item_seed
    from evaluator.models import GenerationRequest

    return [GenerationRequest(_models.QUESTIONS[i % len(_models.QUESTIONS)],
                              images=[_models.image(i, (40 + 8 * i, 32 + 4 * i))] if adapter.has_vision else [],
                              max_new_tokens=new_tokens, temperature=temperature,
                              seed=item_seed("bench", 0, str(i), 0) if temperature > 0 else None)
            for i in range(count)]


def answers_at(adapter, requests: list, size: int) -> list[str]:
    adapter.batch_size = size
    return adapter.generate(requests)


def measure(adapter, count: int) -> dict:
    """The figures the docstring lists, for one loaded adapter."""
    greedy, sampled = requests_for(adapter, count), requests_for(adapter, count, temperature=1.0)
    same_greedy = sum(a == b for a, b in zip(answers_at(adapter, greedy, 1), answers_at(adapter, greedy, count)))
    same_sampled = sum(a == b for a, b in zip(answers_at(adapter, sampled, 1), answers_at(adapter, sampled, count)))
    options = [" The ball is red.", " A cat.", " There are three people.", " yes"]
    asks = [(r, options[i % 4:] + options[:i % 4]) for i, r in enumerate(greedy)]
    return {"greedy_same": same_greedy, "sampled_same": same_sampled, "options": option_drift(adapter, asks, count),
            "scoring_path": adapter.scoring_path, **first_position_drift(adapter, greedy, count)}


def main(families: list[str], count: int, dtype: str = "float32") -> None:
    import torch

    from evaluator.models import load_model
    from tests.tiny_models import FAMILIES

    torch.set_num_threads(max(1, torch.get_num_threads()))
    print(f"batch 1 against batch {count}, {dtype} on the CPU, {count} requests, tiny random-weight models")
    print(f"{'family':<13} {'greedy':>7} {'sampled':>8} {'first-token drift':>18} {'option drift':>13} "
          f"{'min top-2 gap':>14} {'could flip':>10}")
    with tempfile.TemporaryDirectory(prefix="batch-drift-") as root:
        for name in families:
            folder = FAMILIES[name](Path(root) / name)
            adapter = load_model(str(folder), precision="float32", device="cpu", batch_size=count)
            if dtype == "float64":  # rounding ~1e-16: what is left of a drift then is the padding's, not rounding's
                adapter.model.to(torch.float64)
            got = measure(adapter, count)
            print(f"{name:<13} {got['greedy_same']:>4}/{count:<2} {got['sampled_same']:>5}/{count:<2} "
                  f"{got['drift']:>18.2e} {got['options']:>13.2e} {got['min_gap']:>14.2e} "
                  f"{got['could_flip']:>10}")


if __name__ == "__main__":
    from tests.tiny_models import FAMILIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                        help="float64 leaves rounding out: a drift that remains would be the padding's")
    args = parser.parse_args()
    main([f.strip() for f in args.families.split(",") if f.strip()], args.requests, args.dtype)
