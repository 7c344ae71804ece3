"""Test-wide setup: an offline, hand-made Hub cache (set before huggingface_hub is imported) and tiny models."""
from __future__ import annotations

import atexit
import os
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_SYSTEM_TMP = tempfile.gettempdir()
_ROOT = Path(tempfile.mkdtemp(prefix="vlm-lb-tests-"))
# Every temporary file of the session, this process's and its subprocesses' (an evaluator's, a bench's), goes under
# _ROOT, removed when the process ends: a test or script that forgets its own no longer leaves it in /tmp (400 such
# folders, 7 GB, had piled up on one machine). pytest's own tmp_path folders stay where pytest keeps them.
_TMP = _ROOT / "tmp"
_TMP.mkdir()
os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", _SYSTEM_TMP)
os.environ["TMPDIR"] = tempfile.tempdir = str(_TMP)
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)
os.environ["HF_HOME"] = str(_ROOT / "hf-home")
os.environ["HF_HUB_CACHE"] = str(_ROOT / "hf-home" / "hub")
os.environ["HF_HUB_OFFLINE"] = "1"
# huggingface_hub uploads LFS files through Xet when hf_xet is installed, a protocol the loopback Hub
# (tests/hub_server.py) does not serve; with Xet off the client takes the Git LFS upload path, which it serves.
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ.pop("HF_TOKEN", None)
# Under pytest-xdist with a process per core (`-n 2` on 2 cores), one torch thread each (and in their subprocesses):
# two processes of two OpenMP threads on two cores spin against each other and every matrix product slows down.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0) >= (os.cpu_count() or 1):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
for _var in [v for v in os.environ if v.startswith("LEADERBOARD_")]:
    os.environ.pop(_var)
# A random-weight model whose template opens a thought seldom closes it: every reply would run the whole thinking
# budget (4,096 tokens by default). Tests run with a small one (the CLI's subprocesses too); tests of the default
# itself remove this.
os.environ["LEADERBOARD_THINKING_BUDGET"] = "8"
# Bytecode is kept between sessions, in a folder of its own outside the checkout, even where the machine sets
# PYTHONDONTWRITEBYTECODE: without it every session rewrote the asserts of every test file again (about 20 s of each
# worker's collection on 2 cores) and every subprocess compiled the project again. An xdist worker starts with TMPDIR
# already the session's folder (above), so it finds the machine's own through PYTEST_DEBUG_TEMPROOT: else each worker
# and its subprocesses compiled torch, transformers, Gradio and every test file again in a folder removed at the end.
_BYTECODE = str(Path(os.environ["PYTEST_DEBUG_TEMPROOT"]) / "vlm-lb-tests-bytecode")
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ["PYTHONPYCACHEPREFIX"] = _BYTECODE
sys.dont_write_bytecode, sys.pycache_prefix = False, _BYTECODE

import pytest  # noqa: E402

from tests.hub_cache import lay_into_hub_cache  # noqa: E402

# the quick tier's guard and durations; xdist's groups under pytest 9.2; pytester runs tests/test_tiers.py
pytest_plugins = ["tests.tiers", "tests.xdist_groups", "pytester"]

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


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module of tiny-model tests: on a busy 2-core machine two OpenMP threads make each
    tiny matrix product far slower."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def environ_kept():
    """os.environ as it was once the test ends: for a script whose import sets its own (bench/, tools/screenshots.py
    pop every LEADERBOARD_ variable), which would otherwise reach every later test on the worker."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory):
    """tiny_folder(family) -> the folder of that family's tiny model (tests.tiny_models.FAMILIES), built once."""
    from tests.tiny_models import FAMILIES

    built: dict[str, Path] = {}

    def _get(family: str) -> Path:
        if family not in built:
            built[family] = FAMILIES[family](tmp_path_factory.mktemp(f"tiny-{family}"))
        return built[family]

    return _get


@pytest.fixture
def settings(tmp_path):
    from leaderboard.settings import Settings

    return Settings.from_env({}, home=tmp_path / "home", run_scheduler=False, heartbeat_seconds=0.5,
                             lease_seconds=30.0, scheduler_interval=3600.0)


@pytest.fixture
def store(settings):
    from leaderboard.store import open_store

    return open_store(settings)


# gradio_client's HTTP calls wait this long: a busy machine is slow, not red (its default gives up after seconds)
PATIENT = {"timeout": 300}

HUB_USER, HUB_ORG = "ada", "test-org"  # the loopback Hub's user and the org its test repos live in


@pytest.fixture(scope="module")
def hub():
    """The loopback Hub (tests/hub_server.py), one per test module, with the Hub client pointed at it."""
    from tests.hub_server import HubServer, hub_client_online

    with HubServer() as server, hub_client_online():
        yield server


@pytest.fixture(scope="module")
def token(hub) -> str:
    """A token of HUB_USER, a member of HUB_ORG, on the module's loopback Hub."""
    return hub.issue_token(HUB_USER, orgs=[HUB_ORG])


@pytest.fixture
def api(hub, token):
    """huggingface_hub's own HfApi on the loopback Hub."""
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.url, token=token)


@pytest.fixture
def repos() -> tuple[str, str]:
    """(results repo, requests repo) of HUB_ORG, new for each test."""
    import uuid

    suffix = uuid.uuid4().hex[:8]
    return f"{HUB_ORG}/results-{suffix}", f"{HUB_ORG}/requests-{suffix}"


def wait_for(predicate, timeout: float = 120.0, step: float = 0.05):
    """Poll `predicate` until it returns something true (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out waiting")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def app_url(settings, store):
    """build_app(settings, store) served on 127.0.0.1 (no scheduler: tests tick by hand); closed afterwards."""
    from leaderboard.ui import build_app, launch_options

    demo = build_app(settings, store)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, show_error=True,
                **launch_options(settings, store))
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@pytest.fixture
def client(app_url):
    """A gradio_client on the served app."""
    from gradio_client import Client

    return Client(app_url, verbose=False, download_files=False, httpx_kwargs=PATIENT)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
BROWSER_TIMEOUT_MS = 30_000


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright. Skipped without it, unless REQUIRE_BROWSER=1 (CI), where it fails."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but {CHROMIUM} is missing (apt-get install -y chromium)")
        pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def open_page(browser):
    """open_page(url, width=1400, height=1000) -> a Playwright Page on the app, loaded (the tab bar is visible).
    Closed after the test."""
    contexts = []

    def _open(url: str, width: int = 1400, height: int = 1000):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(BROWSER_TIMEOUT_MS)
        page.goto(url)
        page.locator("#board-view").wait_for(state="visible")  # the Leaderboard tab is up
        return page

    yield _open
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def finished_runs(tiny_llava, tiny_llama, tmp_path_factory):
    """tests.explorer_runs.make_runs: finished runs of every benchmark by the tiny models, made once."""
    import torch

    from tests.explorer_runs import make_runs

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return make_runs(tmp_path_factory.mktemp("finished-runs"), tiny_llava, tiny_llama)
    finally:
        torch.set_num_threads(threads)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which reads the groups (and -m, which reads the marks)
def pytest_collection_modifyitems(config, items):
    """The quick tier (-m "not slow") leaves out every test on `finished_runs` (tests/test_explorer.py's, among
    others): that fixture runs whole evaluations of every benchmark by the tiny models (tests/explorer_runs.py), end
    to end, once a session (its tests share one test worker, so it is made once); and the family matrix (a test
    parametrised by a family of tests.tiny_models.FAMILIES) of the families outside QUICK_FAMILIES, which the whole
    suite runs. Every other slow mark is on its test or its file, or on tests/quick_tier_slow.txt (tests/tiers.py
    marks those)."""
    from tests.tiny_models import FAMILIES, QUICK_FAMILIES

    slow = pytest.mark.slow
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        family = params.get("family", params.get("name"))
        if "finished_runs" in getattr(item, "fixturenames", ()):
            item.add_marker(slow)
            item.add_marker(pytest.mark.xdist_group("finished_runs"))  # on one test worker: made once, not twice
        elif isinstance(family, str) and family in FAMILIES and family not in QUICK_FAMILIES:
            item.add_marker(slow)
        if isinstance(family, str) and family in FAMILIES:  # a family's tests on one test worker (--dist loadgroup):
            # its tiny model built, and each module's loaded, once; the quick families together, so that one worker
            # pays the first model load of a session (some 10 s), not both
            item.add_marker(pytest.mark.xdist_group("quick-families" if family in QUICK_FAMILIES else family))
