"""tests/tiers.py: the quick tier lists its slowest tests at its end, and refuses to run a test marked slow."""
from __future__ import annotations

LATE_MARK = '''
import pytest

@pytest.hookimpl(trylast=True)  # after the selection by -m, as a careless hook or plugin might
def pytest_collection_modifyitems(items):
    for item in items:
        if "late" in item.name:
            item.add_marker(pytest.mark.slow)
'''
TESTS = '''
import pytest

def test_quick():
    assert True

@pytest.mark.slow
def test_marked_slow():
    assert True

def test_late():
    assert True
'''


def test_the_quick_tier_prints_its_slowest_tests(pytester):
    pytester.makepyfile(test_some=TESTS)
    result = pytester.runpytest_inprocess("-p", "tests.tiers", "-m", "not slow", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.assert_outcomes(passed=2, deselected=1)
    assert "slowest 25 durations" in result.stdout.str()
    whole = pytester.runpytest_inprocess("-p", "tests.tiers", "-p", "no:cacheprovider")
    assert whole.ret == 0 and "durations" not in whole.stdout.str()  # the whole suite's output stays as it was


def test_a_test_marked_slow_after_the_selection_stops_the_quick_tier(pytester):
    pytester.makeconftest(LATE_MARK)
    pytester.makepyfile(test_some=TESTS)
    result = pytester.runpytest_inprocess("-p", "tests.tiers", "-m", "not slow", "-p", "no:cacheprovider")
    assert result.ret != 0
    assert "the quick tier collected 1 test(s) marked slow" in result.stderr.str() + result.stdout.str()
    assert "test_late" in result.stderr.str() + result.stdout.str()
    result.assert_outcomes()  # nothing ran
