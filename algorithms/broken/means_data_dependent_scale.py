"""BROKEN: private per-column means whose noise scale uses the private record count, in every column at once.

Bug pattern: :mod:`algorithms.broken.data_dependent_scale` for a dataset of ``d``-dimensional records -- the
true count ``len(x)`` treated as public in the noise scale of each column's mean, ``d·(u − l)/(len(x)·ε)`` (the
ℓ1 sensitivity of the mean vector at a *public* count ``m`` of records in ``[l, u]^d`` under replace-one is
``d·(u − l)/m``).  DP-Auditorium's ``MeanMechanism`` (Kong, Muñoz Medina, Ribero, Syed, S&P 2024) and dp-recorder's
``test_buggy_private_mean`` (Cebere et al., PoPETs 2026) show the scalar form; feature-wise means of this form are
what a data-science pipeline computes.

Release ``mean(clip(x, l, u), axis=0) + Lap(d·(u − l)/(len(x)·ε))`` per column (NaN entries mapped to ``lower``
first, as in :class:`algorithms.classic.clipped_sum.ClippedSum`).  Under add/remove-one the neighbours' Laplace
laws have scales ``b = d(u − l)/(mε)`` and ``b' = d(u − l)/((m + 1)ε)`` in all ``d`` columns: the log density
ratio ``Σ_j (ln(b'/b) + |y_j − μ'_j|/b' − |y_j − μ_j|/b)`` grows with ``Σ_j |y_j|``, so true ε = **∞**; its large
values are joint events "far from the mean in many columns together", which no single column shows as well (the
scalar form's loss grows in one coordinate; here each column's share of it is ``1/d``).

Replay: **sensitivity bug** -- the ``"means"`` step declares the data-dependent ℓ1 sensitivity ``d(u − l)/len(x)``
its scale is calibrated for, which differs between ``x`` and an add/remove neighbour (``BUG_KIND =
"sensitivity"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import check_n
from ..classic.clipped_sum import BoundedRecords, clip_records
from ..noise import NoiseSource

__all__ = ["MeansDataDependentScale"]


def _records(x: object) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"x must be a 2-D dataset of records (one row per record), got shape {arr.shape}")
    if len(arr) == 0:
        raise ValueError("x must hold at least one record (the mean of an empty dataset is undefined)")
    return arr


@dataclass(frozen=True)
class MeansDataDependentScale(BoundedRecords):
    """Claims ε; ``mean(clip(x), axis=0) + Lap(d·(u − l)/(len(x)·ε))`` per column. Output float64 ``(n, d)``.

    Noise steps (:meth:`release`): one ``"means"`` Laplace step protecting the clipped column means with the
    (data-dependent) ℓ1 sensitivity ``d·(u − l)/len(x)`` the scale assumes.
    """

    BUG_KIND: ClassVar[str] = "sensitivity"

    def sensitivity(self, size: int, d: int) -> float:
        """The ℓ1 sensitivity the scale is calibrated for: ``d·(u − l)/size`` (the bug: ``size`` is private)."""
        return d * (float(self.upper) - float(self.lower)) / size

    def scale(self, size: int, d: int) -> float:
        """The data-dependent Laplace scale of every column, ``d·(u − l)/(size·ε)``."""
        return self.sensitivity(size, d) / float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler against an explicit noise source: one ``"means"`` step, data-dependent sensitivity."""
        records = _records(x)
        n = check_n(n)
        size, d = records.shape
        means = np.mean(clip_records(records, float(self.lower), float(self.upper)), axis=0)
        scale = self.scale(size, d)
        return noise.add("means", means, lambda rng: rng.laplace(0.0, scale, size=(n, d)),
                         sensitivity=self.sensitivity(size, d), norm="l1", scale=scale, kind="laplace")

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """The exact log density of each output row: independent Laplace columns around the clipped means."""
        records = _records(x)
        size, d = records.shape
        b = self.scale(size, d)
        means = np.mean(clip_records(records, float(self.lower), float(self.upper)), axis=0)
        z = np.abs(np.asarray(out, dtype=np.float64).reshape(-1, d) - means) / b
        return -d * math.log(2 * b) - z.sum(axis=1)

    def true_epsilon(self) -> float:
        """∞ under add/remove-one neighbours."""
        return math.inf
