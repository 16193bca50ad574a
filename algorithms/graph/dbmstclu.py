"""DBMSTClu: density-based clustering by greedy cuts of a minimum spanning tree (Morvan et al. 2017).

Source: seed 001, Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 3.2.1,
Definitions 3.3-3.6 and Algorithm 1.  A clustering is a partition of the nodes of a spanning tree ``T`` into
connected subtrees (the components left after cutting some tree edges).  For a cluster ``C``:

* **DISP(C)** (Def. 3.3) = the largest weight of an edge of ``T`` inside ``C``; 0 for a singleton.
* **SEP(C)** (Def. 3.4) = the smallest weight of a cut tree edge with one end in ``C``.
* **VC(C)** (Def. 3.5) = ``(SEP - DISP) / max(SEP, DISP)``, in ``[-1, 1]`` for positive weights.
* **DBCVI** (Def. 3.6) = ``sum_i |C_i| / N * VC(C_i)``.

Algorithm 1 starts from the one-cluster partition with ``dbcvi = -1.0`` and repeatedly tries every
remaining tree edge as a cut of the current partition.  It applies the cut with the largest resulting
DBCVI if that value is ``>=`` the current one (line 10: zero-gain cuts are taken).  It stops when no
cut reaches the current DBCVI, when the DBCVI reaches 1, or when no edge is left.

Resolved ambiguities, as the authors' code resolves them (``DBCVI.py`` of github.com/annemorvan/DBMSTClu, for
Morvan, Choromanski, Gouy-Pailler, Atif, SDM 2018), against the two places where seed 002 (Pinot, "Nodes
clustering in a graph under differential privacy") contradicts itself (E20, E22 below):

* **One cluster.** DBCVI = -1 (the whole tree has VC = -1).  This is Algorithm 1's line 2 and the
  authors' code.  Def. 3.4 instead sets SEP = 1 for K = 1, which would give
  ``VC(T) = (1 - max w) / max(1, max w)``.  That value depends on the scale of the weights, while every
  other VC does not.  :func:`dbcvi` returns -1.0 for any one-cluster labelling, and so does a 1-node
  tree (one cluster, no cut, ``dbcvi = -1.0``).
* **Dispersion** is the *max* internal weight and 0 for a singleton (Def. 3.3, the authors' code).
  Seed 002 prints *min* / 0 in its formula and max / 1 in its text (E20); we follow seed 001.
  So a singleton has VC = +1.
* **Separation of a candidate side** = ``min(sep_node over the side, w(cut edge))``.  ``sep_node(v)``
  is the smallest weight of an already-cut edge at ``v`` (+inf if none).  This equals Def. 3.4
  computed from scratch, because every cut edge joins two different clusters.
* **Ties / zero gain** (E22: seed 002's Algorithm 2 takes ``>=``, its text a strict gain): a cut is taken when the
  new DBCVI is ``>=`` the current one. Consequences: the first cut is always taken when ``n >= 2``, since every
  partition scores at least -1.  A 2-node cluster is always split further: two singletons score 2 and the pair
  scores < 2.
* **Incremental evaluation** (as the authors' code).  Cutting an edge inside ``C`` changes
  ``sep_node`` only at the edge's two endpoints, so no other cluster's VC changes.  The DBCVI then
  changes by ``(|A| VC(A) + |B| VC(B) - |C| VC(C)) / N``, with ``VC(T) = -1`` at the first step.
  Each cluster's best cut is found in ``O(|C|)`` and cached.  The cluster's subtree is rooted, so a
  side below an edge is a contiguous range of the DFS preorder and the other side is a prefix plus a
  suffix.  After a cut, only the two new clusters are evaluated again.  Total cost ``O(K n)`` for K
  clusters.

Rules this module adds (not in the paper):

* **Exact comparisons and ties.**  Each cluster contributes the float64 term ``t(C) = |C| * VC(C)``.
  VC is evaluated as ``(SEP - DISP) / max(SEP, DISP)``.  Min and max are exact, so rounding only
  enters in that quotient and in the product.  All comparisons use the *exact* sum of these terms:
  ``>=`` against the current value without a tolerance, and the choice of the largest value.  In code,
  TwoSum pairs within a cluster and :class:`fractions.Fraction` across clusters; the exact value is
  ``dbcvi(..., exact=True)``.  So the result depends neither on the summation order nor on the order
  of earlier cuts.  The largest DBCVI wins.  Among exactly equal values the **smallest edge id** wins,
  within a cluster and across clusters.  Algorithm 1 as printed keeps the *last* tied edge it scans;
  the authors' code keeps the first.  Float rounding of the individual terms can still separate two
  partitions whose DBCVIs are equal in real arithmetic (say ``3 * (2/3)`` against ``2 * 1``).  It can
  also turn an exact zero gain slightly negative or positive.  In such cases the rounding, not the
  edge id, decides.  The stopping test "dbcvi >= 1" is exact too: it holds exactly when every term
  equals ``|C|``.
* **Non-positive weights.**  Laplace noise creates them.  The authors' code asserts weights > 0, and
  with a weight <= 0 VC can be 0/0 or leave ``[-1, 1]``.  ``nonpositive="raise"`` (the default)
  raises :class:`GraphError`.  ``nonpositive="clip"`` replaces every weight below ``floor`` (default
  1e-12) by ``floor`` before clustering.  Clipping is the rule, not shifting: every VC is a ratio of
  two weights, so DBMSTClu is *scale*-invariant (multiplying all weights by ``c > 0`` leaves the
  clustering unchanged, up to rounding).  It is *not* shift-invariant: adding a constant changes every
  ratio and so the clustering.  Clipping leaves every positive weight above the floor untouched.
"""

from __future__ import annotations

import heapq
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, overload

import numpy as np

from .weighted_graph import GraphError, WeightedGraph

__all__ = ["DBMSTCluResult", "canonical_labels", "dbcvi", "dbmstclu"]

_NONPOSITIVE = ("raise", "clip")


@dataclass(frozen=True)
class DBMSTCluResult:
    """The output of :func:`dbmstclu`.

    ``labels[v]`` is the cluster of node ``v``.  Clusters are numbered ``0, 1, ...`` in order of their
    smallest node id (:func:`canonical_labels`).  ``dbcvi`` is the DBCVI of the final partition, -1.0
    if no cut was made, and is bit-identical to ``dbcvi(tree, labels)``.  ``cuts`` holds the ids of
    the cut tree edges (row indices of ``tree.edges``) in the order they were cut.
    """

    labels: np.ndarray
    dbcvi: float
    cuts: np.ndarray

    @property
    def n_clusters(self) -> int:
        return int(self.labels.max()) + 1 if self.labels.size else 0


# ------------------------------------------------------------------------------------------ helpers
def canonical_labels(labels: Any) -> np.ndarray:
    """Relabel a partition as ``0, 1, ...`` in order of each cluster's smallest node id.

    ``labels`` is any 1-D array of hashable-by-value labels (ints, strings, ...).  The result is an
    int64 array in which node 0 has label 0, and the next node with an unseen label gets 1, and so on.
    """
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError(f"labels must be a 1-D array (one label per node), got shape {lab.shape}.")
    if lab.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(lab, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size, dtype=np.int64)
    return rank[inverse.reshape(-1)]


def _check_options(nonpositive: str, floor: float) -> float:
    if not isinstance(nonpositive, str) or nonpositive not in _NONPOSITIVE:
        raise ValueError(f"nonpositive must be one of {_NONPOSITIVE}, got {nonpositive!r}.")
    if (not isinstance(floor, numbers.Real) or isinstance(floor, bool) or not math.isfinite(float(floor))
            or float(floor) <= 0.0):
        raise ValueError(f"floor must be a finite real number > 0, got {floor!r}.")
    return float(floor)


def _weights(tree: WeightedGraph, algorithm: str, nonpositive: str, floor: float) -> np.ndarray:
    """Validate the tree and return the weights DBMSTClu works with (clipped if asked)."""
    if not isinstance(tree, WeightedGraph):
        raise TypeError(f"{algorithm} needs a WeightedGraph spanning tree, got {type(tree).__name__}.")
    floor = _check_options(nonpositive, floor)
    tree.require_tree(algorithm)
    w = np.array(tree.weights, dtype=np.float64)
    if nonpositive == "raise":
        bad = np.flatnonzero(w <= 0.0)
        if bad.size:
            i = int(bad[0])
            raise GraphError(
                f"{algorithm} needs positive weights, but weights[{i}] = {w[i]!r} (edge {i} = "
                f"{tree.edges[i].tolist()}); pass nonpositive='clip' to replace weights below floor "
                f"(= {floor!r}) by floor, or make the weights positive yourself before the call "
                f"(e.g. clip; do not shift: DBMSTClu is scale- but not shift-invariant).")
    else:
        np.maximum(w, floor, out=w)
    return w


def _vc(sep: np.ndarray, disp: np.ndarray) -> np.ndarray:
    """Def. 3.5, elementwise: ``(SEP - DISP) / max(SEP, DISP)`` (the one formula used everywhere)."""
    return (sep - disp) / np.maximum(sep, disp)


# ------------------------------------------------------------------------------------------ DBCVI
@overload
def dbcvi(tree: WeightedGraph, labels: Any, *, exact: Literal[False] = ..., nonpositive: str = ...,
          floor: float = ...) -> float: ...
@overload
def dbcvi(tree: WeightedGraph, labels: Any, *, exact: Literal[True], nonpositive: str = ...,
          floor: float = ...) -> Fraction: ...


def dbcvi(tree: WeightedGraph, labels: Any, *, exact: bool = False, nonpositive: str = "raise",
          floor: float = 1e-12) -> float | Fraction:
    """DBCVI (Def. 3.6) of a partition of a spanning tree's nodes into connected subtrees, from scratch.

    ``labels`` gives one label per node (any values; equal labels = same cluster).  Each cluster
    must induce a connected subtree of ``tree``: the labelling must cut exactly ``K - 1`` tree edges.
    Otherwise :class:`GraphError`.  For ``K = 1`` the value is ``-1.0``, the convention of Algorithm 1
    and of the authors' code (Def. 3.4's "SEP = 1 if K = 1" is not used; see the module docstring).
    Otherwise each cluster contributes the float64 term ``|C| * VC(C)``.  DISP is the max internal
    weight (0 for a singleton), SEP the min weight of the cut edges at the cluster.  The result is the
    exact sum of the terms divided by ``N``: a :class:`~fractions.Fraction` with ``exact=True``, else
    that value correctly rounded to float.  ``nonpositive`` and ``floor`` work as in :func:`dbmstclu`.
    """
    w = _weights(tree, "dbcvi", nonpositive, floor)
    n = tree.n_nodes
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.shape[0] != n:
        raise ValueError(f"labels must be a 1-D array with one entry per node ({n}), got shape {lab.shape}.")
    lab = canonical_labels(lab)
    k = int(lab.max()) + 1
    u, v = tree.edges[:, 0], tree.edges[:, 1]
    cut = lab[u] != lab[v]
    if int(cut.sum()) != k - 1:
        raise GraphError(f"labels must split the tree into connected subtrees: {k} clusters need exactly "
                         f"{k - 1} cut tree edges, got {int(cut.sum())} (some cluster is disconnected).")
    if k == 1:
        return Fraction(-1) if exact else -1.0
    size = np.bincount(lab, minlength=k)
    disp = np.zeros(k)
    inside = ~cut
    np.maximum.at(disp, lab[u[inside]], w[inside])
    sep = np.full(k, np.inf)
    np.minimum.at(sep, lab[u[cut]], w[cut])
    np.minimum.at(sep, lab[v[cut]], w[cut])
    terms = size.astype(np.float64) * _vc(sep, disp)
    value = sum((Fraction(float(t)) for t in terms), Fraction(0)) / n
    return value if exact else float(value)


# ------------------------------------------------------------------------------------------ DBMSTClu
def _root(tree: WeightedGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Root the tree at node 0: (DFS preorder, parent node, parent edge id); -1 at the root."""
    n = tree.n_nodes
    indptr, nbr, eid = (a.tolist() for a in tree.adjacency)
    parent = [-1] * n
    pedge = [-1] * n
    order: list[int] = []
    stack = [0]
    while stack:
        x = stack.pop()
        order.append(x)
        px = parent[x]
        for j in range(indptr[x + 1] - 1, indptr[x] - 1, -1):
            y = nbr[j]
            if y != px:
                parent[y] = x
                pedge[y] = eid[j]
                stack.append(y)
    return (np.asarray(order, dtype=np.int64), np.asarray(parent, dtype=np.int64),
            np.asarray(pedge, dtype=np.int64))


@dataclass(frozen=True)
class _Best:
    """The best cut of one cluster: edge id, its preorder position, the two new terms."""

    edge: int
    position: int       # index in the cluster's preorder of the child end of the edge
    size_below: int     # number of nodes of the side below the edge (a contiguous preorder range)
    term_above: float   # |A| VC(A) for the side containing the cluster's top node
    term_below: float   # |B| VC(B) for the side below the edge


def _best_cut(order: np.ndarray, pos: np.ndarray, parent: np.ndarray, pedge: np.ndarray,
              w: np.ndarray, sep_node: np.ndarray) -> _Best | None:
    """All candidate cuts of one cluster in O(|C|); the one whose ``t(A) + t(B)`` is largest (exactly),
    ties to the smallest edge id.  ``order`` is the cluster's DFS preorder from its top node."""
    m = order.size
    if m < 2:
        return None
    pos[order] = np.arange(m)
    children = order[1:]
    ppos = pos[parent[children]].tolist()          # parent position of preorder position i is ppos[i-1]
    edge_ids = pedge[children]
    wpar = w[edge_ids]
    sn = sep_node[order]
    # bottom-up over the reverse preorder: subtree size, max weight inside, min sep_node
    size = [1] * m
    dsub = [0.0] * m
    ssub = sn.tolist()
    wp = wpar.tolist()
    for i in range(m - 1, 0, -1):
        p = ppos[i - 1]
        size[p] += size[i]
        d = dsub[i]
        we = wp[i - 1]
        if we > d:
            d = we
        if d > dsub[p]:
            dsub[p] = d
        s = ssub[i]
        if s < ssub[p]:
            ssub[p] = s
    size_b = np.asarray(size[1:], dtype=np.int64)
    disp_b = np.asarray(dsub[1:])
    sep_b = np.minimum(np.asarray(ssub[1:]), wpar)
    # side above edge i = preorder positions [0, i) + [i + size_b, m); edge j (child position j) lies
    # inside it iff j in [1, i) or j >= i + size_b
    ipos = np.arange(1, m)
    end = ipos + size_b
    wpos = np.concatenate(([0.0], wpar))
    pre_max = np.maximum.accumulate(wpos)                              # max over [0, k]
    suf_max = np.concatenate((np.maximum.accumulate(wpos[::-1])[::-1], [0.0]))   # max over [k, m)
    pre_min = np.minimum.accumulate(sn)
    suf_min = np.concatenate((np.minimum.accumulate(sn[::-1])[::-1], [np.inf]))
    disp_a = np.maximum(pre_max[ipos - 1], suf_max[end])
    sep_a = np.minimum(np.minimum(pre_min[ipos - 1], suf_min[end]), wpar)
    t_a = (m - size_b).astype(np.float64) * _vc(sep_a, disp_a)
    t_b = size_b.astype(np.float64) * _vc(sep_b, disp_b)
    # exact comparison of t_a + t_b: TwoSum (hi, lo) with hi = fl(t_a + t_b), lo the exact error
    hi = t_a + t_b
    bb = hi - t_a
    lo = (t_a - (hi - bb)) + (t_b - bb)
    k = int(np.lexsort((edge_ids, -lo, -hi))[0])
    return _Best(edge=int(edge_ids[k]), position=k + 1, size_below=int(size_b[k]),
                 term_above=float(t_a[k]), term_below=float(t_b[k]))


def dbmstclu(tree: WeightedGraph, *, nonpositive: str = "raise", floor: float = 1e-12) -> DBMSTCluResult:
    """Cluster the nodes of a spanning tree with DBMSTClu (seed 001, Algorithm 1).

    ``tree`` must be a spanning tree (:meth:`WeightedGraph.require_tree`), typically an MST of a
    distance graph.  Weights must be > 0.  With ``nonpositive="clip"``, weights below ``floor`` are
    raised to ``floor``; the default ``"raise"`` raises :class:`GraphError` instead.  Ties go to the
    largest exact DBCVI, then the smallest edge id; zero-gain cuts are taken.  See the module
    docstring for the full rules.  Each cluster's candidate cuts are evaluated in ``O(|C|)``, and only
    the two clusters created by a cut are evaluated again, so the total cost is ``O(K n)``.
    """
    w = _weights(tree, "DBMSTClu", nonpositive, floor)
    n = tree.n_nodes
    if n == 1:
        return _result(np.zeros(1, dtype=np.int64), -1.0, [])
    order, parent, pedge = _root(tree)
    pos = np.empty(n, dtype=np.int64)
    sep_node = np.full(n, np.inf)
    edges = tree.edges

    clusters: dict[int, np.ndarray] = {0: order}
    terms: dict[int, float] = {0: -float(n)}          # VC(T) = -1 by convention
    heap: list[tuple[Fraction, int, int, _Best]] = []

    def push(cid: int) -> None:
        best = _best_cut(clusters[cid], pos, parent, pedge, w, sep_node)
        if best is not None:
            gain = Fraction(best.term_above) + Fraction(best.term_below) - Fraction(terms[cid])
            heapq.heappush(heap, (-gain, best.edge, cid, best))

    push(0)
    total = Fraction(-n)                  # exact N * DBCVI of the current partition
    cuts: list[int] = []
    next_id = 1
    while heap and total < n:
        neg_gain, _, cid, best = heapq.heappop(heap)
        if neg_gain > 0:                  # best new DBCVI < current: stop
            break
        e = best.edge
        cuts.append(e)
        total -= neg_gain
        a, b = int(edges[e, 0]), int(edges[e, 1])
        we = float(w[e])
        sep_node[a] = min(sep_node[a], we)
        sep_node[b] = min(sep_node[b], we)
        lst = clusters.pop(cid)
        del terms[cid]
        i, s = best.position, best.size_below
        clusters[next_id] = np.concatenate((lst[:i], lst[i + s:]))
        terms[next_id] = best.term_above
        clusters[next_id + 1] = lst[i:i + s]
        terms[next_id + 1] = best.term_below
        push(next_id)
        push(next_id + 1)
        next_id += 2

    labels = np.empty(n, dtype=np.int64)
    for k, members in enumerate(clusters.values()):
        labels[members] = k
    return _result(canonical_labels(labels), float(total / n), cuts)


def _result(labels: np.ndarray, value: float, cuts: list[int]) -> DBMSTCluResult:
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    labels.setflags(write=False)
    cut_arr = np.asarray(cuts, dtype=np.int64).reshape(-1)
    cut_arr.setflags(write=False)
    return DBMSTCluResult(labels=labels, dbcvi=value, cuts=cut_arr)
