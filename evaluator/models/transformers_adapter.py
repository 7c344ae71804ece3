"""A ModelAdapter over Hugging Face transformers: chat-templated prompts, batched generation, option scoring."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from evaluator.models import scoring
from evaluator.models.base import GenerationRequest, OptionScore, UnsupportedModelError

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def describe_model_folder(folder: Path | str) -> dict[str, Any]:
    """Architecture facts from `folder/config.json`, without loading weights.

    Raises UnsupportedModelError when the model needs remote code or its model_type is unknown to transformers.
    """
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)

    config_file = Path(folder) / "config.json"
    if not config_file.is_file():
        raise UnsupportedModelError(f"no config.json in {folder}")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnsupportedModelError(f"unreadable config.json: {exc}") from exc
    model_type = config.get("model_type")
    architectures = config.get("architectures") or []
    architecture = architectures[0] if architectures else model_type
    if config.get("auto_map"):
        raise UnsupportedModelError(f"model {architecture or '?'} needs remote code (config has auto_map), "
                                    "which this leaderboard never runs")
    if not model_type or model_type not in CONFIG_MAPPING_NAMES:
        raise UnsupportedModelError(f"unsupported architecture {architecture or model_type or '?'} "
                                    f"(model_type {model_type!r} is unknown to transformers)")
    has_vision = model_type in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    if not has_vision and model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise UnsupportedModelError(f"unsupported architecture {architecture} (model_type {model_type!r} is "
                                    "neither image-text-to-text nor a causal language model)")
    return {"architecture": architecture, "model_type": model_type, "has_vision": has_vision}


def pick_device_dtype(precision: str = "auto", device: str | None = None) -> tuple[str, torch.dtype]:
    """CUDA + bfloat16 when available, else CPU + float32; an explicit precision or device wins."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if precision in (None, "", "auto"):
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    elif precision in DTYPES:
        dtype = DTYPES[precision]
    else:
        raise ValueError(f"unknown precision {precision!r}; expected auto, {', '.join(DTYPES)}")
    return device, dtype


def cut_at_stop(text: str, stop: list[str]) -> str:
    """Text up to the earliest occurrence of any stop string."""
    cut = len(text)
    for s in stop:
        if s:
            i = text.find(s)
            if 0 <= i < cut:
                cut = i
    return text[:cut]


class TransformersAdapter:
    """ModelAdapter for AutoModelForImageTextToText (with a processor) or AutoModelForCausalLM (with a tokenizer)."""

    def __init__(self, model: Any, processor: Any, tokenizer: Any, *, model_id: str, revision: str | None,
                 has_vision: bool, batch_size: int = 4) -> None:
        self.model = model
        self.processor = processor  # None for text-only models
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.revision = revision
        self.has_vision = has_vision
        self.batch_size = max(1, int(batch_size))
        self.device = str(model.device.type)
        self.dtype = str(model.dtype).removeprefix("torch.")
        # "shared_prefix" (the prompt's KV cache reused for every option) where the architecture allows, else
        # "reference" (one full forward pass per option); recorded in the run metadata.
        self.scoring_path = "shared_prefix" if scoring.supports_shared_prefix(model) else "reference"
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    @classmethod
    def from_folder(cls, folder: Path | str, *, model_id: str, revision: str | None = None, precision: str = "auto",
                    batch_size: int = 4, device: str | None = None) -> "TransformersAdapter":
        """Load a model folder (never with remote code); the class is picked from its config."""
        from transformers import (AutoModelForCausalLM, AutoModelForImageTextToText, AutoProcessor,
                                  AutoTokenizer)

        info = describe_model_folder(folder)
        device, dtype = pick_device_dtype(precision, device)
        kwargs = {"dtype": dtype, "trust_remote_code": False}
        if info["has_vision"]:
            processor = AutoProcessor.from_pretrained(folder, trust_remote_code=False)
            tokenizer = getattr(processor, "tokenizer", processor)
            model = AutoModelForImageTextToText.from_pretrained(folder, **kwargs)
        else:
            processor = None
            tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
            model = AutoModelForCausalLM.from_pretrained(folder, **kwargs)
        model.to(device).eval()
        return cls(model, processor, tokenizer, model_id=model_id, revision=revision,
                   has_vision=info["has_vision"], batch_size=batch_size)

    # ---- prompts -------------------------------------------------------------------------------------------

    def _chat_template_owner(self) -> Any | None:
        owner = self.processor if self.has_vision else self.tokenizer
        return owner if getattr(owner, "chat_template", None) else None

    def build_prompt(self, request: GenerationRequest) -> str:
        """The prompt text as sent: the model's chat template with a generation prompt, or plain text."""
        if request.images and not self.has_vision:
            raise ValueError(f"{self.model_id} is a text-only model and cannot take images")
        owner = self._chat_template_owner()
        if owner is None:
            image_token = getattr(self.processor, "image_token", None) if self.has_vision else None
            prefix = f"{image_token * len(request.images)}\n" if image_token and request.images else ""
            system = f"{request.system}\n\n" if request.system else ""
            return f"{system}{prefix}{request.text}"
        messages: list[dict[str, Any]] = []
        if self.has_vision:
            if request.system:
                messages.append({"role": "system", "content": [{"type": "text", "text": request.system}]})
            content = [{"type": "image"} for _ in request.images] + [{"type": "text", "text": request.text}]
            messages.append({"role": "user", "content": content})
        else:
            if request.system:
                messages.append({"role": "system", "content": request.system})
            messages.append({"role": "user", "content": request.text})
        return owner.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def _encode(self, texts: list[str], images: list[list[Any]]) -> dict[str, torch.Tensor]:
        """Tokenize (and process images for) a batch, left-padded, on the model's device."""
        bos = self.tokenizer.bos_token
        # A template that already starts with BOS must not get a second one.
        add_special = not (bos and all(t.startswith(bos) for t in texts))
        if self.has_vision:
            flat = [img for row in images for img in row]
            enc = self.processor(text=texts, images=flat or None, return_tensors="pt", padding=True,
                                 add_special_tokens=add_special)
        else:
            enc = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=add_special,
                                 return_token_type_ids=False)
        enc = dict(enc)
        enc.pop("labels", None)
        return {k: (v.to(self.model.device) if torch.is_tensor(v) else v) for k, v in enc.items()}

    def _cast(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Floating-point inputs (pixel values) in the model's dtype."""
        return {k: (v.to(self.model.dtype) if torch.is_tensor(v) and v.is_floating_point() else v)
                for k, v in inputs.items()}

    # ---- generation ----------------------------------------------------------------------------------------

    def generate(self, requests: list[GenerationRequest]) -> list[str]:
        """Completions in the order of `requests`; batches share temperature and seed."""
        outputs: list[str | None] = [None] * len(requests)
        groups: dict[tuple[float, int | None], list[int]] = {}
        for i, r in enumerate(requests):
            key = (0.0, None) if r.temperature <= 0 else (float(r.temperature), r.seed)
            groups.setdefault(key, []).append(i)
        for (temperature, seed), indices in groups.items():
            for start in range(0, len(indices), self.batch_size):
                chunk = indices[start:start + self.batch_size]
                texts = self._generate_batch([requests[i] for i in chunk], temperature, seed)
                for i, text in zip(chunk, texts):
                    outputs[i] = text
        return [o or "" for o in outputs]

    @torch.inference_mode()
    def _generate_batch(self, batch: list[GenerationRequest], temperature: float, seed: int | None) -> list[str]:
        prompts = [self.build_prompt(r) for r in batch]
        inputs = self._cast(self._encode(prompts, [r.images for r in batch]))
        max_new = max(r.max_new_tokens for r in batch)
        gen: dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": self.tokenizer.pad_token_id}
        if temperature > 0:
            gen.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
            if seed is not None:
                torch.manual_seed(seed)
        else:
            gen.update(do_sample=False, temperature=None, top_k=None, top_p=None)
        out = self.model.generate(**inputs, **gen)
        new_tokens = out[:, inputs["input_ids"].shape[1]:]
        texts = []
        for row, r in zip(new_tokens, batch):
            text = self.tokenizer.decode(row[:r.max_new_tokens], skip_special_tokens=True)
            texts.append(cut_at_stop(text, r.stop))
        return texts

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

    @torch.inference_mode()
    def score_options(self, request: GenerationRequest, options: list[str],
                      path: str | None = None) -> list[OptionScore]:
        """Log-likelihood of each option appended (verbatim) to the templated prompt.

        `path` picks "shared_prefix" or "reference"; by default the adapter's scoring_path.
        """
        prompt = self.build_prompt(request)
        prompt_inputs = self._encode([prompt], [request.images])
        option_ids = [self._option_ids(prompt, request.images, o, prompt_inputs["input_ids"][0]) for o in options]
        prompt_inputs = self._cast(prompt_inputs)
        if (path or self.scoring_path) == "shared_prefix":
            return scoring.score_shared_prefix(self.model, prompt_inputs, option_ids)
        return scoring.score_reference(self.model, prompt_inputs, option_ids)
