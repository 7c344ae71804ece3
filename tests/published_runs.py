"""Finished runs published into a store the way the scheduler does it (publish, close FINISHED, add the board row),
with small but real details files (every column a benchmark's card declares, of its type), for the tests of the
results dataset and of the publish's cost."""
from __future__ import annotations

import json
from pathlib import Path

from evaluator import api
from evaluator.runs.details import write_details
from leaderboard.board import publish as publishing
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request
from tests.results_files import board_result

SAMPLE_VALUES = {"string": "text", "int": 1, "float": 0.5, "bool": True, "json": "{}"}


def details_rows(benchmark: str, run: str, rows: int = 3) -> list[dict]:
    """`rows` details rows of `benchmark`: every declared column filled with a value of its type (the question id
    and the prediction say which run and row they are)."""
    card = api.card(benchmark)
    declared = getattr(card, "details", ()) or ()
    if not declared:  # a card that declares no columns yet: a few plain ones
        return [{"question_id": f"q{i}", "prediction": f"{run} answer {i}", "score": 0.5} for i in range(rows)]
    found = []
    for i in range(rows):
        row = {column.name: SAMPLE_VALUES[column.type] for column in declared}
        for name, value in (("benchmark", benchmark), ("question_id", f"q{i}"), ("prediction", f"{run} answer {i}")):
            if name in row:
                row[name] = value
        found.append(row)
    return found


def finished_output(folder: Path, run: str, scores: dict[str, float | None], rows: int = 3) -> Path:
    """A worker's output folder for a run: results.json (headline `scores` per benchmark) and one details file per
    benchmark."""
    folder.mkdir(parents=True, exist_ok=True)
    results = board_result("unused", scores)
    for field in ("model", "revision", "precision", "model_type", "params_billions", "architecture", "key",
                  "submitted_time", "source"):
        results.pop(field, None)
    (folder / "results.json").write_text(json.dumps(results))
    for benchmark in scores:
        write_details(folder / "details" / f"{benchmark}.parquet", details_rows(benchmark, run, rows))
    return folder


def publish_finished(settings, store, out: Path, model: str, revision: str = "a" * 40, precision: str = "auto",
                     hidden: str | None = None) -> tuple[Request, dict]:
    """Run the scheduler's publish of one run end to end: the request is claimed, its results and details
    published, the request closed FINISHED, its row added to the board. Returns (the closed request, the results
    as published)."""
    request = Request(model=model, revision=revision, precision=precision, params_billions=0.5,
                      model_type="instruction-tuned", hidden=hidden)
    stored = queue.load(store, request.path)
    if stored is not None:  # published before: run again
        request = stored
        request.hidden = hidden
    request.status, request.lease_owner, request.lease_expires = queue.RUNNING, "w", queue.iso(queue.now())
    queue.save(store, request)
    results = publishing.publish(store, request, out, settings)
    closed = queue.finish(store, request.path, "w", queue.FINISHED)
    assert closed is not None and closed.status == queue.FINISHED
    assert publishing.publish_board(settings, store, closed, results)
    return closed, results


def publish_hub_model_run(hub, settings, store, folder: Path, model: str, correct: float = 0.5,
                          limit: int = 0) -> Request:
    """A model repo `model` made on the loopback Hub (tests/hub_server.py) and a finished run of it at its head,
    scored on SimpleQA (its correct share `correct`: the benchmark with a registered Hub dataset) and CURE, published
    as the scheduler does; the closed request."""
    head = hub.create_model(model, {"config.json": b"{}"})
    out = finished_output(folder, "A", {"simpleqa": 0.3, "cure": 0.5})
    results = json.loads((out / "results.json").read_text())
    results["benchmarks"]["simpleqa"]["scores"]["correct"] = correct
    results["run"]["limit"] = limit
    (out / "results.json").write_text(json.dumps(results))
    request, _ = publish_finished(settings, store, out, model, revision=head)
    return request
