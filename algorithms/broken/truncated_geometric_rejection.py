"""BROKEN: range-restricted geometric mechanism by rejection (conditioning) instead of clamping.

Bug pattern: to keep a noisy count inside ``{0, …, upper}`` the code redraws the two-sided geometric
noise until ``x + Z`` lands in range. That *conditions* the law on the range, renormalising by an
input-dependent constant, instead of the post-processing clamp of Ghosh–Roughgarden–Sundararajan
(STOC 2009; :class:`algorithms.classic.truncated_geometric.TruncatedGeometric`). Same pattern as
rejection-sampled truncation of the Laplace mechanism analysed by Holohan et al., "The Bounded
Laplace Mechanism in Differential Privacy" (Journal of Privacy and Confidentiality).

With ``α = e^{−ε}``, on count ``c``: ``P(z | c) = α^{|z−c|}/Z(c)`` for ``z ∈ {0..U}``, where

    Z(c) = Σ_{z=0}^{U} α^{|z−c|} = (1 − α^{c+1} + α(1 − α^{U−c})) / (1 − α).

For adjacent counts ``c, c+1`` the log-ratio at output ``z`` is ``±ε + ln Z(c+1) − ln Z(c)`` (+ for
``z ≤ c``), so

    true ε = ε + max_{0 ≤ c < U} |ln Z(c+1) − ln Z(c)|,

attained at the boundary ``c = 0`` (``Z`` is symmetric and unimodal in ``c``):

    true ε = ε + ln((1 + α − α² − α^U)/(1 − α^{U+1}))  →  ε + ln(1 + e^{−ε} − e^{−2ε})  (U → ∞),

about 2ε for small ε. **At ε = 0.1: 0.16102 for upper = 5, 0.18260 in the large-upper limit**
(0.1 for upper = 1, where conditioning happens to be harmless). Note: the limit is *not*
``ε + ln(1 + e^{−ε})`` (= 0.7444 at ε = 0.1): ``Z(1)/Z(0)`` tends to ``1 + α − α²``, not
``1 + α``, because ``Z(1) = α + (1 − α^U)/(1 − α)`` and ``Z(0) = (1 − α^{U+1})/(1 − α)``.

Replay: **other** (conditioning the noise on the input-dependent range); not instrumented (no ``release``:
the redraws make the noise law depend on the count, so it is not a data-independent additive step, and the
correct clamped twin has no noise hooks); a frozen-noise replay would NOT flag it (``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import check_epsilon, check_n, check_positive_int
from ..classic.geometric import sample_two_sided_geometric
from ..classic.truncated_geometric import check_count

__all__ = ["TruncatedGeometricByRejection"]


@dataclass(frozen=True)
class TruncatedGeometricByRejection:
    """Claims ε; two-sided geometric (``α = e^{−ε}``) redrawn until in ``[0, upper]``. Output int64."""

    epsilon: float
    upper: int
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "other"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive_int("upper", self.upper)

    @property
    def alpha(self) -> float:
        """The geometric ratio ``e^{−ε}``."""
        return math.exp(-float(self.epsilon))

    def __call__(self, x: int, n: int, rng: np.random.Generator) -> np.ndarray:
        c = check_count(x, int(self.upper))
        n = check_n(n)
        out = c + sample_two_sided_geometric(self.alpha, n, rng)
        rejected = np.flatnonzero((out < 0) | (out > int(self.upper)))
        while rejected.size:
            out[rejected] = c + sample_two_sided_geometric(self.alpha, rejected.size, rng)
            still = (out[rejected] < 0) | (out[rejected] > int(self.upper))
            rejected = rejected[still]
        return out.astype(np.int64)

    def log_normalizer(self, c: int | np.ndarray) -> np.ndarray:
        """``ln Z(c)``, ``Z(c) = (1 − α^{c+1} + α(1 − α^{U−c}))/(1 − α)`` (expm1 for small ε)."""
        eps = float(self.epsilon)
        upper = int(self.upper)
        c_arr = np.asarray(c, dtype=np.float64)
        numerator = -np.expm1(-(c_arr + 1.0) * eps) - self.alpha * np.expm1(-(upper - c_arr) * eps)
        return np.log(numerator) - math.log(-math.expm1(-eps))

    def pmf(self, x: int) -> np.ndarray:
        """Exact output pmf over ``0..upper`` on count ``x``: ``α^{|z−x|}/Z(x)``."""
        c = check_count(x, int(self.upper))
        z = np.arange(int(self.upper) + 1, dtype=np.float64)
        return np.exp(-float(self.epsilon) * np.abs(z - c) - self.log_normalizer(c))

    def true_epsilon(self) -> float:
        """``ε + max_c |ln Z(c+1) − ln Z(c)|`` over adjacent counts (exact)."""
        log_z = self.log_normalizer(np.arange(int(self.upper) + 1))
        return float(self.epsilon) + float(np.max(np.abs(np.diff(log_z))))
