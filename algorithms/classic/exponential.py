"""The exponential mechanism over a finite candidate set.

Source: McSherry & Talwar, "Mechanism Design via Differential Privacy" (FOCS 2007); Dwork & Roth
(2014), Definition 3.4 and Theorem 3.10: select candidate ``r`` with probability proportional to
``exp(ε u(x, r) / (2Δu))``, where Δu bounds ``|u(x, r) − u(x', r)|`` for every ``r`` and neighbours
``x, x'``. Input ``x`` here is the utility vector ``u = (u(x, r))_r`` itself, so neighbouring inputs
are utility vectors at ℓ∞ distance ≤ Δu.

Sampling: Gumbel-max trick — ``argmax_r (ε u_r/(2Δu) + G_r)`` with ``G_r`` i.i.d. standard Gumbel has
exactly the softmax law (Gumbel 1954; e.g. Durfee & Rogers, NeurIPS 2019, Lemma 4.2), vectorised as
one ``(n, m)`` Gumbel draw.

True ε = ε: each log-probability changes by at most ε/2 through the numerator and ε/2 through the
normaliser; the bound is approached (not attained) when the selected candidate loses Δu, all others
gain Δu, and the others dominate the normaliser. 0.1 at ε = 0.1. The broken twin without the factor 2
is :class:`algorithms.broken.exponential_no_half.ExponentialMechanismNoHalf` (true 2ε).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import softmax

from ._validation import as_finite_vector, check_epsilon, check_n, check_positive
from ..noise import NoiseSource

__all__ = ["ExponentialMechanism", "exponential_mechanism_pmf", "gumbel_argmax", "as_utilities"]


def as_utilities(u: object) -> np.ndarray:
    """A non-empty 1-D vector of finite utilities (one score per candidate)."""
    return as_finite_vector(u, "utilities")


def gumbel_argmax(logits: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. draws from ``softmax(logits)`` by the Gumbel-max trick (int64 indices)."""
    noisy = logits + rng.gumbel(0.0, 1.0, size=(n, logits.shape[0]))
    return np.argmax(noisy, axis=1).astype(np.int64)


def exponential_mechanism_pmf(u: np.ndarray, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """Exact selection pmf ``softmax(ε u / (2Δu))`` (log-space, stable for large scores)."""
    check_epsilon(epsilon)
    check_positive("sensitivity", sensitivity)
    return softmax(float(epsilon) * as_utilities(u) / (2.0 * float(sensitivity)))


@dataclass(frozen=True)
class ExponentialMechanism:
    """Select index ``r`` with probability ∝ ``exp(ε u_r / (2Δu))``; ``x`` is the utility vector.

    Output: int64 of shape ``(n,)``.

    Noise steps (:meth:`release`): one ``"em"`` selection over the utility vector ``x`` (shared by all
    runs) with ℓ∞ sensitivity Δu and ``scale = ε/(2Δu)`` (the coefficient of the utilities in the logits).
    """

    epsilon: float
    sensitivity: float = 1.0
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive("sensitivity", self.sensitivity)

    @property
    def coefficient(self) -> float:
        """``ε/(2Δu)``: the logits are ``coefficient · u``."""
        return float(self.epsilon) / (2.0 * float(self.sensitivity))

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source: one ``"em"`` selection protecting the
        utilities with ℓ∞ sensitivity Δu, ``scale = ε/(2Δu)``."""
        utilities = as_utilities(x)
        n = check_n(n)
        logits = float(self.epsilon) * utilities / (2.0 * float(self.sensitivity))
        return noise.select("em", utilities, lambda rng: gumbel_argmax(logits, n, rng),
                            sensitivity=float(self.sensitivity), norm="linf", scale=self.coefficient)

    def pmf(self, x: np.ndarray) -> np.ndarray:
        """Exact selection pmf on utility vector ``x``."""
        return exponential_mechanism_pmf(x, self.epsilon, self.sensitivity)

    def true_epsilon(self) -> float:
        """ε (supremum over utility vectors at ℓ∞ distance Δu; approached, not attained)."""
        return float(self.epsilon)
