"""The Laplace mechanism.

Source: Dwork, McSherry, Nissim, Smith, "Calibrating Noise to Sensitivity in Private Data Analysis"
(TCC 2006); Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014), Definition 3.3
and Theorem 3.6: for ``f`` of ℓ1 sensitivity Δ, ``f(x) + (Y_1, ..., Y_k)`` with ``Y_i ~ Lap(Δ/ε)`` i.i.d.
is ε-DP.

Catalogue: anchors-auditing.md §4.1 (the ``Laplace`` control of StatDP / DP-Sniper).
True ε = ε exactly (the density ratio ``exp(ε(|y - f(x')| - |y - f(x)|)/Δ)`` reaches ``e^ε`` for every
output beyond both means when ``‖f(x) - f(x')‖₁ = Δ``); 0.1 at the catalogue parameter ε = 0.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from algorithms.classic._validation import as_float_input, check_epsilon, check_n, check_positive
from algorithms.noise import NoiseSource

__all__ = ["Laplace"]


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
        step protecting ``x`` with ℓ1 sensitivity Δ."""
        values = as_float_input(x)
        n = check_n(n)
        scale = self.scale
        return noise.add("laplace", values, lambda rng: rng.laplace(0.0, scale, size=(n,) + values.shape),
                         sensitivity=self.sensitivity, norm="l1", scale=scale, kind="laplace")

    def true_epsilon(self) -> float:
        """Exact ε for ℓ1 neighbours at distance Δ: the claimed ε (tight)."""
        return float(self.epsilon)
