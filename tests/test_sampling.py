"""Sampling that no batch can change (evaluator.models.sampling) and the seeds benchmarks give it
(evaluator.benchmarks.seeds): a row's draws are its own, the draw follows the distribution asked for, greedy rows
stay greedy."""
from __future__ import annotations

import math

import pytest
import torch

from evaluator.benchmarks.seeds import item_seed
from evaluator.models.sampling import RowSampler, pick, uniforms


def test_a_rows_uniforms_depend_on_its_seed_alone():
    together = uniforms([11, 22, 33], 5)
    assert together.shape == (3, 5) and together.dtype == torch.float64
    assert torch.equal(uniforms([22], 5)[0], together[1])  # the same row alone
    assert torch.equal(uniforms([33, 11], 5)[1], together[0])  # in another order, beside another row
    assert not torch.equal(together[0], together[1])
    assert torch.equal(uniforms([11], 8)[0, :5], together[0])  # a longer budget draws the same first uniforms
    assert ((together >= 0) & (together < 1)).all()


def test_a_draw_picks_the_token_whose_cumulative_share_it_falls_in():
    scores = torch.log(torch.tensor([[0.1, 0.2, 0.0, 0.7]]))
    ones = torch.ones(1)
    assert pick(scores, ones, torch.tensor([0.05]))[0].item() == 0
    assert pick(scores, ones, torch.tensor([0.1]))[0].item() == 1  # a boundary belongs to the next token
    assert pick(scores, ones, torch.tensor([0.29]))[0].item() == 1
    assert pick(scores, ones, torch.tensor([0.30]))[0].item() == 3  # a token of probability 0 is never picked
    assert pick(scores, ones, torch.tensor([0.999999]))[0].item() == 3


def test_draws_follow_the_distribution_at_the_temperature():
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    draws = uniforms([item_seed("test", 0, "q", 0)], 20_000)[0]
    for temperature in (1.0, 0.5):
        rows = logits.expand(len(draws), -1)
        picked = pick(rows, torch.full((len(draws),), temperature), draws)[0]
        shares = torch.bincount(picked, minlength=4).double() / len(draws)
        expected = torch.softmax(logits / temperature, dim=-1).double()
        assert torch.allclose(shares, expected, atol=0.015), (temperature, shares, expected)


def test_row_sampler_samples_its_rows_and_leaves_greedy_rows_greedy():
    vocab = 50
    torch.manual_seed(0)
    prompt = torch.zeros((3, 4), dtype=torch.long)
    sampler = RowSampler([0.0, 1.0, 1.0], [None, 7, 8], steps=6, prompt_length=4, device="cpu")
    alone = RowSampler([1.0], [8], steps=6, prompt_length=4, device="cpu")
    chosen, alone_chosen = [], []
    ids = prompt
    for step in range(6):
        scores = torch.randn(3, vocab)
        out = sampler(ids, scores)
        assert out.shape == scores.shape and torch.isfinite(out).sum(dim=1).tolist() == [1, 1, 1]
        tokens = out.argmax(dim=-1)
        assert tokens[0].item() == scores[0].argmax().item()  # the greedy row
        chosen.append(tokens)
        alone_chosen.append(alone(ids[2:3], scores[2:3]).argmax(dim=-1).item())
        ids = torch.cat([ids, tokens[:, None]], dim=1)
    # the third row draws the same tokens alone as beside the others
    assert [t[2].item() for t in chosen] == alone_chosen
    # past its budget (a step generate undoes) it falls back to the arg-max
    scores = torch.randn(3, vocab)
    assert torch.equal(sampler(ids, scores).argmax(dim=-1), scores.argmax(dim=-1))


def test_row_sampler_without_a_seed_draws_from_torchs_generator():
    torch.manual_seed(5)
    first = RowSampler([1.0], [None], steps=4, prompt_length=1, device="cpu").draws
    torch.manual_seed(5)
    assert torch.equal(RowSampler([1.0], [None], steps=4, prompt_length=1, device="cpu").draws, first)


def test_item_seeds_are_per_benchmark_item_and_repeat():
    seeds = {item_seed(b, s, q, r) for b in ("reform", "simpleqa") for s in (0, 1) for q in ("a", "b")
             for r in range(3)}
    assert len(seeds) == 24 and all(0 <= s < 2 ** 63 for s in seeds)
    assert item_seed("reform", 0, "a", 1) == item_seed("reform", 0, "a", 1)
    # a fixed value, so that a change to the formula (which moves every sampled answer) is seen
    assert item_seed("reform", 0, "q-1", 0) == 1089006480412964098
    assert isinstance(item_seed("reform", -(2 ** 63), "q", 4), int)


@pytest.mark.parametrize("temperature", [0.2, 1.0])
def test_a_temperature_sharpens_as_it_falls(temperature):
    logits = torch.tensor([1.0, 0.0])
    draws = uniforms([3], 4000)[0]
    picked = pick(logits.expand(len(draws), -1), torch.full((len(draws),), temperature), draws)[0]
    share = (picked == 0).double().mean().item()
    assert math.isclose(share, 1 / (1 + math.exp(-1 / temperature)), abs_tol=0.03)
