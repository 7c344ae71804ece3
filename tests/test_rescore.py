"""Predict, then score: a finished run is graded again from its stored details, without the model.

- `python -m evaluator rescore` with a second judge changes only the judged scores; the model's raw answers, the
  other benchmarks and the model-side prompt hashes stay as they were, and the results name the new judge.
- Scoring stored details again (with the same judge) reproduces every benchmark's results: what a run stores is
  all that scoring needs.
- From the store by key (`python -m leaderboard.running.rescore`): the run's results, details and the board follow.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from evaluator.benchmarks import get_benchmark
from evaluator.runs.details import read_details
from evaluator.runs.files import json_safe
from evaluator.runs.runner import RunConfig, run, score_context
from tests import scripted_judges
from tests.conftest import PROJECT
from tests.judge_servers import ScriptedServer


def _run(model, out, judge_url: str, benchmarks: tuple[str, ...], limit: int = 0) -> dict:
    config = RunConfig(model=model.repo_id, revision=model.sha, benchmarks=benchmarks, limit=limit, batch_size=4,
                       judge=f"endpoint:{judge_url}|judge-a", images_dir=out.parent / "images")
    return run(config, out)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evaluator", *args], cwd=PROJECT, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow  # starts python -m evaluator
def test_rescore_with_a_second_judge_changes_only_the_judged_scores(tmp_path, tiny_llava, one_torch_thread):
    first, second = tmp_path / "first", tmp_path / "second"
    with ScriptedServer(scripted_judges.simpleqa_grades) as judge_a:
        before = _run(tiny_llava, first, judge_a.base_url, ("cure", "simpleqa"), limit=6)
    with ScriptedServer(scripted_judges.simpleqa_grades_strict) as judge_b:
        done = _cli("rescore", "--run", str(first), "--judge", f"endpoint:{judge_b.base_url}|judge-b",
                    "--out", str(second))
        assert done.returncode == 0, done.stderr
        assert "graded by judge-b" in done.stdout
        graded = len(judge_b.requests)
    after = json.loads((second / "results.json").read_text())

    # the judged benchmark changed, and only through its grades: every answer, confidence and sample was graded
    old, new = before["benchmarks"]["simpleqa"], after["benchmarks"]["simpleqa"]
    assert graded == sum(1 for _ in read_details(first / "details" / "simpleqa.parquet")
                         if _["part"] in ("answer", "confidence", "frequency"))
    assert new["scores"]["correct"] == 0.0 and new["scores"]["incorrect"] == pytest.approx(5 / 6)
    assert new["scores"] != old["scores"] and new["counts"]["items"] == old["counts"]["items"] == 6
    # the coverage follows the new grades: its scored count is the answers the new judge graded
    assert new["coverage"] == {"scored": new["counts"]["scored"], "items": 6, "suite_items": 31,
                               "share": pytest.approx(new["counts"]["scored"] / 31)}
    assert new["extra"]["judge"]["model"] == "judge-b" and old["extra"]["judge"]["model"] == "judge-a"
    # the model's answers did not move; the grades and rationales did
    details_a = pd.read_parquet(first / "details" / "simpleqa.parquet")
    details_b = pd.read_parquet(second / "details" / "simpleqa.parquet")
    for column in ("question_id", "part", "prompt", "prediction", "question", "gold"):
        assert details_a[column].tolist() == details_b[column].tolist(), column
    answers = details_b[details_b["part"] == "answer"]
    assert set(answers["grade"]) == {"B", "C"} and answers["judge_rationale"].str.startswith("Strict reason").all()
    # the other benchmark is exactly as it was
    assert after["benchmarks"]["cure"] == before["benchmarks"]["cure"]
    assert (second / "details" / "cure.parquet").read_bytes() == (first / "details" / "cure.parquet").read_bytes()
    # the results name the new judge, when it graded, and the judge before it
    assert after["run"]["judge"] == {"kind": "endpoint", "base_url": judge_b.base_url, "model": "judge-b"}
    assert after["run"]["judge_name"] == f"judge-b (endpoint {judge_b.base_url})"
    assert after["run"]["previous_judges"] == [{"judge": before["run"]["judge"],
                                                "judged_time": before["run"]["judged_time"]}]
    assert after["run"]["prompt_hashes"] == before["run"]["prompt_hashes"]  # same prompts, other judge
    assert {k: v for k, v in after["run"].items() if not k.startswith(("judge", "previous"))} == \
        {k: v for k, v in before["run"].items() if not k.startswith(("judge", "previous"))}


@pytest.mark.slow  # starts python -m evaluator
def test_rescore_refuses_what_it_cannot_grade(tmp_path):
    missing = _cli("rescore", "--run", str(tmp_path), "--judge", "endpoint:http://127.0.0.1:9|j", "--out",
                   str(tmp_path / "out"))
    assert missing.returncode == 1 and "error: no results.json" in missing.stderr
    (tmp_path / "results.json").write_text(json.dumps({"benchmarks": {"cure": {}}, "run": {}}))
    unjudged = _cli("rescore", "--run", str(tmp_path), "--judge", "endpoint:http://127.0.0.1:9|j", "--out",
                    str(tmp_path / "out"))
    assert unjudged.returncode == 1 and "has no judged benchmark (cure)" in unjudged.stderr
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.slow  # a whole evaluation of each benchmark
@pytest.mark.parametrize("benchmarks, fixture, script", [
    (("cure",), "tiny_llava", None),
    (("reform",), "tiny_llava", None),
    (("simpleqa",), "tiny_llama", scripted_judges.simpleqa_grades),
    (("lave",), "tiny_llava", scripted_judges.lave_ratings),
])
def test_scoring_the_stored_details_again_reproduces_the_results(benchmarks, fixture, script, request, tmp_path,
                                                                 one_torch_thread):
    """What a run stores is all that scoring needs: scored rows scored again give the same results and rows."""
    from evaluator.judge import make_judge

    model = request.getfixturevalue(fixture)
    with ScriptedServer(script or scripted_judges.simpleqa_grades) as server:
        results = _run(model, tmp_path / "run", server.base_url, benchmarks, limit=6)
        judge = make_judge(f"endpoint:{server.base_url}|judge-a")
        for name in benchmarks:
            stored = read_details(tmp_path / "run" / "details" / f"{name}.parquet")
            again = get_benchmark(name).score([dict(r) for r in stored], score_context(results["run"], judge))
            block = results["benchmarks"][name]
            redone = json_safe({"scores": again.scores, "counts": again.counts, "extra": again.extra})
            assert json.loads(json.dumps(redone)) == {k: block[k] for k in ("scores", "counts", "extra")}
            assert pd.DataFrame(again.rows).equals(pd.DataFrame(stored))


def test_rescore_from_the_store_by_key(settings, store, tiny_llama, tmp_path, one_torch_thread):
    from leaderboard.board import publish as publishing
    from leaderboard.board.columns import schema
    from leaderboard.board.file import load_board
    from leaderboard.running.rescore import main, rescore_store
    from leaderboard.submissions import records as q

    request = q.Request(model=tiny_llama.repo_id, revision=tiny_llama.sha)
    with ScriptedServer(scripted_judges.simpleqa_grades) as judge_a:
        out = tmp_path / "out"
        config = RunConfig(model=tiny_llama.repo_id, revision=tiny_llama.sha, benchmarks=("simpleqa",), limit=4,
                           judge=f"endpoint:{judge_a.base_url}|judge-a", request=request.to_dict())
        run(config, out)
    publishing.publish(store, request, out)
    assert publishing.rebuild_board(settings, store)
    before = store.read_json(f"results/{request.key}.json")

    with ScriptedServer(scripted_judges.simpleqa_grades_strict) as judge_b:
        done = rescore_store(settings, store, [request.key, "not/a/key!", "org/none/0123456789ab_auto"],
                             f"endpoint:{judge_b.base_url}|judge-b")
    assert [(d.key, d.ok) for d in done] == [(request.key, True), ("not/a/key!", False),
                                             ("org/none/0123456789ab_auto", False)]
    after = store.read_json(f"results/{request.key}.json")
    assert after["run"]["judge"]["model"] == "judge-b" and after["benchmarks"]["simpleqa"]["scores"]["correct"] == 0
    assert after["key"] == before["key"] and after["model"] == before["model"]
    board = load_board(store, schema(("simpleqa",)))
    assert board.loc[0, "judge"] == after["run"]["judge_name"] and board.loc[0, "simpleqa_correct"] == 0
    stored = pd.read_parquet(store.root / "details" / request.key / "simpleqa.parquet")
    assert set(stored.loc[stored["part"] == "answer", "grade"]) <= {"B", "C"}
    assert main(["--key", request.key]) == 1  # no judge configured or given: a clear refusal
