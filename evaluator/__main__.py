"""Command line: `python -m evaluator run ...`, `python -m evaluator plan ...`, `python -m evaluator rescore ...`,
`python -m evaluator compare A B` and `python -m evaluator list-benchmarks`.

`plan --model M [--suite sample|lite|full] [--benchmarks ...] [--thinking on|off|auto] [--engine transformers|vllm]`
says what a run would cost before it runs (evaluator.plans): per benchmark its items, model calls, prompt and
answer-token budgets (thinking included) and judge calls, then the hours and dollars on each Jobs flavor that holds
the model (and, for transformers, on the CPU), each figure marked measured, published or assumed. It reads the
model's config.json (and, where they are, its weights' headers and chat template), never its weights, and no
benchmark data.

On failure one line goes to stderr, `error: <what is wrong, in words>` (--debug: after the traceback), and the exit code
is 1; the scheduler shows it as the request's reason (a queue request's run, `--request`, refused before it began ends
it with "(refused before the run: nothing was loaded)", and the Space does not count it toward the submitter's weekly
limit). A run where every benchmark was skipped fails too, after writing its results.json. A --model that is no local
folder is a Hub id of the form org/name (evaluator.inputs.model_ids) or a served model's spec
`endpoint:<base url>|<model>`, whose token comes from LEADERBOARD_MODEL_TOKEN only; a served run asks every benchmark by
generation, and an endpoint that cannot run it (unreachable, token refused, unknown model) ends it at once, in one line.

What was asked is checked before anything heavy loads (benchmark names, batch size, model id, modes, the judge, the
--compile-cache folder of a run that would compile; then evaluator.runs.preflight: a judge where one is needed (a
local one in the cache while the Hub is off), the model's config.json in the cache or on the Hub, a text-only model
asked only for image benchmarks), so a command that fails on its arguments says so at once, in our words, and
nothing about devices; a run then says once which device it uses (a `device: ...` line, a `WARNING:` only where a
GPU was expected).

`compare A B` reads two results folders (results.json + details/, as `run` writes them) and prints, for each benchmark
both have details of, A - B on the questions both scored with its 95% interval (evaluator.runs.compare); a folder that
is missing or damaged, or two runs with nothing in common, is refused with its `error: ...` line and exit code 2.
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

from evaluator.benchmarks import DEFAULT_BENCHMARKS, REGISTRY
from evaluator.benchmarks.spec import SUITES
from evaluator.endpoints.limits import limits_from_env
from evaluator.endpoints.names import is_model_spec, parse_model_spec
from evaluator.inputs.model_ids import model_id_problem
from evaluator.models.base import DeviceUnavailable, UnsupportedModelError
from evaluator.runs.parent_watch import die_with_parent


class UsageError(ValueError):
    """A mistake in what was asked (a malformed model id, a run where nothing ran): its one line, no type name."""


# one-line reasons said without their type name (known by name: loaded lazily): served, preflight, compile cache
_PLAIN = ("ServedError", "ModeRefused", "JudgeStalled", "Refused", "CompileCacheUnusable")


def _reason(exc: BaseException) -> str:
    """An error's one line, in words, no type name: its message when ours or a sentence, else called unexpected."""
    said, ours = " ".join(str(exc).split()), isinstance(exc, (DeviceUnavailable, UsageError, UnsupportedModelError))
    if ours or type(exc).__name__ in _PLAIN or " " in said:
        return said[:500]
    return f"an unexpected failure ({said[:300] or 'without a message'}); --debug prints where it happened"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evaluator", description=__doc__)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="print the traceback of an error before its one line")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", parents=[common],
                              help="evaluate one model and write results.json + details/*.parquet")
    run.add_argument("--model", help="Hub id (org/name), a local model folder, or a served model "
                     "'endpoint:<base url>|<model>' (its token: LEADERBOARD_MODEL_TOKEN); with --request, a served "
                     "model's spec only: the server that answers for the request's Hub model (a Job's vLLM engine), "
                     "the run recorded under the request's model and revision")
    run.add_argument("--revision", help="commit sha (a branch or tag also works on the CLI)")
    run.add_argument("--engine", default="", choices=["", "vllm", "sglang"],
                     help="with --request and a served model's --model: the engine started for this run that serves "
                          "the request's Hub model (a Job's vLLM), recorded as run.engine; the row is not a served one")
    run.add_argument("--precision", default=None, choices=["auto", "float32", "bfloat16", "float16"],
                     help="auto: bfloat16 on a GPU (float16 on one without native bfloat16, e.g. a T4), float32 on "
                     "the CPU")
    run.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"],
                     help="auto: a CUDA GPU when one is usable, else the CPU (said once, and recorded in the "
                     "results; a warning where a GPU was expected); cuda: a GPU or fail at once, before loading "
                     "weights, saying what was found")
    run.add_argument("--benchmarks", default=",".join(DEFAULT_BENCHMARKS), help="comma-separated, from list-benchmarks")
    run.add_argument("--suite", default="sample", choices=list(SUITES),
                     help="sample (shipped with the project), lite (a seeded, stratified subset of the full suite: "
                     "each card's lite rule) or full (the benchmark's complete data, downloaded)")
    run.add_argument("--limit", type=int, default=0, help="items per benchmark (0: all)")
    run.add_argument("--judge", default="", help="judge spec: local:<id or dir> | endpoint:<base url>|<model>")
    run.add_argument("--out", default="eval-out", help="output folder: results.json, details/<benchmark>.parquet "
                     "and progress.json (default: %(default)s)")
    run.add_argument("--request", help="a queue request JSON file: model, revision and precision come from it")
    run.add_argument("--batch-size", default="auto", help="generation batch size, or auto (64 on a GPU with "
                     "out-of-memory backoff, 4 on the CPU); for a served model, the requests in flight (auto: 8)")
    run.add_argument("--generation-cache", default="auto", choices=["auto", "static", "dynamic"],
                     help="how generate keeps its KV cache: auto (static with a compiled decode step on a GPU, dynamic "
                     "on the CPU), static (static everywhere; compiled on a GPU) or dynamic; a model whose static "
                     "cache or compile fails falls back to dynamic for the run, and says so")
    run.add_argument("--thinking", default=None, choices=["auto", "on", "off"],
                     help="for a model whose chat template takes an enable_thinking switch: auto (the template's "
                     "default; with --request, the request's), on or off; results.json records the mode it ran with")
    run.add_argument("--thinking-budget", type=int, default=None, metavar="TOKENS",
                     help="tokens a thinking model may spend on its thought, on top of each benchmark's answer "
                     "budget (default: LEADERBOARD_THINKING_BUDGET, else 4096); a reply whose thought runs past it has no answer and is counted")
    run.add_argument("--compile-cache", default=None, metavar="DIR",
                     help="keep PyTorch's compiled code in DIR for the next run (default: PyTorch's own, in /tmp); "
                     "made only by a run that compiles, and checked before the model loads")
    run.add_argument("--images-dir", default=None, help="image download cache (default: <out>/../cache/images)")
    run.add_argument("--responses", default=None, metavar="DIR",
                     help="journal every model response in DIR/<benchmark>.jsonl as it comes, and reuse the ones "
                     "already there (a run of the same request that starts again resumes; default: no journal)")
    run.add_argument("--source", action="append", default=[], metavar="BENCH=LOCATION",
                     help="a benchmark's data location, by the source key its card declares, e.g. "
                     "cure=https://... (repeatable)")
    run.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="benchmark option, e.g. cure.mode=generation (repeatable)")
    plan = commands.add_parser("plan", parents=[common], help="what a run would ask and cost, before it runs: items, "
                               "model calls, token budgets, judge calls, hours and dollars on each Jobs flavor")
    plan.add_argument("--model", required=True, help="Hub id (org/name) or a local model folder (its config.json "
                      "is enough)")
    plan.add_argument("--revision", help="commit sha, branch or tag")
    plan.add_argument("--suite", default="sample", choices=list(SUITES))
    plan.add_argument("--benchmarks", default=",".join(REGISTRY), help="comma-separated (default: all of them)")
    plan.add_argument("--thinking", default="auto", choices=["auto", "on", "off"],
                      help="count the thinking budget: on, off, or auto (counted when the chat template writes a "
                      "thought)")
    plan.add_argument("--thinking-budget", type=int, default=None, metavar="TOKENS",
                      help="tokens of thought per generation (default: LEADERBOARD_THINKING_BUDGET, else 4096)")
    plan.add_argument("--limit", type=int, default=0, help="items per benchmark (0: all)")
    plan.add_argument("--batch-size", type=int, default=None, help="a GPU's batch size (default: 64)")
    plan.add_argument("--engine", default="transformers", choices=["transformers", "vllm"],
                      help="what runs the model: transformers in-process (measured figures) or vLLM served "
                      "(its published throughput until a GPU measures it; no CPU line)")
    plan.add_argument("--flavors", default="", help="comma-separated Jobs flavors to price (default: of each GPU, the "
                      "cheapest flavor that holds the model's weights; one H100 is priced too, for comparison)")
    plan.add_argument("--source", action="append", default=[], metavar="BENCH=LOCATION")
    plan.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    rescore = commands.add_parser("rescore", parents=[common], help="grade a finished run again with another judge, "
                                  "from its stored details (the model is not loaded)")
    rescore.add_argument("--run", required=True, help="a finished run's folder (results.json + details/)")
    rescore.add_argument("--judge", required=True, help="judge spec: local:<id or dir> | endpoint:<base url>|<model>")
    rescore.add_argument("--out", required=True, help="output folder (may be the run's folder itself)")
    compare = commands.add_parser("compare", parents=[common], help="compare two finished runs on the questions both "
                                  "scored: A - B per benchmark, with its 95%% interval")
    compare.add_argument("a", metavar="A", help="a results folder (results.json + details/<benchmark>.parquet)")
    compare.add_argument("b", metavar="B", help="the results folder to compare it with")
    compare.add_argument("--benchmarks", default="", help="comma-separated, from list-benchmarks (default: every "
                         "benchmark either run has details of)")
    commands.add_parser("list-benchmarks", help="print the registered benchmarks, one line each: what it measures, "
                        "its modes, whether it needs a judge, its sample and full suites' sizes")
    return parser


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag} takes KEY=VALUE, got {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def _config(args: argparse.Namespace):
    benchmarks = _benchmark_names(args.benchmarks)  # before the runner is imported: a wrong name is said at once
    _check_batch_size(args.batch_size)
    from evaluator.runs.runner import RunConfig

    request: dict = {}
    model, revision, precision = args.model, args.revision, args.precision
    if args.request:
        request = json.loads(Path(args.request).read_text())
        model, revision = _request_model(request)
        model = _served_for(args.model, request) if args.model else model
        precision = precision or request.get("precision", "auto")
    if args.engine and not (args.request and args.model):
        raise UsageError("--engine names the engine serving a --request's model: give --request and --model "
                         "endpoint:<base url>|<model>")
    if not model:
        raise UsageError("give --model or --request")
    out = Path(args.out)
    images_dir = Path(args.images_dir) if args.images_dir else out.resolve().parent / "cache" / "images"
    return RunConfig(model=model, revision=revision, precision=precision or "auto",
                     benchmarks=benchmarks,
                     suite=args.suite, limit=args.limit, batch_size=args.batch_size, device=args.device, judge=args.judge,
                     images_dir=images_dir, sources=_pairs(args.source, "--source"),
                     options=_pairs(args.option, "--option"), request=request,
                     responses=Path(args.responses) if args.responses else None,
                     generation_cache=args.generation_cache,
                     thinking=args.thinking or request.get("thinking") or "auto",
                     thinking_budget=_thinking_budget(args.thinking_budget), engine=args.engine,
                     compile_cache=Path(args.compile_cache) if args.compile_cache else None)


def _thinking_budget(value: int | None) -> int:
    """--thinking-budget, at least 0 (default: LEADERBOARD_THINKING_BUDGET, else 4096; a bad setting is one line)."""
    from evaluator.models.thinking import default_budget

    if value is None:
        try:
            return default_budget()
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if value < 0:
        raise UsageError(f"--thinking-budget must be 0 or more tokens, got {value}")
    return value


def _served_for(spec: str, request: dict) -> str:
    """--model beside --request: the served model's spec that answers for the request's Hub model (an engine started
    for this run, as a Job's vLLM on its loopback); UsageError for anything else."""
    if not is_model_spec(spec) or request.get("source", "hub") != "hub":
        raise UsageError("--model beside --request must be a served model's spec (endpoint:<base url>|<model>) "
                         "answering for the request's Hub model")
    return spec


def _request_model(request: dict) -> tuple[str, str | None]:
    """What a queue request runs: a local folder, a served model's spec, or a Hub id, and the revision to pin."""
    source = request.get("source")
    if source == "local":
        return request.get("local_path"), None
    if source == "served":
        endpoint = request.get("endpoint") if isinstance(request.get("endpoint"), dict) else {}
        return f"endpoint:{endpoint.get('base_url', '')}|{endpoint.get('model', '')}", None
    return request["model"], request["revision"]


def _benchmark_names(text: str) -> tuple[str, ...]:
    """The --benchmarks list; UsageError for a name that is not registered (or none at all), before anything heavy
    (the runner, the benchmarks' packages, torch) is imported."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in REGISTRY]
    if unknown or not names:
        said = f"unknown benchmark {', '.join(map(repr, unknown))}" if unknown else "no benchmark named"
        raise UsageError(f"{said}; known: {', '.join(REGISTRY)} (python -m evaluator list-benchmarks)")
    return names


def _check_batch_size(text: str) -> None:
    size = str(text).strip()
    if size != "auto" and not (size.isdigit() and int(size) >= 0):
        raise UsageError(f"--batch-size must be a positive integer or auto, got {size!r}")


def _check_model(model: str) -> None:
    """UsageError unless `model` is a local folder, a well-formed Hub id (org/name) or a served model's spec."""
    if is_model_spec(model):
        try:
            parse_model_spec(model)
            limits_from_env()  # a bad LEADERBOARD_ENDPOINT_* says so before anything is sent
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        return
    problem = None if Path(model).expanduser().is_dir() else model_id_problem(model)
    if problem:
        raise UsageError(f"{problem.rstrip('.')}; no local model folder has that name either.")


def _check_compile_cache(config) -> None:
    """UsageError, before the model loads, when --compile-cache names no folder a run that compiles can use (one line
    naming the setting, never the path); a run that never compiles (a served model, --device cpu, --generation-cache
    dynamic, auto without a usable GPU) is not refused for it."""
    if not config.compile_cache or is_model_spec(config.model) or config.generation_cache == "dynamic" \
            or config.device == "cpu":
        return
    from evaluator.models.generation_cache import COMPILE_CACHE_SETTING, compile_cache_problem

    problem = compile_cache_problem(config.compile_cache)
    if problem and config.device == "auto":  # torch is asked only when the folder is bad
        from evaluator.models.devices import cuda_usable

        problem = problem if cuda_usable()[0] else None
    if problem:
        raise UsageError(f"--compile-cache ({COMPILE_CACHE_SETTING}) names no folder PyTorch's compile cache can use: "
                         f"{problem}")


def _rescore(args: argparse.Namespace) -> int:
    from evaluator.judge import make_judge, judge_name
    from evaluator.runs.rescore import rescore
    from evaluator.runs.runner import judge_token

    from evaluator.runs.summary import trial_judge_warning

    judge = make_judge(args.judge, token=judge_token())
    warning = trial_judge_warning(judge)
    if warning:  # said before it grades, as the board flags the run after
        print(warning, file=sys.stderr, flush=True)
    results = rescore(Path(args.run), Path(args.out), judge)
    print(f"wrote {Path(args.out) / 'results.json'} (graded by {judge_name(results['run']['judge'])})")
    return 0


def _compare(args: argparse.Namespace) -> int:
    """Print the comparison of two results folders; exit code 2 with one `error:` line when they cannot be compared."""
    from evaluator.runs.compare import CompareError, compare_folders

    names = [name.strip() for name in args.benchmarks.split(",") if name.strip()] if args.benchmarks else None
    try:
        lines = compare_folders(Path(args.a), Path(args.b), names)
    except CompareError as exc:
        print(f"error: {' '.join(str(exc).split())[:500]}", file=sys.stderr, flush=True)
        return 2
    print("\n".join(lines), flush=True)
    return 0


def _plan(args: argparse.Namespace) -> int:
    """Print a run's plan (evaluator.plans)."""
    from evaluator.plans.costs import REFERENCE, cheapest_per_gpu, jobs_flavors, measured_records, on_cpu
    from evaluator.plans.engines import TRANSFORMERS, on_engine
    from evaluator.plans.estimate import fits, plan_run
    from evaluator.plans.facts import facts_for
    from evaluator.plans.text import plan_lines

    benchmarks = _benchmark_names(args.benchmarks)
    if args.limit < 0 or (args.batch_size is not None and args.batch_size < 1):
        raise UsageError("--limit must be 0 or more and --batch-size at least 1")
    _check_model(args.model)
    facts = facts_for(args.model, args.revision)
    records = measured_records()
    asked = [name.strip() for name in args.flavors.split(",") if name.strip()]
    unknown = [name for name in asked if name not in jobs_flavors()]
    if unknown:
        raise UsageError(f"unknown Jobs flavor {', '.join(map(repr, unknown))}; GPU flavors: "
                         f"{', '.join(jobs_flavors())}")
    machines = [on_engine(name, records, args.engine) for name in (asked or jobs_flavors())]
    machines = machines if asked else cheapest_per_gpu(machines, lambda m: fits(facts, m))
    reference = on_engine(REFERENCE, records, args.engine)
    if not asked and fits(facts, reference):  # the lite suites' sizing reference (no flavor)
        machines.append(reference)
    cpu = [on_cpu(records)] if args.engine == TRANSFORMERS else []  # vLLM is priced on GPUs only
    run = plan_run(facts, list(benchmarks), args.suite, [*machines, *cpu], thinking=args.thinking,
                   thinking_budget=_thinking_budget(args.thinking_budget), limit=args.limit,
                   options=_pairs(args.option, "--option"), sources=_pairs(args.source, "--source"),
                   batch=args.batch_size)
    print("\n".join(plan_lines(run)), flush=True)
    return 0


def _quiet_library_noise() -> None:
    """transformers' "friendly reminder" that a generation passed the model's context says nothing a reader can act
    on in a run's log (a trial judge's prompts pass a tiny model's context by design): it is left out."""
    import logging

    logging.getLogger("transformers.generation.stopping_criteria").addFilter(
        lambda record: "friendly reminder" not in record.getMessage())


def main(argv: list[str] | None = None) -> int:
    die_with_parent()  # started by a worker: never outlive it
    _quiet_library_noise()
    args = _parser().parse_args(argv)
    if args.command == "list-benchmarks":
        from evaluator.benchmarks.listing import benchmark_lines

        print("\n".join(benchmark_lines()))
        return 0
    began = False  # whether the run began (a model loading): a queue request refused before it says so
    try:
        if args.command == "rescore":
            return _rescore(args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "plan":
            return _plan(args)
        config = _config(args)
        _check_model(config.model)
        _check_compile_cache(config)
        from evaluator.runs import preflight  # what the configuration tells, before any model loads

        preflight.check(config.model, config.revision, config.benchmarks, config.judge, config.device)
        from evaluator.runs.runner import run

        began = True
        results = run(config, Path(args.out))
        if not results["benchmarks"]:  # results.json says what was skipped; nothing in it can be published
            skipped = "; ".join(f"{name}: {why}" for name, why in results.get("skipped", {}).items())
            raise UsageError(f"no benchmark ran ({skipped or 'none was asked for'})")
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr, flush=True)
        return 130
    except Exception as exc:  # the one-line reason is the contract; --debug adds the traceback for the log reader
        if args.debug:
            traceback.print_exc()
        reason = _reason(exc)
        if args.command == "run" and args.request and not began:
            from evaluator.runs.preflight import NOTHING_RAN

            reason = f"{reason} {NOTHING_RAN}"
        print(f"error: {reason}", file=sys.stderr, flush=True)
        return 1
    print(f"wrote {Path(args.out) / 'results.json'} ({', '.join(results['benchmarks'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
