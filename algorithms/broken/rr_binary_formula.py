"""BROKEN: k-ary randomized response with the binary keep probability.

Bug pattern: using Warner's binary formula ``p = e^ε/(e^ε + 1)`` for the probability of reporting
the true category when there are k > 2 categories (the k-ary formula is ``e^ε/(e^ε + k − 1)``,
Wang et al. USENIX Security 2017 §4.1); the remaining mass ``1 − p`` is split evenly over the
``k − 1`` other categories, each getting ``q = 1/((e^ε + 1)(k − 1))``.

True ε = ln(p/q) = **ε + ln(k − 1)** (local DP, attained by every pair of distinct inputs):
0.1 + ln 2 ≈ 0.7931 at ε = 0.1, k = 3; 0.1 + ln 3 ≈ 1.1986 at k = 4.
Correct twin: :class:`algorithms.classic.randomized_response.RandomizedResponse`.

Replay: **calibration bug** (wrong keep probability); not instrumented (no ``release``: randomized response
is neither additive noise nor a utility-scored selection, and its correct twin has no noise hooks), and a
frozen-noise replay would NOT flag it anyway (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import check_epsilon, check_n, check_positive_int
from ..classic.randomized_response import (
    check_category,
    keep_or_other_pmf,
    sample_randomized_response,
)

__all__ = ["RandomizedResponseBinaryFormula"]


@dataclass(frozen=True)
class RandomizedResponseBinaryFormula:
    """Claims ε; keeps the true category with ``e^ε/(e^ε + 1)`` although ``k ≥ 3``. Output int64."""

    epsilon: float
    k: int
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "calibration"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if check_positive_int("k", self.k) < 3:
            raise ValueError(
                f"k must be an integer >= 3 (at k = 2 the binary formula is correct; use "
                f"RandomizedResponse), got {self.k!r}"
            )

    @property
    def keep_probability(self) -> float:
        """The binary formula ``e^ε/(e^ε + 1)``."""
        return 1.0 / (1.0 + math.exp(-float(self.epsilon)))

    def __call__(self, x: int | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        values = check_category(x, int(self.k))
        return sample_randomized_response(values, self.keep_probability, int(self.k), check_n(n), rng)

    def pmf(self, x: int) -> np.ndarray:
        """Exact output pmf on category ``x``."""
        c = int(check_category(x, int(self.k)))
        return keep_or_other_pmf(c, self.keep_probability, int(self.k))

    def true_epsilon(self) -> float:
        """``ε + ln(k − 1)``."""
        return float(self.epsilon) + math.log(int(self.k) - 1)
