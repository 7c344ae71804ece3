"""What a run needs in GPU memory beyond its weights, and the Jobs hardware it gets for it (LEADERBOARD_EXECUTOR=hf-jobs).

The flavor table (job_flavors) picks hardware from the weights alone (parameters at 16 bits, every expert of a
mixture-of-experts model counted). A run also holds, at once:

- the KV cache: per row, every attention layer's keys and values over the run's longest sequence, the suite's longest
  prompt (PROMPT_TOKENS, text and image tokens) plus the largest answer budget (NEW_TOKENS) plus, for a model that
  may think (its tokenizer has thought markers), the thinking budget; a sliding-window or chunked layer keeps only its
  window, a linear-attention layer a small fixed state (not counted). On the static path the length is rounded up to
  the cache's bucket, and the cache keeps the longest length it has seen;
- the image-features cache (evaluator.models.image_features.MAX_BYTES, on the GPU).

`plan_run` counts these from config.json alone at the run's batch size, against the flavor's GPU memory less
HEADROOM. When the flavor the weights pick cannot hold the run, the batch size is halved until it fits on that flavor
(the cheaper hardware, answers unchanged: no answer depends on its batch), and only when batch 1 does not fit does the
run take the next flavor up that holds it at the default batch size (else at a smaller one). A model that fits no
flavor of the table is refused at submission with the numbers. The plan is recorded in the request (`run_plan`) and
the dispatcher starts the Job on its flavor with its batch size.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from evaluator import api
from leaderboard.running.job_flavors import FlavorRule, TooLarge, choose_flavor

PROMPT_TOKENS = 4096  # the suites' longest prompt, counted generously: text, dialogue history and image tokens
NEW_TOKENS = 256  # the largest answer budget of the benchmarks (SimpleQA's max_new_tokens)
GPU_BATCH = 64  # evaluator.models.devices.AUTO_BATCH_SIZE["cuda"]: --batch-size auto on a GPU
CACHE_BUCKET = api.CACHE_BUCKET  # static cache lengths are multiples of it
# evaluator.models.image_features.MAX_BYTES (that module and devices.py are not read here: they bring torch in)
IMAGE_CACHE_BYTES = 1 << 30
HEADROOM = 0.85  # the share of a flavor's GPU memory a run may plan on (activations, the CUDA context, fragments)
GB = 1e9
_BYTES = {"float32": 4}  # bytes per cached value by precision; auto, bfloat16 and float16: 2
_WINDOWED = ("sliding_attention", "chunked_attention")
_STATEFUL = ("linear_attention", "conv", "mamba")


@dataclass(frozen=True)
class RunPlan:
    """A run's memory, its flavor and batch size (None: the default), and why they were chosen."""

    flavor: str
    batch_size: int | None
    choice: str  # "fits", "smaller batch" or "larger flavor"
    weights_gb: float
    kv_gb: float  # at the planned batch size
    image_cache_gb: float
    total_gb: float
    gpu_gb: float
    tokens: int  # the longest sequence counted per row
    thinking_tokens: int  # of which the thinking budget

    def record(self) -> dict:
        return {key: (round(value, 2) if isinstance(value, float) else value) for key, value in asdict(self).items()}


def gpu_memory_gb(flavor: str) -> float | None:
    """A Jobs flavor's GPU memory in GB over all its GPUs; None for a CPU flavor or one not known here (the
    evaluator's table of GPUs, evaluator.api.gpu_memory_gb, which its plans price with too)."""
    return api.gpu_memory_gb(flavor)


def _text_config(config: dict) -> dict:
    for key in ("text_config", "language_config", "llm_config"):
        if isinstance(config.get(key), dict):
            return config[key]
    return config


def _number(value) -> int | None:
    """A positive finite size from config.json (None for anything else: Infinity, text, a list)."""
    return (int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value > 0 else None)


def kv_bytes_per_row(config: dict, tokens: int, precision: str) -> int:
    """One row's KV cache at `tokens` tokens, from config.json: each attention layer's keys and values (a windowed
    layer holds at most its window; a linear-attention or convolution layer no keys or values)."""
    text = _text_config(config)
    layers = _number(text.get("num_hidden_layers")) or 0
    heads = _number(text.get("num_attention_heads")) or 1
    kv_heads = _number(text.get("num_key_value_heads")) or heads
    head_dim = _number(text.get("head_dim")) or ((_number(text.get("hidden_size")) or 0) // heads)
    kinds = text.get("layer_types") if isinstance(text.get("layer_types"), list) else []
    no_rope = text.get("no_rope_layers")
    if not kinds and isinstance(no_rope, list) and _number(text.get("attention_chunk_size")):
        # Llama 4: its RoPE layers (1) attend within chunks, its NoPE layers (0) to everything
        kinds = ["chunked_attention" if flag else "full_attention" for flag in no_rope]
    window = _number(text.get("sliding_window")) or _number(text.get("attention_chunk_size")) or tokens
    per_token = 2 * kv_heads * head_dim * _BYTES.get(precision, 2)
    total = 0
    for index in range(layers):
        kind = str(kinds[index]) if index < len(kinds) else "full_attention"
        if kind in _STATEFUL:
            continue
        total += per_token * (min(tokens, window) if kind in _WINDOWED else tokens)
    return total


def sequence_tokens(thinking_budget: int, may_think: bool) -> tuple[int, int]:
    """The longest sequence a run counts per row (rounded up to the cache's bucket), and its thinking budget share."""
    thought = thinking_budget if may_think else 0
    tokens = PROMPT_TOKENS + NEW_TOKENS + thought
    return math.ceil(tokens / CACHE_BUCKET) * CACHE_BUCKET, thought


def plan_run(rules: list[FlavorRule], config: dict | None, params_billions: float | None, precision: str,
             thinking_budget: int = 0, may_think: bool = False, batch: int = GPU_BATCH) -> RunPlan | None:
    """The run's flavor and batch size with its memory counted (module docstring); None when nothing can be counted
    (no config, or a CPU flavor: the table's choice stands). Raises TooLarge (a message for the submitter, with the
    numbers) when no flavor of the table holds the run, as choose_flavor does when none holds the weights."""
    flavor = choose_flavor(rules, params_billions, precision)
    if not isinstance(config, dict) or gpu_memory_gb(flavor) is None:
        return None
    tokens, thought = sequence_tokens(thinking_budget, may_think)
    weights = float(params_billions) * GB * _BYTES.get(precision, 2)
    per_row = kv_bytes_per_row(config, tokens, precision)
    extras = IMAGE_CACHE_BYTES

    def made(name: str, rows: int, choice: str) -> RunPlan:
        total = weights + per_row * rows + extras
        return RunPlan(name, None if rows == batch else rows, choice, weights / GB, per_row * rows / GB,
                       extras / GB, total / GB, float(gpu_memory_gb(name) or 0), tokens, thought)

    def fits(name: str, rows: int) -> bool:
        room = gpu_memory_gb(name)
        return room is not None and weights + per_row * rows + extras <= room * GB * HEADROOM

    if fits(flavor, batch):
        return made(flavor, batch, "fits")
    rows = batch
    while rows > 1:
        rows //= 2
        if fits(flavor, rows):
            return made(flavor, rows, "smaller batch")
    names = [rule.flavor for rule in rules]
    for name in names[names.index(flavor) + 1:]:
        rows = batch
        while rows >= 1:
            if fits(name, rows):
                return made(name, rows, "larger flavor")
            rows //= 2
    largest = names[-1]
    need = (weights + per_row + extras) / GB
    raise TooLarge(f"{params_billions:.4g} B parameters fit the hardware, but the run does not: its weights take "
                   f"{weights / GB:.1f} GB and its KV cache {per_row / GB:.1f} GB per request at {tokens} tokens "
                   f"({'with a thinking budget of ' + str(thought) + ' tokens, ' if thought else ''}the longest "
                   f"prompt and answer), {need:.1f} GB at one request at a time, more than the "
                   f"{(gpu_memory_gb(largest) or 0) * HEADROOM:.0f} GB this leaderboard's largest hardware "
                   f"({largest}) can plan on; it cannot be evaluated here.")


def may_think(side_configs: dict, files: list[str] | None = None) -> bool:
    """Whether a model may think, from its tokenizer_config.json: thought markers among its added tokens or in its
    chat template (evaluator.models.thinking.KNOWN_MARKERS)."""
    tokenizer = side_configs.get("tokenizer_config.json") if isinstance(side_configs, dict) else None
    if not isinstance(tokenizer, dict):
        return False
    added = tokenizer.get("added_tokens_decoder")
    vocabulary = [str(entry.get("content")) for entry in added.values() if isinstance(entry, dict)] \
        if isinstance(added, dict) else []
    template = tokenizer.get("chat_template")
    template = template if isinstance(template, str) else " ".join(
        str(t.get("template", "")) for t in template if isinstance(t, dict)) if isinstance(template, list) else ""
    return api.thought_markers(template, vocabulary) is not None


def as_plan(record) -> RunPlan | None:
    """A request's stored run_plan read back (None when absent or damaged)."""
    if not isinstance(record, dict):
        return None
    try:
        plan = RunPlan(**{key: record[key] for key in RunPlan.__dataclass_fields__})
    except (KeyError, TypeError):
        return None
    ok = isinstance(plan.flavor, str) and (plan.batch_size is None or (isinstance(plan.batch_size, int)
                                                                       and not isinstance(plan.batch_size, bool)
                                                                       and plan.batch_size >= 1))
    return plan if ok else None


def planned_flavor(settings, request) -> tuple[str, int | None]:
    """The flavor a request's Job runs on and the batch size it runs at (None: the Space's): its run_plan's, when the
    plan names a flavor of today's table, else the table's choice from the weights (job_flavors.flavor_for: TooLarge
    and ValueError as there)."""
    from leaderboard.running.job_flavors import flavor_for, parse_flavors

    plan = as_plan(getattr(request, "run_plan", None))
    if plan is not None and plan.flavor in {rule.flavor for rule in parse_flavors(settings.jobs_flavors)}:
        return plan.flavor, plan.batch_size
    return flavor_for(settings, request.params_billions, request.precision), None
