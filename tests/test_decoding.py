"""Decoding is the benchmark's: a model's generation_config.json that asks for sampling at temperature 0.7, a
repetition penalty of 1.05 and max_length 20 changes no answer, and what it asked, what was used and the decision for
each field are recorded (run.decoding)."""
from __future__ import annotations

import json
import shutil

import pytest
import torch

from evaluator.models import decoding
from evaluator.models.base import GenerationRequest
from evaluator.models.transformers_adapter import TransformersAdapter

ASKS = {"do_sample": True, "temperature": 0.7, "repetition_penalty": 1.05, "max_length": 20}


@pytest.fixture(scope="module")
def folders(tiny_llava, tmp_path_factory):
    """The tiny LLaVA as built (neutral generation config) and a copy whose generation_config.json asks ASKS."""
    asking = tmp_path_factory.mktemp("asking") / "tiny-llava"
    shutil.copytree(tiny_llava.folder, asking)
    config = json.loads((asking / "generation_config.json").read_text())
    (asking / "generation_config.json").write_text(json.dumps({**config, **ASKS}))
    return tiny_llava.folder, asking


@pytest.fixture(scope="module")
def adapters(folders):
    """Both folders' tiny LLaVA, loaded once for the module: (neutral, asking)."""
    return tuple(TransformersAdapter.from_folder(folder, model_id="tiny/llava", precision="float32", device="cpu",
                                                 batch_size=2) for folder in folders)


REQUESTS = [GenerationRequest(f"Describe thing {i} at length.", max_new_tokens=24) for i in range(3)]


def test_a_model_asking_for_sampling_and_a_penalty_answers_as_the_benchmark_decodes(adapters):
    neutral, asking = adapters
    assert asking.model.generation_config.do_sample is True  # it does ask
    plain, asked = neutral.generate_results(REQUESTS), asking.generate_results(REQUESTS)
    assert [r.text for r in asked] == [r.text for r in plain]
    # max_length 20 does not cut a reply: each benchmark's max_new_tokens decides
    prompt_tokens = len(asking.tokenizer(asking.build_prompt(REQUESTS[0]))["input_ids"])
    assert prompt_tokens + 24 > 20 and max(r.n_tokens for r in asked) > 20 - prompt_tokens
    # what the model's own config would have done: generate() honouring it answers otherwise
    inputs = asking._encode([asking.build_prompt(REQUESTS[0])], [[]])
    torch.manual_seed(0)
    own = asking.model.generate(**inputs, max_new_tokens=24, pad_token_id=asking.tokenizer.pad_token_id)
    own_text = asking.tokenizer.decode(own[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    assert own_text != asked[0].text


def test_every_decided_field_is_recorded_with_what_was_asked_and_used(adapters):
    record = adapters[1].decoding
    assert record["rule"] == decoding.RULE
    fields = record["fields"]
    assert fields["do_sample"] == {"asked": True, "used": False, "decision": "overridden"}
    assert fields["temperature"] == {"asked": 0.7, "used": None, "decision": "overridden"}
    assert fields["repetition_penalty"] == {"asked": 1.05, "used": None, "decision": "overridden"}
    assert fields["max_length"]["decision"] == "overridden" and "max_new_tokens" in fields["max_length"]["used"]
    assert fields["eos_token_id"]["decision"] == "honoured"
    assert "do_sample" not in adapters[0].decoding["fields"]  # a neutral config asks nothing


def test_every_overridden_field_is_one_generate_takes():
    from transformers import GenerationConfig

    known = GenerationConfig()
    assert all(hasattr(known, key) for key in (*decoding.OVERRIDDEN, *decoding.HONOURED))
