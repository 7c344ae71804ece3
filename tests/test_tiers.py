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


def test_a_test_on_the_profiled_list_runs_in_the_whole_suite_only(pytester, monkeypatch):
    from tests import tiers

    listed = pytester.path / "slow.txt"
    listed.write_text("# a comment\ntest_some.py::test_quick\n")
    monkeypatch.setattr(tiers, "SLOW_LIST", listed)
    pytester.makepyfile(test_some=TESTS)
    quick = pytester.runpytest_inprocess("-p", "tests.tiers", "-m", "not slow", "-p", "no:cacheprovider")
    assert quick.ret == 0
    quick.assert_outcomes(passed=1, deselected=2)  # test_quick is listed: left to the whole suite, with test_marked_slow
    whole = pytester.runpytest_inprocess("-p", "tests.tiers", "-p", "no:cacheprovider")
    whole.assert_outcomes(passed=3)


def test_every_function_on_the_profiled_list_exists():
    """A renamed or removed test leaves its line behind: the list names only test functions that are there."""
    import ast

    from tests.tiers import SLOW_LIST, kept_quick, profiled_slow

    listed = profiled_slow(SLOW_LIST) | kept_quick(SLOW_LIST)
    assert listed, "the quick tier's list of measured-slow tests is empty"
    missing = []
    for entry in sorted(listed):
        path, _, name = entry.partition("::")
        file = SLOW_LIST.parent.parent / path
        names = set()
        if file.is_file():
            tree = ast.parse(file.read_text())
            names = {f"{node.name}" for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
            names |= {f"{node.name}::{item.name}" for node in tree.body if isinstance(node, ast.ClassDef)
                      for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if name not in names:
            missing.append(entry)
    assert not missing, missing


def test_the_profile_tool_adds_what_took_long_and_keeps_what_is_listed(tmp_path):
    from tools.quick_tier_profile import main
    from tests.tiers import kept_quick, profiled_slow

    profile = tmp_path / "profile.txt"
    profile.write_text("============ slowest durations ============\n"
                       "0.30s call     tests/test_a.py::test_slow[x]\n"
                       "0.01s call     tests/test_a.py::test_slow[y]\n"
                       "0.01s setup    tests/test_a.py::test_quick\n"
                       "0.02s call     tests/test_a.py::test_quick\n"
                       "0.04s setup    tests/test_b.py::test_edge\n"
                       "0.02s call     tests/test_b.py::test_edge\n"
                       "0.90s call     tests/test_c.py::test_matrix[llava]\n"
                       "0.90s call     tests/test_c.py::test_cases[qwen2_vl-image]\n"
                       "0.70s call     tests/test_c.py::test_kept_quick\n")
    listed = tmp_path / "slow.txt"
    listed.write_text("tests/test_old.py::test_kept\n!tests/test_c.py::test_kept_quick\n")
    assert main([str(profile), "--list", str(listed)]) == 0
    # test_edge's 0.06 s is its setup and call together; a family's matrix test is QUICK_FAMILIES' to say
    assert profiled_slow(listed) == {"tests/test_old.py::test_kept", "tests/test_a.py::test_slow",
                                     "tests/test_b.py::test_edge"}
    assert kept_quick(listed) == {"tests/test_c.py::test_kept_quick"}  # kept quick, whatever it took
    (tmp_path / "empty.txt").write_text("no durations here\n")
    assert main([str(tmp_path / "empty.txt"), "--list", str(listed)]) == 2
