"""Shared-prefix option scoring against the reference path (one full forward pass per option), for every family.

Families come from tests.tiny_models.FAMILIES, so a family added there is covered here without edits. Where
`supports_shared_prefix` says yes, the two paths must agree within 1e-4 (float32); where it says no, the adapter
must record and use the reference path.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import replace
from types import SimpleNamespace

import pytest
from PIL import Image

from evaluator.models import GenerationRequest, OptionScore, load_model
from evaluator.models import families, scoring
from tests.tiny_models import FAMILIES

TOLERANCE = 1e-4
# Different lengths (one token, a sentence, ...), an empty option, and one that continues a word the prompt cut
# ("bro" + "wn fox ..."), so the adapter's boundary handling is exercised too.
MERGING = "wn fox jumps over the lazy dog."
OPTIONS = [" A", " The ball is red.", "", " blue", MERGING, " no", " 7"]
PROMPT_TAIL = " The quick bro"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def adapters(tiny_folder):
    cache = {}

    def _get(family: str):
        if family not in cache:
            cache[family] = load_model(str(tiny_folder(family)), batch_size=2)
        return cache[family]

    return _get


def _request(adapter, with_image: bool) -> GenerationRequest:
    images = [Image.new("RGB", (40, 30), "red")] if with_image else []
    return GenerationRequest("What colour is the ball? A. red B. blue", images=images, max_new_tokens=4)


def _cut_prompt(adapter, monkeypatch) -> None:
    """End every prompt inside a word, so that an option can complete it."""
    build = type(adapter).build_prompt
    monkeypatch.setattr(adapter, "build_prompt", lambda request: build(adapter, request) + PROMPT_TAIL)


def _assert_close(shared: list[OptionScore], reference: list[OptionScore]) -> None:
    assert len(shared) == len(reference)
    for s, r in zip(shared, reference):
        assert s.n_tokens == r.n_tokens
        assert math.isclose(s.sum_logprob, r.sum_logprob, rel_tol=0, abs_tol=TOLERANCE), (s, r)
        assert math.isclose(s.mean_logprob, r.mean_logprob, rel_tol=0, abs_tol=TOLERANCE), (s, r)


def _unless_image_needed(family: str, with_image: bool, call):
    """call(), or a skip where the family takes no prompt without an image (PaliGemma's processor, BLIP-2's forward)."""
    try:
        return call()
    except (ValueError, TypeError) as exc:
        if with_image:
            raise
        pytest.skip(f"{family} takes no prompt without an image ({exc})")


CASES = [pytest.param(family, with_image, id=f"{family}-{'image' if with_image else 'text'}")
         for family in FAMILIES for with_image in (False, True)]


@pytest.mark.parametrize("family,with_image", CASES)
def test_shared_prefix_matches_reference(adapters, family, with_image, monkeypatch):
    adapter = adapters(family)
    if with_image and not adapter.has_vision:
        pytest.skip(f"{family} is a text-only model")
    tail = adapter.tokenizer(PROMPT_TAIL, add_special_tokens=False)["input_ids"]
    joint = adapter.tokenizer(PROMPT_TAIL + MERGING, add_special_tokens=False)["input_ids"]
    assert joint[:len(tail)] != tail  # "bro" + "wn" merge into "brown"
    _cut_prompt(adapter, monkeypatch)
    request = _request(adapter, with_image)
    reference = _unless_image_needed(family, with_image,
                                     lambda: adapter.score_options(request, OPTIONS, path="reference"))
    assert reference[OPTIONS.index("")] == OptionScore(0.0, 0.0, 0)
    assert all(r.n_tokens > 0 and r.sum_logprob < 0 for o, r in zip(OPTIONS, reference) if o)
    assert len({r.n_tokens for r in reference}) > 2  # options of different lengths

    if not scoring.supports_shared_prefix(adapter.model):
        # This architecture falls back: the adapter records and uses the reference path.
        assert adapter.scoring_path == "reference"
        assert adapter.score_options(request, OPTIONS) == reference
        return

    assert adapter.scoring_path == "shared_prefix"
    shared = adapter.score_options(request, OPTIONS, path="shared_prefix")
    _assert_close(shared, reference)
    assert shared[OPTIONS.index("")] == OptionScore(0.0, 0.0, 0)
    for s in shared:
        if s.n_tokens:
            assert math.isclose(s.mean_logprob, s.sum_logprob / s.n_tokens, rel_tol=1e-9)
    # The adapter's default is the shared prefix; batches of 2 options (with padding and one batch of 1) agree too.
    _assert_close(adapter.score_options(request, OPTIONS), reference)
    monkeypatch.setattr(scoring, "score_shared_prefix",
                        functools.partial(scoring.score_shared_prefix, max_options_per_batch=2))
    _assert_close(adapter.score_options(request, OPTIONS, path="shared_prefix"), reference)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_shared_prefix_only_empty_or_single_token_options(adapters, family):
    adapter = adapters(family)
    if not scoring.supports_shared_prefix(adapter.model):
        pytest.skip(f"{family} uses the reference path")
    request = _request(adapter, with_image=adapter.has_vision)
    assert adapter.score_options(request, ["", ""], path="shared_prefix") == [OptionScore(0.0, 0.0, 0)] * 2
    options = [" A", "", " B"]
    _assert_close(adapter.score_options(request, options, path="shared_prefix"),
                  adapter.score_options(request, options, path="reference"))


def test_unsupported_architecture_falls_back_to_reference(tiny_folder, monkeypatch):
    family = next(iter(FAMILIES))
    model_type = json.loads((tiny_folder(family) / "config.json").read_text())["model_type"]
    monkeypatch.setitem(families.FAMILIES, model_type,
                        replace(families.FAMILIES[model_type], option_scoring=families.REFERENCE))
    adapter = load_model(str(tiny_folder(family)))
    assert not scoring.supports_shared_prefix(adapter.model)
    assert adapter.scoring_path == "reference"
    request = _request(adapter, with_image=False)
    assert adapter.score_options(request, [" A", " B"]) == adapter.score_options(request, [" A", " B"],
                                                                                   path="reference")


def test_supports_shared_prefix_by_config():
    from transformers import (Blip2Config, InstructBlipConfig, LlamaConfig, MistralConfig, OPTConfig, Qwen2Config,
                              T5Config)

    def model(config):
        return SimpleNamespace(config=config)

    assert scoring.supports_shared_prefix(model(LlamaConfig()))
    assert not scoring.supports_shared_prefix(model(MistralConfig(sliding_window=16)))  # untested type
    assert not scoring.supports_shared_prefix(model(SimpleNamespace(model_type="frobnicator")))
    assert scoring.supports_shared_prefix(model(Qwen2Config()))
    assert not scoring.supports_shared_prefix(model(Qwen2Config(use_sliding_window=True, sliding_window=16)))
    assert scoring.supports_shared_prefix(model(Blip2Config(text_config=OPTConfig().to_dict())))
    # BLIP-2 over an encoder-decoder language model (Flan-T5) never takes the shared prefix.
    assert not scoring.supports_shared_prefix(model(Blip2Config(text_config=T5Config().to_dict())))
    assert not scoring.supports_shared_prefix(model(InstructBlipConfig(text_config=T5Config().to_dict())))


# ---- many questions at once (batched_scoring) ------------------------------------------------------------------
from evaluator.models import batched_scoring  # noqa: E402

QUESTIONS = ["What colour is the ball? A. red B. blue",
             "Count the objects in the picture and say how many there are, then name the largest one.",
             "Yes or no?"]
IMAGE_SIZES = [(40, 30), (64, 48), (30, 40)]


def _many(adapter, with_image: bool) -> list[tuple[GenerationRequest, list[str]]]:
    """Three questions of different lengths (so the batch pads), different images and option sets."""
    asks = []
    for index, (text, size) in enumerate(zip(QUESTIONS, IMAGE_SIZES)):
        images = [Image.new("RGB", size, ("red", "green", "blue")[index])] if with_image else []
        options = OPTIONS if index == 0 else [" yes", " no", MERGING[:9], " 12 objects; the table"][:2 + index]
        asks.append((GenerationRequest(text, images=images, max_new_tokens=4), options))
    return asks


@pytest.mark.parametrize("family,with_image", CASES)
def test_many_questions_at_once_match_one_at_a_time(adapters, family, with_image, monkeypatch):
    adapter = adapters(family)
    if with_image and not adapter.has_vision:
        pytest.skip(f"{family} is a text-only model")
    _cut_prompt(adapter, monkeypatch)
    asks = _many(adapter, with_image)
    single = _unless_image_needed(family, with_image,
                                  lambda: [adapter.score_options(request, options) for request, options in asks])
    runner = adapter._runner(with_image)
    batched = adapter.score_options_many(asks)
    assert len(batched) == len(asks)
    for got, want in zip(batched, single):
        _assert_close(got, want)
    if adapter.scoring_path == "shared_prefix" and batched_scoring.supports_batched(runner):
        calls = []
        real = batched_scoring.score_questions
        monkeypatch.setattr(batched_scoring, "score_questions",
                            lambda *args, **kwargs: calls.append(len(args[2])) or real(*args, **kwargs))
        adapter.scoring_batch_size = 3
        for got, want in zip(adapter.score_options_many(asks), single):
            _assert_close(got, want)
        assert calls == [3]  # the three questions in one batch
        monkeypatch.setattr(batched_scoring, "score_questions",
                            lambda model, inputs, ids: real(model, inputs, ids, max_rows=1))
        for got, want in zip(adapter.score_options_many(asks), single):  # one continuation row per forward
            _assert_close(got, want)


@pytest.mark.parametrize("family,with_image", CASES)
def test_option_ids_from_the_text_are_the_processors(adapters, family, with_image, monkeypatch):
    adapter = adapters(family)
    if with_image and not adapter.has_vision:
        pytest.skip(f"{family} is a text-only model")
    _cut_prompt(adapter, monkeypatch)
    request = _request(adapter, with_image)
    prompt = adapter.build_prompt(request)
    prompt_ids = _unless_image_needed(family, with_image,
                                      lambda: adapter._encode([prompt], [request.images])["input_ids"][0])
    from_text = adapter._options_from_text(prompt, OPTIONS, prompt_ids)
    through_processor = [adapter._option_ids(prompt, request.images, option, prompt_ids) for option in OPTIONS]
    if from_text is None:  # a family that writes text around the prompt: the processor is asked
        return
    assert from_text == [ids.tolist() for ids in through_processor]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_scoring_halves_its_batch_on_out_of_memory(adapters, family, monkeypatch):
    import torch

    adapter = adapters(family)
    with_image = adapter.has_vision
    if not batched_scoring.supports_batched(adapter._runner(with_image)):
        pytest.skip(f"{family} scores one question at a time: no batch to halve")
    asks = _many(adapter, with_image=with_image)
    want = [adapter.score_options(request, options) for request, options in asks]
    real, sizes = batched_scoring.score_questions, []

    def oom_above_one(model, inputs, ids, **kwargs):
        sizes.append(len(ids))
        if len(ids) > 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(model, inputs, ids, **kwargs)

    monkeypatch.setattr(batched_scoring, "score_questions", oom_above_one)
    adapter.scoring_batch_size = 4
    got = adapter.score_options_many(asks)
    assert sizes[:3] == [3, 1, 1] and adapter.scoring_batch_size == 1  # halved, then nothing skipped
    for g, w in zip(got, want):
        _assert_close(g, w)


@pytest.mark.parametrize("family,with_image", CASES)
def test_an_option_scores_as_generation_reads_it(adapters, family, with_image):
    """Option scoring against generation: the model's own greedy continuation, scored as an option by its token ids
    (one forward pass, over the prompt's cache, and batched where the family is), has the log-likelihood generate
    computed for it step by step. A side input filled wrongly over the option (token types, positions) would move
    it."""
    import torch

    adapter = adapters(family)
    if with_image and not adapter.has_vision:
        pytest.skip(f"{family} is a text-only model")
    request = _request(adapter, with_image)
    prompt = adapter.build_prompt(request)
    inputs = _unless_image_needed(family, with_image, lambda: adapter._cast(adapter._encode([prompt],
                                                                                          [request.images])))
    runner = adapter._runner(with_image)
    with torch.inference_mode():
        out = runner.generate(**inputs, max_new_tokens=5, do_sample=False, temperature=None, top_k=None, top_p=None,
                              output_logits=True, return_dict_in_generate=True,
                              pad_token_id=adapter.tokenizer.pad_token_id)
    new = out.sequences[0, inputs["input_ids"].shape[1]:]
    steps = [torch.log_softmax(logits[0].float(), dim=-1)[token] for logits, token in zip(out.logits, new)]
    generated = float(sum(steps))
    ids = new.to(inputs["input_ids"].device)
    reference = scoring.score_reference(runner, inputs, [ids])[0]
    assert reference.n_tokens == len(new) > 0
    assert math.isclose(reference.sum_logprob, generated, rel_tol=0, abs_tol=TOLERANCE), (reference, generated)
    if adapter.scoring_path == "shared_prefix" and scoring.supports_shared_prefix(runner):
        shared = scoring.score_shared_prefix(runner, inputs, [ids, ids[:1]])[0]
        assert math.isclose(shared.sum_logprob, generated, rel_tol=0, abs_tol=TOLERANCE), (shared, generated)
    if adapter.scoring_path == "shared_prefix" and batched_scoring.supports_batched(runner):
        batched = batched_scoring.score_questions(runner, inputs, [[ids.tolist(), ids[:2].tolist()]])[0][0]
        assert math.isclose(batched.sum_logprob, generated, rel_tol=0, abs_tol=TOLERANCE), (batched, generated)
