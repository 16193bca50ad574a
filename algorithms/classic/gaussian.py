"""The Gaussian mechanism, with the classic and the analytic calibration of σ.

Sources:

* Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014), Appendix A,
  Theorem A.1 ("classic"): for ε ∈ (0, 1) and ``c² > 2 ln(1.25/δ)``, ``σ ≥ cΔ/ε`` gives (ε, δ)-DP
  for a query of ℓ2 sensitivity Δ. We use ``σ = Δ·sqrt(2 ln(1.25/δ))/ε``. The proof needs ε < 1, so
  ``calibration="classic"`` refuses ε ≥ 1 (using it anyway is the broken twin
  :class:`algorithms.broken.gaussian_classic_large_epsilon.GaussianClassicLargeEpsilon`).
* Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and
  Optimal Denoising" (ICML 2018), Theorem 8 and Algorithm 1 ("analytic"): ``N(0, σ²)`` noise is
  (ε, δ)-DP iff

      δ(ε; σ) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)  ≤  δ,

  the exact hockey-stick divergence of ``N(0, σ²)`` and ``N(Δ, σ²)``. We take the smallest such σ,
  found with :func:`scipy.optimize.brentq` on ``log δ(ε; σ) − log δ`` (``δ(ε; σ)`` decreases in σ)
  instead of Balle–Wang's bisection on their reparametrisation; the result is nudged upwards until
  ``δ(ε; σ) ≤ δ`` holds in floating point.

True privacy profile: for every ε' ≥ 0 the exact δ(ε') is :meth:`Gaussian.true_delta` (the formula
above with the mechanism's σ); by construction ``true_delta(epsilon) ≤ delta`` (analytic: equality up
to ~1e-12 relative; classic at ε < 1: strictly smaller).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from ._validation import (
    as_float_input,
    check_choice,
    check_delta,
    check_epsilon,
    check_finite,
    check_n,
    check_positive,
)
from ..noise import NoiseSource

__all__ = ["Gaussian", "gaussian_delta", "classic_gaussian_sigma", "analytic_gaussian_sigma", "gaussian_log_density"]


def gaussian_log_density(out: np.ndarray, centre: float | np.ndarray, sigma: float) -> np.ndarray:
    """Log density of each row of ``out`` (first axis the rows) under ``centre + N(0, σ²)`` per coordinate:
    ``Σ_j −ln(2πσ²)/2 − (o_j − c_j)²/(2σ²)`` w.r.t. Lebesgue measure, ``−inf`` for a row holding NaN."""
    s = float(sigma)
    z = np.asarray(out, dtype=np.float64) - np.asarray(centre, dtype=np.float64)
    ld = -0.5 * math.log(2.0 * math.pi * s * s) - z * z / (2.0 * s * s)
    ld = ld.reshape(ld.shape[0], -1).sum(axis=1)
    return np.where(np.isnan(ld), -np.inf, ld)


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact δ(ε) of the Gaussian mechanism: ``Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``.

    Evaluated in log space, ``Φ(a) · (1 − exp(ε + log Φ(b) − log Φ(a)))``, so that neither ``e^ε``
    overflows nor the difference of two tiny terms cancels.
    """
    sigma = check_positive("sigma", sigma)
    sensitivity = check_positive("sensitivity", sensitivity)
    epsilon = check_finite("epsilon", epsilon)
    if epsilon < 0.0:
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    a = sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    log_a = float(norm.logcdf(a))
    log_b = float(norm.logcdf(b))
    value = math.exp(log_a) * -math.expm1(min(0.0, epsilon + log_b - log_a))
    return max(0.0, value)


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Dwork–Roth Thm A.1 noise level ``σ = Δ·sqrt(2 ln(1.25/δ))/ε`` (valid only for ε < 1)."""
    return float(sensitivity) * math.sqrt(2.0 * math.log(1.25 / float(delta))) / float(epsilon)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ with ``gaussian_delta(σ, ε, Δ) ≤ δ`` (Balle & Wang 2018, Alg. 1, solved by brentq)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    log_delta = math.log(delta)

    def excess(sigma: float) -> float:
        return math.log(max(gaussian_delta(sigma, epsilon, sensitivity), 1e-300)) - log_delta

    lo = hi = classic_gaussian_sigma(epsilon, min(delta, 0.5), sensitivity)
    while excess(lo) <= 0.0:
        lo /= 2.0
    while excess(hi) > 0.0:
        hi *= 2.0
    sigma = float(brentq(excess, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500))
    while gaussian_delta(sigma, epsilon, sensitivity) > delta:
        sigma *= 1.0 + 1e-13
    return sigma


@dataclass(frozen=True)
class Gaussian:
    """``x + N(0, σ²)`` per coordinate, ``x`` a scalar or 1-D vector of ℓ2 sensitivity Δ.

    ``calibration``: ``"analytic"`` (Balle–Wang, any ε > 0) or ``"classic"`` (Dwork–Roth, ε < 1).
    Output: float64 of shape ``(n,)`` or ``(n, k)``.

    Noise steps (:meth:`release`, :mod:`algorithms.noise`): one ``"gaussian"`` step protecting ``x`` with
    ℓ2 sensitivity Δ (``norm="l2"``, ``scale=σ``).
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    calibration: str = "analytic"
    sigma: float = field(init=False)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        check_positive("sensitivity", self.sensitivity)
        check_choice("calibration", self.calibration, ("analytic", "classic"))
        if self.calibration == "classic":
            if self.epsilon >= 1.0:
                raise ValueError(
                    "epsilon must be < 1 with calibration='classic': Dwork-Roth Theorem A.1 proves "
                    f"sigma = sensitivity*sqrt(2 ln(1.25/delta))/epsilon only for epsilon in (0, 1), "
                    f"got epsilon={self.epsilon!r}; use calibration='analytic'"
                )
            sigma = classic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        else:
            sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        object.__setattr__(self, "sigma", sigma)

    def __call__(self, x: float | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: float | np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source: one ``"gaussian"`` step protecting ``x``
        with ℓ2 sensitivity Δ."""
        values = as_float_input(x)
        n = check_n(n)
        sigma = self.sigma
        return noise.add("gaussian", values, lambda rng: rng.normal(0.0, sigma, size=(n,) + values.shape),
                         sensitivity=self.sensitivity, norm="l2", scale=sigma, kind="gaussian")

    def log_density(self, x: float | np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each output row under ``x`` (Lebesgue measure), for either calibration:
        ``ln f_x(o) = Σ_j −ln(2πσ²)/2 − (o_j − x_j)²/(2σ²)`` with this instance's σ; ``out`` of shape ``(m,)``
        (scalar ``x``) or ``(m, k)``; returns ``(m,)``."""
        return gaussian_log_density(out, as_float_input(x), self.sigma)

    def true_delta(self, epsilon: float) -> float:
        """Exact hockey-stick δ(ε) between outputs on inputs at ℓ2 distance Δ (any ε ≥ 0)."""
        return gaussian_delta(self.sigma, epsilon, self.sensitivity)
