"""The weighted-graph type, exact MST, Laplace MST, Weight-Release, PTClust and the graph broken twins.

Statistical checks (Kolmogorov-Smirnov of released noise against the Laplace law) reject at level
``ALPHA = 1e-3`` under the null, with fixed seeds, never retried.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy import stats

from algorithms.broken import LaplaceMSTL1ScaleForLInf, LaplaceMSTTrueWeights, PAMSTDataDependentSensitivity
from algorithms.graph.examples import complete_graph, corner_pairs
from algorithms.graph.laplace_mst import LaplaceMST, batched_mst
from algorithms.graph.mst import edge_ids, mst_edges, tree_weight
from algorithms.graph.pamst import decode_tree, tree_codes
from algorithms.graph.ptclust import PTClust
from algorithms.graph.weight_release import WeightRelease
from algorithms.graph.weighted_graph import GraphError, WeightedGraph

ALPHA = 1e-3


# ------------------------------------------------------------------------------------------ graph type
@pytest.mark.parametrize("n,edges,weights,message", [
    (3, [[0, 1], [1, 1]], [1.0, 1.0], "self-loop"),
    (3, [[0, 1], [1, 0]], [1.0, 1.0], "both join nodes 0 and 1"),
    (3, [[0, 1], [1, 3]], [1.0, 1.0], "outside 0..2"),
    (3, [[0, 1], [1, 2]], [1.0, np.nan], "must be finite"),
    (3, [[0, 1], [1, 2]], [1.0], "one entry per edge"),
    (3, [[0, 1, 2]], [1.0], r"shape \(m, 2\)"),
    (3, [[0.5, 1]], [1.0], "integer node ids"),
    (0, [], [], "n_nodes must be an integer >= 1"),
])
def test_malformed_graphs_are_rejected_with_a_named_problem(n, edges, weights, message) -> None:
    with pytest.raises(GraphError, match=message):
        WeightedGraph(n, edges, weights)


def test_constructors_agree_and_keep_edge_order() -> None:
    g = WeightedGraph.complete(4, np.arange(6.0))
    assert g.edges.tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert WeightedGraph.from_networkx(g.to_networkx()) == g
    flipped = WeightedGraph(4, g.edges[:, ::-1], g.weights)  # (v, u) rows are normalised to u < v
    assert flipped == g
    with pytest.raises(ValueError):
        g.weights[0] = 3.0  # read-only
    directed = nx.DiGraph([(0, 1)])
    with pytest.raises(GraphError, match="undirected"):
        WeightedGraph.from_networkx(directed)
    with pytest.raises(GraphError, match="no attribute 'weight'"):
        WeightedGraph.from_networkx(nx.path_graph(3))


def test_point_cloud_graphs() -> None:
    pts = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [5.0, 5.0]])
    full = WeightedGraph.from_points(pts)
    assert full.n_edges == 6 and full.weights[0] == pytest.approx(1.0)
    near = WeightedGraph.from_points(pts, threshold=2.0)
    assert near.n_edges == 2 and not near.is_connected()
    with pytest.raises(GraphError, match="connected"):
        near.require_connected("PAMST")
    knn = WeightedGraph.from_points(pts, k=1)
    assert knn.edges.tolist() == [[0, 1], [0, 2], [2, 3]] or knn.n_edges == 3
    with pytest.raises(GraphError, match="k must be"):
        WeightedGraph.from_points(pts, k=4)


def test_requirements() -> None:
    g = WeightedGraph(3, [[0, 1], [1, 2]], [1.0, -0.5])
    g.require_tree("DBMSTClu")
    with pytest.raises(GraphError, match=r"weights\[1\] = -0.5"):
        g.require_positive("DBMSTClu")
    with pytest.raises(GraphError, match="spanning tree"):
        WeightedGraph.complete(3, [1.0, 1.0, 1.0]).require_tree("DBMSTClu")


# ------------------------------------------------------------------------------------------ exact MST
@pytest.mark.parametrize("seed", range(5))
def test_mst_matches_networkx_with_zero_and_negative_weights(seed: int) -> None:
    rng = np.random.default_rng(seed)
    g = WeightedGraph.erdos_renyi(25, 0.3, rng, low=-1.0, high=1.0)
    g = g.with_weights(np.where(rng.random(g.n_edges) < 0.2, 0.0, g.weights))  # exact zeros too
    if not g.is_connected():
        pytest.skip("random graph not connected")
    ours = tree_weight(g, mst_edges(g))
    ref = nx.minimum_spanning_tree(g.to_networkx()).size(weight="weight")
    assert ours == pytest.approx(ref, abs=1e-12)
    rows = rng.normal(size=(20, g.n_edges))
    assert np.array_equal(batched_mst(g, rows), np.stack([mst_edges(g, r) for r in rows]))


def test_edge_ids_lookup() -> None:
    g = WeightedGraph.complete(4, np.arange(6.0))
    assert edge_ids(g, [[3, 2], [0, 1]]).tolist() == [5, 0]
    with pytest.raises(ValueError, match="not an edge"):
        edge_ids(WeightedGraph(3, [[0, 1]], [1.0]), [[1, 2]])


# ------------------------------------------------------------------------------------------ Laplace MST
def test_laplace_mst_scale_follows_the_declared_neighbourhood() -> None:
    g = WeightedGraph.complete(4, np.zeros(6))
    assert LaplaceMST(0.5).scale(g) == pytest.approx(2.0)                              # ℓ1 radius 1
    assert LaplaceMST(0.5, mu=0.25, neighbours="linf").scale(g) == pytest.approx(3.0)  # 6 edges · 0.25
    assert LaplaceMSTL1ScaleForLInf(0.5, mu=0.25).scale(g) == pytest.approx(0.5)      # the bug
    assert LaplaceMSTL1ScaleForLInf(0.5, mu=0.25).true_epsilon(g) == pytest.approx(3.0)


def test_laplace_mst_releases_noisy_tree_weights_with_the_laplace_law() -> None:
    g = WeightedGraph.complete(5, np.linspace(1.0, 2.0, 10))
    mech = LaplaceMST(1.0, mu=0.1, neighbours="linf", release_weights=True)
    out = mech(g, 20_000, np.random.default_rng(11))
    assert out.shape == (20_000, 1 + 4)
    trees = np.stack([decode_tree(int(c)) for c in out[:200, 0]])
    noise = out[:200, 1:] - g.weights[trees]
    assert np.all(np.abs(noise) < 50 * mech.scale(g))
    # the tree is the MST of the noisy weights, so its released weights are not plain Lap draws;
    # check the law of the noise on the full weight vector instead
    from algorithms.graph.laplace_mst import graph_laplace

    raw = graph_laplace(g, mech.scale(g), 20_000, np.random.default_rng(12)) - g.weights
    assert stats.kstest(raw.ravel(), stats.laplace(scale=mech.scale(g)).cdf).pvalue > ALPHA


def test_laplace_mst_true_weights_twin_always_returns_the_true_mst() -> None:
    g = WeightedGraph.complete(4, [0.0, 0.3, 0.6, 0.9, 1.2, 1.5])
    out = LaplaceMSTTrueWeights(1.0)(g, 100, np.random.default_rng(0))
    assert np.all(out == tree_codes(mst_edges(g)[None, :])[0])
    honest = LaplaceMST(1.0)(g, 100, np.random.default_rng(0))
    assert np.unique(honest).size > 1


# ------------------------------------------------------------------------------------------ Weight-Release
def test_weight_release_calibrations() -> None:
    tri = complete_graph(3, [0.2, 0.4, 0.6])
    corrected = WeightRelease(0.5, mu=1.0, tau=0.1, p=2.0)
    assert corrected.scale(tri) == pytest.approx(6.0) and corrected.true_epsilon(tri) == pytest.approx(0.5)
    theorem_11 = WeightRelease(0.5, mu=1.0, tau=0.1, p=2.0, calibration="theorem-11")
    assert theorem_11.scale(tri) == pytest.approx(0.25) and theorem_11.true_epsilon(tri) == pytest.approx(12.0)
    per_edge = WeightRelease(0.5, mu=1.0, calibration="per-edge")
    assert per_edge.true_epsilon(tri) == pytest.approx(1.5)
    out = corrected(tri, 50_000, np.random.default_rng(3))
    noise = out * 2.0 - 0.1 - tri.weights  # undo (w + Y + tau)/p
    assert stats.kstest(noise.ravel(), stats.laplace(scale=6.0).cdf).pvalue > ALPHA
    with pytest.raises(ValueError, match="p must be"):
        WeightRelease(1.0, p=0.5)
    with pytest.raises(ValueError, match="calibration"):
        WeightRelease(1.0, calibration="l2")


# ------------------------------------------------------------------------------------------ PTClust
def test_ptclust_printed_and_corrected_scales_and_outputs() -> None:
    g = complete_graph(5, np.linspace(0.1, 0.3, 10))
    printed = PTClust(1.0, mu=0.1, variant="printed")
    corrected = PTClust(1.0, mu=0.1, variant="corrected")
    assert printed.weight_scale(g) == pytest.approx(0.2)        # 2·mu/ε (Algorithm 3 line 3)
    assert corrected.weight_scale(g) == pytest.approx(0.8)      # 2·(|V|-1)·mu/ε
    assert printed.true_epsilon(g) == pytest.approx(0.5 + 2.0)  # PAMST at ε/2 + (|V|-1)·ε/2
    assert corrected.true_epsilon(g) == pytest.approx(1.0)
    labels = printed(g, 30, np.random.default_rng(0))
    assert labels.shape == (30, 5) and labels.dtype == np.int64
    assert np.all(labels[:, 0] == 0)  # canonical: node 0 is in cluster 0
    tree = PTClust(1.0, mu=0.1, release="tree", tau=0.5, p=2.0)(g, 30, np.random.default_rng(0))
    assert tree.shape == (30, 1 + 4)


# ------------------------------------------------------------------------------------------ suites' helpers
def test_corner_pairs_are_linf_neighbours() -> None:
    pairs = corner_pairs(4, [5, 1, 0, 5, 0, 3], [[1, -1, -1, 1, -1, 1]], mu=0.5)
    (x0, x1, label), = pairs
    assert label == "corner[+--+-+]" and x0.same_topology(x1)
    assert np.max(np.abs(x1.weights - x0.weights)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="leaves"):
        corner_pairs(3, [0, 0, 0], [[2, 0, 0]])


def test_data_dependent_twin_reads_its_sensitivity_off_the_weights() -> None:
    g = complete_graph(4, [0.0, 0.1, 0.2, 0.1, 0.0, 0.2])
    assert PAMSTDataDependentSensitivity(1.0).utility_sensitivity(g) == pytest.approx(0.2 / 6)
