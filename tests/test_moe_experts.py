"""The routed experts on the CPU (evaluator.models.moe_experts): a model loaded for the CPU runs them row-invariant,
and a token's expert output is bit for bit the same alone, in any batch, beside padding rows and across chunks."""
from __future__ import annotations

import pytest
import torch

from evaluator.models import moe_experts
from evaluator.models.loading import load_pretrained

MOE_FAMILIES = ("qwen3_5_moe", "qwen3_vl_moe", "glm4v_moe")


def _experts_and_router(model):
    """The first routed-experts module of a model and the router beside it."""
    for module in model.modules():
        experts = getattr(module, "experts", None)
        if experts is not None and hasattr(experts, "_apply_gate") and hasattr(module, "gate"):
            return experts, module.gate
    raise AssertionError("no routed experts")


def _route(router, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(top-k expert ids, their weights) of each token, whatever the router returns them as."""
    out = router(hidden)
    ids = next(t for t in out if t.dtype in (torch.int64, torch.int32))
    weights = next(t for t in out if t.is_floating_point() and t.shape == ids.shape)
    return ids, weights


@pytest.mark.parametrize("name", MOE_FAMILIES)
def test_a_cpu_load_runs_row_invariant_experts_whose_tokens_ignore_their_batch(tiny_folder, name, monkeypatch):
    model = load_pretrained(tiny_folder(name), name, "float32", 4, "cpu")[0]
    assert moe_experts.experts_implementation(model) == moe_experts.ROW_INVARIANT
    experts, router = _experts_and_router(model)
    torch.manual_seed(0)
    hidden = torch.randn(40, router.weight.shape[-1])
    with torch.no_grad():
        ids, weights = _route(router, hidden)
        whole = experts(hidden, ids, weights)
        alone = torch.cat([experts(hidden[i:i + 1], ids[i:i + 1], weights[i:i + 1]) for i in range(40)])
        three = torch.cat([experts(hidden[i:i + 3], ids[i:i + 3], weights[i:i + 3]) for i in range(0, 40, 3)])
        monkeypatch.setattr(moe_experts, "CHUNK_BYTES", 1)  # chunks of two tokens
        chunked = experts(hidden, ids, weights)
    assert torch.equal(whole, alone) and torch.equal(whole, three) and torch.equal(whole, chunked)


def test_no_switch_off_the_cpu_nor_for_a_model_without_routed_experts(tiny_folder):
    model = load_pretrained(tiny_folder("qwen3_vl"), "qwen3_vl", "float32", 4, "cpu")[0]
    assert moe_experts.experts_implementation(model) is None
    assert not moe_experts.use_row_invariant_experts(model, "cpu")
    moe = load_pretrained(tiny_folder("qwen3_vl_moe"), "qwen3_vl_moe", "float32", 4, "cpu")[0]
    moe.set_experts_implementation("grouped_mm")
    assert not moe_experts.use_row_invariant_experts(moe, "cuda:0")
    assert moe_experts.experts_implementation(moe) == "grouped_mm"
