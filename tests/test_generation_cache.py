"""How generate keeps its KV cache (evaluator.models.generation_cache): the setting, the path per device, the cache
lengths in buckets, the compiled path's shapes (a batch filled up to the batch size, one timed warm-up per new shape),
the fallback to the dynamic cache, the compile cache's folder, and what results.json and the worker say of it.

transformers compiles only on a GPU, so on this machine the compiled path runs its static cache uncompiled: every
step of ours (padding, buckets, warm-ups, the record) runs for real, the compile itself is bench/gpu_check.py's."""
from __future__ import annotations

import logging
import os
from dataclasses import replace

import pytest

from evaluator.benchmarks.seeds import item_seed
from evaluator.models import GenerationRequest, load_model
from evaluator.models.generation_cache import (CACHE_BUCKET, COMPILED, DYNAMIC, STATIC, GenerationCache,
                                               cache_length, choice_problem, resolve_path, use_compile_cache)
from tests.test_families import _image

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def llava(tiny_llava):
    return load_model(tiny_llava.repo_id, revision=tiny_llava.sha, batch_size=4)


def _requests(count: int) -> list[GenerationRequest]:
    texts = ["What colour is the ball?", "How many people are standing near the car? Count them.", "Describe it.",
             "Answer with the letter of the correct option.", "Is it raining?"]
    return [GenerationRequest(texts[i % len(texts)], images=[_image(["red", "blue", "green"][i % 3], (40, 32 + i))],
                              max_new_tokens=5 + i % 3, temperature=1.0 if i % 2 else 0.0,
                              seed=item_seed("test", 0, str(i), 0) if i % 2 else None) for i in range(count)]


def test_the_setting_picks_a_path_per_device():
    assert [resolve_path(choice, "cuda") for choice in ("auto", "static", "dynamic")] == [COMPILED, COMPILED, DYNAMIC]
    assert [resolve_path(choice, "cpu") for choice in ("auto", "static", "dynamic")] == [DYNAMIC, STATIC, DYNAMIC]
    assert choice_problem("auto") is None
    assert choice_problem("fast") == "the generation cache must be one of auto, static, dynamic, not 'fast'"
    with pytest.raises(ValueError, match="must be one of"):
        resolve_path("Static", "cpu")


def test_families_transformers_does_not_compile_in_one_graph_are_not_compiled():
    class OneGraph:
        _can_compile_fullgraph = True

    class Breaks:
        _can_compile_fullgraph = False

    assert GenerationCache.for_device("auto", "cuda", OneGraph()).path == COMPILED
    auto = GenerationCache.for_device("auto", "cuda", Breaks())
    assert auto.path == DYNAMIC and auto.fallback == ("not compiled: transformers does not compile Breaks into one "
                                                      "graph (_can_compile_fullgraph is False)")
    assert GenerationCache.for_device("static", "cuda", Breaks()).path == STATIC
    assert GenerationCache.for_device("static", "cpu", Breaks()).fallback is None  # nothing would compile there
    from transformers import Idefics3ForConditionalGeneration, LlavaForConditionalGeneration

    assert not Idefics3ForConditionalGeneration._can_compile_fullgraph  # what docs/cli.md lists, as transformers says
    assert LlavaForConditionalGeneration._can_compile_fullgraph


def test_cache_lengths_come_in_buckets_and_a_runs_cache_only_grows():
    assert CACHE_BUCKET == 256
    assert [cache_length(p, n) for p, n in ((10, 6), (200, 56), (200, 57), (700, 300))] == [256, 256, 512, 1024]
    cache = GenerationCache.for_device("static", "cpu")
    lengths = [cache.generate_kwargs(p, n)["max_cache_len"] for p, n in ((300, 16), (100, 16), (600, 16), (10, 2))]
    assert lengths == [512, 512, 768, 768]
    assert cache.generate_kwargs(10, 2) == {"cache_implementation": "static", "max_cache_len": 768,
                                            "disable_compile": True}
    assert GenerationCache.for_device("auto", "cpu").generate_kwargs(10, 2) == {}
    assert GenerationCache.for_device("auto", "cuda").generate_kwargs(10, 2)["disable_compile"] is False


def test_the_static_path_answers_as_the_dynamic_one(llava):
    requests = _requests(7)
    dynamic = llava.generate_results(requests)
    llava.cache = GenerationCache.for_device("static", "cpu")
    try:
        assert llava.generation_path == STATIC
        static = llava.generate_results(requests)
        assert llava.cache.fallback is None and llava.cache.shapes == set()  # nothing compiled, nothing counted
    finally:
        llava.cache = GenerationCache.for_device("auto", "cpu")
    assert [(r.text, r.n_tokens, r.hit_limit) for r in static] == [(r.text, r.n_tokens, r.hit_limit) for r in dynamic]


def test_the_compiled_path_fills_each_batch_and_warms_each_new_shape_once(llava, monkeypatch):
    requests = _requests(7)
    expected = llava.generate(requests)
    calls = []
    real = llava.model.generate

    def spy(**kwargs):
        calls.append((kwargs["input_ids"].shape[0], kwargs.get("max_cache_len"), kwargs["max_new_tokens"]))
        return real(**kwargs)

    monkeypatch.setattr(llava.model, "generate", spy)
    llava.cache = replace(GenerationCache.for_device("auto", "cpu"), choice="auto", path=COMPILED)
    try:
        got = llava.generate(requests)  # 7 requests at batch 4: 4, then 3 filled up to 4
        long = llava.generate([replace(requests[0], max_new_tokens=300)])  # a longer cache: a new shape
        again = llava.generate(requests[:2])  # the longest cache so far: no new shape, no warm-up
        record = llava.cache.record()
    finally:
        llava.cache = GenerationCache.for_device("auto", "cpu")
    assert got == expected and again == expected[:2] and long[0].startswith(expected[0])
    assert {size for size, _, _ in calls} == {4}  # every batch filled up to the batch size
    warm_ups = [call for call in calls if call[2] == 4]
    assert warm_ups == [(4, 256, 4), (4, 512, 4)]  # one short warm-up before each new (batch, length) shape
    assert [length for _, length, _ in calls] == [256, 256, 256, 512, 512, 512]
    assert record["path"] == COMPILED and record["compiled_shapes"] == 2 and record["compile_time_s"] > 0
    assert record["fallback"] is None


def test_an_architecture_the_static_path_fails_falls_back_once_and_says_so(llava, monkeypatch, caplog):
    requests = _requests(5)
    expected = llava.generate(requests)
    real = llava.model.generate
    tried = []

    def no_static(**kwargs):
        if kwargs.get("cache_implementation") == "static":
            tried.append(1)
            raise NotImplementedError("this architecture has no static cache")
        return real(**kwargs)

    monkeypatch.setattr(llava.model, "generate", no_static)
    llava.cache = GenerationCache.for_device("static", "cpu")
    try:
        with caplog.at_level(logging.WARNING, logger="evaluator.models.generation_cache"):
            assert llava.generate(requests) == expected
            assert llava.generate(requests) == expected
        assert llava.generation_path == DYNAMIC and len(tried) == 1  # tried once, then dynamic for the run
        assert llava.cache.record()["fallback"] == "NotImplementedError: this architecture has no static cache"
        assert llava.cache.record()["setting"] == "static"
        said = [r.getMessage() for r in caplog.records if "generation path failed" in r.getMessage()]
        assert len(said) == 1 and "dynamic cache" in said[0]
    finally:
        llava.cache = GenerationCache.for_device("auto", "cpu")


def test_the_compile_cache_goes_under_the_folder_given(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    assert use_compile_cache(None) is None and "TORCHINDUCTOR_CACHE_DIR" not in os.environ
    assert use_compile_cache(tmp_path / "compile") == (tmp_path / "compile").resolve()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str((tmp_path / "compile" / "inductor").resolve())
    assert os.environ["TRITON_CACHE_DIR"] == str((tmp_path / "compile" / "triton").resolve())
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "mine"))  # pointed elsewhere already: left alone
    use_compile_cache(tmp_path / "other")
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "mine")


def test_the_worker_passes_the_setting_and_the_compile_folder(tmp_path):
    from leaderboard.running.evaluator_process import worker_command
    from leaderboard.settings import Settings

    settings = Settings.from_env({"LEADERBOARD_GENERATION_CACHE": "Dynamic"}, home=tmp_path / "home",
                                 run_scheduler=False)
    command = worker_command(settings, tmp_path / "r.json", tmp_path / "out")
    at = command.index("--generation-cache")
    assert command[at + 1] == "dynamic"
    assert command[command.index("--compile-cache") + 1] == str((tmp_path / "home" / "cache" / "torch-compile")
                                                                .resolve())
    moved = Settings.from_env({"LEADERBOARD_COMPILE_CACHE": str(tmp_path / "mounted")}, home=tmp_path / "home",
                              run_scheduler=False)
    assert worker_command(moved, tmp_path / "r.json", tmp_path / "out")[command.index("--compile-cache") + 1] == \
        str((tmp_path / "mounted").resolve())
    with pytest.raises(ValueError, match="LEADERBOARD_GENERATION_CACHE must be 'auto', 'static' or 'dynamic', not "
                                         "'fast'"):
        Settings.from_env({"LEADERBOARD_GENERATION_CACHE": "fast"}, home=tmp_path / "home", run_scheduler=False)
