"""Tests of the mechanisms of ``audits/public.toml``: DP-Sniper's benchmarks that the catalogue lacked (RAPPOR,
one-time RAPPOR, LaplaceParallel, SVT34Parallel, SVT2, NumericalSVT, PrefixSum) and dp-recorder's bug patterns
(``len(data)`` leak, ``np.unique`` domain leak, zero sensitivity) with their correct twins.

Every statistical assertion uses a FIXED seed.  Goodness-of-fit tests assert ``p > 1e-4`` (false-failure level
1e-4 per test if the sampler had exactly the documented law); moment tests allow 6 standard errors (two-sided
normal tail 2e-9).  With fixed seeds every outcome is deterministic.  No retries.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import integrate, stats

from distribution_checks import (chisquare_p, legacy_numerical_svt, legacy_svt_dwork_roth, pattern_index,
                                 rows_as_codes, svt_pattern_log_probability, two_sample_chisquare_p, valid_patterns)
from algorithms.broken.observed_domain import CategoryCountsObservedDomain
from algorithms.broken.size_leak import MeanLeaksSize
from algorithms.broken.svt34_parallel import SVT34Parallel
from algorithms.broken.svt_outputs_value import SVTOutputsValue
from algorithms.broken.svt_unscaled_query_noise import SVTUnscaledQueryNoise
from algorithms.broken.zero_sensitivity import BoundedSumZeroSensitivity
from algorithms.classic import (
    CategoryCounts,
    LaplaceParallel,
    NoisyMean,
    NumericalSVT,
    OneTimeRappor,
    PrefixSum,
    Rappor,
    SparseVectorDworkRoth,
)
from algorithms.classic.noisy_mean import mean_of
from algorithms.classic.rappor import bloom_bits, murmur3_32
from algorithms.noise import NoiseSource
from dpverify.suites import build_mechanism, build_pairs, load_suite

P_MIN = 1e-4  # false-failure level of each goodness-of-fit assertion
Z = 6.0  # standard errors allowed in moment checks
ONES10 = np.ones(10)
DATA = np.array([0.5, 0.2, 0.9])
PUBLIC = Path(__file__).resolve().parents[1] / "audits" / "public.toml"


# ---------------------------------------------------------------------------------------------
# contract: shape, dtype, determinism, n = 0, frozen
# ---------------------------------------------------------------------------------------------

CASES: list[tuple[str, Any, Any, tuple[int, ...], type]] = [
    ("rappor", Rappor(), 1, (20,), np.int8),
    ("one-time-rappor", OneTimeRappor(), 2, (20,), np.int8),
    ("laplace-parallel", LaplaceParallel(), 1.0, (20,), np.float64),
    ("svt2", SparseVectorDworkRoth(0.1, 1.0, 1), ONES10, (10,), np.int8),
    ("svt2-c2", SparseVectorDworkRoth(0.1, 1.0, 2), ONES10, (10,), np.int8),
    ("numerical-svt", NumericalSVT(0.1, 1.0), ONES10, (20,), np.float64),
    ("svt34-parallel", SVT34Parallel(0.1, 1.0), ONES10, (30,), np.float64),
    ("prefix-sum", PrefixSum(0.1), ONES10, (10,), np.float64),
    ("noisy-mean", NoisyMean(0.1, 0.0, 1.0), DATA, (2,), np.float64),
    ("mean-leaks-size", MeanLeaksSize(0.1, 0.0, 1.0), DATA, (2,), np.float64),
    ("category-counts", CategoryCounts(0.1, 3), np.array([0, 1, 0]), (6,), np.float64),
    ("observed-domain", CategoryCountsObservedDomain(0.1, 3), np.array([0, 1, 0]), (6,), np.float64),
]


@pytest.mark.parametrize(("name", "mech", "x", "row_shape", "dtype"), CASES, ids=[c[0] for c in CASES])
def test_contract(name: str, mech: Any, x: Any, row_shape: tuple[int, ...], dtype: type) -> None:
    out = mech(x, 1000, np.random.default_rng(5))
    assert out.shape == (1000,) + row_shape and out.dtype == dtype
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(out, mech(x, 1000, np.random.default_rng(5)))  # same seed, same outputs
    assert not np.array_equal(out, mech(x, 1000, np.random.default_rng(6)))  # another seed, other outputs
    assert mech(x, 0, np.random.default_rng(5)).shape == (0,) + row_shape
    via_release = mech.release(x, 1000, NoiseSource(np.random.default_rng(5))) if hasattr(mech, "release") else out
    np.testing.assert_array_equal(out, via_release)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(mech, dataclasses.fields(mech)[0].name, 1.0)


def test_zero_sensitivity_contract() -> None:
    mech = BoundedSumZeroSensitivity(0.1, 1.0, 1.0)
    out = mech(np.ones(5), 100, np.random.default_rng(0))
    assert out.shape == (100,) and out.dtype == np.float64 and np.all(out == 5.0)  # the exact count, no noise
    noisy = BoundedSumZeroSensitivity(0.1, 0.0, 1.0)(np.ones(5), 100, np.random.default_rng(0))
    assert len(np.unique(noisy)) == 100


@pytest.mark.parametrize(("factory", "message"), [
    (lambda: Rappor(f=1.0), "f must lie in"),
    (lambda: Rappor(p=0.6, q=0.4), "q > p"),
    (lambda: OneTimeRappor(n_hashes=0), "n_hashes"),
    (lambda: LaplaceParallel(epsilon_each=0.0), "epsilon_each"),
    (lambda: LaplaceParallel(copies=0), "copies"),
    (lambda: SparseVectorDworkRoth(0.1, 1.0, cutoff=0), "cutoff"),
    (lambda: NumericalSVT(0.1, math.nan), "threshold"),
    (lambda: SVT34Parallel(-0.1, 1.0), "epsilon_each"),
    (lambda: PrefixSum(0.0), "epsilon"),
    (lambda: NoisyMean(0.1, 1.0, 1.0), "lower must be < upper"),
    (lambda: MeanLeaksSize(0.1, 2.0, 1.0), "lower must be < upper"),
    (lambda: CategoryCounts(0.1, 0), "categories"),
    (lambda: BoundedSumZeroSensitivity(0.1, 2.0, 1.0), "lower must be <= upper"),
])
def test_bad_parameters(factory: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


@pytest.mark.parametrize(("mech", "x"), [
    (Rappor(), 1.5), (Rappor(), np.array([1, 2])), (PrefixSum(0.1), np.array([[1.0]])),
    (MeanLeaksSize(0.1, 0.0, 1.0), np.array([])), (CategoryCounts(0.1, 3), np.array([0, 3])),
    (CategoryCounts(0.1, 3), np.array([0.5])), (LaplaceParallel(), np.array([1.0, 2.0])),
])
def test_bad_inputs(mech: Any, x: Any) -> None:
    with pytest.raises(ValueError):
        mech(x, 10, np.random.default_rng(0))


# ---------------------------------------------------------------------------------------------
# RAPPOR
# ---------------------------------------------------------------------------------------------

def test_murmur3_reference_values() -> None:
    """Published MurmurHash3 x86_32 values (SMHasher / the mmh3 package's documented example)."""
    assert murmur3_32("foo") == -156908512  # mmh3.hash("foo")
    assert murmur3_32("", 0, signed=False) == 0
    assert murmur3_32("", 1, signed=False) == 0x514E28B7
    assert murmur3_32("The quick brown fox jumps over the lazy dog", 0, signed=False) == 0x2E4FF723


def test_bloom_filters_of_dpsniper_inputs() -> None:
    assert bloom_bits(1, 4, 20) == (3, 10, 13)
    assert bloom_bits(0, 4, 20) == (0, 11, 18)
    assert bloom_bits(2, 4, 20) == (7, 10, 11, 19)
    assert set(bloom_bits(6, 4, 20)).isdisjoint(bloom_bits(10, 4, 20))
    assert len(bloom_bits(6, 4, 20)) == len(bloom_bits(10, 4, 20)) == 4


def test_rappor_epsilons_closed_form() -> None:
    r, o = Rappor(), OneTimeRappor()
    assert r.report_probabilities() == pytest.approx((0.5125, 0.4875), abs=1e-15)
    assert r.epsilon == pytest.approx(8 * math.log(0.5125 / 0.4875), rel=1e-14)
    assert o.epsilon == pytest.approx(8 * math.log(1.05 / 0.95), rel=1e-14)
    assert r.pair_epsilon(1, 0) == pytest.approx(6 * math.log(0.5125 / 0.4875), rel=1e-14)
    assert r.pair_epsilon(1, 2) == pytest.approx(5 * math.log(0.5125 / 0.4875), rel=1e-14)
    assert o.pair_epsilon(1, 0) == pytest.approx(6 * math.log(1.05 / 0.95), rel=1e-14)
    assert r.pair_epsilon(6, 10) == pytest.approx(r.true_epsilon(), rel=1e-14)
    # no pair of DP-Sniper's input domain [-10, 10] exceeds the claim
    assert max(r.pair_epsilon(a, b) for a, b in itertools.combinations(range(-10, 11), 2)) <= r.epsilon + 1e-12
    # an asymmetric IRR (q* ≠ 1 − p*): the two kinds of differing bits cost differently
    a = Rappor(f=0.5, p=0.2, q=0.9)
    q1, q0 = a.report_probabilities()
    up, down = math.log(q1 / q0), math.log((1 - q0) / (1 - q1))
    assert up != pytest.approx(down)
    assert a.pair_epsilon(1, 2) == pytest.approx(max(2 * up + 3 * down, 3 * up + 2 * down), rel=1e-14)


@pytest.mark.parametrize("mech", [Rappor(), OneTimeRappor(), Rappor(f=0.5, p=0.2, q=0.9)], ids=["rappor", "otr", "asym"])
def test_rappor_bit_frequencies(mech: Any) -> None:
    """Each reported bit is Bernoulli(q1) on the filter's bits, Bernoulli(q0) elsewhere (n = 200k, 6 s.e.)."""
    n = 200_000
    out = mech(2, n, np.random.default_rng(11))
    q1, q0 = mech.report_probabilities()
    expected = np.where(mech.bloom_filter(2) == 1, q1, q0)
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(out.mean(axis=0) - expected) < Z * se)


def test_rappor_small_filter_law_and_normalisation() -> None:
    """On a 6-bit filter the 64 outputs: exp(log_density) sums to 1 and matches the sampled frequencies."""
    mech = Rappor(n_hashes=2, filter_size=6)
    outputs = np.array(list(itertools.product([0, 1], repeat=6)), dtype=np.int8)
    probs = np.exp(mech.log_density(3, outputs))
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    sample = mech(3, 100_000, np.random.default_rng(2))
    codes = sample.astype(np.int64) @ (2 ** np.arange(5, -1, -1))
    assert chisquare_p(codes, np.arange(64), probs) > P_MIN
    assert np.all(mech.log_density(3, np.array([[2, 0, 0, 0, 0, 0]])) == -np.inf)


def legacy_rappor(mech: Any, x: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """RAPPOR as it was sampled before the sampler drew the composed per-bit law: the permanent response (1 w.p.
    f/2, 0 w.p. f/2, else the filter's bit), then for Rappor the instantaneous one (1 w.p. q if set, p if not)."""
    bloom = mech.bloom_filter(x).astype(bool)
    f = float(mech.f)
    u = rng.random((n, bloom.shape[0]))
    permanent = np.where(u < 0.5 * f, True, np.where(u < f, False, bloom))
    if isinstance(mech, OneTimeRappor):
        return permanent.astype(np.int8)
    return (rng.random(permanent.shape) < np.where(permanent, float(mech.q), float(mech.p))).astype(np.int8)


@pytest.mark.parametrize("mech", [Rappor(), OneTimeRappor(), Rappor(f=0.5, p=0.2, q=0.9)], ids=["rappor", "otr", "asym"])
def test_rappor_sampler_against_the_two_stage_sampler(mech: Any) -> None:
    """The per-bit sampler against the permanent-then-instantaneous sampler at DP-Sniper's parameters (and an
    asymmetric one): two-sample chi-square on the joint codes of the bits where the filters of 1 and 0 differ (the
    bits DP-Sniper's pairs test) and of four bits outside both filters; fixed seeds, level P_MIN each."""
    n = 200_000
    out = mech(1, n, np.random.default_rng(71))
    old = legacy_rappor(mech, 1, n, np.random.default_rng(72))
    assert out.dtype == old.dtype == np.int8 and out.shape == old.shape
    differ = sorted(set(mech.bits(1)) ^ set(mech.bits(0)))
    outside = sorted(set(range(int(mech.filter_size))) - set(mech.bits(1)) - set(mech.bits(0)))[:4]
    for cols in (differ, outside):
        weights = 2 ** np.arange(len(cols))
        assert two_sample_chisquare_p(out[:, cols] @ weights, old[:, cols] @ weights) > P_MIN


@pytest.mark.parametrize(("mech", "x0", "x1"), [
    (Rappor(), 1, 0), (Rappor(), 1, 2), (Rappor(), 6, 10), (OneTimeRappor(), 1, 0), (OneTimeRappor(), 2, 1),
    (Rappor(f=0.5, p=0.2, q=0.9), 1, 2),
])
def test_rappor_true_epsilon_against_log_density(mech: Any, x0: int, x1: int) -> None:
    """The loss depends only on the differing bits: enumerate them (others fixed at 0) in both directions."""
    diff = sorted(set(mech.bits(x0)) ^ set(mech.bits(x1)))
    outs = np.zeros((2 ** len(diff), int(mech.filter_size)), dtype=np.int8)
    outs[:, diff] = np.array(list(itertools.product([0, 1], repeat=len(diff))), dtype=np.int8)
    loss = mech.log_density(x0, outs) - mech.log_density(x1, outs)
    assert max(loss.max(), -loss.min()) == pytest.approx(mech.pair_epsilon(x0, x1), rel=1e-12)
    sample = mech(x0, 20_000, np.random.default_rng(4))
    assert np.abs(mech.log_density(x0, sample) - mech.log_density(x1, sample)).max() <= mech.pair_epsilon(x0, x1) + 1e-12


# ---------------------------------------------------------------------------------------------
# LaplaceParallel, PrefixSum, NoisyMean: closed-form laws and the loss against log_density
# ---------------------------------------------------------------------------------------------

def test_laplace_parallel_law() -> None:
    mech = LaplaceParallel()
    n, b = 100_000, 200.0
    out = mech(1.0, n, np.random.default_rng(3))
    noise = (out - 1.0).ravel()
    assert abs(noise.mean()) < Z * math.sqrt(2 * b * b / noise.size)
    assert abs(noise.var() / (2 * b * b) - 1) < Z * math.sqrt(5 / noise.size)  # Laplace kurtosis 6
    assert abs(np.corrcoef(out[:, 0], out[:, 1])[0, 1]) < Z / math.sqrt(n)  # independent copies
    assert stats.kstest(out[:, 7] - 1.0, "laplace", args=(0, b)).pvalue > P_MIN


def test_prefix_sum_law() -> None:
    mech = PrefixSum(0.1)
    x = np.arange(10.0)
    out = mech(x, 50_000, np.random.default_rng(8))
    steps = np.diff(out, axis=1, prepend=0.0) - x
    assert stats.kstest(steps.ravel(), "laplace", args=(0, 10.0)).pvalue > P_MIN
    assert np.all(np.abs(np.corrcoef(steps[:, :4].T) - np.eye(4)) < Z / math.sqrt(50_000))
    # the densities are normalised: ∫ exp(log_density) over the first coordinate of a 1-query PrefixSum
    one = PrefixSum(0.5)
    density = lambda s: math.exp(one.log_density(np.array([2.0]), np.array([[s]]))[0])  # noqa: E731
    val = integrate.quad(density, -np.inf, 2.0)[0] + integrate.quad(density, 2.0, np.inf)[0]
    assert val == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("n", [1, 16_384, 40_000])
def test_prefix_sum_is_the_cumsum_of_its_noisy_answers(n: int) -> None:
    """The blockwise running sums are np.cumsum of the noisy answers (the same additions in the same order: equal
    bit for bit), on fewer rows than a block, exactly one block and several with a partial last one."""
    from algorithms.noise import laplace_noise
    x = np.array([0.5, -3.0, 2.0, 7.25, 1.0])
    out = PrefixSum(0.1)(x, n, np.random.default_rng(12))
    noisy = x + laplace_noise(np.random.default_rng(12), 10.0, (n, 5))
    np.testing.assert_array_equal(out, np.cumsum(noisy, axis=1))


def _loss_check(mech: Any, x0: Any, x1: Any, extreme: np.ndarray, expected: float, seed: int) -> None:
    """Sampled losses never exceed ``expected`` (in absolute value); the constructed ``extreme`` output attains it."""
    sample = mech(x0, 20_000, np.random.default_rng(seed))
    loss = mech.log_density(x0, sample) - mech.log_density(x1, sample)
    assert np.abs(loss).max() <= expected + 1e-9
    at = mech.log_density(x0, extreme) - mech.log_density(x1, extreme)
    assert at[0] == pytest.approx(expected, abs=1e-9)


def test_true_epsilon_against_log_density_laplace_parallel() -> None:
    mech = LaplaceParallel()
    assert mech.pair_epsilon(1.0, 0.0) == pytest.approx(0.1) == pytest.approx(mech.true_epsilon())
    _loss_check(mech, 1.0, 0.0, np.full((1, 20), 5000.0), 0.1, 1)


def test_true_epsilon_against_log_density_prefix_sum() -> None:
    mech = PrefixSum(0.1)
    x1 = 2 * ONES10  # DP-Sniper's all-above pattern: ℓ∞ distance 1, ℓ1 distance 10
    assert mech.pair_epsilon(ONES10, x1) == pytest.approx(1.0)
    _loss_check(mech, ONES10, x1, np.cumsum(np.full((1, 10), -1000.0), axis=1), 1.0, 2)
    e0 = ONES10.copy()
    e0[3] = 0.0  # one query differs (ShadowDP's ONE_DIFFER): ε
    _loss_check(mech, ONES10, e0, np.cumsum(np.full((1, 10), 1000.0), axis=1), 0.1, 3)


def test_noisy_mean_law_and_true_epsilon() -> None:
    mech = NoisyMean(0.1, 0.0, 1.0)
    out = mech(DATA, 100_000, np.random.default_rng(9))
    assert stats.kstest(out[:, 0] - 1.6, "laplace", args=(0, 20.0)).pvalue > P_MIN
    assert stats.kstest(out[:, 1] - 3.0, "laplace", args=(0, 20.0)).pvalue > P_MIN
    assert np.all(np.isnan(mean_of(np.array([[1.0, -2.0]]))))
    bigger = np.append(DATA, 1.0)  # add a record at the bound B = 1: sum +1 and count +1
    assert mech.true_epsilon() == 0.1
    _loss_check(mech, DATA, bigger, np.array([[-1000.0, -1000.0]]), 0.1, 5)


# ---------------------------------------------------------------------------------------------
# sparse vector variants
# ---------------------------------------------------------------------------------------------

def test_svt2_with_one_cutoff_has_the_law_of_lyu_algorithm_1() -> None:
    """c = 1: ρ ~ Lap(2/ε), ν ~ Lap(4/ε), the redraw never used: the pattern pmf of Algorithm 1 (chi-square)."""
    q = np.array([0.0, 1.0, 2.0, 1.0])
    mech = SparseVectorDworkRoth(1.0, 1.0, 1)
    out = mech(q, 100_000, np.random.default_rng(21))
    patterns = valid_patterns(4, 1)
    probs = np.exp([svt_pattern_log_probability(p, q, 1.0, 2.0, 4.0) for p in patterns])
    assert probs.sum() == pytest.approx(1.0, abs=1e-7)
    assert chisquare_p(pattern_index(out, patterns), np.arange(len(patterns)), probs / probs.sum()) > P_MIN


def test_svt2_redraws_the_threshold_after_each_above() -> None:
    """c = 2, q_0 = q_1 = T: each answer is ⊤ with probability P(ν ≥ ρ) = 1/2 and, the threshold being redrawn,
    the first two are independent: P(⊤, ⊤) = 1/4.  With one threshold it would be E[S_ν(ρ)²] (computed, > 0.29)."""
    mech = SparseVectorDworkRoth(0.1, 1.0, 2)
    n = 200_000
    out = mech(ONES10, n, np.random.default_rng(22))
    both = np.mean((out[:, 0] == 1) & (out[:, 1] == 1))
    assert abs(both - 0.25) < Z * math.sqrt(0.25 * 0.75 / n)
    b_rho, b_nu = mech.threshold_scale, mech.query_scale
    shared = sum(integrate.quad(lambda r: stats.laplace.pdf(r, scale=b_rho) * stats.laplace.sf(r, scale=b_nu) ** 2,
                                *limits)[0] for limits in ((-np.inf, 0.0), (0.0, np.inf)))
    assert shared > 0.29  # the same frequency test rejects the un-redrawn variant by > 40 s.e.
    assert np.all((out == 1).sum(axis=1) <= 2)


def test_numerical_svt_releases_fresh_noise() -> None:
    """Given ⊤, the released value is q_i + Lap(3c/ε), independent of the comparison (KS), unlike Lyu Alg. 3
    whose released q_i + ν_i is conditioned on ν_i ≥ T + ρ − q_i (its conditional mean is far above q_i)."""
    mech = NumericalSVT(0.1, 1.0, cutoff=2)
    n, k = 200_000, 10
    out = mech(ONES10, n, np.random.default_rng(23))
    codes, values = out[:, :k], out[:, k:]
    top = codes[:, 0] == 1
    assert abs(top.mean() - 0.5) < Z * math.sqrt(0.25 / n)  # P(ν2 ≥ η1) = 1/2 at q = T
    assert stats.kstest(values[top, 0] - 1.0, "laplace", args=(0, mech.value_scale)).pvalue > P_MIN
    assert np.all(values[codes != 1] == 0.0)
    assert np.all((codes == 1).sum(axis=1) <= 2)
    after = np.cumsum(codes == 1, axis=1) - (codes == 1) >= 2  # answered after the second ⊤
    assert np.all(codes[after] == -1)
    broken = SVTOutputsValue(0.1, threshold=1.0, cutoff=2)(ONES10, 50_000, np.random.default_rng(23))
    assert broken[broken[:, 0] == 1, k].mean() - 1.0 > 10.0


@pytest.mark.parametrize("cutoff", [1, 2])
def test_svt2_law_at_dpsniper_parameters(cutoff: int) -> None:
    """DP-Sniper's SVT2 (ε = 0.1, T = 1, 10 queries; c = 1, and c = 2), query noise drawn only for the runs still
    answering, Laplace as exponential × sign: against the legacy sampler
    (:func:`distribution_checks.legacy_svt_dwork_roth`, two-sample chi-square on the patterns) and, for c = 1,
    against the exact pattern law of Lyu Algorithm 1 (chi-square); fixed seeds, level P_MIN each."""
    q = np.array([1.0] * 5 + [0.0] * 5)
    mech = SparseVectorDworkRoth(0.1, 1.0, cutoff)
    n = 200_000
    out = mech(q, n, np.random.default_rng(51 + cutoff))
    legacy = legacy_svt_dwork_roth(mech, q, n, np.random.default_rng(53 + cutoff))
    assert out.dtype == legacy.dtype == np.int8 and out.shape == legacy.shape
    assert two_sample_chisquare_p(rows_as_codes(out), rows_as_codes(legacy)) > P_MIN
    if cutoff == 1:
        patterns = valid_patterns(10, 1)
        probs = np.exp([svt_pattern_log_probability(p, q, 1.0, mech.threshold_scale, mech.query_scale)
                        for p in patterns])
        assert chisquare_p(pattern_index(out, patterns), np.arange(len(patterns)), probs / probs.sum()) > P_MIN


def test_numerical_svt_law_at_dpsniper_parameters() -> None:
    """DP-Sniper's NumericalSVT (ε = 0.1, T = 1, c = 2, 10 queries), comparison noise drawn only for the runs still
    answering and release noise only for the ⊤ answers: against the legacy sampler
    (:func:`distribution_checks.legacy_numerical_svt`): two-sample chi-square on the patterns, and at every query
    the released values given ⊤ (two-sample KS) and against q_i + Lap(3c/ε) (KS); fixed seeds, level P_MIN each."""
    q = np.array([1.0] * 5 + [0.0] * 5)
    mech = NumericalSVT(0.1, 1.0, cutoff=2)
    n, k = 200_000, 10
    out = mech(q, n, np.random.default_rng(57))
    legacy = legacy_numerical_svt(mech, q, n, np.random.default_rng(58))
    assert out.dtype == legacy.dtype == np.float64 and out.shape == legacy.shape
    assert two_sample_chisquare_p(rows_as_codes(out[:, :k]), rows_as_codes(legacy[:, :k])) > P_MIN
    assert np.all(out[:, k:][out[:, :k] != 1] == 0.0)
    for i in (0, 4, 9):
        new_v, old_v = out[out[:, i] == 1, k + i], legacy[legacy[:, i] == 1, k + i]
        assert stats.ks_2samp(new_v, old_v).pvalue > P_MIN
        assert stats.kstest(new_v - q[i], "laplace", args=(0, mech.value_scale)).pvalue > P_MIN


def test_svt34_parallel_is_the_two_parts_side_by_side() -> None:
    mech = SVT34Parallel(0.1, 1.0, cutoff=2)
    out = mech(ONES10, 500, np.random.default_rng(31))
    g = np.random.default_rng(31)
    part3 = SVTOutputsValue(0.1, threshold=1.0, cutoff=2)(ONES10, 500, g)
    part4 = SVTUnscaledQueryNoise(0.1, threshold=1.0, cutoff=2)(ONES10, 500, g)
    np.testing.assert_array_equal(out, np.concatenate([part3, part4.astype(np.float64)], axis=1))
    assert mech.epsilon == pytest.approx(0.2) and mech.true_epsilon() == math.inf

    class Names(NoiseSource):
        def __init__(self, rng: np.random.Generator) -> None:
            super().__init__(rng)
            self.names: list[str] = []

        def add(self, step: str, value: Any, draw: Any, **kwargs: Any) -> Any:
            self.names.append(step)
            return super().add(step, value, draw, **kwargs)

    rec = Names(np.random.default_rng(31))
    np.testing.assert_array_equal(mech.release(ONES10, 500, rec), out)
    assert rec.names[0] == "m0/threshold" and "m1/threshold" in rec.names and "m1/query[0]" in rec.names


# ---------------------------------------------------------------------------------------------
# dp-recorder patterns: len(data) leak, np.unique domain leak, zero sensitivity
# ---------------------------------------------------------------------------------------------

def test_mean_leaks_size_law_and_infinite_loss() -> None:
    mech = MeanLeaksSize(0.1, 0.0, 1.0)
    out = mech(DATA, 100_000, np.random.default_rng(41))
    assert np.all(out[:, 1] == 3.0)
    assert stats.kstest(out[:, 0] - 1.6 / 3, "laplace", args=(0, 10.0 / 3)).pvalue > P_MIN
    smaller = DATA[:2]
    assert np.all(mech.log_density(smaller, out) == -np.inf)  # impossible under the neighbour
    assert np.all(np.isfinite(mech.log_density(DATA, out)))
    assert mech.true_epsilon() == math.inf


def test_category_counts_and_observed_domain() -> None:
    x, x_added = np.array([0, 1, 0]), np.array([0, 1, 0, 2])
    good, bad = CategoryCounts(0.1, 3), CategoryCountsObservedDomain(0.1, 3)
    out_good = good(x, 50_000, np.random.default_rng(51))
    assert np.all(out_good[:, :3] == 1.0)
    assert stats.kstest(out_good[:, 3] - 2.0, "laplace", args=(0, 10.0)).pvalue > P_MIN
    assert stats.kstest(out_good[:, 5] - 0.0, "laplace", args=(0, 10.0)).pvalue > P_MIN
    _loss_check(good, x_added, x, np.array([[1, 1, 1, 0, 0, 1000.0]]), 0.1, 52)
    out_bad = bad(x, 50_000, np.random.default_rng(51))
    assert np.all(out_bad[:, :3] == [1.0, 1.0, 0.0]) and np.all(out_bad[:, 5] == 0.0)
    np.testing.assert_array_equal(out_bad[:, [0, 1, 3, 4]], out_good[:, [0, 1, 3, 4]])  # same noise, masked
    assert np.all(np.isfinite(bad.log_density(x, out_bad)))
    assert np.all(bad.log_density(x_added, out_bad) == -np.inf)  # the flag of category 2 gives the record away
    assert bad.true_epsilon() == math.inf and good.true_epsilon() == 0.1


def test_zero_sensitivity_true_epsilon() -> None:
    assert BoundedSumZeroSensitivity(0.1, 1.0, 1.0).true_epsilon() == math.inf
    assert BoundedSumZeroSensitivity(0.1, 1.0, 2.0).true_epsilon() == pytest.approx(0.2)
    assert BoundedSumZeroSensitivity(0.1, 0.0, 1.0).true_epsilon() == pytest.approx(0.1)
    assert BoundedSumZeroSensitivity(0.1, 0.0, 0.0).true_epsilon() == 0.0
    out = BoundedSumZeroSensitivity(0.1, 1.0, 2.0)(np.array([1.5, 3.0]), 100_000, np.random.default_rng(61))
    assert stats.kstest(out - 3.5, "laplace", args=(0, 10.0)).pvalue > P_MIN


@pytest.mark.parametrize("cls", [SVT34Parallel, MeanLeaksSize, CategoryCountsObservedDomain, BoundedSumZeroSensitivity])
def test_broken_modules_follow_the_catalogue_conventions(cls: type) -> None:
    import inspect

    doc = inspect.getmodule(cls).__doc__
    assert doc.startswith("BROKEN") and "True ε" in doc and "Replay:" in doc and "twin" in doc
    assert cls.BUG_KIND in {"calibration", "other"} and callable(getattr(cls, "release", None))


# ---------------------------------------------------------------------------------------------
# audits/public.toml: every entry builds, and its stated true ε is the mechanism's
# ---------------------------------------------------------------------------------------------

def test_public_suite_entries_match_their_mechanisms() -> None:
    suite = load_suite(PUBLIC)
    assert suite.name == "public" and not suite.default
    assert len(suite.entries) >= 16
    for entry in suite.entries:
        mech = build_mechanism(entry)
        pairs = build_pairs(entry, seed=0)
        assert pairs, entry.id
        if hasattr(mech, "epsilon"):
            assert entry.claim.epsilon == pytest.approx(mech.epsilon, rel=1e-12), entry.id
        if entry.true_epsilon is None:
            assert entry.expect == "pass", entry.id  # only proved upper bounds: controls
            continue
        if math.isinf(entry.true_epsilon):
            assert mech.true_epsilon() == math.inf, entry.id
        elif hasattr(mech, "pair_epsilon"):
            worst = max(max(mech.pair_epsilon(p.x0, p.x1), mech.pair_epsilon(p.x1, p.x0)) for p in pairs)
            assert worst == pytest.approx(entry.true_epsilon, rel=1e-12), entry.id
        else:
            assert mech.true_epsilon() == pytest.approx(entry.true_epsilon, rel=1e-12), entry.id
        assert (entry.true_epsilon > entry.claim.epsilon) == (entry.expect == "violation"), entry.id
        out = mech(pairs[0].x0, 8, np.random.default_rng(0))
        assert out.shape[0] == 8 and out.dtype.kind in "if", entry.id
