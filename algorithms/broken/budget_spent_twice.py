"""BROKEN: the same query answered twice, each time with the full budget.

Bug pattern: budget double spending — two releases of one statistic, each calibrated for ε, while
the accountant records ε in total. dp-recorder ``test_double_spending`` (Cebere et al., arXiv
2602.17454); anchors-auditing.md §4.2 row #28.

Release ``(x + Lap(Δ/ε), x + Lap(Δ/ε))`` (independent). By composition the loss is at most 2ε, and
the joint density ratio ``exp(ε(|y₁−x'| − |y₁−x| + |y₂−x'| − |y₂−x|)/Δ)`` reaches ``e^{2ε}`` when
both outputs lie beyond both inputs: true ε = **2ε** exactly (0.2 at ε = 0.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algorithms.classic._validation import as_float_input, check_n
from algorithms.classic.laplace import Laplace

__all__ = ["BudgetSpentTwice"]


@dataclass(frozen=True)
class BudgetSpentTwice(Laplace):
    """Claims ε in total; releases two independent ``x + Lap(Δ/ε)``. Output float64 ``(n, 2)``."""



    def __call__(self, x: float, n: int, rng: np.random.Generator) -> np.ndarray:
        value = as_float_input(x)
        if value.ndim != 0:
            raise ValueError(f"x must be a scalar query answer, got shape {value.shape}")
        n = check_n(n)
        return float(value) + rng.laplace(0.0, self.scale, size=(n, 2))

    def true_epsilon(self) -> float:
        """Exact ε = 2ε."""
        return 2.0 * float(self.epsilon)
