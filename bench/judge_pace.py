"""Where a small local judge's grading time goes, and what the trial-judge rules save.

A SmolLM2-135M-shaped Llama (random weights, the tests' tiny tokenizer padded to the real vocabulary:
bench/sample_suites.py's text model) as a local judge grades N SimpleQA answers (the sample's questions, each answer
"20") through evaluator.benchmarks.judging.ask_judge with SimpleQA's own grader prompt and reply check, twice:

  before  as the judge was asked before issue 39: every reply up to 512 new tokens, a reply that is no judgement at
          all (empty, an error, a refusal) asked again up to 3 replies in all, progress after each chunk of 64;
  now     the rules of today: a local judge under 7B is a trial judge, its replies stop at TRIAL_MAX_TOKENS (128); a
          greedy local judge is asked once (the same reply would come again); progress after every batch.

Random weights never stop early, so both are the worst case: every reply runs to its budget. Their rambling is text,
not an error or a refusal, so it is not asked again in "before" either (it is read as ungraded): the saving measured
here is the reply budget's. Printed: prompt tokens, seconds, seconds per grade, progress updates and how many replies
held a grade. Run: `HF_HUB_OFFLINE=1 .venv/bin/python bench/judge_pace.py [--answers 6]` (about
5 minutes on 2 cores for 6 answers). Its smoke form (`--shape tiny --answers 2`, the tests' 2-layer Llama as the
judge) runs in the test suite.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import _models  # noqa: F401  (sets sys.path to the project root)
import sample_suites

from evaluator.benchmarks.judging import ask_judge
from evaluator.benchmarks.simpleqa.grading import reply_problem
from evaluator.benchmarks.simpleqa.prompts import grader_messages, load_prompts
from evaluator.benchmarks.spec import ScoreContext
from evaluator.judge import parse_simpleqa_grade
from evaluator.judge.base import DEFAULT_MAX_TOKENS, TRIAL_MAX_TOKENS


def conversations(count: int) -> list[list[dict]]:
    """`count` grader conversations over the SimpleQA sample's questions, each grading the answer "20"."""
    from evaluator.benchmarks import get_benchmark
    from evaluator.benchmarks.spec import PlanContext

    plan = get_benchmark("simpleqa").plan(PlanContext(suite="sample", limit=0, images_dir=Path(tempfile.gettempdir()),
                                                      options={}))
    template = load_prompts()["simpleqa_grader"]
    rows = (plan.rows * (count // len(plan.rows) + 1))[:count]
    return [grader_messages(template, row["question"], row["gold"], "20") for row in rows]


def timed(judge, chats: list[list[dict]]) -> tuple[float, int, int]:
    """(seconds, progress updates, replies holding a grade) of one ask_judge over the conversations."""
    updates: list[tuple[int, int]] = []
    ctx = ScoreContext(judge=judge, progress=lambda done, total: updates.append((done, total)))
    started = time.monotonic()
    results = ask_judge(ctx, chats, check=reply_problem, temperature=0.0)
    graded = sum(1 for r in results if r.error is None and parse_simpleqa_grade(r.text) is not None)
    return time.monotonic() - started, len(updates), graded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=6)
    parser.add_argument("--shape", choices=("smollm2-135m", "tiny"), default="smollm2-135m",
                        help="the judge's size: SmolLM2-135M's, or the tests' 2-layer Llama (the smoke form, seconds)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-judge-pace-"))
    try:
        measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args: argparse.Namespace, work: Path) -> None:
    """Build the judge in `work`, time both rules over args.answers answers, print the figures."""
    from evaluator.judge.local import LocalJudge, to_request

    build = sample_suites.build_tiny_text if args.shape == "tiny" else sample_suites.build_smollm2_135m
    folder = build(work / args.shape)
    judge = LocalJudge(str(folder))
    chats = conversations(args.answers)
    prompt = judge._adapter.build_prompt(to_request(chats[0], {}))
    tokens = len(judge._adapter.tokenizer(prompt)["input_ids"])
    print(f"{sample_suites.machine()}; judge: {judge.parameters / 1e6:.0f}M parameters (trial judge: {judge.trial}), "
          f"batch {judge.parallel}; grader prompt {tokens} tokens (the tests' tokenizer; the real one is shorter)",
          flush=True)

    now = timed(judge, chats)
    cap, parallel = judge._cap, judge.parallel
    judge._cap, judge.repeatable, judge.parallel = None, False, 32  # as before: 512 tokens, 3 replies, chunks of 64
    before = timed(judge, chats)
    judge._cap, judge.repeatable, judge.parallel = cap, True, parallel

    for label, (seconds, updates, graded), budget, replies in (
            ("before", before, DEFAULT_MAX_TOKENS, 3), ("now", now, TRIAL_MAX_TOKENS, 1)):
        print(f"{label:6}  {args.answers} answers in {seconds:6.1f} s ({seconds / args.answers:5.1f} s per grade; "
              f"replies up to {budget} tokens, up to {replies} per answer); {updates} progress updates; "
              f"{graded} held a grade", flush=True)
    print(f"now / before: {now[0] / before[0]:.2f} (random weights: every reply runs to its budget)")


if __name__ == "__main__":
    main()
