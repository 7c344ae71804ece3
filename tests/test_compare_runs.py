"""Two runs compared on the questions both scored (evaluator.runs.compare): one small case per benchmark worked out
by hand (CURE and SimpleQA and LAVE one question per unit, ReForm-Eval clustered by instance across its modes), the
Explorer's subset of listed questions, and `python -m evaluator compare A B` called in process on two results
folders (tests/test_cli.py starts it as a process)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from evaluator import api
from evaluator.metrics.intervals import Z95, paired_difference
from evaluator.runs.compare import compare_details, question_scores
from tests.hand_details import CURE_A, CURE_B, LAVE_A, LAVE_B, REFORM_A, RUNS, SIMPLEQA_B, results_folder, stored


def compared(benchmark: str, tmp_path: Path, subset=None):
    rows_a, rows_b = RUNS[benchmark]
    return compare_details(api.card(benchmark), stored(rows_a, benchmark, tmp_path / "a" / f"{benchmark}.parquet"),
                           stored(rows_b, benchmark, tmp_path / "b" / f"{benchmark}.parquet"), subset)


# --------------------------------------------------------------------------------------------- worked by hand

def test_cure_compares_whole_chains_one_instance_each(tmp_path):
    """c1 right in both (0), c2 a step wrong in A (0 - 1), c3 B's inference wrong (1 - 0), c4 A's image unavailable
    (not scored: left out). Mean 0; SE = sqrt(0 + 1 + 1) / 3 = 0.4714, every instance its own unit."""
    paired = compared("cure", tmp_path)
    assert paired.shared == 3 and paired.a_only_right == 1 and paired.b_only_right == 1
    assert paired.difference == 0.0 and paired.interval.stderr == pytest.approx(math.sqrt(2) / 3)
    assert paired.interval.method in ("clt", "clt over instances") and paired.interval.n == 3
    assert paired.text() == ("A - B = +0.0 points (95% -92.4 to +92.4), on 3 shared items, A right and B wrong on 1, "
                             "the reverse on 1")


def test_reform_clusters_a_questions_modes_by_its_instance(tmp_path):
    """q1 by generation: 2/3 of A's wordings right against all of B's (-1/3); q1 by likelihood: 1 - 0; q2 by
    generation: 0 - 1; the caption has no score. Mean -1/9; the two q1 questions are one instance: its deviations sum
    to -2/9 + 10/9 = 8/9, q2's to -8/9, SE = sqrt(2 * 64/81) / 3 = 8 sqrt 2 / 27 = 0.4190."""
    paired = compared("reform", tmp_path)
    assert paired.shared == 3 and paired.a_only_right == 1 and paired.b_only_right == 1
    assert paired.difference == pytest.approx(-1 / 9)
    assert paired.interval.stderr == pytest.approx(8 * math.sqrt(2) / 27)
    assert paired.interval.method == "clustered clt by instance" and paired.interval.n == 2
    assert paired.interval.low == pytest.approx(-1 / 9 - Z95 * 8 * math.sqrt(2) / 27)
    assert paired.text() == ("A - B = -11.1 points (95% -93.2 to +71.0), on 3 shared items, A right and B wrong on 1, "
                             "the reverse on 1")
    unclustered = paired_difference({"1": 2 / 3, "2": 1.0, "3": 0.0}, {"1": 1.0, "2": 0.0, "3": 1.0})
    assert unclustered.interval.stderr == pytest.approx(math.sqrt(168) / 27)  # what clustering corrects
    assert api.card("reform").item_view.cluster == "question_id"


def test_simpleqa_compares_graded_answers_and_the_explorers_subset(tmp_path):
    """s1: A graded A, B graded B (+1; the samples are not scored); s2: not attempted against correct (-1); s3 both
    wrong, s5 both right (0); s4 ungraded in A (left out). Everything: mean 0, SE = sqrt(1 + 1) / 4. On the listed
    subset {s1, s3, s4, s5}: +1, 0, 0, mean 1/3, deviations 2/3, -1/3, -1/3, SE = sqrt(6/9) / 3 = 0.2722."""
    everything = compared("simpleqa", tmp_path)
    assert (everything.shared, everything.difference, everything.a_only_right, everything.b_only_right) == (4, 0, 1, 1)
    assert everything.interval.stderr == pytest.approx(math.sqrt(2) / 4)
    listed = compared("simpleqa", tmp_path, subset=["s1", "s3", "s4", "s5"])
    assert listed.shared == 3 and listed.difference == pytest.approx(1 / 3)
    assert listed.interval.stderr == pytest.approx(math.sqrt(6 / 9) / 3)
    assert listed.text() == ("A - B = +33.3 points (95% -20.0 to +86.7), on 3 shared items, A right and B wrong on 1, "
                             "the reverse on 0")
    assert "clustered" not in listed.interval.method
    assert compared("simpleqa", tmp_path, subset=[]).text() == "no shared items: the two runs cannot be compared"


def test_lave_compares_ratings_and_counts_only_whole_right_against_wrong(tmp_path):
    """Ratings 3/2/1 are scores 1/0.5/0: l1 1 - 0.5, l2 0.5 - 0.5, l3 0 - 1, l4 only in A. Mean -1/6; deviations
    2/3, 1/6, -5/6, SE = sqrt(7/6) / 3 = 0.3600. A right and B wrong on none (B's l1 is half right)."""
    paired = compared("lave", tmp_path)
    assert paired.shared == 3 and paired.a_only_right == 0 and paired.b_only_right == 1
    assert paired.difference == pytest.approx(-1 / 6) and paired.interval.stderr == pytest.approx(math.sqrt(7 / 6) / 3)
    assert paired.text() == ("A - B = -16.7 points (95% -87.2 to +53.9), on 3 shared items, A right and B wrong on 0, "
                             "the reverse on 1")


def test_the_explorers_item_table_gives_the_same_scores(tmp_path):
    """question_scores with the item table already built (the Explorer's cache) says what it says from the file."""
    card = api.card("reform")
    details = stored(REFORM_A, "reform", tmp_path / "reform.parquet")
    keyed = details.assign(item=card.item_view.key(details))
    built = question_scores(card, keyed, card.item_view.items(keyed))
    from_file = question_scores(card, details)
    assert pd.Series(built.scores).equals(pd.Series(from_file.scores)) and built.clusters == from_file.clusters
    assert set(built.scores) == {"q1/gen", "q1/lik", "q2/gen", "cap/gen"}
    assert built.clusters["q1/gen"] == built.clusters["q1/lik"] == "q1" and built.unit == "instance"
    assert math.isnan(built.scores["cap/gen"]) and built.scores["q1/gen"] == pytest.approx(2 / 3)


def test_a_cards_cluster_column_must_be_one_of_its_details_columns():
    from dataclasses import replace

    from evaluator.benchmarks import card_problems

    card = api.card("reform")
    assert card_problems(card, "reform") == []
    wrong = replace(card, item_view=replace(card.item_view, cluster="instance_id"))
    assert "the item view reads 'instance_id', not among CARD.details" in card_problems(wrong, "reform")


def test_details_that_do_not_fit_the_card_are_one_line(tmp_path):
    details = stored(LAVE_A, "lave", tmp_path / "lave.parquet")
    with pytest.raises(ValueError, match=r"^the LAVE details do not fit its question view \(no 'lave' column\)$"):
        question_scores(api.card("lave"), details.drop(columns=["lave"]))
    from dataclasses import replace
    bare = replace(api.card("lave"), item_view=api.ItemView())
    with pytest.raises(ValueError, match="has no per-question view"):
        question_scores(bare, details)


# --------------------------------------------------------------------------------------------- the command

def command(capsys, monkeypatch, *args: str) -> tuple[int, list[str], str]:
    from evaluator.__main__ import main

    monkeypatch.delenv("LEADERBOARD_PARENT_PID", raising=False)  # run by hand: no parent to watch
    code = main(["compare", *map(str, args)])
    said = capsys.readouterr()
    return code, said.out.splitlines(), said.err


def test_compare_prints_a_line_per_benchmark_both_ran(tmp_path, capsys, monkeypatch):
    a = results_folder(tmp_path, "a", {"cure": CURE_A, "reform": REFORM_A, "lave": LAVE_A},
                       revision="0123456789abcdef0123456789abcdef01234567")
    b = results_folder(tmp_path, "b", {"cure": CURE_B, "simpleqa": SIMPLEQA_B, "lave": LAVE_B}, suite="full", limit=2)
    code, lines, err = command(capsys, monkeypatch, a, b)
    assert code == 0 and err == ""
    assert lines == [
        "A = org/a @ 0123456789ab, sample suite; B = org/b, full suite, limit 2",
        "warning: A ran the sample suite and B the full suite; the questions both scored are still compared",
        "warning: A ran every item and B at most 2 items per benchmark; the questions both scored are still compared",
        "CURE: A - B = +0.0 points (95% -92.4 to +92.4), on 3 shared items, A right and B wrong on 1, the reverse on 1",
        "SimpleQA: only in B, not compared",
        "ReForm-Eval: only in A, not compared",
        "LAVE: A - B = -16.7 points (95% -87.2 to +53.9), on 3 shared items, A right and B wrong on 0, the reverse "
        "on 1",
    ]
    code, lines, _ = command(capsys, monkeypatch, a, b, "--benchmarks", "lave")
    assert code == 0 and [line.split(":")[0] for line in lines] == [lines[0], "warning", "warning", "LAVE"]
    swapped = results_folder(tmp_path, "c", {"lave": LAVE_B})  # B's answers as A, asked alike: no warning
    code, lines, _ = command(capsys, monkeypatch, swapped, a, "--benchmarks", "lave")
    assert code == 0 and lines == ["A = org/c, sample suite; B = org/a @ 0123456789ab, sample suite",
                                   "LAVE: A - B = +16.7 points (95% -53.9 to +87.2), on 3 shared items, A right and B "
                                   "wrong on 1, the reverse on 0"]


def test_compare_refuses_what_it_cannot_read_with_one_line(tmp_path, capsys, monkeypatch):
    good = results_folder(tmp_path, "good", {"lave": LAVE_A})
    empty = tmp_path / "empty"
    empty.mkdir()
    not_json = results_folder(tmp_path, "not-json", {"lave": LAVE_B})
    (not_json / "results.json").write_text("{not json")
    a_list = results_folder(tmp_path, "a-list", {"lave": LAVE_B})
    (a_list / "results.json").write_text("[1, 2]")
    torn = results_folder(tmp_path, "torn", {"lave": LAVE_B})
    (torn / "details" / "lave.parquet").write_bytes(b"PAR1 not a parquet file")
    other = results_folder(tmp_path, "other", {"cure": CURE_B})
    cases = [
        ((good, tmp_path / "nowhere"), f"error: B: {tmp_path / 'nowhere'} does not exist"),
        ((tmp_path / "good" / "results.json", good), "is not a folder"),
        ((good, empty), f"error: B: no results.json in {empty}: not a finished run"),
        ((not_json, good), f"error: A: {not_json / 'results.json'} is damaged (not valid JSON: expecting property name enclosed in double quotes at line 1, column 2)"),
        ((good, a_list), "is not a results file"),
        ((good, torn), f"error: B: {torn / 'details' / 'lave.parquet'} is damaged"),
        ((good, other), "error: the two runs have no benchmark's details in common (CURE only in B; LAVE only in A)"),
        ((good, good, "--benchmarks", "lave,nope"), "error: unknown benchmark 'nope'; known: cure, simpleqa, reform"),
    ]
    for args, expected in cases:
        code, lines, err = command(capsys, monkeypatch, *args)
        assert code == 2 and lines == [], (args, lines)
        assert len(err.splitlines()) == 1 and expected in err and "Traceback" not in err, (args, err)
        assert "Error" not in err, (args, err)  # what is wrong, in words (issue 69)
