"""BROKEN: sparse vector whose query noise is not scaled with the cutoff c.

Source: Lyu, Su, Li (PVLDB 2017), Figure 1, **Algorithm 4** (Lee & Clifton, "Top-k frequent
itemsets via differentially private FP-trees", KDD 2014): ``ε1 = ε/4``, ``ρ ~ Lap(Δ/ε1)``,
``ε2 = ε − ε1``, ``ν_i ~ Lap(Δ/ε2)`` (should be ``2cΔ/ε2``), abort after c ⊤ answers.
StatDP ``iSVT3``, DP-Sniper ``SVT4`` (Bichsel et al., S&P 2021). Δ = 1, ℓ∞ neighbours.

True ε = **(1 + 6c)ε/4** (Lyu et al. 2017, §4, analysis of Alg. 4: shifting ρ by Δ costs
ε1 = ε/4; each of the c ⊤ answers then needs its ν_i shifted by 2Δ, costing 2ε2 = 3ε/2 each):
**0.175 at ε = 0.1, c = 1** (StatDP's lower bound 0.172, DP-Sniper's 0.169).
Output: int8 codes ``(n, len(x))`` as :class:`algorithms.classic.sparse_vector.SparseVector`.

Replay: **calibration bug** -- the inherited ``"threshold"`` and ``"query[i]"`` steps declare the right
Δ = 1; only the query-noise scale (missing the factor 2c) is too small, which a frozen-noise replay will NOT
flag (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..classic.sparse_vector import SparseVectorBase

__all__ = ["SVTUnscaledQueryNoise"]


@dataclass(frozen=True)
class SVTUnscaledQueryNoise(SparseVectorBase):
    """Lyu Alg. 4: ρ ~ Lap(4/ε), ν_i ~ Lap(4/(3ε)), cutoff c. Output int8 ``(n, k)``.

    Noise steps: :meth:`SparseVectorBase.release` (``"threshold"``, ``"query[i]"``; Δ = 1).
    """

    cutoff: int = 1
    BUG_KIND: ClassVar[str] = "calibration"

    @property
    def threshold_scale(self) -> float:
        """Scale ``Δ/ε1`` of ρ, ``ε1 = ε/4``."""
        return 4.0 / float(self.epsilon)

    @property
    def query_scale(self) -> float:
        """Scale ``Δ/ε2`` of ν_i, ``ε2 = 3ε/4`` (missing the factor 2c)."""
        return 1.0 / (float(self.epsilon) - float(self.epsilon) / 4.0)

    def true_epsilon(self) -> float:
        """``(1 + 6c)ε/4`` (Lyu et al. 2017, §4)."""
        return (1.0 + 6.0 * int(self.cutoff)) * float(self.epsilon) / 4.0
