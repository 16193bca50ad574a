"""Tests of the deliberately broken mechanisms in :mod:`algorithms.broken`.

They check that each twin samples exactly the documented (wrong) law and that the documented true
ε / δ(ε) agrees with an independent numerical computation. Every statistical test uses a FIXED
seed and asserts ``p > 1e-4``: under the documented law each assertion fails for at most a fraction
1e-4 of seeds (the false-failure level per test). No retries.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.optimize import brentq
from scipy.special import logsumexp

from distribution_checks import (chisquare_p, ks_p, laplace_logcdf, legacy_svt, pattern_index, rows_as_codes,
                                 svt_pattern_log_probability, two_sample_chisquare_p, valid_patterns)
from algorithms.broken import (
    BinaryMechanismMissingLevel,
    BudgetSpentTwice,
    ExponentialMechanismNoHalf,
    FloatingPointLaplace,
    GaussianClassicLargeEpsilon,
    GeometricIgnoresSensitivity,
    HistogramScaleEpsilon,
    LaplaceHalfNoise,
    MeanDataDependentScale,
    MeansDataDependentScale,
    NoisyMaxReturnsValue,
    NoNoise,
    RandomizedResponseBinaryFormula,
    SumMissingClipping,
    SumNaNThroughClipping,
    SVTNoCutoff,
    SVTNoQueryNoise,
    SVTOutputsValue,
    SVTUnscaledQueryNoise,
    TruncatedGeometricByRejection,
)
from algorithms.classic import ClippedSum
from dpverify.testing import check_mechanism

P_MIN = 1e-4  # false-failure level of each goodness-of-fit assertion


# ---------------------------------------------------------------------------------------------
# contract
# ---------------------------------------------------------------------------------------------

CASES: list[tuple[str, Any, Any, tuple[int, ...], type]] = [
    ("laplace-half", LaplaceHalfNoise(0.5), np.array([1.0, 2.0]), (2,), np.float64),
    ("no-noise", NoNoise(0.5), 2.0, (), np.float64),
    ("rnm-value", NoisyMaxReturnsValue(0.5), np.array([0.0, 1.0, 2.0]), (), np.float64),
    ("rnm-value-exp", NoisyMaxReturnsValue(0.5, noise="exponential"), np.array([0.0, 1.0]), (), np.float64),
    ("hist-eps", HistogramScaleEpsilon(0.5), np.array([1.0, 0.0, 2.0]), (3,), np.float64),
    ("svt3", SVTOutputsValue(1.0, threshold=1.0, cutoff=2), np.array([0.0, 2.0, 1.0]), (6,), np.float64),
    ("svt4", SVTUnscaledQueryNoise(1.0, threshold=1.0), np.array([0.0, 2.0, 1.0]), (3,), np.int8),
    ("svt5", SVTNoQueryNoise(1.0, threshold=1.0), np.array([0.0, 2.0, 1.0]), (3,), np.int8),
    ("svt6", SVTNoCutoff(1.0, threshold=1.0), np.array([0.0, 2.0, 1.0]), (3,), np.int8),
    ("em-no-half", ExponentialMechanismNoHalf(1.0), np.array([0.0, 1.0, 2.0]), (), np.int64),
    ("rr-binary", RandomizedResponseBinaryFormula(1.0, k=4), 1, (), np.int64),
    ("gauss-classic", GaussianClassicLargeEpsilon(10.0, 0.1), np.array([0.0, 1.0]), (2,), np.float64),
    ("no-clip", SumMissingClipping(1.0, 0.0, 1.0), np.array([0.5, 7.0]), (), np.float64),
    ("nan-clip", SumNaNThroughClipping(1.0, 0.0, 1.0), np.array([0.5, 7.0]), (), np.float64),
    ("twice", BudgetSpentTwice(1.0), 3.0, (2,), np.float64),
    ("mean-scale", MeanDataDependentScale(1.0, 0.0, 1.0), np.array([0.5, 0.25, 1.0]), (), np.float64),
    ("fp-laplace", FloatingPointLaplace(0.1), np.array([0.0, 1.0]), (2,), np.float64),
    ("geom-sens", GeometricIgnoresSensitivity(0.5), np.array([3, 4]), (2,), np.int64),
    ("tg-reject", TruncatedGeometricByRejection(0.5, upper=5), 0, (), np.int64),
    ("binary-missing-level", BinaryMechanismMissingLevel(16, 1.0), np.zeros(16), (16,), np.float64),
]


@pytest.mark.parametrize(("name", "mechanism", "x", "tail", "dtype"), CASES, ids=[c[0] for c in CASES])
def test_contract(name: str, mechanism: Any, x: Any, tail: tuple[int, ...], dtype: type) -> None:
    # the sampling contract (shape, n = 0, draws from rng only -- NoNoise is deterministic, which the check
    # accepts -- pickle round trip): dpverify's battery
    check_mechanism(mechanism, [(x, x)], epsilon=1.0, checks=["shape", "empty", "rng", "pickle"]).raise_for_failures()
    out = mechanism(x, 7, np.random.default_rng(1))
    assert out.shape == (7,) + tail and out.dtype == dtype
    assert pickle.loads(pickle.dumps(mechanism)) == mechanism
    with pytest.raises(dataclasses.FrozenInstanceError):
        mechanism.epsilon = 123.0  # type: ignore[misc]
    assert type(mechanism).__module__.startswith("algorithms.broken.")
    assert mechanism.__module__ and type(mechanism).__doc__
    assert isinstance(mechanism.delta, float)
    if isinstance(mechanism, GaussianClassicLargeEpsilon):
        assert mechanism.true_delta(mechanism.epsilon) > mechanism.delta
    elif isinstance(mechanism, NoisyMaxReturnsValue):
        assert mechanism.true_epsilon(num_queries=len(x)) > mechanism.epsilon
    else:
        assert mechanism.delta == 0.0
        assert mechanism.true_epsilon() > mechanism.epsilon


def test_module_docstrings_state_bug_and_true_epsilon() -> None:
    import importlib
    import pkgutil

    import algorithms.broken as package

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"algorithms.broken.{info.name}")
        doc = module.__doc__ or ""
        assert doc.startswith("BROKEN"), info.name
        assert "True" in doc or "true" in doc, info.name


BAD: list[tuple[Callable[[], Any], str]] = [
    (lambda: LaplaceHalfNoise(0.0), "epsilon"),
    (lambda: LaplaceHalfNoise(1.0, sensitivity=0.0), "sensitivity"),
    (lambda: NoNoise(-1.0), "epsilon"),
    (lambda: NoisyMaxReturnsValue(1.0, noise="gauss"), "noise"),
    (lambda: HistogramScaleEpsilon(math.inf), "epsilon"),
    (lambda: SVTOutputsValue(1.0, threshold=0.0, cutoff=0), "cutoff"),
    (lambda: SVTUnscaledQueryNoise(1.0, threshold=math.nan), "threshold"),
    (lambda: SVTNoQueryNoise(0.0, threshold=0.0), "epsilon"),
    (lambda: SVTNoCutoff(1.0, threshold=math.inf), "threshold"),
    (lambda: ExponentialMechanismNoHalf(1.0, sensitivity=-2.0), "sensitivity"),
    (lambda: RandomizedResponseBinaryFormula(1.0, k=2), "k must be an integer >= 3"),
    (lambda: GaussianClassicLargeEpsilon(0.5, 1e-5), "epsilon must be >= 1"),
    (lambda: GaussianClassicLargeEpsilon(2.0, 1.5), "delta"),
    (lambda: SumMissingClipping(1.0, 2.0, 1.0), "lower must be < upper"),
    (lambda: SumNaNThroughClipping(1.0, -math.inf, 1.0), "lower"),
    (lambda: BudgetSpentTwice(0.0), "epsilon"),
    (lambda: MeanDataDependentScale(1.0, 0.0, 0.0), "lower must be < upper"),
    (lambda: FloatingPointLaplace(1.0, sensitivity=0.0), "sensitivity"),
    (lambda: GeometricIgnoresSensitivity(1.0, sensitivity=1), "sensitivity must be an integer >= 2"),
    (lambda: TruncatedGeometricByRejection(1.0, upper=0), "upper"),
]


@pytest.mark.parametrize(("factory", "message"), BAD)
def test_parameter_validation(factory: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


def test_input_validation() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="x must be a scalar"):
        BudgetSpentTwice(1.0)(np.array([1.0, 2.0]), 3, rng)
    with pytest.raises(ValueError, match="at least one record"):
        MeanDataDependentScale(1.0, 0.0, 1.0)(np.array([]), 3, rng)
    with pytest.raises(ValueError, match="x must be a scalar integer count"):
        TruncatedGeometricByRejection(1.0, upper=3)(5, 3, rng)
    with pytest.raises(ValueError, match="num_queries"):
        NoisyMaxReturnsValue(1.0).true_epsilon()


# ---------------------------------------------------------------------------------------------
# laws and true epsilons
# ---------------------------------------------------------------------------------------------


def test_laplace_half_noise() -> None:
    mech = LaplaceHalfNoise(0.1, sensitivity=2.0)
    out = mech(np.array([0.0, 5.0]), 20_000, np.random.default_rng(31))
    assert ks_p(out[:, 0], "laplace", 0.0, 10.0) > P_MIN  # Δ/(2ε) = 10 (correct would be 20)
    assert ks_p(out[:, 1] - 5.0, "laplace", 0.0, 10.0) > P_MIN
    y = np.array([10.0, 100.0])
    loss = stats.laplace(2.0, 10.0).logpdf(y) - stats.laplace(0.0, 10.0).logpdf(y)
    np.testing.assert_allclose(loss, mech.true_epsilon())
    assert mech.true_epsilon() == pytest.approx(0.2)


def test_no_noise() -> None:
    mech = NoNoise(0.1)
    out = mech(np.array([1.5, -2.0]), 5, np.random.default_rng(32))
    np.testing.assert_array_equal(out, np.tile([1.5, -2.0], (5, 1)))
    out[0, 0] = 99.0  # a writable copy, not a broadcast view
    assert mech.true_epsilon() == math.inf


def max_cdf(y: np.ndarray, x: np.ndarray, noise: str, scale: float) -> np.ndarray:
    law = stats.laplace(scale=scale) if noise == "laplace" else stats.expon(scale=scale)
    return np.prod(law.cdf(np.subtract.outer(np.asarray(y), x)), axis=-1)


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_noisy_max_returns_value_law(noise: str) -> None:
    x = np.array([0.0, 3.0, 1.0, 2.0, 2.5])
    mech = NoisyMaxReturnsValue(0.5, noise=noise)
    out = mech(x, 20_000, np.random.default_rng(33))
    assert ks_p(out, lambda y: max_cdf(y, x, noise, 4.0)) > P_MIN
    if noise == "exponential":
        assert out.min() >= x.max()  # support starts at max x: the source of ε = ∞
        assert mech.true_epsilon() == math.inf


def log_density_of_max(y: float, x: np.ndarray, scale: float) -> float:
    law = stats.laplace(scale=scale)
    terms = [
        law.logpdf(y - x[i]) + sum(law.logcdf(y - x[j]) for j in range(len(x)) if j != i)
        for i in range(len(x))
    ]
    return float(logsumexp(terms))


def test_noisy_max_returns_value_true_epsilon_laplace() -> None:
    eps, m = 0.1, 5
    mech = NoisyMaxReturnsValue(eps)
    x = np.array([0.0, 0.3, -0.2, 0.1, 0.0])
    x_prime = x + 1.0  # ℓ∞ neighbour
    for y in (-50.0, -500.0):  # below min(x ∪ x'): the ratio is exactly e^{mε/2}
        loss = log_density_of_max(y, x, 2 / eps) - log_density_of_max(y, x_prime, 2 / eps)
        assert loss == pytest.approx(mech.true_epsilon(num_queries=m), rel=1e-9)
    assert mech.true_epsilon(num_queries=m) == pytest.approx(0.25)
    # and never above m·ε/2 elsewhere
    for y in np.linspace(-20, 60, 17):
        loss = log_density_of_max(y, x, 2 / eps) - log_density_of_max(y, x_prime, 2 / eps)
        assert abs(loss) <= 0.25 + 1e-9


def test_histogram_scale_epsilon() -> None:
    mech = HistogramScaleEpsilon(0.1)
    counts = np.array([4.0, 0.0])
    out = mech(counts, 20_000, np.random.default_rng(34))
    for column in range(2):
        assert ks_p(out[:, column] - counts[column], "laplace", 0.0, 0.1) > P_MIN
    assert mech.true_epsilon() == pytest.approx(10.0)
    y = np.array([5.0, 50.0])
    loss = stats.laplace(1.0, 0.1).logpdf(y) - stats.laplace(0.0, 0.1).logpdf(y)
    np.testing.assert_allclose(loss, 10.0)


# --- SVT variants ----------------------------------------------------------------------------


def test_svt_outputs_value_codes_and_values() -> None:
    q = np.array([0.0, 3.0, 1.0, 4.0])
    mech = SVTOutputsValue(1.0, threshold=2.0, cutoff=1)
    assert mech.threshold_scale == pytest.approx(2.0) and mech.query_scale == pytest.approx(2.0)
    out = mech(q, 30_000, np.random.default_rng(35))
    codes, values = out[:, :4], out[:, 4:]
    patterns = valid_patterns(4, 1)
    probs = np.exp([svt_pattern_log_probability(p, q, 2.0, 2.0, 2.0) for p in patterns])
    assert chisquare_p(pattern_index(codes, patterns), np.arange(len(patterns)), probs) > P_MIN
    assert np.all(values[codes != 1] == 0.0)
    # with an unreachable-low threshold and cutoff = k every query is ⊤ and releases q_i + Lap(c/ε2)
    all_top = SVTOutputsValue(1.0, threshold=-1e9, cutoff=4)(q, 20_000, np.random.default_rng(36))
    assert np.all(all_top[:, :4] == 1.0)
    for i in range(4):
        assert ks_p(all_top[:, 4 + i] - q[i], "laplace", 0.0, 8.0) > P_MIN
    assert mech.true_epsilon() == math.inf


DPSNIPER_SVT = [  # DP-Sniper's SVT3, SVT4, SVT5, SVT6 (ε = 0.1, T = 1, c = 1)
    SVTOutputsValue(0.1, threshold=1.0, cutoff=1), SVTUnscaledQueryNoise(0.1, threshold=1.0, cutoff=1),
    SVTNoQueryNoise(0.1, threshold=1.0), SVTNoCutoff(0.1, threshold=1.0),
]


@pytest.mark.parametrize("mech", DPSNIPER_SVT, ids=["svt3", "svt4", "svt5", "svt6"])
def test_svt_variants_law_at_dpsniper_parameters(mech: Any) -> None:
    """The engine that draws query noise only for the runs still answering, Laplace as exponential × sign, on 10
    queries: the answer patterns against their exact law (chi-square) and against the legacy engine
    (:func:`distribution_checks.legacy_run_sparse_vector`, two-sample chi-square), the released values of SVT3
    against the legacy engine's (two-sample KS); fixed seeds, each assertion at false-failure level P_MIN."""
    q = np.array([1.0] * 5 + [0.0] * 5)
    k, n = q.size, 200_000
    out = mech(q, n, np.random.default_rng(41))
    legacy = legacy_svt(mech, q, n, np.random.default_rng(42))
    assert out.dtype == legacy.dtype and out.shape == legacy.shape
    codes, old = out[:, :k], legacy[:, :k]
    assert two_sample_chisquare_p(rows_as_codes(codes), rows_as_codes(old)) > P_MIN
    if mech.query_scale is not None:
        patterns = valid_patterns(k, mech.cutoff_or_none)
        probs = np.exp([svt_pattern_log_probability(p, q, 1.0, mech.threshold_scale, mech.query_scale)
                        for p in patterns])
        assert probs.sum() == pytest.approx(1.0, abs=1e-7)
        assert chisquare_p(pattern_index(codes, patterns), np.arange(len(patterns)), probs / probs.sum()) > P_MIN
    if mech.output_values:
        values = out[:, k:]
        assert np.all(values[codes != 1] == 0.0)
        assert stats.ks_2samp(values[codes == 1], legacy[:, k:][old == 1]).pvalue > P_MIN


def test_svt_outputs_value_loss_grows_with_number_of_queries() -> None:
    # released value v bounds ρ ≤ v − T; density ratio of (⊥^{k-1}, v) on x = 0 vs x' = (1,…,1,0)
    eps, v, threshold = 0.1, 5.0, 0.0
    rho_scale, nu_scale = 2 / eps, 2 / eps

    def log_mass(k: int, shift: float) -> float:
        def integrand(r: float) -> float:
            log_rho = -abs(r) / rho_scale - math.log(2 * rho_scale)
            return math.exp(log_rho + (k - 1) * laplace_logcdf(threshold + r - shift, nu_scale))

        mass = integrate.quad(integrand, -80 * rho_scale, v - threshold, limit=400, epsrel=1e-11)[0]
        return math.log(mass)

    losses = [log_mass(k, 0.0) - log_mass(k, 1.0) for k in (1, 10, 100, 1000)]
    assert losses[0] == pytest.approx(0.0, abs=1e-12)
    assert all(b > a for a, b in zip(losses, losses[1:]))
    assert losses[-1] > 10.0  # far beyond the claimed 0.1: unbounded in k


def test_svt_unscaled_query_noise() -> None:
    q = np.array([0.0, 3.0, 1.0])
    mech = SVTUnscaledQueryNoise(1.0, threshold=2.0, cutoff=2)
    assert mech.threshold_scale == pytest.approx(4.0) and mech.query_scale == pytest.approx(4.0 / 3.0)
    patterns = valid_patterns(3, 2)
    probs = np.exp([svt_pattern_log_probability(p, q, 2.0, 4.0, 4.0 / 3.0) for p in patterns])
    out = mech(q, 30_000, np.random.default_rng(37))
    assert chisquare_p(pattern_index(out, patterns), np.arange(len(patterns)), probs) > P_MIN
    assert mech.true_epsilon() == pytest.approx((1 + 12) / 4)


def test_svt_unscaled_query_noise_true_epsilon_numeric() -> None:
    # (⊥^{m-1}, ⊤) on x = (0,…,0,1) vs x' = (1,…,1,0): log-ratio → (1+6c)ε/4 = 0.175 (c = 1)
    eps, m = 0.1, 20
    mech = SVTUnscaledQueryNoise(eps, threshold=0.0)
    pattern = (0,) * (m - 1) + (1,)
    x = np.array([0.0] * (m - 1) + [1.0])
    x_prime = np.array([1.0] * (m - 1) + [0.0])
    loss = svt_pattern_log_probability(
        pattern, x, 0.0, mech.threshold_scale, mech.query_scale
    ) - svt_pattern_log_probability(pattern, x_prime, 0.0, mech.threshold_scale, mech.query_scale)
    assert mech.true_epsilon() == pytest.approx(0.175)
    assert 0.1745 < loss <= 0.175 + 1e-9


def test_svt_no_query_noise_law_and_impossible_pattern() -> None:
    mech = SVTNoQueryNoise(0.5, threshold=0.0)
    q = np.array([0.0, 2.0, 1.0])
    out = mech(q, 40_000, np.random.default_rng(38))
    # ⊤ at i iff ρ ≤ q_i − T: the pattern is a function of which interval ρ falls in
    rho = stats.laplace(scale=4.0)
    cuts = np.array([0.0, 1.0, 2.0])
    probs = np.diff(np.concatenate([[0.0], rho.cdf(cuts), [1.0]]))  # ρ ≤ 0, (0,1], (1,2], > 2
    expected_patterns = [(1, 1, 1), (0, 1, 1), (0, 1, 0), (0, 0, 0)]
    index = pattern_index(out, expected_patterns)
    assert chisquare_p(index, np.arange(4), probs) > P_MIN
    # witness of ε = ∞: (⊥, ⊤) on x = (0, 1) has positive probability, on x' = (1, 0) none
    a = mech(np.array([0.0, 1.0]), 20_000, np.random.default_rng(39))
    b = mech(np.array([1.0, 0.0]), 20_000, np.random.default_rng(40))
    assert np.any(np.all(a == [0, 1], axis=1))
    assert not np.any(np.all(b == [0, 1], axis=1))
    assert mech.true_epsilon() == math.inf


def test_svt_no_cutoff_law_and_growing_loss() -> None:
    mech = SVTNoCutoff(1.0, threshold=1.0)
    q = np.array([0.0, 2.0, 1.0])
    patterns = valid_patterns(3, None)
    probs = np.exp([svt_pattern_log_probability(p, q, 1.0, 2.0, 2.0) for p in patterns])
    out = mech(q, 30_000, np.random.default_rng(41))
    assert not np.any(out == -1)
    assert chisquare_p(pattern_index(out, patterns), np.arange(len(patterns)), probs) > P_MIN
    # (⊥^m, ⊤^m) on x = 0 vs x' = (1,…,1, −1,…,−1): log-ratio ≥ m·ε/2, unbounded in m
    eps = 0.1
    broken = SVTNoCutoff(eps, threshold=0.0)
    for m in (1, 3, 6):
        pattern = (0,) * m + (1,) * m
        x = np.zeros(2 * m)
        x_prime = np.array([1.0] * m + [-1.0] * m)
        loss = svt_pattern_log_probability(
            pattern, x, 0.0, broken.threshold_scale, broken.query_scale
        ) - svt_pattern_log_probability(pattern, x_prime, 0.0, broken.threshold_scale, broken.query_scale)
        assert loss >= m * eps / 2 - 1e-9
        assert loss <= eps / 2 + 2 * m * eps + 1e-9  # the finite bound for k = 2m queries
    assert broken.true_epsilon() == math.inf


# --- discrete selection / local mechanisms ---------------------------------------------------


def test_exponential_mechanism_no_half_law() -> None:
    u = np.array([0.0, 1.0, 3.0, 2.0])
    mech = ExponentialMechanismNoHalf(0.8, sensitivity=2.0)
    expected = np.exp(0.4 * u - logsumexp(0.4 * u))
    np.testing.assert_allclose(mech.pmf(u), expected, rtol=1e-12)
    out = mech(u, 40_000, np.random.default_rng(42))
    assert chisquare_p(out, np.arange(4), expected) > P_MIN


def test_exponential_mechanism_no_half_true_epsilon() -> None:
    eps, delta_u = 0.1, 1.0
    mech = ExponentialMechanismNoHalf(eps, delta_u)
    losses = []
    for m in (2, 20, 2000):
        u = np.zeros(m)
        u_prime = u + delta_u
        u_prime[0] -= 2 * delta_u
        losses.append(math.log(mech.pmf(u)[0] / mech.pmf(u_prime)[0]))
    assert all(loss <= 2 * eps + 1e-12 for loss in losses)
    assert losses[-1] > 0.999 * 2 * eps  # > ε: the claim fails; → 2ε
    assert mech.true_epsilon() == pytest.approx(0.2)


@pytest.mark.parametrize("k", [3, 5])
def test_rr_binary_formula(k: int) -> None:
    mech = RandomizedResponseBinaryFormula(0.1, k=k)
    p = math.exp(0.1) / (math.exp(0.1) + 1)
    expected = np.full(k, (1 - p) / (k - 1))
    expected[1] = p
    np.testing.assert_allclose(mech.pmf(1), expected)
    out = mech(1, 40_000, np.random.default_rng(43 + k))
    assert chisquare_p(out, np.arange(k), expected) > P_MIN
    pmfs = np.array([mech.pmf(c) for c in range(k)])
    loss = max(np.max(np.log(pmfs[a] / pmfs[b])) for a in range(k) for b in range(k))
    assert loss == pytest.approx(mech.true_epsilon())
    assert mech.true_epsilon() == pytest.approx(0.1 + math.log(k - 1))


def test_geometric_ignores_sensitivity() -> None:
    mech = GeometricIgnoresSensitivity(0.1, sensitivity=2)
    out = mech(5, 60_000, np.random.default_rng(46))
    alpha = math.exp(-0.1)
    support = np.arange(out.min(), out.max() + 1)
    wide = np.arange(-5000, 5001)
    probs = alpha ** np.abs(support - 5.0) / np.sum(alpha ** np.abs(wide.astype(float)))
    assert chisquare_p(out, support, probs) > P_MIN
    # pmf ratio between inputs 0 and Δ = 2 at outputs beyond both: α^{-2} = e^{2ε}
    z = np.array([10.0, 40.0])
    np.testing.assert_allclose(-0.1 * np.abs(z - 2) + 0.1 * np.abs(z), mech.true_epsilon())
    assert mech.true_epsilon() == pytest.approx(0.2)


def brute_force_conditional_pmfs(epsilon: float, upper: int) -> np.ndarray:
    z = np.arange(upper + 1)
    weights = np.exp(-epsilon * np.abs(np.subtract.outer(z, z)))  # rows: input c
    return weights / weights.sum(axis=1, keepdims=True)


@pytest.mark.parametrize(("epsilon", "upper"), [(0.1, 5), (0.1, 1), (0.7, 8), (0.1, 300)])
def test_truncated_geometric_rejection_true_epsilon(epsilon: float, upper: int) -> None:
    mech = TruncatedGeometricByRejection(epsilon, upper)
    pmfs = brute_force_conditional_pmfs(epsilon, upper)
    for c in (0, upper // 2, upper):
        np.testing.assert_allclose(mech.pmf(c), pmfs[c], rtol=1e-10)
    loss = np.max(np.abs(np.log(pmfs[1:]) - np.log(pmfs[:-1])))
    assert mech.true_epsilon() == pytest.approx(loss, rel=1e-10)
    alpha = math.exp(-epsilon)
    boundary = epsilon + math.log((1 + alpha - alpha**2 - alpha**upper) / (1 - alpha ** (upper + 1)))
    assert mech.true_epsilon() == pytest.approx(boundary, rel=1e-10)


def test_truncated_geometric_rejection_catalogue_values() -> None:
    assert TruncatedGeometricByRejection(0.1, 5).true_epsilon() == pytest.approx(0.161017, abs=1e-6)
    assert TruncatedGeometricByRejection(0.1, 1).true_epsilon() == pytest.approx(0.1)
    limit = 0.1 + math.log(1 + math.exp(-0.1) - math.exp(-0.2))
    assert TruncatedGeometricByRejection(0.1, 2000).true_epsilon() == pytest.approx(limit, rel=1e-10)
    assert limit == pytest.approx(0.182599, abs=1e-6)


@pytest.mark.parametrize("count", [0, 2])
def test_truncated_geometric_rejection_law(count: int) -> None:
    mech = TruncatedGeometricByRejection(0.5, upper=5)
    out = mech(count, 40_000, np.random.default_rng(47 + count))
    assert chisquare_p(out, np.arange(6), mech.pmf(count)) > P_MIN


# --- Gaussian --------------------------------------------------------------------------------


def hockey_stick_numeric(sigma: float, epsilon: float) -> float:
    p, q = stats.norm(1.0, sigma), stats.norm(0.0, sigma)
    cut = sigma**2 * epsilon + 0.5
    return integrate.quad(
        lambda y: p.pdf(y) - math.exp(epsilon) * q.pdf(y), cut, cut + 40 * sigma, epsabs=1e-15, limit=200
    )[0]


def test_gaussian_classic_large_epsilon_documented_numbers() -> None:
    catalogue = GaussianClassicLargeEpsilon(10.0, 0.1)
    assert catalogue.sigma == pytest.approx(0.224754, abs=1e-6)
    assert catalogue.true_delta(10.0) == pytest.approx(0.405602, abs=1e-6)
    assert catalogue.true_delta(10.0) == pytest.approx(hockey_stick_numeric(catalogue.sigma, 10.0), rel=1e-7)
    assert catalogue.violates_claim()
    large = GaussianClassicLargeEpsilon(15.0, 1e-3)
    assert large.true_delta(15.0) == pytest.approx(0.0231367, rel=1e-5)
    assert large.true_delta(15.0) >= 10 * large.delta and large.true_delta(15.0) >= 1e-3
    assert large.true_delta(15.0) == pytest.approx(hockey_stick_numeric(large.sigma, 15.0), rel=1e-6)
    # on ε ∈ [2, 10] the factor never reaches 10; the worst is 4.28 at ε = 10, δ ≈ 0.0386
    worst = max(
        GaussianClassicLargeEpsilon(eps, d).true_delta(eps) / d
        for eps in np.linspace(2, 10, 17)
        for d in np.geomspace(1e-8, 0.9, 120)
    )
    assert 4.2 < worst < 4.3
    # the claim still holds well above ε = 1: break-even ε*(1e-5) ≈ 8.42
    assert not GaussianClassicLargeEpsilon(1.0, 1e-5).violates_claim()
    assert not GaussianClassicLargeEpsilon(8.3, 1e-5).violates_claim()
    assert GaussianClassicLargeEpsilon(8.5, 1e-5).violates_claim()
    breakeven = brentq(
        lambda e: math.log(GaussianClassicLargeEpsilon(e, 1e-5).true_delta(e) / 1e-5), 2.0, 20.0
    )
    assert breakeven == pytest.approx(8.42, abs=0.01)


def test_gaussian_classic_large_epsilon_law() -> None:
    mech = GaussianClassicLargeEpsilon(10.0, 0.1, sensitivity=3.0)
    assert mech.sigma == pytest.approx(3.0 * math.sqrt(2 * math.log(12.5)) / 10.0)
    out = mech(np.array([1.0, -1.0]), 20_000, np.random.default_rng(49))
    for column, centre in enumerate([1.0, -1.0]):
        assert ks_p(out[:, column] - centre, "norm", 0.0, mech.sigma) > P_MIN


def test_gaussian_classic_large_epsilon_detectable_event() -> None:
    # the event {y > 1.037} of the docstring: P(x'=1) − e^10 P(x=0) ≈ 0.39 > δ = 0.1
    mech = GaussianClassicLargeEpsilon(10.0, 0.1)
    p1 = stats.norm(1.0, mech.sigma).sf(1.037)
    p0 = stats.norm(0.0, mech.sigma).sf(1.037)
    assert p1 == pytest.approx(0.435, abs=2e-3)
    assert p0 == pytest.approx(1.98e-6, rel=0.02)
    assert p1 - math.exp(10.0) * p0 > 0.38


# --- clipping / sums / means -----------------------------------------------------------------


def test_sum_missing_clipping() -> None:
    mech = SumMissingClipping(0.5, lower=0.0, upper=2.0)
    data = np.array([1.0, 100.0, -3.0])
    out = mech(data, 20_000, np.random.default_rng(50))
    assert ks_p(out - 98.0, "laplace", 0.0, 4.0) > P_MIN  # raw sum, scale max(|l|,|u|)/ε
    assert mech.pair_epsilon(100.0) == pytest.approx(0.5 * 100 / 2)
    assert mech.pair_epsilon(1.0) == pytest.approx(0.25)
    assert mech.true_epsilon() == math.inf


def test_sum_nan_through_clipping() -> None:
    mech = SumNaNThroughClipping(0.1, lower=0.0, upper=1.0)
    poisoned = mech(np.array([0.5, np.nan]), 1000, np.random.default_rng(51))
    assert np.all(np.isnan(poisoned))
    clean = mech(np.array([0.5]), 1000, np.random.default_rng(51))
    assert not np.any(np.isnan(clean))
    # without NaN it is exactly the correct clipped sum
    data = np.array([0.5, 7.0, -2.0])
    correct = ClippedSum(0.1, 0.0, 1.0)(data, 100, np.random.default_rng(52))
    np.testing.assert_array_equal(mech(data, 100, np.random.default_rng(52)), correct)
    assert mech.true_epsilon() == math.inf


def test_budget_spent_twice() -> None:
    mech = BudgetSpentTwice(0.5, sensitivity=2.0)
    out = mech(3.0, 20_000, np.random.default_rng(53))
    for column in range(2):
        assert ks_p(out[:, column] - 3.0, "laplace", 0.0, 4.0) > P_MIN
    r = np.corrcoef(out.T)[0, 1]
    assert abs(r) < 4.0 / math.sqrt(20_000)  # independent draws (|r| < 4 s.e.)
    y = np.array([10.0, 10.0])  # both outputs beyond both inputs 0 and 2
    loss = stats.laplace(2.0, 4.0).logpdf(y).sum() - stats.laplace(0.0, 4.0).logpdf(y).sum()
    assert loss == pytest.approx(mech.true_epsilon())
    assert mech.true_epsilon() == pytest.approx(1.0)


def test_mean_data_dependent_scale() -> None:
    mech = MeanDataDependentScale(0.5, lower=0.0, upper=4.0)
    data = np.array([1.0, 2.0, 9.0, np.nan])  # clipped: 1, 2, 4, 0 → mean 1.75
    out = mech(data, 20_000, np.random.default_rng(54))
    assert mech.scale(4) == pytest.approx(2.0)
    assert ks_p(out - 1.75, "laplace", 0.0, 2.0) > P_MIN
    # add/remove: scales 2.0 (4 records) vs 8/3 (3 records): log-ratio grows linearly in |y|
    def log_density(y: np.ndarray, centre: float, scale: float) -> np.ndarray:
        return -math.log(2 * scale) - np.abs(y - centre) / scale

    y = np.array([50.0, 500.0, 5000.0])
    losses = log_density(y, 7.0 / 3.0, mech.scale(3)) - log_density(y, 1.75, mech.scale(4))
    assert losses[0] < losses[1] < losses[2] and losses[2] > 100
    assert mech.true_epsilon() == math.inf


def test_means_data_dependent_scale() -> None:
    mech = MeansDataDependentScale(0.5, lower=0.0, upper=4.0)
    data = np.array([[1.0, 0.0], [2.0, 4.0], [9.0, 1.0], [np.nan, 3.0]])   # clipped column means 1.75, 2
    out = mech(data, 20_000, np.random.default_rng(56))
    assert out.shape == (20_000, 2) and mech.scale(4, 2) == pytest.approx(4.0)
    assert ks_p(out[:, 0] - 1.75, "laplace", 0.0, 4.0) > P_MIN and ks_p(out[:, 1] - 2.0, "laplace", 0.0, 4.0) > P_MIN
    np.testing.assert_allclose(mech.log_density(data, out[:3]),
                               stats.laplace(1.75, 4.0).logpdf(out[:3, 0]) + stats.laplace(2.0, 4.0).logpdf(out[:3, 1]))
    # add/remove: every column's scale moves (4 records: 4.0, 3 records: 16/3), so the loss grows with every |y_j|
    fewer = data[:3]
    y = np.array([[50.0, 50.0], [500.0, 50.0], [500.0, 500.0]])
    losses = mech.log_density(fewer, y) - mech.log_density(data, y)
    assert losses[0] < losses[1] < losses[2] and losses[2] > 60       # about 500·(1/4 − 3/16) per column
    assert mech.true_epsilon() == math.inf
    with pytest.raises(ValueError, match="2-D dataset"):
        mech(np.array([1.0, 2.0]), 5, np.random.default_rng(0))


# --- floating-point Laplace ------------------------------------------------------------------


def test_float_laplace_law() -> None:
    mech = FloatingPointLaplace(0.1)
    out = mech(2.0, 20_000, np.random.default_rng(55))
    assert ks_p(out - 2.0, "laplace", 0.0, 10.0) > P_MIN  # as a real-valued law it looks right


def test_float_laplace_uniform_grid_is_reproduced() -> None:
    # numpy's uniform(-0.5, 0.5) is exactly -0.5 + 1.0 * (k · 2^-53): output_for_draw reproduces it
    mech = FloatingPointLaplace(0.1)
    out = mech(0.0, 1000, np.random.default_rng(56))
    bits = np.random.default_rng(56).bit_generator.random_raw(1000) >> np.uint64(11)
    np.testing.assert_array_equal(mech.output_for_draw(0.0, bits.astype(np.float64)), out)


def test_float_laplace_support_depends_on_input() -> None:
    # exact witness of ε = ∞ (Mironov 2012): most outputs on x = 0 cannot occur on x' = 1
    mech = FloatingPointLaplace(0.1)
    y0 = mech(0.0, 4000, np.random.default_rng(57))
    y1 = mech(1.0, 4000, np.random.default_rng(58))
    assert mech.is_reachable(y0, 0.0).all() and mech.is_reachable(y1, 1.0).all()  # checker sound
    unreachable_0 = 1.0 - mech.is_reachable(y0, 1.0).mean()
    unreachable_1 = 1.0 - mech.is_reachable(y1, 0.0).mean()
    assert unreachable_0 > 0.5 and unreachable_1 > 0.5
    assert mech.true_epsilon() == math.inf
    # on a run of consecutive doubles only a fraction is in the support (the grid is coarser)
    run = 5.0 + np.arange(256) * np.spacing(5.0)
    fraction = mech.is_reachable(run, 0.0).mean()
    assert 0.0 < fraction < 0.5


def test_binary_mechanism_missing_level_true_epsilon_by_its_exact_loss() -> None:
    """The loss of the pair that changes step 1 (counted in all five levels) never exceeds 1.25 and comes within
    1 % of it on 200,000 outputs (every node beyond both answers: probability about 0.6^5); for T = 12 (no power of
    two) the levels agree and the mechanism is correct."""
    m = BinaryMechanismMissingLevel(16, 1.0)
    x0 = np.zeros(16)
    x1 = x0.copy()
    x1[0] = 1.0
    out = m(x1, 200_000, np.random.default_rng(5))
    loss = m.log_density(x1, out) - m.log_density(x0, out)
    assert loss.max() <= 1.25 + 1e-9 and loss.max() >= 1.25 * 0.99
    assert m.epsilon_on(x0, x1) == pytest.approx(1.25) == m.true_epsilon()
    assert BinaryMechanismMissingLevel(12, 1.0).true_epsilon() == pytest.approx(1.0)
