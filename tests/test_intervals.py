"""Error bars, each method against a case worked out by hand (evaluator.metrics.intervals)."""
from __future__ import annotations

import math

import pytest

from evaluator.metrics.intervals import (bootstrap_interval, clustered_stderr, mean_interval, ranks, wilson)


def test_wilson_against_the_textbook_values():
    # 5 of 10: centre 0.5, half-width 1.96 * sqrt(0.025 + 1.96^2/400) / (1 + 1.96^2/10) = 0.2634
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    # 0 of 20: the interval stays inside [0, 1], its top at 2 * (1.96^2/40) / (1 + 1.96^2/20) = 0.1611
    assert wilson(0, 20) == pytest.approx((0.0, 0.1611), abs=1e-4)
    assert wilson(20, 20)[1] == 1.0 and wilson(20, 20)[0] == pytest.approx(0.8389, abs=1e-4)


def test_clustering_widens_the_error_when_a_cluster_moves_together():
    # mean 0.5; deviations +0.5 +0.5 -0.5 -0.5: alone sqrt(4 * 0.25) / 4 = 0.25, by pairs sqrt(1 + 1) / 4 = 0.3536
    assert clustered_stderr([1, 1, 0, 0]) == pytest.approx(0.25)
    assert clustered_stderr([1, 1, 0, 0], ["a", "a", "b", "b"]) == pytest.approx(math.sqrt(2) / 4)
    # pairs that disagree inside: each cluster's deviations cancel, so clustering narrows it to 0
    assert clustered_stderr([1, 0, 1, 0], ["a", "a", "b", "b"]) == pytest.approx(0.0)


def test_a_mean_of_scores_gets_the_central_limit_interval():
    got = mean_interval([0.2, 0.4, 0.6])
    se = math.sqrt(0.04 + 0.0 + 0.04) / 3  # 0.0943
    assert (got.stderr, got.low, got.high, got.n, got.method) == pytest.approx(
        (se, 0.4 - 1.959964 * se, 0.4 + 1.959964 * se, 3, "clt"))


def test_a_proportion_gets_wilsons_interval_at_its_effective_size():
    plain = mean_interval([1] * 5 + [0] * 5)
    assert (plain.low, plain.high, plain.n) == pytest.approx((0.2366, 0.7634, 10), abs=1e-4)
    assert plain.method == "wilson, clt" and plain.stderr == pytest.approx(math.sqrt(0.25 / 10))
    # the same outcomes in chains of two that agree inside: half the information, n = 5 chains
    # (cluster sums +0.8 x 3, -1.2 x 2: SE sqrt(4.8) / 10 = 0.219 against sqrt(0.24 / 10) = 0.155 alone)
    chained = mean_interval([1, 1, 1, 1, 1, 1, 0, 0, 0, 0], list("aabbccddee"), unit="chain")
    assert chained.n == 5 and chained.method == "wilson, clustered clt by chain"
    assert chained.stderr == pytest.approx(math.sqrt(4.8) / 10)
    assert (chained.low, chained.high) == pytest.approx(wilson(3, 5), abs=1e-9)
    near_zero = mean_interval([0] * 19 + [1])
    assert near_zero.low >= 0.0 and near_zero.high == pytest.approx(wilson(1, 20)[1])


def test_undefined_values_are_left_out_and_nothing_is_nan_safe():
    assert mean_interval([1.0, math.nan, 0.0]).n == 2
    empty = mean_interval([])
    assert empty.n == 0 and math.isnan(empty.stderr)
    assert mean_interval([0.3]).record() == {"stderr": 0.0, "low": 0.3, "high": 0.3, "n": 1, "method": "clt"}


def test_the_bootstrap_of_two_clusters_against_its_exact_distribution():
    # drawing 2 of {0, 1} with replacement: means 0, 0.5, 1 with chances 1/4, 1/2, 1/4 (sd sqrt(1/8) = 0.354)
    values = {"a": 0.0, "b": 1.0}
    got = bootstrap_interval(["a", "b"], lambda drawn: sum(values[c] for c in drawn) / len(drawn), unit="chain")
    assert (got.low, got.high, got.n) == (0.0, 1.0, 2)
    assert got.stderr == pytest.approx(math.sqrt(1 / 8), abs=0.02)
    assert got.method == "bootstrap over chains, 1000 draws, seed 0"
    again = bootstrap_interval(["a", "b"], lambda drawn: sum(values[c] for c in drawn) / len(drawn), unit="chain")
    assert again == got  # seeded: the same run gives the same interval


def test_the_bootstrap_of_a_ratio_stays_in_its_range_and_skips_undefined_draws():
    # Cf-like: right chains whose high-level answer is also right, over right chains (undefined with none)
    chains = {i: (i % 3 == 0, i % 2 == 0) for i in range(30)}  # (chain right, high right)

    def ratio(drawn):
        right = [c for c in drawn if chains[c][0]]
        return sum(chains[c][1] for c in right) / len(right) if right else math.nan

    got = bootstrap_interval(list(chains), ratio)
    assert 0.0 <= got.low <= 0.5 <= got.high <= 1.0 and got.n == 30
    assert math.isnan(bootstrap_interval([0], ratio).stderr)  # one cluster: no spread to draw from


def test_ranks_claim_no_more_than_the_intervals():
    # A and B overlap: they share first place; C lies wholly below both
    assert ranks([(0.50, 0.70), (0.55, 0.75), (0.10, 0.20)]) == [1, 1, 3]
    # lower is better (ECE): C is first, A and B share the next place
    assert ranks([(0.50, 0.70), (0.55, 0.75), (0.10, 0.20)], higher_is_better=False) == [2, 2, 1]
    # a chain of overlaps: A overlaps B, B overlaps C, A lies wholly above C
    assert ranks([(0.6, 0.8), (0.45, 0.65), (0.3, 0.5)]) == [1, 1, 2]


def test_cures_intervals_by_hand():
    from evaluator.metrics.cure import cure_intervals, cure_scores

    high = [True, True, False, True]
    chains = [[True, True], [True, False], [False, False], [True, True]]
    got = cure_intervals(high, chains)
    assert (got["Rh"].low, got["Rh"].high) == pytest.approx(wilson(3, 4))
    assert (got["Ro"].low, got["Ro"].high) == pytest.approx(wilson(2, 4)) and got["Ro"].n == 4
    # Cf = Ro / Rcot: every right chain has a right high-level answer, so every draw gives 1: no spread to measure,
    # so Wilson's interval of 1 at the 4 instances, and a standard error of its width / 3.92, never 0
    assert (got["Cf"].low, got["Cf"].high) == pytest.approx(wilson(4, 4)) and got["Cf"].high == 1.0
    assert got["Cf"].stderr == pytest.approx((1 - wilson(4, 4)[0]) / (2 * 1.959964)) and "all alike" in got["Cf"].method
    assert cure_scores(high, chains)["Cb"] == pytest.approx(2 / 3) and 0 <= got["Cb"].low < 2 / 3 < got["Cb"].high
    # step accuracy 5/8 over 8 steps in 4 chains: chain deviation sums +0.75, -0.25, -1.25, +0.75
    steps = got["step_accuracy"]
    assert steps.stderr == pytest.approx(math.sqrt(2.75) / 8) and steps.n == 4
    effective = 8 * (math.sqrt(0.625 * 0.375 / 8) / (math.sqrt(2.75) / 8)) ** 2
    assert (steps.low, steps.high) == pytest.approx(wilson(0.625 * effective, effective))
    assert steps.method == "wilson, clustered clt by chain"


def test_results_keep_an_interval_for_every_score_that_is_not_null():
    from evaluator.benchmarks.spec import Scored
    from evaluator.metrics.intervals import Interval
    from evaluator.runs.runner import interval_records

    scored = Scored(scores={"Ro": 0.5, "Cf": math.nan}, counts={}, rows=[],
                    intervals={"Ro": Interval(0.1, 0.3, 0.7, 20, "wilson, clt"),
                               "Cf": Interval(math.nan, math.nan, math.nan, 20, "bootstrap")})
    assert interval_records(scored) == {"Ro": {"stderr": 0.1, "low": 0.3, "high": 0.7, "n": 20,
                                               "method": "wilson, clt"}}


def test_an_entropy_that_happens_to_be_0_or_1_is_no_proportion():
    got = mean_interval([0.0, 1.0, 0.0, 1.0], proportion=False)
    assert got.method == "clt" and got.low == pytest.approx(0.5 - 1.959964 * 0.25)


def test_reforms_intervals_on_scored_rows():
    from evaluator.benchmarks.reform.scoring import score_intervals

    def row(question, dataset, correct, repeat, prediction="(A)"):
        return {"question_id": question, "dataset": dataset, "dimension": "coarse_perception", "form": "mc",
                "score": float(correct), "correct": correct, "prediction": prediction, "repeat": repeat,
                "parsed_answer": "0", "options": '["cat", "dog"]', "mark_style": "(A)"}

    rows = [row(q, "ds1", q in ("a", "b"), r) for q in "abcd" for r in range(3)]
    found = score_intervals([("gen", rows)], [], rows, [])
    # multiple-choice accuracy 0.5, each instance's three wordings all right or all wrong: 4 clusters, not 12 rows
    assert found["gen_mc_accuracy"].n == 4 and found["gen_mc_accuracy"].method == "wilson, clustered clt by instance"
    assert (found["gen_mc_accuracy"].low, found["gen_mc_accuracy"].high) == pytest.approx(wilson(2, 4))
    assert found["gen_overall"].method.startswith("bootstrap over instances")
    assert 0.0 <= found["gen_overall"].low < 0.5 < found["gen_overall"].high <= 1.0
    # every instance's three repeats agree (entropy 0 each): Wilson on the range 0..ln 3 at the 4 instances
    assert found["instability"].method == ("outcomes all alike: wilson on the range 0..1.09861 at the clusters, "
                                           "clt over instances")
    assert (found["instability"].low, found["instability"].high) == pytest.approx(
        (0.0, math.log(3) * wilson(0, 4)[1])) and found["format_hit_rate"].high == 1.0


def test_simpleqas_intervals_on_graded_rows():
    from evaluator.benchmarks.simpleqa.options import read_settings
    from evaluator.benchmarks.simpleqa.scoring import score_intervals

    grades = ["A"] * 6 + ["B"] * 2 + ["C"] * 2
    rows = [{"question_id": str(i), "part": "answer", "grade": g} for i, g in enumerate(grades)]
    rows.append({"question_id": "x", "part": "answer", "grade": ""})  # ungraded: left out, never counted as wrong
    found = score_intervals(rows, read_settings("sample", {"simpleqa.confidence": "off"}))
    assert (found["correct"].low, found["correct"].high, found["correct"].n) == pytest.approx((*wilson(6, 10), 10))
    assert (found["not_attempted"].low, found["not_attempted"].high) == pytest.approx(wilson(2, 10))
    # correct given attempted 6/8 and F 2 * 0.6 * 0.75 / 1.35 = 0.667, each inside its bootstrap interval
    assert found["correct_given_attempted"].low < 0.75 < found["correct_given_attempted"].high <= 1.0
    assert found["f_score"].low < 2 * 0.6 * 0.75 / 1.35 < found["f_score"].high
    assert found["f_score"].method == "bootstrap over questions, 1000 draws, seed 0" and "ece" not in found


def test_laves_intervals_on_answered_rows():
    import json

    from evaluator.benchmarks.lave.scoring import score_intervals

    rows = [{"question_id": str(i), "lave": [0.0, 0.5, 1.0][i % 3], "vqa_accuracy": 0.3 * (i % 4), "anls": 0.5,
             "exact_match": float(i % 2), "bleu4": 0.0, "cider": 0.0,
             "parsed_answer": ["a cat", "two dogs", "a red ball", "yes"][i % 4],
             "gold": json.dumps(["a cat", "a red ball", "yes"])} for i in range(30)]
    found = score_intervals(rows)
    # LAVE's ratings 0, 0.5, 1 in turn: a mean of scores, never Wilson; exact match, a 0/1 outcome, by Wilson
    # (deviations -0.5, 0, +0.5 ten times each: SE sqrt(10 * 0.25 * 2) / 30)
    assert found["lave"].method == "clt over questions" and found["lave"].stderr == pytest.approx(math.sqrt(5) / 30)
    assert (found["exact_match"].low, found["exact_match"].high) == pytest.approx(wilson(15, 30))
    assert found["cider"].method == "bootstrap over questions, 200 draws, seed 0"
    # ANLS 0.5 on every question: Wilson's interval of 0.5 at the 30 questions, never a width of 0
    assert found["bleu4"].low <= found["bleu4"].high and (found["anls"].low, found["anls"].high) == pytest.approx(
        wilson(15, 30)) and found["anls"].stderr == pytest.approx((found["anls"].high - found["anls"].low) / 3.919928)


def test_two_runs_are_compared_on_the_questions_both_answered():
    from evaluator.metrics.intervals import paired_difference

    a = {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 1.0, "q5": math.nan, "q6": 1.0}
    b = {"q1": 1.0, "q2": 0.0, "q3": 1.0, "q4": 0.0, "q5": 1.0}
    got = paired_difference(a, b)
    # shared q1-q4 (q5 unscored by A, q6 not asked of B): differences 0, +1, -1, +1, mean 0.25
    assert (got.shared, got.a_only_right, got.b_only_right) == (4, 2, 1) and got.difference == pytest.approx(0.25)
    # deviations -0.25, 0.75, -1.25, 0.75: SE sqrt(0.0625 + 0.5625 + 1.5625 + 0.5625) / 4 = sqrt(2.75) / 4
    assert got.interval.stderr == pytest.approx(math.sqrt(2.75) / 4) and got.interval.method == "clt"
    assert got.text().startswith("A - B = +25.0 points (95% ") and got.text().endswith(
        "on 4 shared items, A right and B wrong on 2, the reverse on 1")
    chained = paired_difference(a, b, {"q1": "c1", "q2": "c1", "q3": "c2", "q4": "c2"}, unit="chain")
    assert chained.interval.method == "clustered clt by chain" and chained.interval.n == 2
    assert paired_difference({"x": 1.0}, {"y": 0.0}).text() == "no shared items: the two runs cannot be compared"


# --------------------------------------------------------------------------------------------- more cases by hand
# z = 1.959964, z^2 = 3.841459 throughout.

def test_a_proportion_at_0_and_at_1_stays_inside_0_and_1():
    # 0 of 20: p = 0, so Wilson's centre and half-width are both (z^2 / 40) / (1 + z^2 / 20) = 0.09604 / 1.19207
    # = 0.08056: the interval is [0, 0.1611]; 20 of 20 mirrors it: [1 - 0.1611, 1]
    none, every = mean_interval([0.0] * 20), mean_interval([1.0] * 20)
    assert (none.low, none.n, none.method) == (0.0, 20, "wilson, clt")
    assert none.high == pytest.approx(0.1611, abs=1e-4) and none.stderr == pytest.approx(0.1611 / 3.92, abs=1e-4)
    assert every.low == pytest.approx(0.8389, abs=1e-4) and every.high == 1.0
    # the same 20 outcomes as 5 chains of 4 steps: all alike, nothing measures how far a chain's steps move together,
    # so Wilson is taken at the 5 chains, not the 20 steps: top 2 (z^2 / 10) / (1 + z^2 / 5) = 0.76829 / 1.76829
    chains = [i // 4 for i in range(20)]
    zero = mean_interval([0.0] * 20, chains, unit="chain")
    one = mean_interval([1.0] * 20, chains, unit="chain")
    assert (zero.low, zero.n, zero.method) == (0.0, 5, "wilson, clustered clt by chain")
    assert zero.high == pytest.approx(0.4345, abs=1e-4)
    assert one.low == pytest.approx(1 - 0.4345, abs=1e-4) and one.high == 1.0


def test_wilson_at_the_effective_size_a_clustering_leaves_by_hand():
    # steps 1, 1, 0 in chain a and 0, 0, 0 in chain b: mean 1/3
    # chain sums of deviations: a 2/3 + 2/3 - 1/3 = +1, b -1: clustered SE sqrt(1 + 1) / 6 = 0.2357
    # plain SE sqrt((1/3)(2/3) / 6) = sqrt(1/27) = 0.1925; design effect (0.2357 / 0.1925)^2 = (2/36) / (1/27) = 1.5
    # effective size 6 / 1.5 = 4, successes 4/3: Wilson at p 1/3, n 4: denominator 1 + z^2/4 = 1.96036,
    # centre (0.33333 + z^2/8) / 1.96036 = 0.81351 / 1.96036 = 0.41498,
    # half z sqrt(0.05556 + z^2/64) / 1.96036 = 1.959964 * 0.33997 / 1.96036 = 0.33990 -> (0.0751, 0.7549)
    got = mean_interval([1, 1, 0, 0, 0, 0], list("aaabbb"), unit="chain")
    assert got.stderr == pytest.approx(math.sqrt(2) / 6) and got.n == 2
    assert (got.low, got.high) == pytest.approx((0.0751, 0.7549), abs=1e-4)
    assert got.method == "wilson, clustered clt by chain"


def test_a_clustered_mean_of_scores_by_hand():
    # scores 0.2, 0.4 (instance a) and 0.6, 0.8 (instance b): mean 0.5, deviations -0.3, -0.1, +0.1, +0.3
    # instance sums -0.4 and +0.4: SE sqrt(0.16 + 0.16) / 4 = 0.14142; 0.5 -+ 1.959964 * 0.14142 = (0.2228, 0.7772)
    got = mean_interval([0.2, 0.4, 0.6, 0.8], list("aabb"), unit="instance", proportion=False)
    assert got.stderr == pytest.approx(math.sqrt(0.32) / 4)
    assert (got.low, got.high, got.n) == pytest.approx((0.2228, 0.7772, 2), abs=1e-4)
    assert got.method == "clustered clt by instance"
    # one question each: the plain interval says what an item is
    assert mean_interval([0.2, 0.4, 0.6], unit="question").method == "clt over questions"


def test_a_mean_of_scores_is_cut_to_the_range_its_values_take():
    # ANLS 0, 0, 0, 0.3: mean 0.075, deviations -0.075 (x3) and +0.225: SE sqrt(3 * 0.005625 + 0.050625) / 4
    # = sqrt(0.0675) / 4 = 0.06495; 0.075 - 1.959964 * 0.06495 = -0.0523 lies below any ANLS: cut to 0
    cut = mean_interval([0.0, 0.0, 0.0, 0.3], within=(0.0, 1.0))
    assert cut.stderr == pytest.approx(math.sqrt(0.0675) / 4)
    assert (cut.low, cut.high) == pytest.approx((0.0, 0.075 + 1.959964 * math.sqrt(0.0675) / 4))
    assert mean_interval([0.0, 0.0, 0.0, 0.3]).low == pytest.approx(-0.0523, abs=1e-4)  # uncut: no range given


def test_the_bootstrap_of_a_ratio_whose_draws_are_sometimes_undefined_by_its_exact_distribution():
    # three instances, each (numerator, denominator): a (1, 1), b (0, 1), c (0, 0); ratio = sum num / sum den
    # drawing 3 with replacement, 27 equally likely draws by their counts (a, b, c):
    #   (0, 0, 3)                    1 draw   undefined (no denominator): left out
    #   no a, some b                 7 draws  ratio 0      some a, no b     7 draws  ratio 1
    #   (1, 1, 1)                    6 draws  ratio 1/2
    #   (1, 2, 0)                    3 draws  ratio 1/3    (2, 1, 0)        3 draws  ratio 2/3
    # over the 26 defined: mean 1/2, variance (14 * 1/4 + 6 * 1/36) / 26 = 0.14103, sd 0.3755; 2.5% 0, 97.5% 1
    num, den = {"a": 1, "b": 0, "c": 0}, {"a": 1, "b": 1, "c": 0}

    def ratio(drawn):
        total = sum(den[c] for c in drawn)
        return sum(num[c] for c in drawn) / total if total else math.nan

    got = bootstrap_interval(list("abc"), ratio, unit="instance")
    assert (got.low, got.high, got.n) == (0.0, 1.0, 3)
    assert got.stderr == pytest.approx(math.sqrt((3.5 + 1 / 6) / 26), abs=0.02)  # 1000 draws: within 0.02
    assert got.method == "bootstrap over instances, 1000 draws, seed 0"
    # defined on fewer than half the draws (only when both draws are a: 1 in 4): no interval
    rare = bootstrap_interval(list("ab"), lambda drawn: 1.0 if set(drawn) == {"a"} else math.nan)
    assert math.isnan(rare.stderr) and math.isnan(rare.low) and rare.n == 2


def test_cures_ratios_by_their_exact_bootstrap_distribution():
    from evaluator.metrics.cure import cure_intervals

    # two instances, both with a right high-level answer; instance 0's one-step chain right, instance 1's wrong
    got = cure_intervals([True, True], [[True], [False]])
    # Cf = Ro / Rcot: a draw of instance 1 twice (1 in 4) has no right chain and is left out; every other draw is 1,
    # so no spread: Wilson's interval of 1 at the 2 instances, as Rh's below
    assert (got["Cf"].low, got["Cf"].high) == pytest.approx((0.3424, 1.0), abs=1e-4) and got["Cf"].stderr > 0
    # Cb = Ro / Rh = the share of drawn instances with both right: 0, 1/2, 1 with chances 1/4, 1/2, 1/4 (sd 0.354)
    assert (got["Cb"].low, got["Cb"].high) == (0.0, 1.0) and got["Cb"].stderr == pytest.approx(0.3536, abs=0.02)
    assert got["Cb"].method == "bootstrap over instances, 1000 draws, seed 0"
    # Rh 2 of 2: Wilson at p 1, n 2: centre (1 + z^2/4) / (1 + z^2/2) = 1.96037 / 2.92073 = 0.67119,
    # half z sqrt(z^2/16) / 2.92073 = z^2 / 4 / 2.92073 = 0.32881: (0.3424, 1.0)
    assert (got["Rh"].low, got["Rh"].high) == pytest.approx((0.3424, 1.0), abs=1e-4)
    assert got["Rh"].method == "wilson, clt over instances" and got["Rh"].n == 2


def test_laves_agreement_by_hand():
    import json

    from evaluator.benchmarks.lave.scoring import agreement, score_intervals

    # LAVE 1, 1, 0, 0.5, unrated; exact match 1, 0, 0, 0, 1: correct by LAVE (rating 3) T, T, F, F; by exact match
    # T, F, F, F: they agree on 3 of the 4 answers both score. Wilson at p 0.75, n 4: denominator 1.96036,
    # centre (0.75 + z^2/8) / 1.96036 = 0.62753, half z sqrt(0.046875 + z^2/64) / 1.96036 = 0.32689 -> (0.3006, 0.9544)
    rows = [{"question_id": str(i), "lave": lave, "exact_match": match, "vqa_accuracy": math.nan, "anls": match,
             "bleu4": 0.0, "cider": 0.0, "parsed_answer": "a cat", "gold": json.dumps(["a cat"])}
            for i, (lave, match) in enumerate([(1.0, 1.0), (1.0, 0.0), (0.0, 0.0), (0.5, 0.0), (math.nan, 1.0)])]
    found = score_intervals(rows)
    assert agreement(rows, "exact_match")["agreement"] == 0.75
    em = found["agree_exact_match"]
    assert (em.low, em.high, em.n) == pytest.approx((0.3006, 0.9544, 4), abs=1e-4)
    assert em.method == "wilson, clt over questions"
    # no question has 10 answers here: VQA accuracy, so its agreement, is undefined and gets no interval
    assert "agree_vqa_accuracy" not in found
    # BLEU-4 0 (below 0.5) on every answer: agrees where LAVE is not 3, on 2 of 4 -> Wilson(2, 4)
    assert (found["agree_bleu4"].low, found["agree_bleu4"].high) == pytest.approx(wilson(2, 4))


def test_a_paired_difference_stays_between_minus_and_plus_one():
    from evaluator.metrics.intervals import paired_difference

    # A right on q1-q3, B only on q3: differences 1, 1, 0, mean 2/3, deviations 1/3, 1/3, -2/3
    # SE sqrt(6/9) / 3 = 0.2722; 2/3 + 1.959964 * 0.2722 = 1.2002 is past any difference: cut to 1
    got = paired_difference({"q1": 1.0, "q2": 1.0, "q3": 1.0}, {"q1": 0.0, "q2": 0.0, "q3": 1.0})
    assert got.interval.stderr == pytest.approx(math.sqrt(6 / 9) / 3) and got.interval.high == 1.0
    assert got.interval.low == pytest.approx(2 / 3 - 1.959964 * math.sqrt(6 / 9) / 3)


def test_a_corpus_bootstrap_draws_fewer_times_on_a_full_suite_but_never_too_few():
    from evaluator.metrics.intervals import DRAW_BUDGET, affordable_draws

    assert affordable_draws(30, 200) == 200  # the sample suite: every draw
    assert affordable_draws(5_000, 200) == 200  # 1,000,000 units x draws: still within the budget
    assert affordable_draws(10_000, 200) == DRAW_BUDGET // 10_000 == 100
    assert affordable_draws(1_000_000, 200) == 20  # a huge file: the floor
    assert affordable_draws(1_000_000, 10) == 10 and affordable_draws(0, 200) == 200
