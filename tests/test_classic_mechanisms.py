"""Tests of the correct mechanisms in :mod:`algorithms.classic`.

Every statistical test uses a FIXED seed and asserts ``p > 1e-4``: if the sampler had exactly the
documented law, each such assertion would fail for at most a fraction 1e-4 of seeds (the
false-failure level per test); with the fixed seeds the outcome is deterministic. No retries.
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
from scipy.special import logsumexp

from distribution_checks import (chisquare_p, ks_p, legacy_svt, pattern_index, rows_as_codes, svt_pattern_log_probability,
                                 two_sample_chisquare_p, valid_patterns)
from algorithms.classic import (
    BinaryMechanism,
    ClippedSum,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Histogram,
    Laplace,
    RandomizedResponse,
    ReportNoisyMax,
    SparseVector,
    TruncatedGeometric,
    exponential_mechanism_pmf,
    gaussian_delta,
    randomized_response_pmf,
    report_noisy_max_pmf,
    truncated_geometric_pmf,
)
from algorithms.classic.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma
from dpverify.testing import check_mechanism

P_MIN = 1e-4  # false-failure level of each goodness-of-fit assertion


# ---------------------------------------------------------------------------------------------
# contract: shapes, dtypes, determinism, pickling, frozen, claimed delta
# ---------------------------------------------------------------------------------------------

CASES: list[tuple[str, Any, Any, tuple[int, ...], type]] = [
    ("laplace-scalar", Laplace(0.5), 3.0, (), np.float64),
    ("laplace-vector", Laplace(0.5, sensitivity=2.0), np.array([1.0, 2.0, 3.0]), (3,), np.float64),
    ("geometric-scalar", Geometric(0.5), 4, (), np.int64),
    ("geometric-vector", Geometric(0.5, sensitivity=2), np.array([1, 2]), (2,), np.int64),
    ("truncated-geometric", TruncatedGeometric(0.5, upper=6), 2, (), np.int64),
    ("gaussian", Gaussian(1.0, 1e-5), np.array([0.0, 1.0]), (2,), np.float64),
    ("gaussian-classic", Gaussian(0.5, 1e-5, calibration="classic"), 0.0, (), np.float64),
    ("rr", RandomizedResponse(1.0, k=4), 2, (), np.int64),
    ("em", ExponentialMechanism(1.0), np.array([0.0, 1.0, 2.0]), (), np.int64),
    ("rnm-laplace", ReportNoisyMax(1.0), np.array([0.0, 1.0, 2.0]), (), np.int64),
    ("rnm-exponential", ReportNoisyMax(1.0, noise="exponential"), np.array([0.0, 1.0]), (), np.int64),
    ("histogram", Histogram(1.0), np.array([3.0, 0.0, 5.0, 1.0]), (4,), np.float64),
    ("svt", SparseVector(1.0, threshold=1.0, cutoff=2), np.array([0.0, 2.0, 1.0, 3.0]), (4,), np.int8),
    ("clipped-sum", ClippedSum(1.0, lower=-1.0, upper=2.0), np.array([0.5, 3.0, np.nan]), (), np.float64),
    ("binary-mechanism", BinaryMechanism(8, 1.0), np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]), (8,), np.float64),
]


@pytest.mark.parametrize(("name", "mechanism", "x", "tail", "dtype"), CASES, ids=[c[0] for c in CASES])
def test_contract(name: str, mechanism: Any, x: Any, tail: tuple[int, ...], dtype: type) -> None:
    # the sampling contract (shape, n = 0, draws from rng only, pickle round trip): dpverify's battery
    check_mechanism(mechanism, [(x, x)], epsilon=1.0, checks=["shape", "empty", "rng", "pickle"]).raise_for_failures()
    out = mechanism(x, 7, np.random.default_rng(1))
    assert out.shape == (7,) + tail and out.dtype == dtype
    assert pickle.loads(pickle.dumps(mechanism)) == mechanism
    # frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        mechanism.epsilon = 123.0  # type: ignore[misc]
    assert isinstance(mechanism.epsilon, float | int) and mechanism.epsilon > 0
    assert isinstance(mechanism.delta, float)
    if isinstance(mechanism, Gaussian):
        assert mechanism.delta > 0
    else:
        assert mechanism.delta == 0.0
        assert mechanism.true_epsilon() == pytest.approx(mechanism.epsilon)


def test_negative_n_rejected() -> None:
    with pytest.raises(ValueError, match="n must be"):
        Laplace(1.0)(0.0, -1, np.random.default_rng(0))


BAD: list[tuple[Callable[[], Any], str]] = [
    (lambda: Laplace(0.0), "epsilon"),
    (lambda: BinaryMechanism(0, 1.0), "length"),
    (lambda: BinaryMechanism(8, -1.0), "epsilon"),
    (lambda: Laplace(math.inf), "epsilon"),
    (lambda: Laplace(float("nan")), "epsilon"),
    (lambda: Laplace(1.0, sensitivity=-1.0), "sensitivity"),
    (lambda: Geometric(-1.0), "epsilon"),
    (lambda: Geometric(1.0, sensitivity=0), "sensitivity"),
    (lambda: Geometric(1.0, sensitivity=1.5), "sensitivity"),  # type: ignore[arg-type]
    (lambda: TruncatedGeometric(1.0, upper=0), "upper"),
    (lambda: Gaussian(1.0, 0.0), "delta"),
    (lambda: Gaussian(1.0, 1.0), "delta"),
    (lambda: Gaussian(1.0, 1e-5, calibration="fancy"), "calibration"),
    (lambda: Gaussian(1.0, 1e-5, calibration="classic"), "Theorem A.1"),
    (lambda: Gaussian(2.0, 1e-5, calibration="classic"), "epsilon must be < 1"),
    (lambda: RandomizedResponse(1.0, k=1), "k must be"),
    (lambda: RandomizedResponse(0.0, k=3), "epsilon"),
    (lambda: ExponentialMechanism(1.0, sensitivity=0.0), "sensitivity"),
    (lambda: ReportNoisyMax(1.0, noise="gumbel"), "noise"),
    (lambda: Histogram(-0.1), "epsilon"),
    (lambda: SparseVector(1.0, threshold=math.inf), "threshold"),
    (lambda: SparseVector(1.0, threshold=0.0, cutoff=0), "cutoff"),
    (lambda: ClippedSum(1.0, lower=1.0, upper=1.0), "lower must be < upper"),
    (lambda: ClippedSum(1.0, lower=0.0, upper=math.inf), "upper"),
]


@pytest.mark.parametrize(("factory", "message"), BAD)
def test_parameter_validation(factory: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


BAD_INPUTS: list[tuple[Any, Any]] = [
    (Laplace(1.0), np.zeros((2, 2))),
    (Geometric(1.0), 1.5),
    (TruncatedGeometric(1.0, upper=3), 4),
    (TruncatedGeometric(1.0, upper=3), -1),
    (RandomizedResponse(1.0, k=3), 3),
    (ExponentialMechanism(1.0), np.array([])),
    (ExponentialMechanism(1.0), np.array([0.0, np.inf])),
    (ReportNoisyMax(1.0), 3.0),
    (Histogram(1.0), np.array([np.nan])),
    (SparseVector(1.0, 0.0), np.zeros((2, 2))),
    (ClippedSum(1.0, 0.0, 1.0), 3.0),
]


@pytest.mark.parametrize(("mechanism", "x"), BAD_INPUTS)
def test_input_validation(mechanism: Any, x: Any) -> None:
    with pytest.raises(ValueError, match="x"):
        mechanism(x, 3, np.random.default_rng(0))


# ---------------------------------------------------------------------------------------------
# distributions
# ---------------------------------------------------------------------------------------------


def test_laplace_distribution() -> None:
    mech = Laplace(0.4, sensitivity=2.0)
    x = np.array([1.0, -3.0])
    out = mech(x, 20_000, np.random.default_rng(11))
    for column in range(2):
        assert ks_p(out[:, column] - x[column], "laplace", 0.0, 5.0) > P_MIN
    # the two coordinates get independent noise
    assert abs(np.corrcoef(out.T)[0, 1]) < 0.05


def test_laplace_true_epsilon_is_attained() -> None:
    mech = Laplace(0.3, sensitivity=2.0)
    y = np.linspace(5.0, 50.0, 10)  # beyond both means
    law0, law1 = stats.laplace(0.0, mech.scale), stats.laplace(2.0, mech.scale)
    np.testing.assert_allclose(law1.logpdf(y) - law0.logpdf(y), mech.true_epsilon())


def two_sided_geometric_probs(alpha: float, support: np.ndarray) -> np.ndarray:
    # independent of the module: normalise alpha^|k| numerically over a wide window
    wide = np.arange(-2000, 2001)
    mass = alpha ** np.abs(wide.astype(float))
    return alpha ** np.abs(support.astype(float)) / mass.sum()


def test_geometric_distribution() -> None:
    mech = Geometric(0.5, sensitivity=2)
    out = mech(7, 50_000, np.random.default_rng(12))
    support = np.arange(out.min(), out.max() + 1)
    probs = two_sided_geometric_probs(math.exp(-0.25), support - 7)
    assert chisquare_p(out, support, probs) > P_MIN


def test_geometric_vector_columns_independent_and_exact() -> None:
    mech = Geometric(1.0)
    out = mech(np.array([0, 100]), 30_000, np.random.default_rng(13))
    for column, centre in enumerate([0, 100]):
        support = np.arange(out[:, column].min(), out[:, column].max() + 1)
        probs = two_sided_geometric_probs(math.exp(-1.0), support - centre)
        assert chisquare_p(out[:, column], support, probs) > P_MIN


def test_truncated_geometric_pmf_matches_clamping() -> None:
    eps, upper = 0.3, 6
    alpha = math.exp(-eps)
    noise = np.arange(-3000, 3001)
    noise_pmf = alpha ** np.abs(noise.astype(float))
    noise_pmf /= noise_pmf.sum()
    for c in range(upper + 1):
        clamped = np.clip(c + noise, 0, upper)
        direct = np.bincount(clamped, weights=noise_pmf, minlength=upper + 1)
        np.testing.assert_allclose(truncated_geometric_pmf(c, eps, upper), direct, rtol=1e-10)
        assert truncated_geometric_pmf(c, eps, upper).sum() == pytest.approx(1.0)


def test_truncated_geometric_distribution() -> None:
    mech = TruncatedGeometric(0.3, upper=6)
    out = mech(1, 40_000, np.random.default_rng(14))
    assert out.min() >= 0 and out.max() <= 6
    support = np.arange(7)
    assert chisquare_p(out, support, mech.pmf(1)) > P_MIN


def test_truncated_geometric_true_epsilon_from_pmf() -> None:
    mech = TruncatedGeometric(0.1, upper=5)
    pmfs = np.array([mech.pmf(c) for c in range(6)])
    loss = np.max(np.abs(np.log(pmfs[1:]) - np.log(pmfs[:-1])))
    assert loss == pytest.approx(mech.true_epsilon(), rel=1e-12)
    assert mech.true_epsilon() == pytest.approx(0.1)


def hockey_stick_numeric(sigma: float, epsilon: float, sensitivity: float) -> float:
    """∫ max(0, p(y) − e^ε q(y)) dy for p = N(Δ, σ²), q = N(0, σ²), by quadrature."""
    p, q = stats.norm(sensitivity, sigma), stats.norm(0.0, sigma)
    # p > e^ε q  <=>  y > σ²ε/Δ + Δ/2
    cut = sigma**2 * epsilon / sensitivity + sensitivity / 2.0
    value, _ = integrate.quad(
        lambda y: p.pdf(y) - math.exp(epsilon) * q.pdf(y), cut, cut + 40 * sigma, epsabs=1e-15, limit=200
    )
    return value


@pytest.mark.parametrize(
    ("sigma", "epsilon", "sensitivity"),
    [(1.0, 0.5, 1.0), (3.0, 1.0, 2.0), (0.4, 4.0, 1.0), (10.0, 0.1, 1.0)],
)
def test_gaussian_delta_matches_quadrature(sigma: float, epsilon: float, sensitivity: float) -> None:
    assert gaussian_delta(sigma, epsilon, sensitivity) == pytest.approx(
        hockey_stick_numeric(sigma, epsilon, sensitivity), rel=1e-7, abs=1e-14
    )


def test_gaussian_delta_validation() -> None:
    with pytest.raises(ValueError, match="sigma"):
        gaussian_delta(0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_delta(1.0, -1.0, 1.0)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-5), (1.0, 1e-5), (5.0, 1e-8), (0.5, 0.3)])
def test_analytic_sigma_is_smallest_valid(epsilon: float, delta: float) -> None:
    sigma = analytic_gaussian_sigma(epsilon, delta, 2.0)
    assert gaussian_delta(sigma, epsilon, 2.0) <= delta
    assert gaussian_delta(sigma, epsilon, 2.0) == pytest.approx(delta, rel=1e-9)
    assert gaussian_delta(sigma * (1 - 1e-7), epsilon, 2.0) > delta
    if epsilon < 1:  # analytic beats classic where classic is valid
        assert sigma < classic_gaussian_sigma(epsilon, delta, 2.0)


def test_gaussian_classic_calibration() -> None:
    mech = Gaussian(0.5, 1e-5, sensitivity=2.0, calibration="classic")
    assert mech.sigma == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5)
    assert mech.true_delta(0.5) < 1e-5  # Thm A.1 holds, with room to spare


def test_gaussian_distribution() -> None:
    mech = Gaussian(1.0, 1e-5, sensitivity=1.5)
    x = np.array([2.0, -1.0])
    out = mech(x, 20_000, np.random.default_rng(15))
    for column in range(2):
        assert ks_p(out[:, column] - x[column], "norm", 0.0, mech.sigma) > P_MIN
    assert mech.true_delta(1.0) == pytest.approx(1e-5, rel=1e-9)


def test_randomized_response_distribution_and_epsilon() -> None:
    mech = RandomizedResponse(0.8, k=4)
    out = mech(2, 40_000, np.random.default_rng(16))
    support = np.arange(4)
    expected = np.full(4, 1.0 / (math.exp(0.8) + 3))
    expected[2] = math.exp(0.8) / (math.exp(0.8) + 3)
    np.testing.assert_allclose(mech.pmf(2), expected)
    assert chisquare_p(out, support, expected) > P_MIN
    pmfs = np.array([randomized_response_pmf(c, 0.8, 4) for c in range(4)])
    loss = max(np.max(np.abs(np.log(pmfs[a]) - np.log(pmfs[b]))) for a in range(4) for b in range(4))
    assert loss == pytest.approx(mech.true_epsilon())


def test_randomized_response_vector_of_users() -> None:
    mech = RandomizedResponse(1.0, k=3)
    out = mech(np.array([0, 1, 2, 2]), 30_000, np.random.default_rng(17))
    assert out.shape == (30_000, 4)
    for column, c in enumerate([0, 1, 2, 2]):
        assert chisquare_p(out[:, column], np.arange(3), randomized_response_pmf(c, 1.0, 3)) > P_MIN


def test_randomized_response_large_epsilon_no_overflow() -> None:
    pmf = randomized_response_pmf(0, 2000.0, 3)
    assert np.all(np.isfinite(pmf)) and pmf[0] == 1.0


def test_exponential_mechanism_distribution() -> None:
    u = np.array([0.0, 1.0, 3.0, 2.5, -1.0])
    mech = ExponentialMechanism(1.2, sensitivity=2.0)
    expected = np.exp(1.2 * u / 4.0 - logsumexp(1.2 * u / 4.0))  # independent of the module
    np.testing.assert_allclose(mech.pmf(u), expected, rtol=1e-12)
    out = mech(u, 50_000, np.random.default_rng(18))
    assert chisquare_p(out, np.arange(5), expected) > P_MIN


def test_exponential_mechanism_pmf_stable_for_huge_scores() -> None:
    pmf = exponential_mechanism_pmf(np.array([1e6, 1e6 - 1.0]), 1.0, 1.0)
    assert np.all(np.isfinite(pmf)) and pmf.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("m", [2, 10, 200])
def test_exponential_mechanism_true_epsilon(m: int) -> None:
    # worst pair: the chosen candidate loses Δ, all others gain Δ; loss → ε from below as m grows
    eps, delta_u = 0.7, 1.5
    u = np.zeros(m)
    u_prime = u + delta_u
    u_prime[0] -= 2 * delta_u
    loss = math.log(exponential_mechanism_pmf(u, eps, delta_u)[0]) - math.log(
        exponential_mechanism_pmf(u_prime, eps, delta_u)[0]
    )
    assert loss <= eps + 1e-12
    if m == 200:
        assert loss > 0.99 * eps


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_report_noisy_max_distribution(noise: str) -> None:
    x = np.array([0.0, 2.0, 1.0, 2.0])
    mech = ReportNoisyMax(0.8, noise=noise)
    pmf = mech.pmf(x)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-8)
    assert pmf[1] == pytest.approx(pmf[3], rel=1e-8)  # ties in x are symmetric
    out = mech(x, 40_000, np.random.default_rng(19))
    assert chisquare_p(out, np.arange(4), pmf) > P_MIN


def test_report_noisy_max_exponential_pair_attains_epsilon() -> None:
    # m = 2: the difference of two Exp(b) noises is Laplace(b), so P(0) = Laplace tail
    eps = 0.5
    p = report_noisy_max_pmf(np.array([1.0, 0.0]), eps, "exponential")[0]
    p_prime = report_noisy_max_pmf(np.array([0.0, 1.0]), eps, "exponential")[0]
    assert p == pytest.approx(stats.laplace(0, 2 / eps).sf(-1.0), rel=1e-8)
    assert math.log(p / p_prime) <= eps + 1e-8
    p2 = report_noisy_max_pmf(np.array([0.0, 3.0]), eps, "exponential")[0]
    p2_prime = report_noisy_max_pmf(np.array([-1.0, 4.0]), eps, "exponential")[0]
    assert math.log(p2 / p2_prime) == pytest.approx(eps, rel=1e-6)


def test_histogram_distribution() -> None:
    counts = np.array([10.0, 0.0, 3.0])
    mech = Histogram(0.25)
    out = mech(counts, 20_000, np.random.default_rng(20))
    for column in range(3):
        assert ks_p(out[:, column] - counts[column], "laplace", 0.0, 4.0) > P_MIN


# --- sparse vector ---------------------------------------------------------------------------


@pytest.mark.parametrize("cutoff", [1, 2])
def test_sparse_vector_pattern_distribution(cutoff: int) -> None:
    q = np.array([0.0, 3.0, 1.0, 4.0])
    mech = SparseVector(1.0, threshold=2.0, cutoff=cutoff)
    assert mech.threshold_scale == pytest.approx(2.0) and mech.query_scale == pytest.approx(4.0 * cutoff)
    patterns = valid_patterns(4, cutoff)
    probs = np.exp(
        [svt_pattern_log_probability(p, q, 2.0, mech.threshold_scale, mech.query_scale) for p in patterns]
    )
    assert probs.sum() == pytest.approx(1.0, abs=1e-8)
    out = mech(q, 30_000, np.random.default_rng(21 + cutoff))
    index = pattern_index(out, patterns)
    assert chisquare_p(index, np.arange(len(patterns)), probs) > P_MIN


@pytest.mark.parametrize("cutoff", [1, 2])
def test_sparse_vector_law_at_dpsniper_parameters(cutoff: int) -> None:
    """DP-Sniper's SVT1 (ε = 0.1, T = 0.5, 10 queries; c = 1, and c = 2): the engine that draws query noise only for
    the runs still answering, Laplace as exponential × sign, against the exact pattern law (chi-square) and against
    the legacy engine (:func:`distribution_checks.legacy_run_sparse_vector`, two-sample chi-square); fixed seeds,
    each assertion at false-failure level P_MIN."""
    q = np.array([1.0] * 5 + [0.0] * 5)
    mech = SparseVector(0.1, threshold=0.5, cutoff=cutoff)
    patterns = valid_patterns(10, cutoff)
    probs = np.exp([svt_pattern_log_probability(p, q, 0.5, mech.threshold_scale, mech.query_scale) for p in patterns])
    assert probs.sum() == pytest.approx(1.0, abs=1e-7)
    n = 200_000
    out = mech(q, n, np.random.default_rng(24 + cutoff))
    assert out.dtype == np.int8 and out.shape == (n, 10)
    assert chisquare_p(pattern_index(out, patterns), np.arange(len(patterns)), probs / probs.sum()) > P_MIN
    legacy = legacy_svt(mech, q, n, np.random.default_rng(26 + cutoff))
    assert two_sample_chisquare_p(rows_as_codes(out), rows_as_codes(legacy)) > P_MIN


def test_sparse_vector_abort_structure() -> None:
    mech = SparseVector(1.0, threshold=0.0, cutoff=2)
    out = mech(np.array([5.0, -5.0, 5.0, 5.0, -5.0]), 5000, np.random.default_rng(3))
    for row in out:
        ones = np.flatnonzero(row == 1)
        stopped = np.flatnonzero(row == -1)
        assert len(ones) <= 2
        if len(ones) == 2:
            assert np.array_equal(stopped, np.arange(ones[1] + 1, 5))
        else:
            assert stopped.size == 0


def test_sparse_vector_true_epsilon_approached() -> None:
    # output (⊥,…,⊥,⊤) on x = (0,…,0,1) vs x' = (1,…,1,0): log-ratio → ε from below (c = 1)
    eps, m = 0.1, 20
    mech = SparseVector(eps, threshold=0.0)
    pattern = (0,) * (m - 1) + (1,)
    x = np.array([0.0] * (m - 1) + [1.0])
    x_prime = np.array([1.0] * (m - 1) + [0.0])
    loss = svt_pattern_log_probability(
        pattern, x, 0.0, mech.threshold_scale, mech.query_scale
    ) - svt_pattern_log_probability(pattern, x_prime, 0.0, mech.threshold_scale, mech.query_scale)
    assert 0.099 < loss <= mech.true_epsilon() + 1e-9


# --- clipped sum -----------------------------------------------------------------------------


def test_clipped_sum_distribution() -> None:
    mech = ClippedSum(0.5, lower=-2.0, upper=1.0)
    data = np.array([0.5, 3.0, -7.0, 0.25])
    out = mech(data, 20_000, np.random.default_rng(23))
    assert mech.scale == pytest.approx(4.0)
    assert ks_p(out - (0.5 + 1.0 - 2.0 + 0.25), "laplace", 0.0, 4.0) > P_MIN


def test_clipped_sum_nan_record_counts_as_lower() -> None:
    mech = ClippedSum(1.0, lower=-1.0, upper=2.0)
    with_nan = mech(np.array([1.0, np.nan, 5.0]), 100, np.random.default_rng(24))
    with_lower = mech(np.array([1.0, -1.0, 5.0]), 100, np.random.default_rng(24))
    assert np.all(np.isfinite(with_nan))
    np.testing.assert_array_equal(with_nan, with_lower)
    empty = mech(np.array([]), 5, np.random.default_rng(24))
    assert empty.shape == (5,)


def test_clipped_sum_infinite_records_are_clipped() -> None:
    mech = ClippedSum(1.0, lower=-1.0, upper=2.0)
    a = mech(np.array([np.inf, -np.inf]), 10, np.random.default_rng(25))
    b = mech(np.array([2.0, -1.0]), 10, np.random.default_rng(25))
    np.testing.assert_array_equal(a, b)


def test_package_does_not_import_dpverify() -> None:
    import subprocess
    import sys

    code = "import sys, algorithms.classic, algorithms.broken; print('dpverify' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
