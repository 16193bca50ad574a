"""DPM interval-size estimation (seed 004 Alg. 2, Sec. 3.5; Lemmas 1-2, Sec. 4.2): algorithms.dpm.interval_size.

Statistical tests use fixed seeds and a false-alarm level of 1e-3 each (stated in their docstrings).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare, kstest

from algorithms.dpm.interval_size import (
    DEFAULT_SIGMAS,
    IntervalSizeEst,
    averaged_gaps,
    dists,
    dp_percentile,
    dp_percentile_cdf,
    dp_percentile_law,
    gap_rank_counts,
    percentile_utilities,
    percentile_utility_on_grid,
)
from algorithms.noise import NoiseSource

HYP = settings(derandomize=True, database=None, deadline=None, max_examples=200)
LEVEL = 1e-3


class Recorder(NoiseSource):
    """A plain noise source that also records (kind, step, declared sensitivity, scale) of every call."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__(rng)
        self.steps: list[tuple[str, str, float, float | None]] = []

    def add(self, step, value, draw, *, sensitivity, norm="l1", scale=None, kind="other"):
        self.steps.append(("add", step, float(sensitivity), scale))
        return super().add(step, value, draw, sensitivity=sensitivity, norm=norm, scale=scale, kind=kind)

    def select(self, step, utilities, draw, *, sensitivity, norm="linf", scale=None):
        self.steps.append(("select", step, float(sensitivity), scale))
        return super().select(step, utilities, draw, sensitivity=sensitivity, norm=norm, scale=scale)


def _chisq_pvalue(observed: np.ndarray, probs: np.ndarray, min_expected: float = 5.0) -> float:
    """Chi-square goodness-of-fit p-value, cells with expected count < ``min_expected`` pooled."""
    observed = np.asarray(observed, dtype=np.float64)
    expected = np.asarray(probs, dtype=np.float64) * observed.sum()
    big = expected >= min_expected
    assert observed[expected == 0].sum() == 0, "a zero-probability cell was sampled"
    obs = list(observed[big]) + ([observed[~big].sum()] if (~big).any() else [])
    exp = list(expected[big]) + ([expected[~big].sum()] if (~big).any() else [])
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    exp = np.asarray(exp) * (sum(obs) / sum(exp))
    return float(chisquare(obs, exp).pvalue)


# -- gaps -------------------------------------------------------------------------------------------
def test_dists_hand_examples():
    np.testing.assert_array_equal(dists([0.0, 1.0, 3.0]), [1.0, 2.0])
    np.testing.assert_array_equal(dists([3.0, 0.0, 1.0]), [1.0, 2.0])      # sorted first
    np.testing.assert_array_equal(dists([2.0, 2.0, 5.0]), [0.0, 3.0])      # ties give zero gaps
    assert dists([5.0]).shape == (0,) and dists([]).shape == (0,)
    with pytest.raises(ValueError, match="column"):
        dists([[0.0, 1.0]])


def test_averaged_gaps_sort_each_dimension_independently():
    # dim 0: 0, 1, 3 -> gaps 1, 2; dim 1: 10, 11, 14 -> gaps 1, 3 (rows are re-paired by the sorts)
    data = np.array([[0.0, 10.0], [1.0, 14.0], [3.0, 11.0]])
    np.testing.assert_array_equal(averaged_gaps(data), [1.0, 2.5])
    np.testing.assert_array_equal(averaged_gaps([0.0, 1.0, 3.0]), [1.0, 2.0])   # scalar records
    np.testing.assert_array_equal(averaged_gaps(np.array([[0.0], [1.0], [3.0]])), [1.0, 2.0])
    assert averaged_gaps(np.empty((0, 3))).shape == (0,)
    assert averaged_gaps(np.array([[1.0, 2.0]])).shape == (0,)
    with pytest.raises(ValueError, match="finite"):
        averaged_gaps([0.0, math.nan])


def test_gap_rank_counts_hand_example():
    data = np.array([[0.0, 10.0], [1.0, 14.0], [3.0, 11.0]])            # A = [1, 2.5]
    counts = gap_rank_counts(data, [0.0, 1.0, 1.5, 2.5, 3.0])
    assert counts.dtype == np.int64
    assert counts.tolist() == [0, 0, 1, 1, 2]                           # strict: #{a < v}
    assert gap_rank_counts([7.0], [1.0, 2.0]).tolist() == [0, 0]        # fixed length, empty A


# -- the DP percentile's utilities ----------------------------------------------------------------
def test_percentile_utilities_hand_example():
    edges, u = percentile_utilities([0.2, 0.8, 0.5], 0.5, (0.0, 1.0))
    np.testing.assert_allclose(edges, [0.0, 0.2, 0.5, 0.8, 1.0])
    np.testing.assert_allclose(u, [-1.5, -0.5, -0.5, -1.5])             # -|i - 0.5*3|, i = 0..3
    # values clipped to the bounds; k = 2 values give k + 1 = 3 intervals
    edges, u = percentile_utilities([-1.0, 2.0], 0.65, (0.0, 1.0))
    np.testing.assert_allclose(edges, [0.0, 0.0, 1.0, 1.0])
    np.testing.assert_allclose(u, [-1.3, -0.3, -0.7])
    edges, u = percentile_utilities([], 0.65, (0.0, 2.0))               # no value: one interval
    np.testing.assert_allclose(edges, [0.0, 2.0]) and np.testing.assert_allclose(u, [0.0])


def test_percentile_utility_on_grid_hand_example():
    # A = gaps of [0, 1, 3] = [1, 2]; k = 2; p = 0.5: u(v) = -|#{a < v} - 1|
    u = percentile_utility_on_grid([0.0, 1.0, 3.0], 0.5, (0.0, 3.0), [0.0, 0.5, 1.0, 1.5, 2.5, 3.0])
    np.testing.assert_allclose(u, [-1.0, -1.0, -1.0, 0.0, -1.0, -1.0])
    with pytest.raises(ValueError, match="grid"):
        percentile_utility_on_grid([0.0, 1.0, 3.0], 0.5, (0.0, 3.0), [3.5])
    with pytest.raises(ValueError, match="p"):
        percentile_utility_on_grid([0.0, 1.0], 1.5, (0.0, 3.0), [1.0])


# -- Lemma 1 in one dimension (holds) ---------------------------------------------------------------
def _sup_count_change(d0: np.ndarray, d1: np.ndarray) -> int:
    """``sup_v |#{a ∈ A(d0) : a < v} − #{a ∈ A(d1) : a < v}|``, exact: the counts are step functions
    that only change at the gap values, so the values there and just above them cover every piece."""
    pts = np.unique(np.concatenate((averaged_gaps(d0), averaged_gaps(d1))))
    v = np.concatenate((pts, np.nextafter(pts, np.inf), [-1.0, np.inf]))
    return int(np.max(np.abs(gap_rank_counts(d0, v) - gap_rank_counts(d1, v))))


def _sup_utility_change(d0, d1, p, bounds) -> float:
    lo, hi = bounds
    pts = np.unique(np.clip(np.concatenate((averaged_gaps(d0), averaged_gaps(d1))), lo, hi))
    grid = np.clip(np.concatenate((pts, np.nextafter(pts, np.inf), [lo, hi])), lo, hi)
    return float(np.max(np.abs(percentile_utility_on_grid(d0, p, bounds, grid)
                               - percentile_utility_on_grid(d1, p, bounds, grid))))


_coord = st.one_of(st.integers(0, 12).map(float), st.floats(0.0, 100.0, allow_nan=False))


@HYP
@given(data=st.lists(_coord, max_size=30), x=_coord)
def test_lemma1_rank_counts_move_by_at_most_two_in_one_dimension(data, x):
    d0 = np.asarray(data, dtype=np.float64)
    d1 = np.append(d0, x)                       # add/remove neighbours D, D ∪ {x}
    assert _sup_count_change(d0, d1) <= 2


@HYP
@given(data=st.lists(_coord, max_size=30), x=_coord, p=st.sampled_from([0.0, 0.3, 0.5, 0.65, 1.0]))
def test_lemma1_utility_moves_by_at_most_two_in_one_dimension(data, x, p):
    d0 = np.asarray(data, dtype=np.float64)
    d1 = np.append(d0, x)
    assert _sup_utility_change(d0, d1, p, (0.0, 100.0)) <= 2.0 + 1e-12


# -- Lemma 1 for d = 2 (fails) ----------------------------------------------------------------------
def _column(gaps, start=0.0):
    return np.concatenate(([start], start + np.cumsum(np.asarray(gaps, dtype=np.float64))))


def test_lemma1_fails_in_two_dimensions_small_pair():
    """Insertion at the bottom of dimension 0 and the top of dimension 1 re-pairs every gap index:
    dim-0 gaps 1, 2, 3, 4 and dim-1 gaps 4, 3, 2, 1 average to 2.5 everywhere; after adding the point
    (0, 10) (a duplicate of dim 0's minimum and of dim 1's maximum) every averaged gap is 2."""
    d = np.column_stack(([0.0, 1.0, 3.0, 6.0, 10.0], [0.0, 4.0, 7.0, 9.0, 10.0]))
    d_plus = np.vstack((d, [[0.0, 10.0]]))
    np.testing.assert_array_equal(averaged_gaps(d), [2.5, 2.5, 2.5, 2.5])
    np.testing.assert_array_equal(averaged_gaps(d_plus), [2.0, 2.0, 2.0, 2.0, 2.0])
    assert gap_rank_counts(d, [2.5]).tolist() == [0]
    assert gap_rank_counts(d_plus, [2.5]).tolist() == [5]
    change = _sup_count_change(d, d_plus)
    print(f"\nd=2 rank-count change {change} on |D| = {len(d)} (Lemma 1 claims <= 2)")
    assert change == len(d) == 5               # the largest possible: every entry of A' flips


@pytest.mark.parametrize("m", [4, 10, 50, 200])
def test_lemma1_rank_count_change_grows_with_the_data_set(m):
    gaps0 = np.arange(1, m + 1, dtype=np.float64)           # 1, ..., m
    d = np.column_stack((_column(gaps0), _column(gaps0[::-1])))
    x = np.array([[0.0, d[:, 1].max()]])                   # bottom of dim 0, top of dim 1
    d_plus = np.vstack((d, x))
    change = _sup_count_change(d, d_plus)
    assert change == len(d) == m + 1
    counts = gap_rank_counts(d, [(m + 1) / 2.0]), gap_rank_counts(d_plus, [(m + 1) / 2.0])
    assert counts[0].tolist() == [0] and counts[1].tolist() == [m + 1]


def test_lemma1_utility_change_in_two_dimensions():
    """The utility of the DP percentile at a fixed output point moves by p·|D| = 0.65·21 = 13.65
    (Lemma 1: 2).  Dimension-0 gaps m, …, 1 (decreasing), dimension-1 gaps chosen so that the first
    K = p·m averaged gaps sit just below v = m and the rest far above; the shift makes them reach v."""
    m, p, k_low = 20, 0.65, 13
    gaps0 = np.arange(m, 0, -1, dtype=np.float64)
    gaps1 = np.where(np.arange(m) < k_low, m - 1 + np.arange(m), 3 * m).astype(np.float64)
    d = np.column_stack((_column(gaps0), _column(gaps1)))
    x = np.array([[-(m + 1.0), d[:, 1].max() + 2 * m - 1]])
    d_plus = np.vstack((d, x))
    bounds = (0.0, float(d_plus.max() - d_plus.min()))
    u0 = percentile_utility_on_grid(d, p, bounds, [float(m)])
    u1 = percentile_utility_on_grid(d_plus, p, bounds, [float(m)])
    assert u0.tolist() == [0.0] and u1[0] == pytest.approx(-p * len(d))
    sup = _sup_utility_change(d, d_plus, p, bounds)
    print(f"\nd=2 utility change {sup:.4g} at |D| = {len(d)} (Lemma 1 claims <= 2)")
    assert sup >= p * len(d) - 1e-9 > 2.0


# -- the DP percentile sampler ----------------------------------------------------------------------
VALUES = np.array([0.3, 1.1, 1.7, 2.0, 2.9, 3.3, 4.2, 5.0, 5.6, 6.1, 7.4, 7.5, 8.8, 9.0, 9.9])


def test_dp_percentile_law_is_the_exponential_mechanism_over_intervals():
    eps, p, bounds = 0.7, 0.65, (0.0, 10.0)
    edges, probs = dp_percentile_law(VALUES, p, eps, bounds, sensitivity=2.0)
    _, u = percentile_utilities(VALUES, p, bounds)
    w = np.diff(edges) * np.exp(eps * u / 4.0)
    np.testing.assert_allclose(probs, w / w.sum(), rtol=1e-12)
    # the code's reading: diffprivlib with epsilon = eps/2 and its sensitivity 1 is the same law
    _, probs1 = dp_percentile_law(VALUES, p, eps / 2.0, bounds, sensitivity=1.0)
    np.testing.assert_allclose(probs, probs1, rtol=1e-12)
    # CDF: 0 at lo, 1 at hi, the interval masses at the edges
    cdf = dp_percentile_cdf(VALUES, p, eps, bounds, edges, sensitivity=2.0)
    np.testing.assert_allclose(cdf, np.concatenate(([0.0], np.cumsum(probs))), atol=1e-12)


def test_dp_percentile_zero_length_intervals_are_never_drawn():
    edges, probs = dp_percentile_law([1.0, 1.0, 1.0, 0.0], 0.5, 5.0, (0.0, 2.0))
    widths = np.diff(edges)
    assert np.all(probs[widths == 0] == 0.0) and probs.sum() == pytest.approx(1.0)
    out = dp_percentile([1.0, 1.0, 1.0, 0.0], 0.5, 5.0, (0.0, 2.0), 5000, NoiseSource(np.random.default_rng(3)))
    assert np.all((out >= 0.0) & (out <= 2.0))


def test_dp_percentile_sampling_matches_its_exact_pmf():
    """Interval frequencies vs the exact pmf (chi-square) and positions inside the interval vs
    U(0, 1) (Kolmogorov-Smirnov), 200 000 draws at seed 11; each test at false-alarm level 1e-3."""
    eps, p, bounds = 0.8, 0.65, (0.0, 10.0)
    edges, probs = dp_percentile_law(VALUES, p, eps, bounds)
    out = dp_percentile(VALUES, p, eps, bounds, 200_000, NoiseSource(np.random.default_rng(11)))
    assert out.shape == (200_000,) and out.dtype == np.float64
    idx = np.clip(np.searchsorted(edges, out, side="right") - 1, 0, probs.size - 1)
    observed = np.bincount(idx, minlength=probs.size)
    assert _chisq_pvalue(observed, probs) > LEVEL
    frac = (out - edges[idx]) / np.diff(edges)[idx]
    assert kstest(frac, "uniform").pvalue > LEVEL


def test_dp_percentile_declares_its_noise_steps():
    rec = Recorder(np.random.default_rng(0))
    dp_percentile(VALUES, 0.65, 1.0, (0.0, 10.0), 7, rec, sensitivity=2.0)
    assert rec.steps == [("select", "dp-percentile", 2.0, 0.25), ("add", "uniform-in-interval", math.inf, None)]


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(p=1.2), "p"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(bounds=(1.0, 1.0)), "bounds"),
        (dict(n=-1), "n must"),
        (dict(sensitivity=0.0), "sensitivity"),
        (dict(values=[0.0, math.nan]), "values"),
    ],
)
def test_dp_percentile_rejects_bad_parameters(kwargs, msg):
    args = dict(values=VALUES, p=0.65, epsilon=1.0, bounds=(0.0, 10.0), n=3,
                noise=NoiseSource(np.random.default_rng(0)), sensitivity=2.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=msg):
        dp_percentile(**args)


# -- Algorithm 2 ------------------------------------------------------------------------------------
RNG_DATA = np.random.default_rng(2024)
DATA_1D = np.clip(RNG_DATA.normal(0.0, 5.0, size=500), -40.0, 40.0)
DATA_2D = np.clip(RNG_DATA.normal(0.0, 3.0, size=(300, 2)), -20.0, 20.0)


def test_defaults_are_the_codes():
    est = IntervalSizeEst(epsilon=0.04, n_tilde=500.0, bounds=(-40.0, 40.0))
    assert est.sigmas == DEFAULT_SIGMAS and len(est.sigmas) == 59
    assert est.sigmas[0] == 0.5 and est.sigmas[-1] == 29.5
    assert (est.repetitions, est.percentile, est.sensitivity, est.table_dims) == (30, 65.0, 2.0, "code")
    assert est.percentile_bounds() == (0.0, 80.0)


def test_release_equals_call_and_declares_its_steps():
    est = IntervalSizeEst(epsilon=0.5, n_tilde=480.3, bounds=(-40.0, 40.0))
    a = est(DATA_1D, 1000, np.random.default_rng(5))
    b = est.release(DATA_1D, 1000, NoiseSource(np.random.default_rng(5)))
    assert a.dtype == np.float64 and a.shape == (1000,)
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {s / 2.0 for s in est.sigmas}
    rec = Recorder(np.random.default_rng(5))
    np.testing.assert_array_equal(est.release(DATA_1D, 1000, rec), a)
    assert [s[:3] for s in rec.steps] == [("select", "dp-percentile", 2.0), ("add", "uniform-in-interval", math.inf)]
    assert rec.steps[0][3] == pytest.approx(0.5 / 4.0)


def test_table_is_public_seeded_and_built_once():
    est = IntervalSizeEst(epsilon=1.0, n_tilde=300.0, bounds=(-20.0, 20.0), d=2)
    keys, sig = est.table()
    assert est._table is est._table                              # cached on the object
    # a function of the public parameters and table_seed only: same on a fresh object, whatever was sampled
    est(DATA_2D, 10, np.random.default_rng(1))
    np.testing.assert_array_equal(IntervalSizeEst(epsilon=9.0, n_tilde=300.0, bounds=(-20.0, 20.0), d=2).table()[0], keys)
    assert not np.array_equal(IntervalSizeEst(epsilon=1.0, n_tilde=300.0, bounds=(-20.0, 20.0), d=2,
                                              table_seed=1).table()[0], keys)
    np.testing.assert_array_equal(sig, est.sigmas)
    # gap percentiles scale with sigma: keys ≈ sigma · key(1) (up to Monte-Carlo error)
    ratio = keys / sig
    assert np.all(np.abs(ratio / np.median(ratio) - 1.0) < 0.1)
    paper = IntervalSizeEst(epsilon=1.0, n_tilde=300.0, bounds=(-20.0, 20.0), d=2, table_dims="paper")
    assert not np.array_equal(paper.table()[0], keys) and np.all(paper.table()[0] > 0)


def test_release_is_vectorised():
    est = IntervalSizeEst(epsilon=0.5, n_tilde=500.0, bounds=(-40.0, 40.0))
    est.table()                                                   # build the table first
    t0 = time.perf_counter()
    out = est(DATA_1D, 10_000, np.random.default_rng(0))
    elapsed = time.perf_counter() - t0
    assert out.shape == (10_000,)
    assert elapsed < 0.5, f"10 000 draws on 500 points took {elapsed:.3f} s"


def test_beta_estimates_the_spread_with_a_large_budget():
    est = IntervalSizeEst(epsilon=200.0, n_tilde=500.0, bounds=(-40.0, 40.0))
    beta = est(DATA_1D, 2000, np.random.default_rng(0))
    assert 1.5 <= np.median(beta) <= 3.5                          # sigma* near 5, beta = sigma*/2


def test_beta_from_percentile_picks_the_closest_key():
    est = IntervalSizeEst(epsilon=1.0, n_tilde=200.0, bounds=(0.0, 50.0))
    keys, sig = est.table()
    np.testing.assert_array_equal(est.beta_from_percentile(keys), sig / 2.0)
    order = np.argsort(keys)
    k0, k1 = keys[order[3]], keys[order[4]]
    assert est.beta_from_percentile(k0 + 0.3 * (k1 - k0)) == sig[order[3]] / 2.0
    assert est.beta_from_percentile(k0 + 0.7 * (k1 - k0)) == sig[order[4]] / 2.0
    assert est.beta_from_percentile(-1.0) == sig[order[0]] / 2.0
    assert est.beta_from_percentile(1e9) == sig[order[-1]] / 2.0
    assert est.beta_from_percentile(np.zeros((2, 3))).shape == (2, 3)


def test_literal_sigmas_30_is_data_independent():
    """Sec. 6.4's "sigmas = [30]" taken literally (a single candidate σ): beta = 15 on every data set."""
    est = IntervalSizeEst(epsilon=1.0, n_tilde=500.0, bounds=(-40.0, 40.0), sigmas=(30.0,))
    assert np.all(est(DATA_1D, 100, np.random.default_rng(0)) == 15.0)
    assert np.all(est(np.zeros(500), 100, np.random.default_rng(0)) == 15.0)
    betas, probs = est.beta_pmf(DATA_1D)
    assert betas.tolist() == [15.0] and probs.tolist() == [1.0]


def test_beta_sampling_matches_its_exact_pmf():
    """beta frequencies vs :meth:`IntervalSizeEst.beta_pmf` (chi-square, 100 000 draws at seed 21,
    false-alarm level 1e-3), for d = 2 and a budget small enough to spread the mass."""
    est = IntervalSizeEst(epsilon=0.3, n_tilde=300.0, bounds=(-20.0, 20.0), d=2)
    betas, probs = est.beta_pmf(DATA_2D)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12) and np.count_nonzero(probs > 0.01) >= 5
    out = est(DATA_2D, 100_000, np.random.default_rng(21))
    observed = np.array([(out == b).sum() for b in betas])
    assert observed.sum() == out.size
    assert _chisq_pvalue(observed, probs) > LEVEL


def test_sensitivity_parameter_expresses_both_readings():
    """sensitivity=2 at eps (Lemma 1, the code's 0.5·eps with diffprivlib's 1) vs sensitivity=1 at eps/2."""
    e2 = IntervalSizeEst(epsilon=0.4, n_tilde=300.0, bounds=(-20.0, 20.0), d=2, sensitivity=2.0)
    e1 = IntervalSizeEst(epsilon=0.2, n_tilde=300.0, bounds=(-20.0, 20.0), d=2, sensitivity=1.0)
    np.testing.assert_allclose(e2.beta_pmf(DATA_2D)[1], e1.beta_pmf(DATA_2D)[1], atol=1e-12)
    np.testing.assert_array_equal(e2(DATA_2D, 50, np.random.default_rng(2)), e1(DATA_2D, 50, np.random.default_rng(2)))


def test_small_or_negative_noisy_count_still_builds_the_table():
    for n_tilde in (-3.7, 0.0, 1.9):
        est = IntervalSizeEst(epsilon=1.0, n_tilde=n_tilde, bounds=(0.0, 1.0), sigmas=(0.5, 1.0), repetitions=2)
        assert est.simulation_size == 2
        assert np.all(np.isfinite(est.table()[0]))
        out = est([0.1, 0.5], 10, np.random.default_rng(0))
        assert set(out.tolist()) <= {0.25, 0.5}
    # an empty data set (the add/remove neighbour of a one-point set): the percentile is uniform
    assert est(np.empty(0), 3, np.random.default_rng(0)).shape == (3,)


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=math.inf), "epsilon"),
        (dict(n_tilde=math.nan), "n_tilde"),
        (dict(bounds=(1.0, 0.0)), "bounds"),
        (dict(d=0), "d must"),
        (dict(sigmas=()), "sigmas"),
        (dict(sigmas=(1.0, -1.0)), "sigmas"),
        (dict(sigmas=(1.0, 1.0)), "sigmas"),
        (dict(repetitions=0), "repetitions"),
        (dict(percentile=100.0), "percentile"),
        (dict(sensitivity=-2.0), "sensitivity"),
        (dict(table_seed=-1), "table_seed"),
        (dict(table_dims="both"), "table_dims"),
    ],
)
def test_interval_size_est_rejects_bad_parameters(kwargs, msg):
    args = dict(epsilon=1.0, n_tilde=100.0, bounds=(0.0, 1.0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=msg):
        IntervalSizeEst(**args)


def test_interval_size_est_rejects_bad_data():
    est = IntervalSizeEst(epsilon=1.0, n_tilde=100.0, bounds=(0.0, 1.0), d=2, sigmas=(0.5,), repetitions=1)
    with pytest.raises(ValueError, match="outside the public range"):
        est(np.array([[0.5, 1.5]]), 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="finite"):
        est(np.array([[0.5, math.nan]]), 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="shape"):
        est(np.array([0.5, 0.2]), 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n must"):
        est(np.array([[0.5, 0.2]]), -1, np.random.default_rng(0))
