"""A thinking run on the board and in the Explorer: its row is tagged "thinking", its replies that ended inside their
thought are counted per benchmark, its mean thought and answer tokens per reply and its decoding overrides are in Run
details, and each opened question shows the thought folded above the answer."""
from __future__ import annotations

import pandas as pd

from evaluator import api
from leaderboard.board.columns import schema
from leaderboard.board.frames import leaderboard_frame
from leaderboard.board.views import view_text
from leaderboard.explorer.item_html import part_html
from tests.results_files import SHA_B, result

S = schema()


def _thinking(model: str, unclosed: int = 3) -> dict:
    found = result(model, Ro=0.4)
    found["benchmarks"]["cure"]["thinking"] = {"replies": 40, "with_thought": 40, "unclosed": unclosed,
                                               "reasoning_tokens": 12_000, "answer_tokens": 400}
    found["run"]["thinking"] = {"mode": "on", "asked": "on", "switch": "enable_thinking",
                                "markers": ["<think>", "</think>"], "budget": 4096, "replies": 40,
                                "with_thought": 40, "unclosed": unclosed, "reasoning_tokens": 12_000,
                                "answer_tokens": 400, "thinking_run": True}
    found["run"]["decoding"] = {"rule": "…", "fields": {
        "do_sample": {"asked": True, "used": False, "decision": "overridden"},
        "temperature": {"asked": 0.7, "used": None, "decision": "overridden"},
        "eos_token_id": {"asked": [2], "used": [2], "decision": "honoured"}}}
    return found


def test_a_thinking_run_is_tagged_and_its_cut_off_thoughts_are_counted():
    plain = result("org/plain", sha=SHA_B, Ro=0.5)
    raw = leaderboard_frame([_thinking("org/thinker"), plain], S)
    board = view_text(raw, S, "cure")
    models = board["Model"].tolist()
    assert "org/thinker (thinking)" in models and "org/plain" in models
    notes = dict(zip(models, board["Notes"]))
    assert "CURE: 3 ended in thought" in notes["org/thinker (thinking)"]
    assert "ended in thought" not in notes["org/plain"]
    none = leaderboard_frame([_thinking("org/calm", unclosed=0)], S)
    assert "ended in thought" not in view_text(none, S, "cure")["Notes"].iloc[0]


def test_run_details_show_the_mode_the_tokens_beside_the_cost_and_the_decoding():
    raw = leaderboard_frame([_thinking("org/thinker"), result("org/plain", sha=SHA_B)], S)
    rows = {r["model"]: r for r in raw.to_dict("records")}
    thinker, plain = rows["org/thinker"], rows["org/plain"]
    assert thinker["thinking"] == "true" and plain["thinking"] == "false"
    assert thinker["thinking_mode"] == "on (enable_thinking on)" and pd.isna(plain["thinking_mode"])
    assert thinker["reasoning_tokens"] == 300.0 and thinker["answer_tokens"] == 10.0
    assert thinker["decoding"] == "do_sample true→false, temperature 0.7→null"
    details = S.view("runs").columns
    at = details.index("cost_usd")
    assert details[at + 1:at + 4] == ("thinking_mode", "reasoning_tokens", "answer_tokens")
    assert details.index("decoding") == details.index("generation_path") + 1


def test_the_explorer_folds_the_thought_above_the_answer():
    from evaluator.benchmarks.item_tables import prompt_and_output

    row = {"prompt": "Which? (A) or (B)", "prediction": "(B)", "reasoning": "<b>(A)</b> is a trap",
           "reasoning_tokens": 7, "thought_unclosed": False}
    texts = prompt_and_output(row)
    labels = [label for label, _ in texts]
    assert labels == ["Prompt as sent", "Thought (7 tokens; not parsed)", "Answer after the thought"]
    html = part_html(api.ItemPart(title="Answer", texts=texts))
    assert html.index("Thought (7 tokens") < html.index("Answer after the thought")
    assert "<details><summary>Thought (7 tokens; not parsed)</summary><pre>&lt;b&gt;(A)&lt;/b&gt;" in html
    cut = prompt_and_output({**row, "prediction": "", "thought_unclosed": True})
    assert "it never closed, so the reply has no answer" in cut[1][0]
    plain = prompt_and_output({"prompt": "p", "prediction": "(A)", "reasoning": None, "thought_unclosed": None})
    assert [label for label, _ in plain] == ["Prompt as sent", "Raw output"]


def test_the_explorer_lists_the_questions_whose_reply_ended_in_thought():
    from evaluator.benchmarks.item_tables import THOUGHT_MEASURE

    details = pd.DataFrame({"item": ["q1", "q1", "q2", "q3", "q3"], "part": ["answer", "frequency", "answer",
                                                                           "answer", "sample"],
                            "thought_unclosed": [True, True, None, False, True]})
    table = pd.DataFrame({"item": ["q1", "q2", "q3"]})
    assert THOUGHT_MEASURE.rows(table, details).tolist() == [True, False, True]
    assert THOUGHT_MEASURE.value(details) == 2.0  # q1's frequency row copies its sample: not a reply of its own
    assert THOUGHT_MEASURE.value(details.drop(columns="thought_unclosed")) == 0.0  # an older run's details
