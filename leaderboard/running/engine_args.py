"""vLLM as a Job's engine (LEADERBOARD_ENGINE=vllm), the Space's side: the image a Job runs, its setup, the
`vllm serve` line it starts and the command that wraps it (the Job's side is leaderboard.running.engine_job).

- The image is vLLM's published one, pinned once (api.VLLM_IMAGE, the version docs/models.md's vLLM column is read
  for), whatever LEADERBOARD_JOBS_IMAGE says: what vLLM serves depends on its version. This project is not in it,
  so the Job first runs LEADERBOARD_JOBS_SETUP or, when that is empty, `default_setup`: this Space's repository
  downloaded (`hf download --repo-type space <SPACE_ID>`) and its requirements installed into a virtual environment
  of their own (vLLM's own packages are left as they are), whose `python` then runs the wrapper; `vllm` is the
  image's.
- The server: `vllm serve <model> --revision <the request's commit>` on 127.0.0.1:PORT, named after the model, with
  the request's precision as `--dtype`, the plan's context length as `--max-model-len` (context_length), as many
  sequences as requests in flight (in_flight), the most images the run's benchmarks put in one prompt
  (`--limit-mm-per-prompt`, a vision model only), the reasoning parser of a family that thinks (REASONING_PARSERS),
  every GPU of the flavor (`--tensor-parallel-size`) and vLLM's own sampling defaults (`--generation-config vllm`: the
  benchmark decides decoding, never the model's generation_config.json, as in-process). Never `--trust-remote-code`;
  the Hub token reaches vLLM only as the HF_TOKEN Job secret, in its environment.
"""
from __future__ import annotations

import json
import shlex

from evaluator import api
from leaderboard.running.job_flavors import gpu_count
from leaderboard.running.run_memory import GPU_BATCH, as_plan, sequence_tokens
from leaderboard.settings import Settings
from leaderboard.submissions.records import Request

VLLM_IMAGE = api.VLLM_IMAGE  # pinned once, in the evaluator (evaluator/models/vllm_models.py: docs/models.md's column)
PORT = 8000  # the server's port on the Job's loopback
APP_DIR = "/tmp/leaderboard-app"  # where the default setup puts this Space's repository
VENV = "/tmp/leaderboard-venv"  # and the virtual environment of its requirements
ENTRY = "leaderboard.running.engine_job"
# architecture (as a request records it) -> vLLM's reasoning parser for the families that think (names vLLM registers
# since 0.10, https://docs.vllm.ai/en/v0.11.2/features/reasoning_outputs/: qwen3 for Qwen3 and Qwen3-VL, glm45 for
# GLM-4.5, GLM-4.5V and GLM-4.1V-Thinking's <think> blocks)
REASONING_PARSERS = {
    "Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3",
    "Qwen3VLForConditionalGeneration": "qwen3", "Qwen3VLMoeForConditionalGeneration": "qwen3",
    "Glm4MoeForCausalLM": "glm45", "Glm4vForConditionalGeneration": "glm45",
    "Glm4vMoeForConditionalGeneration": "glm45",
}
DTYPES = {"auto": "auto", "float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}  # precision -> --dtype


def uses_vllm(settings: Settings) -> bool:
    return settings.engine == "vllm"


def job_image(settings: Settings) -> str:
    """The image a request's Job runs: the pinned vLLM image for the vLLM engine, else LEADERBOARD_JOBS_IMAGE."""
    return VLLM_IMAGE if uses_vllm(settings) else settings.jobs_image


def default_setup(settings: Settings) -> str:
    """The vLLM engine's setup when LEADERBOARD_JOBS_SETUP is empty: this Space's repository and its requirements, in
    a virtual environment put first on PATH (`vllm` stays the image's). uv is the image's (installed if missing);
    UV_TORCH_BACKEND=cpu takes PyTorch's CPU wheels, enough for the evaluator, which only asks the server."""
    venv_python = f"{VENV}/bin/python"
    return " && ".join([
        f"hf download --repo-type space {shlex.quote(settings.space_id)} --local-dir {APP_DIR} --quiet > /dev/null",
        f"cd {APP_DIR}",
        "(command -v uv > /dev/null || python3 -m pip install --quiet uv)",
        f"uv venv --quiet {VENV}",
        f"UV_TORCH_BACKEND=cpu uv pip install --quiet --python {venv_python} -r requirements.txt",
        f"export PATH={VENV}/bin:$PATH"])


def setup(settings: Settings) -> str:
    """The shell command a Job runs before the evaluation ('' for none)."""
    if settings.jobs_setup or not uses_vllm(settings):
        return settings.jobs_setup
    return default_setup(settings)


def context_length(settings: Settings, request: Request) -> int:
    """The plan's context length: the longest sequence its run plan counted per row (the suites' longest prompt, the
    largest answer budget and, for a model that may think, the thinking budget; run_memory); a request planned
    before plans were recorded counts the thinking budget (an upper bound)."""
    plan = as_plan(request.run_plan)
    if plan is not None and isinstance(plan.tokens, int) and plan.tokens > 0:
        return plan.tokens
    return sequence_tokens(int(settings.thinking_budget.strip() or 0), True)[0]


def in_flight(settings: Settings, batch: int | None) -> int:
    """Requests in flight: the plan's batch size, else the Space's batch size when it is a number, else the GPU
    batch the plan prices (64)."""
    if batch:
        return int(batch)
    return int(settings.batch_size) if settings.batch_size.isdigit() else GPU_BATCH


def images_per_prompt(settings: Settings, request: Request) -> int:
    """The most images one prompt of the run holds (0: a text-only model, or no benchmark sends one)."""
    if api.architecture_has_vision(request.architecture) is False:
        return 0
    options = {key.strip(): value.strip() for key, _, value in (option.partition("=") for option in settings.options)}
    return api.images_per_prompt(settings.benchmarks, settings.suite, options, settings.sources)


def served_name(request: Request) -> str:
    """The name the server answers to: the request's model id."""
    return request.model


def vllm_serve_args(settings: Settings, request: Request, flavor: str = "", batch: int | None = None) -> list[str]:
    """`vllm serve ...` for a request (module docstring); a local folder's request serves the folder unpinned."""
    model = request.local_path if request.source == "local" and request.local_path else request.model
    args = ["vllm", "serve", model]
    if request.source != "local":
        args += ["--revision", request.revision, "--tokenizer-revision", request.revision]
    flight = in_flight(settings, batch)
    args += ["--host", "127.0.0.1", "--port", str(PORT), "--served-model-name", served_name(request),
             "--dtype", DTYPES.get(request.precision, "auto"),
             "--max-model-len", str(context_length(settings, request)), "--max-num-seqs", str(flight)]
    images = images_per_prompt(settings, request)
    if images:
        args += ["--limit-mm-per-prompt", json.dumps({"image": images}, separators=(",", ":"))]
    parser = REASONING_PARSERS.get(request.architecture or "")
    if parser:
        args += ["--reasoning-parser", parser]
    gpus = gpu_count(flavor) if flavor and not flavor.startswith("cpu-") else 1
    if gpus > 1:
        args += ["--tensor-parallel-size", str(gpus)]
    return args + ["--generation-config", "vllm", "--disable-uvicorn-access-log"]


def engine_command(settings: Settings, request: Request, owner: str, flavor: str = "",
                   batch: int | None = None) -> list[str]:
    """The wrapper's command line: it starts the server, waits for its health, evaluates against it, stops it."""
    timeout = max(60, int(settings.jobs_timeout_margin))
    return ["python", "-m", ENTRY, "--request", request.path, "--owner", owner, "--port", str(PORT),
            "--name", served_name(request), "--health-timeout", str(timeout), "--",
            *vllm_serve_args(settings, request, flavor, batch)]
