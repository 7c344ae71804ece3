"""A finished run in the Hub's evaluation-results format: the YAML list a model repo keeps in `.eval_results/*.yaml`
(hub-docs docs/hub/eval-results.md), with one entry per benchmark of the run that has a registered Hub benchmark
dataset (Settings.hub_evals: the cards' CARD.hub_eval, as LEADERBOARD_EVAL_DATASETS adds or changes them).

Every finished run that is complete and unflagged (the board's own flag: not hidden, no trial judge, no limit, its
coverage at the threshold) is written to the results dataset as `eval_results/<org>/<model>/<sha12>_<precision>.yaml`
when it publishes; a run without such an entry has no file there, and a run the admins hide loses its file
(follow_hiding). An entry:

    - dataset: {id: <registered dataset>, task_id: <its eval.yaml task>}
      value: <the metric, on the scale its eval.yaml documents: percent 0-100 or fraction 0-1>
      date: <when the run finished>
      source: {url: <the Explorer's link to this run and benchmark on the Space>, name: <the leaderboard>}
      notes: <suite (a lite one's rule), precision, revision, limit, judge and its short id, how it was asked; the
              error bar>

`source` is left out when the Space's address is not known (SPACE_ID unset), as the spec wants a url in it.
The format has no field for a standard error or an interval (neither huggingface_hub's EvalResultEntry nor the
hub-docs spec, eval_results.yaml; nor the legacy model-index's EvalResult): the run's error bar for the value
(results.json's benchmarks.<name>.intervals.<metric>) ends the notes instead, on the value's own scale (percent or
fraction, as the entry's value): "stderr 5.6, 95% 45.0-67.3, n 20 chains".
"""
from __future__ import annotations

import logging
import math
import re

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

from evaluator import api
from leaderboard.board.columns import schema
from leaderboard.board.dataset_card import TITLE, space_url
from leaderboard.board.frames import leaderboard_frame
from leaderboard.board.views import flag_text
from leaderboard.explorer.queries import Query, query_string
from leaderboard.settings import Settings

log = logging.getLogger(__name__)


def path(key: str) -> str:
    """Where a run's evaluation results lie in the results dataset."""
    return f"eval_results/{key}.yaml"


def stored(store, key: str) -> bool:
    """Whether the run has an evaluation-results file in the store (one listing of its model's folder)."""
    return path(key) in store.list(path(key).rsplit("/", 1)[0], suffix=".yaml")


def flag(results: dict, settings: Settings, hidden: str | None = None) -> str:
    """The flag the run's row gets in the Overview: why the board does not rank it with complete ones ("" when it
    does)."""
    board = schema(settings.benchmarks)
    row = leaderboard_frame([{**results, "hidden": hidden} if hidden else results], board).to_dict("records")[0]
    ran = results.get("benchmarks") if isinstance(results.get("benchmarks"), dict) else {}
    return flag_text(row, [card for card in board.cards if card.name in ran], settings.coverage_threshold)


def unflagged(results: dict, settings: Settings, hidden: str | None = None) -> bool:
    """Whether the board ranks the run with complete ones: the flag its row gets in the Overview is empty."""
    return not flag(results, settings, hidden)


def explorer_link(settings: Settings, key: str, benchmark: str) -> str:
    """The Explorer opened on this run and benchmark, on the Space's page ("" when its address is not known)."""
    base = space_url(settings.space_id)
    return f"{base}?{query_string(Query(run=key, benchmark=benchmark))}" if base else ""


def interval_note(record, scale: str) -> str:
    """A score's error bar (an intervals record: stderr, low, high, n, method) on the entry's scale ("percent":
    0-100, one decimal; "fraction": 0-1, three), with what n counts as its method names it: "stderr 5.6, 95%
    45.0-67.3, n 20 chains" ("" when the record is missing or not all numbers)."""
    if not isinstance(record, dict):
        return ""
    numbers = [record.get(key) for key in ("stderr", "low", "high")]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers):
        return ""
    factor, places = (100, 1) if scale == "percent" else (1, 3)
    stderr, low, high = (f"{factor * v:.{places}f}" for v in numbers)
    text = f"stderr {stderr}, 95% {low}-{high}"
    n = record.get("n")
    if isinstance(n, int) and not isinstance(n, bool) and n > 0:
        unit = re.search(r"\b(?:by|over) ([a-z]+?)s?\b", str(record.get("method", "")))
        text += f", n {n}" + (f" {unit.group(1)}{'s' if n != 1 else ''}" if unit else "")
    return text


def notes(results: dict, benchmark: str, metric: str = "", scale: str = "percent") -> str:
    """How the number was measured, short: suite (a lite run's rule beside it), precision, revision, limit, judge
    (and its short id), mode; and `metric`'s error bar on `scale` where the run recorded one (interval_note)."""
    run = results.get("run") if isinstance(results.get("run"), dict) else {}
    judge = run.get("judge") if isinstance(run.get("judge"), dict) else None
    graded = (f"judge {api.judge_name(judge)} [{api.judge_id(judge)}]" if judge and api.card(benchmark).needs_judge
              else "no judge")
    limit = run.get("limit") or 0
    suite = run.get("suite", "sample")
    if suite == api.LITE:  # the items a lite run asked are its rule's
        suite += f" ({run.get('lite_rule') or 'rule not recorded'})"
    text = (f"{suite} suite; {results.get('precision', '?')}; revision "
            f"{str(results.get('revision', ''))[:12]}; {f'limit {limit}' if limit else 'no limit'}; {graded}; asked by "
            f"{api.scoring_modes(results).get(benchmark, api.GENERATION)}")
    block = (results.get("benchmarks") or {}).get(benchmark) if isinstance(results.get("benchmarks"), dict) else None
    intervals = block.get("intervals") if isinstance(block, dict) and isinstance(block.get("intervals"), dict) else {}
    bar = interval_note(intervals.get(metric), scale)
    return f"{text}; {bar}" if bar else text


def benchmark_entries(results: dict, settings: Settings) -> dict[str, dict]:
    """The run's entries by benchmark name, one per benchmark it scored that has a registered Hub dataset, in the
    run's order, as the Hub's client writes them (huggingface_hub.EvalResultEntry); a benchmark whose metric is not a
    number (undefined, or not scored) has none."""
    mapped = settings.hub_evals
    ran = results.get("benchmarks") if isinstance(results.get("benchmarks"), dict) else {}
    found = {}
    for benchmark, block in ran.items():
        target = mapped.get(benchmark)
        scores = block.get("scores") if isinstance(block, dict) and isinstance(block.get("scores"), dict) else {}
        value = scores.get(target.metric) if target else None
        if target is None or isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        link = explorer_link(settings, str(results.get("key", "")), benchmark)
        found[benchmark] = EvalResultEntry(
            dataset_id=target.dataset, task_id=target.task_id,
            value=round(100 * value, 2) if target.scale == "percent" else round(value, 4),
            date=str(results["finished_time"]) if results.get("finished_time") else None,
            source_url=link or None, source_name=TITLE if link else None,
            notes=notes(results, benchmark, target.metric, target.scale))
    return dict(zip(found, eval_result_entries_to_yaml(list(found.values()))))


def entries(results: dict, settings: Settings) -> list[dict]:
    """The run's entries (benchmark_entries), as the list its file holds."""
    return list(benchmark_entries(results, settings).values())


def file_text(found: list[dict]) -> bytes:
    """The entries as the YAML file a model repo keeps."""
    return yaml.safe_dump(found, sort_keys=False, allow_unicode=True).encode()


def eval_results_file(results: dict, settings: Settings, hidden: str | None = None) -> bytes | None:
    """The run's evaluation-results file, or None when it gets none (flagged, incomplete, or no entry)."""
    if not unflagged(results, settings, hidden):
        return None
    found = entries(results, settings)
    return file_text(found) if found else None


def follow_hiding(settings: Settings, store, key: str, hidden: str | None) -> bool:
    """After an admin hides a run (or shows it again): its evaluation-results file removed (or written again), so
    the results dataset offers only what the board ranks. A failure is logged, never raised (the run's next publish
    sets it right). Returns whether the store was written."""
    try:
        results = store.read_json(f"results/{key}.json")
        text = eval_results_file(results, settings, hidden) if isinstance(results, dict) else None
        if text is None and not stored(store, key):
            return False
        store.write_many({path(key): text})
        return True
    except Exception as exc:  # noqa: BLE001 - the hide itself is done; this file follows at the next publish
        log.warning("the evaluation results of %s could not follow its hiding: %s", key, settings.scrub(str(exc)))
        return False
