"""Running counts of a stream released with fresh noise on each count: a violation that only the joint event over
every count shows, at answers the inputs do not give.

:class:`NoisyRunningCounts` releases the ``T`` running counts ``c_t = x_0 + … + x_t`` of a stream of increments
``x``, each plus fresh ``Lap(scale)``: the first of the two simple counting mechanisms of continual observation
(Chan, Shi & Song, "Private and continual release of statistics", ACM TISSEC 2011, Section 3: noise on every
released count; the second, noise on every increment and its running sums released, is
:class:`algorithms.classic.prefix_sum.PrefixSum`).  One more event at time ``t`` moves every count from ``t`` on by
one, so the ℓ1 sensitivity of the released vector is ``T − t`` (``T`` for the first step); ``scale = T/ε`` is the
correct calibration, and a scale computed for fewer counts (``calibrated_for < T``) is the misuse: true ε on the pair
= ``‖c(x) − c(x')‖₁ / scale`` (Dwork & Roth 2014, Theorem 3.6), attained only by the joint event "every count
high", and the counts the noise is centred on are the running sums, not the increments the inputs hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NoisyRunningCounts:
    """``cumsum(x)_t + Lap(scale)`` for every ``t``; ``scale = calibrated_for / ε`` (the ℓ1 sensitivity it is
    calibrated for: ``T``, the number of counts, is correct for one event more at the first step)."""

    epsilon: float
    calibrated_for: float = 1.0

    @property
    def scale(self) -> float:
        return float(self.calibrated_for) / float(self.epsilon)

    @staticmethod
    def counts(x: object) -> np.ndarray:
        """The running counts of the increments ``x`` (a 1-D numeric stream)."""
        v = np.asarray(x, dtype=np.float64)
        if v.ndim != 1 or not np.isfinite(v).all():
            raise ValueError("the stream of increments must be a 1-D array of finite numbers")
        return np.cumsum(v)

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        c = self.counts(x)
        return c + rng.laplace(0.0, self.scale, size=(n, len(c)))

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """``Σ_t −ln(2b) − |o_t − c_t|/b``."""
        z = np.asarray(out, dtype=np.float64) - self.counts(x)
        return (-np.log(2 * self.scale) - np.abs(z) / self.scale).sum(axis=1)

    def epsilon_on(self, x0: object, x1: object) -> float:
        """True ε on the pair: ``‖c(x0) − c(x1)‖₁ / scale``."""
        return float(np.abs(self.counts(x0) - self.counts(x1)).sum()) / self.scale
