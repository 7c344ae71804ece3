"""The quick tier (`-m "not slow"`) kept quick, as a pytest plugin (tests/conftest.py loads it): its run ends with
the slowest tests' durations, so growth shows where it starts; and a run of it stops before any test when a test it
collected carries the slow mark (one marked after the selection, by a hook or a fixture, would slip in unseen)."""
from __future__ import annotations

import pytest

QUICK_TIER = "not slow"
QUICK_DURATIONS = 25  # the slowest tests a quick-tier run lists at its end


def _quick(config: pytest.Config) -> bool:
    return (config.getoption("markexpr", "") or "").strip() == QUICK_TIER


def pytest_configure(config: pytest.Config) -> None:
    if _quick(config) and config.getoption("durations", None) is None:  # --durations=0 (all) stays
        config.option.durations = QUICK_DURATIONS


def pytest_collection_finish(session: pytest.Session) -> None:
    if not _quick(session.config):
        return
    slow = [item.nodeid for item in session.items if item.get_closest_marker("slow") is not None]
    if slow:
        raise pytest.UsageError(f"the quick tier collected {len(slow)} test(s) marked slow (marked after the "
                                f"selection): {', '.join(slow[:5])}")
