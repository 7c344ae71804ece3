"""Issue 69, point 5: `compare` warns when two runs were asked differently, as the paired difference is then partly
one of protocols: each benchmark's mode (CURE by likelihood against by generation), thinking (on against off), the
suite, the limit and the judge. The Explorer's paired sentence says it too (leaderboard.explorer.views)."""
from __future__ import annotations

import json

import pandas as pd

from evaluator.runs.compare import protocol, protocol_differences
from leaderboard.explorer.protocols import protocol_notes
from leaderboard.explorer.views import summary_text
from tests.hand_details import CURE_A, CURE_B, LAVE_A, LAVE_B, results_folder

JUDGE_A = {"kind": "endpoint", "model": "judge-a", "base_url": "http://127.0.0.1:9/v1"}
JUDGE_B = {"kind": "local", "model": "org/judge-b", "revision": "0123456789ab"}


def _asked(folder, **run) -> None:
    path = folder / "results.json"
    results = json.loads(path.read_text())
    results["run"].update(run)
    path.write_text(json.dumps(results))


def _command(capsys, monkeypatch, *args) -> tuple[int, list[str]]:
    from evaluator.__main__ import main

    monkeypatch.delenv("LEADERBOARD_PARENT_PID", raising=False)  # run by hand: no parent to watch
    code = main(["compare", *map(str, args)])
    return code, capsys.readouterr().out.splitlines()


def test_compare_warns_on_modes_thinking_and_judge(tmp_path, capsys, monkeypatch):
    a = results_folder(tmp_path, "a", {"cure": CURE_A, "lave": LAVE_A})
    b = results_folder(tmp_path, "b", {"cure": CURE_B, "lave": LAVE_B})
    _asked(a, modes={"cure": "likelihood", "lave": "generation"}, thinking={"mode": "on"}, judge=JUDGE_A)
    _asked(b, modes={"cure": "generation", "lave": "generation"}, thinking={"mode": "off"}, judge=JUDGE_B)
    code, lines = _command(capsys, monkeypatch, a, b)
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert code == 0 and warnings == [
        "warning: A asked CURE by likelihood and B by generation, so A - B is partly a difference of protocols, not "
        "of models alone",
        "warning: A ran with thinking on and B with thinking off, so A - B is partly a difference of protocols, not "
        "of models alone",
        "warning: A was graded by judge-a (endpoint http://127.0.0.1:9/v1) and B by org/judge-b @ 0123456789ab "
        "(local), so A - B is partly a difference of protocols, not of models alone"], lines
    code, lines = _command(capsys, monkeypatch, a, b, "--benchmarks", "cure")  # CURE needs no judge
    assert code == 0 and sum(line.startswith("warning: ") for line in lines) == 2, lines


def test_runs_asked_alike_or_older_ones_are_not_warned_about(tmp_path):
    alike = {"run": {"suite": "sample", "limit": 0, "modes": {"cure": "generation"}, "thinking": {"mode": "off"},
                     "judge": JUDGE_A}}
    older = {"run": {"suite": "sample", "limit": 0}}  # no modes, thinking or judge recorded
    assert protocol_differences(protocol(alike), protocol(alike), ["cure", "lave"]) == []
    assert protocol_differences(protocol(alike), protocol(older), ["cure"]) == []
    assert protocol(older)["thinking"] is None and protocol(alike)["thinking"] == "off"


def test_the_explorers_paired_sentence_says_it_too():
    board = pd.DataFrame([
        {"key": "a", "suite": "sample", "limit": 0.0, "modes": "cure=likelihood,reform=both",
         "thinking_mode": "on (enable_thinking on)", "judge": None},
        {"key": "b", "suite": "full", "limit": None, "modes": "cure=generation,reform=both",
         "thinking_mode": "off (enable_thinking off)", "judge": None},
    ])
    notes = protocol_notes(board, "a", "b", "cure")
    assert notes == ["A ran the sample suite and B the full suite; the questions both scored are still compared",
                     "A asked CURE by likelihood and B by generation, so A - B is partly a difference of protocols, "
                     "not of models alone",
                     "A ran with thinking on and B with thinking off, so A - B is partly a difference of protocols, "
                     "not of models alone"], notes
    assert protocol_notes(board, "a", "a", "cure") == [] and protocol_notes(None, "a", "b", "cure") == []
    text = summary_text({"shown": 3, "total": 3, "accuracy": 0.5, "scored": 2, "protocol": notes})
    assert "**Asked differently:** A ran the sample suite" in text and "A asked CURE by likelihood" in text
