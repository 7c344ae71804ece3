"""Test-wide setup: an offline, hand-made Hub cache (set before huggingface_hub is imported) and tiny models."""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

_ROOT = Path(tempfile.mkdtemp(prefix="vlm-lb-tests-"))
os.environ["HF_HOME"] = str(_ROOT / "hf-home")
os.environ["HF_HUB_CACHE"] = str(_ROOT / "hf-home" / "hub")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ.pop("HF_TOKEN", None)
for _var in [v for v in os.environ if v.startswith("LEADERBOARD_")]:
    os.environ.pop(_var)

import pytest  # noqa: E402

from tests.hub_cache import lay_into_hub_cache  # noqa: E402

HUB_CACHE = Path(os.environ["HF_HUB_CACHE"])
PROJECT = Path(__file__).resolve().parent.parent


@dataclass
class TinyModel:
    repo_id: str
    sha: str
    folder: Path  # the built model folder (also usable as a local model)


@pytest.fixture(scope="session")
def hub_cache() -> Path:
    HUB_CACHE.mkdir(parents=True, exist_ok=True)
    return HUB_CACHE


@pytest.fixture(scope="session")
def tiny_llava(hub_cache, tmp_path_factory) -> TinyModel:
    from tests.tiny_models import build_tiny_llava

    folder = build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))
    sha = lay_into_hub_cache(hub_cache, "tiny-org/tiny-llava", folder)
    return TinyModel("tiny-org/tiny-llava", sha, folder)


@pytest.fixture(scope="session")
def tiny_llama(hub_cache, tmp_path_factory) -> TinyModel:
    from tests.tiny_models import build_tiny_llama

    folder = build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))
    sha = lay_into_hub_cache(hub_cache, "tiny-org/tiny-llama", folder)
    return TinyModel("tiny-org/tiny-llama", sha, folder)


@pytest.fixture
def settings(tmp_path):
    from leaderboard.settings import Settings

    return Settings.from_env({}, home=tmp_path / "home", run_scheduler=False, heartbeat_seconds=0.5,
                             lease_seconds=30.0, scheduler_interval=3600.0)


@pytest.fixture
def store(settings):
    from leaderboard.store import open_store

    return open_store(settings)
