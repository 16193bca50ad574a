"""BROKEN: Laplace MST that adds the noise but chooses the tree on the true weights.

Bug: the noisy weights are computed (and, with ``release_weights``, even released) but the MST is taken
on the original ``w`` -- e.g. a variable-name slip ``mst(graph.weights)`` for ``mst(noisy)``.  Privacy by
post-processing (seed 002 Sec. 3.2) then no longer applies: the topology is a deterministic function of
the private weights.  Control: :class:`algorithms.graph.laplace_mst.LaplaceMST`.
True ε: infinite on any pair whose true MSTs differ.

Replay: **other** -- the inherited ``"weights"`` step is correctly declared; the leak is that the tree is
chosen on the true weights, outside any noise step, which a frozen-noise replay will NOT flag
(``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..graph.laplace_mst import LaplaceMST
from ..graph.weighted_graph import WeightedGraph


@dataclass(frozen=True)
class LaplaceMSTTrueWeights(LaplaceMST):
    """Adds the noise, picks the MST on the true weights.  Noise steps: :meth:`LaplaceMST.release`."""

    BUG_KIND: ClassVar[str] = "other"

    def _tree_weights(self, graph: WeightedGraph, noisy: np.ndarray) -> np.ndarray:
        return np.broadcast_to(graph.weights, noisy.shape)  # BUG: the true weights pick the tree

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        return math.inf
