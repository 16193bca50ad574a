"""A Laplace release that, with a small probability, releases its exact input instead.

The pattern: a debugging or fallback branch (``if rng.random() < p: return x``), a cache hit that skips the
noise, an exception handler that returns the raw value.  The continuous part is ε-DP; the point mass at the
exact input is seen under ``x`` and never under a neighbour, so the true ε is **∞** for every ``p > 0``.
Published as "hiding mass in low-probability events", which fools black-box auditors that choose events on a
search sample too small to see it (Curator attack, arXiv 2411.16516).

:class:`RareLeak` releases the input (scalar or vector) with probability ``p``; :class:`TriggeredLeak` only when
its input's first coordinate is above a public trigger -- a data-dependent leak.  Correct twins with point
masses of their own (post-processing, so still ε-DP): :class:`RoundedLaplace` (rounded to a grid) and
:class:`ClippedLaplace` (clipped to ``[low, high]``: atoms at both bounds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def _laplace(x: object, n: int, scale: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(x, dtype=np.float64)
    return v, v + rng.laplace(0.0, scale, size=(n,) + v.shape)


@dataclass(frozen=True)
class RareLeak:
    """``x + Lap(Δ/ε)``, except with probability ``p``: ``x`` itself.  True ε = ∞."""

    epsilon: float
    p: float
    sensitivity: float = 1.0

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        v, out = _laplace(x, n, self.sensitivity / self.epsilon, rng)
        leak = rng.random(n) < self.p
        out[leak] = v
        return out

    def true_epsilon(self) -> float:
        return math.inf


@dataclass(frozen=True)
class TriggeredLeak(RareLeak):
    """Like :class:`RareLeak`, but the leak branch runs only when ``x[0] >= trigger`` (data-dependent)."""

    trigger: float = 1.0

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        if np.ravel(np.asarray(x, dtype=np.float64))[0] >= self.trigger:
            return RareLeak.__call__(self, x, n, rng)
        return _laplace(x, n, self.sensitivity / self.epsilon, rng)[1]


@dataclass(frozen=True)
class RoundedLaplace:
    """``round(x + Lap(Δ/ε), decimals)``: ε-DP by post-processing; every output is a point mass."""

    epsilon: float
    decimals: int = 1

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.round(_laplace(x, n, 1.0 / self.epsilon, rng)[1], self.decimals)

    def true_epsilon(self) -> float:
        return float(self.epsilon)


@dataclass(frozen=True)
class ClippedLaplace:
    """``clip(x + Lap(Δ/ε), low, high)``: ε-DP by post-processing, with point masses at both bounds."""

    epsilon: float
    low: float = -1.0
    high: float = 2.0

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.clip(_laplace(x, n, 1.0 / self.epsilon, rng)[1], self.low, self.high)

    def true_epsilon(self) -> float:
        return float(self.epsilon)
