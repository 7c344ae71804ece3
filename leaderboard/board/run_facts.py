"""Run facts the board derives from a whole results file (its derived columns, leaderboard.board.columns): what was
skipped, the judge (named for people, its id, whether it is a trial judge), a served model's endpoint, and how each
benchmark was asked. Each reads the file defensively: a missing or odd value is None (or "false"), never an error."""
from __future__ import annotations

import json

from evaluator import api


def skipped(results: dict) -> str | None:
    """The benchmarks the run skipped, as JSON {name: reason}; None when it skipped none."""
    found = results.get("skipped")
    if not isinstance(found, dict) or not found:
        return None
    return json.dumps({str(k): str(v) for k, v in found.items()}, sort_keys=True)


def judge_name(results: dict) -> str | None:
    """The judge named for people, from its identity: endpoint scheme, host, path and model only (a stored name is
    redacted the same way when the identity is missing)."""
    run = results.get("run")
    if not isinstance(run, dict):
        return None
    if isinstance(run.get("judge"), dict) and run["judge"]:
        return api.judge_name(run["judge"])
    name = run.get("judge_name")
    return api.redact(name) if isinstance(name, str) and name else None


def served_record(results: dict) -> dict:
    """A served run's record of its endpoint (run.served: base_url, host, model, ...); {} for an in-process run."""
    run = results.get("run")
    served = run.get("served") if isinstance(run, dict) else None
    return served if isinstance(served, dict) else {}


def served_flag(results: dict) -> str:
    """"true" for a served model's run; a Hub model a Job's own engine served (run.engine "vllm") is not one."""
    if "served" in results:
        return "true" if results.get("served") is True else "false"
    return "true" if served_record(results) else "false"  # a results file from before the flag


def endpoint_url(results: dict) -> str | None:
    """A served run's endpoint as it may be shown: scheme, host, port and path (never a user, password or query)."""
    return api.public_url(url) if isinstance(url := served_record(results).get("base_url"), str) and url else None


def endpoint_model(results: dict) -> str | None:
    model = served_record(results).get("model")
    return api.shown_name(model) if isinstance(model, str) and model else None  # a folder path by its last part


def modes(results: dict) -> str | None:
    """How each benchmark the run ran was asked, "name=mode" sorted by name and joined by commas."""
    return ",".join(f"{name}={mode}" for name, mode in sorted(api.scoring_modes(results).items())) or None


def judge_trial(results: dict) -> str:  # run.judge_trial, read defensively: missing is not a trial
    run = results.get("run")
    return "true" if isinstance(run, dict) and run.get("judge_trial") is True else "false"


def judge_id(results: dict) -> str | None:
    judge = run.get("judge") if isinstance(run := results.get("run"), dict) else None
    return api.judge_id(judge) if isinstance(judge, dict) else None


def _thinking(results: dict) -> dict:
    run = results.get("run")
    found = run.get("thinking") if isinstance(run, dict) else None
    return found if isinstance(found, dict) else {}


def thinking_run(results: dict) -> str:
    """"true" when some reply of the run wrote a thought (run.thinking.thinking_run), else "false"."""
    return "true" if _thinking(results).get("thinking_run") is True else "false"


def thinking_mode(results: dict) -> str | None:
    """How the run let the model think: its prompts' mode (on, off, may: the template neither opens nor closes a
    thought), with the enable_thinking switch the run set, e.g. "on (enable_thinking on)"; None for a run recorded
    before thinking was, or a model without thought markers."""
    found = _thinking(results)
    mode = found.get("mode")
    if not isinstance(mode, str) or mode == "none":
        return None
    switch = found.get("switch") if isinstance(found.get("switch"), str) else None
    asked = found.get("asked") if found.get("asked") in ("auto", "on", "off") else "auto"
    said = f"{switch} {asked}" if switch and asked != "auto" else (f"{switch}: template default" if switch else "")
    return f"{mode} ({said})" if said else mode


def _per_reply(results: dict, key: str) -> float | None:
    found = _thinking(results)
    replies, spent = found.get("replies"), found.get(key)
    if found.get("thinking_run") is not True or not isinstance(replies, int) or replies <= 0:
        return None
    return spent / replies if isinstance(spent, (int, float)) and not isinstance(spent, bool) else None


def reasoning_tokens_per_reply(results: dict) -> float | None:
    """A thinking run's mean thought tokens per generated reply; None for other runs."""
    return _per_reply(results, "reasoning_tokens")


def answer_tokens_per_reply(results: dict) -> float | None:
    """A thinking run's mean answer tokens (after the thought) per generated reply; None for other runs."""
    return _per_reply(results, "answer_tokens")


def decoding_overrides(results: dict) -> str | None:
    """What the run's decoding overrode of the model's own generation_config, "field asked→used" joined by commas
    ("none" when it asked nothing that was overridden); None when not recorded (a served model's is the server's)."""
    run = results.get("run")
    record = run.get("decoding") if isinstance(run, dict) else None
    fields = record.get("fields") if isinstance(record, dict) else None
    if not isinstance(fields, dict):
        return None
    said = [f"{name} {json.dumps(entry.get('asked'))}→{json.dumps(entry.get('used'))}"
            for name, entry in sorted(fields.items())
            if isinstance(entry, dict) and entry.get("decision") == "overridden"]
    return ", ".join(said) if said else "none"
