"""BROKEN: exponential mechanism without the factor 1/2 in the exponent.

Bug pattern: selecting with probability ∝ ``exp(ε u/Δu)`` instead of ``exp(ε u/(2Δu))``
(McSherry & Talwar 2007; Dwork & Roth 2014, Def. 3.4 / Thm 3.10). The factor 2 may only be dropped
for utilities that are monotone in the data (all scores move in the same direction); here
utilities are general. The same bug in PAMST's per-step exponential mechanism is
:mod:`algorithms.broken.pamst_no_half`.
Neighbours: utility vectors at ℓ∞ distance ≤ Δu (entries may move in opposite directions).

True ε = **2ε**: the log-probability of a candidate changes by at most ε through its own score and
ε through the normaliser; the supremum is approached when the selected candidate loses Δu and the
others (which dominate the normaliser) gain Δu. **0.2 at ε = 0.1.**
Replay: **calibration bug** -- the ``"em"`` step declares the right Δu; only its coefficient
``scale = ε/Δu`` is twice too large, which a frozen-noise replay will NOT flag (``BUG_KIND = "calibration"``).
Correct twin: :class:`algorithms.classic.exponential.ExponentialMechanism`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import softmax

from ..classic._validation import check_epsilon, check_n, check_positive
from ..classic.exponential import as_utilities, gumbel_argmax
from ..noise import NoiseSource

__all__ = ["ExponentialMechanismNoHalf"]


@dataclass(frozen=True)
class ExponentialMechanismNoHalf:
    """Claims ε, selects index ``r`` with probability ∝ ``exp(ε u_r/Δu)``. Output: int64 ``(n,)``.

    Noise steps (:meth:`release`): one ``"em"`` selection over the utilities, ℓ∞ sensitivity Δu,
    ``scale = ε/Δu`` (the buggy coefficient).
    """

    epsilon: float
    sensitivity: float = 1.0
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "calibration"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive("sensitivity", self.sensitivity)

    def _logits(self, x: np.ndarray) -> np.ndarray:
        return float(self.epsilon) * as_utilities(x) / float(self.sensitivity)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler against an explicit noise source: one ``"em"`` selection (Δu right, scale ε/Δu)."""
        utilities = as_utilities(x)
        logits = float(self.epsilon) * utilities / float(self.sensitivity)
        n = check_n(n)
        return noise.select("em", utilities, lambda rng: gumbel_argmax(logits, n, rng),
                            sensitivity=float(self.sensitivity), norm="linf",
                            scale=float(self.epsilon) / float(self.sensitivity))

    def pmf(self, x: np.ndarray) -> np.ndarray:
        """Exact selection pmf ``softmax(ε u/Δu)``."""
        return softmax(self._logits(x))

    def true_epsilon(self) -> float:
        """2ε (supremum over utility vectors at ℓ∞ distance Δu; approached, not attained)."""
        return 2.0 * float(self.epsilon)
