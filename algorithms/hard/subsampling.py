"""Privacy amplification by Poisson subsampling, claimed wrongly.

Each record is kept with probability ``q``, then the kept records are counted with ``Lap(1/ε)`` (ε-DP for
add/remove-one).  Amplification gives ``ε' = ln(1 + q(e^ε − 1))`` (Balle, Barthe & Gaboardi, NeurIPS 2018,
Theorem 8; Li, Qardaji & Su 2012), and for this mechanism it is attained in the tail: on ``x' = x + one record``
the output law is ``(1 − q)·Lap(c) + q·Lap(c + 1)`` against ``Lap(c)``, whose ratio tends to
``(1 − q) + q e^ε`` as the output grows.  The common misuse claims ``q·ε`` instead: at ε = 2, q = 0.5 that is
1.0 against a true 1.434.

Input: the number of records (a count; neighbours differ by one).  Output: float64 ``(n,)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SubsampledLaplaceCount:
    """``Binomial(x, q) + Lap(1/ε)``; true ε = ln(1 + q(e^ε − 1)) for add/remove-one."""

    epsilon: float
    q: float

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        count = int(np.asarray(x).ravel()[0])
        return rng.binomial(count, self.q, size=n) + rng.laplace(0.0, 1.0 / self.epsilon, size=n)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """``ln Σ_k Binom(k; x, q)·Lap(o − k; 1/ε)``."""
        count = int(np.asarray(x).ravel()[0])
        k = np.arange(count + 1)
        logw = (math.lgamma(count + 1) - np.array([math.lgamma(i + 1) + math.lgamma(count - i + 1) for i in k])
                + k * math.log(self.q) + (count - k) * math.log1p(-self.q))
        o = np.asarray(out, dtype=np.float64).reshape(-1, 1)
        terms = logw + math.log(self.epsilon / 2) - self.epsilon * np.abs(o - k)
        m = terms.max(axis=1, keepdims=True)
        return (m + np.log(np.exp(terms - m).sum(axis=1, keepdims=True))).ravel()

    def true_epsilon(self) -> float:
        return math.log1p(self.q * math.expm1(self.epsilon))
