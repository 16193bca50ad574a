"""The exponential mechanism over hundreds of candidates.

McSherry & Talwar (FOCS 2007): select ``r`` with probability ∝ ``exp(ε·u(x, r)/(2Δu))``; ε-DP for utilities of
sensitivity Δu.  Input: the utility vector ``u`` (one score per candidate; neighbours change every score by at
most Δu).  :class:`ExponentialMechanismOverCandidates` with ``coefficient = 2`` is correct; ``coefficient = 1``
drops the factor 2 (the frequent bug of using ``exp(ε·u/Δu)``): true ε = 2ε on pairs whose scores move in
opposite directions.  Output: int64 candidate codes ``(n,)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import log_softmax


@dataclass(frozen=True)
class ExponentialMechanismOverCandidates:
    epsilon: float
    coefficient: float = 2.0             # 2: correct; 1: the missing factor 2

    def _logits(self, x: object) -> np.ndarray:
        return self.epsilon * np.asarray(x, dtype=np.float64) / self.coefficient

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        g = self._logits(x) + rng.gumbel(size=(n, np.size(x)))
        return g.argmax(axis=1).astype(np.int64)

    def pmf(self, x: object) -> np.ndarray:
        return np.exp(log_softmax(self._logits(x)))

    def true_epsilon(self) -> float:
        return 2.0 * self.epsilon / self.coefficient
