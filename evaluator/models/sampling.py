"""Sampling that no batch can change: every sampled row draws from a stream of its own.

A request that samples (temperature > 0) carries a seed, derived by its benchmark from the item and the repeat
(evaluator.benchmarks.seeds). Its stream is `steps` uniforms drawn on the CPU from a torch.Generator seeded with that
seed: the uniform of new token t picks the token by inverse transform, the first token whose cumulative probability
(in float64, after the temperature) exceeds it. So a row's sampled tokens depend on its own logits and its own seed,
never on which requests share its batch, how large the batch is, or the device's random state; and the same seed draws
the same uniforms on a CPU and on a GPU. Greedy rows (temperature 0) take the arg-max, as generate's greedy search
does, so greedy and sampled requests may share a batch.

RowSampler is a transformers LogitsProcessor: generate runs greedy search (do_sample=False) with it last in the list,
after the model's own processors, and it returns scores where only the chosen token is finite.
"""
from __future__ import annotations

import torch
from transformers import LogitsProcessor

SEED_BITS = 63  # a row's seed is reduced to this many bits (torch.Generator takes up to 64)
METHOD = "per-request seed (item, repeat), a stream of its own per row"  # what results.json says (run.sampling)


def unseeded() -> int:
    """A seed for a sampled request that came without one (a judge asked to sample without a seed): drawn from
    torch's global generator, so it is as repeatable as the caller's torch.manual_seed makes it."""
    return int(torch.randint(0, 2 ** 62, (1,)).item())


def uniforms(seeds: list[int], steps: int) -> torch.Tensor:
    """[rows, steps] uniforms in [0, 1) (float64, on the CPU): row i is the first `steps` draws of a generator seeded
    with seeds[i], whatever the other rows are."""
    rows = []
    for seed in seeds:
        generator = torch.Generator(device="cpu").manual_seed(int(seed) % (1 << SEED_BITS))
        rows.append(torch.rand(steps, generator=generator, dtype=torch.float64))
    return torch.stack(rows) if rows else torch.empty((0, steps), dtype=torch.float64)


def pick(scores: torch.Tensor, temperatures: torch.Tensor, draws: torch.Tensor
         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One token per row of `scores` [rows, vocab]: the first whose cumulative probability at the row's temperature
    exceeds the row's draw (scaled by the row's total, so rounding never leaves the last token out of reach). With it,
    per row, how near the draw fell to an edge of the chosen token's interval (a probability) and the token drawn
    across that edge: a draw that near an edge is a near tie (evaluator.models.near_ties)."""
    probs = torch.softmax(scores.float() / temperatures[:, None].float(), dim=-1).double()
    cumulative = probs.cumsum(dim=-1)
    total = cumulative[:, -1]
    target = draws.to(cumulative.device) * total
    last = scores.shape[-1] - 1
    chosen = torch.searchsorted(cumulative, target[:, None], right=True).squeeze(-1).clamp_max(last)
    upper = cumulative.gather(1, chosen[:, None]).squeeze(-1)
    lower = torch.where(chosen > 0, cumulative.gather(1, (chosen - 1).clamp_min(0)[:, None]).squeeze(-1), 0.0)
    below, above = (target - lower) / total, (upper - target) / total
    before = torch.searchsorted(cumulative, lower[:, None], right=False).squeeze(-1).clamp_max(last)
    after = torch.searchsorted(cumulative, upper[:, None], right=True).squeeze(-1).clamp_max(last)
    return chosen, torch.minimum(below, above), torch.where(below <= above, before, after)


class RowSampler(LogitsProcessor):
    """Per-row sampling for generate's greedy search: rows with a temperature above 0 are sampled from their own
    stream (uniforms), the others take the arg-max. `prompt_length` is the width of the input_ids handed to generate,
    so that the step of each call is known from the input_ids it sees. A `watch` (near_ties.NearTieWatch, run before
    it) hears how near each sampled row's draw fell to an edge."""

    def __init__(self, temperatures: list[float], seeds: list[int | None], steps: int, prompt_length: int,
                 device: torch.device | str, watch=None) -> None:
        self.prompt_length = int(prompt_length)
        self.sampled = [i for i, t in enumerate(temperatures) if t > 0]
        self.all_sampled = len(self.sampled) == len(temperatures)
        self.rows = torch.tensor(self.sampled, dtype=torch.long, device=device)
        self.temperatures = torch.tensor([temperatures[i] for i in self.sampled], dtype=torch.float32, device=device)
        seeds_used = [seeds[i] if seeds[i] is not None else unseeded() for i in self.sampled]
        self.draws = uniforms(seeds_used, max(1, int(steps))).to(device)
        self.watch = watch

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        step = input_ids.shape[1] - self.prompt_length
        chosen = scores.argmax(dim=-1)
        if self.sampled and 0 <= step < self.draws.shape[1]:  # past the budget: a step generate undoes anyway
            rows = scores if self.all_sampled else scores.index_select(0, self.rows)
            picked, margin, across = pick(rows, self.temperatures, self.draws[:, step])
            if self.all_sampled:
                chosen = picked
            else:
                chosen = chosen.index_copy(0, self.rows, picked)
            if self.watch is not None:
                self.watch.drawn(step, self.rows, margin, torch.stack([picked, across], dim=-1))
        out = torch.full_like(scores, float("-inf"))
        return out.scatter_(1, chosen[:, None], 0.0)
