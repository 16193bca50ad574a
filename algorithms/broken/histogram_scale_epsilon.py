"""BROKEN: Laplace histogram with scale ε instead of 1/ε.

Bug pattern: StatDP benchmark ``histogram_eps`` (Ding et al., CCS 2018) / DP-Sniper
``NoisyHist2`` — anchors-auditing.md §4.1 row #6. One record changes one count by 1 (ℓ1
sensitivity 1); the code adds ``Lap(ε)`` per bin.

True ε = 1/ε exactly (Laplace scale b at ℓ1 distance 1 costs 1/b): **10 at ε = 0.1**. Note that
1/ε < ε when ε > 1: there the "bug" over-noises and the claim actually holds.
Correct twin: :class:`algorithms.classic.histogram.Histogram`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from algorithms.classic._validation import check_epsilon, check_n
from algorithms.classic.histogram import as_counts

__all__ = ["HistogramScaleEpsilon"]


@dataclass(frozen=True)
class HistogramScaleEpsilon:
    """Claims ε, adds ``Lap(ε)`` per bin. Output: float64 ``(n, k)``."""

    epsilon: float
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    @property
    def scale(self) -> float:
        """The (inverted) Laplace scale ``ε``."""
        return float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        counts = as_counts(x)
        n = check_n(n)
        return counts + rng.laplace(0.0, self.scale, size=(n, counts.shape[0]))

    def true_epsilon(self) -> float:
        """Exact ε = 1/ε."""
        return 1.0 / float(self.epsilon)
