"""Seed 001's utility theorems as checkable objects (the protocol of :mod:`dpverify.theorems.check`).

Source: seed 001, Pinot et al., "Graph-based clustering under differential privacy"
(UAI 2018, arXiv 1803.03831): §2.2 Theorem 3, §3.2 Definitions 3.7-3.11, Algorithm 1,
Theorems 7-9 and Corollary 3.1, §3.4 Theorems 13 and 14, supplementary §6 (proofs of Thms 7-9), §7.1 (proof of
Thm 13) and §7.2 (Theorem 15 and the proof of Thm 14).  The errata below were
found here and are listed in each class docstring.

=====================================  ================================================================
class                                  statement
=====================================  ================================================================
:class:`ExponentialMechanismAccuracy`  Thm 3: ``P[u(M) <= OPT - (2Δu/ε)(t + ln|R|)] <= e^{-t}``
:class:`PartitioningTopology`          Thm 13: PAMST's tree has a partitioning topology with probability
                                       ``>= 1 - Σ_i (|C_i|-1) exp(...)`` (main-text / appendix / corrected)
:class:`WeightReleaseSeparability`     Thm 14: Weight-Release keeps homogeneous separability with probability
                                       ``>= 1 - V(φ)/(V(φ)+E(φ)²)`` (φ form, Λ form printed / corrected)
:class:`DBMSTCluRecovery`              Cor 3.1: DBMSTClu on an MST of a graph with K weakly homogeneous
                                       clusters returns exactly the clusters (random instances)
:class:`DBMSTCluRecoveryExhaustive`    Cor 3.1 on every small tree, cluster partition and weight pattern
=====================================  ================================================================

Homogeneity (Defs 3.9-3.11), worked out
---------------------------------------
``H_T(s)`` (Def 3.9) is ``α_T·max_T w < w(s)`` with ``α_T = max_T w / min_T w``, i.e. ``(max_T w)²/min_T w <
w(s)``; ``H_{T|C}`` uses the edges of ``T`` with both ends in ``C``.  When ``T|C`` has no edge (a 1-node
cluster) ``α`` is ``0/0``: we read ``H`` as vacuously true there (Def 3.3's DISP = 0 convention); a
non-positive internal weight makes ``α`` undefined (Def 3.9 states ``α >= 1``) and is reported.

* **Strong** (Def 3.11: every spanning tree ``T`` and every cut edge ``e ∈ Cut(T)`` at ``C_i``).  Any forest
  ``F`` of ``G[C_i]`` plus any inter-cluster edge ``e`` at ``C_i`` is acyclic and extends to a spanning tree,
  and ``T|C_i`` ranges over exactly these forests; the largest ``(max_F w)²/min_F w`` is attained by the
  2-edge forest {heaviest, lightest edge of ``G[C_i]``} (two distinct edges of a simple graph never form a
  cycle).  So ``C_i`` is strongly homogeneous **iff every inter-cluster edge at C_i weighs more than
  max_in(C_i)²/min_in(C_i)** (over all edges of ``G[C_i]``), and ``ᾱ_i = max_in/min_in``.
* **Weak** (Def 3.10: MSTs only).  If every inter-cluster edge at ``C_i`` is heavier than the bottleneck of
  ``MST(G[C_i])``, the MST of ``G`` restricted to ``C_i`` is ``MST(G[C_i])`` (cycle property); the condition
  then only involves the MST's own intra edges.  :func:`weak_homogeneity` checks it on the MST (and reports a
  non-unique MST, since Def 3.10 quantifies over all of them).

:func:`clustered_graph` builds graphs with either property, deterministic given ``seed``; the knobs are the
cluster sizes, the intra-cluster density, the intra weight range ``[w_min, w_max]`` (both ends attained in
every cluster with >= 2 internal edges, so ``ᾱ_i = w_max/w_min``), ``pendants`` (nodes of a cluster attached
to it by one ``w_max`` edge only: the structure that makes Thm 13 tight, see :class:`PartitioningTopology`),
the inter-cluster density, ``margin``: inter weights are ``threshold·(1 + margin·(1 + U))``, ``U ~ U(0,1)``
(``margin -> 0`` is *at* the homogeneity threshold; the jitter keeps the MST unique), and ``inter_spread``
(an extra factor ``1 + inter_spread·V``: inter edges at very different heights above their thresholds).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
from scipy import integrate

from ..classic.exponential import ExponentialMechanism, exponential_mechanism_pmf
from ..graph.dbmstclu import canonical_labels, dbmstclu
from ..graph.mst import mst_edges
from ..graph.pamst import PAMST
from ..graph.weight_release import CALIBRATIONS, WeightRelease
from ..graph.weighted_graph import WeightedGraph
from .base import Property
from .params import (
    real as _real,
    positive as _positive,
    nonnegative as _nonnegative,
    probability as _probability,
    integer as _integer,
    choice as _choice,
)

__all__ = [
    "ClusteredGraph",
    "Homogeneity",
    "clustered_graph",
    "strong_homogeneity",
    "weak_homogeneity",
    "tree_is_partitioning",
    "pamst_partitioning_probability",
    "laplace_order_moment",
    "laplace_max_moments",
    "ExponentialMechanismAccuracy",
    "PartitioningTopology",
    "WeightReleaseSeparability",
    "DBMSTCluRecovery",
    "DBMSTCluRecoveryExhaustive",
]

HOMOGENEITY: tuple[str, ...] = ("strong", "weak")
TOPOLOGIES: tuple[str, ...] = ("intended", "literal")
#: Largest graph for which :func:`pamst_partitioning_probability` tabulates every vertex subset.
MAX_EXACT_NODES: int = 16
#: Theorem 14's "s ≪ p, τ", read as ``s <= min(p, τ)/MUCH_SMALLER``.
MUCH_SMALLER: float = 10.0


# ------------------------------------------------------------------------------------------ validation
def _reals(name: str, value: Any) -> tuple[Any, ...]:
    """A non-empty list (or 1-D array: suites pass arrays) as a tuple of Python scalars."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) == 0:
        raise ValueError(f"{name} must be a non-empty list, got {value!r}")
    return tuple(value)


def _sizes(value: Any) -> tuple[int, ...]:
    return tuple(_integer("each cluster size", s, 1) for s in _reals("sizes", value))


# ------------------------------------------------------------------------------------------ inputs
@dataclass(frozen=True, eq=False)
class ClusteredGraph:
    """A weighted graph and its planted clusters: ``labels[v]`` is the cluster of node ``v`` (0..K-1)."""

    graph: WeightedGraph
    labels: np.ndarray

    @property
    def k(self) -> int:
        return int(self.labels.max()) + 1

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.labels, minlength=self.k)

    @cached_property
    def intra(self) -> np.ndarray:
        """Cluster of each edge (-1 for inter-cluster edges)."""
        lu, lv = self.labels[self.graph.edges[:, 0]], self.labels[self.graph.edges[:, 1]]
        return np.where(lu == lv, lu, -1)


def _random_tree(m: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """A random recursive tree on ``0..m-1`` (node ``v`` attached to a uniform earlier node)."""
    return [(int(rng.integers(v)), v) for v in range(1, m)]


def _tree_path_max(n: int, edges: Sequence[tuple[int, int]], weights: Sequence[float]) -> np.ndarray:
    """``(n, n)`` largest weight on the tree path between every two nodes of a forest (-inf: same node or
    different trees)."""
    adj: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for (a, b), w in zip(edges, weights):
        adj[a].append((b, float(w)))
        adj[b].append((a, float(w)))
    out = np.full((n, n), -np.inf)
    for s in range(n):
        stack = [(s, -1, -np.inf)]
        while stack:
            x, parent, best = stack.pop()
            out[s, x] = best
            for y, w in adj[x]:
                if y != parent:
                    stack.append((y, x, max(best, w)))
    return out


def clustered_graph(sizes: Sequence[int], *, homogeneity: str = "strong", intra_density: float = 0.3,
                    w_min: float = 1.0, w_max: float = 2.0, inter_density: float = 0.5, margin: float = 1e-6,
                    pendants: int = 0, inter_spread: float = 0.0, seed: int = 0) -> ClusteredGraph:
    """A connected graph with ``len(sizes)`` planted clusters that are strongly (Def 3.11) or weakly
    (Def 3.10) homogeneous, deterministic given ``seed``.

    Cluster ``i`` holds the nodes ``sum(sizes[:i]) .. sum(sizes[:i+1])-1``.  Each cluster of ``m >= 2`` nodes
    has a connected *core* of ``m - q`` nodes (``q = min(pendants, m - 2)``; a random recursive spanning tree
    plus every other core pair with probability ``intra_density``) and ``q`` pendant nodes, each joined to a
    random core node by one edge of weight ``w_max``.  Core tree edges weigh ``U(w_min, w_max)`` with one of
    them set to ``w_min`` (and, without pendants, another to ``w_max``): every cluster with >= 2 internal
    edges has ``max_in = w_max`` and ``min_in = w_min``; a 2-node cluster's single edge weighs ``w_max``.

    * ``homogeneity="strong"``: the extra core edges weigh ``U(w_min, w_max)`` too.
    * ``homogeneity="weak"``: the extra core edges weigh ``U(path_max, 2·w_max²/w_min)`` where ``path_max``
      is the largest weight on the core tree path between their ends: the cluster's MST is the core tree
      plus the pendant edges, and the extra edges (possibly heavier than the inter-cluster ones) break
      strong homogeneity but not weak homogeneity.

    Inter-cluster edges: every node pair of two different clusters with probability ``inter_density``, plus
    one random edge from cluster ``j`` to a random earlier cluster when none was drawn (connectivity).  An
    inter edge between ``C_a`` and ``C_b`` weighs ``max(thr_a, thr_b)·(1 + margin·(1 + U))·(1 + inter_spread·V)``
    (``U, V ~ U(0, 1)``: ``inter_spread > 0`` puts some inter edges far above the threshold and others at it) with
    ``thr = max_in²/min_in`` of the cluster (over ``G[C]`` for strong, over its MST for weak; a 1-node cluster
    has no threshold; two 1-node clusters use ``w_max²/w_min``).
    """
    sizes = _sizes(sizes)
    _choice("homogeneity", homogeneity, HOMOGENEITY)
    intra_density = _probability("intra_density", intra_density)
    inter_density = _probability("inter_density", inter_density)
    w_min, w_max = _positive("w_min", w_min), _positive("w_max", w_max)
    if w_max < w_min:
        raise ValueError(f"w_max must be >= w_min, got w_min={w_min}, w_max={w_max}")
    margin = _nonnegative("margin", margin)
    pendants = _integer("pendants", pendants, 0)
    inter_spread = _nonnegative("inter_spread", inter_spread)
    rng = np.random.default_rng(_integer("seed", seed, 0))
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    n = int(offsets[-1])
    labels = np.repeat(np.arange(len(sizes)), sizes)
    edges: list[tuple[int, int]] = []
    weights: list[float] = []
    thresholds = np.zeros(len(sizes))
    for i, m in enumerate(sizes):
        if m == 1:
            continue
        o = int(offsets[i])
        q = min(pendants, m - 2) if m >= 3 else 0
        core = m - q
        tree = _random_tree(core, rng)
        tw = list(rng.uniform(w_min, w_max, size=len(tree)))
        if tree:
            low = int(rng.integers(len(tree)))
            tw[low] = w_min
            if q == 0 and len(tree) >= 2:
                tw[(low + 1 + int(rng.integers(len(tree) - 1))) % len(tree)] = w_max
        if m == 2:
            tw = [w_max]
        pend = [(int(rng.integers(core)), core + k) for k in range(q)]
        backbone = tree + pend
        bw = tw + [w_max] * q
        tree_set = set(tree)
        extra = [(a, b) for a, b in itertools.combinations(range(core), 2) if (a, b) not in tree_set
                 and rng.random() < intra_density]
        if homogeneity == "strong":
            ew = list(rng.uniform(w_min, w_max, size=len(extra)))
            allw = bw + ew
        else:
            path_max = _tree_path_max(core, tree, tw)
            top = 2.0 * w_max * w_max / w_min
            ew = [float(rng.uniform(path_max[a, b], top)) for a, b in extra]
            allw = bw
        thresholds[i] = max(allw) ** 2 / min(allw)
        edges += [(o + a, o + b) for a, b in backbone + extra]
        weights += bw + ew
    generic = w_max * w_max / w_min
    for j in range(1, len(sizes)):
        new = []
        for i in range(j):
            xs, ys = np.arange(offsets[i], offsets[i + 1]), np.arange(offsets[j], offsets[j + 1])
            keep = rng.random((xs.size, ys.size)) < inter_density
            new += [(int(xs[a]), int(ys[b])) for a, b in zip(*np.nonzero(keep))]
        if not new:
            i = int(rng.integers(j))
            new = [(int(rng.integers(offsets[i], offsets[i + 1])), int(rng.integers(offsets[j], offsets[j + 1])))]
        for x, y in new:
            thr = max(thresholds[labels[x]], thresholds[labels[y]]) or generic
            edges.append((x, y))
            spread = 1.0 + inter_spread * rng.random() if inter_spread else 1.0
            weights.append(float(thr * (1.0 + margin * (1.0 + rng.random())) * spread))
    graph = WeightedGraph.from_arrays(n, np.asarray(edges, dtype=np.int64).reshape(-1, 2), np.asarray(weights))
    return ClusteredGraph(graph, labels)


# ------------------------------------------------------------------------------------------ checkers
@dataclass(frozen=True)
class Homogeneity:
    """Result of :func:`strong_homogeneity` / :func:`weak_homogeneity`.

    ``alpha[i]`` is ``ᾱ_i`` (strong) or ``α_i`` (weak) -- NaN for a cluster without an internal edge;
    ``max_in`` / ``min_in`` the extreme internal weights the condition uses; ``problems`` one message per
    failing cluster (empty: the condition holds).
    """

    kind: str
    alpha: np.ndarray
    max_in: np.ndarray
    min_in: np.ndarray
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def threshold(self) -> np.ndarray:
        """``α_i·max_in(C_i) = max_in²/min_in``: inter edges at ``C_i`` must weigh more (NaN: no condition)."""
        return self.alpha * self.max_in


def _extremes(labels: np.ndarray, edges: np.ndarray, weights: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    lu, lv = labels[edges[:, 0]], labels[edges[:, 1]]
    inside = lu == lv
    mx, mn = np.full(k, -np.inf), np.full(k, np.inf)
    np.maximum.at(mx, lu[inside], weights[inside])
    np.minimum.at(mn, lu[inside], weights[inside])
    none = ~np.isfinite(mx)
    mx[none], mn[none] = np.nan, np.nan
    return mx, mn


def _check(kind: str, graph: WeightedGraph, labels: np.ndarray, edges: np.ndarray, weights: np.ndarray,
           cut_edges: np.ndarray, cut_weights: np.ndarray, k: int, where: str) -> tuple[Homogeneity, list[str]]:
    mx, mn = _extremes(labels, edges, weights, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = mx / mn
    problems: list[str] = []
    for i in range(k):
        if np.isnan(mx[i]):
            continue
        if mn[i] <= 0:
            problems.append(f"cluster {i} has a non-positive internal weight {mn[i]:.6g}{where}: α = max/min is "
                            f"undefined (Def 3.9 needs α >= 1); use positive weights")
            continue
        thr = mx[i] * mx[i] / mn[i]
        at_i = (labels[cut_edges[:, 0]] == i) | (labels[cut_edges[:, 1]] == i)
        bad = np.flatnonzero(at_i & (cut_weights <= thr))
        if bad.size:
            e = cut_edges[bad[0]]
            problems.append(f"cluster {i} is not {kind}ly homogeneous: inter edge ({e[0]},{e[1]}) weight "
                            f"{cut_weights[bad[0]]:.9g} <= max_in^2/min_in = {mx[i]:.6g}^2/{mn[i]:.6g} = {thr:.9g}"
                            f"{where} ({bad.size} such edge(s)); raise the inter-cluster weights above it")
    return Homogeneity(kind, alpha, mx, mn, tuple(problems)), problems


def _labels(graph: WeightedGraph, labels: Any) -> np.ndarray:
    lab = canonical_labels(np.asarray(labels))
    if lab.shape != (graph.n_nodes,):
        raise ValueError(f"labels must give one cluster per node ({graph.n_nodes}), got shape {np.shape(labels)}")
    return lab


def strong_homogeneity(graph: WeightedGraph, labels: Any) -> Homogeneity:
    """Def 3.11 for every cluster: every inter edge at ``C_i`` must weigh more than ``max_in²/min_in`` over the
    edges of ``G[C_i]`` (see the module docstring for why this is equivalent); ``alpha`` is ``ᾱ_i``."""
    lab = _labels(graph, labels)
    inter = lab[graph.edges[:, 0]] != lab[graph.edges[:, 1]]
    h, _ = _check("strong", graph, lab, graph.edges, graph.weights, graph.edges[inter], graph.weights[inter],
                  int(lab.max()) + 1, "")
    return h


def weak_homogeneity(graph: WeightedGraph, labels: Any) -> Homogeneity:
    """Def 3.10 on the MST of ``graph``: for every cut edge ``e^(ij)`` of the MST ``T``,
    ``α_{T|C_i}·max_{T|C_i} w < w(e^(ij))``; ``alpha`` is ``α_i``.  Also reported: a non-unique MST (Def 3.10
    quantifies over all MSTs; the check covers the one :func:`algorithms.graph.mst.mst_edges` returns) and a
    cluster that the MST splits (``|Cut(T)| != K-1``; the proof of Thm 9 assumes ``|Cut(T)| = K-1``)."""
    lab = _labels(graph, labels)
    k = int(lab.max()) + 1
    tree = mst_edges(graph)
    te, tw = graph.edges[tree], graph.weights[tree]
    inter = lab[te[:, 0]] != lab[te[:, 1]]
    h, problems = _check("weak", graph, lab, te, tw, te[inter], tw[inter], k, " in the MST")
    if int(inter.sum()) != k - 1:
        problems.append(f"the MST has {int(inter.sum())} inter-cluster edges, not K-1 = {k - 1}: some cluster is "
                        f"not a connected subtree of the MST; connect every cluster internally with edges lighter "
                        f"than its inter edges")
    tie = _harmful_tie(graph, lab, tree)
    if tie is not None:
        problems.append(f"the MST is not unique (non-tree edge ({tie[0]},{tie[1]}) ties the heaviest edge of its "
                        f"tree path) and the other MSTs differ in their cut or in a cluster's subtree; Def 3.10 "
                        f"quantifies over all MSTs and this check covers one: break the ties")
    return Homogeneity("weak", h.alpha, h.max_in, h.min_in, tuple(problems))


def _harmful_tie(graph: WeightedGraph, labels: np.ndarray, tree: np.ndarray) -> tuple[int, int] | None:
    """A non-tree edge ``f`` that could replace a tree edge of equal weight (another MST), unless ``f`` and every
    such tree edge lie inside the same cluster (then every MST has the same cut and the same weights inside each
    cluster, so Def 3.10 reads the same on all of them).  ``None`` if there is no such edge."""
    n = graph.n_nodes
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for e in tree.tolist():
        a, b = graph.edges[e]
        adj[a].append((int(b), e))
        adj[b].append((int(a), e))
    in_tree = np.zeros(graph.n_edges, dtype=bool)
    in_tree[tree] = True
    for f in np.flatnonzero(~in_tree).tolist():
        u, v = (int(x) for x in graph.edges[f])
        parent: dict[int, tuple[int, int]] = {u: (-1, -1)}
        stack = [u]
        while stack:
            x = stack.pop()
            for y, e in adj[x]:
                if y not in parent:
                    parent[y] = (x, e)
                    stack.append(y)
        path, x = [], v
        while x != u:
            x, e = parent[x]
            path.append(e)
        wf = graph.weights[f]
        tied = [e for e in path if graph.weights[e] >= wf]
        if not tied:
            continue
        cl = {int(labels[graph.edges[e, 0]]) if labels[graph.edges[e, 0]] == labels[graph.edges[e, 1]] else -1
              for e in tied + [f]}
        if cl != {int(labels[u])} or labels[u] != labels[v]:
            return u, v
    return None


def tree_is_partitioning(labels: np.ndarray, edges: np.ndarray, trees: np.ndarray, topology: str) -> np.ndarray:
    """Which trees (``(n, |V|-1)`` edge ids into ``edges``) have a partitioning topology (Def 3.8).

    ``"literal"``: exactly one tree edge between *every* pair of clusters (Def 3.8 as printed; for ``K >= 3``
    a tree whose clusters are connected subtrees has only ``K-1`` inter edges, so it fails).
    ``"intended"``: cutting ``Cut(T)`` leaves exactly the clusters, i.e. every cluster is a connected subtree
    of ``T`` -- equivalently ``|Cut(T)| = K-1`` (removing ``c`` tree edges leaves ``c+1`` components, each
    inside one cluster).  For ``K = 2`` the readings agree."""
    k = int(labels.max()) + 1
    lu, lv = labels[edges[trees, 0]], labels[edges[trees, 1]]
    inter = lu != lv
    if topology == "intended":
        return inter.sum(axis=1) == k - 1
    a, b = np.minimum(lu, lv), np.maximum(lu, lv)
    pair = np.where(inter, a * k + b, k * k)
    counts = np.zeros((trees.shape[0], k * k + 1), dtype=np.int64)
    np.add.at(counts, (np.arange(trees.shape[0])[:, None], pair), 1)
    iu, ju = np.triu_indices(k, 1)
    return np.all(counts[:, iu * k + ju] == 1, axis=1)


def pamst_partitioning_probability(graph: WeightedGraph, labels: Any, c: float) -> float:
    """Exact probability that PAMST (uniform start, per-step law ``∝ exp(-c w(r))``) outputs a tree in which
    every cluster is a connected subtree ("intended" partitioning topology).

    A run fails exactly when it adds a vertex ``v ∈ C_i`` through an inter-cluster edge while the visited set
    ``S`` already meets ``C_i``; whether a step fails depends only on ``(S, r)``, so the probability of
    reaching ``S`` without failure obeys ``F(S ∪ {v}) += F(S)·P(r | S)`` over the non-failing edges ``r`` of
    the cut ``R_S`` (one layer of subsets per size, ``O(2^|V|·|E|)``; at most :data:`MAX_EXACT_NODES` nodes).
    Independent of :mod:`algorithms.graph.pamst` (the tests compare the two)."""
    lab = _labels(graph, labels)
    n = graph.n_nodes
    if n > MAX_EXACT_NODES:
        raise ValueError(f"the exact programme tabulates 2^|V| subsets: at most {MAX_EXACT_NODES} nodes, got {n}")
    eu, ev = graph.edges[:, 0], graph.edges[:, 1]
    inter = lab[eu] != lab[ev]
    cmask = np.zeros(int(lab.max()) + 1, dtype=np.int64)
    np.bitwise_or.at(cmask, lab, np.left_shift(np.int64(1), np.arange(n, dtype=np.int64)))
    logit = -float(c) * graph.weights
    f = np.zeros(1 << n)
    f[1 << np.arange(n)] = 1.0 / n
    subsets = np.arange(1 << n, dtype=np.int64)
    popcount = ((subsets[:, None] >> np.arange(n)) & 1).sum(axis=1)
    for size in range(1, n):
        s = subsets[(popcount == size) & (f > 0)]
        in_u, in_v = (s[:, None] >> eu) & 1, (s[:, None] >> ev) & 1
        cut = in_u != in_v
        lg = np.where(cut, logit, -np.inf)
        p = np.exp(lg - lg.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        v = np.where(in_u == 1, ev, eu)
        good = cut & (~inter | ((s[:, None] & cmask[lab[v]]) == 0))
        target = s[:, None] | np.left_shift(np.int64(1), v)
        np.add.at(f, target[good], (f[s][:, None] * p)[good])
    return float(f[(1 << n) - 1])


# ------------------------------------------------------------------------------------------ Theorem 3
@dataclass(frozen=True)
class ExponentialMechanismAccuracy:
    """Seed 001 §2.2 **Theorem 3** (Dwork & Roth Thm 3.11): for every ``t``,
    ``P[u(M) <= OPT - (2Δu/ε)(t + ln|R|)] <= e^{-t}``.

    Input (the hardest one): ``|R| = n_candidates`` candidates, one at ``OPT = 0`` and all the others exactly
    at the threshold ``-(2Δu/ε)(t + ln|R|)`` (minus ``excess·2Δu/ε``; clipped to ``OPT`` when ``t + ln|R| <
    0``).  Then ``P = (|R|-1)e^{-t}/|R| / (1 + (|R|-1)e^{-t}/|R|)``: the bound is nearly tight for large
    ``|R|`` and ``t`` (it cannot be tight: the optimum keeps weight 1 in the normaliser).  ``t <= 0`` gives
    ``e^{-t} >= 1``: vacuous.

    ``mechanism``: ``"classic"`` -- :class:`algorithms.classic.exponential.ExponentialMechanism` (Gumbel-max)
    at ``(epsilon, sensitivity)``; ``"pamst-step"`` -- the first step of :class:`algorithms.graph.pamst.PAMST`
    from vertex 0 of a star whose edges weigh ``-u`` (PAMST's utility ``-|w(r) - min_R w|``), run with total
    budget ``epsilon·|R|`` (step budget ``epsilon``) and ``mu = sensitivity``: the theorem is applied with the
    step's ε and PAMST's own Δu (:meth:`PAMST.utility_sensitivity`).  ``exact()`` is the pmf
    :func:`algorithms.classic.exponential.exponential_mechanism_pmf`.
    """

    t: float = 1.0
    epsilon: float = 1.0
    n_candidates: int = 100
    sensitivity: float = 1.0
    excess: float = 0.0
    mechanism: str = "classic"

    name = "seed 001 Theorem 3"
    quantity = "probability"
    direction = "at_most"
    MECHANISMS = ("classic", "pamst-step")

    def __post_init__(self) -> None:
        _real("t", self.t)
        _positive("epsilon", self.epsilon)
        _integer("n_candidates", self.n_candidates, 1)
        _positive("sensitivity", self.sensitivity)
        _nonnegative("excess", self.excess)
        _choice("mechanism", self.mechanism, self.MECHANISMS)
        if self.mechanism == "pamst-step" and self.n_candidates > 15:
            raise ValueError(f"mechanism='pamst-step' runs PAMST on a star of n_candidates+1 nodes: use at most "
                             f"15 candidates, got {self.n_candidates}")

    @property
    def statement(self) -> str:
        return (f"P[u(M) <= OPT - (2Δu/ε)(t + ln|R|)] <= exp(-t) for the exponential mechanism ({self.mechanism}), "
                f"|R| = {self.n_candidates}, all non-optimal candidates at the threshold")

    @property
    def parameters(self) -> dict[str, Any]:
        return {"t": self.t, "epsilon": self.epsilon, "n_candidates": self.n_candidates,
                "sensitivity": self.sensitivity, "excess": self.excess, "mechanism": self.mechanism}

    @property
    def size(self) -> int:
        return self.n_candidates

    @property
    def scale(self) -> float:
        """``2Δu/ε``."""
        return 2.0 * self.sensitivity / self.epsilon

    @property
    def threshold(self) -> float:
        """``OPT - (2Δu/ε)(t + ln|R|)`` with ``OPT = 0``."""
        return -self.scale * (self.t + math.log(self.n_candidates))

    @cached_property
    def utilities(self) -> np.ndarray:
        u = np.full(self.n_candidates, min(self.threshold, 0.0) - self.excess * self.scale)
        u[0] = 0.0
        return u

    def hypotheses(self) -> list[str]:
        return []

    def bound(self) -> float:
        return math.exp(-self.t)

    def _event(self, chosen: np.ndarray) -> np.ndarray:
        return self.utilities[chosen] <= self.threshold + 1e-12 * self.scale

    def exact(self) -> float:
        pmf = exponential_mechanism_pmf(self.utilities, self.epsilon, self.sensitivity)
        return float(pmf[self._event(np.arange(self.n_candidates))].sum())

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.mechanism == "classic":
            chosen = ExponentialMechanism(self.epsilon, self.sensitivity)(self.utilities, n, rng)
        else:
            star = WeightedGraph.from_arrays(self.n_candidates + 1,
                                             [(0, v) for v in range(1, self.n_candidates + 1)], -self.utilities)
            pm = PAMST(epsilon=self.epsilon * self.n_candidates, mu=self.sensitivity, start=0)
            chosen = pm.trees(star, n, rng)[:, 0]
        return self._event(chosen)


# ------------------------------------------------------------------------------------------ graph inputs
@dataclass(frozen=True)
class _ClusterInput:
    """The graph parameters shared by Thms 13 and 14 (see :func:`clustered_graph`)."""

    sizes: tuple[int, ...] = (3, 3)
    w_min: float = 0.1
    w_max: float = 0.12
    intra_density: float = 0.0
    inter_density: float = 1.0
    pendants: int = 1
    margin: float = 1e-9
    graph_seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes", _sizes(self.sizes))

    @cached_property
    def clustered(self) -> ClusteredGraph:
        return clustered_graph(self.sizes, homogeneity="strong", intra_density=self.intra_density,
                               w_min=self.w_min, w_max=self.w_max, inter_density=self.inter_density,
                               margin=self.margin, pendants=self.pendants, seed=self.graph_seed)

    @property
    def graph(self) -> WeightedGraph:
        return self.clustered.graph

    @property
    def size(self) -> int:
        return self.graph.n_nodes

    def _graph_parameters(self) -> dict[str, Any]:
        return {"sizes": list(self.sizes), "w_min": self.w_min, "w_max": self.w_max,
                "intra_density": self.intra_density, "inter_density": self.inter_density,
                "pendants": self.pendants, "margin": self.margin, "graph_seed": self.graph_seed}


# ------------------------------------------------------------------------------------------ Theorem 13
@dataclass(frozen=True)
class PartitioningTopology(_ClusterInput):
    """Seed 001 §3.4 **Theorem 13** (proof §7.1): with ``K`` strongly homogeneous clusters, PAMST's tree has a
    partitioning topology with probability at least ``1 - Σ_i (|C_i|-1)·B_i``, ``X_i = ᾱ_i·max_in(C_i) -
    min_in(C_i)`` (over ``G[C_i]``), ``c = ε/(2Δu(|V|-1))``:

    * ``form="main"`` (§3.4, ``A = ε X_i + ln|E|`` divided by ``2Δu(|V|-1)``): ``B_i = exp(-c X_i -
      ln|E|/(2Δu(|V|-1)))``.  The ``ln|E|`` term does not scale with ε, so the bound stays near 1 as ε -> 0
      when Δu is small (weights in units where ``μ`` is small) -- where PAMST is nearly uniform.
    * ``form="appendix"`` (§7.1 statement and last line): ``B_i = |E|·exp(-c X_i)``.  This is what the proof's
      union bound gives once its sign slip is fixed (setting ``(2Δu/ε')(t + ln|R_k|) = X_i`` gives
      ``t = ε'X_i/(2Δu) - ln|R_k|``, not ``+ ln|R_k|``; then ``e^{-t} <= |E| e^{-c X_i}``).
    * ``form="corrected"`` (derived here): ``1 - (|V|-2)·Σ_{e inter} Σ_{C_i ∋ end of e, |C_i| >= 2}
      exp(-c (w(e) - max_in(C_i)))``.  The proof of §7.1 bounds the utility of a bad step by ``-(ᾱ_i max_in -
      min_in)``, i.e. it assumes ``min_{R_k} w <= min_in``; the range minimum can be as large as ``max_in``
      (only heavy edges of ``C_i`` left in the cut), so the gap is only ``w(e) - max_in``.  A run fails
      exactly when it adds a vertex of a partly visited cluster through an inter edge ``e``; the cut then
      holds an edge of ``C_i`` (``G[C_i]`` connected) so ``P(e) <= exp(-c(w(e) - max_in))``; union over edges
      and over the steps 2..|V|-1.  It needs every ``G[C_i]`` connected and the intended topology (or K=2).

    ``topology``: ``"literal"`` -- Def 3.8 as printed (exactly one tree edge between every pair of
    clusters); ``"intended"`` -- every cluster a connected subtree of the tree (see
    :func:`tree_is_partitioning`).  The proof's event B (consecutive steps stay in a cluster) implies neither.

    The algorithm is :class:`algorithms.graph.pamst.PAMST` (uniform start) with ``mu`` and ``sensitivity``
    ``"mu"`` (Δu = μ, the module's default) or ``"2mu"`` (Def 2.6's value); the bound uses the Δu the sampler
    uses (:meth:`PAMST.utility_sensitivity`).  ``exact()``: :func:`pamst_partitioning_probability` (intended,
    or literal with K = 2) on graphs of at most 16 nodes.

    Hardest inputs (defaults): at the threshold (``margin = 1e-9``), every inter-cluster pair joined
    (``inter_density = 1``), small spread ``w_max/w_min = 1.2`` (the gap the proof misses, ``max_in -
    min_in``, is then a large fraction of the real gap ``w(e) - max_in``), and pendant nodes joined to their
    cluster by one ``w_max`` edge only: when only they are left, the cut's minimum is ``max_in``.
    """

    epsilon: float = 20.0
    mu: float = 0.1
    sensitivity: str = "mu"
    form: str = "appendix"
    topology: str = "intended"

    name = "seed 001 Theorem 13"
    quantity = "probability"
    direction = "at_least"
    FORMS = ("main", "appendix", "corrected")
    SENSITIVITIES = ("mu", "2mu")

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive("epsilon", self.epsilon)
        _positive("mu", self.mu)
        _choice("sensitivity", self.sensitivity, self.SENSITIVITIES)
        _choice("form", self.form, self.FORMS)
        _choice("topology", self.topology, TOPOLOGIES)

    @property
    def statement(self) -> str:
        return (f"PAMST's tree has a partitioning topology ({self.topology} reading of Def 3.8) with probability "
                f">= the {self.form} form of Theorem 13's bound (Δu = {self.sensitivity})")

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "mu": self.mu, "sensitivity": self.sensitivity, "form": self.form,
                "topology": self.topology, **self._graph_parameters()}

    @cached_property
    def pamst(self) -> PAMST:
        return PAMST(epsilon=self.epsilon, mu=self.mu, sensitivity=None if self.sensitivity == "mu" else 2 * self.mu)

    def hypotheses(self) -> list[str]:
        cg = self.clustered
        problems = list(strong_homogeneity(cg.graph, cg.labels).problems)
        if self.form == "corrected":
            if self.topology == "literal" and cg.k > 2:
                problems.append("form='corrected' is derived for topology='intended' (for K = 2 the readings "
                                "agree); use topology='intended'")
            for i in range(cg.k):
                members = np.flatnonzero(cg.labels == i)
                sub = cg.graph.subgraph_edges(np.flatnonzero(cg.intra == i))
                comp = sub.component_labels()[members]
                if np.unique(comp).size > 1:
                    problems.append(f"cluster {i} is not connected inside G: form='corrected' needs every G[C_i] "
                                    f"connected")
        return problems

    def bound(self) -> float:
        cg, g = self.clustered, self.graph
        pm = self.pamst
        c, du = pm.coefficient(g), pm.utility_sensitivity(g)
        h = strong_homogeneity(g, cg.labels)
        sizes = cg.sizes
        big = sizes >= 2
        x = (h.alpha * h.max_in - h.min_in)[big]
        v, m = g.n_nodes, g.n_edges
        if self.form == "main":
            return float(1.0 - np.sum((sizes[big] - 1) * np.exp(-c * x - math.log(m) / (2 * du * (v - 1)))))
        if self.form == "appendix":
            return float(1.0 - np.sum((sizes[big] - 1) * m * np.exp(-c * x)))
        total = 0.0
        for e in np.flatnonzero(cg.intra < 0):
            for i in {int(cg.labels[g.edges[e, 0]]), int(cg.labels[g.edges[e, 1]])}:
                if sizes[i] >= 2:
                    total += math.exp(-c * (g.weights[e] - h.max_in[i]))
        return float(1.0 - (v - 2) * total)

    def exact(self) -> float | None:
        cg = self.clustered
        if self.graph.n_nodes > MAX_EXACT_NODES or (self.topology == "literal" and cg.k > 2):
            return None
        return pamst_partitioning_probability(self.graph, cg.labels, self.pamst.coefficient(self.graph))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        trees = self.pamst.trees(self.graph, n, rng)
        return tree_is_partitioning(self.clustered.labels, self.graph.edges, trees, self.topology)


# ------------------------------------------------------------------------------------------ Theorem 15
def laplace_order_moment(n: int, r: int, k: int) -> Fraction:
    """``E[X_{r:n}^k]`` for ``n`` i.i.d. standard Laplace variables (location 0, scale 1), exactly.

    Seed 001 §7.2 **Theorem 15** (Kotz, Kozubowski & Podgórski 2001) prints ``E[(X_{r:n} - θ)^k] = s^k
    n! Γ(k+1)/((r-1)!(n-r)!) · ((-1)^k Σ_{j=0}^{n-r} a_{j,r,k} + Σ_{j=0}^{r-1} b_{j,r,k})`` without defining
    ``a`` and ``b``.  Integrating ``x^k F^{r-1}(1-F)^{n-r} f`` on ``x < 0`` (``F = e^x/2``) and ``x > 0``
    (``1 - F = e^{-x}/2``) after a binomial expansion gives ``a_{j,r,k} = C(n-r, j)(-1)^j / (2^{r+j}
    (r+j)^{k+1})`` and ``b_{j,r,k} = C(r-1, j)(-1)^j / (2^{n-r+j+1}(n-r+j+1)^{k+1})``; the sums alternate, so
    they are evaluated in rational arithmetic.  :func:`order_statistic_alpha` is the bracket (the paper's
    ``α(n, k)``)."""
    coef = Fraction(math.factorial(n) * math.factorial(k), math.factorial(r - 1) * math.factorial(n - r))
    return coef * order_statistic_alpha(n, r, k)


def order_statistic_alpha(n: int, r: int, k: int) -> Fraction:
    """The bracket ``α`` of Theorem 15 for rank ``r`` of ``n`` and moment ``k`` (see :func:`laplace_order_moment`)."""
    _integer("n", n, 1)
    _integer("k", k, 0)
    if not 1 <= _integer("r", r, 1) <= n:
        raise ValueError(f"the rank r must lie in 1..n = {n}, got {r}")
    a = sum((Fraction(math.comb(n - r, j) * (-1) ** j, 2 ** (r + j) * (r + j) ** (k + 1)) for j in range(n - r + 1)),
            Fraction(0))
    b = sum((Fraction(math.comb(r - 1, j) * (-1) ** j, 2 ** (n - r + j + 1) * (n - r + j + 1) ** (k + 1))
             for j in range(r)), Fraction(0))
    return (-1) ** k * a + b


def laplace_max_moments(n: int, k_max: int = 4) -> np.ndarray:
    """``E[M^k]``, ``k = 0..k_max``, of the maximum ``M`` of ``n`` i.i.d. standard Laplace variables, by numerical
    integration (``scipy.integrate.quad`` of ``x^k n F^{n-1} f`` on each half-line) -- independent of the
    rational formula of :func:`laplace_order_moment`.  The minimum's moments are ``(-1)^k E[M^k]``."""
    _integer("n", n, 1)

    def density(x: float) -> float:
        if x < 0:
            f = 0.5 * math.exp(x)
            return n * f ** n
        t = 0.5 * math.exp(-x)
        return n * (1.0 - t) ** (n - 1) * t

    out = np.empty(k_max + 1)
    for k in range(k_max + 1):
        lo = integrate.quad(lambda x: x ** k * density(x), -np.inf, 0.0, epsabs=0, epsrel=1e-12, limit=200)[0]
        hi = integrate.quad(lambda x: x ** k * density(x), 0.0, np.inf, epsabs=0, epsrel=1e-12, limit=200)[0]
        out[k] = lo + hi
    return out


def _shifted(moments: np.ndarray, theta: float, delta: float, sign: float) -> np.ndarray:
    """``E[(θ + δ·sign·M)^k]`` for ``k = 0..4`` from the moments ``E[M^j]`` of a standard order statistic."""
    return np.array([sum(math.comb(k, j) * theta ** (k - j) * (sign * delta) ** j * moments[j] for j in range(k + 1))
                     for k in range(5)])


# ------------------------------------------------------------------------------------------ Theorem 14
@dataclass(frozen=True)
class WeightReleaseSeparability(_ClusterInput):
    """Seed 001 §3.4 **Theorem 14** (proof §7.2): Weight-Release keeps the homogeneous separability of a
    cluster with probability at least a one-sided-Chebyshev (Cantelli) bound.

    Setting: ``T`` is a fixed tree -- the exact MST of the generated graph (a tree PAMST outputs with positive
    probability; the theorem is a statement given ``T``) -- and ``T'`` is
    :class:`algorithms.graph.weight_release.WeightRelease` on ``(T, w|_T)`` with ``epsilon``, ``mu``,
    ``calibration``, ``tau``, ``p``; ``s`` is the Laplace scale it uses (``|E_T|·μ/ε`` for the corrected
    ``"l1"`` calibration).  ``e^(ij)`` is the tree edge between ``C_i`` (``cluster_i``) and ``C_j``.
    ``H_{T'|C}(e)`` (Def 3.9 on released weights) is ``min' > 0 and max'²/min' < w'(e)`` over the released
    weights of ``T|C`` (``α`` must be a positive ratio; a non-positive released minimum counts as failure).
    Note: ``H`` is invariant under scaling all weights, so ``p`` cancels from the event (and from the φ and
    corrected-Λ bounds): "``s ≪ p``" constrains nothing; ``τ >= 0`` only makes ``H`` easier.

    ``implication`` (the two printed statements):

    * ``"main"`` (§3.4): if ``H_{T|C_i}(e^(ij))`` then ``H_{T'|C_i}(e^(ij))`` w.p. >= bound.  The condition is
      on the noiseless tree (implied by strong homogeneity; checked in :meth:`hypotheses`); the sampled event
      is ``H_{T'|C_i}``.
    * ``"appendix"`` (§7.2): if ``H_{T'|C_i}(e^(ij))`` then ``H_{T'|C_j}(e^(ij))`` w.p. >= bound: a conditional
      probability -- runs where ``H_{T'|C_i}`` fails are NaN.

    ``form`` (the bound; ``n = |C|-1``, ``δ = s/p``, ``θ_max/min = (max/min w + τ)/p``, ``θ_(ij) = (w(e^(ij)) +
    τ)/p``; ``φ = (max_{j<=n} Y_j)² - min_{j<=n} Z_j·X^out`` with independent ``Y_j ~ Lap(θ_max, δ)``,
    ``Z_j ~ Lap(θ_min, δ)``, ``X^out ~ Lap(θ_(ij), δ)``):

    * ``"phi"`` (§3.4): ``1 - V(φ)/(V(φ) + E(φ)²)``, ``E(φ)`` and ``V(φ)`` computed from the order-statistic
      moments of :func:`laplace_max_moments` (numerical integration).
    * ``"lambda-printed"`` (§7.2 as printed): ``1 - (Λ1 + (θ²+δ)Λ2 - (Λ3²+θ²)Λ4) / (Λ1 + (θ²+δ)Λ2 + 2Λ3Λ4)``,
      ``θ = θ_(ij)``, with ``Λ1 = 24δ⁴nα(n,4) + 12θ_maxδ³nα(n,3) + 12θ_max²δ²nα(n,2) + 4θ_max³δnα(n,1) +
      θ_max⁴``, ``Λ2 = 2δ²nα(1,2) + 2θ_minδnα(1,1) + θ_min²``, ``Λ3 = 2δ²nα(n,2) + 2θ_maxδnα(n,1) + θ_max²``,
      ``Λ4 = δnα(1,1) + θ_min`` (``α(r,k)``: Theorem 15's bracket at rank ``r``).
    * ``"lambda-corrected"``: the same moments assembled correctly -- ``Λ1 = E[M⁴]`` needs ``24θ_maxδ³nα(n,3)``
      (``4·E[D³] = 4·6δ³nα``), ``E[X_out²] = θ² + 2δ²`` (not ``θ² + δ``), ``V(φ) = Λ1 + (θ²+2δ²)Λ2 - Λ3² -
      θ²Λ4²`` and ``V + E² = E(φ²) = Λ1 + (θ²+2δ²)Λ2 - 2θΛ3Λ4``.  Equal to ``"phi"`` (tested).

    ``extremes``: ``"cluster"`` (intended) -- ``max/min`` and ``n`` of the tree edges inside the cluster whose
    condition is the event (``C_i`` for ``"main"``, ``C_j`` for ``"appendix"``); ``"tree"`` (printed) --
    ``max/min_{e ∈ E(T)}`` over the whole tree (inter edges included, so ``θ_max >= θ_(ij)`` and ``E(φ) > 0``:
    the proof's "``E(φ) <= 0`` since ``τ, p ≫ s``" cannot hold) and ``n = |C_i|-1``.

    Hypotheses checked: strong homogeneity, exactly one tree edge between ``C_i`` and ``C_j``, clusters of
    >= 2 nodes, and "``s ≪ p, τ``" read as ``s <= min(p, τ)/10`` (:data:`MUCH_SMALLER`).  The proof's Cantelli
    step also needs ``E(φ) <= 0``, which it derives from ``s ≪ p, τ``; that derivation is wrong (``p``
    cancels, and ``τ`` scales the noiseless margin and the noise terms of ``E(φ)`` alike, so its sign is set
    by ``s`` against the separability margin ``w(e^(ij)) - (2max - min)``), so it is *not* a hypothesis here:
    :meth:`phi_moments` reports it and the statement names it.  With ``E(φ) > 0`` the Cantelli bound bounds
    ``P(φ >= 0)`` instead -- the wrong event.
    Hardest inputs: the margin at the threshold, clusters with many tree edges (the maximum of many noisy
    weights grows), noise ``s`` comparable to the margin of separability.
    """

    epsilon: float = 1.0
    mu: float = 0.001
    calibration: str = "l1"
    tau: float = 1.0
    p: float = 1.0
    cluster_i: int = 0
    cluster_j: int = 1
    implication: str = "main"
    form: str = "phi"
    extremes: str = "cluster"

    name = "seed 001 Theorem 14"
    quantity = "probability"
    direction = "at_least"
    IMPLICATIONS = ("main", "appendix")
    FORMS = ("phi", "lambda-printed", "lambda-corrected")
    EXTREMES = ("cluster", "tree")

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive("epsilon", self.epsilon)
        _positive("mu", self.mu)
        _choice("calibration", self.calibration, CALIBRATIONS)
        _nonnegative("tau", self.tau)
        if _real("p", self.p) < 1:
            raise ValueError(f"p must be >= 1 (Def 3.12), got {self.p!r}")
        k = len(self.sizes)
        for name in ("cluster_i", "cluster_j"):
            if _integer(name, getattr(self, name), 0) >= k:
                raise ValueError(f"{name} must be a cluster index in 0..{k - 1}, got {getattr(self, name)}")
        if self.cluster_i == self.cluster_j:
            raise ValueError("cluster_i and cluster_j must differ")
        _choice("implication", self.implication, self.IMPLICATIONS)
        _choice("form", self.form, self.FORMS)
        _choice("extremes", self.extremes, self.EXTREMES)

    @property
    def statement(self) -> str:
        ev = "H_{T'|C_i}" if self.implication == "main" else "H_{T'|C_j} given H_{T'|C_i}"
        return (f"after Weight-Release on the MST, {ev}(e^(ij)) holds with probability >= the {self.form} bound "
                f"({self.extremes} extremes; s = {self.s:.6g}, E(φ) = {self.phi_moments()[0]:.3g})")

    @property
    def parameters(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "mu": self.mu, "calibration": self.calibration, "tau": self.tau,
                "p": self.p, "cluster_i": self.cluster_i, "cluster_j": self.cluster_j,
                "implication": self.implication, "form": self.form, "extremes": self.extremes,
                **self._graph_parameters()}

    @cached_property
    def tree(self) -> np.ndarray:
        """Sorted edge ids (into the graph) of the MST ``T``."""
        return mst_edges(self.graph)

    @cached_property
    def tree_graph(self) -> WeightedGraph:
        return self.graph.subgraph_edges(self.tree)

    @cached_property
    def release(self) -> WeightRelease:
        return WeightRelease(epsilon=self.epsilon, mu=self.mu, tau=self.tau, p=self.p, calibration=self.calibration)

    @property
    def s(self) -> float:
        """The Laplace scale Weight-Release uses on ``T``."""
        return float(self.release.scale(self.tree_graph))

    def _columns(self, cluster: int) -> np.ndarray:
        lab = self.clustered.labels[self.tree_graph.edges]
        return np.flatnonzero((lab[:, 0] == cluster) & (lab[:, 1] == cluster))

    @cached_property
    def cut_columns(self) -> np.ndarray:
        """Tree columns of the edges between ``C_i`` and ``C_j``."""
        lab = self.clustered.labels[self.tree_graph.edges]
        a, b = self.cluster_i, self.cluster_j
        return np.flatnonzero(((lab[:, 0] == a) & (lab[:, 1] == b)) | ((lab[:, 0] == b) & (lab[:, 1] == a)))

    def _holds(self, w: np.ndarray, cluster: int) -> np.ndarray:
        """``H_{T|C}(e^(ij))`` for each row of tree weights ``w`` (``(n, |V|-1)``)."""
        cols = self._columns(cluster)
        if cols.size == 0:
            return np.ones(w.shape[0], dtype=bool)
        mx, mn = w[:, cols].max(axis=1), w[:, cols].min(axis=1)
        out = w[:, self.cut_columns[0]]
        safe = np.where(mn > 0, mn, 1.0)
        return (mn > 0) & (mx * mx / safe < out)

    def _bound_inputs(self) -> tuple[int, float, float, float, float]:
        """``(n, θ_max, θ_min, θ_(ij), δ)``."""
        tw = self.tree_graph.weights
        if self.extremes == "tree":
            cols, n = np.arange(tw.size), self.sizes[self.cluster_i] - 1
        else:
            cluster = self.cluster_i if self.implication == "main" else self.cluster_j
            cols, n = self._columns(cluster), self.sizes[cluster] - 1
        p, tau = float(self.p), float(self.tau)
        return (int(n), (tw[cols].max() + tau) / p, (tw[cols].min() + tau) / p,
                (tw[self.cut_columns[0]] + tau) / p, self.s / p)

    def phi_moments(self) -> tuple[float, float]:
        """``(E(φ), V(φ))`` from the order-statistic moments (numerical integration)."""
        n, t_max, t_min, t_out, d = self._bound_inputs()
        mom = laplace_max_moments(n)
        big, small = _shifted(mom, t_max, d, 1.0), _shifted(mom, t_min, d, -1.0)
        mean = big[2] - small[1] * t_out
        second = big[4] - 2 * t_out * big[2] * small[1] + (t_out ** 2 + 2 * d * d) * small[2]
        return float(mean), float(second - mean * mean)

    def _lambdas(self, printed: bool) -> tuple[float, float, float, float]:
        n, t_max, t_min, _, d = self._bound_inputs()

        def a(r: int, k: int) -> float:
            return float(n * order_statistic_alpha(n, r, k))

        l1 = (24 * d ** 4 * a(n, 4) + (12 if printed else 24) * t_max * d ** 3 * a(n, 3)
              + 12 * t_max ** 2 * d ** 2 * a(n, 2) + 4 * t_max ** 3 * d * a(n, 1) + t_max ** 4)
        l2 = 2 * d * d * a(1, 2) + 2 * t_min * d * a(1, 1) + t_min ** 2
        l3 = 2 * d * d * a(n, 2) + 2 * t_max * d * a(n, 1) + t_max ** 2
        l4 = d * a(1, 1) + t_min
        return l1, l2, l3, l4

    def hypotheses(self) -> list[str]:
        cg = self.clustered
        problems = list(strong_homogeneity(cg.graph, cg.labels).problems)
        if self.cut_columns.size != 1:
            problems.append(f"the MST has {self.cut_columns.size} edges between clusters {self.cluster_i} and "
                            f"{self.cluster_j}, not exactly one e^(ij): pick adjacent clusters")
            return problems
        if self.s * MUCH_SMALLER > min(self.p, self.tau):
            problems.append(f"s = {self.s:.6g} is not ≪ p = {self.p:g}, τ = {self.tau:g} (read as s <= min(p, τ)/"
                            f"{MUCH_SMALLER:g}); raise tau and p or the budget epsilon")
        for c in (self.cluster_i, self.cluster_j):
            if self.sizes[c] < 2:
                problems.append(f"cluster {c} has one node: T|C has no edge and the bound's n = |C|-1 is 0")
        if not problems and self.implication == "main" and not self._holds(self.tree_graph.weights[None, :],
                                                                              self.cluster_i)[0]:
            problems.append(f"H_{{T|C_{self.cluster_i}}}(e^(ij)) fails on the noiseless tree: the theorem's condition")
        return problems

    def bound(self) -> float:
        if self.form == "phi":
            mean, var = self.phi_moments()
            return float(1.0 - var / (var + mean * mean))
        _, _, _, t, d = self._bound_inputs()
        l1, l2, l3, l4 = self._lambdas(printed=self.form == "lambda-printed")
        if self.form == "lambda-printed":
            return float(1.0 - (l1 + (t * t + d) * l2 - (l3 * l3 + t * t) * l4) / (l1 + (t * t + d) * l2 + 2 * l3 * l4))
        second = l1 + (t * t + 2 * d * d) * l2 - 2 * t * l3 * l4
        return float(1.0 - (l1 + (t * t + 2 * d * d) * l2 - l3 * l3 - t * t * l4 * l4) / second)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        w = self.release(self.tree_graph, n, rng)
        h_i = self._holds(w, self.cluster_i)
        if self.implication == "main":
            return h_i
        return np.where(h_i, self._holds(w, self.cluster_j).astype(np.float64), np.nan)


# ------------------------------------------------------------------------------------------ Corollary 3.1
def _recovery_failure(tree: WeightedGraph, labels: np.ndarray) -> dict[str, Any] | None:
    """Run DBMSTClu on ``tree``; ``None`` if it returns exactly ``labels`` after ``K-1`` cuts, else a record whose
    ``kind`` is ``"over-cut"`` (a planted cluster split: Thm 9 fails), ``"under-cut"`` (two planted clusters left
    together: Thm 7 or 8 fails) or ``"both"``."""
    res = dbmstclu(tree)
    truth = canonical_labels(labels)
    k = int(truth.max()) + 1
    if np.array_equal(res.labels, truth) and res.cuts.size == k - 1:
        return None
    merged = any(np.unique(truth[res.labels == c]).size > 1 for c in range(int(res.labels.max()) + 1))
    split = any(np.unique(res.labels[truth == c]).size > 1 for c in range(k))
    kind = "both" if merged and split else "under-cut" if merged else "over-cut"
    record: dict[str, Any] = {"size": tree.n_nodes, "kind": kind, "clusters": np.bincount(truth).tolist(),
                              "found": np.bincount(res.labels).tolist(), "cuts": int(res.cuts.size)}
    if tree.n_nodes <= 12:
        record["tree"] = [[int(u), int(v), float(w)] for (u, v), w in zip(tree.edges, tree.weights)]
        record["labels"] = truth.tolist()
    return record


_COROLLARY_STATEMENT = ("DBMSTClu on an MST of a graph with K >= 2 weakly homogeneous clusters stops after K-1 "
                        "cuts and returns exactly the clusters")


@dataclass(frozen=True)
class DBMSTCluRecovery(Property):
    """Seed 001 §3.2 **Corollary 3.1** (from Thms 7-9, proofs §6): with ``K`` weakly homogeneous clusters
    (Def 3.10) and ``T`` an MST, :func:`algorithms.graph.dbmstclu.dbmstclu` stops after ``K-1`` cuts and its
    subtrees are exactly the clusters.  Quantity ``"always"``, checked on random instances.

    Each instance (drawn from ``rng``): ``K ~ U{2..max_clusters}``, sizes ``~ U{min_size..max_size}``,
    ``w_max/w_min = exp(U(0, ln max_ratio))``, ``margin`` log-uniform in ``[1e-9, max_margin]`` (down to *at*
    the threshold), ``inter_spread ~ U(0, max_spread)``, intra density ``U(0, 0.5)``, inter density
    ``U(0, 1)``, ``0..2`` pendants, built by
    :func:`clustered_graph` (``homogeneity="weak"``) and checked by :func:`weak_homogeneity` (an instance that
    fails the check would be a generator bug and raises).  A failure record has ``size = |V|``, its ``kind``
    (over-cut / under-cut / both), the cluster sizes, the sizes DBMSTClu found, and the tree itself when
    ``|V| <= 12``.

    Hypotheses as decided here: ``K >= 2`` (for ``K = 1`` DBMSTClu always makes a first cut -- any partition
    scores >= -1 -- so the corollary fails trivially on any 2-node graph); every cluster a connected subtree
    of ``T`` (``|Cut(T)| = K-1``, which the proof of Thm 9 uses); 1-node clusters (``min_size = 1``) have no
    internal edge, so ``H`` is read as vacuously true for them.  Why it fails (found here): a cluster's
    ``VC = 1 - DISP/SEP`` with ``SEP`` just above ``DISP²/min`` is ``~ 1 - min/DISP``, while cutting its
    heaviest leaf edge scores ``1 + (|C|-1)(1 - min/DISP)`` for the two parts; for ``SEP < |C|/(|C|-1)·
    DISP²/min`` the cut gains and DBMSTClu keeps cutting (the proof of Thm 9 sets ``SEP = min``, ``DISP = max``
    for the parts, which contradicts its own ``SEP >= DISP``, and ignores 1-node parts whose VC is 1).
    A 2-node cluster is always split (two singletons score 2 > 2(1 - w/SEP)).  DBMSTClu can also stop too
    early (under-cut, Thm 7 fails): after cutting the heaviest cut edge, the union of two clusters joined by a
    lighter cut edge ``e`` has ``SEP`` = the heavy edge; cutting ``e`` makes ``e`` the new ``SEP`` of both parts
    (the proof of Thm 7 claims ``SEP`` cannot decrease) and can lower the DBCVI, so no cut is taken -- smallest
    found: three 3-node stars of unit weights, cut edges 2 and 1.25 (``|V| = 9``; 5 nodes with a 1-node
    cluster).
    """

    min_size: int = 3
    max_size: int = 12
    max_clusters: int = 4
    max_ratio: float = 4.0
    max_margin: float = 1.0
    max_spread: float = 2.0

    name = "seed 001 Corollary 3.1"
    statement = _COROLLARY_STATEMENT

    def __post_init__(self) -> None:
        _integer("min_size", self.min_size, 1)
        if _integer("max_size", self.max_size, 1) < self.min_size:
            raise ValueError(f"max_size must be >= min_size, got {self.max_size} < {self.min_size}")
        _integer("max_clusters", self.max_clusters, 2)
        if _real("max_ratio", self.max_ratio) < 1:
            raise ValueError(f"max_ratio (w_max/w_min) must be >= 1, got {self.max_ratio}")
        if _positive("max_margin", self.max_margin) < 1e-9:
            raise ValueError(f"max_margin must be >= 1e-9, got {self.max_margin}")
        _nonnegative("max_spread", self.max_spread)

    @property
    def parameters(self) -> dict[str, Any]:
        return {"min_size": self.min_size, "max_size": self.max_size, "max_clusters": self.max_clusters,
                "max_ratio": self.max_ratio, "max_margin": self.max_margin, "max_spread": self.max_spread}

    @property
    def size(self) -> int:
        return self.max_size * self.max_clusters

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        ok = np.ones(n, dtype=bool)
        failures: list[dict[str, Any]] = []
        for r in range(n):
            k = int(rng.integers(2, self.max_clusters + 1))
            sizes = rng.integers(self.min_size, self.max_size + 1, size=k).tolist()
            ratio = float(np.exp(rng.uniform(0.0, math.log(self.max_ratio))))
            margin = float(np.exp(rng.uniform(math.log(1e-9), math.log(self.max_margin))))
            seed = int(rng.integers(2 ** 31))
            cg = clustered_graph(sizes, homogeneity="weak", intra_density=float(rng.uniform(0.0, 0.5)),
                                 w_min=1.0, w_max=ratio, inter_density=float(rng.random()), margin=margin,
                                 pendants=int(rng.integers(3)),
                                 inter_spread=float(rng.uniform(0.0, self.max_spread)), seed=seed)
            check = weak_homogeneity(cg.graph, cg.labels)
            if not check.ok:
                raise RuntimeError(f"clustered_graph produced an instance that is not weakly homogeneous "
                                   f"(sizes {sizes}, seed {seed}): {check.problems[0]}")
            fail = _recovery_failure(cg.graph.subgraph_edges(mst_edges(cg.graph)), cg.labels)
            if fail is not None:
                ok[r] = False
                fail.update(ratio=ratio, margin=margin, graph_seed=seed)
                failures.append(fail)
        return ok, failures


@dataclass(frozen=True)
class DBMSTCluRecoveryExhaustive(Property):
    """Seed 001 **Corollary 3.1** on a fixed grid (``deterministic``): every tree shape on ``2..max_nodes``
    nodes (:func:`networkx.nonisomorphic_trees`), every set of cut edges whose components have >= ``min_size``
    nodes and ``K >= 2``, every intra weight pattern in ``{1, ratio}`` for each ``ratio``, and every cut
    weight ``thr·(1 + m)`` for ``m`` in ``margins`` (per cut edge; ``thr`` = the larger ``max²/min`` of the two
    clusters it joins, 1 between two 1-node clusters).  A tree is an MST of itself, so this is the corollary
    for ``G = T``.  The smallest counterexample is reported by ``size = |V|``.  See :class:`DBMSTCluRecovery`
    for the hypotheses and why it fails."""

    max_nodes: int = 6
    min_size: int = 1
    ratios: tuple[float, ...] = (1.0, 2.0)
    margins: tuple[float, ...] = (1e-9, 0.3, 10.0)

    name = "seed 001 Corollary 3.1 (exhaustive)"
    statement = _COROLLARY_STATEMENT
    deterministic = True

    def __post_init__(self) -> None:
        if not 2 <= _integer("max_nodes", self.max_nodes, 2) <= 8:
            raise ValueError(f"max_nodes must lie in 2..8 (the grid grows like 5^|V|), got {self.max_nodes}")
        _integer("min_size", self.min_size, 1)
        object.__setattr__(self, "ratios", tuple(_real("ratio", r) for r in _reals("ratios", self.ratios)))
        object.__setattr__(self, "margins", tuple(_positive("margin", m) for m in _reals("margins", self.margins)))
        if min(self.ratios) < 1:
            raise ValueError(f"ratios (w_max/w_min) must be >= 1, got {list(self.ratios)}")

    @property
    def parameters(self) -> dict[str, Any]:
        return {"max_nodes": self.max_nodes, "min_size": self.min_size, "ratios": list(self.ratios),
                "margins": list(self.margins)}

    @property
    def size(self) -> int:
        return self.max_nodes

    def instances(self) -> Any:
        """Yield ``(tree, labels)`` for every grid point."""
        import networkx as nx

        for n in range(2, self.max_nodes + 1):
            for shape in nx.nonisomorphic_trees(n):
                edges = np.array(sorted(tuple(sorted(e)) for e in shape.edges), dtype=np.int64)
                for n_cut in range(1, n):
                    for cut in itertools.combinations(range(n - 1), n_cut):
                        keep = np.setdiff1d(np.arange(n - 1), cut)
                        forest = WeightedGraph.from_arrays(n, edges[keep], np.ones(keep.size))
                        labels = canonical_labels(forest.component_labels())
                        if np.bincount(labels).min() < self.min_size:
                            continue
                        yield from self._weighted(n, edges, keep, np.asarray(cut), labels)

    def _weighted(self, n: int, edges: np.ndarray, keep: np.ndarray, cut: np.ndarray,
                  labels: np.ndarray) -> Any:
        k = int(labels.max()) + 1
        for ratio in self.ratios:
            for pattern in itertools.product((1.0, ratio), repeat=keep.size):
                w = np.zeros(n - 1)
                w[keep] = pattern
                mx, mn = _extremes(labels, edges[keep], w[keep], k)
                thr = np.nan_to_num(mx * mx / mn, nan=0.0)
                base = np.maximum(thr[labels[edges[cut, 0]]], thr[labels[edges[cut, 1]]])
                base[base == 0] = 1.0
                for margins in itertools.product(self.margins, repeat=cut.size):
                    w[cut] = base * (1.0 + np.asarray(margins))
                    yield WeightedGraph.from_arrays(n, edges, w.copy()), labels
                if ratio == 1.0:
                    break

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        ok: list[bool] = []
        failures: list[dict[str, Any]] = []
        for tree, labels in self.instances():
            fail = _recovery_failure(tree, labels)
            ok.append(fail is None)
            if fail is not None:
                failures.append(fail)
        return np.asarray(ok, dtype=bool), failures
