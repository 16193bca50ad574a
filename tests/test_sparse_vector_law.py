"""The exact law of the SVT variants (algorithms.classic.sparse_vector_law) against closed forms, quadrature and the
samplers, and the oracle bound it gives.

Statistical checks use fixed seeds; each chi-square goodness-of-fit test has false-alarm level 1e-4.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from algorithms.broken.svt34_parallel import SVT34Parallel
from algorithms.broken.svt_no_query_noise import SVTNoQueryNoise
from algorithms.broken.svt_outputs_value import SVTOutputsValue
from algorithms.broken.svt_unscaled_query_noise import SVTUnscaledQueryNoise
from algorithms.classic.numerical_svt import NumericalSVT
from algorithms.classic.sparse_vector import SparseVector
from algorithms.classic.sparse_vector_law import answer_patterns, laplace_log_cdf, laplace_log_sf
from dpverify.statistical.oracle import law_of, level_set_bound, oracle_bound

K = 10
ALL_UP_BUT_LAST = (np.array([0.0] * (K - 1) + [1.0]), np.array([1.0] * (K - 1) + [0.0]))


def _patterns(k: int) -> np.ndarray:
    return np.array(list(itertools.product([-1, 0, 1], repeat=k)), dtype=np.int8)


def _quad_pattern(q: np.ndarray, pattern: np.ndarray, threshold: float, b_rho: float, b_nu: float) -> float:
    def f(r: float) -> float:
        v = stats.laplace.pdf(r, scale=b_rho)
        for qi, a in zip(q, pattern):
            if a == 0:
                v *= stats.laplace.cdf(threshold + r - qi, scale=b_nu)
            elif a == 1:
                v *= stats.laplace.sf(threshold + r - qi, scale=b_nu)
        return v

    pts = sorted({0.0, *(float(qi - threshold) for qi in q)})
    return integrate.quad(f, -4000, 4000, points=pts, limit=500, epsabs=0, epsrel=1e-11)[0]


def test_laplace_log_cdf_and_sf_match_scipy_in_both_tails():
    z = np.array([-700.0, -30.0, -1.0, 0.0, 0.5, 30.0, 700.0])
    assert np.allclose(laplace_log_cdf(z, 2.0), stats.laplace.logcdf(z, scale=2.0), rtol=1e-12, atol=1e-300)
    assert np.allclose(laplace_log_sf(z, 2.0), stats.laplace.logsf(z, scale=2.0), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("cutoff", [1, 2])
def test_pattern_probabilities_sum_to_one_and_inconsistent_patterns_are_impossible(cutoff):
    m = SparseVector(0.1, 1.0, cutoff=cutoff)
    pats = _patterns(6)
    x = np.array([0.0, 1.0, 2.0, 1.0, 0.0, 3.0])
    ld = m.log_density(x, pats)
    assert math.isclose(float(np.exp(ld).sum()), 1.0, abs_tol=1e-6)
    # consistent: -1 exactly after the cutoff-th top
    tops = np.cumsum(pats == 1, axis=1)
    before = np.concatenate([np.zeros((len(pats), 1), int), tops[:, :-1]], axis=1)
    consistent = ((pats != -1) == (before < cutoff)).all(axis=1)
    assert np.isfinite(ld[consistent]).all()
    assert np.isneginf(ld[~consistent]).all()


def test_alg1_worst_ratio_matches_quadrature():
    """Lyu Alg. 1, c = 1, ε = 0.1, 10 queries: (⊥,…,⊥,⊤) on (0,…,0,1) vs (1,…,1,0) has loss 0.0982 (quadrature)."""
    m = SparseVector(0.1, 1.0, cutoff=1)
    pat = np.array([[0] * (K - 1) + [1]], dtype=np.int8)
    x0, x1 = ALL_UP_BUT_LAST
    loss = float(m.log_density(x0, pat)[0] - m.log_density(x1, pat)[0])
    quad = math.log(_quad_pattern(x0, pat[0], 1.0, 20.0, 40.0) / _quad_pattern(x1, pat[0], 1.0, 20.0, 40.0))
    assert abs(loss - quad) < 1e-6
    assert abs(loss - 0.0982) < 5e-5


def test_alg5_closed_form_and_frequencies():
    m = SVTNoQueryNoise(0.1, 1.0)
    x = np.array([0.0, 2.0, 1.5])
    out = m(x, 400_000, np.random.default_rng(3))
    rows, counts = np.unique(out, axis=0, return_counts=True)
    p = np.exp(m.log_density(x, rows))
    assert math.isclose(float(np.exp(m.log_density(x, _patterns(3))).sum()), 1.0, abs_tol=1e-12)
    assert stats.chisquare(counts, p * counts.sum()).pvalue > 1e-4


@pytest.mark.parametrize("mech", [SparseVector(0.5, 1.0, cutoff=2), SVTUnscaledQueryNoise(0.5, 1.0, cutoff=2)])
def test_pattern_frequencies_of_the_sampler(mech):
    x = np.array([1.0, 0.0, 2.0, 1.0, 1.0])
    out = mech(x, 400_000, np.random.default_rng(7))
    rows, counts = np.unique(out, axis=0, return_counts=True)
    p = np.exp(mech.log_density(x, rows))
    keep = p * counts.sum() >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(p[keep], 1.0 - p[keep].sum()) * counts.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-4


@pytest.mark.parametrize("mech", [SVTOutputsValue(0.5, 1.0, cutoff=1), NumericalSVT(0.5, 1.0, cutoff=1)])
def test_released_value_density_integrates_to_the_pattern_mass_and_fits_the_sampler(mech):
    x = np.array([1.0, 0.0, 2.0])
    k = len(x)
    out = mech(x, 300_000, np.random.default_rng(11))
    ld = mech.log_density(x, out)
    assert np.isfinite(ld).all()                    # the law never calls its own sampler's outputs impossible
    for j in range(k):                              # pattern ⊥^j ⊤: integrate the density over the value
        v = np.linspace(-400, 400, 160_001)
        rows = np.zeros((len(v), 2 * k))
        rows[:, j] = 1.0
        rows[:, j + 1:k] = -1.0
        rows[:, k + j] = v
        mass = np.trapezoid(np.exp(mech.log_density(x, rows)), v)
        freq = float(np.all(out[:, :k] == rows[0, :k], axis=1).mean())
        se = math.sqrt(freq * (1 - freq) / len(out))
        assert abs(mass - freq) < 4.5 * se + 1e-4
    # the value's distribution within a pattern: binned frequencies against the density (chi-square)
    sel = np.all(out[:, :k] == np.array([1.0, -1.0, -1.0]), axis=1)
    vals = out[sel, k]
    edges = np.quantile(vals, np.linspace(0, 1, 11))
    edges[0], edges[-1] = -400.0, 400.0
    grid = np.linspace(-400, 400, 160_001)
    rows = np.zeros((len(grid), 2 * k))
    rows[:, 0], rows[:, 1:k], rows[:, k] = 1.0, -1.0, grid
    dens = np.exp(mech.log_density(x, rows))
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid))])
    p = np.diff(np.interp(edges, grid, cum))
    counts = np.histogram(vals, edges)[0]
    assert stats.chisquare(counts, p / p.sum() * counts.sum()).pvalue > 1e-4


def test_released_values_out_of_place_are_impossible():
    m = SVTOutputsValue(0.5, 1.0, cutoff=1)
    x = np.array([1.0, 0.0])
    good = np.array([[0.0, 1.0, 0.0, 3.0]])
    bad = np.array([[0.0, 1.0, 2.0, 3.0]])          # a value released for a ⊥
    assert np.isfinite(m.log_density(x, good)).all()
    assert np.isneginf(m.log_density(x, bad)).all()


def test_svt34_parallel_density_is_the_sum_of_its_parts():
    m = SVT34Parallel(0.5, 1.0, cutoff=1)
    x = np.array([1.0, 0.0, 2.0])
    out = m(x, 1000, np.random.default_rng(5))
    a3, a4 = m.parts()
    assert np.allclose(m.log_density(x, out), a3.log_density(x, out[:, :6]) + a4.log_density(x, out[:, 6:]))


def test_svt_laws_are_found_by_the_oracle():
    """Answer patterns only: an exact pmf over the listed support; released values: a density (Monte Carlo)."""
    assert law_of(SparseVector(0.1, 1.0), np.ones(3)).source == "support"
    for mech in (SVTOutputsValue(0.1, 1.0), NumericalSVT(0.1, 1.0), SVT34Parallel(0.1, 1.0)):
        law = law_of(mech, np.ones(3))
        assert law is not None and law.source == "log_density"


def test_answer_patterns_are_the_consistent_ones():
    assert len(answer_patterns(10, 1)) == 11
    assert len(answer_patterns(10, 2)) == 1 + 10 + 45      # at most one ⊤, or exactly two with the rest unanswered
    assert len(answer_patterns(10, None)) == 2 ** 10
    with pytest.raises(ValueError, match="answer patterns"):
        answer_patterns(30, None, limit=1000)


def test_oracle_of_alg1_matches_exact_pattern_enumeration():
    """Monte Carlo oracle (importance weights) against the exact level-set bound from the pattern pmf."""
    m = SparseVector(0.5, 1.0, cutoff=1)
    x0, x1 = np.array([0.0, 0.0, 1.0]), np.array([1.0, 1.0, 0.0])
    pats = np.array([[1, -1, -1], [0, 1, -1], [0, 0, 1], [0, 0, 0]], dtype=np.int8)
    best = -math.inf
    for xn, xd in ((x0, x1), (x1, x0)):
        pn, pd = np.exp(m.log_density(xn, pats)), np.exp(m.log_density(xd, pats))
        o = np.argsort(-(np.log(pn) - np.log(pd)))
        best = max(best, level_set_bound(np.cumsum(pn[o]), np.cumsum(pd[o]), 100_000, 0.05)[0])
    exact = oracle_bound(m, [(x0, x1)], 100_000, alpha=0.05)
    assert exact.method == "exact" and abs(exact.bound - best) < 1e-9

    class DensityOnly:                                  # the same law without its support: Monte Carlo
        def __call__(self, x, n, rng):
            return m(x, n, rng)

        def log_density(self, x, out):
            return m.log_density(x, out)

    mc = oracle_bound(DensityOnly(), [(x0, x1)], 100_000, alpha=0.05, oracle_samples=400_000, seed=1)
    assert mc.method == "monte-carlo" and abs(mc.bound - best) < 0.02
