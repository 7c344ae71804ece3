"""Real judge servers on 127.0.0.1 for the judge tests.

- `ScriptedServer`: a small OpenAI-compatible chat-completions server of ours (http.server in a thread). Each request
  gets the next `Reply` from a list (the last one repeats) or from a function of the request; a reply may be a 429
  with Retry-After, a 500, slow, streamed, bytes sent as they are (a compressed body), or trickled a byte at a time
  (status line and headers included). It records every request (headers included) and the most requests it ever
  served at once.
- `start_llm_katan(...)`: the `llm-katan` echo server (PyPI) as a subprocess, with its failure-injection flags.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

import requests
from requests.structures import CaseInsensitiveDict


@dataclass
class Reply:
    content: str = "A"
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    body: str | None = None  # a raw body instead of a chat completion
    trickle: float = 0.0  # seconds between the bytes of the answer, its status line and headers included
    trickle_after: int = 0  # bytes sent at once before the trickle starts
    raw: bytes | None = None  # bytes sent as the body as they are (a compressed body, with its Content-Encoding)
    content_type: str = "application/json"  # the Content-Type of a `body` or `raw` reply


class _Trickle:
    """A handler's output sent one byte at a time, `pause` seconds apart, until the client hangs up."""

    def __init__(self, raw, pause: float, at_once: int = 0):
        self._raw, self._pause, self._at_once, self.closed = raw, pause, at_once, False

    def write(self, data: bytes) -> int:
        data = bytes(data)
        if self._at_once > 0:
            head, data = data[:self._at_once], data[self._at_once:]
            self._at_once -= len(head)
            try:
                self._raw.write(head)
                self._raw.flush()
            except OSError:
                self.closed = True
        for byte in data:
            if self.closed:
                break
            try:
                self._raw.write(bytes([byte]))
                self._raw.flush()
            except OSError:
                self.closed = True
                break
            time.sleep(self._pause)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True
        self._raw.close()


@dataclass
class Recorded:
    path: str
    headers: CaseInsensitiveDict  # header names are case-insensitive (the openai client sends them lower-cased)
    body: dict


class ScriptedServer:
    def __init__(self, replies: list[Reply] | Callable[[int, dict], Reply]):
        self.replies = replies
        self.requests: list[Recorded] = []
        self.max_inflight = 0
        self._inflight = 0
        self._lock = threading.Lock()
        self._count = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                with server._lock:
                    index = server._count
                    server._count += 1
                    server.requests.append(Recorded(self.path, CaseInsensitiveDict(self.headers.items()), body))
                    server._inflight += 1
                    server.max_inflight = max(server.max_inflight, server._inflight)
                try:
                    reply = server._reply(index, body)
                    if reply.delay:
                        time.sleep(reply.delay)
                    if reply.trickle:
                        self.wfile = _Trickle(self.wfile, reply.trickle, reply.trickle_after)
                        self.close_connection = True
                    self._answer(reply, body)
                finally:
                    with server._lock:
                        server._inflight -= 1

            def _answer(self, reply: Reply, body: dict):
                if reply.status != 200 or reply.body is not None or reply.raw is not None:
                    data = reply.raw if reply.raw is not None else (
                        reply.body if reply.body is not None
                        else json.dumps({"error": {"message": f"scripted {reply.status}"}})).encode()
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                model = body.get("model", "scripted")
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    pieces = [reply.content[i:i + 3] for i in range(0, len(reply.content), 3)]
                    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
                    chunks += [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
                    chunks += [{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
                    for chunk in chunks:
                        chunk.update({"object": "chat.completion.chunk", "model": model})
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                    self.close_connection = True
                    return
                data = json.dumps({
                    "id": f"chatcmpl-{self.server.server_port}", "object": "chat.completion", "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                                 "finish_reason": "stop"}],
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        # a short poll: shutdown() waits out one poll, and serve_forever's default (0.5 s) was paid by every test
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    def _reply(self, index: int, body: dict) -> Reply:
        if callable(self.replies):
            return self.replies(index, body)
        return self.replies[min(index, len(self.replies) - 1)]

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


LLM_KATAN = Path(sys.executable).with_name("llm-katan")


class LlmKatan:
    """One llm-katan echo server (a subprocess); `base_url` ends in /v1."""

    def __init__(self, port: int, flags: list[str], workdir: Path, model: str = "echo-judge"):
        self.port = port
        self.model = model
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.log_path = workdir / f"llm-katan-{port}.log"
        self._log = open(self.log_path, "wb")
        cmd = [str(LLM_KATAN), "--model", model, "--backend", "echo", "--host", "127.0.0.1", "--port", str(port),
               "--stats-file", str(workdir / f"llm-katan-{port}-stats.json"), "--disable-dashboard",
               "--log-level", "warning", *flags]
        self.process = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, cwd=workdir,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llm-katan exited ({self.process.returncode}): {self.log_path.read_text()}")
            try:
                if requests.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"llm-katan did not answer on port {self.port}: {self.log_path.read_text()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self._log.close()


def start_llm_katans(configs: dict[str, list[str]], workdir: Path, free_port: Callable[[], int],
                     startup_timeout: float = 60.0) -> dict[str, LlmKatan]:
    """Start one llm-katan per named flag list, all at once, and wait until every one answers /health."""
    servers: dict[str, LlmKatan] = {}
    try:
        for name, flags in configs.items():
            servers[name] = LlmKatan(free_port(), flags, workdir)
        deadline = time.monotonic() + startup_timeout
        for server in servers.values():
            server.wait_ready(deadline)
    except BaseException:
        for server in servers.values():
            server.stop()
        raise
    return servers
