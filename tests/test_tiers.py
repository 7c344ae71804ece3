"""tests/tiers.py: the quick tier lists its slowest tests at its end, and refuses to run a test marked slow."""
from __future__ import annotations

import pytest

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
    import re

    from tests.tiers import SLOW_LIST, kept_quick, profiled_slow

    listed = profiled_slow(SLOW_LIST) | kept_quick(SLOW_LIST)
    assert listed, "the quick tier's list of measured-slow tests is empty"
    texts: dict[str, str] = {}  # file -> its source, read once per file
    for path in {entry.partition("::")[0] for entry in listed}:
        file = SLOW_LIST.parent.parent / path
        texts[path] = file.read_text() if file.is_file() else ""
    missing = [entry for entry in sorted(listed) if not re.search(
        rf"^\s*(async )?def {re.escape(entry.rpartition('::')[2])}\(", texts[entry.partition("::")[0]], re.M)]
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
                       "0.90s call     tests/test_c.py::test_cases[qwen2_vl-image]@qwen2_vl\n"
                       "0.30s setup    tests/test_e.py::test_grouped@finished_runs\n"
                       "0.30s call     tests/test_e.py::test_at[a@b]\n"
                       "0.90s call     tests/test_c.py::test_cases[qwen2_vl-image]\n"
                       "0.70s call     tests/test_c.py::test_kept_quick\n"
                       "0.20s call     tests/test_d.py::test_spaced[a list]\n")
    listed = tmp_path / "slow.txt"
    listed.write_text("tests/test_old.py::test_kept\n!tests/test_c.py::test_kept_quick\n")
    assert main([str(profile), "--list", str(listed)]) == 0
    # test_edge's 0.06 s is its setup and call together; a family's matrix test is QUICK_FAMILIES' to say
    assert profiled_slow(listed) == {"tests/test_old.py::test_kept", "tests/test_a.py::test_slow",
                                     "tests/test_b.py::test_edge", "tests/test_d.py::test_spaced",
                                     "tests/test_e.py::test_grouped", "tests/test_e.py::test_at"}
    assert kept_quick(listed) == {"tests/test_c.py::test_kept_quick"}  # kept quick, whatever it took
    (tmp_path / "empty.txt").write_text("no durations here\n")
    assert main([str(tmp_path / "empty.txt"), "--list", str(listed)]) == 2


@pytest.mark.slow  # two pytest-xdist workers of their own
def test_a_group_runs_on_one_worker(pytester, monkeypatch):
    """tests/xdist_groups.py: under pytest 9.2, --dist loadgroup sent a group's tests to both workers (xdist's suffix
    on the node id was no longer read); each group now runs on one."""
    from tests.tiers import SLOW_LIST

    pytester.makepyfile(test_grouped="""
import os
import pytest

@pytest.mark.parametrize("n", range(6))
@pytest.mark.parametrize("group", ["one", "two"])
def test_where(group, n):
    path = os.path.join(os.path.dirname(__file__), f"ran-{group}-{n}")
    open(path, "w").write(os.environ["PYTEST_XDIST_WORKER"])
""")
    pytester.makeconftest("""
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.xdist_group(item.callspec.params["group"]))
""")
    monkeypatch.setenv("PYTHONPATH", str(SLOW_LIST.parent.parent))  # the project's tests package, for -p
    result = pytester.runpytest_subprocess("-p", "tests.xdist_groups", "-n", "2", "--dist", "loadgroup",
                                           "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()[-2000:]
    workers = {group: {(pytester.path / f"ran-{group}-{n}").read_text() for n in range(6)} for group in ("one", "two")}
    assert all(len(ran) == 1 for ran in workers.values()), workers
