"""A Gaussian mechanism whose σ is too small for its (ε, δ) claim.

``x + N(0, σ²)`` with ``σ = factor × σ_analytic(ε, δ)`` (Balle & Wang, ICML 2018, Theorem 8: the smallest σ that is
(ε, δ)-DP at ℓ2 sensitivity Δ).  With factor < 1 the exact hockey-stick divergence
``δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)`` exceeds the claimed δ; the auditor can only show it when the
excess is large against its sampling error at the budget (``true_delta`` states it).  Factor 1 is the control.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..classic.gaussian import analytic_gaussian_sigma, gaussian_delta


def gaussian_draws(x: object, n: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of ``x + N(0, sigma²)`` per coordinate."""
    v = np.asarray(x, dtype=np.float64)
    return v + rng.normal(0.0, sigma, size=(n,) + v.shape)


def gaussian_log_density(x: object, out: np.ndarray, sigma: float) -> np.ndarray:
    """Log density of each output row of ``x + N(0, sigma²)`` per coordinate (rows along the first axis)."""
    z = (np.asarray(out, dtype=np.float64) - np.asarray(x, dtype=np.float64)) / sigma
    ld = -0.5 * np.log(2 * np.pi * sigma ** 2) - 0.5 * z * z
    return ld.reshape(len(ld), -1).sum(axis=1)


@dataclass(frozen=True)
class ScaledGaussian:
    epsilon: float
    delta: float
    factor: float = 1.0

    @property
    def sigma(self) -> float:
        return self.factor * analytic_gaussian_sigma(self.epsilon, self.delta, 1.0)

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return gaussian_draws(x, n, self.sigma, rng)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        return gaussian_log_density(x, out, self.sigma)

    def true_delta(self, epsilon: float) -> float:
        return gaussian_delta(self.sigma, epsilon, 1.0)
