"""Binomial bounds: agreement with statsmodels and with their definition."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from dpverify.statistical.stats import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    wilson_lower,
    wilson_upper,
)


@pytest.mark.parametrize("k,n", [(0, 10), (1, 10), (5, 10), (10, 10), (37, 1000), (999, 1000)])
@pytest.mark.parametrize("level", [0.025, 0.005])
def test_clopper_pearson_matches_statsmodels(k, n, level):
    lo, hi = proportion_confint(k, n, alpha=2 * level, method="beta")
    assert clopper_pearson_lower(k, n, level) == pytest.approx(lo, abs=1e-12)
    assert clopper_pearson_upper(k, n, level) == pytest.approx(hi, abs=1e-12)


def test_clopper_pearson_definition():
    # at the lower bound L, P[Bin(n, L) >= k] = level (exact one-sided test inversion)
    k, n, level = 12, 200, 0.01
    L = clopper_pearson_lower(k, n, level)
    U = clopper_pearson_upper(k, n, level)
    assert stats.binom.sf(k - 1, n, L) == pytest.approx(level, rel=1e-9)
    assert stats.binom.cdf(k, n, U) == pytest.approx(level, rel=1e-9)


def test_zero_count_upper_bound_closed_form():
    n, level = 1000, 0.05
    assert clopper_pearson_upper(0, n, level) == pytest.approx(1 - level ** (1 / n))


def test_vectorised():
    k = np.array([0, 3, 10])
    assert clopper_pearson_lower(k, 10, 0.05).shape == (3,)
    assert np.all(wilson_lower(k / 10, 10, 2.0) <= k / 10)
    assert np.all(wilson_upper(k / 10, 10, 2.0) >= k / 10)


def test_epsilon_lower_bound():
    assert epsilon_lower_bound(0.5, 0.25) == pytest.approx(np.log(2))
    assert epsilon_lower_bound(0.5, 0.25, delta=0.25) == pytest.approx(0.0)
    assert epsilon_lower_bound(0.1, 0.25, delta=0.2) == -np.inf
