"""BROKEN: the Binary Mechanism with its noise computed for one level too few.

Bug pattern: the noise of Chan, Shi & Song's Binary Mechanism ("Private and Continual Release of Statistics", ACM
TISSEC 2011, §3.4) must cover every node a step is counted in: ``⌊log₂ T⌋ + 1`` levels of the tree, the root
included.  Counting the levels as ``⌈log₂ T⌉`` -- the tree's height without its leaves -- is one level short
whenever ``T`` is a power of two.  An off-by-one this catalogue plants (no published bug report is cited for it).

True ε = ε · (⌊log₂ T⌋ + 1) / ⌈log₂ T⌉ exactly, attained on a pair that changes step 1 (counted in every level):
**1.25 at the catalogue parameters ε = 1, T = 16**.  For ``T`` not a power of two the two counts agree and the
mechanism is correct.  Correct twin: :class:`algorithms.classic.continual_counting.BinaryMechanism`.

Replay: **calibration bug** -- the inherited ``"nodes"`` step declares the right ℓ1 sensitivity (every level); only
the scale is computed from one level fewer, which a frozen-noise replay will NOT flag (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ..classic.continual_counting import BinaryMechanism

__all__ = ["BinaryMechanismMissingLevel"]


@dataclass(frozen=True)
class BinaryMechanismMissingLevel(BinaryMechanism):
    """Claims ε, draws every node's noise at ``Lap(⌈log₂ T⌉/ε)``. Output: float64 ``(n, length)``.

    Noise steps: :meth:`BinaryMechanism.release` (one ``"nodes"`` step, ℓ1 sensitivity ``⌊log₂ T⌋ + 1``, the scale
    below).  Law: :meth:`BinaryMechanism.log_density` with this :attr:`scale`.
    """

    BUG_KIND: ClassVar[str] = "calibration"

    @property
    def noise_levels(self) -> float:
        """``⌈log₂ T⌉`` (at least 1): one level short when ``T`` is a power of two."""
        return float(max(1, math.ceil(math.log2(self.length))))
