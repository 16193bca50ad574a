"""Exact (non-private) minimum spanning trees on :class:`WeightedGraph`, for any finite weights.

``scipy.sparse.csgraph.minimum_spanning_tree`` treats a stored 0 as a missing edge (it converts dense input
to CSR, where 0 means no entry): a noisy weight that is exactly 0, or a duplicated point, would silently disconnect
the graph. Here the weights are shifted to ``w - min(w) + 1`` (all >= 1) before scipy's Kruskal, which leaves the
MST topology unchanged (every spanning tree has ``|V|-1`` edges, so a constant shift adds the same amount to every
tree), and negative weights (Laplace noise) are handled the same way. Ties are broken by scipy's sort; with
continuous noise they have probability 0.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree

from .weighted_graph import WeightedGraph

__all__ = ["mst_edges", "edge_ids", "tree_weight"]


def edge_ids(graph: WeightedGraph, pairs: np.ndarray) -> np.ndarray:
    """Edge ids of node pairs ``(k, 2)`` (either orientation); raises if a pair is not an edge."""
    n = graph.n_nodes
    pairs = np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1)
    keys = graph.edges[:, 0] * n + graph.edges[:, 1]
    order = np.argsort(keys)
    q = pairs[:, 0] * n + pairs[:, 1]
    pos = np.searchsorted(keys[order], q)
    pos = np.minimum(pos, keys.size - 1)
    found = keys[order][pos] == q
    if not np.all(found):
        raise ValueError(f"node pair {pairs[~found][0].tolist()} is not an edge of the graph")
    return order[pos]


def mst_edges(graph: WeightedGraph, weights: np.ndarray | None = None) -> np.ndarray:
    """Sorted edge ids of a minimum spanning tree of ``graph`` under ``weights`` (default: its own).

    The graph must be connected.
    """
    graph.require_connected("minimum spanning tree")
    w = graph.weights if weights is None else np.asarray(weights, dtype=np.float64)
    if graph.n_nodes == 1:
        return np.zeros(0, dtype=np.int64)
    shifted = w - w.min() + 1.0
    n = graph.n_nodes
    a = sp.csr_matrix((shifted, (graph.edges[:, 0], graph.edges[:, 1])), shape=(n, n))
    t = minimum_spanning_tree(a).tocoo()
    return np.sort(edge_ids(graph, np.column_stack([t.row, t.col])))


def tree_weight(graph: WeightedGraph, tree: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Total weight of the edges ``tree`` (edge ids) under ``weights`` (default: the graph's)."""
    w = graph.weights if weights is None else np.asarray(weights, dtype=np.float64)
    return float(w[np.asarray(tree, dtype=np.int64)].sum())
