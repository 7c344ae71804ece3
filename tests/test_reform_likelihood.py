"""ReForm-Eval in likelihood mode, against the reference run's TDIUC dump (shared/data/reform_eval): the request keeps
the one-shot in-context example before the question, as the reference's likelihood run does."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.benchmarks.reform import planning
from evaluator.benchmarks.reform.datasets import MC
from evaluator.benchmarks.spec import PlanContext
from evaluator.metrics.reform import find_option_mark

TDIUC = Path(__file__).resolve().parents[2] / "shared" / "data" / "reform_eval" / \
    "TDIUC_SingleChoice_likelihood_imagebindLLM_imagebindLLM.json"


def _dump() -> list[dict]:
    if not TDIUC.exists():
        pytest.skip(f"reference dump not found: {TDIUC} (shared/data/reform_eval is absent)")
    return json.loads(TDIUC.read_text())


def _items(dump: list[dict]) -> list[dict]:
    """The dump's distinct questions as suite items (one per sample, without an image)."""
    items = {}
    for r in dump:
        items.setdefault(r["sample_id"], {
            "question_id": r["sample_id"], "dataset": "TDIUC-color", "dimension": "fine_perception", "form": MC,
            "question": r["question"], "options": sorted(r["answer_options"]),
            "answer": r["answer_options"][r["answer"]], "image": None, "history": []})
    return list(items.values())


def _plan(monkeypatch, items: list[dict], mode: str):
    monkeypatch.setattr(planning, "load_suite", lambda ctx: items)
    return planning.plan(PlanContext(options={"reform.mode": mode, "reform.repeats": "1"}))


def test_reference_likelihood_dump_has_an_in_context_example_before_the_question():
    """What the reference sends in likelihood mode: a human turn listing marked options and the assistant's marked
    reply, then the question alone (its options are scored, not listed)."""
    dump = _dump()
    assert len(dump) == 55
    for r in dump:
        assert [t["from"] for t in r["history"]] == ["human", "assistant"]
        example, reply = (t["value"] for t in r["history"])
        assert find_option_mark(example) is not None and find_option_mark(reply) is not None
        after_example = r["text"].split(example, 1)[1]
        assert after_example.index(reply) < after_example.rindex(r["question"])
        assert find_option_mark(after_example.split(reply, 1)[1]) is None  # no option list after the example


def test_our_likelihood_requests_keep_the_example_as_the_reference_does(monkeypatch):
    dump = _dump()
    items = _items(dump)
    lik = _plan(monkeypatch, items, "likelihood")
    gen = _plan(monkeypatch, items, "generation")
    assert len(lik.asks) == len(items) == 11 and all(a.options is not None for a in lik.asks)
    reference_roles = [["user" if t["from"] == "human" else "assistant" for t in r["history"]] for r in dump]
    for ask, item, generated in zip(lik.asks, items, gen.asks):
        history = ask.request.history
        assert [t["role"] for t in history] == reference_roles[0]  # the reference's shape: example, marked reply
        assert find_option_mark(history[0]["content"]) is not None and find_option_mark(history[1]["content"]) == 1
        assert history == generated.request.history  # the same example turn in both modes
        assert item["question"] in ask.request.text and find_option_mark(ask.request.text) is None
        assert sorted(ask.options) == item["options"]
    assert {"reform_example", "reform_example_answer"} <= set(lik.prompts)  # hashed into the results


def test_the_example_comes_before_a_dialogue_history_in_likelihood_mode(monkeypatch):
    """As the reference's multi-round builder: the in-context sample first, then the dialogue's earlier rounds."""
    item = {"question_id": "7_1", "dataset": "VisDial", "dimension": "multi_turn_dialogue", "form": MC,
            "question": "Is it sunny?", "options": ["yes", "no"], "answer": "yes", "image": None,
            "history": [{"from": "human", "value": "Is there a dog?"}, {"from": "assistant", "value": "no"}]}
    ask = _plan(monkeypatch, [item], "likelihood").asks[0]
    contents = [t["content"] for t in ask.request.history]
    assert len(contents) == 4 and contents[2:] == ["Is there a dog?", "no"]
    assert find_option_mark(contents[1]) is not None
