"""Option scoring through a server's prompt log-probabilities (evaluator/models/served_scoring.py): how the server's
answers are read, and, through tools/vllm_standin.py (vLLM's protocol or SGLang's, computed with transformers), that a
served model's option scores equal the in-process adapter's, for a text model and for a VLM with an image, and that
a whole CLI run of CURE by likelihood and of ReForm-Eval in both modes gives the in-process option scores (slow)."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from PIL import Image

from evaluator.models.base import GenerationRequest
from evaluator.models.served_scoring import (NotScored, PromptToken, option_start, prompt_tokens,
                                             score_from_answers, sglang_prompt_ids, sglang_tokens)
from tests.cli_runs import evaluator_many
from tests.judge_servers import Reply, ScriptedServer
from tests.batch_details import OPTION_TOLERANCE, _close, _scores
from tests.vllm_standins import VllmStandIn, replies_after_prompt


def _position(token: int, logprob: float, text: str, others: dict | None = None) -> dict:
    entries = {str(token): {"logprob": logprob, "rank": 1, "decoded_token": text}}
    entries.update({str(k): {"logprob": v, "rank": 2, "decoded_token": "?"} for k, v in (others or {}).items()})
    return entries


def test_the_prompt_is_read_from_the_servers_token_ids_and_log_probabilities():
    body = {"prompt_token_ids": [5, 7, 9],
            "prompt_logprobs": [None, _position(7, -1.5, "a", {3: -0.1}), _position(9, -2.0, "b", {4: -0.2})]}
    assert prompt_tokens(body) == [PromptToken(5, None, None), PromptToken(7, -1.5, "a"), PromptToken(9, -2.0, "b")]
    # without prompt_token_ids, prompt_logprobs 0 sends the prompt's own token alone: its key is the id
    alone = {"prompt_logprobs": [{"5": {"logprob": -0.5}}, _position(7, float("-inf"), "a")]}
    assert [(t.id, t.logprob) for t in prompt_tokens(alone)] == [(5, -0.5), (7, -9999.0)]
    bad = [{}, {"prompt_logprobs": None}, {"prompt_logprobs": [None, _position(7, -1.0, "a")]},  # first id unsaid
           {"prompt_token_ids": [1], "prompt_logprobs": [None, _position(7, -1.0, "a")]},  # lengths differ
           {"prompt_token_ids": [1, 7], "prompt_logprobs": [None, _position(8, -1.0, "a")]},  # not the prompt's token
           {"prompt_token_ids": [1, 7], "prompt_logprobs": [None, {"7": {"logprob": "high"}}]},
           {"prompt_logprobs": [None, _position(7, -1.0, "a", {3: -0.1})]}]  # two entries, no ids to choose by
    for body in bad:
        with pytest.raises(NotScored):
            prompt_tokens(body)


def test_sglangs_answers_are_read_from_the_chats_ids_and_generates_input_logprobs():
    assert sglang_prompt_ids({"choices": [{"prompt_token_ids": [4, 5, 6]}]}) == [4, 5, 6]
    for body in ({}, {"choices": []}, {"choices": [{"prompt_token_ids": []}]},
                 {"choices": [{"prompt_token_ids": [1.5]}]}):
        with pytest.raises(NotScored):
            sglang_prompt_ids(body)
    answer = {"meta_info": {"input_token_logprobs": [[None, 4, None], [-0.5, 5, "a"], [-1.5, 6, None]]}}
    assert sglang_tokens([4, 5, 6], answer) == [PromptToken(4, None, None), PromptToken(5, -0.5, "a"),
                                                PromptToken(6, -1.5, None)]
    for ids, rows in (([4, 5], [[None, 4], [-0.5, 9]]),  # not the token it was sent
                      ([4, 5, 6], [[None, 4], [-0.5, 5]]),  # a token short
                      ([4, 5], [[None, 4], [None, 5]])):  # no log-probability
        with pytest.raises(NotScored):
            sglang_tokens(ids, {"meta_info": {"input_token_logprobs": rows}})


def _tokens(*pairs: tuple[int, str], logprob: float = -1.0) -> list[PromptToken]:
    return [PromptToken(i, None if n == 0 else logprob, text) for n, (i, text) in enumerate(pairs)]


def test_the_option_starts_after_the_prompt_past_what_the_template_adds():
    prompt = [1, 2, 3]
    plain = _tokens((1, "<s>"), (2, "assistant"), (3, ":"), (10, "ca"), (11, "t"))
    assert option_start(prompt, plain, "cat") == 3
    # a template that writes an empty thought before a reply (Qwen3's): passed over by the tokens' own text
    thought = _tokens((1, "<s>"), (2, "assistant"), (3, ":"), (20, "<think>"), (21, "\n\n"), (22, "</think>"),
                      (21, "\n\n"), (10, "ca"), (11, "t"))
    assert option_start(prompt, thought, "cat") == 7
    # the prompt's last token merged with the option's first: the option starts at the merged token
    merged = _tokens((1, "<s>"), (2, "assistant"), (30, ": ca"), (11, "t"))
    assert option_start(prompt, merged, "cat") == 2
    scores = score_from_answers({"prompt_token_ids": [1, 2, 3], "prompt_logprobs": [None, *(
        _position(i, -0.5, "x") for i in (2, 3))]},
        [{"prompt_token_ids": [1, 2, 3, 10, 11], "prompt_logprobs": [None, *(
            _position(i, lp, t) for i, lp, t in ((2, -0.5, "a"), (3, -0.5, ":"), (10, -1.0, "ca"), (11, -3.0, "t")))]}],
        ["cat"])
    assert (scores[0].sum_logprob, scores[0].mean_logprob, scores[0].n_tokens) == (-4.0, -2.0, 2)


def test_a_server_without_prompt_log_probabilities_scores_no_options():
    from evaluator.models.served import load_served

    with ScriptedServer([Reply("OK")]) as server:
        served = load_served(f"endpoint:{server.base_url}|m")
        asked = [r.body for r in server.requests if "prompt_logprobs" in r.body]
    assert served.scoring_path == "none" and "no prompt log-probabilities" in served.scoring_refusal
    assert len(asked) == 1 and asked[0]["continue_final_message"] is True and asked[0]["max_tokens"] == 1
    assert served.record()["option_scoring"] == "none"
    with pytest.raises(ValueError, match="no prompt log-probabilities"):
        served.score_options(GenerationRequest("Which?"), ["a", "b"])


@pytest.fixture(scope="module")
def standin_folders(tiny_llava, tiny_llama, tmp_path_factory):
    root = tmp_path_factory.mktemp("standin-models")
    return {name: replies_after_prompt(model.folder, root / name)
            for name, model in (("llava", tiny_llava), ("llama", tiny_llama))}


@pytest.fixture(scope="module")
def standins(standin_folders):
    """standins(name, protocol) -> a VllmStandIn on that tiny model, started on first use and kept for the module
    (each one is a process that loads torch and the model, some 8 CPU-s): the option-score checks and the CLI run
    share theirs, and share a test worker (xdist group "quick-families", the family matrix's group for llava and
    llama)."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        started: dict[tuple[str, str], VllmStandIn] = {}

        def standin(name: str, protocol: str) -> VllmStandIn:
            if (name, protocol) not in started:
                started[name, protocol] = stack.enter_context(VllmStandIn(standin_folders[name], protocol=protocol))
            return started[name, protocol]

        yield standin


OPTIONS = ["red", "blue ball", "0 1 2", "Paris is the capital", " yes", ""]


@pytest.mark.slow
@pytest.mark.parametrize("name,protocol", [("llama", "vllm"), ("llava", "vllm"), ("llava", "sglang")])
def test_the_standins_option_scores_equal_the_in_process_adapters(standin_folders, standins, name, protocol,
                                                                  one_torch_thread):
    from evaluator.models import load_model
    from evaluator.models.served import load_served

    folder = standin_folders[name]
    local = load_model(str(folder), device="cpu", precision="float32")
    images = [[Image.new("RGB", (32, 32), (200, 30, 30))], []] if name == "llava" else [[]]
    path = {"vllm": "prompt_logprobs", "sglang": "input_logprobs"}[protocol]
    served = load_served(standins(name, protocol).spec, needs_images=bool(images[0]))
    assert served.scoring_path == path and served.scoring_refusal is None
    asks = [(GenerationRequest("What colour is the ball?", images=row, system="Answer briefly.",
                               history=[{"role": "user", "content": "Hi"},
                                        {"role": "assistant", "content": "Hello"}]),
             OPTIONS) for row in images]
    remote = served.score_options_many(asks)
    largest = 0.0
    for (request, options), scores in zip(asks, remote):
        for path in ("reference", local.scoring_path):
            for option, a, b in zip(options, scores, local.score_options(request, options, path=path)):
                assert a.n_tokens == b.n_tokens, (option, a, b)
                if a.n_tokens:
                    per_token = abs(a.sum_logprob - b.sum_logprob) / a.n_tokens
                    largest = max(largest, per_token, abs(a.mean_logprob - b.mean_logprob))
    assert largest <= OPTION_TOLERANCE, largest
    print(f"{name} ({protocol}): largest difference per token {largest:.2e} over {sum(len(o) for _, o in asks)} "
          "options")


@pytest.mark.slow
def test_a_plain_server_keeps_generation_only(standin_folders):
    from evaluator.models.served import load_served

    with VllmStandIn(standin_folders["llama"], protocol="none") as standin:
        served = load_served(standin.spec)
    assert served.scoring_path == "none" and "no prompt_token_ids" not in served.scoring_refusal
    assert "no prompt_logprobs in the answer" in served.scoring_refusal


def _option_scores(out, benchmark: str) -> list:
    frame = pd.read_parquet(out / "details" / f"{benchmark}.parquet")
    return [(key, _scores(cell)) for key, cell in zip(frame["key"] if "key" in frame else frame.index,
                                                      frame["option_scores"]) if _scores(cell)]


@pytest.mark.slow
@pytest.mark.xdist_group("quick-families")  # beside the option-score checks, whose stand-ins it shares
def test_a_cli_run_through_the_standin_scores_cure_and_reform_as_in_process(standin_folders, standins, tmp_path):
    folder = standin_folders["llava"]
    common = ["--benchmarks", "cure,reform", "--limit", "1", "--option", "cure.mode=likelihood",
              "--option", "reform.mode=both", "--device", "cpu", "--precision", "float32"]
    vllm, sglang = standins("llava", "vllm"), standins("llava", "sglang")
    done = evaluator_many([["run", "--model", vllm.spec, *common, "--out", str(tmp_path / "vllm")],
                           ["run", "--model", sglang.spec, *common, "--out", str(tmp_path / "sglang")],
                           ["run", "--model", str(folder), *common, "--out", str(tmp_path / "local")]],
                          tmp_path / "report.json", timeout=900)
    for result in done:
        assert result.returncode == 0, (result.args, result.stderr[-3000:])
    for run, path in (("vllm", "prompt_logprobs"), ("sglang", "input_logprobs")):
        served = json.loads((tmp_path / run / "results.json").read_text())
        assert served["run"]["scoring_path"] == path and served["served"] is True
        assert served["run"]["served"]["option_scoring"] == path
        assert served["run"]["modes"] == {"cure": "likelihood", "reform": "both"}
    largest = 0.0
    for benchmark, run in (("cure", "vllm"), ("reform", "vllm"), ("cure", "sglang"), ("reform", "sglang")):
        remote, local = (_option_scores(tmp_path / name, benchmark) for name in (run, "local"))
        assert remote and len(remote) == len(local), benchmark
        for (key_a, a), (key_b, b) in zip(remote, local):
            assert key_a == key_b and len(a) == len(b) and all(_close(u, v) for u, v in zip(a, b)), (key_a, a, b)
            largest = max([largest, *(abs(u["mean"] - v["mean"]) for u, v in zip(a, b))])
    reform = pd.read_parquet(tmp_path / "vllm" / "details" / "reform.parquet")
    assert {"generation", "likelihood"} <= set(reform["mode"])
    print(f"CLI run: largest difference of a mean log-likelihood {largest:.2e}")
