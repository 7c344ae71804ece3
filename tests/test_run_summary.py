"""What a run prints for the person reading its log: scores as the board shows them (percentages), `--help` naming
`--out`'s default, and a warning line when a trial judge grades, as the board flags such runs."""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from evaluator.api import card
from evaluator.runs.summary import score_line, trial_judge_warning
from tests.cli_runs import evaluator_many


def test_the_scores_line_prints_percentages_as_the_board_does_and_names_what_is_not_one():
    line = score_line(card("lave"), {"lave": 0.5, "vqa_accuracy": 0.3333, "cider": 1.23456, "anls": math.nan})
    head, _, shown = line.partition(": ")
    assert head == "lave scores (% as on the board; cider as they are; results.json keeps fractions)", line
    assert json.loads(shown) == {"lave": 50.0, "vqa_accuracy": 33.3, "cider": 1.2346, "anls": None}
    cure = score_line(card("cure"), {"Ro": 0.25, "Cf": None})
    assert cure == 'cure scores (% as on the board; results.json keeps fractions): {"Ro": 25.0, "Cf": null}'


def test_only_a_trial_judge_gets_a_warning():
    trial = SimpleNamespace(trial=True, parameters=72_288,
                            identity={"kind": "local", "model": "/tmp/x/tiny-llava", "revision": None})
    said = trial_judge_warning(trial)
    assert said.startswith("WARNING: the judge tiny-llava @ unpinned revision (local) is a trial judge (72,288 "
                           "parameters, under 7B)") and "never ranks it" in said and "/tmp" not in said
    endpoint = SimpleNamespace(trial=False, parameters=None, identity={"kind": "endpoint", "model": "m"})
    assert trial_judge_warning(endpoint) is None and trial_judge_warning(None) is None


def test_help_names_the_default_output_folder():
    from evaluator.__main__ import _parser

    run = _parser()._subparsers._group_actions[0].choices["run"]
    assert "(default: eval-out)" in " ".join(run.format_help().split())


@pytest.mark.slow
def test_a_run_graded_by_a_trial_judge_says_so(tiny_llama, tmp_path):
    (done,) = evaluator_many([["run", "--model", tiny_llama.repo_id, "--revision", tiny_llama.sha, "--benchmarks",
                               "simpleqa", "--limit", "1", "--judge", f"local:{tiny_llama.repo_id}@{tiny_llama.sha}",
                               "--out", str(tmp_path / "out")]], tmp_path / "report.json")
    assert done.returncode == 0, done.stderr[-2000:]
    warnings = [line for line in done.stderr.splitlines() if "trial judge" in line]
    assert len(warnings) == 1 and warnings[0].startswith("WARNING: the judge tiny-org/tiny-llama @ "), done.stderr
    assert json.loads((tmp_path / "out" / "results.json").read_text())["run"]["judge_trial"] is True
    assert "simpleqa scores (% as on the board" in done.stdout, done.stdout
