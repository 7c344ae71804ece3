"""One Settings object, read from environment variables, with embedded defaults.

Each setting is declared once, as a field of `Settings`: its environment variable, its default (as the text the
variable would hold), what it sets, and how the text is read. The benchmarks' data locations are declared by the
benchmarks themselves (their cards' sources) and land in `Settings.sources`. `Settings.from_env()` is the only
place the environment is read; everything else receives a Settings object. The settings table of docs/deploying.md
is `declared()`, written by tools/settings_table.py.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from evaluator import api
from leaderboard.settings import readers as read
from leaderboard.settings.readers import is_loopback, setting  # noqa: F401 - is_loopback read from here too

# the variables a Hugging Face Space with `hf_oauth: true` gets; Gradio's real sign-in needs all four
OAUTH_VARIABLES = ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL")


@dataclass(frozen=True)
class Settings:
    """Everything configurable about the Space and the evaluator."""

    home: Path = setting("LEADERBOARD_HOME", "./leaderboard-data",
                         "folder of the local store, the run folders and logs", read.path)
    store_backend: str = setting("LEADERBOARD_STORE", "local", "`local` (a folder) or `hub` (Hub dataset repos)",
                                 read.lower)
    requests_repo: str = setting("LEADERBOARD_REQUESTS_REPO", "", "Hub dataset repo for requests (hub store)")
    results_repo: str = setting("LEADERBOARD_RESULTS_REPO", "",
                                "Hub dataset repo for results, details and leaderboard.parquet (hub store)")
    hf_token: str = setting("HF_TOKEN", "", "token for the Hub store and gated-model checks; never logged",
                            secret=True)
    space_id: str = setting("SPACE_ID", "", "the Hugging Face Space this deployment runs as (`<owner>/<name>`, set by "
                            "the Hub on a Space and passed on to its Jobs): the results dataset's card links to it")
    host: str = setting("LEADERBOARD_HOST", "127.0.0.1", "address the Space listens on (0.0.0.0 on a Hugging Face "
                        "Space, where SYSTEM=spaces and SPACE_ID are set)")
    port: int = setting("LEADERBOARD_PORT", "7860", "port the Space listens on (when unset, `GRADIO_SERVER_PORT` is "
                        "honoured too)", int)
    run_scheduler: bool = setting("LEADERBOARD_RUN_SCHEDULER", "1",
                                  "start the background evaluator inside the Space (0: UI only)", read.flag)
    scheduler_interval: float = setting("LEADERBOARD_SCHEDULER_INTERVAL", "60", "seconds between scheduler ticks",
                                        float)
    lease_seconds: float = setting("LEADERBOARD_LEASE_SECONDS", "600",
                                   "lease length; the worker renews it while it runs (a Hugging Face Job's lease lasts its "
                                   "timeout plus 10 minutes, and the Space extends it while the Jobs API says the Job "
                                   "is live)", float)
    heartbeat_seconds: float | None = setting(
        "LEADERBOARD_HEARTBEAT_SECONDS", "", "seconds between the worker's checks on its run (default: 5 with the "
        "local store, 60 with the Hub store); the lease and progress are written at each one on the local store, "
        "every third of the lease on the Hub store, where each write is a commit", read.optional_float)
    max_attempts: int = setting("LEADERBOARD_MAX_ATTEMPTS", "3",
                                "lease expiries or worker kills before a request is FAILED", int)
    max_run_seconds: float = setting("LEADERBOARD_MAX_RUN_SECONDS", "21600",
                                     "a worker running longer is stopped and the request FAILED (timed out; "
                                     "not retried)", float)
    suite: str = setting("LEADERBOARD_SUITE", "sample",
                         "`sample` (the project's own small synthetic suites, shipped with it: for trying the "
                         "machinery), `lite` (a seeded, stratified subset of each benchmark's full suite, downloaded: "
                         "fewer items and wider intervals, its rule's version recorded in every lite run; see About) "
                         "or `full` (the benchmarks' complete data, downloaded: what a public deployment needs for "
                         "numbers comparable with the papers)", read.lower)
    benchmarks: tuple[str, ...] = setting("LEADERBOARD_BENCHMARKS", ",".join(api.DEFAULT_BENCHMARKS),
                                          "comma-separated benchmarks run for each request (see About)", read.csv)
    options: tuple[str, ...] = setting("LEADERBOARD_OPTIONS", "", "benchmark options for every run, comma-separated "
                                       "`<benchmark>.<option>=value` (each benchmark's options are listed on About)",
                                       read.csv)
    limit: int = setting("LEADERBOARD_LIMIT", "0", "items per benchmark (0: all)", int)
    require_sign_in: bool | None = setting("LEADERBOARD_REQUIRE_SIGN_IN", "", "submitting and cancelling need "
                                           "\"Sign in with Hugging Face\" (default: on when SPACE_ID is set, as on a "
                                           "Space; off, the person at the keyboard is the local user, an admin)",
                                           read.optional_flag)
    mock_sign_in: bool = setting("LEADERBOARD_MOCK_SIGN_IN", "", "local development only: with sign-in required "
                                 "off a Hugging Face Space, use Gradio's mock sign-in (everyone who signs in is this "
                                 "machine's Hub user, never an admin; the Space listens on 127.0.0.1 only)", read.flag)
    session_hours: float = setting("LEADERBOARD_SESSION_HOURS", "8", "with sign-in: the longest a sign-in lasts, "
                                   "in hours, counted from signing in with Hugging Face and never extended by use; "
                                   "logging out ends every session of that user at once", float)
    admins: tuple[str, ...] = setting("LEADERBOARD_ADMINS", "", "Hub user names of the admins, comma-separated: they "
                                      "may cancel any pending request, re-queue a failed one, hide a run from the "
                                      "board and submit local model folders", read.csv)
    allow_local_models: bool | None = setting("LEADERBOARD_ALLOW_LOCAL_MODELS", "",
                                              "accept local model folders, from admins only (default: on with the "
                                              "local store when sign-in is off)", read.optional_flag)
    local_models_root: Path | None = setting("LEADERBOARD_LOCAL_MODELS_ROOT", "", "the folder local models must be "
                                             "under (needed when local folders are on with sign-in; default: "
                                             "anywhere)", read.optional_path)
    max_params_billions: float = setting("LEADERBOARD_MAX_PARAMS_B", "15",
                                         "largest model accepted, in billions of parameters", float)
    judge: str = setting("LEADERBOARD_JUDGE", "", "judge spec: `local:<id or dir>` or `endpoint:<base url>|<model>`")
    judge_stall_seconds: float = setting("LEADERBOARD_JUDGE_STALL_SECONDS", "600", "Queue: a run grading whose judge "
                                         "has graded nothing for this many seconds says `judge silent for 12 min (no "
                                         "grade since 18:02 UTC)` in its progress, in place of its speed and ETA (0: "
                                         "never)", float)
    judge_token: str = setting("LEADERBOARD_JUDGE_TOKEN", "",
                               "bearer token for an endpoint judge (default: HF_TOKEN); never logged", secret=True)
    model_token: str = setting(api.MODEL_TOKEN_SETTING, "", "bearer token of the served models' endpoints (the "
                               "OpenAI-compatible endpoints admins add in the Queue tab); handed to the evaluator by "
                               "environment only, never to a Hugging Face Job; never logged", secret=True)
    endpoint_deadline: float = setting("LEADERBOARD_ENDPOINT_DEADLINE", "300", "seconds one call to a served model "
                                       "or to an endpoint judge may take in all (connecting, sending, every byte of "
                                       "the answer, and its retries; above 0, at most 86400, a day); a call past it "
                                       "fails at once with one line: a served run ends, a run whose judge stalls ends "
                                       "(its answers so far are kept for the retry); the Playground waits at most "
                                       "120 s", float)
    endpoint_max_reply_mb: float = setting("LEADERBOARD_ENDPOINT_MAX_REPLY_MB", "8", "the most megabytes (0.001 to "
                                           "1024) a served model's or an endpoint judge's answer may hold; a larger "
                                           "one is refused with one line, not asked again", float)
    image_cache: Path | None = setting("LEADERBOARD_IMAGE_CACHE", "", "where downloaded benchmark images are cached "
                                       "(default: `<home>/cache/images`)", read.optional_path)
    batch_size: str = setting("LEADERBOARD_BATCH_SIZE", "auto", "generation batch size, or `auto` (64 on a GPU, "
                              "backing off by halves on out-of-memory; 4 on the CPU)", read.lower)
    generation_cache: str = setting("LEADERBOARD_GENERATION_CACHE", "auto", "how models generate: `auto` (a static "
                                    "KV cache with a compiled decode step on a GPU, the dynamic cache on the CPU), "
                                    "`static` (static everywhere, compiled on a GPU) or `dynamic`; a model whose "
                                    "static cache or compile fails falls back to dynamic for that run, recorded",
                                    read.lower)
    thinking: str = setting("LEADERBOARD_THINKING", "auto", "Submit's default thinking for a template with an "
                            "enable_thinking switch: `auto` (its default), `on` or `off`; a request keeps its own (on/off "
                            "in its key) and older ones run with this; rows are tagged as they ran", read.lower)
    thinking_budget: str = setting("LEADERBOARD_THINKING_BUDGET", "4096", "tokens a thinking model may spend on its "
                                   "thought beyond each benchmark's answer budget; a reply whose thought runs past it "
                                   "has no answer and is counted per benchmark")
    compile_cache: Path | None = setting("LEADERBOARD_COMPILE_CACHE", "", "where PyTorch keeps the compiled decode "
                                         "steps for the next run (default: `<home>/cache/torch-compile`; a Job's "
                                         "home is its working folder, so there it lasts one Job unless this names "
                                         "mounted storage); checked at start (a folder, or one that can be made), "
                                         "and made only by a run that compiles (on a GPU)", read.optional_path)
    device: str = setting("LEADERBOARD_DEVICE", "auto", "where models run: `auto` (a CUDA GPU when usable, else the "
                          "CPU, said once in a `device:` line and recorded in the results; a warning where a GPU was "
                          "expected), `cuda` (a GPU, or the run fails at once saying why) or `cpu`", read.lower)
    min_coverage: float = setting("LEADERBOARD_MIN_COVERAGE", "95", "board: a run that scored fewer than this "
                                  "percentage of a benchmark's items (or used a limit) is flagged and not ranked with "
                                  "complete runs", float)
    explorer_cache_runs: int = setting("LEADERBOARD_EXPLORER_CACHE_RUNS", "8", "explorer: how many runs' details "
                                       "(per benchmark) are kept in memory", int)
    max_pending_per_user: int = setting("LEADERBOARD_MAX_PENDING_PER_USER", "5",
                                        "pending requests one submitter may have at once", int)
    max_submissions_per_week: int = setting("LEADERBOARD_MAX_SUBMISSIONS_PER_WEEK", "10",
                                            "submissions one submitter may make in any 7 days", int)
    max_pending_per_org: int = setting("LEADERBOARD_MAX_PENDING_PER_ORG", "0", "pending requests of one model "
                                       "organisation at once, whoever submitted them (0: no limit)", int)
    executor: str = setting("LEADERBOARD_EXECUTOR", "local", "how evaluations run: `local` (a subprocess of this "
                            "machine, one at a time) or `hf-jobs` (one Hugging Face Job per request, with the Hub "
                            "store)", read.lower)
    engine: str = setting("LEADERBOARD_ENGINE", "transformers", "hf-jobs: what runs the model in a Job: "
                          "`transformers` (in-process, the evaluator's own adapter) or `vllm` (vLLM's published "
                          "image, pinned, serves the model on the Job's loopback and the evaluator asks it; GPU "
                          "flavors only; see docs/jobs.md)", read.lower)
    jobs_max: int = setting("LEADERBOARD_JOBS_MAX", "4", "hf-jobs: evaluations running at once", int)
    jobs_namespace: str = setting("LEADERBOARD_JOBS_NAMESPACE", "", "hf-jobs: the user or organisation the Jobs run "
                                  "(and are billed) under (default: the owner of HF_TOKEN)")
    jobs_flavors: tuple[str, ...] = setting(
        "LEADERBOARD_JOBS_FLAVORS", "3=t4-small,15=l40sx1,35=a100-large,70=l40sx4",
        "hf-jobs: the hardware per model size, comma-separated `<billions of parameters at 16 bits>=<flavor>`, "
        "smallest first (a float32 model counts double); a larger model is refused at submission", read.csv)
    jobs_image: str = setting("LEADERBOARD_JOBS_IMAGE", "", "hf-jobs: the Docker image the Jobs run (default: this "
                              "Space's own image, `hf.co/spaces/<SPACE_ID>`, so a Job runs the Space's code; the "
                              "vllm engine runs its pinned vLLM image instead)")
    jobs_cache_bucket: str = setting("LEADERBOARD_JOBS_CACHE_BUCKET", "", "hf-jobs: a Hub storage bucket "
                                     "(`<owner>/<name>`, each part named as the Hub names repositories, in the Jobs' "
                                     "namespace or one its token may write) every Job "
                                     "mounts read-write at /leaderboard-cache: its compile cache lives there, so a "
                                     "later Job reuses the compiled decode steps (default: none; a Job's cache lasts "
                                     "that Job)")
    jobs_setup: str = setting("LEADERBOARD_JOBS_SETUP", "", "hf-jobs: a shell command run in the Job before the "
                              "evaluation (for an image without this project: fetch it and install its "
                              "requirements; default: none, and with the vllm engine: download this Space "
                              "(SPACE_ID) and install its requirements in a virtual environment)")
    jobs_timeout_margin: float = setting("LEADERBOARD_JOBS_TIMEOUT_MARGIN", "900", "hf-jobs: seconds a Job may run "
                                         "beyond LEADERBOARD_MAX_RUN_SECONDS (starting, loading, publishing) before "
                                         "the platform stops it: its timeout is the sum; a Job stopped by it is "
                                         "FAILED, not retried", float)
    jobs_budget_usd: float | None = setting(
        "LEADERBOARD_JOBS_BUDGET_USD", "", "hf-jobs: the most the Jobs may cost, in US dollars, over the last "
        "`LEADERBOARD_JOBS_BUDGET_DAYS`: before a Job starts, its worst case (its flavor's price x its timeout) is "
        "reserved in the ledger `requests/.jobs-budget.json`, and it starts only if that fits beside what the window's "
        "Jobs cost and what the running ones reserved; otherwise its request waits PENDING (no attempt spent) and the "
        "Queue says until about when. A request whose plan (its projected cost, python -m evaluator plan) is over the "
        "whole budget is refused at submission, and failed with the numbers if it reaches the queue. Empty: no cap (a "
        "warning at start on a Space); 0: no Job starts",
        read.optional_float)
    jobs_budget_days: float = setting("LEADERBOARD_JOBS_BUDGET_DAYS", "30", "hf-jobs: the rolling window of "
                                      "`LEADERBOARD_JOBS_BUDGET_USD`, in days", float)
    commit_budget: int = setting("LEADERBOARD_COMMIT_BUDGET", "100", "Hub store: commits per repository in any hour, "
                                 "counted from the repository's own history whoever made them (the Hub allows about "
                                 "128); beyond it background writes wait and a submission is refused with the minutes "
                                 "to wait", int)
    hub_refresh_seconds: float = setting("LEADERBOARD_HUB_REFRESH_SECONDS", "15", "Hub store: how often the Space "
                                         "asks whether the repositories changed (one call each when nothing did; "
                                         "pages read what the Space already holds)", float)
    hub_cache_mb: float = setting("LEADERBOARD_HUB_CACHE_MB", "256", "Hub store: memory for large files read from "
                                  "the Hub (details parquet files, the board), least recently used out", float)
    squash_after_commits: int = setting("LEADERBOARD_SQUASH_AFTER_COMMITS", "2000", "Hub store: once the requests "
                                        "repository's history is longer than this, the scheduler squashes it into "
                                        "one commit (files unchanged; 0: never)", int)
    python: str = setting("LEADERBOARD_PYTHON", "", "Python used for the worker subprocess (default: this interpreter)")
    delete_models: bool | None = setting(
        "LEADERBOARD_DELETE_MODELS", "", "local executor: after a run, delete from this machine's Hugging Face Hub "
        "cache the model revisions this leaderboard itself downloaded (recorded before the download in "
        "`<LEADERBOARD_HOME>/cache/downloaded-models.json`; never a revision that was in the cache before, never the "
        "local judge's model, however it is named, never datasets) that no pending or running request needs (same "
        "model and revision); each deletion is one line on the console. Default: on on a Hugging Face Space, whose "
        "disk is the Space's; off everywhere else, where the Hub cache is the user's own. A Hugging Face Job frees "
        "nothing: its disk goes with it", read.optional_flag)
    keep_models_gb: float = setting("LEADERBOARD_KEEP_MODELS_GB", "0", "local executor, with "
                                    "`LEADERBOARD_DELETE_MODELS` on: of the revisions it would delete, the most "
                                    "recently run ones that fit in this many GB (10^9 bytes) are kept", float)
    gpu_price_per_hour: float | None = setting("LEADERBOARD_GPU_PRICE_PER_HOUR", "", "local executor: US dollars an "
                                               "hour of this machine's GPU costs, for each run's recorded cost, "
                                               "`run.cost.usd` (a run on the CPU records its time, no cost; default: "
                                               "no cost recorded). A Job's price is the Hub's own, per flavor",
                                               read.optional_float)
    eval_datasets: tuple[str, ...] = setting(
        "LEADERBOARD_EVAL_DATASETS", "", "benchmarks' registered Hub datasets for model pages' evaluation results, "
        "besides or instead of their cards' (About lists them): comma-separated `<benchmark>=<dataset id>|<task "
        "id>|<metric>|percent` (or `fraction`), or `<benchmark>=off` for none", read.csv)
    eval_results_prs: str = setting("LEADERBOARD_EVAL_RESULTS_PRS", "on", "who may propose a run's results to its "
                                    "model page (a pull request on the model repo, opened with HF_TOKEN): `on` (any "
                                    "signed-in visitor), `admins` or `off`", read.lower)
    eval_prs_per_day: int = setting("LEADERBOARD_EVAL_PRS_PER_DAY", "20", "pull requests to model pages the whole "
                                    "Space may open in any 24 hours (besides 3 per person)", int)
    model_price_per_mtok: tuple[str, ...] = setting("LEADERBOARD_MODEL_PRICE_PER_MTOK", "", "served models: "
                                                    "`<input>,<output>` US dollars per million prompt and completion "
                                                    "tokens, for each served run's recorded cost (default: tokens "
                                                    "recorded, no cost)", read.csv)
    playground_per_minute: int = setting("LEADERBOARD_PLAYGROUND_PER_MINUTE", "6", "judge playground: gradings one "
                                         "signed-in user, and one client address, may ask for per minute", int)
    playground_budget_per_minute: int = setting("LEADERBOARD_PLAYGROUND_BUDGET_PER_MINUTE", "30", "judge playground: "
                                                "gradings the whole Space asks for per minute, from all visitors "
                                                "together", int)
    playground_anonymous: bool = setting("LEADERBOARD_PLAYGROUND_ANONYMOUS", "", "judge playground: with sign-in "
                                         "required, let visitors who are not signed in grade too (still under the "
                                         "per-address and whole-Space limits)", read.flag)
    proxy_hops: int | None = setting("LEADERBOARD_PROXY_HOPS", "", "proxies in front of the Space that add the "
                                     "client's address to X-Forwarded-For (default: 1 on a Hugging Face Space, 0 "
                                     "elsewhere: the connection's own address); the playground's limit per address "
                                     "reads the address the nearest of them saw", read.optional_int)
    max_file_size: str = setting("LEADERBOARD_MAX_FILE_SIZE", "1mb", "Gradio's per-file upload limit, a backstop "
                                 "only: the Space refuses every upload (no part of it takes files); digits and a "
                                 "unit, b, kb, mb or gb", read.file_size)
    playground_max_chars: int = setting("LEADERBOARD_PLAYGROUND_MAX_CHARS", "2000", "judge playground: longest "
                                        "question, gold answer or candidate answer accepted (characters)", int)
    # the benchmarks' data locations, by source key (declared by their cards: evaluator.api.sources())
    sources: dict[str, str] = field(default_factory=lambda: {s.key: s.default for s in api.sources()})
    # what the environment says of the platform (read by from_env, never set by a variable of ours): a Hugging Face
    # Space (SYSTEM=spaces with SPACE_ID, as Gradio tells), and which of the Space's OAuth variables are absent
    on_space: bool = False
    oauth_missing: tuple[str, ...] = OAUTH_VARIABLES

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides) -> "Settings":
        """Read every declared variable; unset variables take the embedded default."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            if "env" in f.metadata:
                raw = env.get(f.metadata["env"], f.metadata["default"])
                try:
                    values[f.name] = f.metadata["parse"](raw)
                except ValueError:
                    raise ValueError(f"{f.metadata['env']} has an unreadable value {raw!r}") from None
        values["sources"] = {s.key: env.get(s.setting, s.default).strip() for s in api.sources()}
        if "LEADERBOARD_PORT" not in env and "GRADIO_SERVER_PORT" in env:  # Gradio's own variable works too
            try:
                values["port"] = int(env["GRADIO_SERVER_PORT"])
            except ValueError:
                raise ValueError(f"GRADIO_SERVER_PORT has an unreadable value {env['GRADIO_SERVER_PORT']!r}") from None
        values["on_space"] = env.get("SYSTEM") == "spaces" and bool(env.get("SPACE_ID"))  # gradio.utils.get_space
        values["oauth_missing"] = tuple(name for name in OAUTH_VARIABLES if not env.get(name, "").strip())
        if values.get("delete_models") is None:  # a Space's disk is its own; anywhere else the Hub cache is the user's
            values["delete_models"] = values["on_space"]
        if values.get("require_sign_in") is None and env.get("SPACE_ID"):  # a Space: visitors sign in
            values["require_sign_in"] = True
        if not values.get("jobs_image") and env.get("SPACE_ID"):  # a Job runs this Space's own image
            values["jobs_image"] = f"hf.co/spaces/{env['SPACE_ID']}"
        if "LEADERBOARD_HOST" not in env and values["on_space"] and not values.get("mock_sign_in"):
            values["host"] = "0.0.0.0"  # on a Hugging Face Space, listen on all interfaces (its proxy is in front)
        values.update(overrides)
        settings = cls(**values)
        settings.check()
        return settings

    @classmethod
    def from_env_or_exit(cls) -> "Settings":
        """from_env() for a program's start (the Space, the worker, a Job): a bad setting prints one `error:` line
        naming the variable (messages never hold a secret) and exits with status 1."""
        try:
            return cls.from_env()
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None

    def __post_init__(self) -> None:
        """Defaults that depend on other settings: the heartbeat interval (the store), sign-in and deleting models
        (off unless from_env saw a Space) and whether local model folders are accepted (the local store
        without sign-in)."""
        if self.heartbeat_seconds is None:
            object.__setattr__(self, "heartbeat_seconds", 5.0 if self.store_backend == "local" else 60.0)
        if self.require_sign_in is None:
            object.__setattr__(self, "require_sign_in", False)
        if self.delete_models is None:
            object.__setattr__(self, "delete_models", False)
        if self.allow_local_models is None:
            object.__setattr__(self, "allow_local_models", self.store_backend == "local" and not self.require_sign_in)

    def check(self) -> None:
        """Refuse settings that cannot work, with a message naming the variable (leaderboard.settings.checks)."""
        from leaderboard.settings.checks import check

        check(self)

    def as_env(self) -> dict[str, str]:
        """Every setting but the secrets as the environment text that reads back to it (the benchmarks' data
        locations included): what a Hugging Face Job gets, so it runs with this Space's settings."""
        env = {}
        for f in fields(self):
            if "env" not in f.metadata or f.metadata["secret"]:
                continue
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = ",".join(value)
            elif isinstance(value, bool):
                value = "1" if value else "0"
            elif value is None:
                value = ""
            elif isinstance(value, float):
                value = f"{value:g}"
            env[f.metadata["env"]] = str(value)
        env.update({s.setting: self.sources.get(s.key, "") for s in api.sources()})
        return env

    def with_(self, **changes) -> "Settings":
        """A copy with some fields changed (tests and the CLI use this)."""
        return replace(self, **changes)

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every configured secret (the secret settings, and the same variables in the environment)."""
        names = [f for f in fields(self) if f.metadata.get("secret")]
        values = [getattr(self, f.name) for f in names] + [os.environ.get(f.metadata["env"], "") for f in names]
        return tuple(dict.fromkeys(v for v in values if v))

    def scrub(self, text: str) -> str:
        """`text` with every configured secret (and anything shaped like a Hub token) masked: for anything stored,
        logged or shown."""
        return api.redact(text, *self.secrets)

    @property
    def judge_bearer(self) -> str | None:
        """The token an endpoint judge is called with: LEADERBOARD_JUDGE_TOKEN, else HF_TOKEN, else none."""
        return self.judge_token or self.hf_token or None

    @property
    def trusted_proxy_hops(self) -> int:
        """LEADERBOARD_PROXY_HOPS, or its default: 1 on a Hugging Face Space (its proxy), else 0."""
        return self.proxy_hops if self.proxy_hops is not None else (1 if self.on_space else 0)

    @property
    def model_prices(self) -> tuple[float, float] | None:
        """LEADERBOARD_MODEL_PRICE_PER_MTOK read: (input, output) dollars per million tokens; None when unset."""
        from leaderboard.settings.checks import model_prices

        return model_prices(self.model_price_per_mtok)

    @property
    def hub_evals(self) -> dict:
        """Each benchmark's registered Hub dataset (api.HubEval) for evaluation results: its card's, as
        LEADERBOARD_EVAL_DATASETS adds, replaces or turns off; benchmarks without one are left out."""
        from leaderboard.settings.checks import hub_evals

        return hub_evals(self.eval_datasets)

    @property
    def coverage_threshold(self) -> float:
        """LEADERBOARD_MIN_COVERAGE as a fraction."""
        return self.min_coverage / 100

    @property
    def runs_dir(self) -> Path:
        """Where each worker writes its output folder and log."""
        return self.home / "runs"

    @property
    def images_dir(self) -> Path:
        return self.image_cache or (self.home / "cache" / "images")

    @property
    def compile_dir(self) -> Path:
        return self.compile_cache or (self.home / "cache" / "torch-compile")


def declared() -> list[tuple[str, str, str]]:
    """(environment variable, default, what it sets) for every setting, the benchmarks' sources included."""
    rows = [(f.metadata["env"], f.metadata["default"], f.metadata["doc"]) for f in fields(Settings)
            if "env" in f.metadata]
    return rows + [(s.setting, s.default, s.accepts) for s in api.sources()]
