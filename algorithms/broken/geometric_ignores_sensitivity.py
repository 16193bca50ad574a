"""BROKEN: geometric mechanism whose ratio ignores the declared sensitivity.

Bug pattern: noise calibrated for sensitivity 1 on a query of sensitivity Δ — ``α = exp(−ε)``
instead of ``exp(−ε/Δ)`` (the integer analogue of the Google ``…WithInsufficientNoise`` tests and of
dp-recorder's sensitivity miscalibration; anchors-auditing.md §4.2 rows #22, #25).

True ε = **Δ·ε** exactly (pmf ratio ``α^{−Δ} = e^{Δε}`` for outputs beyond both values):
**0.2 at ε = 0.1, Δ = 2**. Correct twin: :class:`algorithms.classic.geometric.Geometric`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from algorithms.classic._validation import as_int_input, check_epsilon, check_n, check_positive_int
from algorithms.classic.geometric import sample_two_sided_geometric

__all__ = ["GeometricIgnoresSensitivity"]


@dataclass(frozen=True)
class GeometricIgnoresSensitivity:
    """Claims ε for sensitivity Δ, uses ``α = exp(−ε)``. Output int64 ``(n,)`` or ``(n, k)``."""

    epsilon: float
    sensitivity: int = 2
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if check_positive_int("sensitivity", self.sensitivity) < 2:
            raise ValueError(
                "sensitivity must be an integer >= 2 (at sensitivity 1 this is the correct "
                f"Geometric mechanism), got {self.sensitivity!r}"
            )

    @property
    def alpha(self) -> float:
        """The (wrong) geometric ratio ``exp(−ε)``."""
        return math.exp(-float(self.epsilon))

    def __call__(self, x: int | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        values = as_int_input(x)
        n = check_n(n)
        return values + sample_two_sided_geometric(self.alpha, (n,) + values.shape, rng)

    def true_epsilon(self) -> float:
        """Exact ε = Δ·ε."""
        return int(self.sensitivity) * float(self.epsilon)
