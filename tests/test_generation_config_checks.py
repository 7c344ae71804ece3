"""Issue 69, point 6: a model's generation_config.json is checked where its config.json is, before any model loads.
`{"eos_token_id": ["x", "y"]}` in a tiny LLaVA's folder ended the CLI's run after loading with `error: ValueError:
too many dimensions 'str'`, and a JSON list with `error: TypeError: 'list' object is not a mapping`; now preflight
(the CLI's, a Job's run included), describe_model_folder (before the load) and the Submit tab refuse either in one
line naming the file and the field, with no exception name."""
from __future__ import annotations

import json

import pytest

from evaluator.models.architectures import describe_model_folder
from evaluator.models.base import UnsupportedModelError
from evaluator.models.decoding import generation_problem
from evaluator.runs import preflight
from leaderboard.submissions import model_inspection
from leaderboard.submissions.identity import Visitor
from leaderboard.ui.submit import submit_message
from tests.hub_cache import LICENSED_CARD, lay_into_hub_cache

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 64, "hidden_size": 32,
         "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2}

# case -> (generation_config.json's text, what the refusal says after "unreadable generation_config.json: ")
CASES = {
    "token ids of text": (json.dumps({"eos_token_id": ["x", "y"]}), 'eos_token_id is ["x", "y"], not a token id'),
    "a token id as text": (json.dumps({"pad_token_id": "0"}), 'pad_token_id is "0", not a token id'),
    "a token id true": (json.dumps({"bos_token_id": True}), "bos_token_id is true, not a token id"),
    "a negative token id": (json.dumps({"eos_token_id": [2, -1]}), "eos_token_id is [2, -1], not a token id"),
    "a length of a half": (json.dumps({"max_new_tokens": 1.5}), "max_new_tokens is 1.5, not a whole number"),
    "a length as text": (json.dumps({"max_length": "20"}), 'max_length is "20", not a whole number'),
    "top_p over 1": (json.dumps({"do_sample": True, "top_p": 1.5}), "top_p is 1.5, not a probability from 0 to 1"),
    "a negative temperature": (json.dumps({"temperature": -0.7}), "temperature is -0.7, not a number 0 or more"),
    "suppressed tokens of text": (json.dumps({"suppress_tokens": "all"}), 'suppress_tokens is "all", not a list'),
    "a list": (json.dumps([{"eos_token_id": 2}]), "a list, not a JSON object"),
    "not JSON": ("{eos_token_id: 2", "not valid JSON"),
}
SOUND = {"eos_token_id": [1, 2], "pad_token_id": None, "max_length": 20, "top_p": 0.8, "temperature": 0.0,
         "do_sample": False, "transformers_version": "4.57.0", "stop_strings": ["</s>"]}


def test_a_sound_generation_config_has_no_problem():
    assert generation_problem(SOUND) == ""
    assert generation_problem({**SOUND, "top_k": 2.5}).startswith("top_k is 2.5")


def _folder(tmp_path, generation: str):
    folder = tmp_path / "model"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(LLAMA))
    (folder / "generation_config.json").write_text(generation)
    return folder


@pytest.mark.parametrize("case", list(CASES))
def test_preflight_and_the_load_refuse_it_in_one_line_naming_file_and_field(tmp_path, case):
    text, said = CASES[case]
    folder = _folder(tmp_path, text)
    for check in (lambda: preflight.check(str(folder), None, ["cure"], ""), lambda: describe_model_folder(folder)):
        with pytest.raises(UnsupportedModelError) as refused:  # the CLI prints its message alone
            check()
        message = str(refused.value)
        assert message.startswith(f"unreadable generation_config.json: {said}") and "Error" not in message, message


def test_a_sound_one_passes(tmp_path):
    folder = _folder(tmp_path, json.dumps(SOUND))
    with pytest.raises(preflight.Refused, match="is text-only"):  # preflight goes on to its next check
        preflight.check(str(folder), None, ["cure"], "")
    assert describe_model_folder(folder)["architecture"] == "LlamaForCausalLM"


def test_a_hub_models_file_is_fetched_beside_its_config_and_checked(hub_cache):
    name = "test-org/bad-generation-config"
    lay_into_hub_cache(hub_cache, name, files={"config.json": json.dumps(LLAMA),
                                               "generation_config.json": CASES["token ids of text"][0]})
    with pytest.raises(UnsupportedModelError, match=r"^unreadable generation_config.json: eos_token_id is"):
        preflight.check(name, None, ["cure"], "")


@pytest.fixture
def settings(settings):
    """A leaderboard that asks a benchmark without images too, so the text-only model here would be queued."""
    return settings.with_(benchmarks=("cure", "simpleqa"))


@pytest.mark.parametrize("online", [False, True], ids=["Hub cache", "loopback Hub"])
def test_submit_refuses_it_in_one_sentence(settings, store, hub, hub_cache, monkeypatch, online):
    files = {"config.json": json.dumps(LLAMA), "README.md": LICENSED_CARD,
             "generation_config.json": CASES["a length of a half"][0]}
    name = f"test-org/bad-generation-{'online' if online else 'cached'}"
    monkeypatch.setattr(model_inspection, "OFFLINE", not online)
    if online:
        from huggingface_hub import HfApi

        from leaderboard.submissions import checks

        hub.create_model(name, {key: value.encode() for key, value in files.items()})
        api, real = HfApi(endpoint=hub.url, token=hub.issue_token("hub-reader")), checks.submit
        monkeypatch.setattr(checks, "submit", lambda *args, **kwargs: real(*args, **kwargs, api=api))
    else:
        lay_into_hub_cache(hub_cache, name, files=files, add_card=False)
    message = submit_message(settings, store, name, by=Visitor("ada"))
    assert "Unreadable generation_config.json: max_new_tokens is 1.5, not a whole number" in message, message[:600]
    assert "Error" not in message and store.list("requests") == []


def test_the_command_line_says_it_in_words(tmp_path, capsys, monkeypatch):
    from evaluator.__main__ import main

    monkeypatch.delenv("LEADERBOARD_PARENT_PID", raising=False)  # run by hand: no parent to watch
    folder = _folder(tmp_path, CASES["a list"][0])
    code = main(["run", "--model", str(folder), "--benchmarks", "cure", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and err[-1] == "error: unreadable generation_config.json: a list, not a JSON object", err


def test_an_unexpected_failure_is_said_in_words_too():
    from evaluator.__main__ import _reason

    assert _reason(ValueError("too many dimensions 'str'")) == "too many dimensions 'str'"
    said = _reason(KeyError("eos"))
    assert said.startswith("an unexpected failure ('eos')") and "KeyError" not in said, said
