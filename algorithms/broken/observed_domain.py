"""BROKEN: noisy category counts released only for the categories present in the data (``np.unique`` domain leak).

Bug pattern: the set of categories is inferred from the private data (``classes = np.unique(y)``) and a noisy count
is released for each of them, so *which* categories appear in the output depends on the data.  Cebere, Erb,
Desfontaines, Bellet, Fitzsimons, "Privacy in Theory, Bugs in Practice: Grey-Box Auditing of Differential Privacy
Libraries" (PoPETs 2026, arXiv 2602.17454): found in diffprivlib (classes read with ``np.unique(y)``) and dpmm (domain
inferred from the data), reduced in dp-recorder's ``test_domain_inference`` (which also splits ε by
``len(classes)``, a second data dependence left out here: one bug per module).

Release, over the public domain ``0 … K − 1``, a flag per category (1.0 = released) and its count ``+ Lap(1/ε)`` for
the categories with at least one record; the other categories get flag 0.0 and value 0.0 ("not released").  The
counts themselves are calibrated right (ℓ1 sensitivity 1 under add/remove-one neighbours).

True ε = **∞** (∞ at ε = 0.1): on ``D`` without any record of category ``j`` and ``D' = D + {j}`` the flag of ``j`` is
0 with probability 1 under ``D`` and 1 with probability 1 under ``D'`` -- one rare record is revealed with
certainty.  Correct twin: :class:`algorithms.classic.category_counts.CategoryCounts` (every category of the public
domain released, zeros included; same output encoding).  :meth:`CategoryCounts.log_density` (inherited) is the
exact law here too, with this class's release mask.

Output: float64 ``(n, 2K)``: flags, then counts (0.0 where not released).

Replay: **other** -- the inherited ``"counts"`` step noises the whole public domain with its right sensitivity 1
and is the same step on both neighbours; the leak is the release mask read off the data after the noise, which
a frozen-noise replay will NOT flag (dp-recorder catches it through ``ensure_equality(num_classes=...)``; a
replay of code that loops over ``np.unique`` would see different steps) (``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic.category_counts import CategoryCounts, as_category_records

__all__ = ["CategoryCountsObservedDomain"]


@dataclass(frozen=True)
class CategoryCountsObservedDomain(CategoryCounts):
    """Claims ε; noisy counts released only for ``np.unique(x)``. Output float64 ``(n, 2K)``.

    Noise steps: :meth:`CategoryCounts.release` (one ``"counts"`` step over the public domain, ℓ1 sensitivity 1).
    """

    BUG_KIND: ClassVar[str] = "other"

    def released(self, x: object) -> np.ndarray:
        """The bug: the released categories are those observed in the private data."""
        k = int(self.categories)
        mask = np.zeros(k, dtype=bool)
        mask[np.unique(as_category_records(x, k))] = True
        return mask

    def true_epsilon(self) -> float:
        """∞ under add/remove-one neighbours (a category's presence is released with certainty)."""
        return math.inf
