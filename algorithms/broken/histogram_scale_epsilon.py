"""BROKEN: Laplace histogram with scale ε instead of 1/ε.

Bug pattern: StatDP benchmark ``histogram_eps`` (Ding et al., CCS 2018) / DP-Sniper
``NoisyHist2`` (Bichsel et al., S&P 2021). One record changes one count by 1 (ℓ1
sensitivity 1); the code adds ``Lap(ε)`` per bin.

True ε = 1/ε exactly (Laplace scale b at ℓ1 distance 1 costs 1/b): **10 at ε = 0.1**. Note that
1/ε < ε when ε > 1: there the "bug" over-noises and the claim actually holds.
Correct twin: :class:`algorithms.classic.histogram.Histogram`.

Replay: **calibration bug** -- the ``"histogram"`` step declares the right ℓ1 sensitivity 1; only the
scale ε (for 1/ε) is wrong, which a frozen-noise replay will NOT flag (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import check_epsilon, check_n
from ..classic.histogram import as_counts
from ..classic.laplace import laplace_log_density
from ..noise import NoiseSource, laplace_noise

__all__ = ["HistogramScaleEpsilon"]


@dataclass(frozen=True)
class HistogramScaleEpsilon:
    """Claims ε, adds ``Lap(ε)`` per bin. Output: float64 ``(n, k)``.

    Noise steps (:meth:`release`): one ``"histogram"`` step protecting the counts with ℓ1 sensitivity 1,
    ``scale = ε`` (the bug).
    """

    epsilon: float
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "calibration"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    @property
    def scale(self) -> float:
        """The (inverted) Laplace scale ``ε``."""
        return float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler against an explicit noise source: one ``"histogram"`` step, ℓ1 sensitivity 1."""
        counts = as_counts(x)
        n = check_n(n)
        scale = self.scale
        return noise.add("histogram", counts, lambda rng: laplace_noise(rng, scale, (n, counts.shape[0])),
                         sensitivity=1.0, norm="l1", scale=scale, kind="laplace")

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each row of ``out`` (``(m, k)``) under the counts ``x`` (Lebesgue measure on ℝ^k),
        the law the code draws: ``Σ_j −ln(2ε) − |o_j − x_j|/ε``."""
        counts = as_counts(x)
        return laplace_log_density(np.asarray(out, dtype=np.float64).reshape(-1, counts.shape[0]), counts,
                                   self.scale)

    def true_epsilon(self) -> float:
        """Exact ε = 1/ε."""
        return 1.0 / float(self.epsilon)
