"""The truncated (range-restricted) geometric mechanism for a count in ``{0, ..., upper}``.

Source: Ghosh, Roughgarden, Sundararajan, "Universally Utility-Maximizing Privacy Mechanisms"
(STOC 2009), §2 — the α-geometric mechanism followed by the remap of out-of-range outputs to the
nearest end of ``{0, ..., upper}`` (their "range-restricted" geometric mechanism, the one shown
universally optimal). With ``α = exp(-ε)`` and a count query (sensitivity 1) the pmf on input ``c`` is::

    P(0     | c) = α^c / (1 + α)
    P(z     | c) = (1 - α)/(1 + α) · α^{|z - c|}      for 0 < z < upper
    P(upper | c) = α^{upper - c} / (1 + α)

Clamping is post-processing of the two-sided geometric mechanism, so the result is ε-DP; the ratio
``e^ε`` is attained (interior outputs and both ends), hence true ε = ε exactly (0.1 at ε = 0.1).

Not to be confused with DP-Sniper's ``TruncatedGeometric`` benchmark (Balcer–Vadhan ``GeoSample``,
true ε = ln(1 + 2^{-⌈ln(2/ε)⌉})), a different finite-precision construction. The *conditioning* variant
(redraw until in range) is the broken twin
:class:`algorithms.broken.truncated_geometric_rejection.TruncatedGeometricByRejection`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._validation import (
    as_int_input,
    check_epsilon,
    check_n,
    check_positive_int,
)
from .geometric import sample_two_sided_geometric

__all__ = ["TruncatedGeometric", "truncated_geometric_pmf", "check_count"]


def check_count(x: object, upper: int) -> int:
    """A scalar integer count in ``[0, upper]``."""
    arr = as_int_input(x)
    if arr.ndim != 0 or not 0 <= int(arr) <= upper:
        raise ValueError(f"x must be a scalar integer count in [0, {upper}], got {x!r}")
    return int(arr)


def truncated_geometric_pmf(x: int, epsilon: float, upper: int) -> np.ndarray:
    """Exact pmf over ``0..upper`` of the clamped two-sided geometric mechanism on count ``x``."""
    check_epsilon(epsilon)
    upper = check_positive_int("upper", upper)
    c = check_count(x, upper)
    alpha = math.exp(-float(epsilon))
    z = np.arange(upper + 1, dtype=np.float64)
    pmf = (1.0 - alpha) / (1.0 + alpha) * np.power(alpha, np.abs(z - c))
    pmf[0] = alpha**c / (1.0 + alpha)
    pmf[upper] = alpha ** (upper - c) / (1.0 + alpha)
    return pmf


@dataclass(frozen=True)
class TruncatedGeometric:
    """Two-sided geometric noise (``α = e^{-ε}``) on a count ``x ∈ [0, upper]``, clamped to the range.

    Output: int64 of shape ``(n,)``.
    """

    epsilon: float
    upper: int
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive_int("upper", self.upper)

    def __call__(self, x: int, n: int, rng: np.random.Generator) -> np.ndarray:
        c = check_count(x, int(self.upper))
        n = check_n(n)
        noise = sample_two_sided_geometric(math.exp(-float(self.epsilon)), n, rng)
        return np.clip(c + noise, 0, int(self.upper)).astype(np.int64)

    def pmf(self, x: int) -> np.ndarray:
        """Exact output pmf on count ``x`` (see :func:`truncated_geometric_pmf`)."""
        return truncated_geometric_pmf(x, self.epsilon, self.upper)

    def true_epsilon(self) -> float:
        """Exact ε for counts differing by one: the claimed ε (attained)."""
        return float(self.epsilon)
