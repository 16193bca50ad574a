"""k-ary randomized response (generalised / direct encoding).

Sources: Warner, "Randomized Response" (JASA 1965) for k = 2; Kairouz, Oh, Viswanath, "Extremal
Mechanisms for Local Differential Privacy" (NeurIPS 2014) and Wang, Blocki, Li, Jha, "Locally
Differentially Private Protocols for Frequency Estimation" (USENIX Security 2017), §4.1 "Direct
Encoding" for general k: report the true value with probability ``p = e^ε/(e^ε + k − 1)``, otherwise
one of the other ``k − 1`` values uniformly, i.e. each with ``q = 1/(e^ε + k − 1)``.

True ε = ln(p/q) = ε exactly (local DP: any two inputs are neighbours); 0.1 at ε = 0.1.
The broken twin that applies the binary formula for k > 2 categories is
:class:`algorithms.broken.rr_binary_formula.RandomizedResponseBinaryFormula`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._validation import as_int_input, check_epsilon, check_n, check_positive_int

__all__ = [
    "RandomizedResponse",
    "randomized_response_pmf",
    "sample_randomized_response",
    "keep_or_other_pmf",
    "check_category",
]


def check_category(x: object, k: int) -> np.ndarray:
    values = as_int_input(x)
    if np.any(values < 0) or np.any(values >= k):
        raise ValueError(f"x must hold categories in [0, {k - 1}], got {x!r}")
    return values


def sample_randomized_response(
    values: np.ndarray, keep_probability: float, k: int, n: int, rng: np.random.Generator
) -> np.ndarray:
    """Keep each entry with ``keep_probability``, else replace it by a uniform *other* category."""
    shape = (n,) + values.shape
    keep = rng.random(shape) < keep_probability
    other = rng.integers(0, k - 1, size=shape, dtype=np.int64)
    other = other + (other >= values)  # skip the true value: uniform over the k - 1 others
    return np.where(keep, values, other).astype(np.int64)


def keep_or_other_pmf(c: int, keep_probability: float, k: int) -> np.ndarray:
    """Pmf over ``0..k-1``: ``keep_probability`` on ``c``, the rest split evenly over the others."""
    pmf = np.full(k, (1.0 - keep_probability) / (k - 1))
    pmf[c] = keep_probability
    return pmf


def randomized_response_pmf(x: int, epsilon: float, k: int) -> np.ndarray:
    """Exact output pmf over ``0..k-1`` of k-ary randomized response on input category ``x``."""
    check_epsilon(epsilon)
    if check_positive_int("k", k) < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    c = int(check_category(x, k))
    return keep_or_other_pmf(c, 1.0 / (1.0 + (k - 1) * math.exp(-float(epsilon))), k)


@dataclass(frozen=True)
class RandomizedResponse:
    """k-ary randomized response on a category ``x ∈ {0..k-1}`` (scalar or 1-D vector of users).

    Output: int64 of shape ``(n,)`` or ``(n, m)``.
    """

    epsilon: float
    k: int = 2
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if check_positive_int("k", self.k) < 2:
            raise ValueError(f"k must be an integer >= 2, got {self.k!r}")

    @property
    def keep_probability(self) -> float:
        """``e^ε/(e^ε + k − 1)``, computed as ``1/(1 + (k − 1)e^{−ε})`` (no overflow)."""
        return 1.0 / (1.0 + (int(self.k) - 1) * math.exp(-float(self.epsilon)))

    def __call__(self, x: int | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        values = check_category(x, int(self.k))
        n = check_n(n)
        return sample_randomized_response(values, self.keep_probability, int(self.k), n, rng)

    def pmf(self, x: int) -> np.ndarray:
        """Exact output pmf on category ``x``."""
        return randomized_response_pmf(x, self.epsilon, self.k)

    def true_epsilon(self) -> float:
        """Exact ε = ln(p/q): the claimed ε."""
        return float(self.epsilon)
