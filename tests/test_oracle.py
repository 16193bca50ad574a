"""The oracle bound (dpverify.oracle): the best bound any event-based audit could certify at a budget.

Closed forms at fixed seeds; the Monte-Carlo path is compared with the exact level sets of the Laplace loss to
within its sampling error (8e6 outputs: about 1e-4 on the bound)."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.classic import Histogram, Laplace, RandomizedResponse
from algorithms.classic.gaussian import Gaussian
from dpverify.errors import InputError
from dpverify.oracle import law_of, level_set_bound, oracle_bound


def test_monte_carlo_matches_the_laplace_closed_form():
    eps, n = 0.1, 2_000_000
    t = np.linspace(0.0, 1.0, 2001)                 # level sets of the Laplace loss: tails {o >= t}, t in [0, 1]
    exact, _ = level_set_bound(1 - 0.5 * np.exp(-eps * (1 - t)), 0.5 * np.exp(-eps * t), n, 0.1, 0.0)
    got = oracle_bound(Laplace(epsilon=eps), [(0.0, 1.0)], n, alpha=0.1, seed=0)
    assert got.method == "monte-carlo" and abs(got.bound - exact) < 5e-4


def test_exact_path_for_randomized_response():
    # RR with eps = 1, k = 2: the event {out = x} has p = e/(1+e) against 1/(1+e) exactly
    got = oracle_bound(RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 100_000)
    lo_hi, _ = level_set_bound(np.array([np.e / (1 + np.e)]), np.array([1 / (1 + np.e)]), 100_000, 0.05, 0.0)
    assert got.method == "exact" and got.bound == pytest.approx(lo_hi)


def test_oracle_grows_with_the_budget_towards_the_true_epsilon():
    mech, pairs = Histogram(epsilon=0.5), [(np.zeros(3), np.array([1.0, 0.0, 0.0]))]
    b = [oracle_bound(mech, pairs, n, seed=1, oracle_samples=2_000_000).bound for n in (10_000, 100_000, 1_000_000)]
    assert b[0] < b[1] < b[2] < 0.5 and b[2] > 0.47


def test_delta_claims_and_one_step_laws():
    assert law_of(Gaussian(epsilon=1.0, delta=0.01), 0.0)[0] == "density"
    with_delta = oracle_bound(Gaussian(epsilon=1.0, delta=0.01), [(0.0, 1.0)], 1_000_000, delta=0.01).bound
    without = oracle_bound(Gaussian(epsilon=1.0, delta=0.01), [(0.0, 1.0)], 1_000_000).bound
    assert with_delta < without


def test_a_mechanism_without_a_law_is_an_input_error():
    def opaque(x, n, rng):
        return x + rng.laplace(size=n)

    with pytest.raises(InputError, match="exposes no output law"):
        oracle_bound(opaque, [(0.0, 1.0)], 1000)
