"""A mixture-of-experts layer whose every token's output is the same whatever else is in its batch, for the CPU.

transformers runs the routed experts of Qwen3-VL-MoE, Qwen3.5-MoE and GLM-4.5V by "grouped_mm" (default): the
(token, expert) pairs are sorted by expert and each expert multiplies its group in one matrix product. On the CPU a
product's rows come out of different kernels by the group's row count (a group of 1-3 rows and one of 4 or more
differ in the last bits of float32), and a group's size depends on the other prompts of the batch, their padding
included. So a token's expert output moved with the batch (up to 6e-10 in the tests' tiny models, every token), the
drift reached the next layer's router, and a greedy step whose two top tokens are close can pick another token (issue
69: ReForm-Eval cross-03 in the tiny Qwen3.5-MoE, after about 60 identical tokens). The dense layers' own drift
(a one-row product at batch 1's decode steps) is every family's, and is not removed here.

ROW_INVARIANT ("row_invariant") multiplies each (token, expert) pair on its own, as one matrix of a batched product
(transformers' "batched_mm"), whose matrices do not depend on each other or on their number. A product of a single
matrix takes another kernel, so a lone pair is computed beside a copy of itself; pairs go in chunks of at most
CHUNK_BYTES of gathered expert weights. Each token then sums its top-k outputs in its own order, as before.
use_row_invariant_experts switches a model to it where it runs on the CPU; GPUs keep the grouped kernel (their
batch invariance is measured by bench/gpu_check.py). Llama 4 computes every expert for every token (no groups).
"""
from __future__ import annotations

import logging
from typing import Any

import torch

ROW_INVARIANT = "row_invariant"
CHUNK_BYTES = 256 * 2**20  # the most gathered expert weights one batched product holds

log = logging.getLogger(__name__)


def _pairs_bytes(module: torch.nn.Module) -> int:
    """Bytes of one (token, expert) pair's gathered weights."""
    weights = [getattr(module, name, None) for name in ("gate_up_proj", "up_proj", "down_proj")]
    return sum(w[0].numel() * w.element_size() for w in weights if isinstance(w, torch.Tensor))


def row_invariant_experts_forward(module: torch.nn.Module, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
                                  top_k_weights: torch.Tensor) -> torch.Tensor:
    """transformers' batched_mm experts forward, token chunk by token chunk, never on a single (token, expert)
    pair."""
    from transformers.integrations.moe import batched_mm_experts_forward

    tokens, top_k = top_k_index.shape
    per_chunk = max(2, CHUNK_BYTES // max(1, _pairs_bytes(module) * top_k))
    outputs = []
    for start in range(0, tokens, per_chunk):
        rows = slice(start, min(tokens, start + per_chunk))
        states, index, weights = hidden_states[rows], top_k_index[rows], top_k_weights[rows]
        alone = states.shape[0] * top_k < 2
        if alone:  # a one-matrix batched product takes a plain product's kernel: pair it with a copy of itself
            states, index, weights = states.repeat(2, 1), index.repeat(2, 1), weights.repeat(2, 1)
        out = batched_mm_experts_forward(module, states, index, weights)
        outputs.append(out[:1] if alone else out)
    if not outputs:
        return torch.zeros_like(hidden_states)
    return torch.cat(outputs) if len(outputs) > 1 else outputs[0]


def register() -> None:
    """Add ROW_INVARIANT to transformers' experts implementations (once)."""
    from transformers.integrations.moe import ALL_EXPERTS_FUNCTIONS

    if ROW_INVARIANT not in ALL_EXPERTS_FUNCTIONS:
        ALL_EXPERTS_FUNCTIONS.register(ROW_INVARIANT, row_invariant_experts_forward)


def experts_implementation(model: Any) -> str | None:
    """The experts implementation a model runs, or None for a model without routed experts transformers can switch."""
    config = getattr(model, "config", None)
    can_set = getattr(type(model), "_can_set_experts_implementation", None)
    if config is None or can_set is None or not _has_switchable_experts(model) or not can_set():
        return None
    return getattr(config, "_experts_implementation", None)


def _has_switchable_experts(model: Any) -> bool:
    """Whether a module of the model dispatches its forward by config._experts_implementation."""
    return any(hasattr(module, "_apply_gate") and hasattr(module, "has_gate") for module in model.modules())


def use_row_invariant_experts(model: Any, device: str) -> bool:
    """Switch a model on the CPU whose routed experts transformers dispatches to ROW_INVARIANT; whether it did."""
    if not str(device).startswith("cpu") or experts_implementation(model) is None:
        return False
    register()
    model.set_experts_implementation(ROW_INVARIANT)
    log.info("routed experts: %s (each token's output independent of its batch)", ROW_INVARIANT)
    return True
