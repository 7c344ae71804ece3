"""Finished runs of every benchmark by the tiny models, published into a store as the scheduler publishes them, for
the explorer's tests.

- "vision-a": tiny-llava on CURE (likelihood), ReForm-Eval (seed 0) and LAVE (scripted ratings);
- "vision-b": the same model on CURE by generation, ReForm-Eval with seed 1 and LAVE rated by a generous judge (so
  it answers differently from A and can be compared with it);
- "text": tiny-llama on SimpleQA (scripted grades), every question with each of its parts (answer, stated confidence,
  5 samples) but replies of at most TEXT_MAX_NEW_TOKENS tokens: the tiny random model never stops early, and at the
  default budgets (256 / 96 tokens) this run alone took most of the fixture's time.
  The SimpleQA golden scores (tests/test_golden_scores.py) are this run's.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from evaluator.runs.runner import RunConfig, run
from leaderboard.board.publish import publish, rebuild_board
from leaderboard.submissions.records import FINISHED, Request
from tests import scripted_judges
from tests.judge_servers import ScriptedServer


@dataclass(frozen=True)
class FinishedRun:
    name: str
    model: str
    revision: str
    precision: str
    out_dir: Path

    @property
    def key(self) -> str:
        return f"{self.model}/{self.revision[:12]}_{self.precision}"


# each run's scripted judge (tests/test_golden_scores.py reads the vision runs and checks their judge here)
JUDGES = {"vision-a": scripted_judges.lave_ratings, "vision-b": scripted_judges.lave_ratings_generous,
          "text": scripted_judges.simpleqa_grades}
TEXT_MAX_NEW_TOKENS = 16
TEXT_OPTIONS = {"simpleqa.max_new_tokens": str(TEXT_MAX_NEW_TOKENS),
                "simpleqa.confidence_max_new_tokens": str(TEXT_MAX_NEW_TOKENS)}


def make_runs(root: Path, llava, llama) -> dict[str, FinishedRun]:
    """Run the three runs above into folders under `root` (about half a minute on two cores)."""
    plans = [
        ("vision-a", llava, "auto", ("cure", "reform", "lave"), {}, JUDGES["vision-a"]),
        ("vision-b", llava, "float32", ("cure", "reform", "lave"), {"cure.mode": "generation", "reform.seed": "1"},
         JUDGES["vision-b"]),
        ("text", llama, "auto", ("simpleqa",), TEXT_OPTIONS, JUDGES["text"]),
    ]
    return {plan[0]: run_one(root, *plan) for plan in plans}


def run_one(root: Path, name: str, model, precision: str, benchmarks: tuple[str, ...], options: dict,
            script) -> FinishedRun:
    """Run one plan of make_runs (`model`: repo_id and sha) into root/name, judged by `script` on 127.0.0.1."""
    out = root / name
    with ScriptedServer(script) as server:
        config = RunConfig(model=model.repo_id, revision=model.sha, benchmarks=benchmarks, suite="sample",
                           limit=0, batch_size=4, judge=f"endpoint:{server.base_url}|scripted-judge",
                           images_dir=root / "images", options=options)
        run(config, out)
    return FinishedRun(name, model.repo_id, model.sha, precision, out)


def publish_run(store, settings, finished: FinishedRun, model: str | None = None) -> str:
    """Publish a finished run into `store` (under another model id when `model` is given); returns its key."""
    request = Request(model=model or finished.model, revision=finished.revision, precision=finished.precision,
                      status=FINISHED, params_billions=0.001, architecture="LlavaForConditionalGeneration")
    publish(store, request, finished.out_dir)
    assert rebuild_board(settings, store)
    return request.key


def publish_runs(store, settings, runs: dict[str, FinishedRun], template: Path) -> dict[str, str]:
    """publish_run for each of `runs`, in order, into `store` (a local store); returns their keys by name. The first
    call publishes into `template` (a store folder of its own, kept for the session); each later one copies that
    folder's files into `store`: the same files, without publishing and rebuilding the board again (some 2 s of a
    test's setup). `settings` name the same benchmarks every time."""
    done = template / ".published.json"
    if not done.exists():
        from leaderboard.store.local import LocalStore

        keys = {name: publish_run(LocalStore(template), settings, run) for name, run in runs.items()}
        done.write_text(json.dumps(keys))
    shutil.copytree(template, store.root, dirs_exist_ok=True, ignore=shutil.ignore_patterns(done.name, ".queue.lock"))
    return json.loads(done.read_text())
