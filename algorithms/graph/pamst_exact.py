"""Exact output distribution of PAMST on small graphs: spanning-tree enumeration + a dynamic programme over
vertex subsets.

Source: Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 3.3.1, Algorithm 2
(PAMST); Pinot, "Nodes clustering in a graph under differential privacy" (the PAMST report), Sec. 3.4,
Algorithm 1.  The per-step law is ``P(r | S) = exp(-c w(r)) / Z(S)`` over the cut ``R_S`` of the
current vertex set ``S`` (``Z(S) = sum_{r in R_S} exp(-c w(r))``; see :mod:`algorithms.graph.pamst` for why the
range minimum of the utility cancels).

Derivation
----------
A run that starts at ``s`` and outputs the tree ``T`` adds the vertices of ``T`` in some *growth order*
``s = v_1, v_2, ..., v_n`` in which every ``v_k`` is joined by an edge of ``T`` to ``S_{k-1} = {v_1..v_{k-1}}``;
because ``T`` is a tree and ``S_{k-1}`` is connected in ``T``, that edge is unique.  The probability of the
order is ``prod_k exp(-c w(e_k)) / Z(S_{k-1})``.  The numerator is ``exp(-c w(T))`` whatever the order, so

    P(T) = exp(-c w(T)) · (1/|V|) sum_s  g_T(s),      g_T = sum over growth orders of  prod_k 1/Z(S_{k-1}),

and ``g_T`` depends on the order only through the *sets* ``S_k``: the sum over the ``(n-1)!``-ish orders is a
dynamic programme over the vertex subsets that are connected in ``T``::

    F_T({s}) = 1/|V|  (uniform start) or [s = start];
    F_T(S ∪ {v}) += F_T(S) / Z(S)   for every v not in S with a T-edge into S;
    P(T) = exp(-c w(T)) · F_T(V).

``Z(S)`` is tabulated once for all ``2^|V|`` subsets; the programme runs for all trees at once (a
``(subsets, trees)`` array, in chunks of trees).  It runs in linear space when the bounds
``|E|^-(|V|-1) <= F_T <= (|V|-1)!·exp((|V|-1)·c·(max w - min w))`` keep it far from overflow and underflow, and
in log-space (``logaddexp``) otherwise, so that large ``c·w`` never overflows.  Cost: ``O(2^|V| · |V| · #trees)`` vectorised operations; no permutation is ever
enumerated.  Weights are shifted by their minimum first (the law is invariant to a common shift).

Spanning trees are enumerated as the acyclic ``(|V|-1)``-subsets of the edges (a vectorised union-find over
chunks of combinations), so the cost of enumeration is ``C(|E|, |V|-1)``; :func:`spanning_trees` refuses
graphs where that exceeds ``max_candidates`` with an error naming the numbers.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import logsumexp

from .weighted_graph import GraphError, WeightedGraph

__all__ = ["spanning_trees", "pamst_log_pmf", "subset_log_normalisers", "MAX_EXACT_NODES",
           "MAX_ENUMERATION_CANDIDATES"]

MAX_EXACT_NODES = 20
MAX_ENUMERATION_CANDIDATES = 30_000_000
_COMBO_CHUNK = 1 << 17


def _combination_chunks(m: int, k: int, chunk: int):
    it = itertools.combinations(range(m), k)
    while True:
        flat = np.fromiter(itertools.chain.from_iterable(itertools.islice(it, chunk)), dtype=np.int64)
        if flat.size == 0:
            return
        yield flat.reshape(-1, k)


def _acyclic(rows: np.ndarray, eu: np.ndarray, ev: np.ndarray, n: int) -> np.ndarray:
    """Which rows (edge-id sets) are forests: vectorised union-find by relabelling."""
    c = rows.shape[0]
    labels = np.broadcast_to(np.arange(n, dtype=np.int64), (c, n)).copy()
    ok = np.ones(c, dtype=bool)
    idx = np.arange(c)
    for j in range(rows.shape[1]):
        lu = labels[idx, eu[rows[:, j]]]
        lv = labels[idx, ev[rows[:, j]]]
        ok &= lu != lv
        labels = np.where(labels == lv[:, None], lu[:, None], labels)
    return ok


def spanning_trees(graph: WeightedGraph, *, max_candidates: int = MAX_ENUMERATION_CANDIDATES) -> np.ndarray:
    """All spanning trees of ``graph`` as a ``(#trees, |V|-1)`` int64 array of sorted edge ids, rows in
    lexicographic order.  Raises :class:`GraphError` if the graph is disconnected or if ``C(|E|, |V|-1)``
    (the number of edge subsets examined) exceeds ``max_candidates``."""
    graph.require_connected("spanning-tree enumeration")
    n, m = graph.n_nodes, graph.n_edges
    k = n - 1
    if k == 0:
        return np.zeros((1, 0), dtype=np.int64)
    total = math.comb(m, k)
    if total > max_candidates:
        raise GraphError(
            f"exact enumeration of the spanning trees would examine C({m}, {k}) = {total:,} edge subsets, more "
            f"than max_candidates={max_candidates:,}; use a graph with fewer edges or vertices (exact PAMST is "
            f"for graphs of about 10 vertices), or audit this graph statistically.")
    eu = graph.edges[:, 0].astype(np.int64)
    ev = graph.edges[:, 1].astype(np.int64)
    found = [rows[_acyclic(rows, eu, ev, n)] for rows in _combination_chunks(m, k, _COMBO_CHUNK)]
    return np.concatenate(found, axis=0)


def subset_log_normalisers(graph: WeightedGraph, c: float) -> np.ndarray:
    """``log Z(S)`` for every vertex subset ``S`` (index = bitmask), on weights shifted by their minimum;
    ``-inf`` for the empty and the full set (empty cut)."""
    n = graph.n_nodes
    subsets = np.arange(1 << n, dtype=np.int64)
    in_s = ((subsets[:, None] >> np.arange(n)) & 1).astype(bool)
    cut = in_s[:, graph.edges[:, 0]] != in_s[:, graph.edges[:, 1]]
    lw = -float(c) * (graph.weights - graph.weights.min())
    with np.errstate(divide="ignore"):
        return logsumexp(np.where(cut, lw[None, :], -np.inf), axis=1)


def _connected_subsets_by_size(graph: WeightedGraph) -> list[np.ndarray]:
    """Bitmasks of the vertex subsets that induce a connected subgraph of ``graph``, grouped by size."""
    n = graph.n_nodes
    nbr = np.zeros(n, dtype=np.int64)
    for u, v in graph.edges.tolist():
        nbr[u] |= 1 << v
        nbr[v] |= 1 << u
    layers = [np.array([1 << v for v in range(n)], dtype=np.int64)]
    for _ in range(n - 1):
        prev = layers[-1]
        grown = []
        for v in range(n):
            outside_and_adjacent = (((prev >> v) & 1) == 0) & ((nbr[v] & prev) != 0)
            grown.append(prev[outside_and_adjacent] | (1 << v))
        layers.append(np.unique(np.concatenate(grown)))
    return layers


def pamst_log_pmf(graph: WeightedGraph, c: float, start: int | None = None, *,
                  trees: np.ndarray | None = None, chunk_cells: int = 1 << 20,
                  log_space: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact PAMST output law on a small connected graph.

    Returns ``(trees, log_p)``: the ``(#trees, |V|-1)`` sorted edge ids of every spanning tree and the natural
    log of its probability (``-inf`` never occurs: every spanning tree has positive probability).  ``c`` is
    the coefficient of the per-step law ``P(r) ∝ exp(-c w(r))``; ``start`` a fixed start vertex or ``None``
    for the uniform start.  ``trees`` may be passed to reuse an enumeration (it must be
    :func:`spanning_trees` of a graph with the same topology).  ``log_space``: ``None`` chooses (linear space
    when it cannot overflow), ``True``/``False`` force one arithmetic (both are exact; tests compare them).
    """
    n = graph.n_nodes
    if n > MAX_EXACT_NODES:
        raise GraphError(f"exact PAMST is limited to {MAX_EXACT_NODES} vertices (2^|V| subset table); got "
                         f"{n}. Audit larger graphs statistically.")
    if not math.isfinite(c) or c < 0:
        raise GraphError(f"the PAMST coefficient c must be finite and >= 0, got {c!r}.")
    if start is not None and not 0 <= int(start) < n:
        raise GraphError(f"start vertex {start} is not a node of a graph with {n} nodes.")
    if trees is None:
        trees = spanning_trees(graph)
    if n == 1:
        return trees, np.zeros(1)
    log_z = subset_log_normalisers(graph, c)
    lw = -float(c) * (graph.weights - graph.weights.min())
    layers = _connected_subsets_by_size(graph)
    full = (1 << n) - 1
    eu, ev = graph.edges[:, 0], graph.edges[:, 1]
    log_p = np.empty(trees.shape[0])
    # per layer of connected subsets: for each vertex v, the subsets without v and their images S ∪ {v}
    plan = []
    for layer in layers[:-1]:
        moves = []
        for v in range(n):
            sel = ((layer >> v) & 1) == 0
            if sel.any():
                moves.append((v, sel, layer[sel], layer[sel] | (1 << v)))
        plan.append((layer, moves))
    # Linear space is exact and ~3x faster when it cannot overflow: with weights shifted to >= 0,
    # 1/m <= 1/Z(S) <= exp(c·range), so F_T <= (n-1)!·exp((n-1)·c·range) and F_T >= m^-(n-1).
    spread = float(c) * float(graph.weights.max() - graph.weights.min())
    linear = math.lgamma(n) + (n - 1) * spread < 600.0 and (n - 1) * math.log(max(graph.n_edges, 2)) < 600.0
    if log_space is not None:
        linear = not log_space
    with np.errstate(over="ignore"):
        inv_z = np.exp(-log_z)
    step = max(1, chunk_cells // (1 << n))
    for lo in range(0, trees.shape[0], step):
        block = trees[lo:lo + step]
        t = block.shape[0]
        # tree-neighbour bitmask of every vertex, per tree
        nbr = np.zeros((t, n), dtype=np.int64)
        rows = np.arange(t)[:, None]
        np.bitwise_or.at(nbr, (rows, eu[block]), np.left_shift(1, ev[block]))
        np.bitwise_or.at(nbr, (rows, ev[block]), np.left_shift(1, eu[block]))
        if linear:
            f = np.zeros((1 << n, t))
            f[1 << np.arange(n) if start is None else 1 << int(start)] = 1.0 / n if start is None else 1.0
            for layer, moves in plan:
                base = f[layer] * inv_z[layer][:, None]
                for v, sel, src, tgt in moves:
                    f[tgt] += base[sel] * ((nbr[None, :, v] & src[:, None]) != 0)
            log_p[lo:lo + t] = np.log(f[full]) + lw[block].sum(axis=1)
            continue
        f = np.full((1 << n, t), -np.inf)
        if start is None:
            f[1 << np.arange(n)] = -math.log(n)
        else:
            f[1 << int(start)] = 0.0
        for layer, moves in plan:
            base = f[layer] - log_z[layer][:, None]
            for v, sel, src, tgt in moves:
                joined = (nbr[None, :, v] & src[:, None]) != 0
                f[tgt] = np.logaddexp(f[tgt], np.where(joined, base[sel], -np.inf))
        log_p[lo:lo + t] = f[full] + lw[block].sum(axis=1)
    return trees, log_p
