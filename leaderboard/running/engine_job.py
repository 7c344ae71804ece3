"""Inside a Hugging Face Job with the vLLM engine (LEADERBOARD_ENGINE=vllm): serve the claimed request's model with vLLM
on the Job's loopback, evaluate against it, stop it.

`python -m leaderboard.running.engine_job --request <path> --owner <lease> --port 8000 --name <model> \
    --health-timeout <s> -- vllm serve <model> --revision <sha> ...`
(the server's line: leaderboard.running.engine_args)

1. The request must be RUNNING under `owner`, as for job_run.
2. `--max-model-len` (the plan's context length) is cut to the model's own positions where its config.json says fewer
   (vLLM refuses a longer one): config.json read at the pinned revision; one that cannot be read leaves it as it is.
3. The server starts in its own process group; each of its lines goes to the Job's log as `[vllm] <line>`, and the
   last SERVER_LINES are kept.
4. GET http://127.0.0.1:<port>/health every HEALTH_POLL_S until it answers 200. A server that exits first, or that
   has not answered 200 within --health-timeout seconds, ends the request FAILED: "the vLLM server did not come up:
   <why>; its last log line: <line>", its last lines the request's log tail.
5. Healthy: the request is evaluated as job_run evaluates it (attempt.run_request, in_job), the evaluator asking the
   server (`--model endpoint:http://127.0.0.1:<port>/v1|<name>`) with the Job's batch size as the requests in flight;
   results and details keep the request's model id and revision.
6. The server is stopped at the end, after a failure, and on SIGTERM (a cancelled Job): SIGTERM to its process group,
   SIGKILL after STOP_GRACE_S. A SIGTERM leaves the request to whoever cancelled it, as job_run does.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from leaderboard.running.attempt import close_run
from leaderboard.running.evaluator_process import stop_process
from leaderboard.running.job_run import evaluated, job_start
from leaderboard.settings import Settings
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request

HEALTH_POLL_S = 2.0  # between two health checks
HEALTH_CALL_S = 5.0  # one health check's own timeout
STOP_GRACE_S = 30.0  # SIGTERM to SIGKILL when the server is stopped
SERVER_LINES = 50  # the server's last log lines kept (a FAILED request's log tail)
LINE_CHARS = 400  # the most of its last line a reason quotes
POSITION_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                 "max_sequence_length", "max_seq_length", "seq_len")  # vLLM's own keys for a model's longest sequence
NOT_FOR_THE_SERVER = ("LEADERBOARD_JUDGE_TOKEN", "LEADERBOARD_MODEL_TOKEN")  # secrets vLLM never needs
HEALTHY, STOPPED, FAILED = "healthy", "stopped", "failed"


@dataclass
class Server:
    """The vLLM server's process and its last log lines."""

    proc: subprocess.Popen
    lines: deque
    copier: threading.Thread

    def last_line(self) -> str:
        """Its last non-empty log line ('' when it said nothing), once its output is read to the end or for a
        moment."""
        if self.proc.poll() is not None:
            self.copier.join(timeout=5)
        found = next((line for line in reversed(self.lines) if line.strip()), "")
        return found.strip()[:LINE_CHARS]


def _copy(proc: subprocess.Popen, lines: deque) -> None:
    for raw in iter(proc.stdout.readline, b""):
        text = raw.decode(errors="replace").rstrip("\r\n").rsplit("\r", 1)[-1]  # a redrawn bar: its last state
        lines.append(text)
        print(f"[vllm] {text}", flush=True)


def start_server(command: list[str]) -> Server:
    """Start the server in its own process group, its output copied to stdout (OSError when it cannot start)."""
    env = {name: value for name, value in os.environ.items() if name not in NOT_FOR_THE_SERVER}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    lines: deque = deque(maxlen=SERVER_LINES)
    copier = threading.Thread(target=_copy, args=(proc, lines), name="vllm-log", daemon=True)
    copier.start()
    return Server(proc, lines, copier)


def healthy(url: str) -> bool:
    """Whether GET `url` answers 200 (never through a proxy)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=HEALTH_CALL_S) as answer:
            return answer.status == 200
    except (OSError, ValueError):
        return False


def wait_healthy(server: Server, url: str, timeout_s: float, stop: threading.Event) -> tuple[str, str]:
    """(HEALTHY, ''), (STOPPED, '') on `stop`, or (FAILED, why) when the server exits or the deadline passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        code = server.proc.poll()
        if code is not None:
            return FAILED, f"it exited with code {code} before answering {url}"
        if healthy(url):
            return HEALTHY, ""
        if stop.is_set():
            return STOPPED, ""
        if time.monotonic() >= deadline:
            return FAILED, f"it did not answer {url} with 200 within {timeout_s:.0f} s"
        stop.wait(min(HEALTH_POLL_S, max(0.05, deadline - time.monotonic())))


def stop_server(server: Server, grace: float = STOP_GRACE_S) -> None:
    """SIGTERM the server's process group, SIGKILL after `grace`; its log read to the end."""
    stop_process(server.proc, grace=grace)
    server.copier.join(timeout=5)


def model_positions(config: dict) -> int | None:
    """The longest sequence a model's config.json allows (the least of vLLM's keys in its text config, else at its
    top level); None when it says none."""
    for part in (config.get("text_config"), config.get("llm_config"), config):
        if not isinstance(part, dict):
            continue
        found = [value for key in POSITION_KEYS if isinstance(value := part.get(key), int)
                 and not isinstance(value, bool) and value > 0]
        if found:
            return min(found)
    return None


def read_config(request: Request) -> dict | None:
    """The request's config.json (its folder, or the Hub at its revision with the Job's token); None when unread."""
    try:
        if request.source == "local" and request.local_path:
            path = Path(request.local_path) / "config.json"
        else:
            from huggingface_hub import hf_hub_download

            path = Path(hf_hub_download(request.model, "config.json", revision=request.revision))
        config = json.loads(path.read_text())
    except Exception:  # noqa: BLE001 - a config that cannot be read leaves the plan's length to vLLM's judgement
        return None
    return config if isinstance(config, dict) else None


def capped(command: list[str], config: dict | None) -> tuple[list[str], str]:
    """The server's command with --max-model-len cut to the model's positions where they are fewer, and a line
    saying so ('' when nothing changed)."""
    if "--max-model-len" not in command or config is None:
        return command, ""
    at = command.index("--max-model-len") + 1
    positions = model_positions(config)
    if positions is None or at >= len(command) or not command[at].isdigit() or int(command[at]) <= positions:
        return command, ""
    said = f"--max-model-len {command[at]} (the plan's) cut to {positions}, the model's own longest sequence"
    return [*command[:at], str(positions), *command[at + 1:]], said


def fail_request(settings: Settings, store, request: Request, owner: str, server: Server | None,
                 why: str) -> None:
    """Close the request FAILED: the server did not come up, why, and its last log line."""
    last = server.last_line() if server is not None else ""
    error = f"the vLLM server did not come up: {why}" + (f"; its last log line: {last}" if last else "")
    tail = "\n".join(server.lines) if server is not None else ""
    close_run(settings, store, request.path, owner, queue.FAILED, error=settings.scrub(error),
              log_tail=settings.scrub(tail))
    print(f"[job] {request.key}: FAILED {settings.scrub(error)}", flush=True)


def _arguments(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        raise SystemExit("error: the server's command follows `--`")
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}", description=__doc__.split("\n\n")[0])
    parser.add_argument("--request", required=True, help="the request's path in the store")
    parser.add_argument("--owner", required=True, help="the lease owner the dispatcher claimed it under")
    parser.add_argument("--port", type=int, required=True, help="the server's port on 127.0.0.1")
    parser.add_argument("--name", required=True, help="the model name the server answers to")
    parser.add_argument("--health-timeout", type=float, default=900.0, help="seconds the server has to be healthy")
    args = parser.parse_args(argv[:split])
    if not argv[split + 1:]:
        raise SystemExit("error: the server's command follows `--`")
    return args, argv[split + 1:]


def main(argv: list[str] | None = None) -> int:
    args, command = _arguments(sys.argv[1:] if argv is None else list(argv))
    settings, store, stop, request = job_start(args.request, args.owner)
    if request is None:
        return 3
    command, said = capped(command, read_config(request))
    if said:
        print(f"[job] {said}", flush=True)
    print(f"[job] serving {request.key}: {shlex.join(command)}", flush=True)
    try:
        server = start_server(command)
    except OSError as exc:
        fail_request(settings, store, request, args.owner, None, f"{command[0]} could not be started ({exc})")
        return 1
    try:
        url = f"http://127.0.0.1:{args.port}"
        state, why = wait_healthy(server, f"{url}/health", args.health_timeout, stop)
        if state != HEALTHY:
            if state == FAILED:
                fail_request(settings, store, request, args.owner, server, why)
            return 1
        print(f"[job] the vLLM server is healthy; evaluating {request.key}", flush=True)
        return evaluated(settings, store, request, args.owner, stop, served_by=f"endpoint:{url}/v1|{args.name}")
    finally:
        stop_server(server)
        print("[job] the vLLM server was stopped", flush=True)


if __name__ == "__main__":
    sys.exit(main())
