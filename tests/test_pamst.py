"""PAMST: the three samplers agree with the exact pmf (goodness of fit), calibration, outputs, errors.

Statistical tests: chi-square goodness of fit of sampled tree frequencies against
:func:`algorithms.graph.pamst.pamst_pmf`, cells with expected count < 5 pooled; each test rejects at
level ``ALPHA = 1e-3`` under the null (samplers exact), with fixed seeds, never retried.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import algorithms.graph.pamst as pamst_mod
from algorithms.broken import PAMSTFullBudgetEachStep, PAMSTNoHalf, PAMSTReleasesWeights
from algorithms.graph.mst import mst_edges
from algorithms.graph.pamst import PAMST, decode_tree, pamst_pmf
from algorithms.graph.weighted_graph import GraphError, WeightedGraph

ALPHA = 1e-3

K4 = WeightedGraph.complete(4, [5.0, 1.0, 0.0, 5.0, 0.0, 3.0])
# a 5-node graph that is not complete: a 5-cycle with two chords
C5 = WeightedGraph(5, [[0, 1], [1, 2], [2, 3], [3, 4], [0, 4], [0, 2], [1, 3]], [0.3, 1.2, 0.1, 0.8, 0.5, 0.9, 0.2])


def chi_square_pvalue(codes: np.ndarray, pmf: dict[int, float]) -> float:
    """Chi-square goodness-of-fit p-value of observed codes against ``pmf`` (small cells pooled)."""
    n = codes.shape[0]
    keys = sorted(pmf)
    observed_keys, counts = np.unique(codes, return_counts=True)
    assert set(observed_keys.tolist()) <= set(keys), "a sampler produced a tree outside the support"
    obs = dict(zip(observed_keys.tolist(), counts.tolist()))
    o = np.array([obs.get(k, 0) for k in keys], dtype=float)
    e = np.array([pmf[k] * n for k in keys])
    small = e < 5
    if small.any():
        o = np.append(o[~small], o[small].sum())
        e = np.append(e[~small], e[small].sum())
    return float(stats.chisquare(o, e).pvalue)


@pytest.mark.parametrize("graph,start", [(K4, None), (C5, 2)], ids=["K4-random-start", "C5-start-2"])
@pytest.mark.parametrize("sampler,n", [("batched", 200_000), ("fast", 4_000), ("reference", 4_000)])
def test_samplers_match_exact_pmf(graph: WeightedGraph, start: int | None, sampler: str, n: int) -> None:
    mech = PAMST(1.5, start=start, sampler=sampler)
    codes = mech(graph, n, np.random.default_rng(20261121))
    assert codes.shape == (n,) and codes.dtype == np.int64
    assert chi_square_pvalue(codes, mech.pmf(graph)) > ALPHA


def test_batched_general_path_matches_exact_pmf(monkeypatch: pytest.MonkeyPatch) -> None:
    """The masked-cut path used above 16 vertices, forced on a small graph."""
    monkeypatch.setattr(pamst_mod, "_TABLE_MAX_NODES", 0)
    mech = PAMST(1.5)
    codes = mech(C5, 100_000, np.random.default_rng(7))
    assert chi_square_pvalue(codes, mech.pmf(C5)) > ALPHA


def _brute_force_pmf(graph: WeightedGraph, c: float, start: int) -> dict[int, float]:
    """Enumerate every selection sequence of Algorithm 2 (independent of pamst_pmf's DP)."""
    out: dict[int, float] = {}

    def walk(in_s: frozenset[int], code: int, prob: float) -> None:
        if len(in_s) == graph.n_nodes:
            out[code] = out.get(code, 0.0) + prob
            return
        cut = [e for e, (u, v) in enumerate(graph.edges.tolist()) if (u in in_s) != (v in in_s)]
        w = graph.weights[cut]
        u = -np.abs(w - w.min())
        p = np.exp(c * u)
        p /= p.sum()
        for e, pe in zip(cut, p):
            a, b = graph.edges[e]
            walk(in_s | {int(a), int(b)}, code | (1 << e), prob * pe)

    walk(frozenset([start]), 0, 1.0)
    return out


def test_exact_pmf_matches_brute_force_enumeration() -> None:
    c = PAMST(1.5).coefficient(C5)
    dp = pamst_pmf(C5, c, start=1)
    bf = _brute_force_pmf(C5, c, start=1)
    assert set(dp) == set(bf)
    assert all(math.isclose(dp[k], bf[k], rel_tol=1e-12) for k in dp)
    assert math.isclose(sum(dp.values()), 1.0, rel_tol=1e-12)
    every_start = pamst_pmf(C5, c)
    assert math.isclose(sum(every_start.values()), 1.0, rel_tol=1e-12)


def test_outputs_are_spanning_trees_and_codes_decode() -> None:
    g = WeightedGraph.erdos_renyi(9, 0.6, 3)
    codes = PAMST(1.0)(g, 500, np.random.default_rng(0))
    for code in np.unique(codes):
        tree = decode_tree(int(code))
        assert tree.size == g.n_nodes - 1
        assert g.subgraph_edges(tree).is_connected()


def test_large_graphs_return_sorted_edge_ids() -> None:
    g = WeightedGraph.complete(12, np.arange(66, dtype=float))  # 66 edges > 62: no bitmask code
    out = PAMST(1.0)(g, 50, np.random.default_rng(0))
    assert out.shape == (50, 11)
    assert np.all(np.diff(out, axis=1) > 0)
    with pytest.raises(GraphError, match="output='edges'"):
        PAMST(1.0, output="code")(g, 1, np.random.default_rng(0))


def test_tree_input_is_deterministic_and_huge_epsilon_gives_the_mst() -> None:
    path = WeightedGraph(4, [[0, 1], [1, 2], [2, 3]], [1.0, 2.0, 3.0])
    assert np.all(PAMST(0.1)(path, 100, np.random.default_rng(0)) == 0b111)
    g = WeightedGraph.erdos_renyi(30, 0.3, 5)
    for sampler in ("batched", "fast", "reference"):
        trees = PAMST(1e7, sampler=sampler).trees(g, 3, np.random.default_rng(1))
        assert all(np.array_equal(np.sort(t), mst_edges(g)) for t in trees), sampler


def test_calibration_derived_from_the_neighbourhood() -> None:
    g = K4
    tight = PAMST(1.2, mu=0.5)
    assert tight.utility_sensitivity(g) == 0.5
    assert tight.coefficient(g) == pytest.approx(1.2 / 3 / (2 * 0.5))
    assert tight.true_epsilon(g) == pytest.approx(1.2)
    printed = PAMST(1.2, mu=0.5, sensitivity=1.0)  # Definition 2.6's 2·mu
    assert printed.true_epsilon(g) == pytest.approx(0.6)
    assert PAMST(1.0, mu=2.0, neighbours="l1").utility_sensitivity(g) == 2.0


def _max_corner_log_ratio(mech: PAMST, graph: WeightedGraph, mu: float) -> float:
    """Exact max over outputs and all 2^|E| corners of the ℓ∞ ball of |ln P_w(T)/P_w'(T)|."""
    p = mech.pmf(graph)
    worst = 0.0
    for d in itertools.product((-1.0, 1.0), repeat=graph.n_edges):
        q = mech.pmf(graph.with_weights(graph.weights + mu * np.asarray(d)))
        worst = max(worst, max(abs(math.log(p[k] / q[k])) for k in p))
    return worst


def test_exact_privacy_loss_on_k4_corners() -> None:
    """PAMST keeps ε on every corner of K4's ℓ∞ ball; its no-half and full-budget twins exceed it."""
    eps = 1.0
    assert _max_corner_log_ratio(PAMST(eps), K4, 1.0) <= eps
    assert _max_corner_log_ratio(PAMST(eps, sensitivity=2.0), K4, 1.0) <= eps / 2
    assert _max_corner_log_ratio(PAMSTNoHalf(eps), K4, 1.0) > eps
    assert _max_corner_log_ratio(PAMSTFullBudgetEachStep(eps), K4, 1.0) > 2 * eps


def test_releases_weights_twin_outputs_true_weights() -> None:
    out = PAMSTReleasesWeights(1.0)(K4, 20, np.random.default_rng(0))
    assert out.shape == (20, 4)
    for row in out:
        tree = decode_tree(int(row[0]))
        assert np.array_equal(row[1:], K4.weights[tree])


def test_bad_inputs_and_parameters_raise_clear_errors() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(GraphError, match="WeightedGraph"):
        PAMST(1.0)(np.array([1.0, 2.0]), 1, rng)
    disconnected = WeightedGraph(4, [[0, 1], [2, 3]], [1.0, 1.0])
    with pytest.raises(GraphError, match="2 connected components"):
        PAMST(1.0)(disconnected, 1, rng)
    with pytest.raises(GraphError, match="start vertex 9"):
        PAMST(1.0, start=9)(K4, 1, rng)
    with pytest.raises(ValueError, match="sampler"):
        PAMST(1.0, sampler="gumbel-once")
    with pytest.raises(ValueError, match="epsilon"):
        PAMST(0.0)
    with pytest.raises(ValueError, match="neighbours"):
        PAMST(1.0, neighbours="l2")


# -- the exact law by spanning-tree enumeration + DP over vertex subsets (algorithms.graph.pamst_exact) -------

from algorithms.graph.examples import topology  # noqa: E402
from algorithms.graph.pamst_exact import pamst_log_pmf, spanning_trees  # noqa: E402


@pytest.mark.parametrize("kind,n", [("path", 5), ("cycle", 6), ("star", 5), ("complete", 6), ("wheel", 7),
                                    ("random", 8)])
def test_spanning_tree_enumeration_matches_kirchhoff(kind: str, n: int) -> None:
    import networkx as nx

    g = topology(kind, n)
    trees = spanning_trees(g)
    nxg = nx.Graph()
    nxg.add_edges_from(g.edges.tolist())
    assert trees.shape == (round(nx.number_of_spanning_trees(nxg)), n - 1)
    assert np.unique(trees, axis=0).shape[0] == trees.shape[0]  # no tree twice
    for row in trees[:: max(1, trees.shape[0] // 50)]:
        t = nx.Graph()
        t.add_nodes_from(range(n))
        t.add_edges_from(g.edges[row].tolist())
        assert nx.is_tree(t)


def test_uniform_start_law_matches_brute_force_on_k5() -> None:
    g = WeightedGraph.complete(5, np.random.default_rng(3).uniform(0, 4, 10))
    c = 0.6
    dp = pamst_pmf(g, c)
    bf: dict[int, float] = {}
    for s in range(5):
        for k, p in _brute_force_pmf(g, c, s).items():
            bf[k] = bf.get(k, 0.0) + p / 5
    assert set(dp) == set(bf) and len(dp) == 125
    assert all(math.isclose(dp[k], bf[k], rel_tol=1e-11) for k in dp)


def test_batched_sampler_matches_exact_law_on_a_wheel() -> None:
    """7-vertex wheel (12 edges, 384 spanning trees), random start; chi-square at ALPHA."""
    g = topology("wheel", 7, np.random.default_rng(5).uniform(0, 3, 12))
    mech = PAMST(2.0)
    codes = mech(g, 300_000, np.random.default_rng(11))
    assert chi_square_pvalue(codes, mech.pmf(g)) > ALPHA


def test_exact_law_is_stable_for_large_coefficients() -> None:
    """c·(weight range) = 4000: linear-space products would overflow; the log-space DP puts all mass on the
    unique MST."""
    g = WeightedGraph.complete(5, np.arange(10, dtype=float))
    trees, log_p = pamst_log_pmf(g, 400.0)
    assert np.isfinite(log_p).all()
    best = int(np.argmax(log_p))
    assert set(trees[best].tolist()) == set(mst_edges(g).tolist())
    assert math.isclose(np.exp(log_p).sum(), 1.0, rel_tol=1e-12)


def test_exact_law_errors_name_the_problem() -> None:
    disconnected = WeightedGraph(4, [[0, 1], [2, 3]], [1.0, 1.0])
    with pytest.raises(GraphError, match="connected"):
        pamst_log_pmf(disconnected, 1.0)
    with pytest.raises(GraphError, match="max_candidates"):
        spanning_trees(WeightedGraph.complete(12, np.ones(66)))
    with pytest.raises(GraphError, match="coefficient"):
        pamst_log_pmf(K4, float("nan"))
    with pytest.raises(GraphError, match="start vertex 9"):
        pamst_log_pmf(K4, 1.0, start=9)


@pytest.mark.parametrize("kind,n,c", [("complete", 6, 0.7), ("wheel", 7, 2.0), ("random", 8, 0.3)])
def test_linear_and_log_space_programmes_agree(kind: str, n: int, c: float) -> None:
    g = topology(kind, n, 1.0)
    g = g.with_weights(np.random.default_rng(n).uniform(0, 3, g.n_edges))
    trees, lin = pamst_log_pmf(g, c, log_space=False)
    _, log = pamst_log_pmf(g, c, log_space=True, trees=trees)
    _, fixed = pamst_log_pmf(g, c, start=1, log_space=False, trees=trees)
    _, fixed_log = pamst_log_pmf(g, c, start=1, log_space=True, trees=trees)
    np.testing.assert_allclose(lin, log, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fixed, fixed_log, rtol=0, atol=1e-12)
