"""The transformers adapter on real tiny random-weight models, loaded offline from a hand-made Hub cache."""
from __future__ import annotations

import json
import math

import pytest
import torch
from PIL import Image

from evaluator.models import (GenerationRequest, OptionScore, UnsupportedModelError, describe_model_folder,
                              load_model)
from evaluator.models import scoring
from evaluator.models.devices import pick_device_dtype
from tests.hub_cache import lay_into_hub_cache


def _image(colour: str, size: tuple[int, int] = (40, 30)) -> Image.Image:
    return Image.new("RGB", size, colour)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def llava(tiny_llava):
    return load_model(tiny_llava.repo_id, revision=tiny_llava.sha, batch_size=3)


@pytest.fixture(scope="module")
def llama(tiny_llama):
    return load_model(tiny_llama.repo_id, revision=tiny_llama.sha, batch_size=3)


def _requests(with_images: bool) -> list[GenerationRequest]:
    img = [_image("red")] if with_images else []
    return [
        GenerationRequest("What colour is the ball?", images=img, max_new_tokens=8),
        GenerationRequest("How many people are standing?", max_new_tokens=12),
        GenerationRequest("Answer with the letter.", images=[_image("blue", (64, 48))] if with_images else [],
                          max_new_tokens=5, system="Be brief."),
        GenerationRequest("Paris is the capital of", images=img, max_new_tokens=10),
    ]


# ---- loading ---------------------------------------------------------------------------------------------------

def test_load_from_hub_cache(llava, llama, tiny_llava, tiny_llama):
    assert llava.model_id == "tiny-org/tiny-llava" and llava.revision == tiny_llava.sha
    assert llama.model_id == "tiny-org/tiny-llama" and llama.revision == tiny_llama.sha
    assert llava.has_vision and not llama.has_vision
    for m in (llava, llama):
        device, dtype = pick_device_dtype("auto")  # CPU + float32 without a GPU
        assert m.dtype == str(dtype).removeprefix("torch.") and m.device == device
        assert m.batch_size == 3
        assert m.scoring_path == ("shared_prefix" if scoring.supports_shared_prefix(m.model) else "reference")


def test_load_from_hub_cache_default_ref(tiny_llama):
    assert load_model(tiny_llama.repo_id).revision == tiny_llama.sha  # refs/main


def test_load_from_local_folder_matches_hub(tiny_llava, llava):
    local = load_model(str(tiny_llava.folder), batch_size=2)
    assert local.has_vision and local.revision is None
    reqs = _requests(with_images=True)
    assert local.generate(reqs) == llava.generate(reqs)


def test_precision_is_honoured(tiny_llama):
    m = load_model(str(tiny_llama.folder), precision="bfloat16")
    assert m.dtype == "bfloat16" and next(m.model.parameters()).dtype == torch.bfloat16
    assert len(m.generate([GenerationRequest("hello", max_new_tokens=3)])) == 1
    with pytest.raises(ValueError):
        load_model(str(tiny_llama.folder), precision="int3")


def test_describe_model_folder(tiny_llava, tiny_llama):
    assert describe_model_folder(tiny_llava.folder) == {
        "architecture": "LlavaForConditionalGeneration", "model_type": "llava", "has_vision": True}
    assert describe_model_folder(tiny_llama.folder) == {
        "architecture": "LlamaForCausalLM", "model_type": "llama", "has_vision": False}


def _config_with(tiny_llama, **changes) -> dict:
    config = json.loads((tiny_llama.folder / "config.json").read_text())
    config.update(changes)
    return config


def test_remote_code_is_refused(tiny_llama, hub_cache, tmp_path):
    auto_map = {"AutoConfig": "configuration_x.XConfig", "AutoModelForCausalLM": "modeling_x.XForCausalLM"}
    config = _config_with(tiny_llama, auto_map=auto_map)
    sha = lay_into_hub_cache(hub_cache, "tiny-org/remote-code", tiny_llama.folder,
                             files={"config.json": json.dumps(config), "modeling_x.py": "raise SystemExit(1)\n"})
    with pytest.raises(UnsupportedModelError, match="remote code"):
        load_model("tiny-org/remote-code", revision=sha)
    folder = tmp_path / "remote"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(UnsupportedModelError, match="remote code"):
        describe_model_folder(folder)


def test_unknown_architecture_is_refused(tiny_llama, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(_config_with(
        tiny_llama, model_type="frobnicator", architectures=["FrobnicatorForCausalLM"])))
    with pytest.raises(UnsupportedModelError, match="unsupported architecture FrobnicatorForCausalLM"):
        describe_model_folder(tmp_path)
    with pytest.raises(UnsupportedModelError, match="unsupported architecture"):
        load_model(str(tmp_path))


# ---- generation ------------------------------------------------------------------------------------------------

def test_prompt_uses_chat_template(llava, llama):
    req = GenerationRequest("What colour?", images=[_image("red"), _image("green")], system="Be brief.")
    assert llava.build_prompt(req) == "system: Be brief.\nuser: <image><image>What colour?\nassistant:"
    assert llama.build_prompt(GenerationRequest("hi")) == "user: hi\nassistant:"


@pytest.mark.parametrize("with_images", [True, False])
def test_generate_vlm_count_order_and_batch_invariance(llava, with_images):
    reqs = _requests(with_images)
    batched = llava.generate(reqs)  # batch size 3: one batch of 3 (left-padded) + one of 1
    singles = [llava.generate([r])[0] for r in reqs]
    assert len(batched) == len(reqs) and all(isinstance(t, str) for t in batched)
    assert batched == singles
    assert llava.generate(list(reversed(reqs))) == list(reversed(batched))


def test_generate_text_model_batch_invariance(llama):
    reqs = _requests(with_images=False)
    batched = llama.generate(reqs)
    assert batched == [llama.generate([r])[0] for r in reqs]
    assert any(batched)


def test_text_model_refuses_images(llama):
    with pytest.raises(ValueError):
        llama.generate([GenerationRequest("What colour?", images=[_image("red")])])


def test_max_new_tokens_and_stop_strings(llava):
    base = GenerationRequest("Describe the picture.", images=[_image("red")], max_new_tokens=16)
    full = llava.generate([base])[0]
    short = llava.generate([GenerationRequest(base.text, images=base.images, max_new_tokens=2)])[0]
    # Independent check: greedy generate straight on the model, decode only the new tokens.
    enc = llava.processor(text=[llava.build_prompt(base)], images=base.images, return_tensors="pt")
    enc = enc.to(llava.model.device).to(llava.model.dtype)  # BatchFeature casts only its floating tensors
    with torch.no_grad():
        out = llava.model.generate(**enc, max_new_tokens=16, do_sample=False)[0, enc["input_ids"].shape[1]:]
    assert full == llava.tokenizer.decode(out, skip_special_tokens=True)
    assert short == llava.tokenizer.decode(out[:2], skip_special_tokens=True)
    stop = full[len(full) // 2: len(full) // 2 + 2]
    assert stop
    cut = llava.generate([GenerationRequest(base.text, images=base.images, max_new_tokens=16, stop=[stop, "zzz"])])[0]
    assert cut == full[:full.find(stop)] and stop not in cut


def test_sampling_is_seeded(llama):
    req = GenerationRequest("The quick brown fox", max_new_tokens=12, temperature=1.0, seed=7)
    assert llama.generate([req]) == llama.generate([req])
    other = GenerationRequest(req.text, max_new_tokens=12, temperature=1.0, seed=8)
    samples = {llama.generate([other])[0], llama.generate([req])[0]}
    assert len(samples) == 2  # 12 sampled tokens from ~400 near-uniform ones


# ---- option scoring --------------------------------------------------------------------------------------------

def _in_float32(adapter):
    """The adapter itself where it computes in float32 (the CPU's default), else the same model loaded in float32 on
    its device: a hand computation matches a batched one to 1e-4 only in float32 (bfloat16 keeps ~3 digits)."""
    if adapter.dtype == "float32":
        return adapter
    return load_model(adapter.model_id, revision=adapter.revision, precision="float32", batch_size=adapter.batch_size)


def _hand_loglik(adapter, request: GenerationRequest, option: str) -> tuple[float, int]:
    """Independent reference: encode prompt and option apart, one full forward pass, sum the option's log-probs."""
    prompt = adapter.build_prompt(request)
    if adapter.has_vision:
        enc = adapter.processor(text=[prompt], images=request.images or None, return_tensors="pt")
    else:
        enc = adapter.tokenizer([prompt], return_tensors="pt")
    prompt_ids = enc["input_ids"][0].tolist()
    option_ids = adapter.tokenizer(option, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt_ids + option_ids], device=adapter.model.device)
    extra = {"pixel_values": enc["pixel_values"].to(adapter.model.device, adapter.model.dtype)} \
        if "pixel_values" in enc else {}
    with torch.no_grad():
        logits = adapter.model(input_ids=ids, attention_mask=torch.ones_like(ids), **extra).logits[0].double()
    total = 0.0
    for t in range(len(prompt_ids), ids.shape[1]):
        total += float(torch.log_softmax(logits[t - 1], dim=-1)[ids[0, t]])
    return total, len(option_ids)


@pytest.mark.parametrize("model_name,with_images", [("llava", True), ("llava", False), ("llama", False)])
def test_score_options_matches_hand_computation(request, model_name, with_images):
    adapter = _in_float32(request.getfixturevalue(model_name))
    req = GenerationRequest("What colour is the ball? A. red B. blue", max_new_tokens=4,
                            images=[_image("red")] if with_images else [])
    options = [" A", " B", " red", " The ball is red."]
    scores = adapter.score_options(req, options)
    assert len(scores) == len(options) and all(isinstance(s, OptionScore) for s in scores)
    for option, score in zip(options, scores):
        expected, n = _hand_loglik(adapter, req, option)
        assert score.n_tokens == n > 0
        assert math.isclose(score.sum_logprob, expected, rel_tol=1e-4, abs_tol=1e-4)
        assert math.isclose(score.mean_logprob, score.sum_logprob / score.n_tokens, rel_tol=1e-9)
        assert score.sum_logprob < 0


def test_score_options_prompt_length_counts_expanded_image_tokens(llava):
    """The processor expands one <image> into many tokens: the option must still get exactly its own tokens."""
    req = GenerationRequest("Pick one.", images=[_image("red")])
    one_image = llava.score_options(req, [" yes"])[0]
    two_images = llava.score_options(GenerationRequest("Pick one.", images=[_image("red")] * 2), [" yes"])[0]
    n = len(llava.tokenizer(" yes", add_special_tokens=False)["input_ids"])
    assert one_image.n_tokens == two_images.n_tokens == n


def test_score_options_when_tokens_merge_across_the_boundary(llama, monkeypatch):
    """If prompt+option tokenizes differently from the prompt alone, the option is tokenized on its own."""
    llama = _in_float32(llama)
    tok = llama.tokenizer
    prompt, option = "The quick bro", "wn fox"
    assert tok(prompt + option, add_special_tokens=False)["input_ids"][:len(tok(prompt)["input_ids"])] != \
        tok(prompt)["input_ids"]  # the boundary merges ("brown" is one token)
    monkeypatch.setattr(llama, "build_prompt", lambda request: prompt)
    score = llama.score_options(GenerationRequest("unused"), [option])[0]
    prompt_ids = tok(prompt, add_special_tokens=False)["input_ids"]
    option_ids = tok(option, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt_ids + option_ids], device=llama.model.device)
    with torch.no_grad():
        logprobs = torch.log_softmax(llama.model(input_ids=ids).logits[0].double(), dim=-1)
    expected = sum(float(logprobs[t - 1, ids[0, t]]) for t in range(len(prompt_ids), ids.shape[1]))
    assert score.n_tokens == len(option_ids)
    assert math.isclose(score.sum_logprob, expected, rel_tol=1e-4, abs_tol=1e-4)


def test_score_options_empty_option(llama):
    assert llama.score_options(GenerationRequest("hi"), [""]) == [OptionScore(0.0, 0.0, 0)]


def test_a_model_is_split_across_gpus_only_when_there_are_several():
    from evaluator.models.transformers_adapter import split_across_gpus

    assert not split_across_gpus("cpu", gpus=8)
    assert not split_across_gpus("cuda", gpus=1)
    assert split_across_gpus("cuda", gpus=4)  # a multi-GPU Job flavor: device_map="auto"
