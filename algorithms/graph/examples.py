"""Small graphs and neighbouring pairs used by the audit suites (``audits/graph.toml``) and the tests.

Suites cannot spell a :class:`WeightedGraph` in TOML, so they name these builders
(``input = { build = "algorithms.graph.examples:complete_graph", params = {...} }``).

The corner pairs ``(w, w + mu·d)`` with ``d`` in ``{-1, +1}^|E|`` are the vertices of seed 001's ℓ∞ ball
(Definition 2.1); the suites' directions were chosen by exhaustive search over all ``2^|E|`` corners of
small complete graphs with the exact PAMST pmf (:func:`algorithms.graph.pamst.pamst_pmf`), maximising the
likelihood ratio of the best output event -- the command is in ``docs/findings.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from algorithms.graph.weighted_graph import WeightedGraph

__all__ = ["complete_graph", "graph", "corner_pairs"]


def complete_graph(n_nodes: int, weights: Sequence[float]) -> WeightedGraph:
    """``K_n`` with the given weights (edges in ``itertools.combinations`` order)."""
    return WeightedGraph.complete(n_nodes, np.asarray(weights, dtype=np.float64))


def graph(n_nodes: int, edges: Any, weights: Sequence[float]) -> WeightedGraph:
    """A graph from arrays (see :meth:`WeightedGraph.from_arrays`)."""
    return WeightedGraph.from_arrays(n_nodes, edges, weights)


def corner_pairs(n_nodes: int, weights: Sequence[float], directions: Sequence[Sequence[float]], mu: float = 1.0,
                 edges: Any = None) -> list[tuple[WeightedGraph, WeightedGraph, str]]:
    """Pairs ``(G(w), G(w + mu·d), label)`` for each direction ``d`` (entries in ``[-1, 1]``); the complete
    graph unless ``edges`` is given."""
    base = complete_graph(n_nodes, weights) if edges is None else graph(n_nodes, edges, weights)
    out = []
    for d in np.asarray(directions, dtype=np.float64).reshape(-1, base.n_edges):
        if np.max(np.abs(d)) > 1:
            raise ValueError(f"direction {d.tolist()} leaves the ℓ∞ ball: entries must lie in [-1, 1]")
        label = "corner[" + "".join("+" if v > 0 else "-" if v < 0 else "0" for v in d) + "]"
        out.append((base, base.with_weights(base.weights + mu * d), label))
    return out
