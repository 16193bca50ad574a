"""Ports of DP-Sniper's benchmark mechanisms that the project's catalogue does not have (for ``bench_dpsniper``).

Each follows DP-Sniper's own code (``eth-sri/dp-sniper`` at the commit pinned in
:data:`benchmarks.bench_dpsniper.DPSNIPER_COMMIT`) draw for draw, vectorised over the ``n`` outputs, with the
sampling contract of the project (``mechanism(x, n, rng) -> ndarray`` with ``n`` rows, noise from ``rng`` only).
Every other mechanism of DP-Sniper's default set maps to a class of ``algorithms/`` (see
:data:`benchmarks.bench_dpsniper.MAPPING`).

* :class:`GeoSample` -- ``dpsniper/mechanisms/geometric.py``, class ``TruncatedGeometricMechanism``: Balcer and
  Vadhan, "Differential Privacy on Finite Computers" (ITCS 2018; arXiv:1709.05396), Algorithm 4.8 ``GeoSample``,
  ε-DP with ε = ln(1 + 2^-k), k = ⌈ln(2/ε)⌉ (their Theorem 4.7).  Not the range-restricted geometric mechanism of
  :mod:`algorithms.classic.truncated_geometric`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = ["GeoSample", "geosample_cdf", "geosample_pmf"]


def geosample_cdf(c: int, epsilon: float = 0.1, n: int = 5) -> np.ndarray:
    """``F(z)`` for ``z = 0..n`` on count ``c`` as integers (``TruncatedGeometricMechanism._compute_f``):
    ``F(z) = 2^{k(c-z)} (2^k+1)^{n-(c-z)}`` for ``z < c``, ``d − 2^{k(z-c+1)} (2^k+1)^{n-1-(z-c)}`` for
    ``c ≤ z < n``, ``F(n) = d = (2^{k+1}+1)(2^k+1)^{n-1}``; exact in Python integers."""
    k = math.ceil(math.log(2.0 / epsilon))
    d = (2 ** (k + 1) + 1) * (2 ** k + 1) ** (n - 1)
    f = []
    for z in range(n + 1):
        if z < c:
            f.append(2 ** (k * (c - z)) * (2 ** k + 1) ** (n - (c - z)))
        elif z < n:
            f.append(d - 2 ** (k * (z - c + 1)) * (2 ** k + 1) ** (n - 1 - (z - c)))
        else:
            f.append(d)
    return np.array(f, dtype=np.int64)


def geosample_pmf(c: int, epsilon: float = 0.1, n: int = 5) -> np.ndarray:
    """Exact output law of :class:`GeoSample` on ``c``: ``P(z) = (F(z) − F(z−1)) / d`` (``u`` uniform on
    ``{1..d}``, output the smallest ``z`` with ``F(z) ≥ u``)."""
    f = geosample_cdf(c, epsilon, n).astype(np.float64)
    return np.diff(np.concatenate(([0.0], f))) / f[-1]


@dataclass(frozen=True)
class GeoSample:
    """DP-Sniper's ``TruncatedGeometricMechanism(eps=0.1, n=5)``: a count ``c ∈ {0..n}`` in, a count out.

    DP-Sniper draws ``u = randint(1, d + 1)`` and returns the smallest ``z`` with ``F[z] ≥ u`` (a float array);
    here ``u = rng.integers(1, d + 1)`` and ``z = searchsorted(F, u, side="left")`` (counted by comparisons), the same
    index.  Output float64
    ``(n,)`` like DP-Sniper's."""

    epsilon: float = 0.1
    n_max: int = 5
    delta: ClassVar[float] = 0.0

    @property
    def claimed_epsilon(self) -> float:
        """Balcer–Vadhan Theorem 4.7: ``ln(1 + 2^-k)``, ``k = ⌈ln(2/ε)⌉`` (0.1178 at ε = 0.1)."""
        return math.log1p(2.0 ** -math.ceil(math.log(2.0 / self.epsilon)))

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        c = int(np.asarray(x).reshape(-1)[0])
        if not 0 <= c <= self.n_max:
            raise ValueError(f"GeoSample: count {c} outside [0, {self.n_max}]")
        f = geosample_cdf(c, self.epsilon, self.n_max)
        u = rng.integers(1, int(f[-1]) + 1, size=n)
        # searchsorted(f, u, "left"), the number of F values below u, counted by one comparison pass per value
        # (a dozen times as fast on these six values as a binary search per draw)
        z = np.zeros(n, dtype=np.uint8)
        for t in f[:-1]:                  # u <= F(n) = d: the last value never counts
            z += u > t
        return z.astype(np.float64)
