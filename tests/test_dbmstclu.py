"""Tests of algorithms.graph.dbmstclu: brute-force equivalence, hand-checked examples, errors."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import pdist, squareform

from algorithms.graph.dbmstclu import DBMSTCluResult, canonical_labels, dbcvi, dbmstclu
from algorithms.graph.weighted_graph import GraphError, WeightedGraph

SETTINGS = settings(max_examples=250, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


def path(weights: list[float]) -> WeightedGraph:
    n = len(weights) + 1
    return WeightedGraph(n, [(i, i + 1) for i in range(n - 1)], weights)


def labels_after_cuts(tree: WeightedGraph, cut: set[int]) -> np.ndarray:
    """Canonical labels of the components of the tree minus the edges in ``cut``."""
    kept = [i for i in range(tree.n_edges) if i not in cut]
    return canonical_labels(tree.subgraph_edges(kept).component_labels())


def brute_force(tree: WeightedGraph) -> tuple[np.ndarray, float, list[int]]:
    """Algorithm 1 of seed 001, literally: every remaining edge is tried as a cut of the current
    partition, each candidate's DBCVI is recomputed from scratch (exactly, with ``dbcvi(exact=True)``).
    The best candidate is kept if it is >= the current DBCVI; ties go to the smallest edge id (the
    documented rule; the printed pseudo-code would keep the last one scanned)."""
    current = Fraction(-1)
    cut: set[int] = set()
    order: list[int] = []
    while current < 1 and len(cut) < tree.n_edges:
        best, best_val = None, None
        for e in range(tree.n_edges):
            if e in cut:
                continue
            val = dbcvi(tree, labels_after_cuts(tree, cut | {e}), exact=True)
            if val >= current and (best_val is None or val > best_val):
                best, best_val = e, val
        if best is None:
            break
        cut.add(best)
        order.append(best)
        current = best_val
    return labels_after_cuts(tree, cut), float(current), order


@st.composite
def random_trees(draw: st.DrawFn) -> WeightedGraph:
    n = draw(st.integers(2, 12))
    parents = [draw(st.integers(0, i - 1)) for i in range(1, n)]
    perm = draw(st.permutations(range(n)))
    edges = [(perm[i], perm[p]) for i, p in zip(range(1, n), parents)]
    edges = draw(st.permutations(edges))
    if draw(st.booleans()):   # small integers: many exact ties
        weights = draw(st.lists(st.integers(1, 4), min_size=n - 1, max_size=n - 1))
    else:
        weights = draw(st.lists(st.floats(0.01, 10.0), min_size=n - 1, max_size=n - 1))
    return WeightedGraph(n, edges, weights)


def mst_of_points(x: np.ndarray) -> WeightedGraph:
    d = squareform(pdist(x))
    t = minimum_spanning_tree(d).tocoo()   # scipy drops zero weights: needs distinct points
    assert t.nnz == len(x) - 1, "duplicate points: scipy dropped a zero-weight MST edge"
    return WeightedGraph(len(x), np.column_stack([t.row, t.col]), t.data)


# --------------------------------------------------------------------------------------------------
# equivalence with the literal Algorithm 1
# --------------------------------------------------------------------------------------------------


@SETTINGS
@given(random_trees())
def test_matches_brute_force(tree: WeightedGraph) -> None:
    labels, value, order = brute_force(tree)
    res = dbmstclu(tree)
    assert res.cuts.tolist() == order
    assert np.array_equal(res.labels, labels)
    assert res.dbcvi == pytest.approx(value, abs=1e-12)
    assert res.dbcvi == dbcvi(tree, res.labels)          # bit-identical to the from-scratch value
    assert res.n_clusters == len(order) + 1


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force_on_medium_trees(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 30
    parents = [int(rng.integers(0, i)) for i in range(1, n)]
    weights = rng.integers(1, 6, size=n - 1).astype(float) if seed % 2 else rng.random(n - 1) + 0.01
    tree = WeightedGraph(n, [(i, p) for i, p in zip(range(1, n), parents)], weights)
    labels, value, order = brute_force(tree)
    res = dbmstclu(tree)
    assert res.cuts.tolist() == order and np.array_equal(res.labels, labels)
    assert res.dbcvi == pytest.approx(value, abs=1e-12)


@settings(SETTINGS, max_examples=150)
@given(random_trees(), st.integers(0, 2**32 - 1))
def test_dbcvi_in_range_and_scale_invariant(tree: WeightedGraph, seed: int) -> None:
    rng = np.random.default_rng(seed)
    cut = {e for e in range(tree.n_edges) if rng.random() < 0.4}
    labels = labels_after_cuts(tree, cut)
    v = dbcvi(tree, labels)
    assert -1.0 <= v <= 1.0
    assert dbcvi(tree.with_weights(np.asarray(tree.weights) * 4.0), labels) == v   # power of 2: exact
    assert dbcvi(tree, labels) == float(dbcvi(tree, labels, exact=True))
    assert dbcvi(tree, rng.permutation(tree.n_nodes)[labels]) == v   # label values do not matter


# --------------------------------------------------------------------------------------------------
# hand-checked examples
# --------------------------------------------------------------------------------------------------


def test_path_two_clusters() -> None:
    # 0 -.1- 1 -.1- 2 -.9- 3 -.1- 4 -.1- 5
    # Step 1: cutting the middle edge (id 2) gives A = {0,1,2}, B = {3,4,5}: DISP = .1, SEP = .9, so
    # VC = (.9-.1)/.9 = 8/9 for both, DBCVI = (3*8/9 + 3*8/9)/6 = 8/9.  (Cutting edge 0 instead:
    # {0} VC 1, {1..5} DISP .9 SEP .1 VC -8/9, DBCVI = (1 - 5*8/9)/6 = -31/54.)
    # Step 2: e.g. cutting edge 0 in A: {0} VC 1, {1,2} DISP .1 SEP min(.9,.1) = .1 VC 0; gain
    # = (1 + 0 - 3*8/9)/6 < 0; cutting edge 1 is symmetric.  Stop with 2 clusters, DBCVI 8/9.
    res = dbmstclu(path([0.1, 0.1, 0.9, 0.1, 0.1]))
    assert res.cuts.tolist() == [2]
    assert res.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert res.n_clusters == 2
    assert res.dbcvi == pytest.approx(8 / 9, abs=1e-12)


def test_path_of_four_ends_in_singletons() -> None:
    # 0 -.1- 1 -.9- 2 -.1- 3.  Step 1 cuts the middle edge: {0,1} and {2,3} both have DISP .1, SEP .9,
    # VC 8/9, DBCVI 8/9.  Step 2: splitting {0,1} gives two singletons (VC 1 each, SEP .1 and .1):
    # DBCVI = (1 + 1 + 2*8/9)/4 = 17/18 > 8/9, so it is taken (a 2-node cluster is always split).
    # Step 3 ties edge 2 -> DBCVI 1 and the algorithm stops at 1.
    res = dbmstclu(path([0.1, 0.9, 0.1]))
    assert res.cuts.tolist() == [1, 0, 2]
    assert res.labels.tolist() == [0, 1, 2, 3]
    assert res.dbcvi == 1.0
    assert dbcvi(path([0.1, 0.9, 0.1]), [0, 0, 1, 1]) == pytest.approx(8 / 9, abs=1e-15)
    assert dbcvi(path([0.1, 0.9, 0.1]), [0, 1, 2, 2]) == pytest.approx(17 / 18, abs=1e-15)


def test_star_with_one_long_edge() -> None:
    # centre 0, leaves 1..4, weights 1, 1, 1, 5.  Step 1: cut edge 3 (weight 5): {4} VC 1,
    # {0,1,2,3} DISP 1 SEP 5 VC 4/5: DBCVI = (1 + 4*4/5)/5 = 0.84.  Step 2: cutting a unit leaf gives
    # {leaf} VC 1 and {centre, 2 leaves} DISP 1 SEP min(5, 1) = 1 VC 0: gain (1 + 0 - 3.2)/5 < 0.
    tree = WeightedGraph(5, [(0, 1), (0, 2), (0, 3), (0, 4)], [1.0, 1.0, 1.0, 5.0])
    res = dbmstclu(tree)
    assert res.cuts.tolist() == [3]
    assert res.labels.tolist() == [0, 0, 0, 0, 1]
    assert res.dbcvi == pytest.approx(0.84, abs=1e-12)


def test_equal_star_ties_go_to_smallest_edge_id() -> None:
    # All first cuts tie ({leaf} VC 1, rest VC 0, DBCVI 1/5); each further leaf cut has gain > 0
    # and ties again; the last 2-node cluster is split as well.  Edge ids are deliberately not in
    # leaf order.
    tree = WeightedGraph(5, [(0, 3), (0, 1), (0, 4), (0, 2)], [2.0, 2.0, 2.0, 2.0])
    res = dbmstclu(tree)
    assert res.cuts.tolist() == [0, 1, 2, 3]
    assert res.n_clusters == 5 and res.dbcvi == 1.0


def test_two_blobs_recovered() -> None:
    rng = np.random.default_rng(7)
    x = np.vstack([rng.normal((0.0, 0.0), 0.5, size=(40, 2)), rng.normal((12.0, 0.0), 0.5, size=(40, 2))])
    truth = np.repeat([0, 1], 40)
    perm = rng.permutation(80)
    x, truth = x[perm], truth[perm]
    tree = mst_of_points(x / pdist(x).max())
    res = dbmstclu(tree)
    assert res.n_clusters == 2
    # exact equality of canonical labels (stronger than ARI = 1, and avoids importing sklearn.metrics)
    assert np.array_equal(res.labels, canonical_labels(truth))


def test_one_and_two_nodes() -> None:
    one = WeightedGraph(1, np.zeros((0, 2), dtype=np.int64), [])
    res = dbmstclu(one)
    assert isinstance(res, DBMSTCluResult)
    assert res.labels.tolist() == [0] and res.cuts.tolist() == [] and res.dbcvi == -1.0
    assert res.n_clusters == 1
    assert dbcvi(one, [5]) == -1.0
    two = WeightedGraph(2, [(0, 1)], [0.3])
    res = dbmstclu(two)   # any cut beats -1: two singletons, DBCVI 1
    assert res.labels.tolist() == [0, 1] and res.cuts.tolist() == [0] and res.dbcvi == 1.0


def test_one_cluster_convention_and_scratch_values() -> None:
    tree = path([0.1, 0.1, 0.9, 0.1, 0.1])
    assert dbcvi(tree, [3] * 6) == -1.0
    # two clusters of 3, each with term 3 * VC = 3 * (.9 - .1)/.9 in float64; exact sum / 6
    assert dbcvi(tree, [0, 0, 0, 1, 1, 1], exact=True) == 2 * Fraction(3.0 * ((0.9 - 0.1) / 0.9)) / 6
    # {0}: SEP .1 DISP 0 -> 1; {1..5}: SEP .1, DISP .9 -> -8/9
    assert dbcvi(tree, [0, 1, 1, 1, 1, 1]) == pytest.approx((1 - 5 * 8 / 9) / 6, abs=1e-12)


def test_result_arrays_read_only_and_canonical() -> None:
    res = dbmstclu(path([0.1, 0.1, 0.9, 0.1, 0.1]))
    assert res.labels.dtype == np.int64 and res.cuts.dtype == np.int64
    with pytest.raises(ValueError):
        res.labels[0] = 3
    assert canonical_labels(["b", "a", "b", "c"]).tolist() == [0, 1, 0, 2]
    assert canonical_labels([7, 7, 2, 9, 2]).tolist() == [0, 0, 1, 2, 1]


def test_moons_runs_fast_enough() -> None:
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    x, _ = sklearn_datasets.make_moons(1000, noise=0.09, random_state=0)
    tree = mst_of_points(x / pdist(x).max())
    res = dbmstclu(tree)
    assert res.dbcvi == dbcvi(tree, res.labels)
    assert 2 <= res.n_clusters <= 10


# --------------------------------------------------------------------------------------------------
# errors and non-positive weights
# --------------------------------------------------------------------------------------------------


def test_rejects_non_tree() -> None:
    cycle = WeightedGraph(3, [(0, 1), (1, 2), (0, 2)], [1.0, 1.0, 1.0])
    with pytest.raises(GraphError, match="spanning tree"):
        dbmstclu(cycle)
    forest = WeightedGraph(4, [(0, 1), (2, 3)], [1.0, 1.0])
    with pytest.raises(GraphError):
        dbmstclu(forest)
    with pytest.raises(GraphError, match="spanning tree"):
        dbcvi(cycle, [0, 0, 1])
    with pytest.raises(TypeError):
        dbmstclu("not a graph")  # type: ignore[arg-type]


def test_dbcvi_rejects_disconnected_cluster_and_bad_labels() -> None:
    tree = path([1.0, 1.0, 1.0])
    with pytest.raises(GraphError, match="connected subtrees"):
        dbcvi(tree, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="one entry per node"):
        dbcvi(tree, [0, 1, 1])


def test_nonpositive_raise_names_edge_and_fixes() -> None:
    tree = path([0.5, -0.2, 0.7])
    with pytest.raises(GraphError, match=r"weights\[1\].*edge 1 = \[1, 2\].*nonpositive='clip'"):
        dbmstclu(tree)
    with pytest.raises(GraphError, match="positive"):
        dbmstclu(path([0.5, 0.0, 0.7]))
    with pytest.raises(GraphError, match="positive"):
        dbcvi(tree, [0, 0, 1, 1])


def test_nonpositive_clip() -> None:
    tree = path([0.5, -0.2, 0.7, 0.6])
    res = dbmstclu(tree, nonpositive="clip")
    clipped = tree.with_weights([0.5, 1e-12, 0.7, 0.6])
    ref = dbmstclu(clipped)
    assert np.array_equal(res.labels, ref.labels) and res.cuts.tolist() == ref.cuts.tolist()
    assert res.dbcvi == ref.dbcvi
    assert dbcvi(tree, res.labels, nonpositive="clip") == res.dbcvi
    assert dbmstclu(tree, nonpositive="clip", floor=0.3).cuts.tolist() == dbmstclu(
        tree.with_weights([0.5, 0.3, 0.7, 0.6])).cuts.tolist()


@pytest.mark.parametrize("kwargs, name", [
    ({"nonpositive": "shift"}, "nonpositive"),
    ({"nonpositive": None}, "nonpositive"),
    ({"floor": 0.0}, "floor"),
    ({"floor": -1e-3}, "floor"),
    ({"floor": float("nan")}, "floor"),
    ({"floor": True}, "floor"),
])
def test_bad_options(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dbmstclu(path([1.0, 2.0]), **kwargs)
