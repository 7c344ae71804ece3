"""Issue 69, point 2: a reply's near ties are recorded, shown, and explain every difference between batch sizes.

A greedy step whose top two tokens score within NEAR_TIE_MARGIN, or a sampled step whose draw falls within
NEAR_DRAW_MARGIN of an edge of the token it drew, is a near tie: the float32 drift between batch shapes (about 1e-7 in
probability, 1e-5 in logits on the tiny models) may pick the other token there. The tiny PaliGemma's ReForm-Eval
sample at --limit 4 parted between batch 1 and 4 at such a draw (margins 1.3e-9 and 1.6e-7 at step 9, after the same
tokens): the details of both runs now say so, and the batch checks (tests.batch_details) accept a differing reply only
where both runs recorded the tie they parted at."""
from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

from evaluator.benchmarks.item_tables import near_ties_text, prompt_and_output
from evaluator.models import sampling
from evaluator.models.base import GenerationRequest
from evaluator.models.near_ties import MAX_NEAR_TIES, NearTieWatch, prefix_digest
from evaluator.models.sampling import pick
from evaluator.models.transformers_adapter import TransformersAdapter
from tests.batch_details import differing_rows, parted_at


@pytest.fixture(scope="module")
def flat_llama(tiny_llama, one_torch_thread):
    """The tiny Llama with its output layer zeroed: every logit equal, so every step is an exact tie."""
    adapter = TransformersAdapter.from_folder(tiny_llama.folder, model_id="tiny/llama", precision="float32",
                                              device="cpu", batch_size=2)
    head = adapter.model.get_output_embeddings()
    with torch.no_grad():
        head.weight.zero_()
        if getattr(head, "bias", None) is not None:
            head.bias.zero_()
    return adapter


def test_the_watch_changes_no_score_and_a_warm_up_is_overwritten():
    watch = NearTieWatch(prompt_length=3)
    scores = torch.tensor([[1.0, 1.0005, -2.0], [0.0, 5.0, 1.0]])
    assert torch.equal(watch(torch.zeros(2, 3, dtype=torch.long), scores.clone()), scores)
    watch(torch.zeros(2, 3, dtype=torch.long), torch.tensor([[0.0, 9.0, 1.0], [0.0, 5.0, 1.0]]))  # step 0 again
    watch(torch.zeros(2, 4, dtype=torch.long), scores.clone())  # step 1

    class Tokens:
        def decode(self, ids):
            return f"t{ids[0]}"

    assert watch.ties(0, [1, 1], 2, Tokens()) == [
        {"step": 1, "kind": "top two", "margin": 0.0005, "tokens": ["t1", "t0"], "before": prefix_digest([1])}]
    assert watch.ties(1, [1, 1], 2, Tokens()) == []


def test_a_draw_at_an_edge_has_a_margin_near_zero_and_names_the_token_across():
    scores = torch.log(torch.tensor([[0.25, 0.0, 0.25, 0.5]]))  # token 1 never drawn: the edge is 0 | 2
    chosen, margin, across = pick(scores, torch.tensor([1.0]), torch.tensor([0.25 + 1e-9], dtype=torch.float64))
    assert (chosen.item(), across.item()) == (2, 0) and margin.item() < 1e-6
    chosen, margin, across = pick(scores, torch.tensor([1.0]), torch.tensor([0.6], dtype=torch.float64))
    assert (chosen.item(), across.item()) == (3, 2) and margin.item() == pytest.approx(0.1)


def test_greedy_ties_are_recorded_per_reply_up_to_its_end(flat_llama):
    results = flat_llama.generate_results([GenerationRequest("Name a colour.", max_new_tokens=12),
                                           GenerationRequest("Say something longer.", max_new_tokens=5)])
    for result, budget in zip(results, (12, 5)):
        steps = [tie["step"] for tie in result.near_ties]
        assert steps == list(range(min(budget, MAX_NEAR_TIES)))  # every step tied, the first few kept
        assert all(tie["kind"] == "top two" and tie["margin"] == 0 for tie in result.near_ties)


def test_sampled_ties_come_from_the_sampler(flat_llama, monkeypatch):
    """Every draw half-way: on the flat model's even vocabulary, exactly on the edge between two tokens."""
    monkeypatch.setattr(sampling, "uniforms", lambda seeds, steps: torch.full((len(seeds), steps), 0.5,
                                                                              dtype=torch.float64))
    flat = GenerationRequest("Pick one.", max_new_tokens=3, temperature=1.0, seed=7)
    greedy = GenerationRequest("Pick one.", max_new_tokens=3)
    drawn, argmax = flat_llama.generate_results([flat, greedy])
    assert [t["kind"] for t in drawn.near_ties] == ["draw"] * 3 and all(t["margin"] < 1e-9 for t in drawn.near_ties)
    assert [t["kind"] for t in argmax.near_ties] == ["top two"] * 3  # its batch-mate stays greedy


def test_a_served_or_unwatched_reply_records_nothing_and_the_explorer_shows_ties():
    row = {"prompt": "p", "prediction": "low<loc0258>", "near_ties": json.dumps([
        {"step": 9, "kind": "draw", "margin": 1.26e-09, "tokens": ["<loc0258>", "<script>"], "before": "ab"}])}
    label, said = near_ties_text(row)
    assert label.startswith("Near ties (1:") and "step 9" in said and "'<script>'" in said
    assert prompt_and_output(row)[-1] == (label, said)
    for cell in (None, float("nan"), "", "[]", "not json", json.dumps([{"step": 1}])):
        assert near_ties_text({"near_ties": cell}) is None
        assert [label for label, _ in prompt_and_output({"near_ties": cell})] == ["Prompt as sent", "Raw output"]


def test_a_difference_is_explained_only_where_both_runs_parted_at_a_recorded_tie(tmp_path):
    tie = {"step": 9, "kind": "draw", "margin": 1e-9, "before": "9213fe413158"}
    one = json.dumps([{**tie, "tokens": ["<loc0258>", "<loc0259>"]}])
    four = json.dumps([{**tie, "margin": 1.6e-7, "tokens": ["<loc0272>", "<loc0271>"]}])
    elsewhere = json.dumps([{**tie, "before": "000000000000", "tokens": ["<loc0272>", "<loc0271>"]}])
    assert parted_at(one, four) == 9 and parted_at(one, one) is None and parted_at(one, elsewhere) is None
    assert parted_at(one, None) is None
    for run, (answer, ties) in {"a": ("low<loc0258>", one), "b": ("low<loc0272>", four),
                                "c": ("low<loc0272>", elsewhere)}.items():
        (tmp_path / run / "details").mkdir(parents=True)
        pd.DataFrame({"question_id": ["q1", "q2"], "prediction": [answer, "same"], "near_ties": [ties, "[]"]}
                     ).to_parquet(tmp_path / run / "details" / "reform.parquet")
    explained = differing_rows(tmp_path / "a", tmp_path / "b")["reform"]
    assert [(d.row, d.columns, d.parted_at) for d in explained] == [(0, ["prediction"], 9)]
    unexplained = differing_rows(tmp_path / "a", tmp_path / "c")["reform"]
    assert [(d.row, d.parted_at) for d in unexplained] == [(0, None)]
    assert differing_rows(tmp_path / "b", tmp_path / "c")["reform"] == []  # near ties alone never make a difference
