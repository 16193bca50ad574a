"""BROKEN: private mean whose noise scale uses the private record count.

Bug pattern: the true count ``len(x)`` is treated as public — both in the mean and in the noise
scale ``(u − l)/(len(x)·ε)`` — although neighbours add or remove a record. DP-Auditorium
``MeanMechanism`` flags (Kong, Muñoz Medina, Ribero, Syed, S&P 2024); dp-recorder
``test_buggy_private_mean`` (Cebere et al., arXiv 2602.17454).

Release ``mean(clip(x, l, u)) + Lap((u − l)/(len(x)·ε))`` (NaN records are mapped to ``lower``
first, as in :class:`algorithms.classic.clipped_sum.ClippedSum`, so that only the scale bug is
present). Under add/remove the two neighbours use Laplace laws of different scales ``b = (u−l)/(mε)``
and ``b' = (u−l)/((m+1)ε)``; their log density ratio ``ln(b'/b) + |y − μ'|/b' − |y − μ|/b`` grows
linearly in ``|y|`` because ``1/b' ≠ 1/b``: true ε = **∞** (∞ at ε = 0.1). (Under replace-one
neighbours with a public count the same code would be ε-DP.)

Replay: **sensitivity bug** -- the ``"mean"`` step declares the data-dependent sensitivity
``(u − l)/len(x)`` its scale is calibrated for, which (like the scale) differs between ``x`` and an
add/remove neighbour; a frozen-noise replay flags the changed declaration (``BUG_KIND = "sensitivity"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import as_dataset, check_n
from ..classic.clipped_sum import BoundedRecords, clip_records
from ..noise import NoiseSource

__all__ = ["MeanDataDependentScale"]


@dataclass(frozen=True)
class MeanDataDependentScale(BoundedRecords):
    """Claims ε; ``mean(clip(x)) + Lap((u − l)/(len(x)·ε))``. Output float64 ``(n,)``.

    Noise steps (:meth:`release`): one ``"mean"`` Laplace step protecting the clipped mean with the
    (data-dependent) ℓ1 sensitivity ``(u − l)/len(x)`` the scale assumes.
    """

    BUG_KIND: ClassVar[str] = "sensitivity"

    def scale(self, size: int) -> float:
        """The data-dependent Laplace scale ``(u − l)/(size·ε)`` for a dataset of ``size`` records."""
        return (float(self.upper) - float(self.lower)) / (size * float(self.epsilon))

    def sensitivity(self, size: int) -> float:
        """The sensitivity the scale is calibrated for: ``(u − l)/size`` (the bug: ``size`` is private)."""
        return (float(self.upper) - float(self.lower)) / size

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler against an explicit noise source: one ``"mean"`` step, data-dependent sensitivity."""
        records = as_dataset(x)
        if records.size == 0:
            raise ValueError("x must hold at least one record (the mean of an empty dataset is undefined)")
        n = check_n(n)
        mean = float(np.mean(clip_records(records, float(self.lower), float(self.upper))))
        scale = self.scale(records.size)
        return noise.add("mean", mean, lambda rng: rng.laplace(0.0, scale, size=n),
                         sensitivity=self.sensitivity(records.size), norm="l1", scale=scale, kind="laplace")

    def true_epsilon(self) -> float:
        """∞ under add/remove-one neighbours."""
        return math.inf
