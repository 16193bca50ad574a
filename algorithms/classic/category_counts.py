"""Noisy counts of every category of a *public* domain (a Laplace histogram built from records).

Source: Dwork, McSherry, Nissim, Smith (TCC 2006), §1 and Dwork & Roth (2014), §3.3: under add/remove-one
neighbours one record changes one count by one, so the count vector has ℓ1 sensitivity 1 and
``counts + Lap(1/ε)`` per category is ε-DP -- *provided the list of categories is fixed in advance* (public),
never read off the data.  Releasing a count only for the categories present in the data needs a partition
selection mechanism of its own (noisy thresholding, Wilson et al., PoPETs 2020); without one it is the broken twin
:class:`algorithms.broken.observed_domain.CategoryCountsObservedDomain` (``np.unique`` domain inference).

``x`` is a 1-D dataset of category codes in ``0 … categories − 1``.  Output (shared with the broken twin, so both
release into the same space): float64 ``(n, 2K)``, columns ``0..K-1`` a *released* flag per category (always 1.0
here) and columns ``K..2K-1`` the noisy counts (0.0 where a category is not released).

True ε = **ε exactly** (adding a record moves one count by 1; outputs beyond both counts attain ``e^ε``); 0.1 at
ε = 0.1.  :meth:`CategoryCounts.log_density` is the exact log density (counting measure on the flags × Lebesgue
on the released counts × a point mass at 0.0 on the others).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._validation import check_epsilon, check_n, check_positive_int
from ..noise import NoiseSource

__all__ = ["CategoryCounts", "as_category_records"]


def as_category_records(x: object, categories: int) -> np.ndarray:
    """A 1-D dataset (possibly empty) of integer category codes in ``[0, categories)``."""
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"x must be a 1-D dataset of category codes, got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"x must hold integer category codes, got {x!r}")
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"x must hold integer category codes, got dtype {arr.dtype}")
    codes = arr.astype(np.int64)
    if np.any(codes < 0) or np.any(codes >= categories):
        raise ValueError(f"x must hold category codes in [0, {categories - 1}], got {x!r}")
    return codes


@dataclass(frozen=True)
class CategoryCounts:
    """Noisy count ``+ Lap(1/ε)`` of every category of the public domain ``0 … categories − 1``.

    Output: float64 ``(n, 2K)`` (released flags, then counts; see the module docstring).

    Noise steps (:meth:`release`): one ``"counts"`` Laplace step protecting the count vector over the public
    domain with ℓ1 sensitivity 1 (``scale = 1/ε``).
    """

    epsilon: float
    categories: int
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive_int("categories", self.categories)

    @property
    def scale(self) -> float:
        """Laplace scale ``1/ε``."""
        return 1.0 / float(self.epsilon)

    def counts(self, x: object) -> np.ndarray:
        """The exact count of every category of the public domain."""
        k = int(self.categories)
        return np.bincount(as_category_records(x, k), minlength=k).astype(np.float64)

    def released(self, x: object) -> np.ndarray:
        """Which categories are released: all of them (the domain is public)."""
        return np.ones(int(self.categories), dtype=bool)

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: object, n: int, noise: Any) -> np.ndarray:
        """One ``"counts"`` Laplace step over the public domain, then the released flags and counts."""
        counts = self.counts(x)
        mask = self.released(x)
        n = check_n(n)
        k, scale = counts.shape[0], self.scale
        noisy = noise.add("counts", counts, lambda g: g.laplace(0.0, scale, size=(n, k)),
                          sensitivity=1.0, norm="l1", scale=scale, kind="laplace")
        flags = np.broadcast_to(mask.astype(np.float64), (n, k))
        return np.concatenate([flags, np.where(mask, noisy, 0.0)], axis=1)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """Exact log density of each row of ``out`` (``(m, 2K)``): ``Σ_{released j} ln Lap(y_j − count_j; 1/ε)`` when
        the flags equal :meth:`released` and unreleased values are 0.0, −inf otherwise."""
        counts = self.counts(x)
        mask = self.released(x)
        k = counts.shape[0]
        rows = np.asarray(out, dtype=np.float64).reshape(-1, 2 * k)
        flags, values = rows[:, :k], rows[:, k:]
        b = self.scale
        ok = np.all(flags == mask.astype(np.float64), axis=1) & np.all((values == 0.0) | mask, axis=1)
        ld = np.where(mask, -math.log(2.0 * b) - np.abs(values - counts) / b, 0.0).sum(axis=1)
        return np.where(ok, ld, -np.inf)

    def true_epsilon(self) -> float:
        """Exact ε under add/remove-one neighbours: the claimed ε."""
        return float(self.epsilon)
