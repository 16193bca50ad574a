"""Private mean under add/remove neighbours: a noisy clipped sum and a noisy count, half the budget each.

Source: Dwork & Roth (2014), Thm 3.6 (Laplace mechanism) and Thm 3.14 (basic composition); the "noisy sum over
noisy count" estimator of a mean when the dataset size is private (OpenDP user guide, "Working with Unknown
Dataset Sizes"; Google DP library ``BoundedMean``, Wilson et al., PoPETs 2020, §3).  Neighbours: add/remove one
record, so ``len(x)`` is private: it moves by 1, and the clipped sum by at most ``B = max(|l|, |u|)``.

Release ``(Σ clip(x_i, l, u) + Lap(2B/ε),  len(x) + Lap(2/ε))``; the mean is the post-processing ``sum/count``
(:func:`mean_of`).  NaN records count as ``lower`` (as :class:`algorithms.classic.clipped_sum.ClippedSum`).

True ε = **ε exactly**: adding a record ``v`` moves the sum by ``clip(v)`` and the count by 1, so the joint density
ratio is at most ``exp((ε/2)·|clip(v)|/B + ε/2) ≤ e^ε``, attained for a record at the bound of larger magnitude
(``|clip(v)| = B``) by outputs beyond both inputs in both coordinates.  0.1 at ε = 0.1.
:meth:`NoisyMean.log_density` is the exact log density (Lebesgue measure on R²).

This is the correct twin of :class:`algorithms.broken.size_leak.MeanLeaksSize`, which divides a noisy sum by the
private ``len(x)`` and reports that count unnoised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import as_dataset, check_n
from .clipped_sum import BoundedRecords, clip_records, sum_sensitivity
from ..noise import NoiseSource

__all__ = ["NoisyMean", "mean_of"]


def mean_of(out: np.ndarray) -> np.ndarray:
    """The mean estimate ``noisy sum / noisy count`` of each output row (post-processing; NaN if count ≤ 0)."""
    rows = np.asarray(out, dtype=np.float64).reshape(-1, 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rows[:, 1] > 0, rows[:, 0] / rows[:, 1], np.nan)


@dataclass(frozen=True)
class NoisyMean(BoundedRecords):
    """``(Σ clip(x) + Lap(2B/ε), len(x) + Lap(2/ε))``, ``B = max(|l|, |u|)``. Output float64 ``(n, 2)``.

    Noise steps (:meth:`release`): ``"sum"`` (the clipped sum, ℓ1 sensitivity ``B``, scale ``2B/ε``) and
    ``"count"`` (``len(x)``, ℓ1 sensitivity 1, scale ``2/ε``), both Laplace.
    """

    @property
    def sum_scale(self) -> float:
        """Laplace scale ``2B/ε`` of the sum (budget ε/2)."""
        return 2.0 * sum_sensitivity(self.lower, self.upper) / float(self.epsilon)

    @property
    def count_scale(self) -> float:
        """Laplace scale ``2/ε`` of the count (budget ε/2)."""
        return 2.0 / float(self.epsilon)

    def exact(self, x: np.ndarray) -> tuple[float, float]:
        """The exact ``(clipped sum, count)`` of ``x``."""
        records = as_dataset(x)
        return float(np.sum(clip_records(records, float(self.lower), float(self.upper)))), float(records.size)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: Any) -> np.ndarray:
        """Two Laplace steps: the clipped sum (sensitivity ``B``) and the count (sensitivity 1)."""
        total, count = self.exact(x)
        n = check_n(n)
        s_scale, c_scale = self.sum_scale, self.count_scale
        noisy_sum = noise.add("sum", total, lambda g: g.laplace(0.0, s_scale, size=n),
                              sensitivity=sum_sensitivity(self.lower, self.upper), norm="l1", scale=s_scale,
                              kind="laplace")
        noisy_count = noise.add("count", count, lambda g: g.laplace(0.0, c_scale, size=n),
                                sensitivity=1.0, norm="l1", scale=c_scale, kind="laplace")
        return np.column_stack([noisy_sum, noisy_count])

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each row ``(s, c)`` of ``out``: ``ln Lap(s − sum; 2B/ε) + ln Lap(c − count; 2/ε)``."""
        total, count = self.exact(x)
        rows = np.asarray(out, dtype=np.float64).reshape(-1, 2)
        bs, bc = self.sum_scale, self.count_scale
        return (-math.log(2.0 * bs) - np.abs(rows[:, 0] - total) / bs
                - math.log(2.0 * bc) - np.abs(rows[:, 1] - count) / bc)

    def true_epsilon(self) -> float:
        """Exact ε under add/remove-one neighbours: the claimed ε."""
        return float(self.epsilon)
