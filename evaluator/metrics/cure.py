"""CURE metrics (arXiv 2309.04461): reasoning performance and consistency of a visual chain of thought.

Per instance i: h_i = the high-level inference is correct; s_i = every sub-question of its chain is correct.

    Rh   = mean(h)            high-level accuracy
    Rcot = mean(s)            chain accuracy, all-or-nothing per instance (not step accuracy)
    Ro   = mean(h and s)      both right
    Cf   = Ro / Rcot          forward consistency  = P(h | s)
    Cb   = Ro / Rh            backward consistency = P(s | h)

A formula seen in summaries, Cf = mean(s * h), is just Ro and is wrong. A ratio with a zero denominator is
undefined and returned as NaN (the UI shows "n/a"). All values are fractions in 0..1. Pure functions, no models.
"""
from __future__ import annotations

import math
from collections import defaultdict

CURE_KEYS = ("Rh", "Rcot", "Ro", "Cf", "Cb")


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def cure_scores(high_correct: list[bool], chain_correct: list[list[bool]]) -> dict[str, float]:
    """Rh, Rcot, Ro, Cf, Cb over N instances. `chain_correct[i]` holds one bool per step of instance i.

    An instance's chain counts as correct only when all its steps are (an empty chain is rejected: every CURE
    instance has 2-4 steps). Empty input gives NaN everywhere.
    """
    if len(high_correct) != len(chain_correct):
        raise ValueError(f"high_correct has {len(high_correct)} instances but chain_correct has {len(chain_correct)}")
    n = len(high_correct)
    if n == 0:
        return {key: math.nan for key in CURE_KEYS}
    h_sum = s_sum = o_sum = 0
    for i, (h, steps) in enumerate(zip(high_correct, chain_correct)):
        if len(steps) == 0:
            raise ValueError(f"instance {i} has an empty chain")
        h = bool(h)
        s = all(bool(step) for step in steps)
        h_sum += h
        s_sum += s
        o_sum += h and s
    rh, rcot, ro = h_sum / n, s_sum / n, o_sum / n
    # Ratios from the integer counts, so Cf is exactly P(h | s) without float drift.
    return {"Rh": rh, "Rcot": rcot, "Ro": ro, "Cf": _ratio(o_sum, s_sum), "Cb": _ratio(o_sum, h_sum)}


def cure_step_accuracy(chain_correct: list[list[bool]]) -> float:
    """Mean accuracy over all sub-questions of all chains (NaN when there are none)."""
    steps = [bool(step) for chain in chain_correct for step in chain]
    return sum(steps) / len(steps) if steps else math.nan


def cure_by_chain_length(high_correct: list[bool], chain_correct: list[list[bool]]) -> dict[int, dict[str, float]]:
    """cure_scores per chain length (2, 3, 4 in the real data), each with "n" (instances) and "step_accuracy"."""
    if len(high_correct) != len(chain_correct):
        raise ValueError(f"high_correct has {len(high_correct)} instances but chain_correct has {len(chain_correct)}")
    groups: dict[int, tuple[list[bool], list[list[bool]]]] = defaultdict(lambda: ([], []))
    for h, steps in zip(high_correct, chain_correct):
        hs, cs = groups[len(steps)]
        hs.append(h)
        cs.append(steps)
    out: dict[int, dict[str, float]] = {}
    for length in sorted(groups):
        hs, cs = groups[length]
        row = cure_scores(hs, cs)
        row["step_accuracy"] = cure_step_accuracy(cs)
        row["n"] = len(hs)
        out[length] = row
    return out


def cure_intervals(high_correct: list[bool], chain_correct: list[list[bool]]) -> dict:
    """Each CURE score's interval (evaluator.metrics.intervals): Rh, Rcot and Ro are proportions over instances
    (Wilson); Cf and Cb, ratios, by the bootstrap over instances; step accuracy, a mean over sub-questions, clustered
    by the chain they belong to."""
    from evaluator.metrics.intervals import bootstrap_interval, mean_interval

    high = [1.0 if h else 0.0 for h in high_correct]
    chain = [1.0 if steps and all(bool(s) for s in steps) else 0.0 for steps in chain_correct]
    both = [h * s for h, s in zip(high, chain)]

    def ratio(num: list[float], den: list[float]):
        return lambda drawn: _ratio(sum(num[i] for i in drawn), sum(den[i] for i in drawn))

    instances = list(range(len(high)))
    steps = [1.0 if bool(step) else 0.0 for steps_ in chain_correct for step in steps_]
    owners = [i for i, steps_ in enumerate(chain_correct) for _ in steps_]
    return {"Rh": mean_interval(high, unit="instance"), "Rcot": mean_interval(chain, unit="instance"),
            "Ro": mean_interval(both, unit="instance"),
            "Cf": bootstrap_interval(instances, ratio(both, chain), unit="instance", within=(0.0, 1.0)),
            "Cb": bootstrap_interval(instances, ratio(both, high), unit="instance", within=(0.0, 1.0)),
            "step_accuracy": mean_interval(steps, owners, unit="chain")}
