"""The quick tier (`-m "not slow"`) kept quick, as a pytest plugin (tests/conftest.py loads it): the test functions
its profile measured as slow (tests/quick_tier_slow.txt, grown by tools/quick_tier_profile.py) are marked slow before
the selection; its run ends with the slowest tests' durations, so growth shows where it starts; and a run of it stops
before any test when a test it collected carries the slow mark (one marked after the selection, by a hook or a
fixture, would slip in unseen)."""
from __future__ import annotations

from pathlib import Path

import pytest

QUICK_TIER = "not slow"
QUICK_DURATIONS = 25  # the slowest tests a quick-tier run lists at its end
SLOW_LIST = Path(__file__).with_name("quick_tier_slow.txt")
KEEP = "!"  # a line of the list that starts so names a test the quick tier keeps, whatever its time


def _entries(path: Path) -> list[str]:
    lines = path.read_text().splitlines() if path.is_file() else []
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def profiled_slow(path: Path = SLOW_LIST) -> frozenset[str]:
    """The test functions (file::name, as in a node id) that the quick tier's profile measured as slow."""
    return frozenset(entry for entry in _entries(path) if not entry.startswith(KEEP))


def kept_quick(path: Path = SLOW_LIST) -> frozenset[str]:
    """The test functions the list keeps in the quick tier whatever they take (lines starting with KEEP)."""
    return frozenset(entry[len(KEEP):].strip() for entry in _entries(path) if entry.startswith(KEEP))


def function_of(nodeid: str) -> str:
    """A test's function as file::name: its node id with its parameters left off."""
    return nodeid.split("[", 1)[0]


def function_id(item: pytest.Item) -> str:
    """An item's test function as file::name (its parameters left off)."""
    return function_of(item.nodeid)


def _quick(config: pytest.Config) -> bool:
    return (config.getoption("markexpr", "") or "").strip() == QUICK_TIER


def pytest_configure(config: pytest.Config) -> None:
    if _quick(config) and config.getoption("durations", None) is None:  # --durations=0 (all) stays
        config.option.durations = QUICK_DURATIONS


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The profiled-slow tests marked slow, before -m selects (the mark plugin's hook runs after this one)."""
    slow = profiled_slow(SLOW_LIST)
    for item in items:
        if function_id(item) in slow:
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session: pytest.Session) -> None:
    if not _quick(session.config):
        return
    slow = [item.nodeid for item in session.items if item.get_closest_marker("slow") is not None]
    if slow:
        raise pytest.UsageError(f"the quick tier collected {len(slow)} test(s) marked slow (marked after the "
                                f"selection): {', '.join(slow[:5])}")
