"""The Laplace histogram.

Source: Dwork, McSherry, Nissim, Smith (TCC 2006), §1 (histogram queries have ℓ1 sensitivity 1 when
one record changes one count by one); Dwork & Roth (2014), Example 3.2 / §3.3; StatDP benchmark
``histogram`` and DP-Sniper ``NoisyHist1`` (catalogue row #5 of anchors-auditing.md §4.1).

``x`` is the vector of counts; neighbours differ by 1 in exactly one count (ℓ1 distance 1). Release
``x + Lap(1/ε)`` per entry. True ε = ε exactly (attained), 0.1 at ε = 0.1. Laplace scale ε instead
of 1/ε is the broken twin :class:`algorithms.broken.histogram_scale_epsilon.HistogramScaleEpsilon`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from algorithms.classic._validation import as_finite_vector, check_epsilon, check_n

__all__ = ["Histogram", "as_counts"]


def as_counts(x: object) -> np.ndarray:
    """A non-empty 1-D vector of (real-valued, finite) bin counts."""
    return as_finite_vector(x, "counts")


@dataclass(frozen=True)
class Histogram:
    """``x + Lap(1/ε)`` per bin. Output: float64 of shape ``(n, k)``."""

    epsilon: float
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    @property
    def scale(self) -> float:
        """Laplace scale ``1/ε``."""
        return 1.0 / float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        counts = as_counts(x)
        n = check_n(n)
        return counts + rng.laplace(0.0, self.scale, size=(n, counts.shape[0]))

    def true_epsilon(self) -> float:
        """Exact ε for ℓ1 distance-1 count vectors: the claimed ε."""
        return float(self.epsilon)
