"""Error bars on the board (issue 60): each score with half its 95% interval and a hover title, the intervals' own
columns, ranks that claim no more than the intervals (Chatbot Arena's rule), the two kinds of missing score, the
suite in plain sight and the groups separated."""
from __future__ import annotations

import html
import math
import re

from leaderboard.board.columns import headline_scores, overall_interval, schema
from leaderboard.board.frames import board_table, leaderboard_frame
from leaderboard.board.score_cells import SEPARATOR
from leaderboard.board.views import status_text, view_board, view_text
from tests.results_files import board_result

S = schema()
CURE_ONLY = {"simpleqa": "x", "reform": "x", "lave": "x"}


def with_interval(res: dict, benchmark: str, metric: str, low: float, high: float, n: int = 20,
                  stderr: float = 0.05, method: str = "wilson, clustered clt by chain") -> dict:
    res["benchmarks"][benchmark].setdefault("intervals", {})[metric] = {
        "stderr": stderr, "low": low, "high": high, "n": n, "method": method}
    return res


def cure_run(model: str, score: float, low: float, high: float, **kw) -> dict:
    return with_interval(board_result(model, {"cure": score}, skipped=CURE_ONLY, **kw), "cure", "Ro", low, high)


def titles(cell: str) -> str:
    found = re.search(r'title="([^"]*)"', cell)
    return found.group(1) if found else ""


def test_three_runs_two_that_overlap_share_a_place_and_one_clearly_apart_is_below():
    """A 70% and a 65% whose intervals overlap cannot be told apart: both are "1-2"; a 30% whose interval lies
    wholly below both is third, and no interval above it leaves it a range."""
    raw = leaderboard_frame([cure_run("org/a", 0.70, 0.55, 0.82), cure_run("org/b", 0.65, 0.50, 0.78),
                             cure_run("org/c", 0.30, 0.15, 0.45)], S)
    for view in (None, "cure"):  # the Overview ranks by the overall (CURE alone here), the CURE view by Ro
        board = view_text(raw, S, view)
        assert list(board["Model"]) == ["org/a", "org/b", "org/c"]  # still ordered by score
        assert list(board["#"]) == ["1-2", "1-2", "3"], view
    shown, _ = view_board(raw, S, "cure")
    assert list(shown.rows["rank"]) == [1, 1, 3] and list(shown.rows["rank_worst"]) == [2, 2, 3]


def test_a_chain_of_overlaps_gives_each_run_the_range_it_could_take():
    """a overlaps b, b overlaps c, a lies wholly above c: a is 1-2, b 1-3, c 2-3."""
    raw = leaderboard_frame([cure_run("org/a", 0.70, 0.60, 0.80), cure_run("org/b", 0.55, 0.45, 0.65),
                             cure_run("org/c", 0.40, 0.30, 0.50)], S)
    assert list(view_text(raw, S, "cure")["#"]) == ["1-2", "1-3", "2-3"]


def test_runs_without_intervals_rank_by_their_points_as_before():
    """A run published before intervals were recorded counts its score as both ends: distinct scores get distinct
    places, and equal ones share a range."""
    raw = leaderboard_frame([board_result("org/a", {"cure": 0.5}, skipped=CURE_ONLY),
                             board_result("org/b", {"cure": 0.4}, skipped=CURE_ONLY),
                             board_result("org/c", {"cure": 0.4}, skipped=CURE_ONLY)], S)
    assert list(view_text(raw, S, "cure")["#"]) == ["1", "2-3", "2-3"]
    assert view_text(raw, S, "cure")["CURE Ro"].tolist() == ["50.0", "40.0", "40.0"]  # no ± without an interval


def test_a_score_reads_with_half_its_interval_and_hovers_its_interval_n_method_and_suite():
    raw = leaderboard_frame([cure_run("org/a", 0.556, 0.45, 0.674)], S)
    board = view_text(raw, S, "cure")
    assert board["CURE Ro"][0] == "55.6 ± 11.2"  # (67.4 - 45.0) / 2
    assert board["CURE Ro 95%"][0] == "45.0-67.4 (n 20)"
    _, frame = view_board(raw, S, "cure")
    table = board_table(frame, S)
    cell = table["metadata"]["display_value"][0][table["headers"].index("CURE Ro")]
    assert cell.endswith(">55.6 ± 11.2</span>")
    title = titles(cell)
    assert "95% interval 45.0-67.4 (n 20)" in title and "standard error 5.0" in title
    assert "wilson, clustered clt by chain" in title and "sample (synthetic)" in title
    suite = table["metadata"]["display_value"][0][table["headers"].index("Suite")]
    assert ">sample (synthetic)</span>" in suite and "not the paper" in titles(suite)


def test_a_full_suite_row_is_not_called_synthetic():
    raw = leaderboard_frame([cure_run("org/a", 0.5, 0.4, 0.6, suite="full")], S)
    _, frame = view_board(raw, S)
    table = board_table(frame, S)
    row = table["metadata"]["display_value"][0]
    assert not any("synthetic" in cell for cell in row)
    assert row[table["headers"].index("Suite")] == "full"
    shown, _ = view_board(raw, S)
    assert "sample (synthetic)" not in status_text(shown, S, S.view(None))


def test_a_lite_row_hovers_its_rule_and_its_size_beside_the_full_suite_s():
    """Issue 67: a lite score's hover names the rule and its benchmark's lite size of the full suite's (the evaluator's
    own counts, api.expected_widths); the Suite cell lists every benchmark the run ran; another rule is named alone."""
    from evaluator import api

    def said(cell: str) -> str:  # the title as read (an apostrophe is escaped in the attribute)
        return html.unescape(titles(cell))

    sizes = {w.benchmark: (w.lite_items, w.full_items) for w in api.expected_widths()}
    run = cure_run("org/a", 0.5, 0.4, 0.6, suite="lite")
    run["run"]["lite_rule"] = api.LITE_RULE
    _, frame = view_board(leaderboard_frame([run], S), S, "cure")
    table = board_table(frame, S)
    row = table["metadata"]["display_value"][0]
    lite, full = sizes["cure"]
    title = said(row[table["headers"].index("CURE Ro")])
    assert f"suite: lite ({api.LITE_RULE}: {lite:,} items of the full suite's {full:,})" in title
    assert "95% interval 40.0-60.0 (n 20)" in title and "synthetic" not in title
    suite = row[table["headers"].index("Suite")]
    assert suite.endswith(">lite</span>") and said(suite) == f"suite: lite ({api.LITE_RULE}: {lite:,} items of the " \
        f"full suite's {full:,})"  # the run ran CURE alone
    both = board_result("org/b", {"cure": 0.5, "lave": 0.5}, skipped={"simpleqa": "x", "reform": "x"}, suite="lite")
    both["run"]["lite_rule"] = api.LITE_RULE
    _, frame = view_board(leaderboard_frame([both], S), S)
    table = board_table(frame, S)
    overall = said(table["metadata"]["display_value"][0][table["headers"].index("Overall")])
    assert overall == (f"suite: lite ({api.LITE_RULE}: CURE {lite:,} items of the full suite's {full:,}; LAVE "
                       f"{sizes['lave'][0]:,} of {sizes['lave'][1]:,})")
    run["run"]["lite_rule"] = "lite-v0"
    _, frame = view_board(leaderboard_frame([run], S), S)
    table = board_table(frame, S)
    assert said(table["metadata"]["display_value"][0][table["headers"].index("Suite")]) == (
        f"suite: lite (lite-v0, not this Space's {api.LITE_RULE}: its sizes are not known here)")


def test_the_overall_interval_combines_independent_benchmarks_by_hand():
    """CURE Ro 0.40 in [0.30, 0.50] (SE taken as 0.10 / 1.96), LAVE 0.60 in [0.55, 0.65] (0.05 / 1.96): the overall
    0.50 has SE sqrt(0.10^2 + 0.05^2) / 1.96 / 2 = 0.0285 and interval 0.50 +- 1.96 * 0.0285 = [0.4441, 0.5559]."""
    res = board_result("org/a", {"cure": 0.40, "lave": 0.60}, skipped={"simpleqa": "x", "reform": "x"})
    with_interval(res, "cure", "Ro", 0.30, 0.50, n=20)
    with_interval(res, "lave", "lave", 0.55, 0.65, n=30, method="clt")
    found = overall_interval(res, headline_scores(res, S.cards), S.cards)
    stderr = math.sqrt(0.10 ** 2 + 0.05 ** 2) / 1.959963984540054 / 2
    assert math.isclose(found["stderr"], stderr) and math.isclose(found["stderr"], 0.02852, abs_tol=1e-5)
    assert math.isclose(found["low"], 0.50 - math.sqrt(0.10 ** 2 + 0.05 ** 2) / 2)
    assert math.isclose(found["high"], 0.55590, abs_tol=1e-5) and found["n"] == 50
    assert found["method"].startswith("independent benchmarks")
    row = leaderboard_frame([res], S).iloc[0]
    assert math.isclose(row["overall_low"], found["low"]) and row["overall_n"] == 50
    assert view_text(leaderboard_frame([res], S), S, "runs")["Overall 95%"][0] == "44.4-55.6 (n 50)"
    # a benchmark in the mean without an interval (an older run): no overall interval, never a narrower one
    del res["benchmarks"]["lave"]["intervals"]
    assert overall_interval(res, headline_scores(res, S.cards), S.cards) is None
    assert view_text(leaderboard_frame([res], S), S)["Overall"][0] == "50.0"


def test_an_interval_near_zero_stays_inside_zero_to_a_hundred():
    raw = leaderboard_frame([cure_run("org/zero", 0.0, 0.0, 0.1611)], S)
    board = view_text(raw, S, "cure")
    assert board["CURE Ro 95%"][0] == "0.0-16.1 (n 20)" and board["CURE Ro"][0] == "0.0 ± 8.1"
    row = raw.iloc[0]
    assert row["overall_low"] >= 0.0 and row["overall_high"] <= 1.0


def test_undefined_and_not_run_read_differently_and_the_legend_explains_both():
    undefined = board_result("org/a", {"cure": 0.5}, skipped=CURE_ONLY)
    undefined["benchmarks"]["cure"]["scores"]["Cf"] = None  # Rcot was 0: Cf is undefined
    raw = leaderboard_frame([undefined], S)
    assert view_text(raw, S, "cure")["CURE Cf"][0] == "n/a"
    overview = view_text(raw, S)
    assert overview["LAVE score"][0] == "not run" and overview["CURE Ro"][0] == "50.0"
    shown, _ = view_board(raw, S)
    legend = status_text(shown, S, S.view(None))
    assert "**n/a**: undefined" in legend and "**not run**: the benchmark was not run" in legend
    assert "**55.6 ± 11.2**" in legend and "sample (synthetic)" in legend


def test_groups_are_separated_by_a_line_and_unranked_rows_say_their_group():
    runs = [cure_run("org/s", 0.5, 0.4, 0.6), cure_run("org/f", 0.4, 0.3, 0.5, suite="full"),
            cure_run("org/lim", 0.9, 0.8, 1.0, limit=2)]
    raw = leaderboard_frame(runs, S)
    shown, frame = view_board(raw, S, show_flagged=True)
    assert list(shown.rows["model"]) == ["org/f", "org/s", "org/lim"]
    assert list(view_text(raw, S, show_flagged=True)["#"]) == ["1 of 1 · full suite", "1 of 1 · sample suite",
                                                                 "unranked"]
    styles = board_table(frame, S)["metadata"]["styling"]
    assert [row[0] for row in styles] == ["", SEPARATOR, SEPARATOR]  # a line above each group but the first
    one = leaderboard_frame(runs[:1], S)
    _, frame = view_board(one, S)
    assert board_table(frame, S)["metadata"]["styling"] == [[""] * len(frame.columns)]  # one group: no line
