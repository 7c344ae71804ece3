"""Settings: embedded defaults, environment overrides, refusals, and the table of variables in docs/deploying.md
(written from the declarations by tools/settings_table.py)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from leaderboard.settings import Settings, declared
from tests.conftest import PROJECT


def test_embedded_defaults():
    settings = Settings.from_env({})
    assert settings.home == Path("./leaderboard-data") and settings.store_backend == "local"
    assert (settings.host, settings.port) == ("127.0.0.1", 7860)
    assert settings.suite == "sample" and settings.benchmarks == ("cure",)
    assert settings.allow_local_models and settings.run_scheduler and settings.heartbeat_seconds == 5
    assert settings.images_dir == Path("./leaderboard-data/cache/images")
    assert settings.batch_size == "auto" and Settings.from_env({"LEADERBOARD_BATCH_SIZE": "8"}).batch_size == "8"


def test_environment_overrides_and_space_defaults():
    env = {"LEADERBOARD_HOME": "/tmp/x", "LEADERBOARD_STORE": "hub", "LEADERBOARD_RESULTS_REPO": "org/results",
           "LEADERBOARD_BENCHMARKS": "cure, simpleqa", "LEADERBOARD_MAX_PARAMS_B": "2.5", "SPACE_ID": "org/space",
           "SYSTEM": "spaces", "LEADERBOARD_RUN_SCHEDULER": "0", "HF_TOKEN": "hf_secret_value"}
    settings = Settings.from_env(env)
    assert settings.home == Path("/tmp/x") and settings.benchmarks == ("cure", "simpleqa")
    assert settings.max_params_billions == 2.5 and not settings.run_scheduler
    assert Settings.from_env({"LEADERBOARD_OPTIONS": "cure.mode=generation, simpleqa.grader=letter"}).options == (
        "cure.mode=generation", "simpleqa.grader=letter")
    assert settings.host == "0.0.0.0"  # on a Space
    assert not settings.allow_local_models  # off by default with the Hub store
    assert settings.heartbeat_seconds == 60  # each heartbeat is a commit on the Hub
    assert "hf_secret_value" not in repr(settings)


def test_sign_in_is_required_on_a_space_and_then_local_folders_need_a_root():
    assert not Settings.from_env({}).require_sign_in and Settings.from_env({}).allow_local_models  # local default
    on_space = Settings.from_env({"SPACE_ID": "org/space"})
    assert on_space.require_sign_in and not on_space.allow_local_models  # off by default whenever sign-in is on
    assert Settings.from_env({"LEADERBOARD_REQUIRE_SIGN_IN": "1"}).require_sign_in
    with pytest.raises(ValueError, match="LEADERBOARD_LOCAL_MODELS_ROOT"):
        Settings.from_env({"SPACE_ID": "org/space", "LEADERBOARD_ALLOW_LOCAL_MODELS": "1"})
    rooted = Settings.from_env({"SPACE_ID": "org/space", "LEADERBOARD_ALLOW_LOCAL_MODELS": "1",
                                "LEADERBOARD_LOCAL_MODELS_ROOT": "/srv/models", "LEADERBOARD_ADMINS": "ada, Bob"})
    assert rooted.allow_local_models and rooted.local_models_root == Path("/srv/models")
    assert rooted.admins == ("ada", "Bob")
    with pytest.raises(ValueError, match="LEADERBOARD_MAX_SUBMISSIONS_PER_WEEK"):
        Settings.from_env({"LEADERBOARD_MAX_SUBMISSIONS_PER_WEEK": "-1"})


def test_only_a_real_space_listens_on_every_interface_and_the_mock_never_does():
    assert Settings.from_env({"SPACE_ID": "org/space"}).host == "127.0.0.1"  # SPACE_ID alone is not a Space
    space = Settings.from_env({"SPACE_ID": "org/space", "SYSTEM": "spaces"})
    assert space.on_space and space.host == "0.0.0.0" and space.trusted_proxy_hops == 1
    mock = Settings.from_env({"SPACE_ID": "org/space", "LEADERBOARD_MOCK_SIGN_IN": "1"})
    assert mock.host == "127.0.0.1" and mock.require_sign_in and mock.trusted_proxy_hops == 0
    with pytest.raises(ValueError, match="LEADERBOARD_MOCK_SIGN_IN keeps the Space on 127.0.0.1"):
        Settings.from_env({"LEADERBOARD_MOCK_SIGN_IN": "1", "LEADERBOARD_HOST": "0.0.0.0"})
    with pytest.raises(ValueError, match="local development only"):
        Settings.from_env({"LEADERBOARD_MOCK_SIGN_IN": "1", "SYSTEM": "spaces", "SPACE_ID": "org/space"})


def test_sign_in_is_refused_where_it_cannot_be_real():
    from leaderboard.submissions.identity import Visitor, sign_in_problem, visitor

    oauth = {"OAUTH_CLIENT_ID": "id", "OAUTH_CLIENT_SECRET": "secret", "OAUTH_SCOPES": "openid profile",
             "OPENID_PROVIDER_URL": "https://huggingface.co"}
    assert sign_in_problem(Settings.from_env({})) is None  # no sign-in: the local user
    assert sign_in_problem(Settings.from_env({"SYSTEM": "spaces", "SPACE_ID": "o/s", **oauth})) is None
    missing = sign_in_problem(Settings.from_env({"SYSTEM": "spaces", "SPACE_ID": "o/s", **oauth,
                                                 "OAUTH_CLIENT_SECRET": ""}))
    assert "OAUTH_CLIENT_SECRET" in missing and "OAUTH_CLIENT_ID" not in missing and "\n" not in missing
    assert "SYSTEM=spaces" in sign_in_problem(Settings.from_env({"LEADERBOARD_REQUIRE_SIGN_IN": "1", **oauth}))
    mock = Settings.from_env({"LEADERBOARD_REQUIRE_SIGN_IN": "1", "LEADERBOARD_MOCK_SIGN_IN": "1",
                              "LEADERBOARD_ADMINS": "ada"})
    assert sign_in_problem(mock) is None

    class Profile:
        username = "ada"

    assert visitor(mock, Profile()) == Visitor("ada", admin=False)  # the mock vouches for no admin
    real = Settings.from_env({"SYSTEM": "spaces", "SPACE_ID": "o/s", **oauth, "LEADERBOARD_ADMINS": "ada"})
    assert visitor(real, Profile()) == Visitor("ada", admin=True)


def test_every_secret_setting_is_scrubbed():
    settings = Settings.from_env({"HF_TOKEN": "hf_" + "a" * 30, "LEADERBOARD_JUDGE_TOKEN": "sk-judge-value-42"})
    scrubbed = settings.scrub("token hf_" + "a" * 30 + " and judge sk-judge-value-42")
    assert "sk-judge-value-42" not in scrubbed and "a" * 30 not in scrubbed


def test_the_port_comes_from_leaderboard_port_else_gradio_server_port():
    assert Settings.from_env({"GRADIO_SERVER_PORT": "7999"}).port == 7999
    assert Settings.from_env({"GRADIO_SERVER_PORT": "7999", "LEADERBOARD_PORT": "7001"}).port == 7001
    assert Settings.from_env({}).port == 7860
    assert Settings.from_env({"LEADERBOARD_MIN_COVERAGE": "80"}).coverage_threshold == pytest.approx(0.8)


@pytest.mark.slow  # starts app.py
def test_a_busy_port_says_which_variable_to_set(tmp_path):
    """app.py on a port already taken: exit 1, naming LEADERBOARD_PORT (and GRADIO_SERVER_PORT), before any
    evaluation starts."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {**os.environ, "LEADERBOARD_PORT": str(port), "LEADERBOARD_HOME": str(tmp_path),
               "LEADERBOARD_RUN_SCHEDULER": "0", "GRADIO_ANALYTICS_ENABLED": "False"}
        done = subprocess.run([sys.executable, "app.py"], cwd=PROJECT, env=env, capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert "LEADERBOARD_PORT=7861 python app.py" in done.stderr and "GRADIO_SERVER_PORT works too" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow  # starts app.py
def test_a_bad_judge_spec_stops_the_space_without_its_credentials(tmp_path):
    """The judge spec is checked once at start: a bad one stops app.py with one line that never holds the URL's user,
    password or query; scrubbed text (failure reasons, log tails) masks them too."""
    import os
    import subprocess
    import sys

    secret = "pw-in-the-judge-url"
    spec = f"endpoint:https://user:{secret}@judge.example/v1"  # no |model: the probe's spec
    with pytest.raises(ValueError, match="LEADERBOARD_JUDGE") as caught:
        Settings.from_env({"LEADERBOARD_JUDGE": spec})
    assert secret not in str(caught.value) and "judge.example/v1" in str(caught.value)
    env = {**os.environ, "LEADERBOARD_JUDGE": spec, "LEADERBOARD_HOME": str(tmp_path), "LEADERBOARD_RUN_SCHEDULER": "0",
           "GRADIO_ANALYTICS_ENABLED": "False"}
    done = subprocess.run([sys.executable, "app.py"], cwd=PROJECT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and secret not in done.stderr + done.stdout and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error: LEADERBOARD_JUDGE: bad endpoint judge spec")
    scrubbed = Settings.from_env({}).scrub(f"HTTP 500 from https://user:{secret}@h/v1?key={secret}")
    assert secret not in scrubbed and "https://***@h/v1?key=***" in scrubbed


@pytest.mark.parametrize("env, message", [
    ({"LEADERBOARD_STORE": "s3"}, "LEADERBOARD_STORE"),
    ({"LEADERBOARD_STORE": "hub"}, "LEADERBOARD_RESULTS_REPO"),
    ({"LEADERBOARD_SUITE": "huge"}, "LEADERBOARD_SUITE must be 'sample', 'lite' or 'full', not 'huge'"),
    ({"LEADERBOARD_LEASE_SECONDS": "3", "LEADERBOARD_HEARTBEAT_SECONDS": "5"}, "LEADERBOARD_LEASE_SECONDS"),
    ({"LEADERBOARD_MAX_ATTEMPTS": "0"}, "LEADERBOARD_MAX_ATTEMPTS"),
    ({"LEADERBOARD_BATCH_SIZE": "0"}, "LEADERBOARD_BATCH_SIZE"),
    ({"LEADERBOARD_OPTIONS": "cure.mode"}, "LEADERBOARD_OPTIONS"),
    ({"LEADERBOARD_BATCH_SIZE": "many"}, "LEADERBOARD_BATCH_SIZE"),
    ({"LEADERBOARD_PORT": "eighty"}, "LEADERBOARD_PORT"),
    ({"GRADIO_SERVER_PORT": "eighty"}, "GRADIO_SERVER_PORT"),
    ({"LEADERBOARD_MIN_COVERAGE": "120"}, "LEADERBOARD_MIN_COVERAGE"),
    ({"LEADERBOARD_MAX_FILE_SIZE": "lots"}, "LEADERBOARD_MAX_FILE_SIZE"),
    ({"LEADERBOARD_PROXY_HOPS": "-1"}, "LEADERBOARD_PROXY_HOPS"),
    ({"LEADERBOARD_PLAYGROUND_BUDGET_PER_MINUTE": "0"}, "LEADERBOARD_PLAYGROUND_BUDGET_PER_MINUTE"),
    ({"LEADERBOARD_BENCHMARKS": "cure,vibes"}, "LEADERBOARD_BENCHMARKS names unknown benchmarks vibes"),
    ({"LEADERBOARD_HOST": "::1"}, "LEADERBOARD_HOST '::1' is an IPv6 address, which the Space cannot listen on: for "
                                  "this machine alone use 127.0.0.1 or localhost"),
    ({"LEADERBOARD_HOST": "[::1]"}, "LEADERBOARD_HOST"),
    ({"LEADERBOARD_GENERATION_CACHE": "compiled"}, "LEADERBOARD_GENERATION_CACHE must be 'auto', 'static' or "
                                                   "'dynamic'"),
])
def test_bad_settings_are_refused_naming_the_variable(env, message):
    with pytest.raises(ValueError, match=message):
        Settings.from_env(env)


def test_the_lite_suite_is_a_setting_that_reaches_the_evaluator_locally_and_in_a_job(tmp_path):
    """Issue 67: LEADERBOARD_SUITE=lite is accepted (any of the evaluator's suites is) and reaches the evaluator's
    command on the Space's own worker, and a Job's environment, from which the Job's worker builds the same command."""
    from evaluator import api
    from leaderboard.running import evaluator_process, hf_jobs

    assert api.SUITES == ("sample", "lite", "full")
    for suite in api.SUITES:
        assert Settings.from_env({"LEADERBOARD_SUITE": suite.upper()}).suite == suite
    lite = Settings.from_env({"LEADERBOARD_SUITE": "lite"})
    command = evaluator_process.worker_command(lite, tmp_path / "request.json", tmp_path / "out")
    assert command[command.index("--suite") + 1] == "lite"
    env = hf_jobs.job_env(lite, "a10g-small")
    assert env["LEADERBOARD_SUITE"] == "lite" and Settings.from_env(env).suite == "lite"
    assert "`lite`" in next(doc for variable, _, doc in declared() if variable == "LEADERBOARD_SUITE")


def test_benchmark_sources_come_from_the_cards():
    from evaluator import api

    settings = Settings.from_env({"LEADERBOARD_CURE_FULL": "/data/cure.json"})
    assert settings.sources["cure"] == "/data/cure.json"
    assert set(settings.sources) == {s.key for s in api.sources()}
    assert settings.sources["simpleqa"] == api.card("simpleqa").sources[0].default
    assert Settings().sources == Settings.from_env({}).sources  # the embedded defaults


def test_every_setting_is_declared_once():
    names = [variable for variable, _, _ in declared()]
    assert len(names) == len(set(names)) and "LEADERBOARD_HOME" in names and "LEADERBOARD_CURE_FULL" in names
    assert all(doc.strip() for _, _, doc in declared())


def settings_table_tool():
    """tools/settings_table.py, loaded as a module (tools/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("settings_table", PROJECT / "tools" / "settings_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_deploying_page_lists_every_variable_with_its_default():
    page = (PROJECT / "docs" / "deploying.md").read_text(encoding="utf-8")
    for variable, default, _ in declared():
        row = f"| `{variable}` | `{default}` |" if default else f"| `{variable}` | (empty) |"
        assert row in page, variable


def test_the_deploying_pages_settings_table_is_the_codes():
    """The table between the markers is exactly what tools/settings_table.py writes from the declarations: a
    setting added, removed or reworded in the code without `python tools/settings_table.py --write` fails here."""
    tool = settings_table_tool()
    page = (PROJECT / "docs" / "deploying.md").read_text(encoding="utf-8")
    shown, code = tool.page_table(page), tool.table()
    assert shown == code, "docs/deploying.md's table differs from the code: python tools/settings_table.py --write"
    assert tool.rewritten(page) == page
    assert len(code.splitlines()) == len(declared()) + 2  # a header, a rule, one row per setting
    judge = "| `LEADERBOARD_JUDGE` | (empty) | judge spec: `local:<id or dir>` or `endpoint:<base url>\\|<model>` |"
    assert judge in code  # a | inside a cell is escaped


# -- round 4: settings checked before they are used -------------------------------------------------------------------

@pytest.mark.parametrize("name, value", [(name, value) for name in ("LEADERBOARD_ENDPOINT_DEADLINE",
                                                                    "LEADERBOARD_ENDPOINT_MAX_REPLY_MB")
                                         for value in ("1e308", "inf", "nan", "-1", "0")] +
                         [("LEADERBOARD_ENDPOINT_DEADLINE", "86401"), ("LEADERBOARD_ENDPOINT_MAX_REPLY_MB", "1025"),
                          ("LEADERBOARD_ENDPOINT_MAX_REPLY_MB", "0.0009")])
def test_an_endpoint_limit_that_is_no_sane_number_is_refused_by_the_space_and_the_cli_alike(name, value):
    """`1e308` passed the Space's start (0 < value < inf) and every served run then ended with `OverflowError: cannot
    convert float infinity to integer`. One check, the evaluator's, answers both doors with the same one line."""
    from evaluator import api

    with pytest.raises(ValueError) as space:
        Settings.from_env({name: value})
    with pytest.raises(ValueError) as cli:
        api.endpoint_limits({name: value})
    for said in (str(space.value), str(cli.value)):
        assert said.startswith(f"{name} must be a number of ") and "\n" not in said, said
    rule = str(cli.value).rsplit(", not ", 1)[0]
    assert str(space.value).rsplit(", not ", 1)[0] == rule and ("86400 (a day)" in rule or "0.001 to 1024" in rule)


def test_the_endpoint_limits_bounds_are_accepted_by_both_doors():
    from evaluator import api

    bounds = {"LEADERBOARD_ENDPOINT_DEADLINE": "86400", "LEADERBOARD_ENDPOINT_MAX_REPLY_MB": "1024"}
    settings = Settings.from_env(bounds)
    assert (settings.endpoint_deadline, settings.endpoint_max_reply_mb) == (86400, 1024)
    assert all(api.endpoint_limit_problem(name, value) is None for name, value in bounds.items())
    limits = api.endpoint_limits(bounds)
    assert limits.deadline == 86400 and limits.max_reply_bytes == 1024 ** 3
    assert api.endpoint_limits({"LEADERBOARD_ENDPOINT_MAX_REPLY_MB": "0.001"}).max_reply_bytes == 1048


HOSTILE_BUCKETS = ["a b/c", "../x", "a/..", "a/b?x=1", "a/<img src=x>", "-a/b", "o" * 500 + "/cache", "ünï/cödé",
                   "a\x1b[2J/b", "cache", "a/b/c", "/cache", "org/", "org/cache.git", "org/-cache"]


@pytest.mark.parametrize("bucket", HOSTILE_BUCKETS)
def test_a_cache_bucket_must_be_a_name_a_hub_bucket_can_have(bucket):
    """The start check asked for one `/` and non-blank parts, and passed anything else verbatim into every Job's
    volume. Now both parts follow the Hub's naming rule (the model ids' one), refused in one line that quotes at
    most 40 characters of the value, escaped."""
    with pytest.raises(ValueError) as caught:
        Settings.from_env({"LEADERBOARD_JOBS_CACHE_BUCKET": bucket})
    said = str(caught.value)
    assert said.startswith("LEADERBOARD_JOBS_CACHE_BUCKET names a Hub storage bucket as <owner>/<name>, not "), said
    assert said.isprintable() and len(said) < 300 and "o" * 41 not in said, said


def test_a_cache_bucket_the_hub_could_have_is_accepted_and_no_longer_name():
    for bucket in ("org/cache", "Org-1/compile.cache_2", "a/" + "b" * 96):
        assert Settings.from_env({"LEADERBOARD_JOBS_CACHE_BUCKET": bucket}).jobs_cache_bucket == bucket
    with pytest.raises(ValueError, match="LEADERBOARD_JOBS_CACHE_BUCKET"):
        Settings.from_env({"LEADERBOARD_JOBS_CACHE_BUCKET": "a/" + "b" * 97})


def bad_compile_caches(tmp_path: Path) -> dict[str, Path]:
    """A symlink loop, a file, a path under a file and a folder inside a loop."""
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    (tmp_path / "a-file").write_text("not a folder")
    return {"a loop": tmp_path / "loop-a", "a file": tmp_path / "a-file",
            "under a file": tmp_path / "a-file" / "torch-compile", "inside a loop": tmp_path / "loop-a" / "cache"}


def test_a_compile_cache_that_cannot_be_a_folder_is_refused_at_start(tmp_path):
    """A symlink loop raised RuntimeError in worker_command after the request was claimed; a file, or a path under
    one, failed every run with FileExistsError and the machine's path. Now the Space's start refuses each with one
    line naming the variable, without the path; a folder that can be made is accepted, and not made."""
    for what, folder in bad_compile_caches(tmp_path).items():
        with pytest.raises(ValueError) as caught:
            Settings.from_env({"LEADERBOARD_COMPILE_CACHE": str(folder)})
        said = str(caught.value)
        assert said.startswith("LEADERBOARD_COMPILE_CACHE names no folder PyTorch's compile cache can use: "), what
        assert str(tmp_path) not in said and "\n" not in said, said
    for good in (tmp_path, tmp_path / "new" / "torch-compile"):
        assert Settings.from_env({"LEADERBOARD_COMPILE_CACHE": str(good)}).compile_cache == good
    assert not (tmp_path / "new").exists()


def test_a_compile_cache_gone_bad_after_start_never_stops_the_worker_and_fails_only_a_compiled_run(tmp_path,
                                                                                                  monkeypatch):
    """Bad since the start: the worker's command is still built (no RuntimeError after the claim); a run on the
    dynamic path never touches the folder; one on the compiled path fails with one line naming the setting, no path."""
    import evaluator.models
    from evaluator.models.generation_cache import COMPILED, DYNAMIC, CompileCacheUnusable
    from evaluator.runs.runner import RunConfig, load_run_model
    from leaderboard.running.evaluator_process import worker_command

    class Loaded:
        dtype, has_vision, generation_path = "float32", False, DYNAMIC

    monkeypatch.setattr(evaluator.models, "load_model", lambda *args, **kwargs: Loaded)
    for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):  # unset here, and as they were after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    for what, folder in bad_compile_caches(tmp_path).items():
        command = worker_command(Settings().with_(compile_cache=folder), tmp_path / "r.json", tmp_path / "out")
        assert command[command.index("--compile-cache") + 1] == str(folder), what
        config = RunConfig(model="org/model", device="cpu", compile_cache=folder)
        Loaded.generation_path = DYNAMIC
        assert load_run_model(config, [])[0] is Loaded and "TORCHINDUCTOR_CACHE_DIR" not in os.environ
        Loaded.generation_path = COMPILED
        with pytest.raises(CompileCacheUnusable) as caught:
            load_run_model(config, [])
        said = str(caught.value)
        assert said.startswith("the compile cache folder (--compile-cache, LEADERBOARD_COMPILE_CACHE) cannot be "
                               "used: "), (what, said)
        assert str(tmp_path) not in said and "Error" not in said, said
    assert (tmp_path / "a-file").read_text() == "not a folder"
    made = tmp_path / "made" / "torch-compile"
    load_run_model(RunConfig(model="org/model", device="cpu", compile_cache=made), [])
    assert made.is_dir() and os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(made / "inductor")


def test_an_image_cache_that_cannot_be_a_folder_is_refused_at_start_and_never_resolved(tmp_path):
    """As the compile cache: LEADERBOARD_IMAGE_CACHE set to a loop of symbolic links raised RuntimeError in
    worker_command (Path.resolve) after the request was claimed. Now the start refuses it in one line without the
    path, and the worker's command takes the folder as given (absolute, never resolved)."""
    from leaderboard.running.evaluator_process import worker_command

    for what, folder in bad_compile_caches(tmp_path).items():
        with pytest.raises(ValueError) as caught:
            Settings.from_env({"LEADERBOARD_IMAGE_CACHE": str(folder)})
        said = str(caught.value)
        assert said.startswith("LEADERBOARD_IMAGE_CACHE names no folder the image cache can use: "), what
        assert str(tmp_path) not in said, said
        command = worker_command(Settings().with_(image_cache=folder), tmp_path / "r.json", tmp_path / "out")
        assert command[command.index("--images-dir") + 1] == str(folder), what
