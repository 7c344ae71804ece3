"""OpenAI-compatible chat-completions servers on 127.0.0.1 for the served-model tests and bench/served.py.

- `StandInServer`: a loopback stand-in for vLLM / SGLang / TGI / the Hugging Face router / OpenAI (http.server in a
  thread), strict where the real servers refuse, with faults injected by a script (`Fault`).
- `TransformersServe`: a real `transformers serve` (the pinned transformers' CLI) on a local model folder, as a
  subprocess.

What the stand-in refuses, and whose behaviour each refusal copies. Sources read: vLLM main
(https://github.com/vllm-project/vllm, the files named below); the OpenAI API reference
(https://platform.openai.com/docs/api-reference/chat/create); text-generation-inference's router/src/validation.rs
(https://github.com/huggingface/text-generation-inference); transformers 5.23's own transformers/cli/serving/
{utils,chat_completion}.py (installed here). Each item: the request -> the answer [modelled on].

- `/v1/...` without `Authorization: Bearer <token>` (scheme case-insensitive), or with another token, when built
  with `token=` -> 401 `{"error": "Unauthorized"}`; `/health` stays open [vLLM --api-key: AuthenticationMiddleware,
  vllm/entrypoints/openai/server_utils.py, which checks only paths starting with /v1].
- a chat completion when built with `forbidden=True` -> 403 `{"error": "This authentication method does not have
  sufficient permissions to call Inference Providers on behalf of user ..."}` [the Hugging Face router with a token
  lacking the Inference Providers permission, as quoted in public threads, e.g. huggingface/agents-course#558].
- a body that is not JSON, or a `Content-Type` other than application/json -> 400 [vLLM validate_json_request and
  validation_exception_handler: a RequestValidationError answers 400, not FastAPI's 422].
- `model` missing -> 400 [OpenAI, where it is required; vLLM would use its default model].
- `model` not the served name -> 404 `{"error": {"message": "The model `x` does not exist.", "type":
  "NotFoundError", "param": "model", "code": 404}}` [vLLM OpenAIServing._check_model and create_error_response,
  vllm/entrypoints/openai/engine/serving.py]. `legacy_errors=True` gives the flat body of older vLLM
  (`{"object": "error", "message": ..., "type": ..., "param": ..., "code": ...}`) for every error.
- `messages` missing, not a list, or empty -> 400 [missing: vLLM's pydantic request model; empty: OpenAI ("expected
  an array with minimum length 1"); vLLM would render an empty prompt].
- a message that is not an object, a role outside system/developer/user/assistant/tool/function, content that is
  neither a string nor a list of parts, a text part without a string `text` -> 400 [OpenAI's message schema; vLLM
  takes any role string and leaves it to the chat template].
- a content part of a type other than `text` / `image_url` -> 400 "Unsupported chat content part type: 'x'.
  Supported types: ..." [vLLM _parse_chat_message_content_part, vllm/entrypoints/chat_utils.py; audio and video
  parts are refused too, as by a vision-only model].
- `image_url` not an object with a string `url`, or `detail` outside auto/low/high -> 400 [OpenAI; vLLM validates
  the part with ChatCompletionContentPartImageParam].
- an image part in a message whose role is not `user` -> 400 [OpenAI: "Image URLs are only allowed for messages
  with role 'user'"].
- any image part when built with `vision=False` -> 400 "<model> is not a multimodal model" [vLLM
  MultiModalRegistry.create_processor, vllm/multimodal/registry.py, reached when the first image is added].
- more image parts in one request than `max_images` -> 400 "At most N image(s) may be provided in one prompt."
  [vLLM --limit-mm-per-prompt: BaseProcessingInfo.validate_num_items, vllm/multimodal/processing; counted over the
  whole conversation].
- a `data:` URL without "," -> 400 "Invalid data URL ...: missing ',' separator."; not `;base64` -> 400 "Only base64
  data URLs are supported for now." [vLLM MediaConnector._load_data_url, vllm/multimodal/media/connector.py; the
  latter is a NotImplementedError, which vLLM's error mapping answers 400 as a RuntimeError].
- a `data:` URL whose media type is not image/... -> 400 [OpenAI; vLLM ignores the media type and lets PIL decide].
- base64 that does not decode, or bytes PIL cannot open -> 400 "cannot identify image file ..." [vLLM fetch_image
  turns UnidentifiedImageError into a ValueError -> 400; TGI's fetch_image answers 422].
- an image URL of another scheme (file:, ftp: ...) -> 400 [vLLM load_from_url: "The URL must be either a HTTP, data
  or file URL."; file: needs --allowed-local-media-path]. http(s) URLs are counted as images, not fetched.
- `max_tokens` / `max_completion_tokens` not an integer or < 1 -> 400 "max_tokens must be at least 1, got 0." [vLLM
  SamplingParams._verify_args, vllm/sampling_params.py; TGI: "`max_new_tokens` must be strictly positive"].
- `temperature` not a number or outside [0, 2] -> 400 "temperature must be in [0, 2], got 3.0." [vLLM _verify_args;
  recent vLLM refuses > 2 as OpenAI does. TGI's own /generate validation refuses temperature <= 0].
- `top_p` outside (0, 1] -> 400 [vLLM _verify_args]. `n` not an integer or < 1 -> 400 "n must be at least 1, got
  0." [vLLM _verify_num_sequences].
- `seed` not an integer (bools, floats and strings refused) -> 400 [OpenAI: "expected an integer"; vLLM's pydantic
  would coerce 3.0 and "3"].
- `stop` not a string or a list of strings, or holding "" -> 400 "stop cannot contain an empty string." [vLLM
  _verify_args]; with `max_stop=4`, more stop strings -> 400 [OpenAI; TGI's --max-stop-sequences, default 4, answers
  422].
- a top-level field OpenAI does not know, only with `strict_fields=True` -> 400 "Unrecognized request argument
  supplied: x" [OpenAI]. Default False, as vLLM, whose OpenAIBaseModel (extra="allow") only logs ignored fields;
  transformers serve answers 422 "Unexpected fields in the request".
- GET on /v1/chat/completions -> 405, an unknown path -> 404, `{"detail": ...}` [FastAPI, under vLLM and
  transformers serve].

What it answers: `n` choices (vLLM honours n; transformers serve silently answers one), each `answer(messages, body)`
cut at the first `stop` string (finish_reason "stop") or after `max_tokens` whitespace-separated words
(finish_reason "length"), `usage` with prompt/completion/total tokens, `model` = `served_id` (default: the served
name; transformers serve answers `<folder>@main`), optional SSE when `stream: true`.
`GET /v1/models` lists the model (vLLM's ModelCard shape); `GET /health` answers 200 with an empty body (vLLM).
With `reasoning_parser=True` it answers as vLLM started with `--reasoning-parser deepseek_r1` (vllm/reasoning/
deepseek_r1_reasoning_parser.py): the text up to `</think>` (a leading `<think>` dropped) goes to
`message.reasoning_content`, the rest to `content`; a text without `</think>` (cut off in its thought) is all
reasoning, with `content` null.

Faults (`Fault`, from a list indexed by the chat request's arrival number, or a callable `(index, body) -> Fault |
None`) come before any check, as a proxy or rate limiter in front of a server would: a status with an error body
(429 with `Retry-After`, 500/502/503), an HTML page with status 200, a 200 JSON that is not a chat completion, a
delay before the answer, or a dropped connection.
"""
from __future__ import annotations

import base64
import binascii
import io
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

DEFAULT_ANSWER = "The answer is (A)."
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
PART_TYPES = ("image_url", "text")  # what a vision chat model behind vLLM takes
VLLM_PART_TYPES = sorted({"text", "thinking", "input_text", "output_text", "input_image", "image_url", "image_embeds",
                          "audio_embeds", "prompt_embeds", "image_pil", "audio_url", "input_audio", "refusal",
                          "video_url", "tool_reference"})
# Top-level fields of OpenAI's chat completion request (the API reference, 2025-2026).
OPENAI_FIELDS = {
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
}
HTML_PAGE = ("<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head>\n"
             "<body><h1>Welcome to nginx!</h1><p>If you see this page, the nginx web server is successfully "
             "installed and working.</p></body></html>\n")


@dataclass
class Fault:
    """What to do instead of (or before) answering one chat request.

    delay: seconds to wait first. Then, the first that applies: drop (close the connection without a byte),
    html (an HTML page, status `status` or 200), body (this JSON value or raw string, status `status` or 200),
    status (that status with an OpenAI-style error body). With none of them the request is answered normally
    after the delay (a slow server).
    """

    status: int | None = None
    delay: float = 0.0
    retry_after: float | str | None = None  # sent as the Retry-After header
    headers: dict = field(default_factory=dict)
    html: bool = False
    body: Any = None
    drop: bool = False

    @classmethod
    def rate_limited(cls, retry_after: float | str = 1) -> "Fault":
        return cls(status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> "Fault":
        return cls(status=status)

    @classmethod
    def html_page(cls, status: int = 200) -> "Fault":
        return cls(status=status, html=True)

    @classmethod
    def not_a_completion(cls, body: Any = None) -> "Fault":
        """A 200 JSON answer that is not a chat completion (default `{}`)."""
        return cls(body={} if body is None else body)

    @classmethod
    def slow(cls, seconds: float) -> "Fault":
        return cls(delay=seconds)

    @classmethod
    def dropped(cls) -> "Fault":
        return cls(drop=True)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict  # lower-cased names
    body: Any  # the JSON body (None when absent or not JSON)
    status: int | None = None  # what the server answered (None: connection dropped)


class _Refusal(Exception):
    def __init__(self, status: int, payload: Any, headers: dict | None = None):
        super().__init__(str(payload))
        self.status, self.payload, self.headers = status, payload, headers or {}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # 32+ clients connecting at once must not overflow the listen backlog (5 by default)

    def handle_error(self, request, client_address):
        # A client that gave up (its timeout, a test that ended) while an answer was delayed: not an error here.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, ValueError)):
            return
        super().handle_error(request, client_address)


class StandInServer:
    """A strict OpenAI-compatible chat-completions server on 127.0.0.1 (see the module docstring).

    with StandInServer(model="org/vlm", token="secret", max_images=1) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="secret")

    answer(messages, body) -> str is called once per choice. latency: seconds each chat answer takes (a stand-in
    for generation time, so that in-flight concurrency shows in `max_inflight`). image_tokens: prompt tokens
    counted per image in `usage`.
    """

    def __init__(self, model: str = "stand-in/vlm", *, served_id: str | None = None, token: str | None = None,
                 forbidden: bool = False, vision: bool = True, max_images: int | None = None,
                 strict_fields: bool = False, answer: Callable[[list, dict], str] | None = None,
                 faults: list[Fault | None] | Callable[[int, dict], Fault | None] | None = None,
                 latency: float = 0.0, max_stop: int | None = None, legacy_errors: bool = False,
                 image_tokens: int = 16, user: str = "ada", reasoning_parser: bool = False):
        self.model = model
        self.served_id = served_id or model
        self.token = token
        self.forbidden = forbidden
        self.vision = vision
        self.max_images = max_images
        self.strict_fields = strict_fields
        self.answer = answer or (lambda messages, body: DEFAULT_ANSWER)
        self.faults = faults or []
        self.latency = latency
        self.max_stop = max_stop
        self.legacy_errors = legacy_errors
        self.image_tokens = image_tokens
        self.user = user
        self.reasoning_parser = reasoning_parser
        self.requests: list[Recorded] = []
        self.max_inflight = 0
        self.inflight = 0
        self._lock = threading.Lock()
        self._chat_count = 0
        self._httpd = _HTTPServer(("127.0.0.1", 0), self._handler_class())
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="stand-in-server", daemon=True)

    # ---- lifecycle ------------------------------------------------------------------------------------------

    def __enter__(self) -> "StandInServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    @property
    def chat_requests(self) -> list[Recorded]:
        """The recorded POSTs to /v1/chat/completions, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.rstrip("/").endswith("/chat/completions")]

    # ---- error bodies ---------------------------------------------------------------------------------------

    def _error(self, status: int, message: str, err_type: str = "BadRequestError", param: str | None = None,
               headers: dict | None = None) -> _Refusal:
        info = {"message": message, "type": err_type, "param": param, "code": status}
        payload = {"object": "error", **info} if self.legacy_errors else {"error": info}
        return _Refusal(status, payload, headers)

    def _bad(self, message: str, param: str | None = None) -> _Refusal:
        return self._error(400, message, "BadRequestError", param)

    # ---- validation (raises _Refusal) -----------------------------------------------------------------------

    def _check_auth(self, headers: dict, path: str, chat: bool) -> None:
        if self.token is not None and path.startswith("/v1"):
            scheme, _, value = (headers.get("authorization") or "").partition(" ")
            if scheme.lower() != "bearer" or value != self.token:
                raise _Refusal(401, {"error": "Unauthorized"})
        if self.forbidden and chat:
            raise _Refusal(403, {"error": "This authentication method does not have sufficient permissions to call "
                                          f"Inference Providers on behalf of user {self.user}"})

    @staticmethod
    def _is_int(value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    @staticmethod
    def _is_number(value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    def _check_body(self, body: Any) -> None:
        if not isinstance(body, dict):
            raise self._bad("The request body must be a JSON object.")
        if self.strict_fields:
            unknown = sorted(set(body) - OPENAI_FIELDS)
            if unknown:
                raise self._error(400, f"Unrecognized request argument supplied: {unknown[0]}",
                                  "invalid_request_error", unknown[0])
        if "messages" not in body:
            raise self._bad("Field required: messages", "messages")
        messages = body["messages"]
        if not isinstance(messages, list):
            raise self._bad("Invalid 'messages': expected an array.", "messages")
        if not messages:
            raise self._bad("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                            "empty array instead.", "messages")
        for i, message in enumerate(messages):
            self._check_message(i, message)
        if "model" not in body or body["model"] is None:
            raise self._bad("you must provide a model parameter", "model")
        if not isinstance(body["model"], str):
            raise self._bad("Invalid type for 'model': expected a string.", "model")
        for name in ("max_tokens", "max_completion_tokens"):
            value = body.get(name)
            if value is None:
                continue
            if not self._is_int(value):
                raise self._bad(f"Invalid type for '{name}': expected an integer.", name)
            if value < 1:
                raise self._bad(f"max_tokens must be at least 1, got {value}.", name)
        temperature = body.get("temperature")
        if temperature is not None:
            if not self._is_number(temperature):
                raise self._bad("Invalid type for 'temperature': expected a number.", "temperature")
            if not 0.0 <= temperature <= 2.0:
                raise self._bad(f"temperature must be in [0, 2], got {float(temperature)}.", "temperature")
        top_p = body.get("top_p")
        if top_p is not None and (not self._is_number(top_p) or not 0.0 < top_p <= 1.0):
            raise self._bad(f"top_p must be in (0, 1], got {top_p}.", "top_p")
        n = body.get("n")
        if n is not None:
            if not self._is_int(n):
                raise self._bad(f"n must be an int, but is of type {type(n)}", "n")
            if n < 1:
                raise self._bad(f"n must be at least 1, got {n}.", "n")
        seed = body.get("seed")
        if seed is not None and not self._is_int(seed):
            raise self._bad(f"Invalid type for 'seed': expected an integer, but got {type(seed).__name__} instead.",
                            "seed")
        stop = body.get("stop")
        if stop is not None:
            stops = [stop] if isinstance(stop, str) else stop
            if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
                raise self._bad("Invalid type for 'stop': expected a string or an array of strings.", "stop")
            if any(not s for s in stops):
                raise self._bad("stop cannot contain an empty string.", "stop")
            if self.max_stop is not None and len(stops) > self.max_stop:
                raise self._bad(f"Invalid 'stop': array too long. Expected an array with maximum length "
                                f"{self.max_stop}, but got an array with length {len(stops)} instead.", "stop")
        if "stream" in body and body["stream"] is not None and not isinstance(body["stream"], bool):
            raise self._bad("Invalid type for 'stream': expected a boolean.", "stream")

    def _check_message(self, i: int, message: Any) -> None:
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise self._bad(f"Invalid type for '{where}': expected an object.", where)
        role = message.get("role")
        if role not in ROLES:
            raise self._bad(f"Invalid value for '{where}.role': {role!r}. Supported values are: 'system', "
                            "'developer', 'user', 'assistant', 'tool' and 'function'.", f"{where}.role")
        content = message.get("content")
        if content is None:
            if role in ("assistant", "tool", "function"):
                return
            raise self._bad(f"Missing required parameter: '{where}.content'.", f"{where}.content")
        if isinstance(content, str):
            return
        if not isinstance(content, list):
            raise self._bad(f"Invalid type for '{where}.content': expected a string or an array of parts.",
                            f"{where}.content")
        for j, part in enumerate(content):
            here = f"{where}.content[{j}]"
            if not isinstance(part, dict):
                raise self._bad(f"Invalid type for '{here}': expected an object.", here)
            part_type = part.get("type")
            if part_type not in PART_TYPES:
                raise self._bad(f"Unsupported chat content part type: {part_type!r}. Supported types: "
                                f"{', '.join(VLLM_PART_TYPES)}.", "type")
            if part_type == "text":
                if not isinstance(part.get("text"), str):
                    raise self._bad(f"Invalid type for '{here}.text': expected a string.", f"{here}.text")
                continue
            image_url = part.get("image_url")
            if not isinstance(image_url, dict) or not isinstance(image_url.get("url"), str):
                raise self._bad(f"Invalid type for '{here}.image_url': expected an object with a string 'url'.",
                                f"{here}.image_url")
            if image_url.get("detail", "auto") not in ("auto", "low", "high"):
                raise self._bad(f"Invalid value for '{here}.image_url.detail'.", f"{here}.image_url.detail")
            if role != "user":
                raise self._bad(f"Invalid '{where}': Image URLs are only allowed for messages with role 'user', but "
                                f"this message with role '{role}' contains an image URL.", where)

    def _check_images(self, body: dict) -> int:
        """The number of images, after the checks vLLM makes when it parses the messages."""
        count = 0
        for message in body["messages"]:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for part in content:
                if part.get("type") != "image_url":
                    continue
                count += 1
                if not self.vision:
                    raise self._bad(f"{self.model} is not a multimodal model")
                if self.max_images is not None and count > self.max_images:
                    raise self._bad(f"At most {self.max_images} image(s) may be provided in one prompt.", "image")
                self._check_image_url(part["image_url"]["url"])
        return count

    def _check_image_url(self, url: str) -> None:
        if url[:5].lower() == "data:":
            spec, sep, data = url[5:].partition(",")
            if not sep:
                raise self._bad(f"Invalid data URL {url[:32]!r}: missing ',' separator.")
            media_type, sep, encoding = spec.rpartition(";")
            if not sep or encoding != "base64":
                raise self._bad("Only base64 data URLs are supported for now.")
            if not media_type.partition(";")[0].lower().startswith("image/"):
                raise self._bad(f"Invalid MIME type {media_type!r} for an image data URL: expected image/*.")
            try:
                raw = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise self._bad(f"Invalid base64 image data: {exc}") from None
            from PIL import Image, UnidentifiedImageError

            try:
                with Image.open(io.BytesIO(raw)) as image:
                    image.load()
            except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
                raise self._bad(f"cannot identify image file: {exc}") from None
            return
        scheme = url.partition(":")[0].lower() if ":" in url else ""
        if scheme in ("http", "https"):
            return  # counted, not fetched: the stand-in has no network
        if scheme == "file":
            raise self._bad("Cannot load local files without `--allowed-local-media-path`.")
        raise self._bad("The URL must be either a HTTP, data or file URL.")

    # ---- answers --------------------------------------------------------------------------------------------

    @staticmethod
    def _words(text: str) -> int:
        return len(text.split())

    def _prompt_tokens(self, body: dict, images: int) -> int:
        words = 0
        for message in body["messages"]:
            content = message.get("content")
            if isinstance(content, str):
                words += self._words(content)
            elif isinstance(content, list):
                words += sum(self._words(p["text"]) for p in content if p.get("type") == "text")
            words += 2  # role markers, as a chat template adds
        return words + images * self.image_tokens

    def _choice_text(self, body: dict) -> tuple[str, str, int]:
        """(text, finish_reason, completion_tokens) for one choice."""
        text = str(self.answer(body["messages"], body))
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        cut = False
        if limit is not None:
            words = list(re.finditer(r"\S+", text))
            if len(words) > limit:
                text, cut = text[:words[limit - 1].end()], True
        stop = body.get("stop")
        stops = [stop] if isinstance(stop, str) else (stop or [])
        hits = [text.find(s) for s in stops if s in text]
        if hits:
            text = text[:min(hits)]
            return text, "stop", self._words(text) + 1
        if cut:
            return text, "length", limit
        return text, "stop", self._words(text)

    def _completion(self, body: dict, images: int) -> dict:
        n = body.get("n") or 1
        choices, completion_tokens = [], 0
        for index in range(n):
            text, finish, tokens = self._choice_text(body)
            completion_tokens += tokens
            message = {"role": "assistant", "content": text, "tool_calls": []}
            if self.reasoning_parser:
                message.update(_parsed_reasoning(text))
            choices.append({"index": index, "message": message, "logprobs": None, "finish_reason": finish,
                            "stop_reason": None})
        prompt_tokens = self._prompt_tokens(body, images)
        return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
                "model": self.served_id, "choices": choices,
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    def _fault_for(self, index: int, body: Any) -> Fault | None:
        if callable(self.faults):
            return self.faults(index, body)
        return self.faults[index] if index < len(self.faults) else None

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, payload: Any, headers: dict | None = None,
                      content_type: str = "application/json") -> None:
                if isinstance(payload, (bytes, str)):
                    data = payload.encode() if isinstance(payload, str) else payload
                else:
                    data = json.dumps(payload).encode()
                self._record.status = status  # before the bytes leave: the client may look at once
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, str(value))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _start(self) -> tuple[bytes, Any]:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                self._record = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                        body)
                with server._lock:
                    server.requests.append(self._record)
                return raw, body

            def do_GET(self):  # noqa: N802
                self._start()
                path = self.path.split("?", 1)[0].rstrip("/")
                try:
                    if path == "/health":
                        return self._send(200, b"")
                    server._check_auth(self._headers(), path, chat=False)
                    if path == "/v1/models":
                        return self._send(200, {"object": "list", "data": [{
                            "id": server.model, "object": "model", "created": int(time.time()), "owned_by": "vllm",
                            "root": server.model, "parent": None, "max_model_len": 4096, "permission": []}]})
                    if path == "/v1/chat/completions":
                        return self._send(405, {"detail": "Method Not Allowed"})
                    return self._send(404, {"detail": "Not Found"})
                except _Refusal as refusal:
                    self._send(refusal.status, refusal.payload, refusal.headers)

            def _headers(self) -> dict:
                return {k.lower(): v for k, v in self.headers.items()}

            def do_POST(self):  # noqa: N802
                raw, body = self._start()
                path = self.path.split("?", 1)[0].rstrip("/")
                if path != "/v1/chat/completions":
                    try:
                        server._check_auth(self._headers(), path, chat=False)
                        self._send(404, {"detail": "Not Found"})
                    except _Refusal as refusal:
                        self._send(refusal.status, refusal.payload, refusal.headers)
                    return
                with server._lock:
                    index = server._chat_count
                    server._chat_count += 1
                    server.inflight += 1
                    server.max_inflight = max(server.max_inflight, server.inflight)
                try:
                    fault = server._fault_for(index, body)
                    if fault is not None and self._apply_fault(fault):
                        return
                    self._chat(raw, body)
                finally:
                    with server._lock:
                        server.inflight -= 1

            def _apply_fault(self, fault: Fault) -> bool:
                """True when the fault answered (or dropped) the request; False: answer normally."""
                if fault.delay:
                    time.sleep(fault.delay)
                headers = dict(fault.headers)
                if fault.retry_after is not None:
                    headers["Retry-After"] = fault.retry_after
                if fault.drop:
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return True
                if fault.html:
                    self._send(fault.status or 200, HTML_PAGE, headers, content_type="text/html; charset=utf-8")
                    return True
                if fault.body is not None:
                    payload = fault.body if isinstance(fault.body, (str, bytes)) else json.dumps(fault.body)
                    self._send(fault.status or 200, payload, headers)
                    return True
                if fault.status is not None:
                    kinds = {429: "RateLimitError", 500: "InternalServerError", 502: "BadGateway",
                             503: "ServiceUnavailable", 504: "GatewayTimeout"}
                    refusal = server._error(fault.status, f"scripted fault {fault.status}",
                                            kinds.get(fault.status, "Error"))
                    self._send(fault.status, refusal.payload, headers)
                    return True
                return False

            def _chat(self, raw: bytes, body: Any) -> None:
                try:
                    server._check_auth(self._headers(), "/v1/chat/completions", chat=True)
                    media_type = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
                    if media_type != "application/json":
                        raise server._bad("Unsupported Media Type: Only 'application/json' is allowed")
                    if body is None:
                        raise server._bad("JSON decode error: the body is not JSON" if raw else
                                          "Field required: body")
                    server._check_body(body)
                    if body["model"] != server.model:
                        raise server._error(404, f"The model `{body['model']}` does not exist.", "NotFoundError",
                                            "model")
                    images = server._check_images(body)
                except _Refusal as refusal:
                    return self._send(refusal.status, refusal.payload, refusal.headers)
                if server.latency:
                    time.sleep(server.latency)
                completion = server._completion(body, images)
                if body.get("stream"):
                    return self._stream(completion)
                self._send(200, completion)

            def _stream(self, completion: dict) -> None:
                self._record.status = 200
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                base = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
                        "model": completion["model"]}
                chunks = []
                for choice in completion["choices"]:
                    i, text = choice["index"], choice["message"]["content"]
                    chunks.append({"index": i, "delta": {"role": "assistant", "content": ""}, "finish_reason": None})
                    chunks += [{"index": i, "delta": {"content": text[k:k + 4]}, "finish_reason": None}
                               for k in range(0, len(text), 4)]
                    chunks.append({"index": i, "delta": {}, "finish_reason": choice["finish_reason"]})
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps({**base, 'choices': [chunk]})}\n\n".encode())
                self.wfile.write(f"data: {json.dumps({**base, 'choices': [], 'usage': completion['usage']})}\n\n"
                                 .encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _parsed_reasoning(text: str) -> dict:
    """What vLLM's deepseek_r1 reasoning parser makes of a reply: reasoning_content up to </think>, content after it
    (None when the reply never closed its thought)."""
    body = text[len("<think>"):] if text.startswith("<think>") else text
    if "</think>" not in body:
        return {"reasoning_content": body, "content": None}
    thought, _, answer = body.partition("</think>")
    return {"reasoning_content": thought, "content": answer or None}


def image_data_url(image, fmt: str = "PNG") -> str:
    """A PIL image as a `data:image/...;base64,` URL (what a client sends)."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return f"data:image/{fmt.lower()};base64,{base64.b64encode(buffer.getvalue()).decode()}"


# ---- transformers serve --------------------------------------------------------------------------------------

TRANSFORMERS_CLI = Path(sys.executable).with_name("transformers")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TransformersServe:
    """`transformers serve --host 127.0.0.1 --port P <folder>` as a subprocess, offline, until the block ends.

    base_url: http://127.0.0.1:P/v1. model: the folder string that requests must name (the server is pinned to it
    and answers 400 for any other name). log_path: its stdout and stderr. Waits up to `startup_timeout` seconds for
    GET /health == 200; fails with the log's tail if the process exits first or time runs out.
    """

    def __init__(self, folder: Path | str, port: int | None = None, extra_args=(), startup_timeout: float = 90.0,
                 env: dict | None = None, log_path: Path | None = None):
        self.folder = Path(folder)
        self.model = str(folder)
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.extra_args = [str(a) for a in extra_args]
        self.startup_timeout = startup_timeout
        self.env = {**os.environ, **(env or {}), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        self._own_log = log_path is None
        self.log_path = Path(log_path) if log_path else Path(tempfile.mkstemp(prefix="transformers-serve-",
                                                                              suffix=".log")[1])
        self.process: subprocess.Popen | None = None
        self.started_in: float | None = None  # seconds until /health answered

    @property
    def command(self) -> list[str]:
        return [str(TRANSFORMERS_CLI), "serve", "--host", "127.0.0.1", "--port", str(self.port), *self.extra_args,
                self.model]

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def __enter__(self) -> "TransformersServe":
        if not TRANSFORMERS_CLI.exists():
            raise RuntimeError(f"no transformers CLI next to {sys.executable}")
        start = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.env)
        try:
            self._wait_ready(start + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - start
        return self

    def _wait_ready(self, deadline: float) -> None:
        url = f"http://127.0.0.1:{self.port}/health"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self.process.returncode}) before answering "
                                   f"/health:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"transformers serve did not answer /health on port {self.port} within "
                           f"{self.startup_timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def __exit__(self, *exc) -> None:
        self.stop()
        if self._own_log and not any(exc):
            self.log_path.unlink(missing_ok=True)
