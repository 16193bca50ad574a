"""BROKEN: bounded sum whose clipping lets NaN through.

Bug pattern: ``np.clip(NaN, l, u)`` is NaN, so one NaN record turns the released sum into NaN
(NaN + noise = NaN). dp-recorder ``test_nan_injection`` (Cebere et al., arXiv 2602.17454);
Desfontaines, PhD thesis (ETH Zürich 2020), §4.2.6 (``ANON_SUM(IF uid = … THEN 0/0 …)``).

True ε = **∞**: on ``x`` containing a NaN record the output is NaN with probability 1; on the
neighbour without that record (add/remove) it is never NaN (∞ at ε = 0.1). Without NaN records the
mechanism is the correct clipped sum.
Correct twin (NaN mapped to ``lower`` before clipping): :class:`algorithms.classic.clipped_sum.ClippedSum`.

Replay: **sensitivity bug** -- the inherited ``"sum"`` step declares ``max(|l|, |u|)`` but its value is NaN
on an input with a NaN record, so its change between neighbours is not bounded by any sensitivity; a
frozen-noise replay flags it (``BUG_KIND = "sensitivity"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic.clipped_sum import ClippedSum

__all__ = ["SumNaNThroughClipping"]


@dataclass(frozen=True)
class SumNaNThroughClipping(ClippedSum):
    """``Σ np.clip(x_i, l, u) + Lap(max(|l|,|u|)/ε)``, NaN records propagate. Output float64 ``(n,)``.

    Noise steps: :meth:`ClippedSum.release` (one ``"sum"`` step, declared ℓ1 sensitivity ``max(|l|, |u|)``;
    its value is NaN when a record is).
    """

    BUG_KIND: ClassVar[str] = "sensitivity"

    def bounded_records(self, records: np.ndarray) -> np.ndarray:
        """The bug: ``np.clip`` keeps NaN, so one NaN record makes the sum NaN."""
        return np.clip(records, float(self.lower), float(self.upper))

    def true_epsilon(self) -> float:
        """∞ (NaN output on one side of a neighbouring pair only)."""
        return math.inf
