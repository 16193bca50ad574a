"""BROKEN: bounded sum that declares clipping bounds but never clips.

Bug pattern: sensitivity miscalibration — noise calibrated for data clipped to ``[l, u]`` while the
query runs on the raw data. dp-recorder ``test_sensitivity_miscalibration`` (Cebere, Erb,
Desfontaines, Bellet, Fitzsimons, "Privacy in Theory, Bugs in Practice", arXiv 2602.17454; seen in
SmartNoise, dpmm, diffprivlib).

Release ``Σ x_i + Lap(max(|l|, |u|)/ε)`` under add/remove-one neighbours. Adding or removing a
record of value ``v`` moves the sum by ``v``, so that pair costs exactly
``ε·|v|/max(|l|, |u|)`` (:meth:`SumMissingClipping.pair_epsilon`); records are unbounded, hence
true ε = **∞** (∞ at ε = 0.1; e.g. a record v = 100 with bounds [0, 1] gives 10 on that pair).
Correct twin: :class:`algorithms.classic.clipped_sum.ClippedSum`.

Replay: **sensitivity bug** -- the inherited ``"sum"`` step adds the noise to the *unclipped* sum while
declaring the ℓ1 sensitivity ``max(|l|, |u|)`` of the clipped one; a frozen-noise replay flags any pair
whose differing record lies outside ``[−max(|l|,|u|), max(|l|,|u|)]`` (``BUG_KIND = "sensitivity"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import check_finite
from ..classic.clipped_sum import ClippedSum, sum_sensitivity

__all__ = ["SumMissingClipping"]


@dataclass(frozen=True)
class SumMissingClipping(ClippedSum):
    """Claims ε for bounds ``[lower, upper]``; releases the *unclipped* sum + ``Lap(max(|l|,|u|)/ε)``.

    Noise steps: :meth:`ClippedSum.release` (one ``"sum"`` step: value the unclipped sum, declared ℓ1
    sensitivity ``max(|l|, |u|)``).  Law: :meth:`ClippedSum.log_density` around the unclipped sum,
    ``−ln(2b) − |o − Σ x_i|/b`` with ``b = max(|l|, |u|)/ε``.
    """

    BUG_KIND: ClassVar[str] = "sensitivity"

    def bounded_records(self, records: np.ndarray) -> np.ndarray:
        """The bug: the records are summed as they are, never clipped."""
        return records

    def pair_epsilon(self, record: float) -> float:
        """Exact ε on the add/remove pair that differs by one record of value ``record``."""
        v = check_finite("record", record)
        return float(self.epsilon) * abs(v) / sum_sensitivity(self.lower, self.upper)

    def true_epsilon(self) -> float:
        """∞ (the pair ε grows without bound in the record value)."""
        return math.inf
