"""The hard suite's mechanisms (algorithms/hard) and audits/hard.toml: contract, laws, true ε.

Deterministic checks, plus sampler-vs-law comparisons at fixed seeds (tolerances of about 5 standard errors:
false-failure probability below 1e-5 each)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from algorithms.hard.gaussian_sigma import ScaledGaussian
from algorithms.hard.joint import LaplaceVector
from algorithms.hard.many_candidates import ExponentialMechanismOverCandidates
from algorithms.hard.mixed_noise import HaarHistogram, MixedLaplace, haar_matrix
from algorithms.hard.one_hot import OneHotRR
from algorithms.hard.rare_leak import ClippedLaplace, RareLeak, RoundedLaplace, TriggeredLeak
from algorithms.hard.running_sums import NoisyRunningCounts
from algorithms.hard.subsampling import SubsampledLaplaceCount
from dpverify.suites import load_suite

MECHS = [
    (RareLeak(1.0, 1e-3), 0.0), (TriggeredLeak(1.0, 1e-3), [1.5]), (RoundedLaplace(1.0), 0.0),
    (ClippedLaplace(1.0), 0.0), (LaplaceVector(0.5, 2.0), np.zeros(4)), (SubsampledLaplaceCount(2.0, 0.5), 10),
    (OneHotRR(1.0, 8), 3), (ExponentialMechanismOverCandidates(1.0), np.zeros(256)),
    (ScaledGaussian(1.0, 1e-5, 0.5), 0.0), (NoisyRunningCounts(0.5, 8.0), np.r_[1.0, np.zeros(15)]),
    (HaarHistogram(0.5, 8, 1.0), np.arange(8.0)),
]


@pytest.mark.parametrize("mech, x", MECHS)
def test_contract_rows_and_seed(mech, x):
    a = mech(x, 1000, np.random.default_rng(5))
    b = mech(x, 1000, np.random.default_rng(5))
    assert a.shape[0] == 1000 and np.array_equal(a, b) and a.dtype.kind in "biuf"


def test_rare_leak_rate():
    out = RareLeak(1.0, 1e-2)(0.5, 200_000, np.random.default_rng(0))
    k = int((out == 0.5).sum())
    assert abs(k - 2000) < 5 * math.sqrt(2000)
    assert not (TriggeredLeak(1.0, 0.5)([0.5], 10_000, np.random.default_rng(0)) == 0.5).any()


def test_continuous_laws_integrate_to_one():
    for mech, x in ((SubsampledLaplaceCount(2.0, 0.5), 10), (ScaledGaussian(1.0, 1e-5, 0.5), 0.0)):
        total, _ = integrate.quad(lambda o: math.exp(mech.log_density(x, np.array([o]))[0]), -60, 80, limit=400)
        assert total == pytest.approx(1.0, abs=1e-6)
    mech = OneHotRR(1.0, 4)
    outs = np.array([[int(b) for b in f"{i:04b}"] for i in range(16)])
    assert np.exp(mech.log_density(1, outs)).sum() == pytest.approx(1.0)
    assert ExponentialMechanismOverCandidates(1.0).pmf(np.arange(256.0)).sum() == pytest.approx(1.0)


def test_true_epsilon_matches_the_law():
    # subsampling: the loss tends to ln(1 + q(e^eps - 1)) in the upper tail of x' = x + 1
    m = SubsampledLaplaceCount(2.0, 0.5)
    far = np.array([60.0])
    assert (m.log_density(11, far) - m.log_density(10, far))[0] == pytest.approx(m.true_epsilon(), abs=1e-9)
    # one-hot: the largest loss over all outputs is 2 * eps_b
    r = OneHotRR(1.0, 4, per_bit_share=1.0)
    outs = np.array([[int(b) for b in f"{i:04b}"] for i in range(16)])
    assert np.max(r.log_density(0, outs) - r.log_density(1, outs)) == pytest.approx(r.true_epsilon())
    # joint: l1 distance over scale
    v = LaplaceVector(0.5, 1.0)
    assert v.epsilon_on(np.zeros(3), np.array([1.0, -1.0, 0.0])) == pytest.approx(1.0)
    # Gaussian: sigma 50 % too small gives a delta far above the claim
    assert ScaledGaussian(1.0, 1e-5, 0.5).true_delta(1.0) > 1e-3 > 1e-5 >= ScaledGaussian(1.0, 1e-5, 1.0).true_delta(1.0) * 0.999


def test_hard_suite_states_truth_and_controls():
    suite = load_suite("audits/hard.toml")
    assert len(suite.entries) >= 20 and not suite.default
    expects = {e.expect for e in suite.entries}
    assert expects == {"pass", "violation"}
    for e in suite.entries:
        if e.claim.delta == 0:
            assert e.true_epsilon is not None, e.id
            assert (e.true_epsilon > e.claim.epsilon) == (e.expect == "violation"), e.id


def test_running_counts_law_and_true_epsilon():
    """The noise is centred on the running counts (each column's mean within 5 standard errors at 100 000 draws);
    below every count the loss of one more event at the start is its largest, 16 counts / scale 16 = 1 = the true ε
    of the pair; a stream that is not 1-D is refused."""
    m = NoisyRunningCounts(0.5, 8.0)
    x0, x1 = np.zeros(16), np.r_[1.0, np.zeros(15)]
    assert m.scale == 16.0 and m.epsilon_on(x0, x1) == pytest.approx(1.0)
    far = np.full((1, 16), -100.0)
    assert (m.log_density(x0, far) - m.log_density(x1, far))[0] == pytest.approx(1.0)
    out = m(np.arange(16.0), 100_000, np.random.default_rng(8))
    se = math.sqrt(2.0) * m.scale / math.sqrt(100_000)
    assert np.all(np.abs(out.mean(axis=0) - np.cumsum(np.arange(16.0))) < 5 * se)
    with pytest.raises(ValueError, match="1-D"):
        m(np.zeros((2, 2)), 10, np.random.default_rng(0))


@pytest.mark.parametrize("bins", [1, 2, 4, 8, 16, 32])
def test_haar_basis_and_sensitivity(bins: int) -> None:
    """The Haar matrix is orthonormal; one record more moves the coefficients by 2^{-l/2} + Σ_s 2^{-s/2} in ℓ1 from
    every bin; the misuse's true ε is that norm times ε, the correct calibration's ε."""
    h = haar_matrix(bins)
    assert h @ h.T == pytest.approx(np.eye(bins), abs=1e-12)
    levels = int(math.log2(bins))
    norm = 2 ** (-levels / 2) + sum(2 ** (-s / 2) for s in range(1, levels + 1))
    assert np.abs(h).sum(axis=0) == pytest.approx(np.full(bins, norm))
    x0 = np.arange(float(bins))
    x1 = x0.copy()
    x1[bins // 3] += 1
    assert HaarHistogram(0.5, bins, 1.0).epsilon_on(x0, x1) == pytest.approx(0.5 * norm)
    assert HaarHistogram(0.5, bins).epsilon_on(x0, x1) == pytest.approx(0.5)


def test_haar_release_law_and_bad_input() -> None:
    """The release is the histogram plus Hᵀ·Lap (each bin's mean within 5 standard errors at 100 000 draws); its
    density is the Laplace density of the coefficients' noise; the largest loss, far out along the moved
    coefficients' signs, is the true ε; bad histograms and matrices are refused by name."""
    m = HaarHistogram(0.5, 8, 1.0)
    x0 = np.arange(8.0)
    out = m(x0, 100_000, np.random.default_rng(3))
    se = math.sqrt(2.0) * m.scale / math.sqrt(100_000)
    assert np.all(np.abs(out.mean(axis=0) - x0) < 5 * se)
    x1 = x0.copy()
    x1[2] += 1
    h = haar_matrix(8)
    far = (h @ x1 + 100.0 * np.sign(h @ (x1 - x0))) @ h            # deep in the moved coefficients' tails
    loss = (m.log_density(x1, far[None]) - m.log_density(x0, far[None]))[0]
    assert loss == pytest.approx(m.epsilon_on(x0, x1))
    with pytest.raises(ValueError, match="power of 2"):
        HaarHistogram(0.5, 12)
    with pytest.raises(ValueError, match="8 finite counts"):
        m(np.zeros(7), 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="invertible"):
        MixedLaplace(np.ones((3, 3)), 1.0)
    with pytest.raises(ValueError, match="square"):
        MixedLaplace(np.ones((3, 2)), 1.0)
