"""The Laplace histogram.

Source: Dwork, McSherry, Nissim, Smith (TCC 2006), §1 (histogram queries have ℓ1 sensitivity 1 when
one record changes one count by one); Dwork & Roth (2014), Example 3.2 / §3.3; StatDP benchmark
``histogram`` (Ding et al., CCS 2018) and DP-Sniper ``NoisyHist1`` (Bichsel et al., S&P 2021).

``x`` is the vector of counts; neighbours differ by 1 in exactly one count (ℓ1 distance 1). Release
``x + Lap(1/ε)`` per entry. True ε = ε exactly (attained), 0.1 at ε = 0.1. Laplace scale ε instead
of 1/ε is the broken twin :class:`algorithms.broken.histogram_scale_epsilon.HistogramScaleEpsilon`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._validation import as_finite_vector, check_epsilon, check_n
from .laplace import laplace_log_density
from ..noise import NoiseSource, laplace_noise

__all__ = ["Histogram", "as_counts"]


def as_counts(x: object) -> np.ndarray:
    """A non-empty 1-D vector of (real-valued, finite) bin counts."""
    return as_finite_vector(x, "counts")


@dataclass(frozen=True)
class Histogram:
    """``x + Lap(1/ε)`` per bin. Output: float64 of shape ``(n, k)``.

    Noise steps (:meth:`release`): one ``"histogram"`` step protecting the count vector with ℓ1
    sensitivity 1 (``scale=1/ε``).
    """

    epsilon: float
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    @property
    def scale(self) -> float:
        """Laplace scale ``1/ε``."""
        return 1.0 / float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source: one ``"histogram"`` Laplace step
        protecting the counts with ℓ1 sensitivity 1."""
        counts = as_counts(x)
        n = check_n(n)
        scale = self.scale
        return noise.add("histogram", counts, lambda rng: laplace_noise(rng, scale, (n, counts.shape[0])),
                         sensitivity=1.0, norm="l1", scale=scale, kind="laplace")

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each row of ``out`` (``(m, k)``) under the counts ``x`` (Lebesgue measure on ℝ^k):
        ``Σ_j −ln(2/ε) − ε·|o_j − x_j|``."""
        counts = as_counts(x)
        return laplace_log_density(np.asarray(out, dtype=np.float64).reshape(-1, counts.shape[0]), counts,
                                   self.scale)

    def true_epsilon(self) -> float:
        """Exact ε for ℓ1 distance-1 count vectors: the claimed ε."""
        return float(self.epsilon)
