"""The utility PAMST's exponential mechanism scores edges with, as one fixed-length table per graph.

Seed 001, Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Algorithm 2 lines 4-6: at a
step with visited set ``S`` the range is the cut ``R_S`` (edges with exactly one end in ``S``) and the utility of
``r ∈ R_S`` is ``u(w, r) = −|w(r) − min_{R_S} w|``; Definition 2.6 defines its sensitivity
``Δu = max_S max_{w~w'} max_r |u(w, r) − u(w', r)|``.  :func:`utility_table` lists ``u`` for every proper
non-empty vertex subset ``S`` and every edge (NaN off the cut), so a sensitivity checker can compare the whole
table between neighbouring weight vectors (ℓ∞ radius μ, Def. 2.1): the table's ℓ∞ sensitivity is Definition 2.6's
Δu, which is 2μ (the chosen edge's weight and the cut minimum move in opposite directions).  The exponential
mechanism only sees differences of utilities within one cut, so μ already suffices for its privacy
(docs/findings.md F1) -- the table is the quantity Definition 2.6 talks about, not the tighter one.

:func:`edge_weights` is the weight vector itself: the quantity the Laplace-MST (seed 002 Sec. 3.2) and
Weight-Release mechanisms add noise to.
"""

from __future__ import annotations

import numpy as np

from .weighted_graph import GraphError, WeightedGraph

__all__ = ["utility_table", "edge_weights", "MAX_UTILITY_NODES"]

#: Largest graph :func:`utility_table` enumerates the cuts of (2^|V| − 2 subsets).
MAX_UTILITY_NODES: int = 14


def _graph(graph: object, what: str) -> WeightedGraph:
    if not isinstance(graph, WeightedGraph):
        raise GraphError(f"{what} takes a WeightedGraph, got {type(graph).__name__}")
    return graph


def utility_table(graph: WeightedGraph) -> np.ndarray:
    """``u(w, r) = −|w(r) − min_{R_S} w|`` for every proper non-empty vertex subset ``S`` (rows, by bitmask)
    and edge ``r`` (columns); NaN where ``r`` is not in the cut ``R_S``.  Shape ``(2^|V| − 2, |E|)``."""
    g = _graph(graph, "utility_table")
    n = g.n_nodes
    if n > MAX_UTILITY_NODES:
        raise GraphError(f"utility_table enumerates all 2^|V| cuts; use at most {MAX_UTILITY_NODES} nodes, got {n}")
    masks = np.arange(1, (1 << n) - 1, dtype=np.int64)
    bits = (masks[:, None] >> np.arange(n)) & 1
    cut = bits[:, g.edges[:, 0]] != bits[:, g.edges[:, 1]]
    w = np.where(cut, g.weights[None, :], np.inf)
    wmin = w.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        u = -np.abs(w - wmin)
    return np.where(cut, u, np.nan)


def edge_weights(graph: WeightedGraph) -> np.ndarray:
    """The graph's weight vector (a copy)."""
    return np.array(_graph(graph, "edge_weights").weights, dtype=np.float64)
