"""The one-shot Gumbel top-k (algorithms/classic/top_k.py): its exact law against its sampler and against the
exponential mechanism, and its true ε.  Deterministic: fixed seeds; the frequency check is a chi-square test at
level 1e-6 on one fixed seed."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from algorithms.classic.exponential import exponential_mechanism_pmf
from algorithms.classic.top_k import MAX_SUPPORT, OneShotTopK


def test_the_law_is_a_pmf_that_the_sampler_follows() -> None:
    mech = OneShotTopK(k=2, epsilon=2.0)
    u = np.array([0.0, 2.0, 1.0, 3.0])
    rows = mech.support(u)
    p = np.exp(mech.log_density(u, rows))
    assert rows.shape == (12, 2) and p.sum() == pytest.approx(1.0)
    out = mech(u, 200_000, np.random.default_rng(0))
    assert out.shape == (200_000, 2) and out.dtype == np.int64
    codes = out[:, 0] * 4 + out[:, 1]
    counts = np.bincount(codes, minlength=16)[rows[:, 0] * 4 + rows[:, 1]]
    assert counts.sum() == 200_000
    assert stats.chisquare(counts, 200_000 * p).pvalue > 1e-6


def test_top_1_is_the_exponential_mechanism() -> None:
    u = np.array([1.0, 0.0, 4.0, 2.0, 2.0])
    mech = OneShotTopK(k=1, epsilon=0.8)
    p = np.exp(mech.log_density(u, np.arange(5).reshape(-1, 1)))
    np.testing.assert_allclose(p, exponential_mechanism_pmf(u, 0.8), rtol=1e-12)


def test_sharp_logits_keep_their_precision() -> None:
    """The mass left after the top items is about e^-40 of the whole: 1 minus the chosen mass would be 0."""
    u = np.array([10.0, 10.0, 0.0, 0.0])
    mech = OneShotTopK(k=3, epsilon=24.0)                          # coefficient 4
    lp = mech.log_density(u, np.array([[0, 1, 2]]))
    # P = e^40/(2e^40+2) * e^40/(e^40+2) * 1/2
    want = 40 - np.log(2 * np.exp(40) + 2) + 40 - np.log(np.exp(40) + 2) + np.log(0.5)
    assert lp[0] == pytest.approx(want, abs=1e-12)


def test_invalid_rows_have_no_mass_and_epsilon_on_is_the_largest_log_ratio() -> None:
    mech = OneShotTopK(k=2, epsilon=4.0)
    u0 = np.array([0.0, 1.0, 3.0])
    assert np.isneginf(mech.log_density(u0, np.array([[1, 1], [0, 5]]))).all()
    u1 = u0 + np.array([1.0, 0.0, 0.0])
    rows = mech.support(u0)
    ratio = mech.log_density(u0, rows) - mech.log_density(u1, rows)
    assert mech.epsilon_on(u0, u1) == pytest.approx(np.abs(ratio).max())
    assert mech.epsilon_on(u0, u1) <= mech.epsilon + 1e-12          # within the composition bound
    with pytest.raises(NotImplementedError):
        OneShotTopK(k=6, epsilon=1.0).support(np.zeros(40))
    assert MAX_SUPPORT >= 5040
    with pytest.raises(ValueError, match="at least k scores"):
        mech(np.zeros(1), 5, np.random.default_rng(0))
