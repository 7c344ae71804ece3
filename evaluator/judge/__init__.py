"""The LLM judge: one small interface over a local transformers model or an OpenAI-compatible endpoint.

    judge = make_judge("endpoint:https://router.huggingface.co/v1|meta-llama/Llama-3.3-70B-Instruct", token)
    judge = make_judge("local:Qwen/Qwen2.5-7B-Instruct@<sha>")
    judge.complete([{"role": "user", "content": "..."}], max_tokens=64)          # -> str, or raises JudgeError
    judge.complete_many([...conversations...])                                   # -> [JudgeResult], never raises

Every result names the judge through `judge.identity` (judge_id, judge_name). The package's modules:
base.py (the Judge interface, JudgeError, JudgeResult), spec.py (parse_judge_spec, public_url), replies.py (reading
a SimpleQA grade or a LAVE rating), endpoint.py (EndpointJudge, through the `openai` client, which retries 429s,
5xx, timeouts and connection errors and honours Retry-After), local.py (LocalJudge) and judgement.py (the one rule
for what is a judgement at all, which every judged benchmark applies). This room may import the endpoints, inputs
and models (a local judge's model) rooms. Importing this package stays light: the backends (and `openai`,
`torch`) load when a judge is built.
A token is only ever sent as a bearer header: it never appears in an exception message, a log line or identity.
"""
from __future__ import annotations

import json
from typing import Any

from evaluator.endpoints.names import shown_name
from evaluator.endpoints.redaction import redact
from evaluator.inputs.prompt_files import prompt_hash
from evaluator.judge.base import Judge, JudgeError, JudgeResult, JudgeStalled
from evaluator.judge.replies import parse_lave_rating, parse_simpleqa_grade
from evaluator.judge.spec import JudgeSpec, judge_problem, parse_judge_spec, public_url

__all__ = ["Judge", "JudgeError", "JudgeResult", "JudgeStalled", "JudgeSpec", "EndpointJudge", "LocalJudge", "make_judge",
           "parse_judge_spec", "public_url", "parse_simpleqa_grade", "parse_lave_rating", "prompt_hash",
           "judge_id", "judge_name", "judge_problem"]


def __getattr__(name: str) -> Any:
    """EndpointJudge and LocalJudge, imported when first asked for (they pull in `openai` and `torch`)."""
    if name == "EndpointJudge":
        from evaluator.judge.endpoint import EndpointJudge

        return EndpointJudge
    if name == "LocalJudge":
        from evaluator.judge.local import LocalJudge

        return LocalJudge
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_judge(spec: str, token: str | None = None, *, timeout: float = 60, max_retries: int = 4,
               concurrency: int = 8, backoff: float = 0.5, limits=None) -> Judge:
    """A judge from its spec. A malformed spec raises ValueError (the message never holds the token, nor a URL's
    user, password or query). `backoff` is the base wait before asking an endpoint again after a 200 answer that is
    not a chat completion; the `openai` client times its own retries. `limits`: an endpoint judge's deadline per call
    and largest answer (evaluator.endpoints.limits.Limits; None: what LEADERBOARD_ENDPOINT_DEADLINE and
    LEADERBOARD_ENDPOINT_MAX_REPLY_MB say)."""
    if timeout <= 0 or max_retries < 0 or concurrency < 1 or backoff < 0:
        raise ValueError("judge options: timeout > 0, max_retries >= 0, concurrency >= 1 and backoff >= 0")
    parsed = parse_judge_spec(spec, token)
    if parsed.kind == "endpoint":
        from evaluator.endpoints.limits import limits_from_env
        from evaluator.judge.endpoint import EndpointJudge

        return EndpointJudge(parsed.base_url, parsed.model, token, timeout=timeout, max_retries=max_retries,
                             concurrency=concurrency, backoff=backoff, limits=limits or limits_from_env())
    from evaluator.judge.local import LocalJudge

    return LocalJudge(parsed.source, parsed.revision)


def judge_id(identity: dict | None) -> str | None:
    """A short id of the judge (8 hex characters of the hash of its identity), so that two runs graded by the same
    judge show the same id; None when there was no judge."""
    if not identity:
        return None
    return prompt_hash(json.dumps(identity, sort_keys=True, default=str)).split(":", 1)[1][:8]


def judge_name(identity: dict | None) -> str:
    """The judge named for people: "<model> (endpoint <url>)" or "<model> @ <revision> (local)"; never a token."""
    identity = identity or {}
    if identity.get("kind") == "endpoint":
        return f"{identity.get('model', '?')} (endpoint {public_url(identity.get('base_url', ''))})"
    if identity.get("kind") == "local":
        model = shown_name(str(identity.get("model", "?")))  # a folder by its last part: no path on the board
        return f"{model} @ {identity.get('revision') or 'unpinned revision'} (local)"
    return redact(", ".join(f"{k}={v}" for k, v in identity.items())) or "unknown judge"
