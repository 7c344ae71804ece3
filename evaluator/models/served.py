"""The served-model adapter: a model behind an OpenAI-compatible chat-completions endpoint (Hugging Face Inference
Providers through https://router.huggingface.co/v1, vLLM, SGLang, TGI, OpenAI, `transformers serve`), behind the same
ModelAdapter interface as the in-process adapter, so that benchmarks, executor, journal and details need no special
case.

- Each GenerationRequest is one chat completion: the system prompt and the history as messages, then the user turn
  with its images first (`image_url` parts holding base64 PNG `data:` URLs, in the benchmark's order) and its text;
  max_tokens, temperature, seed and stop as given (stop strings are applied here too: servers differ on whether the
  stop string is kept).
- `batch_size` requests are in flight at once (a thread pool); answers come back in request order and `on_answered`
  hears of each as it arrives. Retries (429 with Retry-After, 5xx, timeouts) are the `openai` client's, through
  evaluator.endpoints.chat_client, as for the endpoint judge; a 200 that is no chat completion is asked again within
  the same budget and never scored. Each call has a deadline and a largest answer (evaluator.endpoints.limits): one that
  misses either ends the run with its one line.
- Options are scored by likelihood where the server returns prompt log-probabilities (vLLM's `prompt_logprobs`,
  found by `probe`: scoring_path "prompt_logprobs"; served_scoring.py says how), the question's requests in flight
  as generation's are; a server without them has no option scoring (scoring_path "none"), so its run asks every
  benchmark by generation (evaluator.benchmarks.modes), which `scoring_refusal` says in one line.
- `probe` makes one tiny request before the run (and one with an image when a benchmark needs images, and one that
  asks for prompt log-probabilities): an unreachable endpoint, a refused token or an unknown model ends the run at
  once with one line (ServedError); an endpoint that refuses the image (a 4xx) is recorded as text-only, so image
  benchmarks are skipped, not failed; one that refuses or ignores prompt log-probabilities scores no options.
- The token (LEADERBOARD_MODEL_TOKEN) is only ever sent as a bearer header; without one no Authorization header is
  sent. `record()` is what results and details say about the endpoint: its public URL, the model name, the server's
  own model id, and the tokens it counted.
"""
from __future__ import annotations

import base64
import io
import json
import os
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any, Callable

from PIL import Image

from evaluator.endpoints.chat_client import ChatClient, ChatError, reasoning_of
from evaluator.endpoints.limits import Limits, limits_from_env
from evaluator.endpoints.names import MODEL_TOKEN_SETTING, Endpoint, parse_model_spec, public_url
from evaluator.models.base import GenerationRequest, GenerationResult, OptionScore, cut_at_stop
from evaluator.models import served_scoring, thinking
from evaluator.models.prompts import chat_role

AUTO_IN_FLIGHT = 8  # --batch-size auto: requests in flight at once
TIMEOUT_S = 300.0  # per socket operation; the whole call is bounded by evaluator.endpoints.limits
PROBE_TEXT = "Reply with the word OK."
_NOT_A_VISION_REFUSAL = (401, 403, 404, 408, 409, 429)  # an image request refused for these is not about images
_NOT_A_REFUSAL_OF_SCORING = (401, 403, 408, 409, 429)  # nor a scoring request (404: no SGLang /generate there)


SERVED_DECODING = ("The endpoint's: each request sends the benchmark's temperature (0: greedy), max_tokens (plus the "
                   "thinking budget when thinking is on), a seed per item and repeat, and its stop strings; any other "
                   "decoding setting is the server's own.")


class ServedError(RuntimeError):
    """The endpoint cannot run the evaluation (unreachable, token refused, unknown model, a request refused after
    its retries); the message is one line naming the endpoint's public URL and what it answered."""


def model_token() -> str | None:
    """The served model's bearer token: LEADERBOARD_MODEL_TOKEN (never HF_TOKEN, never the command line)."""
    return os.environ.get(MODEL_TOKEN_SETTING) or None


def image_url(image: Image.Image) -> str:
    """An image as a base64 PNG `data:` URL (lossless, so the server sees the pixels the in-process adapter sees)."""
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _probe_image() -> Image.Image:
    return Image.new("RGB", (64, 64), (128, 128, 128))


class ServedAdapter:
    """ModelAdapter for a model served behind an OpenAI-compatible chat-completions endpoint."""

    dtype = "served"
    device = "served"
    generation_path = "served"  # the endpoint generates; how, it does not say
    attention = None  # unknown: the server's
    sampling = "the server's, asked with a seed per request (item, repeat)"  # whether it honours it is its own

    def __init__(self, base_url: str, model: str, token: str | None = None, *, batch_size: int = AUTO_IN_FLIGHT,
                 timeout: float = TIMEOUT_S, max_retries: int = 4, backoff: float = 0.5,
                 model_id: str | None = None, limits: Limits | None = None, thinking_asked: str = "auto",
                 thinking_budget: int | None = None):
        self.endpoint = Endpoint(base_url.rstrip("/"), model)
        self.url = public_url(self.endpoint.base_url)
        self.model_id = model_id or model
        self.revision = None
        self.has_vision = True  # until an image is refused (probe)
        self.vision_refusal: str | None = None
        self.scoring_path = served_scoring.NO_SCORING  # until the probe finds prompt log-probabilities
        self.scoring_refusal: str | None = None  # why it scores no options (one line), once probed
        self.batch_size = max(1, int(batch_size))
        self.server_models: list[str] = []  # the server's own model ids, as its answers name them
        self._chat = ChatClient(self.endpoint.base_url, model, token, timeout=timeout, max_retries=max_retries,
                                backoff=backoff, label=f"model {model} at {self.url}", limits=limits)
        self._lock = threading.Lock()
        # A served model's thought comes apart (reasoning_content) or inside its content between <think> markers.
        # Its template is the server's: "on" or "off" is asked through chat_template_kwargs (vLLM, SGLang), and only
        # "on" adds the thinking budget to each request's max_tokens (a reply that runs out inside its thought is
        # counted either way).
        asked = thinking.check_choice(thinking_asked)
        mode = {"on": thinking.ON, "off": thinking.OFF}.get(asked, thinking.MAY)
        budget = thinking.default_budget() if thinking_budget is None else thinking_budget
        self.thinking = thinking.Thinking(thinking.THINK, asked != "auto", asked, mode, max(0, budget))
        self.decoding = {"rule": SERVED_DECODING, "fields": {}}

    def __repr__(self) -> str:  # never shows the token
        return f"ServedAdapter(base_url={self.endpoint.base_url!r}, model={self.endpoint.model!r})"

    # -- what a request becomes -------------------------------------------------------------------------------------
    @staticmethod
    def messages(request: GenerationRequest, images: list[str] | None = None) -> list[dict]:
        """The chat messages of a request: system, history, then the user turn (its images first, then its text).
        `images`: the user turn's image URLs (None: placeholders, for the prompt as shown)."""
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend({"role": chat_role(turn), "content": str(turn.get("content", ""))}
                        for turn in (request.history or []))
        if request.images:
            urls = images if images is not None else [f"<image {i + 1}>" for i in range(len(request.images))]
            content: Any = [{"type": "image_url", "image_url": {"url": url}} for url in urls]
            content.append({"type": "text", "text": request.text})
        else:
            content = request.text
        messages.append({"role": "user", "content": content})
        return messages

    def build_prompt(self, request: GenerationRequest) -> str:
        """The request as sent, for the details and the journal: its messages as JSON, each image a placeholder."""
        return json.dumps(self.messages(request), ensure_ascii=False)

    def _params(self, request: GenerationRequest) -> dict[str, Any]:
        if request.images and not self.has_vision:
            raise ValueError(f"{self.endpoint.model} at {self.url} is text-only ({self.vision_refusal}) and cannot "
                             "take images")
        params: dict[str, Any] = {"messages": self.messages(request, [image_url(im) for im in request.images]),
                                  "max_tokens": int(request.max_new_tokens) + self._thinking_tokens(),
                                  "temperature": float(request.temperature)}
        extra = self._extra_body()
        if extra:
            params["extra_body"] = extra
        if request.seed is not None:
            params["seed"] = int(request.seed)
        if request.stop:
            params["stop"] = list(request.stop)
        return params

    def _extra_body(self, fields: dict[str, Any] | None = None) -> dict[str, Any]:
        """Fields the OpenAI schema lacks: the thinking switch (vLLM's and SGLang's way to set a chat template's
        enable_thinking) and `fields`."""
        switch = self.thinking.template_kwargs()
        return {**({"chat_template_kwargs": switch} if switch else {}), **(fields or {})}

    def _thinking_tokens(self) -> int:
        return self.thinking.budget if self.thinking.asked == "on" else 0

    # -- one request ---------------------------------------------------------------------------------------------------
    def _note_model(self, body: dict) -> None:
        served = body.get("model")
        if isinstance(served, str) and served and served not in self.server_models:
            with self._lock:
                if served not in self.server_models:
                    self.server_models.append(served[:300])

    def _ask(self, request: GenerationRequest) -> GenerationResult:
        try:
            body, _ = self._chat.call(self._params(request))
        except ChatError as exc:
            plural = "s" if exc.attempts != 1 else ""
            raise ServedError(f"the endpoint {self.url} failed a request of model {self.endpoint.model}: "
                              f"{exc.answer} (after {exc.attempts} attempt{plural})") from None
        self._note_model(body)
        choice = body["choices"][0]
        reply = served_reply(choice["message"])
        cut = cut_at_stop(reply.answer, request.stop or [])
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        details = usage.get("completion_tokens_details") if isinstance(usage.get("completion_tokens_details"),
                                                                        dict) else {}
        return GenerationResult(cut, n_tokens=_count(usage.get("completion_tokens")),
                                hit_limit=(choice.get("finish_reason") == "length") and cut == reply.answer,
                                prompt_tokens=_count(usage.get("prompt_tokens")), thought=reply.thought,
                                thought_tokens=_count(details.get("reasoning_tokens")) if reply.thought is not None
                                else 0, thought_unclosed=reply.unclosed)

    # -- the ModelAdapter interface -------------------------------------------------------------------------------
    def generate(self, requests: list[GenerationRequest],
                 on_answered: Callable[[list[int]], None] | None = None) -> list[str]:
        return [result.text for result in self.generate_results(requests, on_answered)]

    def generate_results(self, requests: list[GenerationRequest],
                         on_answered: Callable[[list[int]], None] | None = None) -> list[GenerationResult]:
        """Every request's completion, in request order, `batch_size` in flight at once; `on_answered([i])` as each
        answer arrives. The first request that fails after its retries stops the call (ServedError): the requests not
        yet sent are not sent."""
        requests = list(requests)
        for request in requests:
            if request.images and not self.has_vision:
                self._params(request)  # raises the one-line reason before anything is sent
        return self._in_flight(self._ask, requests, on_answered)

    def _in_flight(self, ask: Callable[[Any], Any], items: list, on_answered: Callable[[list[int]], None] | None
                   ) -> list:
        """ask(item) for every item, `batch_size` at once, answers in item order; `on_answered([i])` as each
        arrives. The first that fails stops the call (its error raised): the items not yet sent are not sent."""
        results: list[Any] = [None] * len(items)
        if not items:
            return []
        with ThreadPoolExecutor(max_workers=min(self.batch_size, len(items)), thread_name_prefix="served") as pool:
            pending = {pool.submit(ask, item): index for index, item in enumerate(items)}
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_EXCEPTION)
                    for future in done:
                        index = pending.pop(future)
                        results[index] = future.result()  # a failure raises here
                        if on_answered is not None:
                            on_answered([index])
            finally:
                for future in pending:
                    future.cancel()
        return results

    def score_options(self, request: GenerationRequest, options: list[str]) -> list[OptionScore]:
        """Each option's log-likelihood as the assistant's reply (served_scoring.py): one request for the question's
        prompt and one per option, each a prefill; ValueError, one line, where the server gives no prompt
        log-probabilities (the run asks by generation there), ServedError for an answer that cannot be read."""
        if self.scoring_path == served_scoring.NO_SCORING:
            raise ValueError(f"a served model ({self.endpoint.model} at {self.url}) "
                             f"{self.scoring_refusal or served_scoring.NO_PROMPT_LOGPROBS}")
        if request.images and not self.has_vision:
            self._params(request)  # raises the one-line reason
        images = [image_url(im) for im in request.images]
        asked = [option for option in options if option]  # an empty option scores 0 over 0 tokens, unasked
        try:
            scores = iter(served_scoring.score(self.scoring_path, self._scoring_call, self._generate_call,
                                               self.messages(request, images), images, asked))
        except served_scoring.NotScored as exc:
            raise ServedError(f"the endpoint {self.url} answered an option-scoring request of model "
                              f"{self.endpoint.model} without what scoring reads: {exc}") from None
        return [next(scores) if option else OptionScore(0.0, 0.0, 0) for option in options]

    def score_options_many(self, asks: list[tuple[GenerationRequest, list[str]]],
                           on_answered: Callable[[list[int]], None] | None = None) -> list[list[OptionScore]]:
        """score_options for many questions, `batch_size` questions in flight at once, in the order given."""
        return self._in_flight(lambda ask: self.score_options(*ask), list(asks), on_answered)

    def _scoring_call(self, messages: list[dict], fields: dict[str, Any], max_retries: int | None = None) -> dict:
        """One prefill that reads the prompt's tokens (and, on vLLM, their log-probabilities): the body."""
        params = {"messages": messages, "max_tokens": 1, "temperature": 0.0, "extra_body": self._extra_body(fields)}
        try:
            body, _ = self._chat.call(params, max_retries=max_retries)
        except ChatError as exc:
            raise self._scoring_failure(exc) from None
        self._note_model(body)
        return body

    def _generate_call(self, body: dict[str, Any], max_retries: int | None = None) -> dict:
        """SGLang's native /generate beside the endpoint's /v1 (served_scoring.generate_body): its answer."""
        root = self.endpoint.base_url.removesuffix("/v1")
        try:
            return self._chat.post_json(f"{root}/generate", body, max_retries=max_retries)
        except ChatError as exc:
            raise self._scoring_failure(exc) from None

    def _scoring_failure(self, exc: ChatError) -> ServedError:
        plural = "s" if exc.attempts != 1 else ""
        failure = ServedError(f"the endpoint {self.url} failed an option-scoring request of model "
                              f"{self.endpoint.model}: {exc.answer} (after {exc.attempts} attempt{plural})")
        failure.status = exc.status  # type: ignore[attr-defined]
        return failure

    # -- before the run ------------------------------------------------------------------------------------------------
    def probe(self, images: bool) -> None:
        """One tiny text request (and, with `images`, one with an image) with one retry at most: ServedError at once
        for an endpoint that cannot run the evaluation; an image refused with a 4xx makes the model text-only."""
        text = GenerationRequest(PROBE_TEXT, max_new_tokens=1)
        try:
            body, _ = self._chat.call(self._params(text), max_retries=1)
        except ChatError as exc:
            raise ServedError(self._first_failure(exc)) from None
        self._note_model(body)
        self._probe_scoring()
        if not images:
            return
        try:
            body, _ = self._chat.call(self._params(GenerationRequest(PROBE_TEXT, images=[_probe_image()],
                                                                      max_new_tokens=1)), max_retries=1)
        except ChatError as exc:
            if exc.status is None or not 400 <= exc.status < 500 or exc.status in _NOT_A_VISION_REFUSAL:
                raise ServedError(self._first_failure(exc, "a request with an image")) from None
            self.has_vision, self.vision_refusal = False, f"the endpoint refused an image ({exc.answer})"
            return
        self._note_model(body)

    def _probe_scoring(self) -> None:
        """Which prompt log-probabilities the server returns (scoring_path; served_scoring.probe): a refusal (4xx) or
        an answer without them means generation only (scoring_refusal); no answer at all ends the run."""
        try:
            self.scoring_path = served_scoring.probe(lambda m, f: self._scoring_call(m, f, max_retries=1),
                                                     lambda body: self._generate_call(body, max_retries=1),
                                                     PROBE_TEXT)
        except ServedError as exc:
            status = getattr(exc, "status", None)
            if status is None or not 400 <= status < 500 or status in _NOT_A_REFUSAL_OF_SCORING:
                raise
            self.scoring_refusal = f"{served_scoring.NO_PROMPT_LOGPROBS} (it refused them: {exc})"
        except served_scoring.NotScored as exc:
            self.scoring_refusal = f"{served_scoring.NO_PROMPT_LOGPROBS} ({exc})"

    def _first_failure(self, exc: ChatError, what: str = "the first request") -> str:
        model, url = self.endpoint.model, self.url
        if exc.status in (401, 403):
            return f"the endpoint {url} refused the token ({MODEL_TOKEN_SETTING}) for model {model}: {exc.answer}"
        if exc.status == 404:
            return f"the endpoint {url} does not know the model {model!r}: {exc.answer}"
        if exc.status is None:
            return f"the endpoint {url} could not be reached for model {model}: {exc.answer}"
        return f"the endpoint {url} refused {what} for model {model}: {exc.answer}"

    def record(self) -> dict:
        """What results and details say about the endpoint (never the token)."""
        return {"base_url": self.url, "host": self.endpoint.host, "model": self.endpoint.model,
                "server_model": ", ".join(self.server_models) or None, "vision": self.has_vision,
                "vision_refused": self.vision_refusal, "option_scoring": self.scoring_path,
                "option_scoring_refused": self.scoring_refusal}


def served_reply(message: dict) -> thinking.Reply:
    """A served reply's answer and thought: the thought the server sent apart (reasoning_content; with no content
    beside it the reply ended inside its thought), else a <think> block in its content."""
    content = message.get("content") if isinstance(message.get("content"), str) else ""
    apart = reasoning_of(message)
    inside = thinking.split_reply(content, thinking.THINK)
    if apart is None or not apart.strip():
        return inside
    if not content.strip():
        return thinking.Reply("", apart.strip(), unclosed=True)
    thought = apart.strip() if inside.thought is None else f"{apart.strip()}\n\n{inside.thought}"
    return thinking.Reply(inside.answer, thought, inside.unclosed)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def load_served(spec: str, batch_size: int | str = "auto", needs_images: bool = False,
                model_id: str | None = None, thinking_asked: str = "auto",
                thinking_budget: int | None = None) -> ServedAdapter:
    """The served model a spec `endpoint:<base url>|<model>` names, probed (ServedError when it cannot run the
    evaluation). Its token comes from LEADERBOARD_MODEL_TOKEN, each call's deadline and largest answer from
    LEADERBOARD_ENDPOINT_DEADLINE and LEADERBOARD_ENDPOINT_MAX_REPLY_MB. batch_size: requests in flight ("auto": 8)."""
    endpoint = parse_model_spec(spec)
    size = AUTO_IN_FLIGHT if str(batch_size).strip().lower() in ("", "auto") else int(batch_size)
    if size < 1:
        raise ValueError(f"--batch-size must be at least 1, got {size}")
    limits = limits_from_env()
    adapter = ServedAdapter(endpoint.base_url, endpoint.model, model_token(), batch_size=size, model_id=model_id,
                            limits=limits, thinking_asked=thinking_asked, thinking_budget=thinking_budget)
    adapter.probe(images=needs_images)
    return adapter
