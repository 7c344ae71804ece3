"""The served adapter against a real `transformers serve` on loopback, serving a tiny LLaVA built at test time: its
greedy answers equal the in-process adapter's for the same model and the same prompts (images, system prompt,
history, text-only turns), request by request and through whole runs of the command line.

Sampled answers (ReForm-Eval's multiple choice by generation, at temperature 0.2 with one seed per repeat) cannot
be compared: the seed is sent, but the server draws from its own random stream inside its own generate call (and
its own sampling defaults), so the same seed gives other draws than the in-process adapter's. Only greedy answers
are compared."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from PIL import Image

from evaluator.models import load_model
from evaluator.models.base import GenerationRequest
from evaluator.models.served import ServedAdapter
from tests.cli_runs import evaluator_many
from tests.served_servers import TransformersServe
from tests.tiny_models import build_tiny_llava

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served_llava(tmp_path_factory):
    folder = build_tiny_llava(tmp_path_factory.mktemp("served") / "tiny-llava")
    with TransformersServe(folder) as server:
        yield folder, server


def _requests() -> list[GenerationRequest]:
    red, striped = Image.new("RGB", (40, 30), (220, 20, 20)), Image.new("RGB", (32, 32), (10, 200, 30))
    for x in range(0, 32, 4):
        for y in range(32):
            striped.putpixel((x, y), (0, 0, 0))
    return [
        GenerationRequest("What colour is the box?", images=[red], max_new_tokens=12),
        GenerationRequest("Describe the pattern.", images=[striped], max_new_tokens=12, system="Answer briefly."),
        GenerationRequest("And the next one?", images=[striped], max_new_tokens=8,
                          history=[{"role": "user", "content": "Look at this."},
                                   {"role": "assistant", "content": "I see it."}]),
        GenerationRequest("A question without a picture.", max_new_tokens=10),
        GenerationRequest("Stop early", max_new_tokens=3),
    ]


def test_served_greedy_answers_equal_the_in_process_ones(served_llava):
    folder, server = served_llava
    in_process = load_model(str(folder), device="cpu", batch_size=1).generate_results(_requests())
    adapter = ServedAdapter(server.base_url, server.model, batch_size=4)
    adapter.probe(images=True)
    served = adapter.generate_results(_requests())
    assert adapter.has_vision and adapter.server_models == [f"{server.model}@main"]
    assert [r.text for r in served] == [r.text for r in in_process]
    assert [r.n_tokens for r in served] == [r.n_tokens for r in in_process]
    assert [r.hit_limit for r in served] == [r.hit_limit for r in in_process]
    assert all(isinstance(r.prompt_tokens, int) and r.prompt_tokens > 0 for r in served)


def _run(out, model: str, *extra: str) -> dict:
    """`python -m evaluator run` of CURE and ReForm-Eval (1 item) in the test worker's runner (tests.cli_runs)."""
    (done,) = evaluator_many([["run", "--model", model, "--benchmarks", "cure,reform", "--limit", "1", "--out",
                               str(out), *extra]], out.parent / f"{out.name}-report.json", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "results.json").read_text())


def test_a_served_run_answers_as_the_in_process_run_in_generation_mode(served_llava, tmp_path):
    folder, server = served_llava
    served = _run(tmp_path / "served", f"endpoint:{server.base_url}|{server.model}")
    local = _run(tmp_path / "local", str(folder), "--option", "cure.mode=generation", "--option",
                 "reform.mode=generation", "--device", "cpu")
    assert served["run"]["modes"] == local["run"]["modes"] == {"cure": "generation", "reform": "generation"}
    for name in ("cure", "reform"):
        ours = pd.read_parquet(tmp_path / "served" / "details" / f"{name}.parquet")
        theirs = pd.read_parquet(tmp_path / "local" / "details" / f"{name}.parquet")
        assert len(ours) == len(theirs) > 0 and ours["prompt"].str.len().min() > 0
        # ReForm-Eval samples its multiple choice (see above): only its other items are greedy
        greedy = ours["form"] != "multiple_choice" if name == "reform" else ours["prediction"].notna()
        assert greedy.sum() > 0
        assert ours["prediction"][greedy].tolist() == theirs["prediction"][greedy].tolist(), name
    assert served["benchmarks"]["cure"]["scores"] == local["benchmarks"]["cure"]["scores"]
    usage = served["run"]["served"]["usage"]
    assert usage["requests"] > 0 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert served["run"]["served"]["server_model"] == f"{server.model}@main"
