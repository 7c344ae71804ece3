"""A loopback stand-in for vLLM's OpenAI-compatible server (or, with --protocol sglang, SGLang's), computing with
transformers on a local model folder: what the served-model tests and a developer without a GPU use to run the served
protocol end to end, option scoring included.

    .venv/bin/python tools/vllm_standin.py --model ./tiny-llava --port 8011
    .venv/bin/python -m evaluator run --model "endpoint:http://127.0.0.1:8011/v1|./tiny-llava" --option reform.mode=both

It answers as vLLM's server does (vllm/entrypoints/openai: serving_chat.py, protocol.py; the chat template through
transformers' apply_chat_template, as vLLM renders it):
- GET /health (200), GET /v1/models, POST /v1/chat/completions with text and `image_url` parts (data: URLs);
- the chat template's switches: `add_generation_prompt` (default true), `continue_final_message` (the final assistant
  message continued; both true is refused with vLLM's 400), `chat_template_kwargs`;
- `prompt_logprobs: k` (k >= 0, or -1; refused with streaming): the response's top-level `prompt_logprobs`, one entry
  per prompt token (None for the first), each {token id: {logprob, rank, decoded_token}} holding the prompt's own
  token and the k likeliest; `return_token_ids: true`: the response's `prompt_token_ids`;
- the prompt is tokenized without adding special tokens (vLLM's default for chat: the template writes them);
- greedy generation (temperature 0), else sampling from the request's seed; `max_tokens` at least 1; `stop` strings;
- a `model` other than the served name answers 404.
--protocol sglang answers as SGLang does instead (python/sglang/srt/entrypoints/openai/protocol.py, its native
/generate): no prompt_logprobs; `return_prompt_token_ids: true` puts the prompt's ids in the choice
(`prompt_token_ids`); POST /generate with `input_ids` (and `image_data`), `return_logprob` and `logprob_start_len: 0`
answers meta_info.input_token_logprobs. --protocol none answers neither, as a plain OpenAI-compatible server.
It never loads remote code. One request is computed at a time (a lock); the weights run in float32 on the CPU.
"""
from __future__ import annotations

import argparse
import base64
import io
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROLES = ("system", "developer", "user", "assistant")


class Refused(ValueError):
    """A request vLLM refuses: its status and message."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class Model:
    """The folder's model, processor or tokenizer, and the template switches vLLM hands the chat template."""

    def __init__(self, folder: Path, protocol: str = "vllm"):
        import torch
        from transformers import (AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText, AutoProcessor,
                                  AutoTokenizer)

        config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
        self.vision = getattr(config, "vision_config", None) is not None
        loader = AutoModelForImageTextToText if self.vision else AutoModelForCausalLM
        self.model = loader.from_pretrained(folder, dtype=torch.float32, trust_remote_code=False).eval()
        self.processor = AutoProcessor.from_pretrained(folder) if self.vision else None
        self.tokenizer = self.processor.tokenizer if self.vision else AutoTokenizer.from_pretrained(folder)
        self.lock = threading.Lock()
        self.protocol = protocol

    # -- the prompt ---------------------------------------------------------------------------------------------
    def conversation(self, messages: Any) -> tuple[list[dict], list]:
        """The request's messages as the chat template takes them, and its images (in order)."""
        from PIL import Image

        if not isinstance(messages, list) or not messages:
            raise Refused("messages must be a non-empty list")
        converted, images = [], []
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                raise Refused("each message needs a role among " + ", ".join(ROLES))
            content = message.get("content")
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(parts, list):
                raise Refused("a message's content must be a string or a list of parts")
            out = []
            for part in parts:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part.get("text"), str):
                    out.append({"type": "text", "text": part["text"]})
                elif kind == "image_url" and isinstance(part.get("image_url"), dict):
                    if not self.vision:
                        raise Refused(f"{self.model.config.model_type} is not a multimodal model")
                    url = str(part["image_url"].get("url", ""))
                    if not url.startswith("data:image/") or ";base64," not in url:
                        raise Refused("only base64 data: image URLs are served here")
                    raw = base64.b64decode(url.split(";base64,", 1)[1])
                    images.append(Image.open(io.BytesIO(raw)).convert("RGB"))
                    out.append({"type": "image"})
                else:
                    raise Refused(f"Unsupported chat content part type: {kind!r}")
            if self.vision:
                converted.append({"role": message["role"], "content": out})
            else:
                converted.append({"role": message["role"], "content": "".join(p["text"] for p in out)})
        return converted, images

    def prompt_ids(self, body: dict) -> tuple[dict, list]:
        """The rendered prompt's model inputs (batch of 1) and its token ids."""
        generation_prompt = body.get("add_generation_prompt", True)
        continued = bool(body.get("continue_final_message", False))
        if generation_prompt and continued:
            raise Refused("Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
        messages, images = self.conversation(body.get("messages"))
        if continued and messages[-1]["role"] != "assistant":
            raise Refused("continue_final_message needs a final assistant message")
        kwargs = body.get("chat_template_kwargs") or {}
        if not isinstance(kwargs, dict):
            raise Refused("chat_template_kwargs must be an object")
        owner = self.processor if self.vision else self.tokenizer
        text = owner.apply_chat_template(messages, add_generation_prompt=bool(generation_prompt),
                                         continue_final_message=continued, tokenize=False, **kwargs)
        if self.vision:
            inputs = self.processor(text=[text], images=images or None, return_tensors="pt", add_special_tokens=False)
        else:
            inputs = self.tokenizer([text], return_tensors="pt", add_special_tokens=False)
        inputs = {key: value for key, value in dict(inputs).items() if key != "labels"}
        return inputs, inputs["input_ids"][0].tolist()

    # -- what is computed ----------------------------------------------------------------------------------------
    def prompt_logprobs(self, inputs: dict, ids: list[int], top: int) -> list:
        """vLLM's prompt_logprobs: None, then per token {id: {logprob, rank, decoded_token}} (its own and the
        `top` likeliest; -1: the whole vocabulary)."""
        import torch

        with torch.inference_mode():
            logits = self.model(**inputs).logits[0].float()
        logprobs = torch.log_softmax(logits[:-1], dim=-1)
        out: list = [None]
        for position, token in enumerate(ids[1:]):
            row = logprobs[position]
            entries = {token: float(row[token])}
            k = row.shape[0] if top < 0 else top
            if k:
                values, indices = torch.topk(row, min(k, row.shape[0]))
                entries.update({int(i): float(v) for v, i in zip(values, indices)})
            out.append({str(i): {"logprob": lp, "rank": int((row > lp).sum()) + 1,
                                 "decoded_token": self.tokenizer.decode([i])} for i, lp in entries.items()})
        return out

    def generate(self, inputs: dict, body: dict) -> tuple[str, int, str]:
        """The reply (stop strings cut), its token count and finish reason."""
        import torch

        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 16
        temperature = float(body.get("temperature") if body.get("temperature") is not None else 1.0)
        sample = temperature > 0
        if sample and body.get("seed") is not None:
            torch.manual_seed(int(body["seed"]))
        options = {"do_sample": sample, "max_new_tokens": int(max_tokens),
                   "pad_token_id": self.tokenizer.pad_token_id or self.tokenizer.eos_token_id}
        if sample:
            options.update(temperature=temperature, top_k=0, top_p=1.0)
        with torch.inference_mode():
            out = self.model.generate(**inputs, **options)
        new = out[0][inputs["input_ids"].shape[1]:].tolist()
        eos = self.tokenizer.eos_token_id
        ended = eos in new
        new = new[:new.index(eos)] if ended else new
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else stops
        cut = min([text.find(s) for s in stops if s and s in text] or [len(text)])
        finish = "stop" if ended or cut < len(text) else "length"
        return text[:cut], len(new), finish

    def complete(self, body: dict, served_name: str) -> dict:
        if not isinstance(body, dict):
            raise Refused("the body must be a JSON object")
        if body.get("model") != served_name:
            raise Refused(f"The model `{body.get('model')}` does not exist.", 404)
        top = body.get("prompt_logprobs")
        if top is not None:
            if isinstance(top, bool) or not isinstance(top, int) or (top < 0 and top != -1):
                raise Refused("`prompt_logprobs` must be a positive value or -1.")
            if body.get("stream"):
                raise Refused("`prompt_logprobs` are not available when `stream=True`.")
        max_tokens = body.get("max_tokens", 16)
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise Refused(f"max_tokens must be at least 1, got {max_tokens}.")
        vllm = self.protocol == "vllm"
        with self.lock:
            inputs, ids = self.prompt_ids(body)
            logprobs = self.prompt_logprobs(inputs, ids, top) if top is not None and vllm else None
            text, n_new, finish = self.generate(inputs, body)
        choice = {"index": 0, "message": {"role": "assistant", "content": text, "reasoning_content": None},
                  "logprobs": None, "finish_reason": finish}
        answer = {"id": f"chatcmpl-standin-{time.monotonic_ns()}", "object": "chat.completion",
                  "created": int(time.time()), "model": served_name, "choices": [choice],
                  "usage": {"prompt_tokens": len(ids), "completion_tokens": n_new, "total_tokens": len(ids) + n_new}}
        if vllm:
            answer.update(prompt_logprobs=logprobs, prompt_token_ids=ids if body.get("return_token_ids") else None)
        elif self.protocol == "sglang" and body.get("return_prompt_token_ids"):
            choice["prompt_token_ids"] = ids
        return answer

    def native_generate(self, body: dict) -> dict:
        """SGLang's /generate on token ids (and `image_data`, data URLs): with `return_logprob` and
        `logprob_start_len: 0`, meta_info.input_token_logprobs = [[logprob (None first), token id, None], ...]."""
        import torch

        ids = body.get("input_ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or not ids or not all(isinstance(i, int) for i in ids):
            raise Refused("input_ids must be a non-empty list of token ids")
        if body.get("logprob_start_len", -1) != 0 or not body.get("return_logprob"):
            raise Refused("only return_logprob with logprob_start_len 0 is served here")
        inputs: dict = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}
        urls = body.get("image_data") or []
        if urls:
            parts = [{"type": "image_url", "image_url": {"url": url}} for url in urls]
            _, images = self.conversation([{"role": "user", "content": parts}])
            inputs["pixel_values"] = self.processor.image_processor(images, return_tensors="pt")["pixel_values"]
        with self.lock:
            rows = self.prompt_logprobs(inputs, ids, 0)
        logprobs = [[None, ids[0], None]] + [[row[str(token)]["logprob"], token, None]
                                              for row, token in zip(rows[1:], ids[1:])]
        return {"text": "", "meta_info": {"prompt_tokens": len(ids), "completion_tokens": 0,
                                          "input_token_logprobs": logprobs}}


def handler(model: Model, served_name: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/health":
                self._send(200, {})
            elif self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": served_name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "Not Found", "type": "NotFoundError", "code": 404}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            native = self.path == "/generate" and model.protocol == "sglang"
            if self.path != "/v1/chat/completions" and not native:
                self._send(404, {"error": {"message": "Not Found", "type": "NotFoundError", "code": 404}})
                return
            try:
                body = json.loads(raw)
                self._send(200, model.native_generate(body) if native else model.complete(body, served_name))
            except Refused as exc:
                kind = "NotFoundError" if exc.status == 404 else "BadRequestError"
                self._send(exc.status, {"error": {"message": str(exc), "type": kind, "param": None,
                                                  "code": exc.status}})
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "the body is not JSON", "type": "BadRequestError",
                                           "param": None, "code": 400}})

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a local model folder (safetensors weights)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--served-model-name", default=None, help="the name requests give (default: --model as given)")
    parser.add_argument("--protocol", default="vllm", choices=["vllm", "sglang", "none"],
                        help="vllm: prompt_logprobs; sglang: the chat's prompt ids and /generate's input logprobs; "
                             "none: neither (a plain OpenAI-compatible server)")
    args = parser.parse_args(argv)
    model = Model(Path(args.model), args.protocol)
    server = ThreadingHTTPServer((args.host, args.port), handler(model, args.served_model_name or args.model))
    print(f"vllm stand-in serving {args.model} on http://{args.host}:{args.port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
