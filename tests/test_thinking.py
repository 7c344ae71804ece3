"""Thinking models: the thought is kept apart from the answer before any benchmark parses it.

A reply's thought (between its family's markers, or a served model's reasoning_content) never yields the answer: a
letter inside it is never read; a reply that ends inside its thought has no answer and is counted. Checked on the
splitting rules, on a tiny Qwen3.5 whose template opens a thought (enable_thinking on), through the command line on
that model, and on a served endpoint on loopback that answers with a closed thought, an unclosed one, and with
reasoning_content apart.
"""
from __future__ import annotations

import json

import pandas as pd
import pytest

from evaluator.models import thinking
from evaluator.models.base import GenerationRequest
from evaluator.models.served import ServedAdapter
from evaluator.models.thinking import GEMMA_CHANNEL, THINK, Reply, find_markers, prompt_mode, split_reply
from tests.cli_runs import evaluator_many
from tests.conftest import PROJECT
from tests.served_servers import StandInServer

TEMPLATES = PROJECT / "tests" / "tiny_models" / "templates"


# ---- the rules -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, opened, expected", [
    # a closed thought: the answer is what follows it, whatever letters the thought holds
    ("<think>A looks right, but (A) is a trap.</think>\n\nThe answer is (B).", False,
     Reply("The answer is (B).", "A looks right, but (A) is a trap.")),
    # the prompt opened the thought: the reply starts inside it
    ("Option A? No.</think>B", True, Reply("B", "Option A? No.")),
    # a close marker alone ends a thought the template opened unseen
    ("Hmm (A).</think>(C)", False, Reply("(C)", "Hmm (A).")),
    # unclosed: no answer, never parsed from the thought
    ("<think>The answer is (A) because", False, Reply("", "The answer is (A) because", unclosed=True)),
    ("The answer is (A) because", True, Reply("", "The answer is (A) because", unclosed=True)),
    # no thought: all answer
    ("The answer is (A).", False, Reply("The answer is (A).")),
    # GLM's answer wrappers are taken off, their content kept
    ("<think>(A)?</think><answer>The answer is <|begin_of_box|>(D)<|end_of_box|></answer>", False,
     Reply("The answer is (D)", "(A)?")),
])
def test_a_letter_inside_the_thought_is_never_the_answer(text, opened, expected):
    assert split_reply(text, THINK, opened) == expected


def test_gemma_4_writes_its_thought_in_a_channel():
    reply = split_reply("<|channel>thought\n(A) or (B)?<channel|>(B)", GEMMA_CHANNEL)
    assert reply.answer == "(B)" and "(A)" in reply.thought and not reply.unclosed


def test_without_markers_nothing_is_split():
    assert split_reply("<think>(A)</think>(B)", None) == Reply("<think>(A)</think>(B)")


@pytest.mark.parametrize("name, markers", [("qwen3_5", THINK), ("gemma4", GEMMA_CHANNEL), ("qwen3_vl", None)])
def test_the_markers_come_from_the_family_template(name, markers):
    assert find_markers((TEMPLATES / f"{name}.jinja").read_text()) == markers


def test_the_markers_come_from_the_tokenizer_when_the_template_has_none():
    assert find_markers("{{ messages }}", ["<think>", "</think>", "<pad>"]) == THINK
    assert find_markers("{{ messages }}", ["<pad>"]) is None


@pytest.mark.parametrize("prompt, mode", [
    ("<|im_start|>assistant\n<think>\n", thinking.ON),
    ("<|im_start|>assistant\n<think>\n\n</think>\n\n", thinking.OFF),
    ("<|user|>\nhi<|assistant|>\n", thinking.MAY),
    ("earlier: <think>long thought</think> done. <|assistant|>\n", thinking.MAY),
])
def test_the_generation_prompt_says_whether_the_model_thinks(prompt, mode):
    assert prompt_mode(prompt, THINK) == mode


def test_the_budget_setting_is_checked(monkeypatch):
    monkeypatch.delenv(thinking.BUDGET_SETTING, raising=False)
    assert thinking.default_budget() == thinking.DEFAULT_THINKING_BUDGET == 4096
    monkeypatch.setenv(thinking.BUDGET_SETTING, "512")
    assert thinking.default_budget() == 512
    for bad in ("-1", "many", "2000000"):
        monkeypatch.setenv(thinking.BUDGET_SETTING, bad)
        with pytest.raises(ValueError, match=thinking.BUDGET_SETTING):
            thinking.default_budget()


# ---- a tiny model whose template opens a thought ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def qwen3_5(tiny_folder):
    from evaluator.models.transformers_adapter import TransformersAdapter

    folder = tiny_folder("qwen3_5")
    loaded: dict = {}

    def load(asked: str, budget: int = 6):  # each setting loaded once for the module
        if (asked, budget) not in loaded:
            loaded[asked, budget] = TransformersAdapter.from_folder(
                folder, model_id="tiny/qwen3_5", precision="float32", device="cpu", batch_size=2,
                thinking_asked=asked, thinking_budget=budget)
        return loaded[asked, budget]
    return load


def test_the_template_switch_is_the_runs_choice(qwen3_5):
    on, off, auto = qwen3_5("on"), qwen3_5("off"), qwen3_5("auto")
    request = GenerationRequest("Which colour?")
    assert on.build_prompt(request).endswith("<think>\n") and on.thinking.mode == thinking.ON
    assert off.build_prompt(request).rstrip().endswith("</think>") and off.thinking.mode == thinking.OFF
    assert auto.thinking.mode == thinking.OFF  # this template thinks only when asked
    assert on.thinking.record() == {"mode": "on", "asked": "on", "switch": "enable_thinking",
                                    "markers": ["<think>", "</think>"], "budget": 6}
    assert off.thinking.record()["budget"] == 0 and off.thinking.extra_tokens == 0


def test_scripted_replies_decode_into_answer_and_thought(qwen3_5):
    adapter = qwen3_5("on")
    prompt = adapter.build_prompt(GenerationRequest("Pick a letter."))
    tokens = adapter.tokenizer
    ids = tokens("The letter A is tempting, (A) even.</think>\n\nThe answer is (B).", add_special_tokens=False)[
        "input_ids"]
    result = adapter._result(ids, len(ids), False, prompt, [])
    assert result.text == "The answer is (B)." and "(A)" in result.thought and not result.thought_unclosed
    close = tokens.convert_tokens_to_ids("</think>")
    assert result.thought_tokens == ids.index(close) + 1 < len(ids)
    cut = tokens("Surely (A) because", add_special_tokens=False)["input_ids"]
    unclosed = adapter._result(cut, len(cut), True, prompt, [])
    assert unclosed.text == "" and unclosed.thought_unclosed and "(A)" in unclosed.thought
    assert unclosed.thought_tokens == len(cut) and unclosed.hit_limit is True  # it ran out inside its thought


def test_generation_gets_the_budget_on_top_and_never_answers_from_the_thought(qwen3_5):
    adapter = qwen3_5("on", budget=6)
    requests = [GenerationRequest(f"Question {i}: answer with a letter.", max_new_tokens=3) for i in range(3)]
    results = adapter.generate_results(requests)
    for result in results:
        assert result.n_tokens <= 3 + 6
        assert result.thought is not None  # the prompt opened it
        assert result.text == "" if result.thought_unclosed else result.thought not in result.text
    off = qwen3_5("off").generate_results(requests)
    assert all(r.n_tokens <= 3 and r.thought is None for r in off)


def test_options_are_scored_after_a_closed_thought(qwen3_5):
    adapter = qwen3_5("on")
    request = GenerationRequest("Pick a letter.")
    assert adapter.scoring_prompt(request) == adapter.build_prompt(request) + "</think>\n\n"
    assert qwen3_5("off").scoring_prompt(request) == qwen3_5("off").build_prompt(request)


@pytest.mark.slow
def test_a_thinking_run_through_the_cli_keeps_the_thought_apart(tiny_folder, tmp_path):
    out = tmp_path / "out"
    (done,) = evaluator_many(
        [["run", "--model", str(tiny_folder("qwen3_5")), "--benchmarks", "cure", "--option", "cure.mode=generation",
          "--limit", "2", "--device", "cpu", "--precision", "float32", "--thinking", "on", "--thinking-budget", "5",
          "--images-dir", str(tmp_path / "images"), "--out", str(out)]], tmp_path / "report.json", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    run = results["run"]["thinking"]
    assert (run["mode"], run["asked"], run["switch"], run["budget"]) == ("on", "on", "enable_thinking", 5)
    assert results["thinking"] == "on"  # the mode it ran with, at the top beside the precision (issue 69)
    assert run["replies"] > 0 and run["with_thought"] == run["replies"] and run["thinking_run"] is True
    cure = pd.read_parquet(out / "details" / "cure.parquet")
    generated = cure[cure["reasoning"].notna()]
    assert len(generated) == run["replies"] or len(generated) >= run["replies"]
    unclosed = generated[generated["thought_unclosed"]]
    assert (unclosed["prediction"] == "").all() and (unclosed["parsed_answer"] == -1).all()
    assert run["unclosed"] == results["benchmarks"]["cure"]["thinking"]["unclosed"] == int(
        results["benchmarks"]["cure"]["thinking"]["unclosed"])
    assert (generated["reasoning_tokens"] > 0).all()
    assert results["run"]["decoding"]["rule"].startswith("The benchmark decodes")


# ---- a served endpoint on loopback -----------------------------------------------------------------------------------

def _served(server: StandInServer, asked: str = "auto") -> ServedAdapter:
    return ServedAdapter(server.base_url, server.model, batch_size=1, max_retries=0, thinking_asked=asked,
                         thinking_budget=16)


def _answers(texts: dict[str, str]):
    return lambda messages, body: texts[messages[-1]["content"]]


SCRIPT = {
    "closed": "<think>(A) first came to mind.</think>The answer is (B).",
    "unclosed": "<think>(A) could be right since the colour and shape and size and texture all agree",
    "plain": "The answer is (C).",
}


@pytest.mark.parametrize("parser", [False, True], ids=["in-content", "reasoning_content"])
def test_a_served_thought_is_never_the_answer(parser):
    with StandInServer(answer=_answers(SCRIPT), reasoning_parser=parser) as server:
        adapter = _served(server)
        got = dict(zip(SCRIPT, adapter.generate_results([GenerationRequest(key, max_new_tokens=8)
                                                         for key in SCRIPT])))
    assert got["closed"].text == "The answer is (B)." and "(A)" in got["closed"].thought
    assert got["unclosed"].text == "" and got["unclosed"].thought_unclosed and "(A)" in got["unclosed"].thought
    if parser:  # vLLM's deepseek_r1 parser sends a reply without </think> as all reasoning, content null
        assert got["plain"].text == "" and got["plain"].thought_unclosed
    else:
        assert got["plain"].text == "The answer is (C)." and got["plain"].thought is None


def test_a_served_run_asked_to_think_sends_the_switch_and_the_budget():
    with StandInServer(answer=_answers(SCRIPT)) as server:
        _served(server, "on").generate_results([GenerationRequest("plain", max_new_tokens=8)])
        _served(server).generate_results([GenerationRequest("plain", max_new_tokens=8)])
        on, auto = (r.body for r in server.chat_requests)
    assert on["chat_template_kwargs"] == {"enable_thinking": True} and on["max_tokens"] == 8 + 16
    assert "chat_template_kwargs" not in auto and auto["max_tokens"] == 8


# ---- the Space's settings --------------------------------------------------------------------------------------------

def test_the_space_hands_its_thinking_settings_to_every_run(tmp_path):
    from leaderboard.running.evaluator_process import worker_command
    from leaderboard.settings import Settings

    settings = Settings.from_env({"LEADERBOARD_THINKING": "off", "LEADERBOARD_THINKING_BUDGET": "1024"},
                                 home=tmp_path)
    command = worker_command(settings, tmp_path / "request.json", tmp_path / "out")
    at = command.index("--thinking")
    assert command[at:at + 4] == ["--thinking", "off", "--thinking-budget", "1024"]
    for bad, named in (({"LEADERBOARD_THINKING": "maybe"}, "LEADERBOARD_THINKING"),
                       ({"LEADERBOARD_THINKING_BUDGET": "-5"}, "LEADERBOARD_THINKING_BUDGET"),
                       ({"LEADERBOARD_THINKING_BUDGET": "lots"}, "LEADERBOARD_THINKING_BUDGET")):
        with pytest.raises(ValueError, match=named):
            Settings.from_env(bad, home=tmp_path)


def test_a_thinking_judge_is_graded_after_its_thought():
    from evaluator.judge.endpoint import EndpointJudge

    replies = {"closed": "<think>Grade A? The gold says otherwise.</think>B",
               "unclosed": "<think>A, surely A, since"}
    with StandInServer(answer=lambda messages, body: replies[messages[-1]["content"]]) as server:
        judge = EndpointJudge(server.base_url, server.model, max_retries=0)
        assert judge.complete([{"role": "user", "content": "closed"}], max_tokens=64) == "B"
        assert judge.complete([{"role": "user", "content": "unclosed"}], max_tokens=64) == ""


def test_markers_that_are_special_tokens_survive_the_decode():
    from evaluator.models.thinking import decode_keeping, marker_ids, thought_token_count
    from tests.tiny_models.common import _tokenizer

    tokenizer = _tokenizer(["<think>", "</think>", "<|begin_of_box|>", "<|end_of_box|>"])
    assert "<think>" in tokenizer.all_special_tokens  # skip_special_tokens alone would drop it
    ids = tokenizer("<think>the cat (A)</think>the dog <|begin_of_box|>(B)<|end_of_box|>",
                    add_special_tokens=False)["input_ids"]
    assert "</think>" not in tokenizer.decode(ids, skip_special_tokens=True)
    keep = marker_ids(tokenizer, THINK)
    assert set(keep.values()) == {"<think>", "</think>", "<|begin_of_box|>", "<|end_of_box|>"}
    text = decode_keeping(tokenizer, ids, keep)
    reply = split_reply(text, THINK)
    assert reply.answer == "the dog (B)" and reply.thought == "the cat (A)"
    assert thought_token_count(ids, len(ids), reply, keep, THINK, tokenizer) == ids.index(
        tokenizer.convert_tokens_to_ids("</think>")) + 1


def test_markers_only_in_the_vocabulary_split_replies_but_add_no_budget():
    from evaluator.models.thinking import detect

    plain = detect("{{ messages }}", ["<think>", "</think>"], "auto", 4096, lambda found: "<|assistant|>\n")
    assert plain.markers == THINK and plain.mode == thinking.NONE and plain.extra_tokens == 0
    glm = detect("{{ m.split('</think>') }}<think>", [], "auto", 4096, lambda found: "<|assistant|>\n")
    assert glm.mode == thinking.MAY and glm.extra_tokens == 4096


def test_a_reply_without_a_thought_is_kept_to_the_byte():
    for text in ("The answer is (A).\x0b ", "  spaced  \n", "\u00a0(B)"):
        assert split_reply(text, THINK) == Reply(text)
