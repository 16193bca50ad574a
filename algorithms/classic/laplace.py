"""The Laplace mechanism.

Source: Dwork, McSherry, Nissim, Smith, "Calibrating Noise to Sensitivity in Private Data Analysis"
(TCC 2006); Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014), Definition 3.3
and Theorem 3.6: for ``f`` of ℓ1 sensitivity Δ, ``f(x) + (Y_1, ..., Y_k)`` with ``Y_i ~ Lap(Δ/ε)`` i.i.d.
is ε-DP.

Catalogue: the ``Laplace`` control of StatDP (Ding et al., CCS 2018) and DP-Sniper (Bichsel et al., S&P 2021).
True ε = ε exactly (the density ratio ``exp(ε(|y - f(x')| - |y - f(x)|)/Δ)`` reaches ``e^ε`` for every
output beyond both means when ``‖f(x) - f(x')‖₁ = Δ``); 0.1 at the catalogue parameter ε = 0.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._validation import as_float_input, check_epsilon, check_n, check_positive
from ..noise import NoiseSource, laplace_noise

__all__ = ["Laplace", "laplace_log_density"]


def laplace_log_density(out: np.ndarray, centre: float | np.ndarray, scale: float) -> np.ndarray:
    """Log density of each row of ``out`` (first axis the rows) under ``centre + Lap(scale)`` per coordinate:
    ``Σ_j −ln(2b) − |o_j − c_j|/b`` w.r.t. Lebesgue measure, ``−inf`` for a row holding NaN."""
    z = np.asarray(out, dtype=np.float64) - np.asarray(centre, dtype=np.float64)
    ld = -math.log(2.0 * float(scale)) - np.abs(z) / float(scale)
    ld = ld.reshape(ld.shape[0], -1).sum(axis=1)
    return np.where(np.isnan(ld), -np.inf, ld)


@dataclass(frozen=True)
class Laplace:
    """``x + Lap(Δ/ε)`` per coordinate; ``x`` a scalar or 1-D vector of ℓ1 sensitivity Δ.

    Output: float64 of shape ``(n,)`` (scalar ``x``) or ``(n, k)`` (vector of length ``k``).
    """

    epsilon: float
    sensitivity: float = 1.0
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive("sensitivity", self.sensitivity)

    @property
    def scale(self) -> float:
        """The Laplace scale ``b = Δ/ε``."""
        return float(self.sensitivity) / float(self.epsilon)

    def __call__(self, x: float | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: float | np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source (:mod:`algorithms.noise`): one Laplace
        step protecting ``x`` with ℓ1 sensitivity Δ, its draws from :func:`algorithms.noise.laplace_noise` (the law
        of ``rng.laplace``)."""
        values = as_float_input(x)
        n = check_n(n)
        scale = self.scale
        return noise.add("laplace", values, lambda rng: laplace_noise(rng, scale, (n,) + values.shape),
                         sensitivity=self.sensitivity, norm="l1", scale=scale, kind="laplace")

    def log_density(self, x: float | np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each output row under ``x`` (Lebesgue measure on ℝ or ℝ^k), the law of
        :meth:`release`: ``ln f_x(o) = Σ_j −ln(2b) − |o_j − x_j|/b`` with ``b =`` :attr:`scale`; ``out`` of shape
        ``(m,)`` (scalar ``x``) or ``(m, k)``; returns ``(m,)``.  Subclasses that change only :attr:`scale` keep it."""
        return laplace_log_density(out, as_float_input(x), self.scale)

    def true_epsilon(self) -> float:
        """Exact ε for ℓ1 neighbours at distance Δ: the claimed ε (tight)."""
        return float(self.epsilon)
