"""Near ties of decoding: the steps where a greedy reply's top two next tokens scored within NEAR_TIE_MARGIN, or
where a sampled reply's draw fell within NEAR_DRAW_MARGIN of an edge of the token it drew (evaluator.models.sampling).

A greedy reply takes the arg-max at every step. Batch shapes change the order of a matrix product's sums, so the same
row's logits move by a little between batch sizes (float32 on a CPU: about 1e-5 at most on the tests' tiny models, see
bench/family_batches.py). Where the top two are closer than that, the arg-max may flip, and the rest of the reply
follows the other token. Such a step is a near tie: the details record it (details column `near_ties`), so a reply
that differs between two runs can be shown to differ at a step both saw as a near tie, not by a bug.

NearTieWatch is a transformers LogitsProcessor run before the sampler (RowSampler tells it of its draws): it changes
no score. It keeps each step's gaps on the device (no host sync per step) and reads them once the batch is done.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

import torch
from transformers import LogitsProcessor

# Logits whose top two are closer than this are a near tie (the measured drift between batch shapes is under 1e-4);
# for a sampled row, a draw this near (in probability) to an edge of the interval of the token it drew.
NEAR_TIE_MARGIN = 1e-3
NEAR_DRAW_MARGIN = 1e-4
MAX_NEAR_TIES = 8  # kept per reply, the first ones (a random-weight model's flat logits can tie often)


class NearTieWatch(LogitsProcessor):
    """Records the top-two gap and the two leading tokens of every row at every step; changes no score. A step is
    known by the width of the input_ids it sees past `prompt_length`, so a warm-up call or a batch generated again
    (generation_cache's paths) overwrites its steps rather than adding to them."""

    def __init__(self, prompt_length: int) -> None:
        self.prompt_length = int(prompt_length)
        self.steps: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # step -> ([rows] gaps, [rows, 2] token ids)
        self._gaps: dict[int, list[float]] | None = None  # step -> each row's gap, on the host

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        top = scores.float().topk(2, dim=-1)
        self.steps[input_ids.shape[1] - self.prompt_length] = (top.values[:, 0] - top.values[:, 1], top.indices)
        return scores

    def drawn(self, step: int, rows: torch.Tensor, margins: torch.Tensor, tokens: torch.Tensor) -> None:
        """The sampler's word on its sampled `rows` at `step`: how near each draw fell to an edge of the chosen
        token's interval (a probability), and [chosen, the token across that edge]."""
        gaps, tops = self.steps[step]
        self.steps[step] = (gaps.index_copy(0, rows, margins.to(gaps.dtype)), tops.index_copy(0, rows, tokens))

    def ties(self, row: int, ids: list[int], steps: int, tokenizer: Any, sampled: bool = False) -> list[dict]:
        """The near ties of batch row `row` within its first `steps` steps (its generated tokens `ids`, and the step
        that ended it): each its step (0: the first new token), margin, the two tokens (decoded) and a digest of the
        tokens chosen before it."""
        if self._gaps is None:  # every row's gaps read to the host at once, on the first call after the batch
            order = sorted(self.steps)
            gaps = torch.stack([self.steps[s][0] for s in order]).cpu().tolist() if order else []
            self._gaps = dict(zip(order, gaps))
        found = []
        for step in range(steps):
            gap = self._gaps[step][row] if step in self._gaps else None
            near = gap is not None and gap < (NEAR_DRAW_MARGIN if sampled else NEAR_TIE_MARGIN)
            if near and len(found) < MAX_NEAR_TIES:
                first, second = self.steps[step][1][row].tolist()
                found.append({"step": step, "kind": "draw" if sampled else "top two", "margin": float(f"{gap:.3g}"),
                              "tokens": [tokenizer.decode([first]), tokenizer.decode([second])],
                              "before": prefix_digest(ids[:step])})
        return found


def prefix_digest(ids: list[int]) -> str:
    """A short digest of the token ids a reply chose before a step (two replies with the same digest at a step had
    chosen the same tokens up to it)."""
    return hashlib.blake2b(json.dumps(ids).encode(), digest_size=6).hexdigest()
