"""DPM private averaging DP-AVG (seed 004 Sec. 3.4, Alg. 1 line 11): algorithms.dpm.averaging.

Statistical tests use fixed seeds and state their false-alarm level.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from algorithms.dpm.averaging import (
    DPAverage,
    analytic_gaussian_sigma,
    clip_to_range,
    clipped_sum,
    gaussian_privacy_profile,
    sum_l2_sensitivity,
)
from algorithms.noise import NoiseSource

HYP = settings(derandomize=True, database=None, deadline=None, max_examples=200)


def _profile(epsilon: float, sigma: float, sensitivity: float) -> float:
    """δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ), written out directly (independent of the module)."""
    a = sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    return float(norm.cdf(a) - math.exp(epsilon) * norm.cdf(b))


# -- protected quantity and sensitivity ------------------------------------------------------------
def test_clip_and_sum_hand_example():
    data = np.array([[-5.0, 0.5], [0.25, 3.0], [1.0, -1.0]])
    np.testing.assert_array_equal(clip_to_range(data, (-1.0, 2.0)), [[-1.0, 0.5], [0.25, 2.0], [1.0, -1.0]])
    np.testing.assert_allclose(clipped_sum(data, (-1.0, 2.0), 2), [0.25, 1.5])
    np.testing.assert_allclose(clipped_sum(data, (-1.0, 2.0), 2, clip=False), [-3.75, 2.5])
    np.testing.assert_array_equal(clipped_sum(np.empty((0, 3)), (0.0, 1.0), 3), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(clipped_sum([0.5, 2.0, -3.0], (0.0, 1.0), 1), [1.5])     # d = 1, scalar records
    with pytest.raises(ValueError, match="shape"):
        clipped_sum(np.ones((2, 3)), (0.0, 1.0), 2)


def test_sum_l2_sensitivity_values():
    assert sum_l2_sensitivity((-3.0, 2.0), 4) == pytest.approx(6.0)               # max(|a|,|b|)·√d
    assert sum_l2_sensitivity((-3.0, 2.0), 4, "replace") == pytest.approx(10.0)   # (b − a)·√d
    assert sum_l2_sensitivity((1.0, 5.0), 1) == pytest.approx(5.0)
    assert sum_l2_sensitivity((1.0, 5.0), 9, "replace") == pytest.approx(12.0)
    with pytest.raises(ValueError, match="relation"):
        sum_l2_sensitivity((0.0, 1.0), 1, "swap")


_value = st.floats(-1e3, 1e3, allow_nan=False)
_bounds = st.sampled_from([(-1.0, 2.0), (0.0, 1.0), (-5.0, -1.0), (3.0, 7.5)])


@HYP
@given(d=st.integers(1, 5), data=st.data(), bounds=_bounds)
def test_clipped_sum_change_is_within_the_sensitivity(d, data, bounds):
    rows = data.draw(st.lists(st.lists(_value, min_size=d, max_size=d), max_size=12))
    x = data.draw(st.lists(_value, min_size=d, max_size=d))
    y = data.draw(st.lists(_value, min_size=d, max_size=d))
    base = np.asarray(rows, dtype=np.float64).reshape(-1, d)
    s0 = clipped_sum(base, bounds, d)
    added = clipped_sum(np.vstack((base, [x])), bounds, d)                        # add/remove
    assert np.linalg.norm(added - s0) <= sum_l2_sensitivity(bounds, d) * (1 + 1e-12) + 1e-9
    replaced_rows = np.vstack((base, [x])), np.vstack((base, [y]))                 # replace x by y
    rep = clipped_sum(replaced_rows[0], bounds, d) - clipped_sum(replaced_rows[1], bounds, d)
    assert np.linalg.norm(rep) <= sum_l2_sensitivity(bounds, d, "replace") * (1 + 1e-12) + 1e-9


def test_unclipped_sum_breaks_the_sensitivity():
    bounds, d = (0.0, 1.0), 3
    base = np.full((4, d), 0.5)
    far = np.full((1, d), 100.0)
    change = np.linalg.norm(clipped_sum(np.vstack((base, far)), bounds, d, clip=False) - clipped_sum(base, bounds, d))
    assert change > sum_l2_sensitivity(bounds, d)                                 # 173.2 > 1.732
    clipped = np.linalg.norm(clipped_sum(np.vstack((base, far)), bounds, d) - clipped_sum(base, bounds, d))
    assert clipped <= sum_l2_sensitivity(bounds, d) + 1e-12


# -- analytic Gaussian calibration -----------------------------------------------------------------
GRID = [(eps, delta, sens)
        for eps in (0.01, 0.1, 0.6, 1.0, 3.0, 10.0)
        for delta in (1e-10, 2.5e-8, 1e-5, 1e-2, 0.3, 0.8)
        for sens in (1.0, 4.2)]


@pytest.mark.parametrize("eps, delta, sens", GRID)
def test_analytic_sigma_attains_the_target_delta(eps, delta, sens):
    sigma = analytic_gaussian_sigma(eps, delta, sens)
    assert gaussian_privacy_profile(eps, sigma, sens) == pytest.approx(delta, rel=1e-9)
    assert gaussian_privacy_profile(eps, sigma, sens) <= delta                  # rounded on the safe side
    # agrees with the independent solver of algorithms.classic.gaussian (brentq on sigma directly)
    # the direct (non-log) formula where it has no cancellation trouble
    if delta >= 1e-5:
        assert _profile(eps, sigma, sens) == pytest.approx(delta, rel=1e-9)
    # it scales linearly with the sensitivity
    assert sigma == pytest.approx(sens * analytic_gaussian_sigma(eps, delta, 1.0), rel=1e-10)


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (0.5, 1e-8), (0.9, 1e-3), (0.6, 2.5e-8)])
def test_analytic_sigma_beats_the_classic_formula(eps, delta):
    """Dwork-Roth Thm A.1 (ε < 1): σ = Δ√(2 ln(1.25/δ))/ε is (ε, δ)-DP, so the exact profile there is
    ≤ δ and the analytic σ (the smallest valid one) is not larger."""
    classic = math.sqrt(2.0 * math.log(1.25 / delta)) / eps
    assert gaussian_privacy_profile(eps, classic, 1.0) <= delta
    assert analytic_gaussian_sigma(eps, delta, 1.0) <= classic


def test_analytic_sigma_is_monotone():
    sig = [analytic_gaussian_sigma(e, 1e-6, 1.0) for e in (0.05, 0.1, 0.5, 1.0, 2.0, 8.0)]
    assert all(a > b for a, b in zip(sig, sig[1:]))
    sig = [analytic_gaussian_sigma(0.5, d, 1.0) for d in (1e-12, 1e-8, 1e-4, 1e-2, 0.2, 0.6)]
    assert all(a > b for a, b in zip(sig, sig[1:]))


@pytest.mark.parametrize(
    "args, msg",
    [((0.0, 1e-5, 1.0), "epsilon"), ((1.0, 0.0, 1.0), "delta"), ((1.0, 1.0, 1.0), "delta"),
     ((1.0, 1e-5, 0.0), "sensitivity"), ((math.nan, 1e-5, 1.0), "epsilon")],
)
def test_analytic_sigma_rejects_bad_parameters(args, msg):
    with pytest.raises(ValueError, match=msg):
        analytic_gaussian_sigma(*args)


# -- the mechanism ---------------------------------------------------------------------------------
DATA = np.random.default_rng(7).uniform(-1.0, 2.0, size=(40, 3))


def test_dpaverage_parameters_and_sensitivity():
    m = DPAverage(epsilon=0.6, delta=8e-6, bounds=(-1.0, 2.0), d=3)
    assert m.sensitivity == pytest.approx(2.0 * math.sqrt(3.0))
    assert m.sigma == pytest.approx(analytic_gaussian_sigma(0.6, 8e-6, 2.0 * math.sqrt(3.0)))
    assert m.true_delta(0.6) == pytest.approx(8e-6, rel=1e-9)
    r = DPAverage(epsilon=0.6, delta=8e-6, bounds=(-1.0, 2.0), d=3, relation="replace")
    assert r.sensitivity == pytest.approx(3.0 * math.sqrt(3.0)) and r.sigma > m.sigma


def test_dpaverage_release_equals_call_and_declares_its_step():
    m = DPAverage(epsilon=1.0, delta=1e-6, bounds=(-1.0, 2.0), d=3)
    a = m(DATA, 500, np.random.default_rng(3))
    b = m.release(DATA, 500, NoiseSource(np.random.default_rng(3)))
    assert a.shape == (500, 3) and a.dtype == np.float64
    np.testing.assert_array_equal(a, b)

    steps = []

    class Recorder(NoiseSource):
        def add(self, step, value, draw, *, sensitivity, norm="l1", scale=None, kind="other"):
            steps.append((step, np.array(value), sensitivity, norm, scale, kind))
            return super().add(step, value, draw, sensitivity=sensitivity, norm=norm, scale=scale, kind=kind)

    np.testing.assert_array_equal(m.release(DATA, 500, Recorder(np.random.default_rng(3))), a)
    [(step, value, sens, nrm, scale, kind)] = steps
    assert (step, nrm, kind) == ("gaussian-sum", "l2", "gaussian")
    np.testing.assert_allclose(value, clipped_sum(DATA, (-1.0, 2.0), 3))
    assert sens == pytest.approx(m.sensitivity) and scale == m.sigma


def test_dpaverage_noise_has_the_calibrated_law():
    """40 000 draws at seed 9: per-coordinate mean within 5 standard errors of the clipped sum and the
    sample standard deviation within 3% of σ (each a false alarm far below 1e-3)."""
    m = DPAverage(epsilon=0.5, delta=1e-5, bounds=(-1.0, 2.0), d=3)
    n = 40_000
    out = m(DATA, n, np.random.default_rng(9))
    target = clipped_sum(DATA, (-1.0, 2.0), 3)
    assert np.all(np.abs(out.mean(axis=0) - target) < 5 * m.sigma / math.sqrt(n))
    assert np.all(np.abs(out.std(axis=0) / m.sigma - 1.0) < 0.03)


def test_dpaverage_divides_by_the_released_count():
    m = DPAverage(epsilon=1.0, delta=1e-6, bounds=(-1.0, 2.0), d=3)
    sums = m(DATA, 100, np.random.default_rng(4))
    np.testing.assert_allclose(m(DATA, 100, np.random.default_rng(4), n_tilde=37.5), sums / 37.5)
    counts = np.linspace(30.0, 50.0, 100)                       # one noisy count per run
    np.testing.assert_allclose(m(DATA, 100, np.random.default_rng(4), n_tilde=counts), sums / counts[:, None])
    np.testing.assert_allclose(m(DATA, 100, np.random.default_rng(4), n_tilde=-2.0), sums / -2.0)
    for bad in (0.0, math.nan, math.inf, np.ones(3), np.ones((100, 1))):
        with pytest.raises(ValueError, match="n_tilde"):
            m(DATA, 100, np.random.default_rng(4), n_tilde=bad)


def test_dpaverage_clip_flag():
    data = np.vstack((DATA, [[50.0, -50.0, 0.0]]))
    clipped = DPAverage(epsilon=1.0, delta=1e-6, bounds=(-1.0, 2.0), d=3)
    raw = DPAverage(epsilon=1.0, delta=1e-6, bounds=(-1.0, 2.0), d=3, clip=False)
    np.testing.assert_allclose(clipped.protected_sum(data), clipped_sum(data, (-1.0, 2.0), 3))
    np.testing.assert_allclose(raw.protected_sum(data), data.sum(axis=0))
    # the far point moves the unclipped sum by much more than the declared sensitivity
    assert np.linalg.norm(raw.protected_sum(data) - raw.protected_sum(DATA)) > 10 * raw.sensitivity
    # d = 1 accepts scalar records; an empty cluster has sum 0
    one = DPAverage(epsilon=1.0, delta=1e-6, bounds=(0.0, 1.0), d=1)
    assert one([0.2, 0.4], 5, np.random.default_rng(0)).shape == (5, 1)
    np.testing.assert_array_equal(one.protected_sum(np.empty(0)), [0.0])


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(epsilon=-1.0), "epsilon"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.5), "delta"),
        (dict(bounds=(2.0, 2.0)), "bounds"),
        (dict(d=0), "d must"),
        (dict(relation="bounded"), "relation"),
        (dict(clip=1), "clip"),
    ],
)
def test_dpaverage_rejects_bad_parameters(kwargs, msg):
    args = dict(epsilon=1.0, delta=1e-6, bounds=(0.0, 1.0), d=2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=msg):
        DPAverage(**args)


def test_dpaverage_rejects_bad_data():
    m = DPAverage(epsilon=1.0, delta=1e-6, bounds=(0.0, 1.0), d=2)
    with pytest.raises(ValueError, match="shape"):
        m(np.ones((3, 3)), 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="finite"):
        m(np.array([[0.1, math.nan]]), 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n must"):
        m(np.ones((3, 2)), -1, np.random.default_rng(0))
