"""Seed 002's private-MST theorems (algorithms/theorems/private_mst.py): bounds, hypotheses, exact values,
the instrumented PAMST sampler, the deterministic checks, and verdicts through dpverify.check_theorem.

Statistical assertions state their false-alarm level; every seed is fixed and nothing is retried.  Chi-square
goodness-of-fit tests reject at ``ALPHA = 1e-4`` under the null (the sampler is exact).  Monte Carlo vs exact
comparisons use a 6-sigma band (false alarm < 2e-9 each).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import algorithms.theorems.private_mst as pm
from algorithms.graph.mst import mst_edges
from algorithms.graph.pamst import PAMST, pamst_pmf, tree_codes
from algorithms.graph.weighted_graph import WeightedGraph
from algorithms.theorems.private_mst import (
    LaplaceAccuracy,
    LaplaceMSTError,
    LaplaceSumCDF,
    PAMSTError,
    PAMSTPerStepError,
    PrimRangeFacts,
    PrimRangeFactsExhaustive,
    mst_graph,
    prim_like_runs,
)
from dpverify.theorems.check import check_theorem

ALPHA = 1e-4

K4 = WeightedGraph.complete(4, [5.0, 1.0, 0.0, 5.0, 0.0, 3.0])
C5 = WeightedGraph(5, [[0, 1], [1, 2], [2, 3], [3, 4], [0, 4], [0, 2], [1, 3]], [0.3, 1.2, 0.1, 0.8, 0.5, 0.9, 0.2])


def six_sigma(estimate: float, p: float, n: int) -> bool:
    return abs(estimate - p) <= 6.0 * math.sqrt(max(p * (1 - p), 1e-12) / n)


def chi_square_pvalue(codes: np.ndarray, pmf: dict[int, float]) -> float:
    keys = sorted(pmf)
    got, counts = np.unique(codes, return_counts=True)
    assert set(got.tolist()) <= set(keys), "a tree outside the support"
    obs = dict(zip(got.tolist(), counts.tolist()))
    o = np.array([obs.get(k, 0) for k in keys], dtype=float)
    e = np.array([pmf[k] for k in keys]) * codes.size
    big = e >= 5
    o = np.append(o[big], o[~big].sum())
    e = np.append(e[big], e[~big].sum())
    keep = e > 0
    return float(stats.chisquare(o[keep], e[keep] * o[keep].sum() / e[keep].sum()).pvalue)


# ---------------------------------------------------------------- bounds recomputed by hand


def test_laplace_accuracy_threshold_and_exact() -> None:
    th = LaplaceAccuracy(epsilon=0.5, k=3, gamma=0.3, sensitivity=2.0)
    assert th.threshold() == pytest.approx(4.0 * math.log(10.0))        # (Δ/ε) ln(k/γ)
    assert th.exact() == pytest.approx(1.0 - 0.9 ** 3)                  # each coordinate exceeds w.p. γ/k
    assert th.bound() == 0.3 and th.size == 3
    assert LaplaceAccuracy(k=1, gamma=0.3).exact() == pytest.approx(0.3)  # tight at k = 1


def test_laplace_sum_density_and_cdf_by_integration() -> None:
    eps = 1.7
    lap = lambda u: eps / 2 * math.exp(-eps * abs(u))  # noqa: E731
    for x in (-1.3, 0.0, 0.4, 2.5):
        lo, hi = min(0.0, x), max(0.0, x)
        f = lambda t: lap(t) * lap(x - t)  # noqa: E731
        conv = sum(integrate.quad(f, a, b)[0] for a, b in ((-np.inf, lo), (lo, hi), (hi, np.inf)))
        assert conv == pytest.approx(eps / 4 * (1 + eps * abs(x)) * math.exp(-eps * abs(x)), rel=1e-7)  # A.3 (i)
    density = lambda u: eps / 4 * (1 + eps * abs(u)) * math.exp(-eps * abs(u))  # noqa: E731
    for x in (-2.0, 0.0, 0.3, 1.0, 5.0):
        cdf = integrate.quad(density, -np.inf, min(x, 0.0))[0] + integrate.quad(density, 0.0, max(x, 0.0))[0]
        assert LaplaceSumCDF(epsilon=eps, x=x).exact() == pytest.approx(cdf, abs=1e-9)
        if x >= 0:
            assert LaplaceSumCDF(epsilon=eps, x=x).bound() == pytest.approx(cdf, abs=1e-9)  # App. A.3 (ii)
    assert LaplaceSumCDF(epsilon=1.0, x=1.0, form="printed").bound() == pytest.approx(1 - math.e * 0.75)


def test_graph_bounds_by_hand() -> None:
    # Thm 3.2.1 on K10: (2*9/1) ln(45/0.05)
    assert LaplaceMSTError(n_nodes=10, gamma=0.05).bound_value() == pytest.approx(18 * math.log(900))
    assert LaplaceMSTError(n_nodes=10, gamma=0.05).bound() == 0.05
    # Cor 3.4.1 on the triangle, γ = 0.9: (2*2/(3*1)) (2 ln(2/0.9) + 2 ln 2!)
    tri = PAMSTError(n_nodes=3, gamma=0.9)
    assert tri.bound_value() == pytest.approx(4 / 3 * (2 * math.log(2 / 0.9) + 2 * math.log(2)))
    # Cor 3.4.1 on K8, ε = 0.5, γ = 0.05: (2*7/(28*0.5)) (7 ln(7/0.05) + 2 ln 7!)
    k8 = PAMSTError(n_nodes=8, epsilon=0.5, gamma=0.05)
    assert k8.bound_value() == pytest.approx(1.0 * (7 * math.log(140) + 2 * math.log(5040)))
    assert PAMSTError(n_nodes=8, quantity="quantile").level == pytest.approx(0.5)
    # Thm 3.4.2's deterministic part and the factor of Σ ln|R_i|
    t = PAMSTPerStepError(n_nodes=5, topology="cycle", epsilon=2.0, gamma=0.2)
    assert t.rhs_constant() == pytest.approx(2 * 4 / (5 * 2.0) * 4 * math.log(4 / 0.2))
    assert t.range_coefficient() == pytest.approx(2 * 4 / (5 * 2.0))


def test_pamst_calibrations() -> None:
    g = PAMSTError(n_nodes=6).graph
    assert PAMSTError(n_nodes=6).mechanism.utility_sensitivity(g) == pytest.approx(1 / 15)
    assert PAMSTError(n_nodes=6, calibration="unit").mechanism.utility_sensitivity(g) == 1.0


def test_mst_graph_weight_schemes() -> None:
    g = mst_graph("complete", 5, "two_level", 2.0)
    assert sorted(g.weights[mst_edges(g)]) == [0.0] * 4 and np.count_nonzero(g.weights == 2.0) == 6
    assert set(g.edges[g.weights == 0.0, 0].tolist()) == {0}              # the star at vertex 0
    w = mst_graph("wheel", 6, "two_level", 1.0)
    assert np.count_nonzero(w.weights == 0.0) == 5 and w.is_connected()
    i = mst_graph("random", 8, "integer", 3.0, p=0.4, graph_seed=2)
    assert i.is_connected() and set(i.weights.tolist()) <= {0.0, 1.0, 2.0, 3.0}
    u = mst_graph("complete", 6, "uniform", 10.0, graph_seed=1)
    assert u.weights.min() >= 0 and u.weights.max() < 10 and np.unique(u.weights).size == 15


# ---------------------------------------------------------------- hypotheses and malformed parameters


def test_hypotheses_name_the_problem() -> None:
    for th in (LaplaceAccuracy(gamma=0.0), LaplaceMSTError(gamma=1.5), PAMSTError(gamma=-0.1),
               PAMSTPerStepError(gamma=2.0)):
        problems = th.hypotheses()
        assert len(problems) == 1 and "gamma" in problems[0] and "(0, 1]" in problems[0]
    assert LaplaceAccuracy(gamma=1.0).hypotheses() == []
    assert "x >= 0" in LaplaceSumCDF(x=-0.5).hypotheses()[0]
    assert "t > 0" in LaplaceSumCDF(x=0.0, form="printed").hypotheses()[0]
    assert LaplaceSumCDF(x=0.0).hypotheses() == []


@pytest.mark.parametrize("make", [
    lambda: LaplaceAccuracy(k=0), lambda: LaplaceAccuracy(k=1.5), lambda: LaplaceAccuracy(epsilon=-1.0),
    lambda: LaplaceAccuracy(gamma="0.1"), lambda: LaplaceSumCDF(form="typo"), lambda: LaplaceSumCDF(x=math.inf),
    lambda: LaplaceMSTError(topology="tree"), lambda: LaplaceMSTError(n_nodes=1), lambda: LaplaceMSTError(spread=-1.0),
    lambda: PAMSTError(quantity="mean"), lambda: PAMSTError(calibration="l1"), lambda: PAMSTError(p=1.5),
    lambda: PrimRangeFacts(claim="lemma"), lambda: PrimRangeFacts(n_nodes=40), lambda: PrimRangeFacts(order="prim"),
    lambda: PrimRangeFactsExhaustive(n_nodes=6, levels=3), lambda: PrimRangeFactsExhaustive(orders="some"),
])
def test_malformed_parameters_raise(make) -> None:  # noqa: ANN001
    with pytest.raises(ValueError):
        make()


# ---------------------------------------------------------------- exact values against Monte Carlo


def test_laplace_exact_values_match_monte_carlo() -> None:
    rng = np.random.default_rng(11)
    n = 200_000
    for th in (LaplaceAccuracy(epsilon=0.5, k=3, gamma=0.3, sensitivity=2.0), LaplaceSumCDF(epsilon=1.3, x=0.8),
               LaplaceSumCDF(epsilon=1.0, x=-0.6)):
        assert six_sigma(float(th.sample(n, rng).mean()), th.exact(), n)  # 6 sigma: false alarm < 2e-9


def test_pamst_error_exact_by_hand_and_by_monte_carlo() -> None:
    # triangle, one edge at s, Δu = 1 (c = ε/(2·2·1) = 1/4): per step P(heavy | 2 candidates) = q
    th = PAMSTError(n_nodes=3, gamma=0.01, spread=16.0, calibration="unit")
    q = math.exp(-4.0) / (1 + math.exp(-4.0))
    by_hand = (2 * (q + (1 - q) * q) + q) / 3        # starts 0 and 2 see the heavy edge twice, start 1 once
    assert th.exact() == pytest.approx(by_hand, rel=1e-10)
    n = 100_000
    assert six_sigma(float(th.sample(n, np.random.default_rng(5)).mean()), by_hand, n)  # false alarm < 2e-9
    assert PAMSTError(n_nodes=3, gamma=0.5, spread=4.0).exact() == 0.0    # 4 < B = 5.55: no tree exceeds
    assert PAMSTError(n_nodes=8).exact() is None and PAMSTError(n_nodes=3, quantity="quantile").exact() is None


# ---------------------------------------------------------------- the instrumented sampler


@pytest.mark.parametrize("graph", [K4, C5], ids=["K4", "C5"])
def test_prim_like_runs_has_the_pamst_law(graph: WeightedGraph) -> None:
    c = PAMST(1.0, sensitivity=1.0 / graph.n_edges).coefficient(graph)
    rng = np.random.default_rng(3)
    runs = prim_like_runs(graph.edges, graph.n_nodes, graph.weights, c, rng.integers(graph.n_nodes, size=30_000), rng)
    assert chi_square_pvalue(tree_codes(runs.order), pamst_pmf(graph, c)) > ALPHA  # false alarm 1e-4


def test_prim_like_runs_uniform_order_at_c_zero() -> None:
    rng = np.random.default_rng(4)
    runs = prim_like_runs(K4.edges, 4, K4.weights, 0.0, np.zeros(30_000, dtype=np.int64), rng)
    # from vertex 0 the first cut is edges 0, 1, 2 (pairs 01, 02, 03), each with probability 1/3
    counts = np.bincount(runs.order[:, 0], minlength=6)
    assert counts[3:].sum() == 0
    assert stats.chisquare(counts[:3]).pvalue > ALPHA  # false alarm 1e-4


def test_prim_like_runs_ranges_against_a_loop() -> None:
    rng = np.random.default_rng(8)
    n, v = 300, 6
    present = rng.random((n, 15)) < 0.6
    present[:, [0, 5, 9, 12, 14]] = True                    # pairs 01, 12, 23, 34, 45: a path keeps it connected
    w = rng.integers(0, 3, size=(n, 15)).astype(float)
    c = rng.uniform(0.0, 3.0, size=n)
    starts = rng.integers(v, size=n)
    edges = np.column_stack(np.triu_indices(v, 1))
    runs = prim_like_runs(edges, v, w, c, starts, rng, present=present)
    for r in range(n):
        in_s = np.zeros(v, dtype=bool)
        in_s[starts[r]] = True
        for i, e in enumerate(runs.order[r]):
            cut = present[r] & (in_s[edges[:, 0]] != in_s[edges[:, 1]])
            assert cut[e]
            assert runs.range_size[r, i] == cut.sum() and runs.range_min[r, i] == w[r][cut].min()
            in_s[edges[e]] = True
        assert in_s.all()


def test_laplace_mst_errors_against_one_shot_runs() -> None:
    th = LaplaceMSTError(n_nodes=5, weights="uniform", spread=3.0, epsilon=0.7)
    g = th.graph
    err = th.errors(50, np.random.default_rng(9))
    noisy = g.weights + np.random.default_rng(9).laplace(0.0, 1 / 0.7, size=(50, g.n_edges))
    ref = [g.weights[mst_edges(g, row)].sum() - g.weights[mst_edges(g)].sum() for row in noisy]
    np.testing.assert_allclose(err, ref, atol=1e-12)


def test_per_step_event_against_the_formula() -> None:
    th = PAMSTPerStepError(n_nodes=4, spread=8.0, gamma=0.9, calibration="unit")
    g = th.graph
    runs = th.runs(2000, np.random.default_rng(12))
    event = th.sample(2000, np.random.default_rng(12))
    for r in range(2000):
        excess = g.weights[runs.order[r]].sum() - runs.range_min[r].sum()
        rhs = 2 * 3 / (6 * 1.0) * (3 * math.log(3 / 0.9) + np.log(runs.range_size[r]).sum())
        assert event[r] == (excess >= rhs)
    assert event.any() and not event.all()      # the inputs exercise both outcomes


# ---------------------------------------------------------------- deterministic checks


def test_exhaustive_instance_counts() -> None:
    # sum over connected labelled graphs of levels^|E|: on 4 vertices 16, 15, 6, 1 graphs with 3..6 edges, on 5
    # vertices 125, 222, 205, 120, 45, 10, 1 with 4..10 edges (OEIS A062734)
    ok, failures = PrimRangeFactsExhaustive(n_nodes=4, levels=3).sample(1, np.random.default_rng(0))
    assert ok.size == 16 * 27 + 15 * 81 + 6 * 243 + 729 and ok.all() and failures == []
    ok, _ = PrimRangeFactsExhaustive(claim="range_size", n_nodes=5, levels=1, orders="all").sample(1, None)
    assert ok.size == 125 + 222 + 205 + 120 + 45 + 10 + 1 and ok.all()


def test_violations_detects_each_broken_claim() -> None:
    steps_min = np.array([[1.0, 2.0], [0.0, 0.0]])
    sizes = np.array([[2, 2], [2, 3]])                                     # n = 3: i(n-i) = 2, 2
    cut_t = np.array([[1, 2], [1, 0]])                                     # run 1: R_2 misses T*
    incident = np.array([[1, 2], [1, 1]])                                  # run 1: I_2 holds 1 < 2 edges of T*
    ok, lhs, rhs = pm._violations("prop_3_4_1", 3, steps_min, sizes, cut_t, incident, np.array([3.0, 0.0]))
    assert ok.tolist() == [True, True] and lhs.tolist() == [3.0, 0.0]
    ok, _, _ = pm._violations("prop_3_4_1", 3, steps_min, sizes, cut_t, incident, np.array([2.5, 0.0]))
    assert ok.tolist() == [False, True]
    ok, lhs, rhs = pm._violations("lemma_3_4_1", 3, steps_min, sizes, cut_t, incident, np.zeros(2))
    assert ok.tolist() == [True, False] and (lhs[1], rhs[1]) in ((1, 0), (2, 1))
    ok, lhs, rhs = pm._violations("range_size", 3, steps_min, sizes, cut_t, incident, np.zeros(2))
    assert ok.tolist() == [True, False] and (lhs[1], rhs[1]) == (3, 2)


def test_checks_catch_a_wrong_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """With edge 0 repeated in place of the MST, Lemma 3.4.1 and Prop 3.4.1 must fail (the checker can fail)."""
    monkeypatch.setattr(pm, "batched_mst", lambda graph, w: np.zeros((w.shape[0], graph.n_nodes - 1), dtype=np.int64))
    ok, failures = PrimRangeFactsExhaustive(claim="lemma_3_4_1", n_nodes=3, levels=2).sample(1, None)
    assert not ok.all() and failures[0]["size"] == 3 and failures[0]["lhs"] > failures[0]["rhs"]
    ok, failures = PrimRangeFacts(n_nodes=5, p=0.5).sample(300, np.random.default_rng(1))     # prop_3_4_1
    assert (~ok).sum() == len(failures) > 0


def test_random_instances_are_connected() -> None:
    th = PrimRangeFacts(n_nodes=7, p=0.0)
    present, _ = th.instances(200, np.random.default_rng(2))
    edges = np.column_stack(np.triu_indices(7, 1))
    assert (present.sum(axis=1) == 6).all()                               # p = 0: exactly the random tree
    assert all(WeightedGraph(7, edges[row], np.zeros(6)).is_connected() for row in present)


# ---------------------------------------------------------------- verdicts through dpverify.check_theorem


def test_verdicts_through_check_theorem() -> None:
    smallest = check_theorem(PAMSTError(n_nodes=3, gamma=0.01, spread=16.0, calibration="unit"), runs=5000,
                             seed=1, workers=1)
    assert smallest.verdict == "violated" and smallest.exact_in_interval and smallest.size == 3
    proof = check_theorem(PAMSTError(n_nodes=3, gamma=0.9, spread=4.0), runs=4000, seed=1, workers=1)
    assert proof.verdict == "holds" and proof.exact_in_interval
    printed = check_theorem(LaplaceSumCDF(x=0.25, form="printed"), runs=2000, seed=1, workers=1)
    appendix = check_theorem(LaplaceSumCDF(x=0.25), runs=2000, seed=1, workers=1)
    assert printed.verdict == "violated" and appendix.verdict == "holds"
