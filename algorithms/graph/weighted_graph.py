"""The weighted-graph input of the graph algorithms: a public topology and private edge weights.

Seed 001, Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 2.1-2.2: a graph
``G = (V, E, w)`` is a *simple undirected* graph whose topology ``(V, E)`` is public and whose weight function
``w: E -> R`` is the private input (weight-differential privacy, Definitions 2.1-2.3).  Seed 002, Pinot, "Nodes
clustering in a graph under differential privacy" (the PAMST report), App. A.1 adds that graphs are assumed
connected "even when not specified".

:class:`WeightedGraph` stores the node count, an ``(m, 2)`` int64 edge array (each edge written
``(u, v)`` with ``u < v``, in the order given) and an ``(m,)`` float64 weight array, all read-only.
It satisfies dpverify's ``WeightedInput`` protocol (``.weights`` and ``.with_weights(new)``), so
dpverify's ℓ∞ / ℓ1 neighbour relations perturb the weights and keep the topology.

Validation happens at construction and raises :class:`GraphError` (a ``ValueError``) naming the
problem and the fix: self-loops, repeated edges (in either direction), node ids out of range,
non-finite weights, a weight array of the wrong length.  Connectivity and positivity are not part of
the type (Laplace noise makes weights non-positive, clustering trees are cut into forests); the
algorithms that need them call :meth:`WeightedGraph.require_connected` and
:meth:`WeightedGraph.require_positive`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["GraphError", "WeightedGraph"]


#: Graphs with at most this many edges count components with a pure-Python union-find.
_UNION_FIND_MAX_EDGES: int = 256


class GraphError(ValueError):
    """A graph input is malformed or violates what an algorithm requires."""


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a



def node_ids(e: np.ndarray, n_nodes: int) -> np.ndarray:
    """``e`` (node pairs in its last axis, any leading shape) as int64 node ids in ``0..n_nodes-1``, or a
    GraphError naming the first bad entry."""
    if e.dtype.kind == "f":
        if not np.all(np.isfinite(e)) or not np.all(e == np.round(e)):
            raise GraphError("edges must hold integer node ids 0..n_nodes-1, got non-integer values.")
    elif e.dtype.kind not in "iu":
        raise GraphError(f"edges must hold integer node ids, got dtype {e.dtype}.")
    e = e.astype(np.int64)
    if e.size and (e.min() < 0 or e.max() >= n_nodes):
        bad = tuple(int(i) for i in np.argwhere((e < 0).any(axis=-1) | (e >= n_nodes).any(axis=-1))[0])
        where = f"edge {bad[0]}" if len(bad) == 1 else f"edges[{', '.join(map(str, bad))}]"
        raise GraphError(f"{where} = {e[bad].tolist()} names a node outside 0..{n_nodes - 1}; "
                         f"relabel the nodes 0..n_nodes-1 or raise n_nodes.")
    return e


def _as_edges(edges: Any, n_nodes: int) -> np.ndarray:
    try:
        e = np.asarray(edges)
    except (TypeError, ValueError) as exc:
        raise GraphError(f"edges cannot be read as an (m, 2) integer array ({exc}).") from None
    if e.size == 0:
        e = e.reshape(0, 2)
    if e.ndim != 2 or e.shape[1] != 2:
        raise GraphError(f"edges must have shape (m, 2) (one [u, v] row per edge), got shape {e.shape}.")
    e = node_ids(e, n_nodes)
    loops = np.flatnonzero(e[:, 0] == e[:, 1])
    if loops.size:
        i = int(loops[0])
        raise GraphError(f"edge {i} = {e[i].tolist()} is a self-loop; the graph must be simple "
                         f"(remove loops).")
    e = np.sort(e, axis=1)
    keys = e[:, 0] * n_nodes + e[:, 1]
    uniq, first, counts = np.unique(keys, return_index=True, return_counts=True)
    if uniq.size != keys.size:
        k = uniq[counts > 1][0]
        where = np.flatnonzero(keys == k)[:2].tolist()
        raise GraphError(f"edges {where[0]} and {where[1]} both join nodes {int(k // n_nodes)} and "
                         f"{int(k % n_nodes)}; the graph must be simple (merge parallel edges).")
    return e


def _as_weights(weights: Any, m: int) -> np.ndarray:
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GraphError(f"weights cannot be read as a float vector ({exc}).") from None
    if w.ndim != 1 or w.size != m:
        raise GraphError(f"weights must be a 1-D vector with one entry per edge ({m}), got shape {w.shape}.")
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise GraphError(f"weights[{int(bad[0])}] is {float(w[bad[0]])}; edge weights must be finite.")
    return w


@dataclass(frozen=True, eq=False)
class WeightedGraph:
    """A simple undirected graph on nodes ``0..n_nodes-1`` with one finite weight per edge.

    Build it with :meth:`from_arrays`, :meth:`from_networkx`, :meth:`from_points`, :meth:`complete`
    or :meth:`erdos_renyi`.  ``edges[i]`` (with ``u < v``) carries ``weights[i]``; the edge order is
    the one given and is the edge numbering used by every algorithm's output.
    """

    n_nodes: int
    edges: np.ndarray
    weights: np.ndarray

    def __post_init__(self) -> None:
        n = self.n_nodes
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or int(n) < 1:
            raise GraphError(f"n_nodes must be an integer >= 1, got {n!r}.")
        object.__setattr__(self, "n_nodes", int(n))
        e = _as_edges(self.edges, int(n))
        object.__setattr__(self, "edges", _readonly(e))
        object.__setattr__(self, "weights", _readonly(_as_weights(self.weights, e.shape[0])))

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_arrays(cls, n_nodes: int, edges: Any, weights: Any) -> WeightedGraph:
        """From a node count, an ``(m, 2)`` edge array and an ``(m,)`` weight array."""
        return cls(n_nodes, edges, weights)

    @classmethod
    def from_networkx(cls, graph: Any, weight: str = "weight") -> WeightedGraph:
        """From an undirected networkx graph whose edges all carry the attribute ``weight``.

        Nodes are relabelled ``0..n-1`` in ``sorted(graph.nodes)`` order when sortable, else in
        iteration order.  Directed graphs and multigraphs are rejected.
        """
        if graph.is_directed():
            raise GraphError("from_networkx needs an undirected graph; call graph.to_undirected() first.")
        if graph.is_multigraph():
            raise GraphError("from_networkx needs a simple graph, got a multigraph; merge parallel edges.")
        nodes = list(graph.nodes)
        try:
            nodes = sorted(nodes)
        except TypeError:
            pass
        index = {v: i for i, v in enumerate(nodes)}
        edges, weights = [], []
        for u, v, data in graph.edges(data=True):
            if weight not in data:
                raise GraphError(f"edge ({u!r}, {v!r}) has no attribute {weight!r}; set it on every edge "
                                 f"or pass weight=<attribute name>.")
            edges.append((index[u], index[v]))
            weights.append(data[weight])
        return cls(len(nodes), np.asarray(edges, dtype=np.int64).reshape(-1, 2), weights)

    @classmethod
    def complete(cls, n_nodes: int, weights: Any) -> WeightedGraph:
        """The complete graph ``K_n`` with edges in ``itertools.combinations`` order."""
        u, v = np.triu_indices(int(n_nodes), k=1)
        return cls(n_nodes, np.column_stack([u, v]), weights)

    @classmethod
    def from_points(cls, points: Any, *, threshold: float | None = None, k: int | None = None) -> WeightedGraph:
        """The Euclidean graph of a point cloud: complete by default; with ``threshold`` only the pairs
        at distance <= threshold; with ``k`` the symmetrised k-nearest-neighbour graph.

        Weights are the Euclidean distances.  Duplicate points give zero weights (kept: the type allows
        any finite weight; algorithms that need positive weights say so).
        """
        from scipy.spatial.distance import pdist

        x = np.asarray(points, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] < 1:
            raise GraphError(f"points must be an (n, d) array with n >= 1, got shape {x.shape}.")
        if not np.all(np.isfinite(x)):
            raise GraphError("points must be finite (found NaN or inf).")
        if threshold is not None and k is not None:
            raise GraphError("give at most one of threshold and k.")
        n = x.shape[0]
        u, v = np.triu_indices(n, k=1)
        d = pdist(x)
        keep = np.ones(d.shape, dtype=bool)
        if threshold is not None:
            if not (isinstance(threshold, numbers.Real) and threshold > 0):
                raise GraphError(f"threshold must be a number > 0, got {threshold!r}.")
            keep = d <= threshold
        elif k is not None:
            if not isinstance(k, numbers.Integral) or not 1 <= k < n:
                raise GraphError(f"k must be an integer in 1..{n - 1}, got {k!r}.")
            from scipy.spatial.distance import squareform

            full = squareform(d)
            np.fill_diagonal(full, np.inf)
            nn = np.argsort(full, axis=1, kind="stable")[:, :k]
            mask = np.zeros((n, n), dtype=bool)
            mask[np.repeat(np.arange(n), k), nn.ravel()] = True
            mask |= mask.T
            keep = mask[u, v]
        return cls(n, np.column_stack([u[keep], v[keep]]), d[keep])

    @classmethod
    def erdos_renyi(cls, n_nodes: int, p: float, rng: np.random.Generator | int | None = None, *,
                    low: float = 0.0, high: float = 10.0) -> WeightedGraph:
        """``G(n, p)`` with i.i.d. ``U(low, high)`` weights (seed 002, Sec. 3.6 uses ``U(0, 10)``).

        Vectorised: one Bernoulli draw per node pair, then one uniform per kept edge.
        """
        if not 0.0 <= p <= 1.0:
            raise GraphError(f"p must lie in [0, 1], got {p!r}.")
        rng = np.random.default_rng(rng)
        u, v = np.triu_indices(int(n_nodes), k=1)
        keep = rng.random(u.size) < p
        edges = np.column_stack([u[keep], v[keep]])
        return cls(n_nodes, edges, rng.uniform(low, high, size=edges.shape[0]))

    # ---------------------------------------------------------------- protocol and views
    @property
    def n_edges(self) -> int:
        return int(self.edges.shape[0])

    @classmethod
    def _trusted(cls, n_nodes: int, edges: np.ndarray, weights: Any) -> WeightedGraph:
        """A graph on an edge array already validated by this class (only the weights are checked)."""
        g = object.__new__(cls)
        object.__setattr__(g, "n_nodes", n_nodes)
        object.__setattr__(g, "edges", edges if not edges.flags.writeable else _readonly(edges))
        object.__setattr__(g, "weights", _readonly(_as_weights(weights, edges.shape[0])))
        return g

    def with_weights(self, new_weights: Any) -> WeightedGraph:
        """Same topology, new weights (the neighbour relations' copy constructor)."""
        return WeightedGraph._trusted(self.n_nodes, self.edges, new_weights)

    def __dpverify_key__(self) -> tuple[object, ...]:
        """Everything an algorithm reads (node count, edges, weights), as bytes: pairs of an audit that share a
        graph equal in all three share its stream of outputs (``dpverify.execution.sources``)."""
        e, w = self.edges, self.weights
        return self.n_nodes, e.dtype.str, e.shape, e.tobytes(), w.dtype.str, w.shape, w.tobytes()

    def same_topology(self, other: WeightedGraph) -> bool:
        return self.n_nodes == other.n_nodes and np.array_equal(self.edges, other.edges)

    def to_networkx(self) -> Any:
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(self.n_nodes))
        g.add_weighted_edges_from((int(u), int(v), float(w)) for (u, v), w in zip(self.edges, self.weights))
        return g

    def subgraph_edges(self, edge_ids: Sequence[int] | np.ndarray) -> WeightedGraph:
        """The spanning subgraph (same nodes) keeping only ``edge_ids`` (e.g. a tree), weights included."""
        idx = np.asarray(edge_ids, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_edges or np.unique(idx).size != idx.size):
            raise GraphError(f"edge ids must be distinct and in 0..{self.n_edges - 1}, got {idx.tolist()}.")
        return WeightedGraph._trusted(self.n_nodes, self.edges[idx], self.weights[idx])

    @cached_property
    def adjacency(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR adjacency ``(indptr, neighbour, edge_id)``: the neighbours of node ``v`` are
        ``neighbour[indptr[v]:indptr[v+1]]`` reached through edges ``edge_id[...]``."""
        m = self.n_edges
        src = np.concatenate([self.edges[:, 0], self.edges[:, 1]])
        dst = np.concatenate([self.edges[:, 1], self.edges[:, 0]])
        eid = np.concatenate([np.arange(m), np.arange(m)])
        order = np.argsort(src, kind="stable")
        indptr = np.zeros(self.n_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=self.n_nodes), out=indptr[1:])
        return indptr, dst[order].astype(np.int64), eid[order].astype(np.int64)

    def __getstate__(self) -> dict[str, Any]:  # drop cached views when pickling (worker processes)
        state = dict(self.__dict__)
        state.pop("adjacency", None)
        return state

    def component_labels(self) -> np.ndarray:
        """Connected component of every node, ``(n_nodes,)`` int64, components numbered 0, 1, ... in order
        of their smallest node."""
        m = self.n_edges
        if m <= _UNION_FIND_MAX_EDGES:  # small graphs: a Python union-find beats building a sparse matrix
            parent = list(range(self.n_nodes))

            def find(a: int) -> int:
                while parent[a] != a:
                    parent[a] = parent[parent[a]]
                    a = parent[a]
                return a

            for u, v in self.edges.tolist():
                ru, rv = find(u), find(v)
                if ru != rv:
                    parent[ru] = rv
            roots = np.array([find(a) for a in range(self.n_nodes)], dtype=np.int64)
        else:
            a = sp.coo_matrix((np.ones(m), (self.edges[:, 0], self.edges[:, 1])), shape=(self.n_nodes,) * 2)
            roots = connected_components(a, directed=False)[1].astype(np.int64)
        _, first, inverse = np.unique(roots, return_index=True, return_inverse=True)
        return np.argsort(np.argsort(first))[inverse].astype(np.int64)

    def n_components(self) -> int:
        """Number of connected components (isolated nodes count)."""
        return int(self.component_labels().max()) + 1

    def is_connected(self) -> bool:
        return self.n_components() == 1

    # ---------------------------------------------------------------- requirements
    def require_connected(self, algorithm: str) -> None:
        """Raise :class:`GraphError` unless the graph is connected."""
        k = self.n_components()
        if k != 1:
            raise GraphError(f"{algorithm} needs a connected graph, but this one has {k} connected components "
                             f"({self.n_nodes} nodes, {self.n_edges} edges); add edges or run it on each "
                             f"component separately.")

    def require_positive(self, algorithm: str) -> None:
        """Raise :class:`GraphError` unless every weight is > 0."""
        bad = np.flatnonzero(self.weights <= 0)
        if bad.size:
            i = int(bad[0])
            raise GraphError(f"{algorithm} needs positive weights, but weights[{i}] = {float(self.weights[i])!r} "
                             f"(edge {self.edges[i].tolist()}); shift or rescale the weights.")

    def require_tree(self, algorithm: str) -> None:
        """Raise :class:`GraphError` unless the graph is a spanning tree (connected, n-1 edges)."""
        if self.n_edges != self.n_nodes - 1:
            raise GraphError(f"{algorithm} needs a spanning tree ({self.n_nodes - 1} edges on {self.n_nodes} "
                             f"nodes), got {self.n_edges} edges; compute an MST first.")
        self.require_connected(algorithm)

    def __repr__(self) -> str:
        return f"WeightedGraph(n_nodes={self.n_nodes}, n_edges={self.n_edges})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeightedGraph):
            return NotImplemented
        return self.same_topology(other) and np.array_equal(self.weights, other.weights)

    __hash__ = None  # type: ignore[assignment]
