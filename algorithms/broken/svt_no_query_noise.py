"""BROKEN: sparse vector without noise on the queries (and without a cutoff).

Source: Lyu, Su, Li (PVLDB 2017), Figure 1, **Algorithm 5** (Stoddard, Chen, Machanavajjhala,
"Differentially private algorithms for empirical machine learning", arXiv 2014): ``ε1 = ε/2``,
``ρ ~ Lap(Δ/ε1)``, output ⊤ iff ``q_i ≥ T + ρ`` (no ν_i), every query answered. StatDP ``iSVT1``,
DP-Sniper ``SVT5`` (Bichsel et al., S&P 2021). Δ = 1, ℓ∞ neighbours.

True ε = **∞**, already with two queries: for ``T = 0``, ``x = (0, 1)`` and ``x' = (1, 0)``, the
output ``(⊥, ⊤)`` needs ``0 < ρ ≤ 1`` on ``x`` (probability > 0) but ``1 < ρ ≤ 0`` on ``x'``
(impossible). ∞ at ε = 0.1 (StatDP's lower bound 14.3, DP-Sniper's 1.76).
Output: int8 codes ``(n, len(x))`` in {0, 1} (no abort, so never −1).

Replay: **other** -- the only noise step is the correctly declared ``"threshold"``; the queries are compared
without noise, outside any step, so a frozen-noise replay will NOT flag it (``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ..classic.sparse_vector import SparseVectorBase

__all__ = ["SVTNoQueryNoise"]


@dataclass(frozen=True)
class SVTNoQueryNoise(SparseVectorBase):
    """Lyu Alg. 5: ρ ~ Lap(2/ε), no query noise, no cutoff. Output int8 ``(n, k)``.

    Noise steps: :meth:`SparseVectorBase.release` (``"threshold"`` only; Δ = 1).
    """

    BUG_KIND: ClassVar[str] = "other"

    @property
    def threshold_scale(self) -> float:
        """Scale ``Δ/ε1`` of ρ, ``ε1 = ε/2``."""
        return 2.0 / float(self.epsilon)

    @property
    def query_scale(self) -> None:
        """No query noise (the bug)."""
        return None

    def true_epsilon(self) -> float:
        """∞ (an output pattern possible on one input is impossible on a neighbour)."""
        return math.inf
