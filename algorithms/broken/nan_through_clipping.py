"""BROKEN: bounded sum whose clipping lets NaN through.

Bug pattern: ``np.clip(NaN, l, u)`` is NaN, so one NaN record turns the released sum into NaN
(NaN + noise = NaN). dp-recorder ``test_nan_injection`` (Cebere et al., arXiv 2602.17454);
Desfontaines, PhD thesis (ETH Zürich 2020), §4.2.6 (``ANON_SUM(IF uid = … THEN 0/0 …)``);
anchors-auditing.md §4.2 row #26.

True ε = **∞**: on ``x`` containing a NaN record the output is NaN with probability 1; on the
neighbour without that record (add/remove) it is never NaN (∞ at ε = 0.1). Without NaN records the
mechanism is the correct clipped sum.
Correct twin (NaN mapped to ``lower`` before clipping): :class:`algorithms.classic.clipped_sum.ClippedSum`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from algorithms.classic._validation import as_dataset, check_epsilon, check_n
from algorithms.classic.clipped_sum import check_bounds, sum_sensitivity

__all__ = ["SumNaNThroughClipping"]


@dataclass(frozen=True)
class SumNaNThroughClipping:
    """``Σ np.clip(x_i, l, u) + Lap(max(|l|,|u|)/ε)``, NaN records propagate. Output float64 ``(n,)``."""

    epsilon: float
    lower: float
    upper: float
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_bounds(self.lower, self.upper)

    @property
    def scale(self) -> float:
        """Laplace scale ``max(|l|, |u|)/ε``."""
        return sum_sensitivity(self.lower, self.upper) / float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        records = as_dataset(x)
        n = check_n(n)
        total = float(np.sum(np.clip(records, float(self.lower), float(self.upper))))
        return total + rng.laplace(0.0, self.scale, size=n)

    def true_epsilon(self) -> float:
        """∞ (NaN output on one side of a neighbouring pair only)."""
        return math.inf
