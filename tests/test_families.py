"""Every model family on a real tiny random-weight model, loaded offline from a hand-made Hub cache.

Parametrised over tests.tiny_models.FAMILIES: loading, prompts, batch invariance (batch 1 vs batch 4, float32 on the
CPU: greedy and sampled answers identical, option scores within OPTION_DRIFT), the static KV cache against the dynamic
one, requests without an image and mixed batches, option scoring, architecture checks and out-of-memory backoff.
"""
from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
import torch
from PIL import Image

from evaluator.benchmarks.seeds import item_seed
from evaluator.models import GenerationRequest, UnsupportedModelError, describe_model_folder, load_model
from evaluator.models.devices import pick_device_dtype
from evaluator.models import image_features
from evaluator.models.generation_cache import GenerationCache
from evaluator.models import batched_scoring, families
from evaluator.models.transformers_adapter import resolve_batch_size
from tests.hub_cache import lay_into_hub_cache
from tests.tiny_models import FAMILIES, TEXT_ONLY

VLMS = [f for f in FAMILIES if f not in TEXT_ONLY]
MAX_NEW = 6
# How far an option's summed log-likelihood may move between one question at a time and four together, float32 on the
# CPU: float rounding over a longer (padded) sequence, never the padding itself (bench/batch_drift.py measures every
# family, and in float64 the drift is gone but for PaliGemma, whose Gemma norms compute in float32 whatever the dtype).
OPTION_DRIFT = {"paligemma": 2e-5}


def _image(colour: str, size: tuple[int, int]) -> Image.Image:
    return Image.new("RGB", size, colour)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def family(tiny_folder, hub_cache):
    """family(name) -> (adapter loaded by load_model from the offline Hub cache at a pinned sha, sha), once each."""
    loaded: dict = {}

    def _get(name: str):
        if name not in loaded:
            repo_id = f"tiny-families/tiny-{name}"
            sha = lay_into_hub_cache(hub_cache, repo_id, tiny_folder(name))
            loaded[name] = (load_model(repo_id, revision=sha, batch_size=4), sha)
        return loaded[name]

    return _get


def _requests(with_images: bool | list[bool]) -> list[GenerationRequest]:
    """Four greedy requests with differing prompts (and images of differing sizes and colours)."""
    flags = with_images if isinstance(with_images, list) else [with_images] * 4
    specs = [("What colour is the ball?", "red", (40, 30), None),
             ("How many people are standing near the car?", "blue", (64, 48), "Be brief."),
             ("Answer with the letter of the correct option.", "green", (24, 36), None),
             ("Describe the picture.", "yellow", (32, 32), None)]
    return [GenerationRequest(text, images=[_image(colour, size)] if flag else [], max_new_tokens=MAX_NEW,
                              system=system)
            for (text, colour, size, system), flag in zip(specs, flags)]


def _replies(adapter, requests):
    """Each reply as (answer, thought): a thinking family's answers may all be empty (a tiny model seldom closes its
    thought), so its thoughts are compared too (evaluator.models.thinking)."""
    return [(r.text, r.thought) for r in adapter.generate_results(requests)]


def _one_by_one(adapter, requests):
    adapter.batch_size = 1
    try:
        return _replies(adapter, requests)
    finally:
        adapter.batch_size = 4


# ---- loading and architecture checks -------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
def test_loads_from_hub_cache_with_vision_flag(family, name):
    adapter, sha = family(name)
    assert adapter.model_id == f"tiny-families/tiny-{name}" and adapter.revision == sha
    assert adapter.has_vision == (name not in TEXT_ONLY)
    device, dtype = pick_device_dtype("auto")  # what "auto" picks on this machine: CPU + float32 without a GPU
    assert (adapter.device, adapter.dtype, adapter.batch_size) == (device, str(dtype).removeprefix("torch."), 4)
    assert next(adapter.model.parameters()).dtype == dtype
    assert adapter.model.config._attn_implementation == "sdpa"


@pytest.mark.parametrize("name", FAMILIES)
def test_describe_model_folder(tiny_folder, name):
    folder = tiny_folder(name)
    config = json.loads((folder / "config.json").read_text())
    facts = describe_model_folder(folder)
    assert facts == {"architecture": config["architectures"][0], "model_type": config["model_type"],
                     "has_vision": name not in TEXT_ONLY}
    assert (facts["model_type"] in families.FAMILIES) == facts["has_vision"]


@pytest.mark.parametrize("model_type,architecture", [
    ("bert", "BertLMHeadModel"),  # in transformers' causal-LM mapping, but an encoder
    ("t5", "T5ForConditionalGeneration"),  # encoder-decoder
    ("florence2", "Florence2ForConditionalGeneration"),  # a vision-language family this adapter does not run
    ("clip", "CLIPModel"),  # neither
])
def test_known_but_unusable_types_are_refused(tiny_folder, tmp_path, model_type, architecture):
    config = json.loads((tiny_folder("llama") / "config.json").read_text())
    config.update(model_type=model_type, architectures=[architecture])
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(UnsupportedModelError, match=f"unsupported architecture {architecture}"):
        describe_model_folder(tmp_path)
    with pytest.raises(UnsupportedModelError, match="unsupported architecture"):
        load_model(str(tmp_path))


def test_blip2_with_an_encoder_decoder_language_model_is_refused(tiny_folder, tmp_path):
    config = json.loads((tiny_folder("blip2") / "config.json").read_text())
    config["text_config"] = {"model_type": "t5", "is_encoder_decoder": True}  # as in Salesforce/blip2-flan-t5-xl
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(UnsupportedModelError, match="unsupported architecture Blip2ForConditionalGeneration .*'t5'"):
        describe_model_folder(tmp_path)


def test_remote_code_is_refused_for_a_vlm(tiny_folder, tmp_path):
    config = json.loads((tiny_folder("qwen2_vl") / "config.json").read_text())
    config["auto_map"] = {"AutoModelForImageTextToText": "modeling_x.XForConditionalGeneration"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(UnsupportedModelError, match="remote code"):
        describe_model_folder(tmp_path)


def test_batch_size_setting():
    assert resolve_batch_size("auto", "cuda") == 64 and resolve_batch_size("auto", "cpu") == 4
    assert resolve_batch_size(0, "cpu") == 4 and resolve_batch_size("8", "cuda") == 8
    for bad in (-1, "many"):
        with pytest.raises(ValueError):
            resolve_batch_size(bad, "cpu")


# ---- prompts --------------------------------------------------------------------------------------------------

EXPECTED_PROMPTS = {  # (with one image, without) for the text "What colour?"
    "llava": ("user: <image>What colour?\nassistant:", "user: What colour?\nassistant:"),
    "qwen2_vl": ("user: <|vision_start|><|image_pad|><|vision_end|>What colour?\nassistant:",
                 "user: What colour?\nassistant:"),
    "paligemma": ("<image>What colour?", "What colour?"),
    "blip2": ("Question: What colour? Answer:", "Question: What colour? Answer:"),
    "instructblip": ("Question: What colour? Answer:", "Question: What colour? Answer:"),
    "llama": (None, "user: What colour?\nassistant:"),
}


@pytest.mark.parametrize("name", EXPECTED_PROMPTS)
def test_prompt_styles(family, name):
    adapter, _ = family(name)
    with_image, without = EXPECTED_PROMPTS[name]
    if with_image is not None:
        assert adapter.build_prompt(GenerationRequest("What colour?", images=[_image("red", (40, 30))])) == with_image
    assert adapter.build_prompt(GenerationRequest("What colour?")) == without
    assert families.family("paligemma").style.prompt == "plain" and families.family("blip-2").style.prompt == "qa"
    llama = families.family("llama")
    assert llama.style == families.family(None).style and llama.style.prompt == "chat"
    if adapter.style.max_images == 1:  # a clear error before any work, not a shape mismatch in the model
        two = GenerationRequest("What colour?", images=[_image("red", (40, 30))] * 2)
        with pytest.raises(ValueError, match="at most 1 image"):
            _replies(adapter, [two])


# ---- generation -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
def test_batch_invariance(family, name):
    adapter, _ = family(name)
    requests = _requests(with_images=adapter.has_vision)
    batched = _replies(adapter, requests)  # one left-padded batch of 4
    assert len(batched) == 4 and all(isinstance(t, str) for t, _ in batched)
    assert batched == _one_by_one(adapter, requests)
    assert _replies(adapter, requests[::-1]) == batched[::-1]
    assert any(text or thought for text, thought in batched)


@pytest.mark.parametrize("name", FAMILIES)
def test_sampled_answers_are_the_same_in_any_batch(family, name):
    """A sampled request draws from its own seed: alone, in a batch, in another order or beside greedy requests, it
    gets the same answer."""
    adapter, _ = family(name)
    greedy = _requests(with_images=adapter.has_vision)
    sampled = [replace(r, temperature=1.0, seed=item_seed("test", 0, str(i), 0)) for i, r in enumerate(greedy)]
    together = _replies(adapter, sampled)
    assert together == _one_by_one(adapter, sampled)
    assert _replies(adapter, sampled[::-1]) == together[::-1]
    plain = _replies(adapter, greedy)
    assert _replies(adapter, [sampled[0], greedy[1], sampled[2], greedy[3]]) == [together[0], plain[1], together[2],
                                                                                 plain[3]]
    reseeded = _replies(adapter, [replace(r, seed=item_seed("test", 1, str(i), 0)) for i, r in enumerate(sampled)])
    assert reseeded != together  # the seed decides the draw


@pytest.mark.parametrize("name", FAMILIES)
def test_the_static_cache_answers_as_the_dynamic_one(family, name):
    """The static KV cache (uncompiled on the CPU) gives the dynamic cache's greedy tokens and sampled draws, for
    requests with and without images."""
    adapter, _ = family(name)
    greedy = _requests(with_images=adapter.has_vision)
    if adapter.has_vision:
        greedy += _requests(with_images=[False, True, False, True])
    sampled = [replace(r, temperature=1.0, seed=item_seed("test", 0, str(i), 0)) for i, r in enumerate(greedy)]
    dynamic = _replies(adapter, greedy + sampled)
    adapter.cache = GenerationCache.for_device("static", "cpu", adapter.model)
    why = families.family(adapter.model_type, adapter.has_vision).static_cache
    try:
        static = _replies(adapter, greedy + sampled)
        if why:  # a family whose static cache does not run says why, and answers on the dynamic path
            assert adapter.generation_path == "dynamic" and adapter.cache.fallback == f"no static cache: {why}"
        else:
            assert adapter.generation_path == "static" and adapter.cache.fallback is None
    finally:
        adapter.cache = GenerationCache.for_device("auto", "cpu")
    assert static == dynamic


@pytest.mark.parametrize("name", VLMS)
def test_each_image_is_encoded_once_and_answers_do_not_change(family, name):
    """A request that shows an image already seen reuses its features (evaluator.models.image_features): the same
    answers and option scores as a model that encodes every image each time, with fewer vision passes."""
    adapter, _ = family(name)
    requests = _requests(with_images=True)
    asked = requests + [replace(r, text=r.text + " Look again.") for r in requests]
    options = [" A", " red", " The ball is red."]
    owners = [o for o in (adapter.model, getattr(adapter.model, "model", None)) if o is not None
              and "get_image_features" in o.__dict__]
    wrapped = {id(o): o.__dict__.pop("get_image_features") for o in owners}  # the model's own encoding, every time
    try:
        plain_answers = _replies(adapter, asked)
        plain_scores = adapter.score_options_many([(r, options) for r in asked])
    finally:
        for owner in owners:
            owner.get_image_features = wrapped[id(owner)]
    declared = families.family(adapter.model_type)
    if declared.image_layout is None:  # not kept, and the declaration says why (recorded in results.json)
        assert _replies(adapter, asked) == plain_answers and adapter.image_features is None
        assert declared.images_not_kept
        assert image_features.describe(None, adapter.model_type) == {"cached": False, "why": declared.images_not_kept}
        return
    kept = adapter.image_features
    kept.clear()  # cold, whatever ran before on this worker (the same pictures are kept by other tests)
    start = kept.record()
    assert _replies(adapter, requests) == plain_answers[:len(requests)]
    adapter.score_options_many([(r, options) for r in requests])  # BLIP-2 encodes here only (see below)
    once = kept.record()["encoded"] - start["encoded"]  # the pictures' encoder rows (a tiled family's tiles)
    assert once >= 1
    kept.clear()
    before = kept.record()
    assert _replies(adapter, asked) == plain_answers
    cached = adapter.score_options_many([(r, options) for r in asked])
    for mine, theirs in zip(cached, plain_scores):
        assert [round(s.sum_logprob, 4) for s in mine] == [round(s.sum_logprob, 4) for s in theirs]
    after = kept.record()
    assert after["encoded"] - before["encoded"] == once  # each picture once: its repeats and the scoring encode none
    # the repeats and every option-scoring pass; BLIP-2's generate encodes its images itself, so only its scoring
    reused = len(requests) if declared.images_scoring_only else len(asked)
    assert after["reused"] - before["reused"] >= reused


@pytest.mark.parametrize("name", FAMILIES)
def test_option_scores_barely_move_with_the_batch(family, name):
    adapter, _ = family(name)
    options = [" A", " red", " The ball is red.", " yes"]
    asks = [(request, options[i:] + options[:i]) for i, request in enumerate(_requests(adapter.has_vision))]
    try:
        adapter.scoring_batch_size = 1
        alone = adapter.score_options_many(asks)
        adapter.scoring_batch_size = 4
        together = adapter.score_options_many(asks)
    finally:
        adapter.scoring_batch_size = 4
    worst = max(abs(a.sum_logprob - b.sum_logprob) for xs, ys in zip(alone, together) for a, b in zip(xs, ys))
    assert worst <= OPTION_DRIFT.get(name, 1e-5)
    assert [[s.n_tokens for s in xs] for xs in alone] == [[s.n_tokens for s in ys] for ys in together]


@pytest.mark.parametrize("name", VLMS)
def test_requests_without_images_and_mixed_batches(family, name):
    adapter, _ = family(name)
    no_images = _requests(with_images=False)
    assert _replies(adapter, no_images) == _one_by_one(adapter, no_images)
    mixed = _requests(with_images=[True, False, False, True])
    singles = _one_by_one(adapter, mixed)
    assert _replies(adapter, mixed) == singles
    assert singles[1:3] == _replies(adapter, no_images[1:3])  # same text, no image: same answer in any company


@pytest.mark.parametrize("name", FAMILIES)
def test_score_options_reference(family, name):
    adapter, _ = family(name)
    options = [" A", " red", " The ball is red."]
    for images in ([_image("red", (40, 30))], []) if adapter.has_vision else ([],):
        request = GenerationRequest("What colour is the ball? A. red B. blue", images=images)
        scores = adapter.score_options(request, options, path="reference")
        assert len(scores) == len(options)
        for score in scores:
            assert score.n_tokens > 0 and math.isfinite(score.sum_logprob) and score.sum_logprob < 0
            assert math.isclose(score.mean_logprob, score.sum_logprob / score.n_tokens, rel_tol=1e-9)


@pytest.mark.parametrize("name", FAMILIES)
def test_the_declaration_is_what_runs(family, name):
    """A family's declared option scoring is the path its model takes (a declared family never drops to one question
    at a time silently), anything slower than batched says why, and a vision model records its processor's own
    resolution settings."""
    adapter, _ = family(name)
    declared = families.family(adapter.model_type, adapter.has_vision)
    assert adapter.family is declared
    assert batched_scoring.supports_batched(adapter.model) == (declared.option_scoring == families.BATCHED)
    assert (adapter.scoring_path == "reference") == (declared.option_scoring == families.REFERENCE)
    assert bool(declared.why_not_batched) == (declared.option_scoring != families.BATCHED)
    if adapter.has_vision:
        assert adapter.image_settings and json.dumps(adapter.image_settings)
        saved = adapter.processor.image_processor.to_dict()  # what preprocessor_config.json holds
        shown = {key: value for key, value in adapter.image_settings.items() if key in saved}
        assert shown and all(saved[key] == value for key, value in shown.items() if not isinstance(value, dict))


@pytest.mark.parametrize("name", VLMS)
def test_prompts_with_several_images(family, name):
    """Prompts of two images of different shapes beside prompts of one and of none: the same answers and option
    scores alone and in one batch (a family that takes one image per prompt refuses two, in one line)."""
    adapter, _ = family(name)
    base = _requests(with_images=[True, True, False, True])
    two = [_image("purple", (48, 20)), _image("orange", (20, 44))]
    asked = [replace(base[0], images=[*two]), base[1], base[2], replace(base[3], images=[two[1], two[0]])]
    if adapter.style.max_images == 1:
        with pytest.raises(ValueError, match="takes at most 1 image"):
            _replies(adapter, asked[:1])
        return
    assert _replies(adapter, asked) == _one_by_one(adapter, asked)
    options = [" A", " red", " The ball is red."]
    try:
        adapter.scoring_batch_size = 1
        alone = adapter.score_options_many([(r, options) for r in asked])
    finally:
        adapter.scoring_batch_size = 4
    together = adapter.score_options_many([(r, options) for r in asked])
    worst = max(abs(a.sum_logprob - b.sum_logprob) for xs, ys in zip(alone, together) for a, b in zip(xs, ys))
    assert worst <= OPTION_DRIFT.get(name, 1e-5)


def test_the_settings_recorded_are_those_the_processor_applies(tmp_path):
    """InternVL's processor tiles at every call whatever its image processor was saved with: the record says what
    runs (tiles), not what the file says."""
    import shutil

    from evaluator.models.image_settings import image_settings
    from tests.tiny_models import FAMILIES as BUILDERS
    from transformers import AutoProcessor

    folder = BUILDERS["internvl"](tmp_path / "internvl")
    config = json.loads((folder / "processor_config.json").read_text())
    config["image_processor"]["crop_to_patches"] = False
    (folder / "processor_config.json").write_text(json.dumps(config))
    processor = AutoProcessor.from_pretrained(folder)
    assert processor.image_processor.crop_to_patches is False
    assert image_settings(processor)["crop_to_patches"] is True
    shutil.rmtree(folder)


@pytest.mark.parametrize("name", VLMS)
def test_an_image_without_its_placeholder_is_one_clear_line(family, name):
    """A prompt whose text carries one more image placeholder than it has images is refused before the processor
    or the model sees it, with one line naming the placeholder."""
    adapter, _ = family(name)
    attribute = adapter.family.placeholder
    if attribute is None:
        pytest.skip(f"{name}'s processor places its image tokens itself")
    token = getattr(adapter.processor, attribute)
    token = str(getattr(token, "content", token))
    request = GenerationRequest(f"What colour? {token}", images=[_image("red", (40, 30))], max_new_tokens=2)
    with pytest.raises(ValueError, match=r"carries 2 image placeholder\(s\) .* for 1 image\(s\)"):
        _replies(adapter, [request])


# ---- out-of-memory backoff ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
def test_out_of_memory_backoff_keeps_every_output_in_order(family, name, monkeypatch):
    adapter, _ = family(name)
    requests = _requests(with_images=adapter.has_vision) + _requests(with_images=adapter.has_vision)[:3]
    expected = _one_by_one(adapter, requests)
    real_generate = adapter.model.generate
    sizes: list[int] = []

    def generate_with_oom(*args, **kwargs):
        size = kwargs["input_ids"].shape[0]
        sizes.append(size)
        if size > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real_generate(*args, **kwargs)

    monkeypatch.setattr(adapter.model, "generate", generate_with_oom)
    adapter.batch_size = 4
    try:
        assert _replies(adapter, requests) == expected
        assert sizes == [4, 2, 2, 2, 1] and adapter.batch_size == 2  # 7 requests: 4 fails, then 2+2+2+1
        sizes.clear()
        assert _replies(adapter, requests[:3]) == expected[:3] and sizes == [2, 1]  # the smaller size sticks

        def always_oom(*args, **kwargs):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")

        monkeypatch.setattr(adapter.model, "generate", always_oom)
        with pytest.raises(torch.cuda.OutOfMemoryError):
            _replies(adapter, requests[:2])
        assert adapter.batch_size == 1
    finally:
        adapter.batch_size = 4


HISTORY = [{"role": "user", "content": "Example?"}, {"role": "assistant", "content": "(B)"}]
EXPECTED_HISTORY_PROMPTS = {  # the text "What colour?" with one image, after one example turn
    "llava": "user: Example?\nassistant: (B)\nuser: <image>What colour?\nassistant:",
    "paligemma": "<image>User: Example?\nAssistant: (B)\nUser: What colour?",
    "blip2": "Question: Example? Answer: (B) Question: What colour? Answer:",
    "instructblip": "Question: Example? Answer: (B) Question: What colour? Answer:",
}


@pytest.mark.parametrize("name", EXPECTED_HISTORY_PROMPTS)
def test_history_turns_in_the_prompt(family, name):
    """Earlier turns (ReForm-Eval's one-shot example, a dialogue's history) reach every prompt style, and the
    prompt still generates in a batch with a history-free request."""
    adapter, _ = family(name)
    image = _image("red", (40, 30))
    request = GenerationRequest("What colour?", images=[image], history=HISTORY, max_new_tokens=3)
    assert adapter.build_prompt(request) == EXPECTED_HISTORY_PROMPTS[name]
    plain = GenerationRequest("What colour?", images=[image], max_new_tokens=3)
    outputs = _replies(adapter, [request, plain])
    assert outputs == [_replies(adapter, [request])[0], _replies(adapter, [plain])[0]]
