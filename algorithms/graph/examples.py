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

from .weighted_graph import WeightedGraph

__all__ = ["complete_graph", "graph", "corner_pairs", "topology", "TOPOLOGIES"]

#: Topologies :func:`topology` builds.
TOPOLOGIES: tuple[str, ...] = ("path", "cycle", "star", "complete", "wheel", "random")


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


def topology(kind: str, n_nodes: int, weights: Sequence[float] | float = 1.0, *, p: float = 0.5,
             seed: int = 0) -> WeightedGraph:
    """A connected graph of a named topology on ``n_nodes`` vertices: ``path`` (0-1-...), ``cycle``, ``star``
    (centre 0), ``complete``, ``wheel`` (hub 0 + a cycle) or ``random`` (G(n, p) drawn with ``seed``,
    redrawn until connected).  ``weights``: one number for every edge, or one per edge in edge order."""
    if kind not in TOPOLOGIES:
        raise ValueError(f"unknown topology {kind!r}; use one of {', '.join(TOPOLOGIES)}")
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, int) or n_nodes < 2:
        raise ValueError(f"n_nodes must be an integer >= 2, got {n_nodes!r}")
    n = n_nodes
    if kind == "path":
        edges = [(i, i + 1) for i in range(n - 1)]
    elif kind == "cycle":
        edges = [(i, i + 1) for i in range(n - 1)] + ([(0, n - 1)] if n > 2 else [])
    elif kind == "star":
        edges = [(0, i) for i in range(1, n)]
    elif kind == "complete":
        edges = [(i, j) for i in range(n) for j in range(i + 1, n)]
    elif kind == "wheel":
        if n < 4:
            raise ValueError(f"a wheel needs n_nodes >= 4, got {n}")
        edges = [(0, i) for i in range(1, n)] + [(i, i + 1) for i in range(1, n - 1)] + [(1, n - 1)]
    else:
        rng = np.random.default_rng(seed)
        for _ in range(10_000):
            g = WeightedGraph.erdos_renyi(n, p, rng)
            if g.n_components() == 1:
                edges = g.edges.tolist()
                break
        else:
            raise ValueError(f"G({n}, {p}) gave no connected graph in 10000 draws; raise p")
    m = len(edges)
    w = np.full(m, float(weights)) if np.ndim(weights) == 0 else np.asarray(weights, dtype=np.float64)
    if w.shape != (m,):
        raise ValueError(f"a {kind} graph on {n} nodes has {m} edges; got {w.shape[0]} weights")
    return WeightedGraph.from_arrays(n, np.asarray(edges, dtype=np.int64).reshape(-1, 2), w)
