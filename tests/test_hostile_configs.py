"""Issue 61, point 6 (beside tests/test_hostile_inputs.py): a hostile config.json gets one sentence, not an exception
name, at both doors. `"architectures": {"a": 1}` was `error: KeyError: 0`, `"architectures": 5` a TypeError, nesting
of 10,000 a RecursionError, and the Submit tab answered each with "internal error ... try again later"; preflight
quoted a 100,000-character model_type whole and ran a model with an auto_map inside text_config or vision_config.

The CLI's door: a local model folder holding that config.json (evaluator.runs.preflight, and `python -m evaluator
run` in one slow test); the Submit tab's: the model on the loopback Hub (tests/hub_server.py), asked for online
through the real huggingface_hub client, as the Space does."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from safetensors.numpy import save as save_safetensors

from evaluator.models.base import UnsupportedModelError
from evaluator.runs import preflight
from leaderboard.submissions import model_inspection
from leaderboard.submissions.identity import Visitor
from leaderboard.ui.submit import submit_message
from tests.cli_runs import evaluator_many
from tests.hub_cache import LICENSED_CARD

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 64, "hidden_size": 32,
         "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2}
LONG = "x" * 100_000
NESTED = '{"model_type": "llama", "a": ' + '{"b": ' * 10_000 + "1" + "}" * 10_000 + "}"
REMOTE = {"auto_map": {"AutoModel": "modeling_x.XModel"}}
QUOTED_AT_MOST = 400  # characters a refusal may spend on the whole of a hostile value, and then some

# case -> (config.json's text, what the CLI says, what the Submit tab says)
CASES = {
    "architectures an object": (json.dumps({**LLAMA, "architectures": {"a": 1}}),
                                "unreadable config.json: architectures is an object, not a list of class names",
                                "Unreadable config.json: architectures is an object"),
    "architectures a number": (json.dumps({**LLAMA, "architectures": 5}),
                               "unreadable config.json: architectures is a number, not a list of class names",
                               "Unreadable config.json: architectures is a number"),
    "architectures a text": (json.dumps({**LLAMA, "architectures": "LlamaForCausalLM"}),
                             "unreadable config.json: architectures is text", "Unreadable config.json: architectures"),
    "a 100,000-character architecture": (json.dumps({**LLAMA, "architectures": [LONG]}),
                                         "unreadable config.json: architectures holds 'xxx",
                                         "Unreadable config.json: architectures holds"),
    "nested 10,000 deep": (NESTED, "unreadable config.json: nested deeper than",
                           "Unreadable config.json: nested deeper than"),
    "a 100,000-character model_type": (json.dumps({**LLAMA, "model_type": LONG}),
                                       "unsupported architecture LlamaForCausalLM (model_type 'xxx", "xxx"),
    "an auto_map in text_config": (json.dumps({**LLAMA, "text_config": REMOTE}),
                                   "needs remote code (config.json has text_config.auto_map)",
                                   "config.json has text_config.auto_map"),
    "an auto_map in vision_config": (json.dumps({**LLAMA, "vision_config": {"hidden_size": 8, **REMOTE}}),
                                     "needs remote code (config.json has vision_config.auto_map)",
                                     "config.json has vision_config.auto_map"),
    "text_config a list": (json.dumps({**LLAMA, "text_config": [1]}),
                           "unreadable config.json: text_config is a list, not an object",
                           "Unreadable config.json: text_config is a list"),
}


def _folder(tmp_path, text: str):
    folder = tmp_path / "model"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(text)
    return folder


@pytest.mark.parametrize("case", list(CASES))
def test_preflight_refuses_a_hostile_config_in_one_short_line(tmp_path, case):
    text, said, _ = CASES[case]
    with pytest.raises(UnsupportedModelError) as refused:  # the CLI prints its message alone: no type name
        preflight.check(str(_folder(tmp_path, text)), None, ["cure"], "")
    message = str(refused.value)
    assert said in message and len(message) < QUOTED_AT_MOST and "\n" not in message, message[:600]


@pytest.mark.slow  # starts the evaluator's command line
def test_the_command_line_says_error_and_the_reason(tmp_path):
    folders = {case: _folder(tmp_path / str(i), CASES[case][0]) for i, case in enumerate(CASES)}
    done = evaluator_many([["run", "--model", str(folder), "--benchmarks", "cure", "--out", str(tmp_path / "out")]
                           for folder in folders.values()], tmp_path / "said.json")
    for case, outcome in zip(CASES, done, strict=True):
        last = outcome.stderr.strip().splitlines()[-1]
        assert outcome.returncode == 1 and last.startswith("error: ") and CASES[case][1] in last, (case, last[:600])
        assert "Traceback" not in outcome.stderr and "Error:" not in last and len(last) < QUOTED_AT_MOST, case


def _weights() -> bytes:
    return save_safetensors({"w": np.zeros((4, 4), dtype=np.float32)})


@pytest.fixture
def online_hub(hub, monkeypatch):
    """Submission's online path (model_info, then config.json and the card downloaded at the pinned sha) on the
    loopback Hub, through a client pointed at it."""
    from huggingface_hub import HfApi

    monkeypatch.setattr(model_inspection, "OFFLINE", False)
    return HfApi(endpoint=hub.url, token=hub.issue_token("hub-reader"))


@pytest.fixture
def settings(settings):
    """A leaderboard that also asks a benchmark without images, so the text-only models submitted here are queued
    (a text-only model where every benchmark needs images is refused: test_submit_preflight.py)."""
    return settings.with_(benchmarks=("cure", "simpleqa"))


def _submitted(settings, store, hub, api, name: str, config_text: str, monkeypatch) -> str:
    hub.create_model(name, {"config.json": config_text.encode(), "model.safetensors": _weights(),
                            "README.md": LICENSED_CARD.encode()})
    from leaderboard.submissions import checks

    real = checks.submit
    monkeypatch.setattr(checks, "submit", lambda *args, **kwargs: real(*args, **kwargs, api=api))  # the Space's client
    return submit_message(settings, store, name, by=Visitor("ada"))


def test_a_sound_config_is_still_queued_on_the_loopback_hub(settings, store, hub, online_hub, monkeypatch):
    said = _submitted(settings, store, hub, online_hub, "acme/sound", json.dumps(LLAMA), monkeypatch)
    assert said.startswith("Queued"), said


@pytest.mark.parametrize("case", list(CASES))
def test_submit_refuses_a_hostile_config_in_one_sentence(settings, store, hub, online_hub, monkeypatch, case):
    text, _, said = CASES[case]
    message = _submitted(settings, store, hub, online_hub, f"acme/hostile-{list(CASES).index(case)}", text,
                         monkeypatch)
    assert message.startswith("**Not submitted.**") and said in message, message[:600]
    assert "internal error" not in message and "Error" not in message and len(message) < QUOTED_AT_MOST + 200, \
        message[:600]
    assert store.list("requests") == []


def _header(value) -> bytes:
    """A safetensors file whose header is `value` (as JSON) and no tensor data."""
    data = json.dumps(value).encode()
    return struct.pack("<Q", len(data)) + data


OTHER_FILES = ["a header that is a list", "a shape of text", "a tensor without a shape",
               "an index whose weight_map is a list", "a tokenizer config nested 10,000 deep"]


@pytest.mark.parametrize("files, said", [
    ({"model.safetensors": _header([1, 2])}, "model.safetensors has an unreadable safetensors header"),
    ({"model.safetensors": _header({"w": {"shape": ["x"]}})}, "model.safetensors has an unreadable safetensors header"),
    ({"model.safetensors": _header({"w": "no shape"})}, "model.safetensors has an unreadable safetensors header"),
    ({"model.safetensors": _weights(), "model.safetensors.index.json": json.dumps({"weight_map": [1]})}, "Queued"),
    ({"model.safetensors": _weights(), "tokenizer_config.json": "[" * 10_000 + "]" * 10_000},
     "Unreadable tokenizer_config.json: nested deeper than"),
], ids=OTHER_FILES)
def test_the_other_files_submission_reads_are_one_sentence_too(settings, store, hub_cache, files, said, request,
                                                               monkeypatch):
    """Beside config.json, submission reads the safetensors headers (to count parameters), the shards' index and the
    tokenizer's and processor's configs (for remote code): a hostile one is a refusal in our words, or ignored where
    it decides nothing (an index that names no shard: the top-level weights count)."""
    from tests.hub_cache import lay_into_hub_cache

    content = {"config.json": json.dumps(LLAMA), "README.md": LICENSED_CARD, **files}
    name = f"test-org/hostile-files-{OTHER_FILES.index(request.node.callspec.id)}"  # the Hub cache is the session's
    lay_into_hub_cache(hub_cache, name, files=content, add_card=False)
    monkeypatch.setattr(model_inspection, "OFFLINE", True)  # the Hub cache alone (the module's Hub client is online)
    message = submit_message(settings, store, name, by=Visitor("ada"))
    assert said in message and "internal error" not in message, message[:600]
