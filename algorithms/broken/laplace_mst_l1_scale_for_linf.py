"""BROKEN: Laplace MST calibrated for the ℓ1 neighbourhood while claiming the ℓ∞ one.

Bug: Sealfon's ``Lap(r/ε)`` per edge is ε-DP when the *whole* weight vector moves by at most ``r`` in ℓ1
(seed 002 Def. 2.2.1); seed 001's ℓ∞ neighbourhood (Def. 2.1) lets every edge move by ``mu``, an ℓ1 change
of ``|E|·mu``, so the scale must be ``|E|·mu/ε`` (docs/findings.md F5: the two neighbourhoods are silently mixed in
the papers' comparisons).  Control: :class:`algorithms.graph.laplace_mst.LaplaceMST` with
``neighbours="linf"``.  True ε: up to ``|E|·ε`` for the noisy weights; the released tree alone leaks less
(``docs/findings.md`` gives the measured value).

Replay: **sensitivity bug** -- the inherited ``"weights"`` step declares the ℓ1 sensitivity the scale is
derived from, ``mu``, while ℓ∞ neighbours move the weight vector by up to ``|E|·mu`` in ℓ1; a frozen-noise
replay flags it (``BUG_KIND = "sensitivity"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..graph.laplace_mst import LaplaceMST
from ..graph.neighbourhood import as_neighbourhood
from ..graph.weighted_graph import WeightedGraph


@dataclass(frozen=True)
class LaplaceMSTL1ScaleForLInf(LaplaceMST):
    """Claims ε for ℓ∞ neighbours of radius ``mu``; adds ``Lap(mu/ε)`` per edge.

    Noise steps: :meth:`LaplaceMST.release` (one ``"weights"`` step, declared ℓ1 sensitivity ``mu``).
    """

    neighbours: str = "linf"
    BUG_KIND: ClassVar[str] = "sensitivity"

    def l1_sensitivity(self, graph: WeightedGraph) -> float:
        # BUG: the per-edge change mu is used as if it bounded the ℓ1 change of all |E| weights
        # (the inherited scale is this over ε, and release() declares it as the step's ℓ1 sensitivity)
        return as_neighbourhood(self.neighbours, self.mu).max_edge_change(graph.n_edges)

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        return float(self.epsilon) * (graph.n_edges if graph is not None else float("inf"))
