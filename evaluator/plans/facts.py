"""What a model's folder tells about what its run will cost, without loading it.

- Parameters: counted from its safetensors headers (exact), else its weights index (total_parameters, or total_size
  at two bytes a parameter), else estimated from config.json (embeddings, attention, MLP or experts, vision tower).
  A mixture of experts reads only its routed experts' share per token: `active` leaves the others out (from
  config.json's expert count, experts per token and expert width).
- Image tokens of one picture: known from config.json for the families whose count it states or implies, for a
  typical benchmark picture of TYPICAL_IMAGE pixels; else LLaVA-1.5's 576, said as an assumption.
- Thinking: its chat template writes thought markers (evaluator.models.thinking) and whether it takes an
  enable_thinking switch.
Each figure comes with what it rests on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from evaluator.models.model_config import UnreadableConfig, read_json_object, safetensors_parameters
from evaluator.models.thinking import find_markers, template_switch

TYPICAL_IMAGE = (800, 600)  # a Visual Genome or COCO photo: the benchmarks' usual picture, in pixels
MAX_TEMPLATE_BYTES = 2_000_000  # a chat_template.jinja larger than this is not read
DEFAULT_IMAGE_TOKENS = 576  # LLaVA-1.5's (336 / 14)^2, for a family whose count config.json does not tell
_DTYPE_BYTES = 2  # a weights index's total_size counted at bfloat16


@dataclass(frozen=True)
class ModelFacts:
    """A model's cost-relevant facts, each with what it rests on."""

    name: str
    architecture: str
    has_vision: bool
    params: float  # in all
    active: float  # read per token (a dense model: all of them)
    params_basis: str
    image_tokens: float  # one picture's tokens (0 for a text-only model)
    image_basis: str
    thinks: bool  # its template writes a thought
    switch: bool  # its template takes enable_thinking
    thinking_basis: str


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _text(config: dict) -> dict:
    inner = config.get("text_config")
    return inner if isinstance(inner, dict) else config


def _safetensors_params(folder: Path) -> int | None:
    """Parameters counted from every *.safetensors header in `folder` (None: no file, or one unreadable)."""
    files = sorted(folder.glob("*.safetensors"))
    try:
        return sum(safetensors_parameters(path) for path in files) if files else None
    except (OSError, ValueError):
        return None


def _index_params(folder: Path) -> tuple[int, str] | None:
    path = folder / "model.safetensors.index.json"
    if not path.is_file():
        return None
    try:
        meta = read_json_object(path).get("metadata") or {}
    except UnreadableConfig:
        return None
    if _number(meta.get("total_parameters")):
        return int(meta["total_parameters"]), "its weights index's total_parameters"
    if _number(meta.get("total_size")):
        return int(meta["total_size"] / _DTYPE_BYTES), "its weights index's total_size at two bytes a parameter"
    return None


def _experts(text: dict) -> tuple[int, int, int, int] | None:
    """(experts, experts per token, expert width, layers with experts) of a mixture of experts; None when dense."""
    experts = next((int(text[k]) for k in ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
                    if _number(text.get(k))), 0)
    per_token = next((int(text[k]) for k in ("num_experts_per_tok", "num_experts_per_token", "moe_topk", "top_k")
                      if _number(text.get(k))), 0)
    if experts <= 1 or per_token < 1:
        return None
    width = int(_number(text.get("moe_intermediate_size")) or _number(text.get("intermediate_size")) or 0)
    layers = int(_number(text.get("num_hidden_layers")) or 0)
    step = int(_number(text.get("interleave_moe_layer_step")) or _number(text.get("decoder_sparse_step")) or 1)
    dense_first = int(_number(text.get("first_k_dense_replace")) or 0)
    return experts, per_token, width, max(0, (layers - dense_first) // max(1, step))


def estimate_parameters(config: dict) -> float:
    """Parameters estimated from config.json: the language model (embeddings, attention, MLP or experts) and a
    vision tower's blocks."""
    text = _text(config)
    hidden = _number(text.get("hidden_size")) or 0.0
    layers = _number(text.get("num_hidden_layers")) or 0.0
    heads = _number(text.get("num_attention_heads")) or 1.0
    head_dim = _number(text.get("head_dim")) or (hidden / heads if heads else 0.0)
    kv = _number(text.get("num_key_value_heads")) or heads
    vocab = _number(text.get("vocab_size")) or 0.0
    tied = bool(text.get("tie_word_embeddings", config.get("tie_word_embeddings", False)))
    attention = hidden * head_dim * (2 * heads + 2 * kv)
    mlp = 3 * hidden * (_number(text.get("intermediate_size")) or 4 * hidden)  # with experts: a shared expert's
    total = vocab * hidden * (1 if tied else 2) + layers * (attention + mlp)
    moe = _experts(text)
    if moe:
        experts, _, width, moe_layers = moe
        total += moe_layers * experts * 3 * hidden * width
    vision = config.get("vision_config")
    if isinstance(vision, dict):
        v_hidden = _number(vision.get("hidden_size")) or _number(vision.get("embed_dim")) or 0.0
        v_layers = _number(vision.get("num_hidden_layers")) or _number(vision.get("depth")) or 0.0
        v_mlp = _number(vision.get("intermediate_size")) or 4 * v_hidden
        total += v_layers * (4 * v_hidden * v_hidden + 2 * v_hidden * v_mlp)
    return total


def counted_parameters(folder: Path, config: dict) -> tuple[float, str]:
    """(parameters in all, what the count rests on): the safetensors headers, else the weights index, else
    config.json's estimate."""
    counted = _safetensors_params(folder)
    if counted:
        return float(counted), "counted from its safetensors headers"
    indexed = _index_params(folder)
    if indexed is not None:
        return float(indexed[0]), indexed[1]
    return estimate_parameters(config), "estimated from config.json (no weights here)"


def active_parameters(config: dict, total: float) -> tuple[float, str]:
    """(parameters read per token, a note: "" for a dense model): a mixture of experts leaves out its idle experts
    (config.json's expert count, experts per token and expert width)."""
    moe = _experts(_text(config))
    if not moe or not moe[2]:
        return total, ""
    experts, per_token, width, moe_layers = moe
    idle = moe_layers * (experts - per_token) * 3 * (_number(_text(config).get("hidden_size")) or 0) * width
    active = max(total * 0.05, total - idle)
    return active, (f"{per_token} of {experts} experts a token in {moe_layers} layers (config.json): "
                    f"{active / 1e9:.1f} B read per token")


def image_tokens(config: dict) -> tuple[float, str]:
    """One typical picture's tokens for this model, and what the count rests on."""
    vision = config.get("vision_config") if isinstance(config.get("vision_config"), dict) else {}
    width, height = TYPICAL_IMAGE
    for key in ("mm_tokens_per_image", "image_seq_length", "image_seq_len", "num_image_tokens"):
        if _number(config.get(key)):
            return float(config[key]), f"config.json's {key}"
    patch = _number(vision.get("patch_size"))
    merge = _number(vision.get("spatial_merge_size"))
    if patch and merge:  # Qwen-VL style: one token per merged patch of the picture as it comes
        side = patch * merge
        count = math.ceil(width / side) * math.ceil(height / side)
        return float(count), (f"a {width}x{height} picture at {side:g} pixels a token (config.json's patch_size x "
                              "spatial_merge_size)")
    size = _number(vision.get("image_size"))
    if patch and size and config.get("model_type") == "llama4":
        tiles = math.ceil(width / size) * math.ceil(height / size) + 1
        per_tile = (size / patch) ** 2 * (_number(vision.get("pixel_shuffle_ratio")) or 0.5) ** 2
        return tiles * per_tile, (f"a {width}x{height} picture in {tiles} tiles of {size:g} pixels (one global), "
                                  f"{per_tile:g} tokens each (config.json)")
    if patch and size:
        count = (size / patch) ** 2
        return count, f"config.json's image_size / patch_size, squared ({size:g} / {patch:g})"
    return float(DEFAULT_IMAGE_TOKENS), f"assumed {DEFAULT_IMAGE_TOKENS} (LLaVA-1.5's); config.json does not tell"


def _template_text(value) -> str:
    """A chat_template value as one text (a list of named templates joined)."""
    if isinstance(value, list):
        value = " ".join(str(t.get("template", "")) for t in value if isinstance(t, dict))
    return value if isinstance(value, str) else ""


def chat_template(folder: Path | None = None, tokenizer_config: dict | None = None) -> str:
    """A model's chat template, as transformers looks for it: the folder's chat_template.jinja (at most
    MAX_TEMPLATE_BYTES), its chat_template.json, then its tokenizer_config.json's (`tokenizer_config`: that file as
    already read, where the caller has it); "" when none holds one or it cannot be read."""
    folder = Path(folder) if folder is not None else None
    jinja = folder / "chat_template.jinja" if folder is not None else None
    try:
        if jinja is not None and jinja.is_file() and jinja.stat().st_size <= MAX_TEMPLATE_BYTES:
            return jinja.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    names = ("chat_template.json",) + (() if tokenizer_config is not None else ("tokenizer_config.json",))
    for name in names if folder is not None else ():
        if (folder / name).is_file():
            try:
                found = _template_text(read_json_object(folder / name).get("chat_template"))
            except UnreadableConfig:
                continue
            if found:
                return found
    return _template_text((tokenizer_config or {}).get("chat_template")) if isinstance(tokenizer_config, dict) else ""


def build_facts(name: str, config: dict, architecture: str, has_vision: bool, params: float, params_basis: str,
                template: str) -> ModelFacts:
    """A model's facts from what is known of it: its config.json, its parameters (and where that count comes from)
    and its chat template (the Space passes what its submission checks read; the CLI reads a folder)."""
    active, note = active_parameters(config, params)
    tokens, image_basis = image_tokens(config) if has_vision else (0.0, "a text-only model: no image")
    thinks = find_markers(template) is not None
    switch = template_switch(template)
    if not template:
        thinking_basis = "no chat template here: taken as not thinking"
    else:
        thinking_basis = ("its chat template writes thought markers" if thinks else
                          "its chat template writes no thought") + (" and takes enable_thinking" if switch else "")
    return ModelFacts(name, architecture, has_vision, params, active, params_basis + (f"; {note}" if note else ""),
                      tokens, image_basis, thinks, switch, thinking_basis)


def model_facts(folder: Path, name: str, config: dict, has_vision: bool, architecture: str) -> ModelFacts:
    """Everything the plan needs from a model folder holding at least config.json."""
    params, basis = counted_parameters(folder, config)
    return build_facts(name, config, architecture, has_vision, params, basis, chat_template(folder))


def _side_files(model: str, revision: str | None, folder: Path) -> None:
    """Fetch, for a Hub model, the small files beside config.json that tell its size and its thinking (its weights
    index, its chat template); quietly nothing when the Hub or the cache lacks them."""
    if Path(model).expanduser().is_dir():
        return
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:  # pragma: no cover - huggingface_hub is a requirement
        return
    for name in ("model.safetensors.index.json", "tokenizer_config.json", "chat_template.jinja"):
        if (folder / name).is_file():
            continue
        try:
            hf_hub_download(model, name, revision=revision)
        except Exception:  # noqa: BLE001 - a file the repo lacks, or the Hub out of reach: the plan says its basis
            continue


def facts_for(model: str, revision: str | None = None) -> ModelFacts:
    """A model's facts from a local folder or a Hub id (config.json fetched as the preflight fetches it: Refused, in
    our words, when it cannot be had; UnsupportedModelError for a model this leaderboard cannot run)."""
    from evaluator.models.architectures import describe_model_folder
    from evaluator.models.model_config import read_config
    from evaluator.runs.preflight import config_folder

    folder = config_folder(model, revision)
    described = describe_model_folder(folder)
    _side_files(model, revision, folder)
    config = read_config(folder / "config.json")
    architecture = str(described.get("architecture") or described.get("model_type") or "?")
    return model_facts(folder, model, config, bool(described.get("has_vision")), architecture)
