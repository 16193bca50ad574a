"""PAMST: private approximate minimum spanning tree by repeated exponential mechanism (Prim-like).

Sources
-------
* Seed 001, Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 3.3.1,
  **Algorithm 2**: pick the start vertex ``v`` at random; while ``S_V != V``, draw
  ``r = M_Exp(G, w, u_G, R_{S_V}, ε/(|V|-1))`` where ``R_S`` is the set of edges with exactly one end in ``S``
  (xor-incident), add ``r`` and its outside end.  Utility ``u_G(w, r) = -|w(r) - min_{r' in R} w(r')|``;
  Definition 2.6: ``P(r) ∝ exp(ε u_G(w, r)/(2Δu_G))``.  Theorem 10: PAMST is ε-DP on G.
* Seed 002, Pinot, "Nodes clustering in a graph under differential privacy" (the PAMST report), Sec. 3.4,
  Algorithm 1 (the same algorithm with an "arbitrary" start vertex, no rule given; the start must not depend on
  the weights — here it is uniform from the mechanism's randomness, or a fixed vertex).

Utility sensitivity (resolves the reports' Δu ambiguities; docs/findings.md F1, F2, F8)
---------------------------------------------------------------------------------------
The per-step law is ``P(r) = exp(-c (w(r) - m_R)) / sum_s exp(-c (w(s) - m_R))`` with
``c = ε/((|V|-1) 2Δu)``; the range minimum ``m_R`` is common to every candidate and cancels, so
``P(r) ∝ exp(-c w(r))``.  Definition 2.6's sensitivity of ``u_G`` itself is ``2a`` for a per-edge change
``a`` (``w(r)`` and ``m_R`` can move in opposite directions), but the privacy loss of one step is at most
``c·a`` (numerator) ``+ c·a`` (normaliser) ``= 2ca``: with ``Δu = a`` each step is exactly
``ε/(|V|-1)``-DP.  This module therefore uses **Δu = a** (the neighbourhood's largest change of one edge
weight: ``mu`` for ℓ∞, ``r`` for ℓ1) by default — "the code proves a smaller one" than ``2a`` — and
``PAMST(..., sensitivity=2*mu)`` reproduces the paper's literal Definition 2.6 value, which keeps
``ε/2`` (a factor-2 slack; see ``docs/findings.md``).  ``true_epsilon()`` returns the bound
``ε·a/Δu`` of basic composition over the ``|V|-1`` steps.

Samplers (all exact; they agree in distribution, ``tests/test_pamst.py``)
-------------------------------------------------------------------------
* :func:`pamst_reference` -- Algorithm 2 literally: recompute ``R_S`` and the utilities every step and draw
  from the normalised exponential-mechanism probabilities; ``O(|V|·|E|)``.
* :func:`pamst_fast` -- one tree on a large graph in ``O(|V|^2 + |E|)``: keep for each outside vertex ``x``
  ``log Z_x = logsumexp_{u in S} (-c w_ux)``; draw the next vertex by Gumbel-max over ``log Z`` and then its
  tree neighbour by Gumbel-max over ``-c w_ux`` (``P(e = ux) = Z_x/sum Z · exp(-c w_ux)/Z_x``; fresh noise every
  step: this is *not* "Gumbel noise once per edge then an MST", a different mechanism, the input perturbation
  of Pagh, Retschmeier, Wu, Zhang, "Optimal Bounds for Private MSTs via Input Perturbation", arXiv 2412.10130).
* :func:`pamst_batched` -- many runs at once for audits: one inverse-CDF draw per run and step, with the
  per-vertex-set cumulative probabilities tabulated for graphs of up to 16 vertices (one gather per step)
  and computed from the ``(runs, edges)`` cut mask otherwise.
* :func:`pamst_pmf` / :meth:`PAMST.log_pmf` -- the exact output law on small graphs, from
  :mod:`algorithms.graph.pamst_exact` (spanning-tree enumeration + dynamic programme over vertex subsets).
* :meth:`PAMST.release` -- Algorithm 2 step by step for all runs at once against an explicit noise source
  (:mod:`algorithms.noise`), for frozen-noise replay.  Steps: ``"start"`` (only with a random start: a
  uniform vertex, utilities all 0 and declared sensitivity ∞ -- data-independent, it protects nothing), then
  ``"em[i]"`` for ``i = 0..|V|-2``: a selection over the ``(n, |E|)`` utility table ``u = -|w(r) - min_R w|``
  of Algorithm 2 (``-inf`` for edges outside the cut ``R_S`` of each run), ℓ∞ sensitivity Δu
  (:meth:`PAMST.utility_sensitivity`) and ``scale = c``.  Same law as the other samplers, its own random
  stream (one uniform per run and step, inverse CDF).  Note: the exponential mechanism is invariant under a
  common shift of one run's utilities, and Δu = a bounds the change of ``u`` *up to such a shift* (half the
  range of ``u' - u``, the quantity the privacy loss depends on); the literal ``u`` can move by ``2a`` in ℓ∞
  when ``w(r)`` and ``min_R w`` move in opposite directions.

Output of the mechanism: the tree's edge set, as an int64 code ``sum_{e in T} 2**e`` per run (shape
``(n,)``) when the graph has at most 62 edges, else the sorted edge ids (shape ``(n, |V|-1)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..classic._validation import check_choice, check_epsilon, check_n, check_positive
from .neighbourhood import as_neighbourhood
from .pamst_exact import pamst_log_pmf
from .weighted_graph import GraphError, WeightedGraph
from ..noise import NoiseSource

__all__ = [
    "PAMST",
    "pamst_reference",
    "pamst_fast",
    "pamst_batched",
    "pamst_pmf",
    "tree_codes",
    "decode_tree",
    "as_graph",
    "MAX_CODE_EDGES",
]

#: Largest edge count for which a tree is output as one int64 bitmask code.
MAX_CODE_EDGES: int = 62
#: Largest vertex count for which the batched sampler tabulates every vertex subset.
_TABLE_MAX_NODES: int = 16
_TABLE_MAX_ENTRIES: int = 1 << 22
#: Runs per chunk of the batched sampler (bounds the (runs, edges) working arrays).
_CHUNK_ENTRIES: int = 1 << 22


def as_graph(x: Any, algorithm: str) -> WeightedGraph:
    """The mechanism input as a connected :class:`WeightedGraph` with at least one node."""
    if not isinstance(x, WeightedGraph):
        raise GraphError(f"{algorithm} takes a WeightedGraph (algorithms.graph.WeightedGraph), got "
                         f"{type(x).__name__}; build one with WeightedGraph.from_arrays(n_nodes, edges, weights).")
    x.require_connected(algorithm)
    return x


def tree_codes(trees: np.ndarray) -> np.ndarray:
    """Bitmask codes ``sum 2**e`` of trees given as ``(n, k)`` edge-id arrays."""
    trees = np.asarray(trees, dtype=np.int64)
    return np.bitwise_or.reduce(np.left_shift(np.int64(1), trees), axis=1) if trees.shape[1] else \
        np.zeros(trees.shape[0], dtype=np.int64)


def decode_tree(code: int) -> np.ndarray:
    """Sorted edge ids of a bitmask code."""
    code = int(code)
    return np.array([e for e in range(code.bit_length()) if code >> e & 1], dtype=np.int64)


def _starts(graph: WeightedGraph, start: int | None, n: int, rng: np.random.Generator) -> np.ndarray:
    if start is None:
        return rng.integers(graph.n_nodes, size=n)
    return np.full(n, start, dtype=np.int64)


# --------------------------------------------------------------------------------------------------
# samplers: ``c`` is the coefficient of the per-step law P(r) ∝ exp(-c w(r))
# --------------------------------------------------------------------------------------------------


def pamst_reference(graph: WeightedGraph, step_epsilon: float, sensitivity: float, start: int,
                    rng: np.random.Generator) -> np.ndarray:
    """One run of Algorithm 2, literally; returns the chosen edge ids in order.

    Every step recomputes the range ``R_S`` (edges with exactly one end in ``S``), the utilities
    ``u = -|w(r) - min_R w|`` and the exponential-mechanism probabilities
    ``exp(step_epsilon·u/(2·sensitivity))`` (normalised), and draws one edge.
    """
    in_s = np.zeros(graph.n_nodes, dtype=bool)
    in_s[start] = True
    chosen = []
    eu, ev = graph.edges[:, 0], graph.edges[:, 1]
    for _ in range(graph.n_nodes - 1):
        r_s = np.flatnonzero(in_s[eu] != in_s[ev])
        w = graph.weights[r_s]
        u = -np.abs(w - w.min())
        p = np.exp(step_epsilon * u / (2.0 * sensitivity))
        r = int(r_s[rng.choice(r_s.size, p=p / p.sum())])
        chosen.append(r)
        in_s[eu[r]] = in_s[ev[r]] = True
    return np.asarray(chosen, dtype=np.int64)


def pamst_fast(graph: WeightedGraph, c: float, start: int, rng: np.random.Generator) -> np.ndarray:
    """One exact PAMST tree in ``O(|V|^2 + |E|)`` (per-vertex log-partition functions, Gumbel-max);
    returns the chosen edge ids in order."""
    n = graph.n_nodes
    indptr, nbr, eid = graph.adjacency
    neg_cw = -c * graph.weights
    log_z = np.full(n, -np.inf)
    outside = np.ones(n, dtype=bool)
    chosen = np.empty(n - 1, dtype=np.int64)

    def join(v: int) -> None:
        outside[v] = False
        lo, hi = indptr[v], indptr[v + 1]
        nb = nbr[lo:hi]
        log_z[nb] = np.logaddexp(log_z[nb], neg_cw[eid[lo:hi]])

    join(int(start))
    log_z[start] = -np.inf
    for i in range(n - 1):
        scores = np.where(outside, log_z, -np.inf) + rng.gumbel(size=n)
        v = int(np.argmax(scores))
        lo, hi = indptr[v], indptr[v + 1]
        inside = ~outside[nbr[lo:hi]]
        cand = eid[lo:hi][inside]
        e = int(cand[np.argmax(neg_cw[cand] + rng.gumbel(size=cand.size))])
        chosen[i] = e
        join(v)
    return chosen


def _subset_table(graph: WeightedGraph, c: float) -> np.ndarray:
    """``(2^|V|, |E|)`` cumulative step probabilities for every vertex subset (rows of subsets that are
    empty or everything are unused)."""
    n, m = graph.n_nodes, graph.n_edges
    bits = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
    cut = bits[:, graph.edges[:, 0]] != bits[:, graph.edges[:, 1]]
    w = np.where(cut, graph.weights, np.inf)
    wmin = w.min(axis=1, keepdims=True)
    wmin[~np.isfinite(wmin)] = 0.0
    p = np.where(cut, np.exp(-c * (w - wmin)), 0.0)
    cum = np.cumsum(p, axis=1)
    total = cum[:, -1:].copy()
    total[total == 0] = 1.0
    cum /= total
    del m
    return cum


def pamst_batched(graph: WeightedGraph, c: float, starts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``len(starts)`` independent PAMST trees at once, as ``(runs, |V|-1)`` edge ids in selection order.

    One uniform per run and step; the edge is the first whose cumulative probability exceeds it
    (inverse CDF).
    """
    n_runs, n, m = starts.shape[0], graph.n_nodes, graph.n_edges
    out = np.empty((n_runs, n - 1), dtype=np.int64)
    if n == 1 or n_runs == 0:
        return out
    eu, ev = graph.edges[:, 0], graph.edges[:, 1]
    if n <= _TABLE_MAX_NODES and (1 << n) * m <= _TABLE_MAX_ENTRIES:
        table = _subset_table(graph, c)
        chunk = max(1, _CHUNK_ENTRIES // m)
        for lo in range(0, n_runs, chunk):
            s = np.left_shift(np.int64(1), starts[lo:lo + chunk].astype(np.int64))
            for i in range(n - 1):
                u = rng.random(s.shape[0])
                e = np.count_nonzero(table[s] <= u[:, None], axis=1)
                out[lo:lo + chunk, i] = e
                a = eu[e]
                v = np.where((s >> a) & 1 == 1, ev[e], a)
                s |= np.left_shift(np.int64(1), v)
        return out
    chunk = max(1, _CHUNK_ENTRIES // max(m, n))
    neg_cw = -c * graph.weights
    rows = np.arange(chunk)
    for lo in range(0, n_runs, chunk):
        st = starts[lo:lo + chunk]
        k = st.shape[0]
        in_s = np.zeros((k, n), dtype=bool)
        in_s[rows[:k], st] = True
        for i in range(n - 1):
            cut = in_s[:, eu] != in_s[:, ev]
            logit = np.where(cut, neg_cw, -np.inf)
            logit -= logit.max(axis=1, keepdims=True)
            cum = np.cumsum(np.exp(logit), axis=1)
            u = rng.random(k) * cum[:, -1]
            e = np.count_nonzero(cum <= u[:, None], axis=1)
            out[lo:lo + k, i] = e
            in_s[rows[:k], eu[e]] = True
            in_s[rows[:k], ev[e]] = True
    return out


def pamst_pmf(graph: WeightedGraph, c: float, start: int | None = None) -> dict[int, float]:
    """Exact pmf of the output tree (bitmask code -> probability) for a start vertex, or averaged over a
    uniform start (``start=None``); graphs of <= 62 edges.  Computed by
    :func:`algorithms.graph.pamst_exact.pamst_log_pmf` (dynamic programme over vertex subsets).
    """
    if graph.n_edges > MAX_CODE_EDGES:
        raise GraphError(f"pamst_pmf needs at most {MAX_CODE_EDGES} edges, got {graph.n_edges}.")
    trees, log_p = pamst_log_pmf(graph, c, start)
    return dict(zip(tree_codes(trees).tolist(), np.exp(log_p).tolist()))


# --------------------------------------------------------------------------------------------------
# the mechanism
# --------------------------------------------------------------------------------------------------

SAMPLERS: tuple[str, ...] = ("batched", "fast", "reference")
OUTPUTS: tuple[str, ...] = ("auto", "code", "edges")


@dataclass(frozen=True)
class PAMST:
    """PAMST (seed 001 Algorithm 2) as a mechanism ``(graph, n, rng) -> trees``.

    Parameters
    ----------
    epsilon : total privacy budget; each of the ``|V|-1`` steps spends ``epsilon/(|V|-1)``.
    mu, neighbours : the weight neighbourhood the claim is made for (``"linf"`` radius ``mu``, seed 001
        Def. 2.1; or ``"l1"`` radius ``mu``; or a relation object with ``linf_distance_bound``).
    sensitivity : the utility sensitivity Δu; ``None`` derives it from the neighbourhood as the largest
        change of one edge weight (see the module docstring); ``2*mu`` is the paper's Definition 2.6 value.
    start : a fixed start vertex, or ``None`` for a uniformly random one (independent of the weights).
    sampler : ``"batched"`` (default, vectorised over runs), ``"fast"`` or ``"reference"`` (loop of one-shot
        runs).
    output : ``"code"`` (int64 bitmask per run, <= 62 edges), ``"edges"`` (sorted edge ids per run) or
        ``"auto"``.

    Noise steps (:meth:`release`; it ignores ``sampler``): ``"start"`` (random start only: declared
    sensitivity ∞, utilities 0) and ``|V|-1`` selections ``"em[i]"`` over ``u = -|w(r) - min_R w|`` (``-inf``
    off the cut), ℓ∞ sensitivity :meth:`utility_sensitivity` (Δu), ``scale`` :meth:`coefficient`.  Twins that
    override the calibration hooks (:meth:`utility_sensitivity`, :meth:`step_epsilon`, :meth:`coefficient`)
    inherit it and declare what they compute.
    """

    epsilon: float
    mu: float = 1.0
    neighbours: Any = "linf"
    sensitivity: float | None = None
    start: int | None = None
    sampler: str = "batched"
    output: str = "auto"
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        as_neighbourhood(self.neighbours, self.mu)
        if self.sensitivity is not None:
            check_positive("sensitivity", self.sensitivity)
        if self.start is not None and (isinstance(self.start, bool) or not isinstance(self.start, int)
                                       or self.start < 0):
            raise ValueError(f"start must be None (uniform random) or a vertex id >= 0, got {self.start!r}")
        check_choice("sampler", self.sampler, SAMPLERS)
        check_choice("output", self.output, OUTPUTS)

    # -- calibration ---------------------------------------------------------------------------------
    def utility_sensitivity(self, graph: WeightedGraph) -> float:
        """Δu: the given ``sensitivity`` or the neighbourhood's largest change of one edge weight."""
        if self.sensitivity is not None:
            return float(self.sensitivity)
        return as_neighbourhood(self.neighbours, self.mu).max_edge_change(graph.n_edges)

    def step_epsilon(self, graph: WeightedGraph) -> float:
        """ε spent by each exponential-mechanism call: ``ε/(|V|-1)``."""
        return float(self.epsilon) / max(graph.n_nodes - 1, 1)

    def coefficient(self, graph: WeightedGraph) -> float:
        """``c`` of the per-step law ``P(r) ∝ exp(-c w(r))``: ``step_epsilon/(2Δu)``."""
        return self.step_epsilon(graph) / (2.0 * self.utility_sensitivity(graph))

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        """Upper bound on the privacy loss: ``ε·a/Δu`` (``a`` = largest change of one weight); equals
        ``epsilon`` with the derived Δu, ``epsilon/2`` with the paper's ``2·mu``."""
        if self.sensitivity is None:
            return float(self.epsilon)
        a = as_neighbourhood(self.neighbours, self.mu).max_edge_change(graph.n_edges if graph else 1)
        return float(self.epsilon) * a / float(self.sensitivity)

    # -- sampling ------------------------------------------------------------------------------------
    def trees(self, graph: WeightedGraph, n: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, |V|-1)`` edge ids in selection order, drawn with ``self.sampler``."""
        graph = as_graph(graph, "PAMST")
        return self._trees(graph, check_n(n), rng, self.coefficient(graph))

    def _trees(self, graph: WeightedGraph, n: int, rng: np.random.Generator, c: float) -> np.ndarray:
        starts = _starts(graph, self.start, n, rng)
        if self.start is not None and self.start >= graph.n_nodes:
            raise GraphError(f"start vertex {self.start} is not a node of a graph with {graph.n_nodes} nodes.")
        if self.sampler == "batched":
            return pamst_batched(graph, c, starts, rng)
        out = np.empty((n, graph.n_nodes - 1), dtype=np.int64)
        for i in range(n):
            if self.sampler == "fast":
                out[i] = pamst_fast(graph, c, int(starts[i]), rng)
            else:
                out[i] = pamst_reference(graph, 2.0 * c, 1.0, int(starts[i]), rng)
        return out

    def encode(self, graph: WeightedGraph, trees: np.ndarray) -> np.ndarray:
        """Trees as the mechanism's output: bitmask codes or sorted edge ids."""
        use_code = self.output == "code" or (self.output == "auto" and graph.n_edges <= MAX_CODE_EDGES)
        if use_code:
            if graph.n_edges > MAX_CODE_EDGES:
                raise GraphError(f"output='code' needs at most {MAX_CODE_EDGES} edges, got {graph.n_edges}; "
                                 f"use output='edges'.")
            return tree_codes(trees)
        return np.sort(trees, axis=1)

    def __call__(self, x: WeightedGraph, n: int, rng: np.random.Generator) -> np.ndarray:
        graph = as_graph(x, "PAMST")
        return self.encode(graph, self._trees(graph, check_n(n), rng, self.coefficient(graph)))

    def release(self, x: WeightedGraph, n: int, noise: NoiseSource) -> np.ndarray:
        """Algorithm 2 for ``n`` runs at once against an explicit noise source (steps: class docstring).

        Same output law and encoding as :meth:`__call__` (whose batched/table samplers keep their own,
        faster random stream)."""
        graph = as_graph(x, "PAMST")
        return self.encode(graph, self.release_trees(graph, check_n(n), noise))

    def release_trees(self, graph: WeightedGraph, n: int, noise: NoiseSource) -> np.ndarray:
        """``(n, |V|-1)`` edge ids in selection order, every randomised step through ``noise``."""
        n_nodes = graph.n_nodes
        if self.start is not None and self.start >= n_nodes:
            raise GraphError(f"start vertex {self.start} is not a node of a graph with {n_nodes} nodes.")
        if self.start is None:
            starts = np.asarray(noise.select("start", np.zeros(n_nodes), lambda rng: rng.integers(n_nodes, size=n),
                                             sensitivity=math.inf, norm="linf"), dtype=np.int64)
        else:
            starts = np.full(n, self.start, dtype=np.int64)
        c = self.coefficient(graph)
        du = self.utility_sensitivity(graph)
        eu, ev = graph.edges[:, 0], graph.edges[:, 1]
        rows = np.arange(n)
        out = np.empty((n, n_nodes - 1), dtype=np.int64)
        in_s = np.zeros((n, n_nodes), dtype=bool)
        in_s[rows, starts] = True
        for i in range(n_nodes - 1):
            cut = in_s[:, eu] != in_s[:, ev]                       # R_S of every run
            w = np.where(cut, graph.weights, np.inf)
            utilities = np.where(cut, -np.abs(w - w.min(axis=1, keepdims=True)), -np.inf)

            def draw(rng: np.random.Generator, utilities: np.ndarray = utilities) -> np.ndarray:
                cum = np.cumsum(np.exp(c * utilities), axis=1)    # max logit is 0: cum[:, -1] >= 1
                u = rng.random(n) * cum[:, -1]
                return np.count_nonzero(cum <= u[:, None], axis=1)

            e = np.asarray(noise.select(f"em[{i}]", utilities, draw, sensitivity=du, norm="linf", scale=c),
                           dtype=np.int64)
            out[:, i] = e
            in_s[rows, eu[e]] = True
            in_s[rows, ev[e]] = True
        return out

    def pmf(self, x: WeightedGraph) -> dict[Any, float]:
        """Exact output pmf on a small graph: output (bitmask code, or tuple for row outputs) -> probability."""
        outputs, log_p = self.log_pmf(x)
        keys = [tuple(o) if isinstance(o, list) else o for o in outputs.tolist()]
        return dict(zip(keys, np.exp(log_p).tolist()))

    def log_pmf(self, x: WeightedGraph) -> tuple[np.ndarray, np.ndarray]:
        """Exact output law on a small graph: ``(outputs, log_p)`` with the outputs encoded as
        :meth:`__call__` encodes them (bitmask codes, or sorted edge-id rows above 62 edges).  Uses
        :func:`algorithms.graph.pamst_exact.pamst_log_pmf`; about 10 vertices at most."""
        graph = as_graph(x, "PAMST")
        trees, log_p = pamst_log_pmf(graph, self.coefficient(graph), self.start)
        return self.encode(graph, trees), log_p
