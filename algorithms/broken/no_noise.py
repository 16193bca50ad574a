"""BROKEN: a "private" release that adds no noise at all.

Bug pattern: Google differential-privacy C++ library test catalogue, ``NonDpCount`` /
``NonDpSum`` (the exact statistic is returned); also synthcity PrivBayes' noise scale collapsing
to 0 (dp-recorder, Cebere et al., arXiv 2602.17454; :mod:`algorithms.broken.zero_sensitivity`).

True ε = ∞: the output is the point mass at ``x``, so on any neighbour ``x' ≠ x`` the event
``{output = x}`` has probability 1 versus 0 (**∞ at ε = 0.1**).

Replay: **other** -- there is no noise step at all (no ``release``: nothing to instrument), so a frozen-noise
replay has nothing to compare and will NOT flag it (``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import as_float_input, check_epsilon, check_n

__all__ = ["NoNoise"]


@dataclass(frozen=True)
class NoNoise:
    """Claims ε, returns ``x`` exactly, broadcast to ``n`` rows. Output: float64 ``(n,)``/``(n, k)``."""

    epsilon: float
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "other"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    def __call__(self, x: float | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        values = as_float_input(x)
        n = check_n(n)
        return np.broadcast_to(values, (n,) + values.shape).copy()

    def log_density(self, x: float | np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact law of each output row under ``x``: the point mass at ``x``, w.r.t. counting measure (every output
        is an atom): ``ln P_x(o) = 0`` if ``o = x`` (NaN matching NaN), ``−inf`` otherwise; returns ``(m,)``."""
        values = as_float_input(x).reshape(-1)
        rows = np.asarray(out, dtype=np.float64)
        rows = rows.reshape(rows.shape[0], -1)
        if rows.shape[1] != values.shape[0]:
            return np.full(rows.shape[0], -np.inf)
        same = (rows == values) | (np.isnan(rows) & np.isnan(values))
        return np.where(np.all(same, axis=1), 0.0, -np.inf)

    def true_epsilon(self) -> float:
        """∞ (deterministic output)."""
        return math.inf
