"""Violations that only joint events in several coordinates show.

:class:`LaplaceVector` adds ``Lap(scale)`` to each of the ``d`` coordinates of ``x``.  Three misuses:

* **replace-one histogram**: counts of ``d`` bins with ``scale = 1/ε`` -- right for add/remove-one (ℓ1 distance
  1) but replacing one record moves one bin down and another up (ℓ1 distance 2): true ε = 2ε on such a pair,
  attained only by the joint event "bin i low *and* bin j high";
* **ℓ2 instead of ℓ1 sensitivity**: ``d`` coordinates that each move by 1, calibrated with ``scale = √d/ε`` (the
  ℓ2 sensitivity): true ε = d/scale = √d·ε on the all-move pair;
* **opposite moves**: the pair moves half the coordinates up and half down, so that the sum, max and min
  statistics barely change; true ε = (ℓ1 distance)/scale.

The privacy loss of independent Laplace coordinates is ``Σ_j (|o_j − x'_j| − |o_j − x_j|)/scale``: the true ε of
a pair is ``‖x − x'‖₁/scale`` (Dwork & Roth 2014, Theorem 3.6).  Correct twins: the scale that matches the
pair's ℓ1 distance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LaplaceVector:
    """``x + Lap(scale)`` per coordinate; ``scale = l1_scale_for / ε`` (the ℓ1 distance it is calibrated for)."""

    epsilon: float
    calibrated_for: float = 1.0          # the l1 (or, misused, l2) sensitivity the scale is computed from

    @property
    def scale(self) -> float:
        return float(self.calibrated_for) / float(self.epsilon)

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        v = np.asarray(x, dtype=np.float64)
        return v + rng.laplace(0.0, self.scale, size=(n,) + v.shape)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """``Σ_j −ln(2b) − |o_j − x_j|/b``."""
        z = np.asarray(out, dtype=np.float64) - np.asarray(x, dtype=np.float64)
        ld = -np.log(2 * self.scale) - np.abs(z) / self.scale
        return ld.reshape(len(ld), -1).sum(axis=1)

    def epsilon_on(self, x0: object, x1: object) -> float:
        """True ε on the pair: ``‖x0 − x1‖₁ / scale``."""
        return float(np.abs(np.asarray(x0, float) - np.asarray(x1, float)).sum()) / self.scale
