"""BROKEN: sparse vector that never stops (no cutoff on the number of ⊤ answers).

Source: Lyu, Su, Li (PVLDB 2017), Figure 1, **Algorithm 6** (attributed there to Chen et al.,
2015; reference as cited by Lyu et al., not re-verified here): ``ε1 = ε/2``, ``ρ ~ Lap(Δ/ε1)``,
``ε2 = ε − ε1``, ``ν_i ~ Lap(Δ/ε2)``, every query answered.
StatDP ``iSVT2``, DP-Sniper ``SVT6`` (Bichsel et al., S&P 2021). Δ = 1, ℓ∞ neighbours.

True ε = **∞** (Lyu et al. §4: not ε'-DP for any finite ε'). Witness (derived here): ``m``
queries answered ⊥ then ``m`` answered ⊤, ``x = (0,…,0, 0,…,0)`` and ``x' = (1,…,1, −1,…,−1)``.
Given ``ρ = r`` and ``a = T + r``, each (⊥, ⊤) pair contributes the factor
``F(a)(1 − F(a)) / (F(a − 1)(1 − F(a + 1)))`` (``F`` the Laplace(2/ε) cdf), which is ``≥ e^{ε/2}``
for every ``a`` (for ``a ≤ 0`` the first ratio is exactly ``e^{ε/2}``, for ``a ≥ 0`` the second, and
both are ≥ 1), so no shift of ρ can compensate and the output ``(⊥^m, ⊤^m)`` has probability ratio
``≥ e^{mε/2}``, unbounded in ``m``. For a fixed list of k queries the loss is finite (at most
``ε1 + 2kε2 = ε/2 + kε``): ∞ at ε = 0.1 (DP-Sniper's lower bound at k = 10 is 0.27).
Output: int8 codes ``(n, len(x))`` in {0, 1}.

Replay: **calibration (composition) bug** -- the inherited ``"threshold"`` and ``"query[i]"`` steps declare
the right Δ = 1; the missing cutoff lets the budget be spent on every ⊤, which a frozen-noise replay will NOT
flag (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ..classic.sparse_vector import SparseVectorBase

__all__ = ["SVTNoCutoff"]


@dataclass(frozen=True)
class SVTNoCutoff(SparseVectorBase):
    """Lyu Alg. 6: ρ ~ Lap(2/ε), ν_i ~ Lap(2/ε), answers every query. Output int8 ``(n, k)``.

    Noise steps: :meth:`SparseVectorBase.release` (``"threshold"``, ``"query[i]"``; Δ = 1).
    """

    BUG_KIND: ClassVar[str] = "calibration"

    @property
    def threshold_scale(self) -> float:
        """Scale ``Δ/ε1`` of ρ, ``ε1 = ε/2``."""
        return 2.0 / float(self.epsilon)

    @property
    def query_scale(self) -> float:
        """Scale ``Δ/ε2`` of ν_i, ``ε2 = ε/2`` (no factor c: there is no cutoff)."""
        return 2.0 / float(self.epsilon)

    def true_epsilon(self) -> float:
        """∞ (supremum over query lists; for k queries the loss is finite but grows with k)."""
        return math.inf
