"""LAVE's rater (evaluator.benchmarks.lave.rater): rating parsing (evaluator.judge.parse_lave_rating), reference
filtering, the binary switch, and the full judge prompt checked against literal strings."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.benchmarks.lave.rater import (
    PROMPTS_DIR,
    LavePrompts,
    build_lave_prompt,
    filter_references,
    format_references,
    is_binary_question,
    lave_messages,
    load_lave_prompts,
    prompt_texts,
    split_lave_reply,
)
from evaluator.judge import parse_lave_rating

SMALL = LavePrompts(
    task="T.",
    demos=(
        {"question": "What color?", "references": ["red", "blue", "red"], "candidate": "crimson",
         "rationale": "Same color.", "rating": 3},
        {"question": "How many?", "references": ["two", "2"], "candidate": "3",
         "rationale": "Wrong count.", "rating": 1},
    ),
    binary_demos=(
        {"question": "Is it on?", "references": ["yes", "no", "yes"], "candidate": "yes",
         "rationale": "Agrees.", "rating": 3},
        {"question": "Is it wet?", "references": ["no"], "candidate": "maybe",
         "rationale": "Not yes or no.", "rating": 1},
    ),
)


# --------------------------------------------------------------------------------------------- parse_lave_rating

@pytest.mark.parametrize("text, expected", [
    ("The candidate answer is correct. So rating=3", 3),
    ("So rating=1", 1),
    ("Two of the 3 experts say 2 cats, so the answer is partly right. So rating=2", 2),
    ("rated 2 of 3 at first, but on reflection So rating=1", 1),
    ("rating=2. The other option, 3, was considered and rejected.", 2),
    ("Rating: 2/3", 2),
    ("The answer is **incorrect**.\n\nRating is **1**.", 1),
    ("10 apples are on the table, which matches. rating=2", 2),
    ("There are 10 apples and 23 pears; so 3.", 3),
    ("3.", 3),
    ("2", 2),
    ("I cannot decide.", None),
    ("There are 10 apples and 2.5 litres of 123 juice.", None),
    ("rating=10", None),
    ("", None),
    (None, None),
    (3, None),
])
def test_parse_lave_rating(text, expected):
    assert parse_lave_rating(text) == expected


# --------------------------------------------------------------------------------------------- split_lave_reply

@pytest.mark.parametrize("text, expected", [
    ("The colour matches. So rating=3", "The colour matches."),
    ("  The colour matches. So rating=3.\n", "The colour matches."),
    ("Wrong animal.\nRating: 1", "Wrong animal."),
    ("Too vague. 2", "Too vague."),
    ("It has 10 legs", "It has 10 legs"),
    ("So rating=2 because it is vague.", "So rating=2 because it is vague."),
    (None, ""),
])
def test_split_lave_reply(text, expected):
    assert split_lave_reply(text) == expected


# --------------------------------------------------------------------------------------------- references

def test_filter_references_drops_at_or_below_a_quarter():
    refs = ["red"] * 8 + ["pink"] * 2
    assert filter_references(refs) == ["red"] * 8  # 2 / 8 = 0.25 is not above 0.25


def test_filter_references_keeps_above_a_quarter_with_duplicates():
    refs = ["red", "pink"] + ["red"] * 5 + ["pink"]
    assert filter_references(refs) == refs  # 2 / 6 > 0.25: both copies of pink stay
    assert filter_references(["a", "a", "a", "a", "b"], share=0.1) == ["a", "a", "a", "a", "b"]
    assert filter_references(["a", "b", "c"]) == ["a", "b", "c"]  # all tied at the top


def test_filter_references_is_exact_and_rejects_empty():
    assert filter_references(["Red"] + ["red"] * 4) == ["red"] * 4  # no case folding
    with pytest.raises(ValueError):
        filter_references([])


def test_is_binary_question():
    assert is_binary_question(["Yes.", "Yes.", "no", "Yes."]) is True
    assert is_binary_question(["no", "NO", "no", "yes", "yes"]) is True
    assert is_binary_question(["two", "two", "yes", "2"]) is False
    assert is_binary_question(["yes please", "yes please"]) is False
    with pytest.raises(ValueError):
        is_binary_question([])


def test_format_references_sorted_quoted_duplicates_kept():
    assert format_references(["pear", "Apple", "pear", "fig"]) == "'Apple', 'fig', 'pear', 'pear'"


# --------------------------------------------------------------------------------------------- the prompt

def test_build_lave_prompt_general_literal():
    refs = ["pear", "apple", "pear", "pear", "pear", "fig", "apple", "pear", "pear", "pear"]  # fig: 1/7 <= 0.25
    prompt = build_lave_prompt(SMALL, "What fruit?", refs, "a pear")
    assert prompt == (
        "T.\n"
        "\n"
        "Question: 'What color?'\n"
        "Reference answers: 'blue', 'red', 'red'\n"
        "Candidate answer: 'crimson'\n"
        "Output: Same color. So rating=3\n"
        "\n"
        "Question: 'How many?'\n"
        "Reference answers: '2', 'two'\n"
        "Candidate answer: '3'\n"
        "Output: Wrong count. So rating=1\n"
        "\n"
        "Question: 'What fruit?'\n"
        "Reference answers: 'apple', 'apple', 'pear', 'pear', 'pear', 'pear', 'pear', 'pear', 'pear'\n"
        "Candidate answer: 'a pear'\n"
        "Output:"
    )
    assert "fig" not in prompt
    assert lave_messages(prompt) == [{"role": "user", "content": prompt}]


def test_build_lave_prompt_binary_literal_with_shots_and_quotes():
    refs = ["Yes.", "Yes.", "no", "Yes.", "maybe", "Yes."]  # no and maybe: 1/4 <= 0.25
    prompt = build_lave_prompt(SMALL, "Is the lamp on?", refs, "it's on", shots=1)
    assert prompt == (
        "T.\n"
        "\n"
        "Question: 'Is it on?'\n"
        "Reference answers: 'no', 'yes', 'yes'\n"
        "Candidate answer: 'yes'\n"
        "Output: Agrees. So rating=3\n"
        "\n"
        "Question: 'Is the lamp on?'\n"
        "Reference answers: 'Yes.', 'Yes.', 'Yes.', 'Yes.'\n"
        "Candidate answer: 'it's on'\n"
        "Output:"
    )


def test_build_lave_prompt_options():
    refs = ["red"] * 8 + ["pink"] * 2
    unfiltered = build_lave_prompt(SMALL, "Color?", refs, None, shots=0, filter_refs=False)
    assert unfiltered == ("T.\n\nQuestion: 'Color?'\n"
                          "Reference answers: 'pink', 'pink', " + ", ".join(["'red'"] * 8) + "\n"
                          "Candidate answer: ''\nOutput:")
    assert "pink" not in build_lave_prompt(SMALL, "Color?", refs, "red", shots=0)
    # more shots than demonstrations: all of them, no error
    assert build_lave_prompt(SMALL, "Color?", refs, "red", shots=50).count("Question:") == 3
    with pytest.raises(ValueError):
        build_lave_prompt(SMALL, "Color?", [], "red")
    with pytest.raises(ValueError):
        build_lave_prompt(SMALL, "Color?", refs, "red", shots=-1)


# --------------------------------------------------------------------------------------------- the real files

def test_real_prompt_files_load_and_switch():
    prompts = load_lave_prompts()
    assert len(prompts.demos) >= 10 and len(prompts.binary_demos) >= 8
    for demos in (prompts.demos, prompts.binary_demos):
        assert len({d["rating"] for d in demos[:8]}) >= 2  # not all one rating among the shots
    assert "yes or no" in prompts.task and "1" in prompts.task and "3" in prompts.task

    yes_no = build_lave_prompt(prompts, "Is the cat asleep?", ["yes"] * 7 + ["no"] * 3, "yes")
    assert prompts.binary_demos[0]["question"] in yes_no
    assert prompts.demos[0]["question"] not in yes_no
    assert yes_no.count("\nOutput: ") == 8 and yes_no.endswith("Candidate answer: 'yes'\nOutput:")

    general = build_lave_prompt(prompts, "What is on the plate?", ["toast"] * 5, "bread")
    assert prompts.demos[0]["question"] in general
    assert prompts.binary_demos[0]["question"] not in general
    assert prompts.demos[8]["question"] not in general  # only the first 8

    texts = prompt_texts(prompts)
    assert set(texts) == {"lave_task", "lave_demos", "lave_demos_binary"}
    assert json.loads(texts["lave_demos"]) == list(prompts.demos)
    assert texts["lave_task"] == (PROMPTS_DIR / "lave_task.txt").read_text(encoding="utf-8").strip()


def _write_prompts(directory: Path, demos: list, binary: list) -> None:
    (directory / "lave_task.txt").write_text("T.\n", encoding="utf-8")
    (directory / "lave_demos.json").write_text(json.dumps(demos), encoding="utf-8")
    (directory / "lave_demos_binary.json").write_text(json.dumps(binary), encoding="utf-8")


@pytest.mark.parametrize("change, message", [
    ({"rating": 4}, "rating"),
    ({"references": []}, "references"),
    ({"references": ["a", 2]}, "references"),
    ({"references": "a"}, "references"),
    ({"caption": 3}, "caption"),
])
def test_load_lave_prompts_validation(tmp_path, change, message):
    good = dict(SMALL.demos[0])
    _write_prompts(tmp_path, [good, {**good, **change}], list(SMALL.binary_demos))
    with pytest.raises(ValueError, match=rf"lave_demos\.json, demonstration 1: {message}"):
        load_lave_prompts(tmp_path)


def test_load_lave_prompts_missing_field(tmp_path):
    bad = {k: v for k, v in SMALL.binary_demos[0].items() if k != "rationale"}
    _write_prompts(tmp_path, list(SMALL.demos), [bad])
    with pytest.raises(ValueError, match=r"lave_demos_binary\.json, demonstration 0: missing field\(s\) rationale"):
        load_lave_prompts(tmp_path)
    _write_prompts(tmp_path, list(SMALL.demos), list(SMALL.binary_demos))
    assert load_lave_prompts(tmp_path) == SMALL


def test_load_lave_prompts_reads_the_package_folder_and_names_a_broken_file(tmp_path):
    assert PROMPTS_DIR == Path(__file__).resolve().parent.parent / "evaluator" / "benchmarks" / "lave" / "prompts"
    _write_prompts(tmp_path, list(SMALL.demos), list(SMALL.binary_demos))
    (tmp_path / "lave_demos.json").write_text("[{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"lave_demos\.json: not valid JSON"):
        load_lave_prompts(tmp_path)
    _write_prompts(tmp_path, list(SMALL.demos), list(SMALL.binary_demos))
    (tmp_path / "lave_task.txt").write_text(" \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"lave_task\.txt: the task description is empty"):
        load_lave_prompts(tmp_path)
