"""BROKEN: sparse vector that releases the noisy query value of each ⊤ answer.

Source: Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy"
(PVLDB 2017), Figure 1, **Algorithm 3** (from Roth's lecture notes): ``ε1 = ε/2``,
``ρ ~ Lap(Δ/ε1)``, ``ε2 = ε − ε1``, ``ν_i ~ Lap(cΔ/ε2)``; when ``q_i + ν_i ≥ T + ρ`` it outputs
``q_i + ν_i`` (instead of ⊤), aborting after ``c`` such answers. StatDP ``iSVT4``, DP-Sniper
``SVT3`` (Bichsel et al., S&P 2021). Δ = 1, ℓ∞ neighbours.

True ε = **∞** (Lyu et al. §4: not ε'-DP for any finite ε'). Why: a released value ``v`` bounds the
threshold noise, ``ρ ≤ v − T``, so ρ can no longer be shifted to absorb the change of the ⊥
answers; with ``x = (0, …, 0, 0)`` and ``x' = (1, …, 1, 0)`` (k − 1 queries answered ⊥, then ⊤ with
value v) the density ratio is ``∫_{r ≤ v−T} f_ρ(r) F_ν(T+r)^{k−1} dr / ∫_{r ≤ v−T} f_ρ(r)
F_ν(T+r−1)^{k−1} dr``, a product of k − 1 factors each bounded away from 1. For a fixed list of k
queries the loss is finite but grows linearly in k; the supremum over query lists is ∞ (∞ at
ε = 0.1; DP-Sniper's lower bound at k = 10 is only 0.18).

Output: float64 ``(n, 2k)``: columns ``0..k-1`` the codes (1.0 = ⊤, 0.0 = ⊥, −1.0 = not answered),
columns ``k..2k-1`` the released noisy values (0.0 where the code is not ⊤).
Correct twin: :class:`algorithms.classic.sparse_vector.SparseVector`.

Replay: **other** -- the inherited ``"threshold"`` and ``"query[i]"`` steps declare the right Δ = 1; the
leak is the release of the noisy value, which the SVT analysis does not cover, and a frozen-noise replay will
NOT flag it (``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ..classic.sparse_vector import SparseVectorBase

__all__ = ["SVTOutputsValue"]


@dataclass(frozen=True)
class SVTOutputsValue(SparseVectorBase):
    """Lyu Alg. 3: ρ ~ Lap(2/ε), ν_i ~ Lap(2c/ε), releases ``q_i + ν_i`` for ⊤. Output float64 (n, 2k).

    Noise steps: :meth:`SparseVectorBase.release` (``"threshold"``, ``"query[i]"``; Δ = 1).
    """

    cutoff: int = 1
    output_values: ClassVar[bool] = True
    BUG_KIND: ClassVar[str] = "other"

    @property
    def threshold_scale(self) -> float:
        """Scale ``Δ/ε1`` of ρ, ``ε1 = ε/2``."""
        return 2.0 / float(self.epsilon)

    @property
    def query_scale(self) -> float:
        """Scale ``cΔ/ε2`` of ν_i, ``ε2 = ε/2``."""
        return 2.0 * int(self.cutoff) / float(self.epsilon)

    def true_epsilon(self) -> float:
        """∞ (supremum over query lists; finite but growing in k for a fixed number k of queries)."""
        return math.inf
