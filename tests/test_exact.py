"""Exact privacy loss (dpverify.exact) and worst-pair search (dpverify.code_checks.worst_pair).

Deterministic except ``test_exact_loss_agrees_with_sampling``: a two-sided 99.9 % normal interval for a log
ratio of two sampled frequencies (fixed seed, never retried; false-failure level 1e-3 under exactness).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import softmax

from algorithms.broken import PAMSTNoHalf, PAMSTReleasesWeights
from algorithms.classic.exponential import ExponentialMechanism
from algorithms.classic.randomized_response import RandomizedResponse
from algorithms.graph.examples import topology
from algorithms.graph.pamst import PAMST
from dpverify import audit
from dpverify.errors import InputError
from dpverify.exact import (
    ExactDistribution,
    ExactUnavailable,
    exact_audit,
    exact_distribution,
    exact_privacy_loss,
)
from dpverify.neighbours import AddRemoveOne, LInfNeighbours
from dpverify.code_checks.worst_pair import worst_pair_search

RR = ({0: Fraction(3, 4), 1: Fraction(1, 4)}, {0: Fraction(1, 4), 1: Fraction(3, 4)})


def test_rational_randomized_response_loss_is_exactly_ln3() -> None:
    loss = exact_privacy_loss(*RR)
    assert loss.exact_ratio == 3
    assert loss.epsilon == math.log(3)
    assert loss.output in (0, 1) and loss.mismatched == 0
    # δ(ε') = 3/4 − e^{ε'}/4 for ε' < ln 3, both directions alike
    assert loss.delta(0.5) == pytest.approx(0.75 - math.exp(0.5) / 4, rel=1e-14)
    assert loss.delta(math.log(3)) == pytest.approx(0.0, abs=1e-15)
    assert loss.delta_exact(2) == Fraction(1, 4)
    assert loss.epsilon_for_delta(0.1) == pytest.approx(math.log(2.6), rel=1e-10)
    assert loss.epsilon_for_delta(0.0) == loss.epsilon


def test_delta_curve_and_its_inverse_agree() -> None:
    rng = np.random.default_rng(1)
    p0, p1 = rng.dirichlet(np.ones(30)), rng.dirichlet(np.ones(30))
    loss = exact_privacy_loss(p0, p1)
    # brute-force hockey stick
    for e in (0.0, 0.3, 1.0, 2.5):
        want = max(np.maximum(p0 - math.exp(e) * p1, 0).sum(), np.maximum(p1 - math.exp(e) * p0, 0).sum())
        assert loss.delta(e) == pytest.approx(want, rel=1e-12, abs=1e-15)
    for d in (1e-4, 1e-2, 0.2):
        e = loss.epsilon_for_delta(d)
        assert loss.delta(e) == pytest.approx(d, rel=1e-8)
    assert loss.epsilon == pytest.approx(np.max(np.abs(np.log(p0) - np.log(p1))), rel=1e-14)


def test_support_mismatch_is_infinite_and_named() -> None:
    loss = exact_privacy_loss({"a": 0.5, "b": 0.5}, {"a": 0.9, "c": 0.1})
    assert loss.epsilon == math.inf and loss.mismatched == 2
    assert loss.output == "b" and loss.direction == 0
    assert loss.delta(5.0) == pytest.approx(0.5)
    assert loss.epsilon_for_delta(0.4) == math.inf


def test_log_space_handles_probabilities_below_float_range() -> None:
    out = np.arange(3)
    d0 = ExactDistribution.from_log_pmf(out, [0.0, -1000.0, -1200.0])
    d1 = ExactDistribution.from_log_pmf(out, [0.0, -1003.0, -1199.0])
    loss = exact_privacy_loss(d0, d1)
    assert loss.epsilon == pytest.approx(3.0) and int(loss.output) == 1


def test_exponential_mechanism_exact_loss_matches_closed_form() -> None:
    u0, u1 = np.array([0.0, 0.0, 0.0]), np.array([-1.0, 1.0, 1.0])
    res = exact_audit(ExponentialMechanism(1.0), [(u0, u1)], 1.0)
    p0, p1 = softmax(u0 / 2), softmax(u1 / 2)
    assert res.epsilon == pytest.approx(np.max(np.abs(np.log(p0 / p1))), rel=1e-12)
    assert not res.violation and res.epsilon < 1.0


def test_randomized_response_pmf_method_is_read() -> None:
    mech = RandomizedResponse(math.log(3), k=2)
    res = exact_audit(mech, [(0, 1)], math.log(3))
    assert res.epsilon == pytest.approx(math.log(3), rel=1e-12) and not res.violation
    assert exact_audit(mech, [(0, 1)], 1.0).violation


def test_delta_claims_compare_the_hockey_stick() -> None:
    mech = RandomizedResponse(math.log(3), k=2)
    d = 0.75 - math.exp(0.5) / 4
    assert not exact_audit(mech, [(0, 1)], 0.5, d).violation
    assert exact_audit(mech, [(0, 1)], 0.5, d * 0.999).violation


def test_pamst_twins_shown_exactly_on_k4() -> None:
    g = topology("complete", 4)
    g2 = g.with_weights(g.weights + np.array([1, -1, 1, -1, 1, -1.0]))
    ok = exact_audit(PAMST(1.0), [(g, g2)], 1.0)
    bad = exact_audit(PAMSTNoHalf(1.0), [(g, g2)], 1.0)
    assert not ok.violation
    # the no-half twin doubles every logit: its loss on the same pair is larger than the control's
    assert bad.epsilon > ok.epsilon
    leak = exact_audit(PAMSTReleasesWeights(1.0), [(g, g2)], 1.0)
    assert leak.violation and leak.epsilon == math.inf and leak.worst.loss.mismatched > 0


def test_exact_loss_agrees_with_sampling() -> None:
    """Sampled log ratio at the exact worst output lies within a 99.9 % interval of the exact value, and the
    statistical audit's lower bound does not exceed the exact ε."""
    g = topology("complete", 4, np.array([1.0, 2.0, 0.5, 1.5, 1.0, 2.5]))
    g2 = g.with_weights(g.weights + np.array([1, -1, 1, -1, 1, -1.0]))
    mech = PAMST(3.0)
    res = exact_audit(mech, [(g, g2)], 3.0)
    out = int(res.worst.loss.output)
    n = 400_000
    rng = np.random.default_rng(2026)
    k0 = int(np.sum(mech(g, n, rng) == out))
    k1 = int(np.sum(mech(g2, n, rng) == out))
    est = math.log(k0 / k1)
    se = math.sqrt(1 / k0 - 1 / n + 1 / k1 - 1 / n)
    exact = res.worst.loss.log_p0 - res.worst.loss.log_p1
    assert abs(est - exact) < 3.29 * se
    stat = audit(mech, [(g, g2)], 3.0, samples=200_000, search_samples=50_000, seed=3)
    assert stat.epsilon_lower_bound <= res.epsilon + 1e-9


def test_errors_name_the_problem() -> None:
    with pytest.raises(ExactUnavailable, match="log_pmf"):
        exact_distribution(lambda x, n, rng: np.zeros(n), 0)
    with pytest.raises(InputError, match="sum to"):
        exact_privacy_loss(np.array([0.5, 0.4]), np.array([0.5, 0.5]))
    with pytest.raises(InputError, match="epsilon"):
        exact_audit(ExponentialMechanism(1.0), [(np.zeros(2), np.ones(2))], -1.0)
    with pytest.raises(InputError, match="exactly 1"):
        exact_privacy_loss({0: Fraction(1, 3), 1: Fraction(1, 3)}, {0: Fraction(1, 2), 1: Fraction(1, 2)})
    with pytest.raises(InputError, match="finite"):
        exact_privacy_loss(np.array([np.nan, 1.0]), np.array([0.5, 0.5]))


# -- worst-pair search -----------------------------------------------------------------------------------


def test_search_is_seeded_and_finds_the_twin() -> None:
    g = topology("complete", 4)
    a = worst_pair_search(PAMSTNoHalf(1.0), LInfNeighbours(1.0), g, 1.0, seed=5, base_radius=2.0)
    b = worst_pair_search(PAMSTNoHalf(1.0), LInfNeighbours(1.0), g, 1.0, seed=5, base_radius=2.0)
    assert a.epsilon == b.epsilon and a.label == b.label and a.evaluations == b.evaluations
    assert a.violation and a.epsilon > 1.0
    # the certificate recomputes: its pair, fed to exact_audit, gives the same loss
    again = exact_audit(PAMSTNoHalf(1.0), [(a.x0, a.x1)], 1.0)
    assert again.epsilon == pytest.approx(a.epsilon, rel=1e-12)
    json.dumps(a.to_dict())
    control = worst_pair_search(PAMST(1.0), LInfNeighbours(1.0), g, 1.0, seed=5, base_radius=2.0)
    assert not control.violation and 0.5 < control.epsilon < 1.0


def test_search_on_trees_finds_zero_loss() -> None:
    """A tree has one spanning tree: PAMST's output is constant, the exact loss is 0."""
    c = worst_pair_search(PAMST(1.0), LInfNeighbours(1.0), topology("star", 5), 1.0, seed=0)
    assert c.epsilon < 1e-12  # 0 up to the rounding of the log-space programme


def test_search_approaches_the_em_bound() -> None:
    """The EM on 3 candidates: sup loss ε is approached as one candidate dominates; the search with a free base
    gets within 20 % of it."""
    c = worst_pair_search(ExponentialMechanism(1.0), LInfNeighbours(1.0), np.zeros(3), 1.0, seed=0,
                          base_radius=4.0, restarts=6)
    assert 0.8 < c.epsilon <= 1.0 + 1e-12 and not c.violation


def test_dataset_search_needs_a_domain() -> None:
    with pytest.raises(InputError, match="domain"):
        worst_pair_search(ExponentialMechanism(1.0), AddRemoveOne(), np.array([0.1, 0.5]), 1.0)


def test_em_exact_ratios_separate_the_factor_two() -> None:
    """A non-monotone utility (candidate 0 loses 1, the others gain 1): with the factor 2 the loss stays below ε,
    without it the loss exceeds ε."""
    from dpverify.exact import em_exact_ratios

    def utility(x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=float)

    pairs = [(np.array([8.0, 0, 0, 0]), np.array([7.0, 1, 1, 1]))]
    ok = em_exact_ratios(utility, pairs, 1.0, 1.0)
    bad = em_exact_ratios(utility, pairs, 1.0, 1.0, factor=1.0)
    assert not ok.violation and ok.sensitivity_ok and ok.audit.epsilon < 1.0
    assert bad.violation and bad.audit.epsilon > 1.0
    over = em_exact_ratios(utility, [(np.zeros(3), np.array([0.0, 2.5, 0.0]))], 1.0, 1.0)
    assert not over.sensitivity_ok and over.utility_witness == (0, 1) and over.max_utility_change == 2.5
    with pytest.raises(InputError, match="candidate set"):
        em_exact_ratios(utility, [(np.zeros(3), np.zeros(4))], 1.0, 1.0)


def test_exact_suite_outcomes_match_expectations() -> None:
    """audits/exact.toml, quick mode, run seed 0: every entry's outcome equals its expectation (the exact
    entries are deterministic; the em entries test at α = 1e-3 with fixed derived seeds)."""
    from pathlib import Path

    from dpverify.suites import load_suite, run_suites

    suite = load_suite(Path(__file__).resolve().parents[1] / "audits" / "exact.toml")
    outcomes = run_suites([suite], "quick", seed=0)
    bad = [(o.name, o.outcome, o.expectation, o.error) for o in outcomes if not o.matched]
    assert not bad
    assert len(outcomes) == len(suite.entries) >= 20
