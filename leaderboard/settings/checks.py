"""The checks of the settings at start: each refuses, with a message naming the variable, settings that cannot
work together (Settings.check calls `check`)."""
from __future__ import annotations

from dataclasses import replace

from evaluator import api
from leaderboard.settings.readers import is_loopback


def check(settings) -> None:
    """Raise ValueError naming the variable for the first setting (or pair of settings) that cannot work."""
    for name, value, allowed in (("LEADERBOARD_STORE", settings.store_backend, ("local", "hub")),
                                 ("LEADERBOARD_SUITE", settings.suite, api.SUITES),
                                 ("LEADERBOARD_EXECUTOR", settings.executor, ("local", "hf-jobs")),
                                 ("LEADERBOARD_ENGINE", settings.engine, ("transformers", "vllm")),
                                 ("LEADERBOARD_DEVICE", settings.device, ("auto", "cuda", "cpu")),
                                 ("LEADERBOARD_GENERATION_CACHE", settings.generation_cache, api.GENERATION_CACHES),
                                 ("LEADERBOARD_THINKING", settings.thinking, ("auto", "on", "off")),
                                 ("LEADERBOARD_EVAL_RESULTS_PRS", settings.eval_results_prs, ("on", "admins", "off"))):
        if value not in allowed:
            raise ValueError(f"{name} must be {', '.join(map(repr, allowed[:-1]))} or {allowed[-1]!r}, not "
                             f"{value!r}")
    if ":" in settings.host:  # an IPv6 literal: Gradio's start-up check cannot reach it and the start fails
        raise ValueError(f"LEADERBOARD_HOST {settings.host!r} is an IPv6 address, which the Space cannot listen on: "
                         f"for this machine alone use 127.0.0.1 or localhost, for every interface 0.0.0.0")
    if settings.store_backend == "hub" and not settings.results_repo:
        raise ValueError("LEADERBOARD_STORE=hub needs LEADERBOARD_RESULTS_REPO")
    unknown = [b for b in settings.benchmarks if b not in api.benchmark_names()]
    if unknown:
        raise ValueError(f"LEADERBOARD_BENCHMARKS names unknown benchmarks {', '.join(unknown)}; known: "
                         f"{', '.join(api.benchmark_names())}")
    if settings.lease_seconds <= settings.heartbeat_seconds:
        raise ValueError("LEADERBOARD_LEASE_SECONDS must be longer than LEADERBOARD_HEARTBEAT_SECONDS")
    for option in settings.options:
        if "=" not in option or not option.split("=", 1)[0].strip():
            raise ValueError(f"LEADERBOARD_OPTIONS takes comma-separated key=value pairs, not {option!r}")
    bucket_problem(settings.jobs_cache_bucket)
    folder_problem("LEADERBOARD_COMPILE_CACHE", settings.compile_cache, "PyTorch's compile cache")
    folder_problem("LEADERBOARD_IMAGE_CACHE", settings.image_cache, "the image cache")
    budget = settings.thinking_budget.strip()
    if not (budget.isdigit() and int(budget) <= 1_000_000):
        raise ValueError(f"LEADERBOARD_THINKING_BUDGET must be a whole number of tokens from 0 to 1000000, not "
                         f"{budget[:40]!r}")
    if settings.batch_size != "auto" and not (settings.batch_size.isdigit() and int(settings.batch_size) > 0):
        raise ValueError(f"LEADERBOARD_BATCH_SIZE must be a positive integer or 'auto', not {settings.batch_size!r}")
    if not 0 <= settings.min_coverage <= 100:
        raise ValueError(f"LEADERBOARD_MIN_COVERAGE is a percentage (0-100), not {settings.min_coverage:g}")
    if settings.require_sign_in and settings.allow_local_models and settings.local_models_root is None:
        raise ValueError("LEADERBOARD_ALLOW_LOCAL_MODELS with sign-in needs LEADERBOARD_LOCAL_MODELS_ROOT, the folder "
                         "local models must be under")
    for name, value in (("LEADERBOARD_MAX_PENDING_PER_USER", settings.max_pending_per_user),
                        ("LEADERBOARD_MAX_SUBMISSIONS_PER_WEEK", settings.max_submissions_per_week),
                        ("LEADERBOARD_MAX_PENDING_PER_ORG", settings.max_pending_per_org),
                        ("LEADERBOARD_SQUASH_AFTER_COMMITS", settings.squash_after_commits),
                        ("LEADERBOARD_PROXY_HOPS", settings.proxy_hops or 0),
                        ("LEADERBOARD_HUB_CACHE_MB", settings.hub_cache_mb),
                        ("LEADERBOARD_KEEP_MODELS_GB", settings.keep_models_gb),
                        ("LEADERBOARD_EVAL_PRS_PER_DAY", settings.eval_prs_per_day)):
        if value < 0:
            raise ValueError(f"{name} must be 0 or more, not {value:g}")
    if settings.executor == "hf-jobs" and settings.store_backend != "hub":
        raise ValueError("LEADERBOARD_EXECUTOR=hf-jobs needs the Hub store (LEADERBOARD_STORE=hub): a Job "
                         "publishes to it")
    engine_problem(settings)
    if settings.executor == "hf-jobs" and settings.engine != "vllm" and not settings.jobs_image:
        raise ValueError("LEADERBOARD_EXECUTOR=hf-jobs needs LEADERBOARD_JOBS_IMAGE (on a Space it defaults to the "
                         "Space's own image)")
    if settings.executor == "hf-jobs":
        from leaderboard.running.job_flavors import parse_flavors

        parse_flavors(settings.jobs_flavors)  # a bad table says so at start, naming LEADERBOARD_JOBS_FLAVORS
    for name, value, least in (("LEADERBOARD_MAX_ATTEMPTS", settings.max_attempts, 1),
                               ("LEADERBOARD_JOBS_MAX", settings.jobs_max, 1),
                               ("LEADERBOARD_JOBS_TIMEOUT_MARGIN", settings.jobs_timeout_margin, 60),
                               ("LEADERBOARD_COMMIT_BUDGET", settings.commit_budget, 1),
                               ("LEADERBOARD_PLAYGROUND_PER_MINUTE", settings.playground_per_minute, 1),
                               ("LEADERBOARD_PLAYGROUND_BUDGET_PER_MINUTE", settings.playground_budget_per_minute, 1),
                               ("LEADERBOARD_PLAYGROUND_MAX_CHARS", settings.playground_max_chars, 1)):
        if value < least:
            raise ValueError(f"{name} must be at least {least}")
    for name, value in (("LEADERBOARD_HUB_REFRESH_SECONDS", settings.hub_refresh_seconds),
                        ("LEADERBOARD_SESSION_HOURS", settings.session_hours),
                        ("LEADERBOARD_JOBS_BUDGET_DAYS", settings.jobs_budget_days)):
        if not 0 < value < float("inf"):
            raise ValueError(f"{name} must be more than 0")
    for name, value in (("LEADERBOARD_ENDPOINT_DEADLINE", settings.endpoint_deadline),
                        ("LEADERBOARD_ENDPOINT_MAX_REPLY_MB", settings.endpoint_max_reply_mb)):
        problem = api.endpoint_limit_problem(name, value)  # the evaluator's own check (its limits_from_env)
        if problem:
            raise ValueError(problem)
    if settings.jobs_budget_usd is not None and not 0 <= settings.jobs_budget_usd < float("inf"):
        raise ValueError(f"LEADERBOARD_JOBS_BUDGET_USD must be a number of US dollars, 0 or more (empty: no cap), not "
                         f"{settings.jobs_budget_usd:g}")
    if settings.judge:  # a malformed spec, or a local judge the offline Hub cache lacks (the CLI's preflight rule)
        problem = api.judge_problem(settings.judge, settings.judge_bearer)
        if problem:  # its message never holds the URL's user, password or query, nor a token
            raise ValueError(f"LEADERBOARD_JUDGE: {problem}")
    model_prices(settings.model_price_per_mtok)  # a bad price pair says so at start
    hub_evals(settings.eval_datasets)  # and so does a bad evaluation-results mapping
    if settings.gpu_price_per_hour is not None and not 0 <= settings.gpu_price_per_hour < float("inf"):
        raise ValueError(f"LEADERBOARD_GPU_PRICE_PER_HOUR must be a number of US dollars, 0 or more, not "
                         f"{settings.gpu_price_per_hour:g}")
    if settings.mock_sign_in and settings.on_space:
        raise ValueError("LEADERBOARD_MOCK_SIGN_IN is for local development only; on a Hugging Face Space "
                         "visitors sign in for real (hf_oauth: true)")
    if settings.mock_sign_in and not is_loopback(settings.host):
        raise ValueError(f"LEADERBOARD_MOCK_SIGN_IN keeps the Space on 127.0.0.1: anyone who can reach it signs "
                         f"in; LEADERBOARD_HOST {settings.host!r} is not a loopback address")


def engine_problem(settings) -> None:
    """ValueError naming LEADERBOARD_ENGINE when vLLM cannot be the engine: only a Hugging Face Job runs it (the local
    executor loads the model in-process), on a GPU (vLLM's image is CUDA's), after a setup that installs this project
    (LEADERBOARD_JOBS_SETUP, or the default one, which downloads this Space: SPACE_ID)."""
    if settings.engine != "vllm":
        return
    if settings.executor != "hf-jobs":
        raise ValueError("LEADERBOARD_ENGINE=vllm serves the model with vLLM inside a Hugging Face Job: it needs "
                         f"LEADERBOARD_EXECUTOR=hf-jobs (the {settings.executor} executor loads the model in-process "
                         "with transformers; set LEADERBOARD_ENGINE=transformers for it)")
    from leaderboard.running.job_flavors import parse_flavors

    cpu = [rule.flavor for rule in parse_flavors(settings.jobs_flavors) if rule.flavor.startswith("cpu-")]
    if cpu:
        raise ValueError(f"LEADERBOARD_ENGINE=vllm runs vLLM's CUDA image, so every flavor of LEADERBOARD_JOBS_FLAVORS "
                         f"needs a GPU; {', '.join(cpu)} has none")
    if not settings.jobs_setup and not settings.space_id:
        raise ValueError("LEADERBOARD_ENGINE=vllm needs LEADERBOARD_JOBS_SETUP (a shell command that fetches and "
                         "installs this project in vLLM's image) or SPACE_ID (the default setup downloads that Space)")


def bucket_problem(bucket: str) -> None:
    """ValueError naming LEADERBOARD_JOBS_CACHE_BUCKET unless it is empty or a name a Hub storage bucket can have:
    `<owner>/<name>`, each part as the Hub names repositories (the one rule for model ids, api.model_id_problem); the
    line quotes at most 40 characters of it, escaped."""
    if bucket and api.model_id_problem(bucket) is not None:
        shown = f"{bucket[:40]!r}{'...' if len(bucket) > 40 else ''}"
        raise ValueError(f"LEADERBOARD_JOBS_CACHE_BUCKET names a Hub storage bucket as <owner>/<name>, not {shown}: "
                         "each part 1 to 96 letters, digits, '-', '_' or '.', neither starting nor ending with '-' or "
                         "'.', without '--' or '..'")


def folder_problem(name: str, folder, use: str) -> None:
    """ValueError naming the setting `name` when it is set to no folder `use` can use (a file, under a file, a loop of
    symbolic links, not writable: api.compile_cache_problem, which never shows the path); nothing is created."""
    problem = api.compile_cache_problem(folder) if folder else None
    if problem:
        raise ValueError(f"{name} names no folder {use} can use: {problem}")


def model_prices(entries: tuple[str, ...]) -> tuple[float, float] | None:
    """LEADERBOARD_MODEL_PRICE_PER_MTOK's `<input>,<output>` as (input, output) US dollars per million tokens, each
    0 or more; None when it is empty; ValueError naming the variable for anything else."""
    if not entries:
        return None
    try:
        prices = tuple(float(entry) for entry in entries)
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(0 <= price < float("inf") for price in prices):
        raise ValueError("LEADERBOARD_MODEL_PRICE_PER_MTOK takes `<input>,<output>`: two numbers of US dollars per "
                         f"million prompt and completion tokens, 0 or more, not {','.join(entries)!r}")
    return prices[0], prices[1]


def hub_evals(entries: tuple[str, ...]) -> dict[str, api.HubEval]:
    """The cards' registered Hub datasets (CARD.hub_eval), with LEADERBOARD_EVAL_DATASETS's entries
    `<benchmark>=<dataset>|<task>|<metric>|<percent or fraction>` added or replacing them and `<benchmark>=off`
    removing one; ValueError naming the variable for an entry that does not read."""
    found = {card.name: card.hub_eval for card in api.cards() if card.hub_eval is not None}
    for entry in entries:
        name, _, value = (part.strip() for part in entry.partition("="))
        if name not in api.benchmark_names():
            raise ValueError(f"LEADERBOARD_EVAL_DATASETS names an unknown benchmark in {entry!r}; known: "
                             f"{', '.join(api.benchmark_names())}")
        if value == "off":
            found.pop(name, None)
            continue
        fields = [part.strip() for part in value.split("|")]
        mapped = api.HubEval(*fields, note="LEADERBOARD_EVAL_DATASETS") if len(fields) == 4 else None
        card = api.card(name)
        problems = [] if mapped is None else api.hub_eval_problems(replace(card, hub_eval=mapped))
        if mapped is None or problems:
            why = "; ".join(problems) or "it needs four fields"
            raise ValueError(f"LEADERBOARD_EVAL_DATASETS takes `<benchmark>=<dataset id>|<task id>|<metric>|percent` "
                             f"(or fraction), or `<benchmark>=off`; {entry!r} does not read: {why}")
        found[name] = mapped
    return found
