"""BROKEN: Laplace mechanism with half the required noise.

Bug pattern: Google differential-privacy C++ library test catalogue,
``BoundedSumWithInsufficientNoise`` (the algorithm reports a budget of ε/2 but adds noise calibrated
for ε). Here the code *claims* ε and draws
``Lap(Δ/(2ε))``, i.e. noise calibrated for 2ε.

True ε = 2ε exactly (Laplace mechanism of scale Δ/(2ε) at ℓ1 distance Δ; attained): **0.2 at the
catalogue parameter ε = 0.1**. Correct twin: :class:`algorithms.classic.laplace.Laplace`.

Replay: **calibration bug** -- the inherited ``"laplace"`` step declares the right ℓ1 sensitivity Δ; only
the scale Δ/(2ε) is too small, which a frozen-noise replay will NOT flag (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..classic.laplace import Laplace

__all__ = ["LaplaceHalfNoise"]


@dataclass(frozen=True)
class LaplaceHalfNoise(Laplace):
    """Claims ε, adds ``Lap(Δ/(2ε))``. Output: float64 ``(n,)`` or ``(n, k)``.

    Noise steps: :meth:`Laplace.release` (one ``"laplace"`` step, ℓ1 sensitivity Δ, ``scale = Δ/(2ε)``).
    Law: :meth:`Laplace.log_density` with this :attr:`scale`, ``Σ_j −ln(Δ/ε) − 2ε·|o_j − x_j|/Δ``.
    """

    BUG_KIND: ClassVar[str] = "calibration"

    @property
    def scale(self) -> float:
        """The (too small) Laplace scale ``Δ/(2ε)``."""
        return float(self.sensitivity) / (2.0 * float(self.epsilon))


    def true_epsilon(self) -> float:
        """Exact ε = 2ε (claimed ε × 2)."""
        return 2.0 * float(self.epsilon)
