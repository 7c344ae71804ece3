"""One Settings object, read from environment variables, with embedded defaults.

Every variable is listed in the README's table. `Settings.from_env()` is the only place the
environment is read; everything else receives a Settings object.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

# name of the field -> (environment variable, default as text, description). The README table mirrors this.
ENV_VARS: dict[str, tuple[str, str, str]] = {
    "home": ("LEADERBOARD_HOME", "./leaderboard-data", "folder of the local store, the run folders and logs"),
    "store_backend": ("LEADERBOARD_STORE", "local", "`local` (a folder) or `hub` (Hub dataset repos)"),
    "requests_repo": ("LEADERBOARD_REQUESTS_REPO", "", "Hub dataset repo for requests (hub store)"),
    "results_repo": ("LEADERBOARD_RESULTS_REPO", "", "Hub dataset repo for results, details and leaderboard.parquet (hub store)"),
    "hf_token": ("HF_TOKEN", "", "token for the Hub store and gated-model checks; never logged"),
    "host": ("LEADERBOARD_HOST", "127.0.0.1", "address the Space listens on (0.0.0.0 when SPACE_ID is set, as on a Hugging Face Space)"),
    "port": ("LEADERBOARD_PORT", "7860", "port the Space listens on"),
    "run_scheduler": ("LEADERBOARD_RUN_SCHEDULER", "1", "start the background evaluator inside the Space (0: UI only)"),
    "scheduler_interval": ("LEADERBOARD_SCHEDULER_INTERVAL", "60", "seconds between scheduler ticks"),
    "lease_seconds": ("LEADERBOARD_LEASE_SECONDS", "600", "lease length; the heartbeat renews it while the worker runs"),
    "heartbeat_seconds": ("LEADERBOARD_HEARTBEAT_SECONDS", "", "seconds between heartbeats and progress updates "
                          "(default: 5 with the local store, 60 with the Hub store, where each one is a commit)"),
    "max_attempts": ("LEADERBOARD_MAX_ATTEMPTS", "3", "lease expiries or worker kills before a request is FAILED"),
    "max_run_seconds": ("LEADERBOARD_MAX_RUN_SECONDS", "21600", "a worker running longer is stopped and the request FAILED"),
    "suite": ("LEADERBOARD_SUITE", "sample", "`sample` (shipped with the project) or `full` (downloaded)"),
    "benchmarks": ("LEADERBOARD_BENCHMARKS", "cure", "comma-separated benchmarks run for each request"),
    "options": ("LEADERBOARD_OPTIONS", "", "benchmark options for every run, comma-separated `key=value` (e.g. "
                "`cure.mode=generation,simpleqa.grader=letter,simpleqa.samples=10`)"),
    "limit": ("LEADERBOARD_LIMIT", "0", "items per benchmark (0: all)"),
    "allow_local_models": ("LEADERBOARD_ALLOW_LOCAL_MODELS", "", "accept local model folders (default: on with the local store)"),
    "max_params_billions": ("LEADERBOARD_MAX_PARAMS_B", "15", "largest model accepted, in billions of parameters"),
    "judge": ("LEADERBOARD_JUDGE", "", "judge spec: `local:<id or dir>` or `endpoint:<base url>|<model>`"),
    "judge_token": ("LEADERBOARD_JUDGE_TOKEN", "", "bearer token for an endpoint judge (default: HF_TOKEN); never logged"),
    "cure_full": ("LEADERBOARD_CURE_FULL", "https://raw.githubusercontent.com/Yangyi-Chen/CoTConsistency/main/cot_consistency_eval.jsonl",
                  "the full CURE suite: a URL, a local path or `hf://datasets/<org>/<name>/<file>`"),
    "simpleqa_full": ("LEADERBOARD_SIMPLEQA_FULL",
                      "https://openaipublic.blob.core.windows.net/simple-evals/simple_qa_test_set.csv",
                      "the full SimpleQA suite (the official CSV): a URL, a local path or `hf://datasets/...`"),
    "lave_vqa": ("LEADERBOARD_LAVE_VQA", "", "a VQA v2-style file added to the full LAVE suite (beside Docmatix): "
                 "JSON or JSON lines of question_id, image, question, answers; a URL, a local path or `hf://datasets/...`"),
    "image_cache": ("LEADERBOARD_IMAGE_CACHE", "", "where downloaded benchmark images are cached (default: `<home>/cache/images`)"),
    "batch_size": ("LEADERBOARD_BATCH_SIZE", "auto", "generation batch size, or `auto` (64 on a GPU, backing off "
                   "by halves on out-of-memory; 4 on the CPU)"),
    "max_pending_per_user": ("LEADERBOARD_MAX_PENDING_PER_USER", "5", "pending requests one submitter may have at once"),
    "python": ("LEADERBOARD_PYTHON", "", "Python used for the worker subprocess (default: this interpreter)"),
    "playground_per_minute": ("LEADERBOARD_PLAYGROUND_PER_MINUTE", "6",
                              "judge playground: gradings one browser session may ask for per minute"),
    "playground_max_chars": ("LEADERBOARD_PLAYGROUND_MAX_CHARS", "2000",
                             "judge playground: longest question, gold answer or candidate answer accepted (characters)"),
}


def _flag(text: str) -> bool:
    return text.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    """Everything configurable about the Space and the evaluator."""

    home: Path = Path("./leaderboard-data")
    store_backend: str = "local"
    requests_repo: str = ""
    results_repo: str = ""
    hf_token: str = field(default="", repr=False)
    host: str = "127.0.0.1"
    port: int = 7860
    run_scheduler: bool = True
    scheduler_interval: float = 60.0
    lease_seconds: float = 600.0
    heartbeat_seconds: float = 5.0
    max_attempts: int = 3
    max_run_seconds: float = 21600.0
    suite: str = "sample"
    benchmarks: tuple[str, ...] = ("cure",)
    options: tuple[str, ...] = ()  # "key=value" benchmark options passed to every run
    limit: int = 0
    allow_local_models: bool = True
    max_params_billions: float = 15.0
    judge: str = ""
    judge_token: str = field(default="", repr=False)
    cure_full: str = ENV_VARS["cure_full"][1]
    simpleqa_full: str = ENV_VARS["simpleqa_full"][1]
    lave_vqa: str = ENV_VARS["lave_vqa"][1]
    image_cache: Path | None = None
    batch_size: str = "auto"  # a positive integer as text, or "auto"
    max_pending_per_user: int = 5
    python: str = ""
    playground_per_minute: int = 6
    playground_max_chars: int = 2000

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides) -> "Settings":
        """Read every variable in ENV_VARS; unset variables take the embedded default."""
        env = os.environ if environ is None else environ
        raw = {name: env.get(var, default) for name, (var, default, _) in ENV_VARS.items()}
        if "LEADERBOARD_HOST" not in env and "SPACE_ID" in env:  # on a Hugging Face Space, listen on all interfaces
            raw["host"] = "0.0.0.0"
        backend = raw["store_backend"].strip().lower() or "local"
        allow_local = _flag(raw["allow_local_models"]) if raw["allow_local_models"].strip() else backend == "local"
        values = dict(
            home=Path(raw["home"]).expanduser(),
            store_backend=backend,
            requests_repo=raw["requests_repo"].strip(),
            results_repo=raw["results_repo"].strip(),
            hf_token=raw["hf_token"].strip(),
            host=raw["host"].strip(),
            port=int(raw["port"]),
            run_scheduler=_flag(raw["run_scheduler"]),
            scheduler_interval=float(raw["scheduler_interval"]),
            lease_seconds=float(raw["lease_seconds"]),
            heartbeat_seconds=float(raw["heartbeat_seconds"] or (5 if backend == "local" else 60)),
            max_attempts=int(raw["max_attempts"]),
            max_run_seconds=float(raw["max_run_seconds"]),
            suite=raw["suite"].strip().lower(),
            benchmarks=tuple(b.strip() for b in raw["benchmarks"].split(",") if b.strip()),
            options=tuple(o.strip() for o in raw["options"].split(",") if o.strip()),
            limit=int(raw["limit"]),
            allow_local_models=allow_local,
            max_params_billions=float(raw["max_params_billions"]),
            judge=raw["judge"].strip(),
            judge_token=raw["judge_token"].strip(),
            cure_full=raw["cure_full"].strip(),
            simpleqa_full=raw["simpleqa_full"].strip(),
            lave_vqa=raw["lave_vqa"].strip(),
            image_cache=Path(raw["image_cache"]).expanduser() if raw["image_cache"].strip() else None,
            batch_size=raw["batch_size"].strip().lower() or "auto",
            max_pending_per_user=int(raw["max_pending_per_user"]),
            python=raw["python"].strip(),
            playground_per_minute=int(raw["playground_per_minute"]),
            playground_max_chars=int(raw["playground_max_chars"]),
        )
        values.update(overrides)
        settings = cls(**values)
        settings.check()
        return settings

    def check(self) -> None:
        """Refuse settings that cannot work, with a message naming the variable."""
        if self.store_backend not in {"local", "hub"}:
            raise ValueError(f"LEADERBOARD_STORE must be 'local' or 'hub', not {self.store_backend!r}")
        if self.store_backend == "hub" and not self.results_repo:
            raise ValueError("LEADERBOARD_STORE=hub needs LEADERBOARD_RESULTS_REPO")
        if self.suite not in {"sample", "full"}:
            raise ValueError(f"LEADERBOARD_SUITE must be 'sample' or 'full', not {self.suite!r}")
        if self.lease_seconds <= self.heartbeat_seconds:
            raise ValueError("LEADERBOARD_LEASE_SECONDS must be longer than LEADERBOARD_HEARTBEAT_SECONDS")
        if self.max_attempts < 1:
            raise ValueError("LEADERBOARD_MAX_ATTEMPTS must be at least 1")
        for option in self.options:
            if "=" not in option or not option.split("=", 1)[0].strip():
                raise ValueError(f"LEADERBOARD_OPTIONS takes comma-separated key=value pairs, not {option!r}")
        if self.batch_size != "auto" and not (self.batch_size.isdigit() and int(self.batch_size) > 0):
            raise ValueError(f"LEADERBOARD_BATCH_SIZE must be a positive integer or 'auto', not {self.batch_size!r}")
        if self.playground_per_minute < 1:
            raise ValueError("LEADERBOARD_PLAYGROUND_PER_MINUTE must be at least 1")
        if self.playground_max_chars < 1:
            raise ValueError("LEADERBOARD_PLAYGROUND_MAX_CHARS must be at least 1")

    def with_(self, **changes) -> "Settings":
        """A copy with some fields changed (tests and the CLI use this)."""
        return replace(self, **changes)

    @property
    def runs_dir(self) -> Path:
        """Where each worker writes its output folder and log."""
        return self.home / "runs"

    @property
    def images_dir(self) -> Path:
        return self.image_cache or (self.home / "cache" / "images")


def field_names() -> list[str]:
    return [f.name for f in fields(Settings)]
