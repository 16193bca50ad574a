"""DBMSTClu for many small spanning trees at once: the batched form of :func:`dbmstclu`.

Source: seed 001, Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 3.2.1,
Definitions 3.3-3.6 and **Algorithm 1**, with every rule of :mod:`algorithms.graph.dbmstclu` (read its module
docstring): VC(T) = -1 for one cluster, DISP = max internal weight (0 for a singleton), SEP = min weight of a cut
edge at the cluster, the cut with the largest *exact* DBCVI wins, ties go to the smallest edge id, zero-gain cuts
are taken, weights below ``floor`` are clipped with ``nonpositive="clip"``.

:func:`dbmstclu_batch` returns, for ``n`` trees on the same ``|V|`` nodes (each row its own edges and
weights), the canonical labels that :func:`dbmstclu` returns row by row -- **identical** labels, not
approximately equal ones.  It is the clustering step of PTClust's mechanism
(:class:`algorithms.graph.ptclust.PTClust`), which draws many noisy trees per call.

How.  Every row is rooted at node 0 and the greedy loop of Algorithm 1 runs on all rows together, one
cut per row per step.  A candidate cut is named by the child end ``c`` of its edge: the side below is
``subtree(c) ∩ cluster(c)``, the side above the rest of the cluster.  Per step, numpy evaluates every
candidate of every row on ``(rows, |V|, |V|)`` arrays: the sizes, DISP and SEP of both sides, the
terms ``t = |side| * VC(side)`` -- computed with the same float64 operations as the scalar code, so they
are bit-identical to its terms -- and the gain ``t(A) + t(B) - t(C)`` in float64.

Exactness.  Only the gain sum is rounded here (the scalar code compares exact sums); its error is at
most a few ulps of ``|V|``.  A row's step is decided in float64 only when the decision is clear-cut: the
best gain exceeds the second best by more than ``TOLERANCE * |V|`` and is farther than that from 0 (or
no candidate is left).  On a near-tie -- in particular an exact tie, which clipped weights often
create -- the batched version **falls back to the exact rule of the scalar** :func:`dbmstclu` for that
step of that row: the exact gains (:class:`~fractions.Fraction` sums of the same float64 terms) of the
candidates within the margin, the largest wins, ties to the smallest edge id, taken iff ``>= 0``.  (An
earlier version re-ran the whole row with the scalar :func:`dbmstclu`; deciding only the tied step
exactly gives the same labels and keeps the rest of the row in numpy.)  The stopping test "DBCVI = 1"
is exact here as in the scalar code: it holds when every term equals its cluster size, and the terms
are bit-identical.  Trees with more than :data:`MAX_BATCH_NODES` nodes go to the scalar code row by
row, which is faster there.
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from .dbmstclu import _check_options, dbmstclu
from .weighted_graph import GraphError, WeightedGraph, node_ids

__all__ = ["MAX_BATCH_NODES", "TOLERANCE", "dbmstclu_batch"]

#: Relative margin (times ``|V|``, the scale of the terms) under which a float64 decision is not
#: trusted and the step is decided with exact arithmetic (the scalar :func:`dbmstclu`'s rule).  The
#: float64 error of a gain is at most ``5 * 2**-53 * |V|`` (two roundings of values of size at most
#: ``3 |V|``), so the difference of two gains is off by less than ``2**-49 * |V|``: this margin is 512
#: times that.  It must stay far below the genuine gains, which can be as small as ``floor / weight``
#: (PTClust clips at 1e-9).
TOLERANCE: float = 2.0 ** -40

#: Trees with more nodes are clustered row by row by the scalar :func:`dbmstclu`: a batched step costs
#: ``O(|V|^2)`` per row and a row takes up to ``|V| - 1`` steps, against ``O(K |V|)`` per row for the
#: scalar code (measured: the batch is 4-10x faster at 12-30 nodes, even at about 100, 3x slower at 200).
MAX_BATCH_NODES: int = 64

#: Rows per chunk are chosen so that one ``(rows, |V|, |V|)`` array holds about this many entries.
_CHUNK_ENTRIES: int = 1 << 20


def dbmstclu_batch(n_nodes: int, edges: Any, weights: Any, *, nonpositive: str = "raise",
                   floor: float = 1e-12) -> np.ndarray:
    """Cluster ``n`` spanning trees on nodes ``0..n_nodes-1`` with DBMSTClu (seed 001, Algorithm 1).

    ``edges`` is an ``(n, n_nodes-1, 2)`` integer array (row ``i`` lists the node pairs of tree ``i``;
    edge ids are positions in that list, as in :func:`dbmstclu`), or one ``(n_nodes-1, 2)`` tree shared
    by every row.  ``weights`` is ``(n, n_nodes-1)`` float (finite).  ``nonpositive`` and ``floor``
    work as in :func:`dbmstclu`.  Returns the ``(n, n_nodes)`` int64 canonical labels; row ``i`` equals
    ``dbmstclu(WeightedGraph(n_nodes, edges[i], weights[i]), ...).labels`` exactly.  Near-ties fall
    back to that scalar function's exact comparisons (see the module docstring).
    """
    labels, _ = _dbmstclu_batch(n_nodes, edges, weights, nonpositive=nonpositive, floor=floor)
    return labels


# ------------------------------------------------------------------------------------------ validation
def _validate(n_nodes: Any, edges: Any, weights: Any, nonpositive: str,
              floor: float) -> tuple[int, np.ndarray, np.ndarray, float]:
    if not isinstance(n_nodes, numbers.Integral) or isinstance(n_nodes, bool) or int(n_nodes) < 1:
        raise GraphError(f"n_nodes must be an integer >= 1, got {n_nodes!r}.")
    nn = int(n_nodes)
    m = nn - 1
    floor = _check_options(nonpositive, floor)
    try:
        w = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GraphError(f"weights cannot be read as an (n, n_nodes-1) float array ({exc}).") from None
    if w.ndim != 2 or w.shape[1] != m:
        raise GraphError(f"weights must have shape (n, n_nodes-1) = (n, {m}) (one row of tree-edge weights "
                         f"per tree), got shape {w.shape}.")
    n = w.shape[0]
    bad = np.argwhere(~np.isfinite(w))
    if bad.size:
        i, j = (int(x) for x in bad[0])
        raise GraphError(f"weights[{i}, {j}] is {float(w[i, j])}; edge weights must be finite.")
    try:
        e = np.asarray(edges)
    except (TypeError, ValueError) as exc:
        raise GraphError(f"edges cannot be read as an integer array ({exc}).") from None
    if e.size == 0 and m == 0:
        e = np.zeros((n, 0, 2), dtype=np.int64)
    if e.ndim == 2 and e.shape == (m, 2):
        e = np.broadcast_to(e, (n, m, 2))
    if e.ndim != 3 or e.shape != (n, m, 2):
        raise GraphError(f"edges must have shape (n, n_nodes-1, 2) = ({n}, {m}, 2) (one tree per row of "
                         f"weights) or ({m}, 2) (one tree for all rows), got shape {e.shape}.")
    e = node_ids(e, nn)
    if nonpositive == "raise":
        low = np.argwhere(w <= 0.0)
        if low.size:
            i, j = (int(x) for x in low[0])
            raise GraphError(
                f"DBMSTClu needs positive weights, but weights[{i}, {j}] = {float(w[i, j])!r} (edge "
                f"{e[i, j].tolist()}); pass nonpositive='clip' to replace weights below floor "
                f"(= {floor!r}) by floor (do not shift: DBMSTClu is scale- but not shift-invariant).")
    else:
        np.maximum(w, floor, out=w)
    return nn, e, w, floor


def _root(nn: int, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Root every row at node 0: ``(parent node, parent edge id)``, -1 at the root.  Raises
    :class:`GraphError` naming the first row that is not a spanning tree."""
    n, m = e.shape[0], e.shape[1]
    parent = np.full((n, nn), -1, dtype=np.int64)
    pedge = np.full((n, nn), -1, dtype=np.int64)
    seen = np.zeros((n, nn), dtype=bool)
    seen[:, 0] = True
    rows = np.broadcast_to(np.arange(n)[:, None], (n, m))
    u, v = e[..., 0], e[..., 1]
    for _ in range(m):
        su, sv = seen[rows, u], seen[rows, v]
        grow = su != sv
        if not grow.any():
            break
        r, j = np.nonzero(grow)
        frm = np.where(su[r, j], u[r, j], v[r, j])
        to = np.where(su[r, j], v[r, j], u[r, j])
        parent[r, to] = frm
        pedge[r, to] = j
        seen[r, to] = True
    bad = np.flatnonzero(~seen.all(axis=1))
    if bad.size:
        i = int(bad[0])
        raise GraphError(f"edges[{i}] is not a spanning tree of the {nn} nodes (it leaves "
                         f"{int((~seen[i]).sum())} node(s) unreachable from node 0, so it has a cycle, a "
                         f"self-loop or a repeated edge); DBMSTClu needs a spanning tree per row.")
    return parent, pedge


# ------------------------------------------------------------------------------------------ the batch
def _dbmstclu_batch(n_nodes: Any, edges: Any, weights: Any, *, nonpositive: str = "raise",
                    floor: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """:func:`dbmstclu_batch` plus, per row, the number of greedy steps decided in exact arithmetic."""
    nn, e, w, floor = _validate(n_nodes, edges, weights, nonpositive, floor)
    n = w.shape[0]
    labels = np.zeros((n, nn), dtype=np.int64)
    exact_steps = np.zeros(n, dtype=np.int64)
    if n == 0 or nn == 1:
        return labels, exact_steps
    parent, pedge = _root(nn, e)
    if nn > MAX_BATCH_NODES:                      # the (rows, |V|, |V|) steps cost more than the scalar code
        for i in range(n):
            tree = WeightedGraph(nn, e[i], w[i])      # clipping again leaves clipped weights unchanged
            labels[i] = dbmstclu(tree, nonpositive=nonpositive, floor=floor).labels
        return labels, exact_steps
    chunk = max(1, _CHUNK_ENTRIES // (nn * nn))
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        top, steps = _greedy(w[lo:hi], parent[lo:hi], pedge[lo:hi])
        labels[lo:hi] = _canonical(top)
        exact_steps[lo:hi] = steps
    return labels, exact_steps


def _greedy(w: np.ndarray, parent: np.ndarray, pedge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 on a chunk of rows.  Returns each node's cluster, named by the cluster's top node,
    and the number of steps of each row that needed exact arithmetic."""
    n, nn = parent.shape
    rows_all = np.arange(n)
    nonroot = parent >= 0
    # desc[r, c, v]: v lies in the subtree of c (c itself included)
    desc = np.zeros((n, nn, nn), dtype=bool)
    idx = np.arange(nn)
    desc[:, idx, idx] = True
    cur = np.broadcast_to(idx, (n, nn)).copy()
    for _ in range(nn - 1):
        cur = np.where(cur >= 0, parent[rows_all[:, None], np.maximum(cur, 0)], -1)
        r, v = np.nonzero(cur >= 0)
        if r.size == 0:
            break
        desc[r, cur[r, v], v] = True
    pw = np.where(nonroot, w[rows_all[:, None], np.maximum(pedge, 0)], 0.0)   # weight of v's parent edge
    not_self = ~np.eye(nn, dtype=bool)

    top_out = np.zeros((n, nn), dtype=np.int64)
    exact_steps = np.zeros(n, dtype=np.int64)
    tol = TOLERANCE * nn
    # state of the rows still running (compacted as rows finish)
    ids = rows_all
    top = np.zeros((n, nn), dtype=np.int64)              # cluster of v, named by its top node
    cut = ~nonroot                                       # v's parent edge is cut (the root counts as cut)
    sep = np.full((n, nn), np.inf)                       # sep_node: smallest cut weight at v
    term = np.full((n, nn), -float(nn))                  # term |C| VC(C) of v's cluster (VC(T) = -1)
    size = np.full((n, nn), nn, dtype=np.int64)          # |C| of v's cluster
    while ids.size:
        r = ids.size
        rr = np.arange(r)
        same = top[:, None, :] == top[:, :, None]        # [r, c, v]: v in c's cluster
        dsc = desc[ids]
        in_b = same & dsc
        in_a = same & ~dsc
        pwr = pw[ids]
        pwi = np.where(cut, 0.0, pwr)[:, None, :]       # internal edge weights (0: no internal edge)
        disp_b = np.where(in_b & not_self, pwi, 0.0).max(axis=2)
        disp_a = np.where(in_a, pwi, 0.0).max(axis=2)
        sn = sep[:, None, :]
        sep_b = np.minimum(np.where(in_b, sn, np.inf).min(axis=2), pwr)
        sep_a = np.minimum(np.where(in_a, sn, np.inf).min(axis=2), pwr)
        size_b = in_b.sum(axis=2)
        size_a = in_a.sum(axis=2)
        with np.errstate(invalid="ignore"):               # the cut candidates (root, cut edges) are masked
            t_a = size_a.astype(np.float64) * ((sep_a - disp_a) / np.maximum(sep_a, disp_a))
            t_b = size_b.astype(np.float64) * ((sep_b - disp_b) / np.maximum(sep_b, disp_b))
            gain = (t_a + t_b) - term
        gain[cut] = -np.inf
        best = np.argmax(gain, axis=1)
        g1 = gain[rr, best]
        g2 = gain.copy()
        g2[rr, best] = -np.inf
        g2 = g2.max(axis=1)
        stop = g1 < -tol                                  # includes "no candidate left" (-inf)
        take = (g1 > tol) & (g2 < g1 - tol)
        unsure = np.flatnonzero(~stop & ~take)
        if unsure.size:
            exact_steps[ids[unsure]] += 1
            _decide_exactly(unsure, gain, g1 - tol, t_a, t_b, term, pedge[ids], best, stop, take)
        # apply the cuts
        tr = np.flatnonzero(take)
        c = best[tr]
        wc = pwr[tr, c]
        cut[tr, c] = True
        sep[tr, c] = np.minimum(sep[tr, c], wc)
        pc = parent[ids[tr], c]
        sep[tr, pc] = np.minimum(sep[tr, pc], wc)
        nb = in_b[tr, c]                                  # [k, v]
        na = in_a[tr, c]
        top[tr] = np.where(nb, c[:, None], top[tr])
        term[tr] = np.where(nb, t_b[tr, c][:, None], np.where(na, t_a[tr, c][:, None], term[tr]))
        size[tr] = np.where(nb, size_b[tr, c][:, None], np.where(na, size_a[tr, c][:, None], size[tr]))
        # DBCVI = 1 exactly iff every term equals its cluster size (terms are the scalar code's bits)
        full = take & np.all(term == size, axis=1)
        done = stop | full
        top_out[ids[done]] = top[done]
        keep = ~done
        ids, top, cut, sep, term, size = ids[keep], top[keep], cut[keep], sep[keep], term[keep], size[keep]
    return top_out, exact_steps


def _decide_exactly(rows: np.ndarray, gain: np.ndarray, low: np.ndarray, t_a: np.ndarray, t_b: np.ndarray,
                    term: np.ndarray, pedge: np.ndarray, best: np.ndarray, stop: np.ndarray,
                    take: np.ndarray) -> None:
    """One step of the rows whose float64 decision is not clear-cut, decided with the scalar code's
    exact rule: every candidate whose float gain is at least ``low`` (the others are certainly worse)
    gets its exact gain ``t(A) + t(B) - t(C)`` as a :class:`~fractions.Fraction`; the largest wins,
    ties to the smallest edge id; the cut is taken iff that gain is ``>= 0``.  Writes ``best``,
    ``stop`` and ``take`` in place."""
    for k in rows.tolist():
        chosen: tuple[Fraction, int, int] | None = None
        for c in np.flatnonzero(gain[k] >= low[k]).tolist():
            g = Fraction(float(t_a[k, c])) + Fraction(float(t_b[k, c])) - Fraction(float(term[k, c]))
            key = (g, -int(pedge[k, c]), c)
            if chosen is None or key[:2] > chosen[:2]:
                chosen = key
        assert chosen is not None                     # the best candidate is always in the window
        if chosen[0] < 0:
            stop[k] = True
        else:
            take[k] = True
            best[k] = chosen[2]


def _canonical(top: np.ndarray) -> np.ndarray:
    """Row-wise :func:`canonical_labels` of cluster names: clusters numbered by their smallest node."""
    n, nn = top.shape
    same = top[:, :, None] == top[:, None, :]
    rep = np.argmax(same, axis=2)                          # smallest node of v's cluster
    is_rep = rep == np.arange(nn)
    rank = np.cumsum(is_rep, axis=1) - 1
    return np.take_along_axis(rank, rep, axis=1).astype(np.int64)
