"""BROKEN: PAMST that also returns the true weights of the chosen edges.

Bug: PAMST releases the topology only (seed 001 Sec. 3.3.2: "PAMST does not output a weighted tree"); code
that returns ``(edge, w(edge))`` pairs from each step -- convenient for a downstream clusterer -- publishes
private weights exactly.  Seed 002 Sec. 3.7 and seed 001 Algorithm 3 release tree weights only through a
separate noisy mechanism.  Control: :class:`algorithms.graph.pamst.PAMST`.
Output: ``(n, 1 + |V|-1)`` float64: the tree code, then the true weights of its edges (ascending edge id).
True ε: infinite (any change of a chosen weight changes the output with certainty).

Replay: **other** -- :meth:`PAMSTReleasesWeights.release` runs PAMST's correctly declared steps; the leak is
the true weights appended after them, outside any noise step, which a frozen-noise replay will NOT flag
(``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import check_n
from ..graph.pamst import PAMST, as_graph, tree_codes
from ..graph.pamst_exact import pamst_log_pmf
from ..graph.weighted_graph import WeightedGraph
from ..noise import NoiseSource


@dataclass(frozen=True)
class PAMSTReleasesWeights(PAMST):
    """PAMST whose output rows carry the chosen edges' true weights.  Noise steps: :meth:`PAMST.release_trees`."""

    BUG_KIND: ClassVar[str] = "other"

    def __call__(self, x: WeightedGraph, n: int, rng: np.random.Generator) -> np.ndarray:
        graph = as_graph(x, "PAMST")
        trees = np.sort(self._trees(graph, check_n(n), rng, self.coefficient(graph)), axis=1)
        # BUG: the private weights of the chosen edges go out unchanged
        return np.column_stack([tree_codes(trees).astype(np.float64), graph.weights[trees]])

    def release(self, x: WeightedGraph, n: int, noise: NoiseSource) -> np.ndarray:
        """PAMST's steps (:meth:`PAMST.release_trees`, correctly declared), then the same buggy output."""
        graph = as_graph(x, "PAMST")
        trees = np.sort(self.release_trees(graph, check_n(n), noise), axis=1)
        return np.column_stack([tree_codes(trees).astype(np.float64), graph.weights[trees]])

    def log_pmf(self, x: WeightedGraph) -> tuple[np.ndarray, np.ndarray]:
        """Exact law of the released rows: each spanning tree's row (code, its true weights) with the tree's
        PAMST probability -- neighbouring weights give disjoint supports (ε = ∞ exactly)."""
        graph = as_graph(x, "PAMST")
        trees, log_p = pamst_log_pmf(graph, self.coefficient(graph), self.start)
        return np.column_stack([tree_codes(trees).astype(np.float64), graph.weights[trees]]), log_p

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        return math.inf
