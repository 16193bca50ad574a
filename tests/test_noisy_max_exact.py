"""Exact pmf of report-noisy-max with exponential noise (= permute-and-flip).

:func:`algorithms.classic.noisy_max.permute_and_flip_pmf` against numerical integration (quad), against
exact polynomial integration in 50-digit mpmath (if installed), against sampled frequencies of both
``ReportNoisyMax(noise="exponential")`` and a direct permute-and-flip sampler, and against the
exponential mechanism's softmax, which it is not.

Statistical tests use FIXED seeds and assert ``p >= 1e-3``: for a sampler with exactly the computed
law each would fail for a fraction 1e-3 of seeds (false-failure level 1e-3). No retries.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import softmax

from distribution_checks import chisquare_p
import algorithms.classic.noisy_max as noisy_max
from algorithms.classic.noisy_max import ReportNoisyMax, permute_and_flip_pmf, report_noisy_max_pmf

ALPHA = 1e-3  # false-failure level of each goodness-of-fit assertion


def _random_cases() -> list[tuple[np.ndarray, float]]:
    rng = np.random.default_rng(2024)
    cases = [(np.array([0.0, 1.0, 2.0]), 1.0), (np.array([3.0, -1.0, 2.0, 2.5]), 0.5), (np.zeros(4), 2.0)]
    for m in (2, 5, 12):
        for spread, eps in ((0.01, 1.0), (1.0, 0.3), (10.0, 1.0), (1.0, 5.0)):
            x = rng.normal(0.0, spread, m)
            x[-1] = x[0]  # a tie
            cases.append((x, eps))
    for spread, eps in ((0.01, 1.0), (10.0, 1.0)):  # m = 20: ~1 s of quad each
        cases.append((rng.normal(0.0, spread, 20), eps))
    return cases


CASES = _random_cases()


@pytest.mark.parametrize("x, eps", CASES, ids=[f"m{c[0].size}-{i}" for i, c in enumerate(CASES)])
def test_closed_form_matches_quad(x: np.ndarray, eps: float) -> None:
    exact = permute_and_flip_pmf(x, eps)
    quad = noisy_max._noisy_max_pmf_quad(x, eps, "exponential")
    np.testing.assert_allclose(exact, quad, rtol=0, atol=1e-9)
    assert exact.sum() == pytest.approx(1.0, abs=1e-12)


def _pf_mpmath(x: np.ndarray, eps: float, dps: int = 50) -> np.ndarray:
    """P(r) = q_r ∫_0^1 Π_{j≠r}(1 − q_j t) dt by expanding the polynomial in mpmath arithmetic."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(dps):
        xs = [mpmath.mpf(float(v)) for v in x]
        top = max(xs)
        q = [mpmath.exp(mpmath.mpf(eps) * (v - top) / 2) for v in xs]
        out = []
        for r in range(len(xs)):
            coeffs = [mpmath.mpf(1)]  # ascending powers of t
            for j, qj in enumerate(q):
                if j != r:
                    coeffs = [a - qj * b for a, b in zip(coeffs + [0], [0] + coeffs)]
            out.append(q[r] * mpmath.fsum(c / (k + 1) for k, c in enumerate(coeffs)))
        return np.array([float(v) for v in out])


@pytest.mark.parametrize("m, spread, eps", [(3, 1.0, 1.0), (10, 1.0, 0.1), (30, 3.0, 1.0), (60, 1.0, 2.0), (40, 50.0, 0.5)])
def test_closed_form_matches_mpmath(m: int, spread: float, eps: float) -> None:
    x = np.random.default_rng(m).normal(0.0, spread, m)
    reference = _pf_mpmath(x, eps)
    np.testing.assert_allclose(permute_and_flip_pmf(x, eps), reference, rtol=1e-12, atol=0)


def test_two_candidates_closed_form() -> None:
    # P(loser) = q ∫_0^1 (1 − t) dt = q/2 with q = exp(−ε·gap/2)
    eps, gap = 0.7, 1.3
    q = math.exp(-eps * gap / 2)
    np.testing.assert_allclose(permute_and_flip_pmf([gap, 0.0], eps), [1 - q / 2, q / 2], rtol=1e-15)


def test_invariances_and_extremes() -> None:
    x = np.array([0.3, -1.0, 2.0, 2.0, 0.0])
    p = permute_and_flip_pmf(x, 1.0)
    perm = np.array([3, 0, 4, 1, 2])
    np.testing.assert_allclose(permute_and_flip_pmf(x[perm], 1.0), p[perm], rtol=1e-14)
    np.testing.assert_allclose(permute_and_flip_pmf(x + 1e3, 1.0), p, rtol=1e-12)
    assert p[2] == p[3]
    np.testing.assert_allclose(permute_and_flip_pmf(np.zeros(7), 1.0), np.full(7, 1 / 7), rtol=1e-14)
    assert permute_and_flip_pmf([4.0], 1.0).tolist() == [1.0]
    huge = permute_and_flip_pmf([0.0, -1e4, 5.0], 10.0)
    assert np.all(np.isfinite(huge)) and huge[1] == 0.0 and huge.sum() == pytest.approx(1.0, abs=1e-15)


def test_many_candidates_sum_to_one() -> None:
    x = np.random.default_rng(7).normal(0.0, 1.0, 1000)
    p = permute_and_flip_pmf(x, 1.0)
    assert np.all(p > 0)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


def test_report_noisy_max_pmf_uses_closed_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exponential case must not integrate numerically (quad is the slow path)."""

    def no_quad(*args: object, **kwargs: object) -> None:
        raise AssertionError("quad called for exponential noise")

    monkeypatch.setattr(noisy_max.integrate, "quad", no_quad)
    x = np.array([0.0, 1.0, 2.0])
    np.testing.assert_array_equal(report_noisy_max_pmf(x, 1.0, "exponential"), permute_and_flip_pmf(x, 1.0))
    np.testing.assert_array_equal(ReportNoisyMax(1.0, noise="exponential").pmf(x), permute_and_flip_pmf(x, 1.0))
    with pytest.raises(AssertionError, match="quad called"):
        report_noisy_max_pmf(x, 1.0, "laplace")  # Laplace keeps the numerical integration


def test_matches_report_noisy_max_samples() -> None:
    """Chi-square of 200 000 RNM-exponential draws (seed 0) against the closed form; α = 1e-3."""
    x = np.array([0.0, 1.0, 2.0, 2.0, -3.0, 1.5])
    mech = ReportNoisyMax(0.8, noise="exponential")
    out = mech(x, 200_000, np.random.default_rng(0))
    assert chisquare_p(out, np.arange(x.size), permute_and_flip_pmf(x, 0.8)) >= ALPHA


def test_matches_permute_and_flip_samples() -> None:
    """The identity itself: a direct permute-and-flip sampler (uniform arrival times, coins q_j;
    output the earliest head) against the closed form. 200 000 draws, seed 1, α = 1e-3."""
    x, eps, n = np.array([0.0, 1.0, 2.0, 0.5, 2.0]), 1.2, 200_000
    q = np.exp(eps * (x - x.max()) / 2)
    rng = np.random.default_rng(1)
    arrival = rng.random((n, x.size))
    heads = rng.random((n, x.size)) < q
    out = np.argmin(np.where(heads, arrival, np.inf), axis=1)
    assert chisquare_p(out, np.arange(x.size), permute_and_flip_pmf(x, eps)) >= ALPHA


def test_is_not_the_exponential_mechanism() -> None:
    """On x = [0, 1, 2], ε = 1: permute-and-flip = [0.146751, 0.266077, 0.587172], softmax(εx/2) =
    [0.186324, 0.307196, 0.506480]; max |difference| = total variation = 0.080691 (at index 2)."""
    x = np.array([0.0, 1.0, 2.0])
    pf = permute_and_flip_pmf(x, 1.0)
    em = softmax(x / 2.0)
    diff = np.abs(pf - em)
    assert diff.max() > 1e-3
    assert diff.max() == pytest.approx(0.080691, abs=1e-6)
    assert 0.5 * diff.sum() == pytest.approx(0.080691, abs=1e-6)
    np.testing.assert_allclose(pf, [0.146751, 0.266077, 0.587172], atol=1e-6)
    assert pf[2] > em[2]  # permute-and-flip puts more mass on the best candidate


@pytest.mark.parametrize(
    "x, eps, match",
    [([0.0, 1.0], 0.0, "epsilon"), ([0.0, 1.0], -1.0, "epsilon"), ([0.0, 1.0], math.nan, "epsilon"),
     ([], 1.0, "non-empty"), ([[0.0, 1.0]], 1.0, "1-D"), ([0.0, math.inf], 1.0, "finite")],
)
def test_bad_inputs(x: object, eps: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        permute_and_flip_pmf(x, eps)  # type: ignore[arg-type]
