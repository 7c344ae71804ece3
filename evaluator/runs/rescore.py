"""Grade a finished run again with another judge, from its stored details, without the model.

    rescore(run_dir, out_dir, judge)   run_dir holds results.json and details/<benchmark>.parquet

Every benchmark whose card needs a judge is scored again from its details rows (the model's raw answers stay as
they are; the grades, rationales and judged scores are replaced); the others are copied unchanged. The results
record the new judge, when it graded, and the judges before it (run.previous_judges).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from evaluator.benchmarks import REGISTRY, get_benchmark
from evaluator.inputs.prompt_files import prompt_hash
from evaluator.runs.details import details_metadata, read_details, write_details
from evaluator.runs.files import json_safe, write_atomic
from evaluator.runs.runner import coverage_block, interval_records, judge_record, score_context


def read_results(run_dir: Path) -> dict:
    path = Path(run_dir) / "results.json"
    if not path.is_file():
        raise FileNotFoundError(f"no results.json in {run_dir}: not a finished run")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error})") from None
    if not isinstance(results, dict) or not isinstance(results.get("benchmarks"), dict):
        raise ValueError(f"{path} is not a results file")
    return results


def judged_benchmarks(results: dict) -> list[str]:
    """The benchmarks of a run that a judge graded."""
    return [name for name in results.get("benchmarks") or {}
            if name in REGISTRY and get_benchmark(name).CARD.needs_judge]


def rescore(run_dir: Path, out_dir: Path, judge) -> dict:
    """Grade `run_dir` again with `judge` into `out_dir` (which may be run_dir itself); returns the new results."""
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    results = read_results(run_dir)
    names = judged_benchmarks(results)
    if not names:
        raise ValueError(f"the run in {run_dir} has no judged benchmark ({', '.join(results['benchmarks']) or 'none'})")
    missing = [n for n in names if not (run_dir / "details" / f"{n}.parquet").is_file()]
    if missing:
        raise FileNotFoundError(f"the run in {run_dir} has no details for {', '.join(missing)}")
    scored = {}
    run = results.setdefault("run", {})
    for name in names:  # score everything before writing anything
        rows = read_details(run_dir / "details" / f"{name}.parquet")
        scored[name] = get_benchmark(name).score(rows, score_context(run, judge))
    (out_dir / "details").mkdir(parents=True, exist_ok=True)
    for path in sorted((run_dir / "details").glob("*.parquet")):
        if path.stem not in scored and path.resolve() != (out_dir / "details" / path.name).resolve():
            shutil.copyfile(path, out_dir / "details" / path.name)
    hashes = run.setdefault("prompt_hashes", {})
    for name, result in scored.items():
        write_details(out_dir / "details" / f"{name}.parquet", result.rows, get_benchmark(name).CARD,
                      details_metadata(run_dir / "details" / f"{name}.parquet"))
        block = results["benchmarks"][name]
        block.update(scores=result.scores, counts=result.counts, extra=result.extra,
                     intervals=interval_records(result))
        if isinstance(block.get("coverage"), dict):  # a new judge may grade a different number of answers
            coverage = block["coverage"]
            block["coverage"] = coverage_block(result.counts, coverage.get("items"), coverage.get("suite_items"))
        hashes.update({f"{name}/{key}": prompt_hash(text) for key, text in result.prompts.items()})
    if run.get("judge"):
        previous = {"judge": run["judge"], "judged_time": run.get("judged_time")}
        run["previous_judges"] = [*run.get("previous_judges", []), previous]
    run.update(judge_record(judge))
    results = json_safe(results)
    write_atomic(out_dir / "results.json", json.dumps(results, indent=2).encode())
    return results
