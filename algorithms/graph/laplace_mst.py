"""Sealfon's Laplace MST: Laplace noise on every edge weight, then an exact MST of the noisy weights.

Sources: seed 002, Pinot, "Nodes clustering in a graph under differential privacy" (the PAMST report),
Definition 2.2.4 (graph-based Laplace mechanism: ``w'(e_i) = w(e_i) + Y_i``, ``Y_i ~ Lap(1/ε)`` under the ℓ1
neighbourhood of radius 1, Def. 2.2.1) and Sec. 3.2 (Sealfon's private approximate MST: any deterministic MST
of ``G'``; privacy by post-processing, Prop. 1.4.1); Sealfon (PODS 2016).

Calibration (resolves the ℓ1/ℓ∞ mix-up of seed 002, docs/findings.md F5): the noise scale is the ℓ1 sensitivity
of the whole weight vector under the *declared* neighbourhood divided by ε -- ``r/ε`` for ℓ1 radius ``r``,
``|E|·mu/ε`` for ℓ∞ radius ``mu`` -- derived from :mod:`algorithms.graph.neighbourhood`, so the printed
``Lap(1/ε)`` is the ℓ1 case ``r = 1``.  The broken twin
:class:`algorithms.broken.laplace_mst_l1_scale_for_linf.LaplaceMSTL1ScaleForLInf` uses the ℓ1 scale while claiming ℓ∞.

Noisy weights may be zero or negative; the MST routine (:mod:`algorithms.graph.mst` for large graphs, a
batched Prim over runs for small ones) accepts any finite weights.

Output: the tree's edge set as a bitmask code (<= 62 edges) or sorted edge ids, like
:class:`algorithms.graph.pamst.PAMST`; with ``release_weights=True`` the noisy weights of the tree's edges
(ascending edge id) are appended as float columns (free by post-processing, seed 002 Sec. 3.7).
True ε: ``epsilon`` (Laplace mechanism + post-processing); the tree alone usually leaks less.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..classic._validation import check_epsilon, check_n
from .mst import mst_edges
from .neighbourhood import as_neighbourhood
from .pamst import MAX_CODE_EDGES, as_graph, tree_codes
from .weighted_graph import WeightedGraph
from ..noise import NoiseSource

__all__ = ["LaplaceMST", "batched_mst", "graph_laplace"]

#: Graphs with at most this many edges use the batched Prim over runs; larger ones scipy per run.
_BATCHED_MAX_EDGES: int = 400


def batched_mst(graph: WeightedGraph, weights: np.ndarray) -> np.ndarray:
    """Exact MSTs of ``(runs, |E|)`` weight rows, as ``(runs, |V|-1)`` sorted edge ids."""
    weights = np.asarray(weights, dtype=np.float64)
    runs, n = weights.shape[0], graph.n_nodes
    if graph.n_edges > _BATCHED_MAX_EDGES:
        return np.stack([mst_edges(graph, row) for row in weights]) if runs else \
            np.empty((0, n - 1), dtype=np.int64)
    eu, ev = graph.edges[:, 0], graph.edges[:, 1]
    out = np.empty((runs, n - 1), dtype=np.int64)
    rows = np.arange(runs)
    in_s = np.zeros((runs, n), dtype=bool)
    in_s[:, 0] = True
    for i in range(n - 1):
        cut = in_s[:, eu] != in_s[:, ev]
        e = np.argmin(np.where(cut, weights, np.inf), axis=1)
        out[:, i] = e
        in_s[rows, eu[e]] = True
        in_s[rows, ev[e]] = True
    return np.sort(out, axis=1)


def graph_laplace(graph: WeightedGraph, scale: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Seed 002 Def. 2.2.4: ``n`` noisy copies ``w + Lap(scale)`` of the weights, shape ``(n, |E|)``."""
    return graph.weights + rng.laplace(0.0, scale, size=(n, graph.n_edges))


@dataclass(frozen=True)
class LaplaceMST:
    """Sealfon's private MST as a mechanism ``(graph, n, rng) -> trees``.

    ``neighbours``/``mu``: the declared neighbourhood (default ℓ1 radius 1, Sealfon's); the Laplace scale
    is its ℓ1 sensitivity over all edges divided by ``epsilon``.

    Noise steps (:meth:`release`): one ``"weights"`` Laplace step protecting the weight vector (one
    ``(|E|,)`` row per run) with the ℓ1 sensitivity :meth:`l1_sensitivity` the scale is derived from
    (``r`` for ℓ1 radius ``r``, ``|E|·mu`` for ℓ∞ radius ``mu``); the tree is post-processing.
    """

    epsilon: float
    mu: float = 1.0
    neighbours: Any = "l1"
    release_weights: bool = False
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        as_neighbourhood(self.neighbours, self.mu)
        if not isinstance(self.release_weights, bool):
            raise ValueError(f"release_weights must be True or False, got {self.release_weights!r}")

    def l1_sensitivity(self, graph: WeightedGraph) -> float:
        """The ℓ1 sensitivity the noise is calibrated for: the ℓ1 change of all ``|E|`` weights under the
        neighbourhood."""
        return as_neighbourhood(self.neighbours, self.mu).l1_change(graph.n_edges)

    def scale(self, graph: WeightedGraph) -> float:
        """Laplace scale: :meth:`l1_sensitivity` over ε."""
        return self.l1_sensitivity(graph) / float(self.epsilon)

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        return float(self.epsilon)

    def _tree_weights(self, graph: WeightedGraph, noisy: np.ndarray) -> np.ndarray:
        """The weights the tree is chosen on (the noisy ones; a broken twin overrides this)."""
        return noisy

    def __call__(self, x: WeightedGraph, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: WeightedGraph, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source: one ``"weights"`` Laplace step protecting
        the weight vector with ℓ1 sensitivity :meth:`l1_sensitivity`; the rest is post-processing."""
        graph = as_graph(x, type(self).__name__)
        n = check_n(n)
        scale = self.scale(graph)
        noisy = noise.add("weights", graph.weights,
                          lambda rng: rng.laplace(0.0, scale, size=(n, graph.n_edges)),
                          sensitivity=self.l1_sensitivity(graph), norm="l1", scale=scale, kind="laplace")
        trees = batched_mst(graph, self._tree_weights(graph, noisy))
        topo = tree_codes(trees) if graph.n_edges <= MAX_CODE_EDGES else trees
        if not self.release_weights:
            return topo
        released = np.take_along_axis(noisy, trees, axis=1)
        return np.column_stack([topo.reshape(n, -1).astype(np.float64), released])
