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
