"""Every benchmark block of the results says its coverage: the items its headline score counts, the items run and
the items of the whole suite. A limit lowers the share; a benchmark from elsewhere that does not say is unknown."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.spec import Ask, PlanContext, Scored
from evaluator.models.base import GenerationRequest
from evaluator.runs.progress import Progress
from evaluator.runs.runner import RunConfig, coverage_block, run_benchmark


@pytest.mark.parametrize("name, limit", [
    ("cure", 3),
    ("simpleqa", 2),
    ("reform", 1),  # the limit is per dimension; the suite's size counts every item
    ("lave", 2),
])
def test_each_plan_says_how_many_items_its_whole_suite_has(name, limit, tmp_path):
    benchmark = get_benchmark(name)
    whole = benchmark.plan(PlanContext(images_dir=tmp_path))
    limited = benchmark.plan(PlanContext(limit=limit, images_dir=tmp_path))
    assert whole.suite_items == len(whole.items) == limited.suite_items
    assert len(limited.items) < limited.suite_items
    if name != "reform":
        assert len(limited.items) == limit


def test_an_unlimited_run_covers_what_it_scored(tiny_llava, tmp_path, one_torch_thread):
    from evaluator.models import load_model

    model = load_model(str(tiny_llava.folder), batch_size=4)
    config = RunConfig(model=tiny_llava.repo_id, images_dir=tmp_path / "images")
    block, _, answered = run_benchmark(get_benchmark("cure"), model, config, None, Progress(tmp_path, ("cure",)),
                                       tmp_path)
    coverage = block["coverage"]
    assert coverage == {"scored": block["counts"]["scored"], "items": 20, "suite_items": 20,
                        "share": coverage["scored"] / coverage["suite_items"]}
    assert coverage["share"] == 1.0 and answered.items == 20


class _Echo:
    """A stand-in model: repeats the prompt's last word."""

    batch_size = 2

    def generate(self, requests):
        return [r.text.split()[-1] for r in requests]


def _toy_plan(ctx):
    rows = [{"question_id": q, "prediction": ""} for q in ("a", "b")]
    asks = [Ask(row["question_id"], GenerationRequest(text=f"Say {row['question_id']}"), [row]) for row in rows]
    return SimpleNamespace(rows=rows, items=["a", "b"], asks=asks, prompts={})  # a plan that predates suite_items


def test_a_benchmark_that_does_not_say_has_an_unknown_coverage(tmp_path):
    toy = SimpleNamespace(CARD=SimpleNamespace(name="toy", needs_judge=False), plan=_toy_plan,
                          score=lambda rows, ctx: Scored(scores={"accuracy": 1.0}, counts={"items": 2}, rows=rows))
    block, _, answered = run_benchmark(toy, _Echo(), RunConfig(model="echo", benchmarks=("toy",)), None,
                                       Progress(tmp_path, ("toy",)), tmp_path)
    assert block["coverage"] == {"scored": None, "items": 2, "suite_items": None, "share": None}
    assert answered.model_requests == 2 and block["scores"] == {"accuracy": 1.0}


def test_coverage_block_reads_only_whole_counts():
    assert coverage_block({"scored": 7}, 8, 20) == {"scored": 7, "items": 8, "suite_items": 20, "share": 0.35}
    assert coverage_block({"scored": 0}, 0, 0)["share"] is None  # an empty suite has no share
    for junk in ({"scored": "7"}, {"scored": True}, {"scored": -1}, {"scored": 2.5}, {"scored": math.nan}, {}, None):
        assert coverage_block(junk, 8, 20) == {"scored": None, "items": 8, "suite_items": 20, "share": None}
    assert coverage_block({"scored": 3}, None, "20") == {"scored": 3, "items": None, "suite_items": None,
                                                         "share": None}


def test_list_benchmarks_in_process_gives_each_benchmarks_line(capsys, monkeypatch):
    """`python -m evaluator list-benchmarks` called in process (tests/test_cli.py starts the command): one line per
    registered benchmark, with its modes, its judge and the sizes its plans say."""
    from evaluator.__main__ import main
    from evaluator.benchmarks import REGISTRY

    monkeypatch.delenv("LEADERBOARD_PARENT_PID", raising=False)  # run by hand: no parent to watch
    assert main(["list-benchmarks"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("  ")]
    assert [line.split(":")[0] for line in lines] == list(REGISTRY)
    by_name = dict(zip(REGISTRY, lines))
    assert "modes: likelihood (default), generation; no judge; sample suite: 20 items" in by_name["cure"]
    assert "modes: generation; needs a judge (--judge)" in by_name["simpleqa"]
