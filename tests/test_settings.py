"""Settings: embedded defaults, environment overrides, refusals, and the README's table of variables."""
from __future__ import annotations

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
           "LEADERBOARD_RUN_SCHEDULER": "0", "HF_TOKEN": "hf_secret_value"}
    settings = Settings.from_env(env)
    assert settings.home == Path("/tmp/x") and settings.benchmarks == ("cure", "simpleqa")
    assert settings.max_params_billions == 2.5 and not settings.run_scheduler
    assert Settings.from_env({"LEADERBOARD_OPTIONS": "cure.mode=generation, simpleqa.grader=letter"}).options == (
        "cure.mode=generation", "simpleqa.grader=letter")
    assert settings.host == "0.0.0.0"  # on a Space
    assert not settings.allow_local_models  # off by default with the Hub store
    assert settings.heartbeat_seconds == 60  # each heartbeat is a commit on the Hub
    assert "hf_secret_value" not in repr(settings)


@pytest.mark.parametrize("env, message", [
    ({"LEADERBOARD_STORE": "s3"}, "LEADERBOARD_STORE"),
    ({"LEADERBOARD_STORE": "hub"}, "LEADERBOARD_RESULTS_REPO"),
    ({"LEADERBOARD_SUITE": "huge"}, "LEADERBOARD_SUITE"),
    ({"LEADERBOARD_LEASE_SECONDS": "3", "LEADERBOARD_HEARTBEAT_SECONDS": "5"}, "LEADERBOARD_LEASE_SECONDS"),
    ({"LEADERBOARD_MAX_ATTEMPTS": "0"}, "LEADERBOARD_MAX_ATTEMPTS"),
    ({"LEADERBOARD_BATCH_SIZE": "0"}, "LEADERBOARD_BATCH_SIZE"),
    ({"LEADERBOARD_OPTIONS": "cure.mode"}, "LEADERBOARD_OPTIONS"),
    ({"LEADERBOARD_BATCH_SIZE": "many"}, "LEADERBOARD_BATCH_SIZE"),
    ({"LEADERBOARD_PORT": "eighty"}, "LEADERBOARD_PORT"),
    ({"LEADERBOARD_BENCHMARKS": "cure,vibes"}, "LEADERBOARD_BENCHMARKS names unknown benchmarks vibes"),
])
def test_bad_settings_are_refused_naming_the_variable(env, message):
    with pytest.raises(ValueError, match=message):
        Settings.from_env(env)


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


def test_readme_lists_every_variable_with_its_default():
    readme = (PROJECT / "README.md").read_text()
    for variable, default, _ in declared():
        row = f"| `{variable}` | `{default}` |" if default else f"| `{variable}` | (empty) |"
        assert row in readme, variable
