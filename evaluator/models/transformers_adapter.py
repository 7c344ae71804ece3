"""A ModelAdapter over Hugging Face transformers: chat-templated prompts, batched generation, option scoring.

One adapter serves every family; what differs between families (how a prompt is written, how images are handed
to the processor, what runs a request without an image, how options are scored) lives in one table, FAMILIES
(families.py). Which
folders load is architectures.py's call; the device, dtype and batch size, devices.py's.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

import torch
from transformers import LogitsProcessorList

from evaluator.models import batched_scoring, decoding, image_features, option_tokens, scoring, thinking
from evaluator.models.architectures import describe_model_folder
from evaluator.models.base import GenerationRequest, GenerationResult, OptionScore, cut_at_stop, ending
from evaluator.models.devices import free_cuda_memory, resolve_batch_size, split_across_gpus
from evaluator.models.generation_cache import WARM_UP_TOKENS, GenerationCache, timed
from evaluator.models.families import FAMILIES, family
from evaluator.models.image_settings import image_settings
from evaluator.models.loading import load_pretrained
from evaluator.models.near_ties import NearTieWatch
from evaluator.models.prompts import chat_messages, fold_history, placeholder_problem, plain_prompt, token_text
from evaluator.models.sampling import METHOD as SAMPLING_METHOD
from evaluator.models.sampling import RowSampler

# What callers read from here, the family table and the helpers of the sibling modules included.
__all__ = ["FAMILIES", "TransformersAdapter", "cut_at_stop", "describe_model_folder", "ending", "fold_history",
           "resolve_batch_size", "split_across_gpus"]

log = logging.getLogger(__name__)


def _joined_tiles(enc: Any) -> dict[str, torch.Tensor]:
    """A processor's unstacked output as tensors (Family.ragged_tiles): the padded text inputs as they are, and the
    pixel values one row per tile, (tiles, 1, channels, height, width), every image's tiles in the batch's order: what
    the model makes of (images, tiles, ...) when they stack."""
    out = {key: torch.as_tensor(value) for key, value in enc.items() if key != "pixel_values"}
    out["pixel_values"] = torch.cat([torch.as_tensor(image) for image in enc["pixel_values"]]).unsqueeze(1)
    return out


class TransformersAdapter:
    """ModelAdapter for AutoModelForImageTextToText (with a processor) or AutoModelForCausalLM (with a tokenizer)."""

    def __init__(self, model: Any, processor: Any, tokenizer: Any, *, model_id: str, revision: str | None,
                 has_vision: bool, batch_size: int = 4, model_type: str | None = None,
                 generation_cache: str = "auto", thinking_asked: str = "auto",
                 thinking_budget: int | None = None) -> None:
        self.model = model
        self.processor = processor  # None for text-only models
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.revision = revision
        self.has_vision = has_vision
        self.model_type = model_type or getattr(model.config, "model_type", None)
        self.family = family(self.model_type, has_vision)
        self.style = self.family.style
        # May shrink during a run: a batch that runs out of GPU memory is retried at half the size.
        self.batch_size = max(1, int(batch_size))
        # Questions whose options are scored together (score_options_many); halved on out-of-memory as well.
        self.scoring_batch_size = self.batch_size
        self.device = str(model.device.type)
        self.dtype = str(model.dtype).removeprefix("torch.")
        # "shared_prefix" (the prompt's KV cache reused for every option) where the architecture allows, else
        # "reference" (one full forward pass per option); recorded in the run metadata.
        self.scoring_path = "shared_prefix" if scoring.supports_shared_prefix(model) else "reference"
        # what decides the numbers besides the weights, recorded in the run metadata: the attention implementation
        # the model loaded with, and how generate keeps its KV cache (generation_cache.py)
        self.attention = str(getattr(model.config, "_attn_implementation", None) or "default")
        self.sampling = SAMPLING_METHOD
        self.cache = GenerationCache.for_device(generation_cache, self.device, model)
        # each image encoded once per run (None: a family whose features are not the image's alone, or text-only)
        self.image_features = image_features.install(model, self.model_type) if has_vision else None
        # the processor's own resolution settings, never overridden (recorded as run.image_settings)
        self.image_settings = image_settings(processor) if has_vision else {}
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        budget = thinking.default_budget() if thinking_budget is None else thinking_budget
        self.thinking = self._thinking(thinking.check_choice(thinking_asked), budget)
        self._marker_ids = thinking.marker_ids(self.tokenizer, self.thinking.markers)
        # what the model's generation_config asked of decoding, and what the benchmarks used (run.decoding)
        self.decoding = decoding.record(getattr(model, "generation_config", None))

    def _thinking(self, asked: str, budget: int) -> thinking.Thinking:
        """The model's thinking (thinking.detect): its markers, switch and the mode its generation prompt gives."""
        owner = self._chat_template_owner()
        template = getattr(owner, "chat_template", None) if owner is not None else None
        return thinking.detect(template, self.tokenizer.get_added_vocab(), asked, budget,
                               lambda found: self._probe(found))

    def _probe(self, found: thinking.Thinking) -> str:
        self.thinking = found
        return self.build_prompt(GenerationRequest("?"))

    @property
    def generation_path(self) -> str:
        """How generate runs: "dynamic", "static" or "static-compiled" (after a fallback, "dynamic")."""
        return self.cache.path

    @classmethod
    def from_folder(cls, folder: Path | str, *, model_id: str, revision: str | None = None, precision: str = "auto",
                    batch_size: int | str = 4, device: str | None = None,
                    generation_cache: str = "auto", thinking_asked: str = "auto",
                    thinking_budget: int | None = None) -> "TransformersAdapter":
        """Load a model folder (never with remote code); the class is picked from its config (loading.py)."""
        model, processor, tokenizer, info, size = load_pretrained(folder, model_id, precision, batch_size, device)
        return cls(model, processor, tokenizer, model_id=model_id, revision=revision,
                   has_vision=info["has_vision"], batch_size=size, model_type=info["model_type"],
                   generation_cache=generation_cache, thinking_asked=thinking_asked, thinking_budget=thinking_budget)

    # ---- prompts -------------------------------------------------------------------------------------------

    def _chat_template_owner(self) -> Any | None:
        if self.style.prompt != "chat":
            return None
        owner = self.processor if self.has_vision else self.tokenizer
        return owner if getattr(owner, "chat_template", None) else None

    def build_prompt(self, request: GenerationRequest) -> str:
        """The prompt text as sent: the model's chat template with a generation prompt, or the family's plain form;
        ValueError, one line, for more images than the family takes or a prompt whose image placeholders do not match
        its images."""
        if request.images and not self.has_vision:
            raise ValueError(f"{self.model_id} is a text-only model and cannot take images")
        if self.style.max_images is not None and len(request.images) > self.style.max_images:
            raise ValueError(f"{self.model_id} ({self.model_type}) takes at most {self.style.max_images} image(s) "
                             f"per prompt, got {len(request.images)}")
        owner = self._chat_template_owner()
        if owner is None:
            prompt = plain_prompt(request, self.style, token_text(self.processor, "image_token") or "<image>")
        else:
            prompt = owner.apply_chat_template(chat_messages(request, self.style, self.has_vision),
                                               add_generation_prompt=True, tokenize=False,
                                               **self.thinking.template_kwargs())
        placeholder = token_text(self.processor, self.family.placeholder) if self.has_vision else ""
        problem = placeholder_problem(prompt, placeholder, len(request.images))
        if problem:
            raise ValueError(f"{self.model_id} ({self.model_type}): {problem}")
        return prompt

    def scoring_prompt(self, request: GenerationRequest) -> str:
        """The prompt its options are scored after: a thought the prompt opened is closed empty (thinking)."""
        return thinking.closed(self.build_prompt(request), self.thinking.markers)

    def _encode(self, texts: list[str], images: list[list[Any]]) -> dict[str, torch.Tensor]:
        """Tokenize (and process images for) a batch, left-padded, on the model's device.

        A VLM batch without any image goes the family's text-only way (PromptStyle.text_only).
        """
        bos = self.tokenizer.bos_token
        # A template that already starts with BOS must not get a second one.
        add_special = not (bos and all(t.startswith(bos) for t in texts))
        has_images = any(images)
        text_only = self.style.text_only
        if self.has_vision and (has_images or text_only == "processor"):
            if not has_images:
                image_arg = None
            elif self.style.nested_images:
                image_arg = [list(row) for row in images]
            else:
                image_arg = [img for row in images for img in row]
            ragged = has_images and self.family.ragged_tiles
            enc = self.processor(text=texts, images=image_arg, return_tensors=None if ragged else "pt",
                                 padding=True, add_special_tokens=add_special)
            if ragged:
                enc = _joined_tiles(enc)
        elif self.has_vision and text_only != "language_model":  # a format around the text, e.g. PaliGemma's
            wrapped = [text_only.format(bos=bos or "", text=t) for t in texts]
            enc = self.tokenizer(wrapped, return_tensors="pt", padding=True, add_special_tokens=False,
                                 return_token_type_ids="token_type_ids" in self._side_inputs())
        else:
            enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=add_special,
                                 return_token_type_ids=False)
        enc = dict(enc)
        enc.pop("labels", None)
        return {k: (v.to(self.model.device) if torch.is_tensor(v) else v) for k, v in enc.items()}

    def _side_inputs(self) -> list[str]:
        return list(getattr(self.processor, "model_input_names", []) or [])

    def _cast(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Floating-point inputs (pixel values) in the model's dtype."""
        return {k: (v.to(self.model.dtype) if torch.is_tensor(v) and v.is_floating_point() else v)
                for k, v in inputs.items()}

    def _runner(self, has_images: bool) -> Any:
        """The module that runs a batch: the model, or for a text-only prompt to BLIP-2 its language model."""
        if self.has_vision and not has_images and self.style.text_only == "language_model":
            return self.model.language_model
        return self.model

    # ---- generation ----------------------------------------------------------------------------------------

    def generate(self, requests: list[GenerationRequest],
                 on_answered: Callable[[list[int]], None] | None = None) -> list[str]:
        """Completions in the order of `requests` (the texts of generate_results)."""
        return [result.text for result in self.generate_results(requests, on_answered)]

    def generate_results(self, requests: list[GenerationRequest],
                         on_answered: Callable[[list[int]], None] | None = None) -> list[GenerationResult]:
        """Completions in the order of `requests`, each with its token count and whether it hit max_new_tokens.

        Requests go in batches of self.batch_size in their order (families that cannot mix prompts with and without
        images batch those apart). Greedy and sampled requests share batches: a sampled request draws from its own
        seeded stream (evaluator.models.sampling), so no answer depends on its batch. A batch that runs out of GPU
        memory is retried at half the size (and later batches use the smaller size); at batch size 1 the error is
        raised. on_answered, if given, is told the indices of each batch once answered.
        """
        outputs: list[GenerationResult | None] = [None] * len(requests)
        groups: dict[bool, list[int]] = {}
        for i, r in enumerate(requests):
            apart = self.has_vision and not self.style.mixes
            groups.setdefault(bool(r.images) if apart else False, []).append(i)
        for indices in groups.values():
            self._in_batches(indices, lambda chunk: self._generate_batch([requests[i] for i in chunk]), outputs,
                             on_answered=on_answered)
        return [o or GenerationResult("") for o in outputs]

    def _in_batches(self, indices: list[int], run: Callable[[list[int]], list], outputs: list,
                    size: str = "batch_size", on_answered: Callable[[list[int]], None] | None = None) -> None:
        """run() over `indices` in chunks of the adapter's `size` attribute (self.batch_size, or for option scoring
        self.scoring_batch_size), halving it on CUDA out-of-memory; on_answered hears of each chunk answered."""
        start = 0
        while start < len(indices):
            chunk = indices[start:start + getattr(self, size)]
            try:
                results = run(chunk)
            except torch.cuda.OutOfMemoryError:
                if len(chunk) <= 1:
                    raise
                results = None
            if results is None:  # outside the except block, so the failed batch's tensors can be freed
                setattr(self, size, max(1, len(chunk) // 2))
                log.warning("%s: out of memory at %s %d; retrying at %d", self.model_id, size.replace("_", " "),
                            len(chunk), getattr(self, size))
                free_cuda_memory()
                continue
            for i, result in zip(chunk, results):
                outputs[i] = result
            start += len(chunk)
            if on_answered is not None:
                on_answered(chunk)

    def _eos_ids(self, runner: Any) -> set[int]:
        """The token ids that end a completion: the runner's generation config's end-of-sequence ids, else the
        tokenizer's."""
        ids = getattr(getattr(runner, "generation_config", None), "eos_token_id", None)
        if ids is None:
            ids = self.tokenizer.eos_token_id
        if ids is None:
            return set()
        return {int(i) for i in (ids if isinstance(ids, (list, tuple)) else [ids])}

    @torch.inference_mode()
    def _generate_batch(self, batch: list[GenerationRequest]) -> list[GenerationResult]:
        answered = len(batch)
        if self.cache.compiled and answered < self.batch_size:  # one compiled shape: the batch filled up, cut after
            batch = batch + [batch[-1]] * (self.batch_size - answered)
        prompts = [self.build_prompt(r) for r in batch]
        images = [r.images for r in batch]
        inputs = self._cast(self._encode(prompts, images))
        extra = self.thinking.extra_tokens  # a thinking model's budget, on top of each benchmark's own
        limits = [r.max_new_tokens + extra for r in batch]
        max_new = max(limits)
        # greedy (the model's generation_config changes no decoding: decoding.py); sampled rows drawn by RowSampler
        gen: dict[str, Any] = {**decoding.generate_kwargs(), "max_new_tokens": max_new,
                               "pad_token_id": self.tokenizer.pad_token_id}
        temperatures = [max(0.0, float(r.temperature)) for r in batch]
        watch = NearTieWatch(inputs["input_ids"].shape[1])  # before the sampler, which leaves one finite score per row
        gen["logits_processor"] = LogitsProcessorList([watch] + ([RowSampler(
            temperatures, [r.seed for r in batch], max_new, inputs["input_ids"].shape[1], inputs["input_ids"].device,
            watch)] if any(t > 0 for t in temperatures) else []))
        runner = self._runner(any(images))
        out = self._run_generate(runner, inputs, gen)
        new_tokens = out[:answered, inputs["input_ids"].shape[1]:]
        eos_ids = self._eos_ids(runner)
        results = []
        for i, (row, prompt, limit, r) in enumerate(zip(new_tokens, prompts, limits, batch)):
            ids = row.tolist()
            n_tokens, ran_out = ending(ids, limit, eos_ids)
            results.append(self._result(ids[:n_tokens], n_tokens, ran_out, prompt, r.stop))
            results[-1].near_ties = watch.ties(i, ids, n_tokens + (not ran_out), self.tokenizer, temperatures[i] > 0)
        return results

    def _result(self, ids: list[int], n_tokens: int, ran_out: bool, prompt: str, stop: list[str]) -> GenerationResult:
        """One completion, its thought kept apart (thinking.completion)."""
        return thinking.completion(self.tokenizer, ids, n_tokens, ran_out, prompt, stop, self.thinking,
                                   self._marker_ids)

    def _run_generate(self, runner: Any, inputs: dict[str, Any], gen: dict[str, Any]) -> torch.Tensor:
        """runner.generate on the run's path: a static cache (with a timed warm-up before each new compiled shape),
        or the dynamic one; a static path that fails for any reason but memory falls back to the dynamic path for the
        rest of the run, and this batch is generated again there."""
        if self.cache.static:
            extra = self.cache.generate_kwargs(inputs["input_ids"].shape[1], gen["max_new_tokens"])
            try:
                if self.cache.new_shape(inputs["input_ids"].shape[0], extra["max_cache_len"]):
                    warm = {**gen, **extra, "max_new_tokens": min(gen["max_new_tokens"], WARM_UP_TOKENS)}
                    self.cache.warmed(timed(lambda: runner.generate(**inputs, **warm))[1])
                return runner.generate(**inputs, **gen, **extra)
            except torch.cuda.OutOfMemoryError:
                raise
            except Exception as exc:  # noqa: BLE001 - an architecture the static cache or compile cannot run
                self.cache.fall_back(exc)
        return runner.generate(**inputs, **gen)

    # ---- option scoring ------------------------------------------------------------------------------------

    def _option_ids(self, prompt: str, images: list[Any], option: str, prompt_ids: torch.Tensor) -> torch.Tensor:
        """The option's token ids as a continuation of the prompt (1-D, on the model's device).

        The option is tokenized together with the prompt text; if that merges tokens across the boundary (the
        processed prompt is no longer a prefix), the option is tokenized on its own instead.
        """
        n_prompt = prompt_ids.shape[0]
        joint_ids = self._encode([prompt + option], [images])["input_ids"][0]
        if joint_ids.shape[0] > n_prompt and torch.equal(joint_ids[:n_prompt], prompt_ids):
            return joint_ids[n_prompt:]
        return torch.tensor(self.tokenizer(option, add_special_tokens=False)["input_ids"], dtype=prompt_ids.dtype,
                            device=prompt_ids.device)

    def _options_from_text(self, prompt: str, options: list[str], prompt_ids: torch.Tensor) -> list[list[int]] | None:
        """Each option's token ids after the prompt, from the text alone (option_tokens.options_from_text); None when
        the processor must be asked."""
        if not hasattr(self, "_special_id_set"):
            self._special_id_set = option_tokens.special_ids(self.tokenizer)
        return option_tokens.options_from_text(self.tokenizer, self._special_id_set, prompt, options, prompt_ids)

    @torch.inference_mode()
    def score_options(self, request: GenerationRequest, options: list[str],
                      path: str | None = None) -> list[OptionScore]:
        """Log-likelihood of each option appended (verbatim) to the templated prompt.

        `path` picks "shared_prefix" or "reference"; by default the adapter's scoring_path. A prompt without an
        image to a BLIP-2-style model is scored on its language model, by the reference path unless that model is
        cleared for the shared prefix too.
        """
        prompt = self.scoring_prompt(request)
        prompt_inputs = self._encode([prompt], [request.images])
        option_ids = self._all_option_ids(prompt, request.images, options, prompt_inputs["input_ids"][0])
        prompt_inputs = self._cast(prompt_inputs)
        model = self._runner(bool(request.images))
        shared = (path or self.scoring_path) == "shared_prefix"
        if shared and (model is self.model or scoring.supports_shared_prefix(model)):
            return scoring.score_shared_prefix(model, prompt_inputs, option_ids)
        return scoring.score_reference(model, prompt_inputs, option_ids)

    def _all_option_ids(self, prompt: str, images: list[Any], options: list[str],
                        prompt_ids: torch.Tensor) -> list[torch.Tensor]:
        """The options' token ids after the processed prompt (1-D tensors beside `prompt_ids`): from the text where
        it tells the same, else through the processor (the image processed again per option)."""
        found = self._options_from_text(prompt, options, prompt_ids)
        if found is None:
            return [self._option_ids(prompt, images, option, prompt_ids) for option in options]
        return [torch.tensor(ids, dtype=prompt_ids.dtype, device=prompt_ids.device) for ids in found]

    def score_options_many(self, asks: list[tuple[GenerationRequest, list[str]]],
                           on_answered: Callable[[list[int]], None] | None = None) -> list[list[OptionScore]]:
        """score_options for many questions, in the order given: batches of self.scoring_batch_size questions are
        processed and prefilled together and their options scored together (batched_scoring), halving the batch on
        out-of-memory. Architectures not cleared for it score one question at a time. on_answered, if given, is told
        the indices of each batch (or question) once scored."""
        outputs: list[list[OptionScore] | None] = [None] * len(asks)
        groups: dict[bool, list[int]] = {}
        for i, (request, _) in enumerate(asks):
            groups.setdefault(self.has_vision and bool(request.images), []).append(i)
        for indices in groups.values():
            runner = self._runner(bool(asks[indices[0]][0].images))
            if self.scoring_path != "shared_prefix" or not batched_scoring.supports_batched(runner):
                for i in indices:
                    outputs[i] = self.score_options(*asks[i])
                    if on_answered is not None:
                        on_answered([i])
                continue
            self._in_batches(indices, lambda chunk: self._score_batch([asks[i] for i in chunk], runner), outputs,
                             size="scoring_batch_size", on_answered=on_answered)
        return outputs  # type: ignore[return-value]

    @torch.inference_mode()
    def _score_batch(self, batch: list[tuple[GenerationRequest, list[str]]], runner: Any) -> list[list[OptionScore]]:
        prompts = [self.scoring_prompt(request) for request, _ in batch]
        inputs = self._encode(prompts, [request.images for request, _ in batch])
        ids = inputs["input_ids"].cpu()  # read on the host once, not question by question
        mask = inputs["attention_mask"].cpu().bool() if inputs.get("attention_mask") is not None else None
        option_ids = []
        for row, (prompt, (request, options)) in enumerate(zip(prompts, batch)):
            prompt_ids = ids[row][mask[row]] if mask is not None else ids[row]
            found = self._options_from_text(prompt, options, prompt_ids)
            if found is None:  # the processor is asked, on the model's device
                found = self._all_option_ids(prompt, request.images, options, prompt_ids.to(self.model.device))
            option_ids.append(found)
        return batched_scoring.score_questions(runner, self._cast(inputs), option_ids)
