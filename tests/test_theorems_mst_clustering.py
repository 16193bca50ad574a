"""Seed 002 bound comparisons (Thm 3.5.1, 3.5.2, the abstract's α >= 2), order preservation under the graph
Laplace mechanism (Thm 4.2.1, Eq 4.3) and Claim 4.1.1: algorithms/theorems/mst_clustering.py.

Bounds against values computed independently (math.lgamma / factorials, direct products, numerical integration of
the App. A.3 density), the hand-computed numbers recomputed, exact() against Monte Carlo, samplers against one-shot
loops, Def 4.1.1 against a direct enumeration of partitions, hypotheses() messages, and check_theorem verdicts."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from algorithms.theorems import mst_clustering as mc
from algorithms.theorems.mst_clustering import (
    BlockOrderPreservation,
    BoundComparisonDensity,
    BoundComparisonLambert,
    ClusterPathClosure,
    FullOrderPreservation,
    alpha_star,
    b_exp,
    b_lap,
    exact_threshold,
    find_path_violation,
    first_failing_n,
    full_order_probability,
    pair_failure,
    threshold_table,
    two_block_probability,
    worst_gap,
)
from algorithms.graph.weighted_graph import WeightedGraph
from dpverify.theorems.check import check_sweep, check_theorem


# --------------------------------------------------------------------------------------------------
# §3.5: the bounds, the Lambert threshold, the exact threshold
# --------------------------------------------------------------------------------------------------

def test_bounds_by_hand() -> None:
    # n = |V|-1 = 3, |E| = 6, γ = 0.5, ε = 2: B_Lap = (6/2) ln 12, B_Exp = 6/(6·2) (3 ln 6 + 2 ln 3!)
    assert b_lap(3, 6, 0.5, 2.0) == pytest.approx(3 * math.log(12), rel=1e-14)
    assert b_exp(3, 6, 0.5, 2.0) == pytest.approx(0.5 * (3 * math.log(6) + 2 * math.log(math.factorial(3))), rel=1e-14)


def test_log_h_is_the_printed_product() -> None:
    n, g = 3, 0.5
    h = g ** (-n / g) * (2 * math.pi) ** (1 / g) * n ** ((3 * n + 1) / g) * math.exp(-2 * n / g + 1 / (6 * n * g))
    assert mc.log_h(n, g) == pytest.approx(math.log(h), rel=1e-13)


@pytest.mark.parametrize("n, gamma", [(2, 0.5), (10, 0.1), (1000, 0.05), (10**6, 0.01)])
def test_alpha_star_solves_x_ln_x_equals_ln_h(n: int, gamma: float) -> None:
    x = alpha_star(n, gamma) * n / gamma
    assert x * math.log(x) == pytest.approx(mc.log_h(n, gamma), rel=1e-12)


def test_digest_threshold_table_recomputed() -> None:
    # Theorem 3.5.1 threshold table (α* to 4 decimals, Lambert-W form), recomputed
    table = {(0.5, 10): 1.7048, (0.5, 100): 2.0842, (0.5, 1000): 2.3029, (0.5, 10**4): 2.4387, (0.5, 10**6): 2.5959,
             (0.1, 10): 1.5183, (0.1, 10**6): 2.4536, (0.05, 1000): 2.0460, (0.01, 10): 1.3741, (0.01, 10**6): 2.2886}
    for (g, n), want in table.items():
        assert round(float(alpha_star(n, g)), 4) == want


def test_exact_threshold_equalises_the_bounds_with_factorials() -> None:
    for n, g in [(2, 0.5), (7, 0.1), (30, 0.01)]:
        a = exact_threshold(n, g)
        # B_Exp = B_Lap there, with n! from math.factorial (independent of gammaln)
        lhs = (n * math.log(n / g) + 2 * math.log(math.factorial(n))) / (a * n)
        assert lhs == pytest.approx(math.log(a * n / g), rel=1e-12)


def test_tightness_alpha_star_is_exact_up_to_robbins() -> None:
    rows = {(r.n, r.gamma): r for r in threshold_table([2, 10, 100, 10**4], [0.5, 0.01])}
    # α* is sufficient (above the exact threshold) and the gap is Robbins' slack, shrinking like n^-3-ish
    assert 9e-5 < rows[2, 0.5].relative_gap < 1.1e-4
    assert 5e-8 < rows[10, 0.5].relative_gap < 8e-8
    assert 2e-12 < rows[100, 0.5].relative_gap < 5e-12
    assert abs(rows[10**4, 0.01].relative_gap) < 1e-14


def test_alpha_star_holds_at_itself_in_high_precision() -> None:
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(60):
        for n, g in [(2, "0.5"), (10, "0.1"), (1000, "0.05"), (10**6, "0.01")]:
            g = mpmath.mpf(g)
            lh = (-n * mpmath.log(g) + mpmath.log(2 * mpmath.pi) + (3 * n + 1) * mpmath.log(n) - 2 * n
                  + mpmath.mpf(1) / (6 * n)) / g
            a = g / n * mpmath.exp(mpmath.lambertw(lh))
            margin = mpmath.log(a * n / g) - (n * mpmath.log(n / g) + 2 * mpmath.loggamma(n + 1)) / (a * n)
            assert margin > 0                       # Thm 3.5.1 at α = α* exactly: B_Exp < B_Lap
            assert abs(a - alpha_star(n, float(g))) / a < 1e-13


def test_first_failing_n_alpha_2_digest_values() -> None:
    # Thm 3.5.2 vs the abstract's α = 2 (docs/findings.md F22): α = 2 first fails at n = 53, 288, 583, 2946, 29545
    for g, n0 in [(0.5, 53), (0.1, 288), (0.05, 583), (0.01, 2946), (0.001, 29545)]:
        assert first_failing_n(2.0, g, 40_000) == n0

        def comp(n: int) -> float:  # B_Lap - B_Exp over 2n/ε, n! by math.lgamma
            return math.log(2 * n / g) - (n * math.log(n / g) + 2 * math.lgamma(n + 1)) / (2 * n)
        assert comp(n0 - 1) > 0 > comp(n0)
    assert first_failing_n(3.0, 0.001, 1_000_000) is None


def test_lambert_grid_holds_and_detects_a_threshold_just_below_exact() -> None:
    ok, failures = BoundComparisonLambert().sample(1, np.random.default_rng(0))
    assert ok.size == 3 * 59 * 4 and ok.all() and failures == []

    class Below(BoundComparisonLambert):  # a threshold 1e-6 below the exact one must fail somewhere
        def threshold(self, n, gamma):  # noqa: ANN001, ANN202
            return np.vectorize(exact_threshold)(n, gamma) * (1 - 1e-6)

    ok, failures = Below(n_max=1000, n_points=10).sample(1, np.random.default_rng(0))
    assert (~ok).sum() == len(failures) > 0
    assert all({"size", "gamma", "alpha", "B_exp", "B_lap"} <= set(f) for f in failures)
    assert all(f["B_exp"] > f["B_lap"] for f in failures)


def test_proof_form_overflows_then_refuses() -> None:
    problems = BoundComparisonLambert(form="proof").hypotheses()
    assert len(problems) == 1 and "overflows float64" in problems[0] and "e^{W(ln h)}" in problems[0]
    assert mc._proof_form_reach(0.5) == 36  # ln h_{36,0.5} <= 709.78 < ln h_{37,0.5}
    assert BoundComparisonLambert(form="proof", gammas=[0.5], n_max=37, n_points=2).hypotheses()
    th = BoundComparisonLambert(form="proof", gammas=[0.5], n_max=36, n_points=40)
    assert th.hypotheses() == []
    n = np.arange(2, 37)
    assert np.all(mc.alpha_star_proof(n, 0.5) > (n + 1) / 2)  # vacuous: denser than the complete graph
    assert np.all(mc.alpha_star_proof(n, 0.5) > alpha_star(n, 0.5))
    ok, _ = th.sample(1, np.random.default_rng(0))
    assert ok.all()


def test_gamma_outside_range_is_a_hypothesis_problem() -> None:
    assert "outside (0, 1]" in BoundComparisonDensity(gammas=[0.5, 1.5]).hypotheses()[0]
    with pytest.raises(ValueError, match="form"):
        BoundComparisonDensity(form="alpha2")


def test_density_forms() -> None:
    ok, failures = BoundComparisonDensity(form="theorem").sample(1, np.random.default_rng(0))
    assert ok.all() and not failures
    ok, failures = BoundComparisonDensity(form="abstract", gammas=[0.5, 0.05], n_max=10**4).sample(
        1, np.random.default_rng(0))
    smallest = {g: min(f["size"] for f in failures if f["gamma"] == g) for g in (0.5, 0.05)}
    assert smallest == {0.5: 53, 0.05: 583}


# --------------------------------------------------------------------------------------------------
# §4.2: Thm 4.2.1 and Eq 4.3
# --------------------------------------------------------------------------------------------------

def test_pair_failure_integrates_the_appendix_density() -> None:
    # App. A.3 (i): density of Y1 + Y2 (ε = 1) is (1/4)(1 + |u|) e^{-|u|}; its tail beyond s
    for s in [0.0, 1.0, 5.6]:
        tail, _ = integrate.quad(lambda u: 0.25 * (1 + abs(u)) * math.exp(-abs(u)), s, np.inf)
        assert float(pair_failure(s)) == pytest.approx(tail, rel=1e-10)


def test_block_bounds_by_hand() -> None:
    q = math.exp(-5.0) * (0.5 + 5.0 / 4)
    assert BlockOrderPreservation(epsilon=2.0, t=2.5, sizes=[2, 3]).bound() == pytest.approx(1 - 4 * q)
    assert BlockOrderPreservation(epsilon=2.0, t=2.5, sizes=[2, 3], form="pairwise").bound() == pytest.approx(1 - 6 * q)
    assert BlockOrderPreservation(epsilon=2.0, t=2.5, sizes=[2, 3, 4], form="half_gap").bound() == pytest.approx(
        1 - (5 + 7) * 0.5 * math.exp(-2.5))
    # the report's worked example: 1000 edges, ε = 1, gap 10: 1 - e^{-10}(1/2 + 10/4)(999) = 0.8639
    assert 1 - math.exp(-10) * 3 * 999 == pytest.approx(0.8639, abs=1e-4)


def test_two_block_probability_closed_form_and_digest_table() -> None:
    for s in [0.5, 3.0, 9.0]:  # one edge per block: exactly F_{Y1+Y2}(t), so the printed bound is attained
        assert two_block_probability(1, 1, s) == pytest.approx(1 - float(pair_failure(s)), abs=1e-10)
    # Thm 4.2.1 counterexample table (docs/findings.md F18) (exact numerical integration), recomputed
    for a, s, want in [(1000, 10.0, 0.00402), (100, 10.0, 0.74649), (10, 8.0, 0.96016)]:
        assert two_block_probability(a, a, s) == pytest.approx(want, abs=6e-6)
    assert two_block_probability(2, 2, 3.0) == pytest.approx(0.83187, abs=6e-6)


def test_two_block_exact_against_monte_carlo() -> None:
    th = BlockOrderPreservation(epsilon=0.5, t=6.0, sizes=[3, 2])
    x = th.sample(200_000, np.random.default_rng(11))
    se = math.sqrt(th.exact() * (1 - th.exact()) / x.size)
    assert abs(x.mean() - th.exact()) < 5 * se  # a 5-sigma band: false alarm < 1e-6


def test_block_sampler_matches_a_one_shot_loop() -> None:
    th = BlockOrderPreservation(epsilon=0.7, t=1.5, sizes=[2, 3, 2])
    got = th.sample(300, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    w = np.array([0, 0, 1.5, 1.5, 1.5, 3.0, 3.0])
    blocks = [[0, 1], [2, 3, 4], [5, 6]]
    want = []
    for _ in range(300):
        y = w + rng.laplace(0.0, 1 / 0.7, size=7)
        want.append(all(y[e] < y[f] for i in range(2) for e in blocks[i] for f in blocks[i + 1]))
    assert np.array_equal(got, np.array(want))


def test_smallest_counterexample_of_thm421() -> None:
    s = worst_gap(2, 2)
    assert 5.5 < s < 5.8
    th = BlockOrderPreservation(sizes=[2, 2])  # t=None: the worst gap
    assert th.gap == pytest.approx(s)
    assert th.bound() - th.exact() == pytest.approx(8.80e-4, abs=1e-5)
    # with a block of size 1 the printed factor equals the pairwise one: no counterexample with |E1|+|E2| <= 3
    for a, b in [(1, 1), (1, 2), (2, 1)]:
        for s in [1.0, 3.0, 6.0, 10.0]:
            assert two_block_probability(a, b, s) >= BlockOrderPreservation(t=s, sizes=[a, b]).bound() - 1e-9


def test_full_order_exact() -> None:
    for s in [0.5, 2.0]:
        assert full_order_probability(2, s) == pytest.approx(1 - float(pair_failure(s)), abs=2e-6)
    th = FullOrderPreservation(epsilon=1.0, gap=1.0, n_edges=5)
    x = th.sample(200_000, np.random.default_rng(3))
    se = math.sqrt(th.exact() * (1 - th.exact()) / x.size)
    assert abs(x.mean() - th.exact()) < 5 * se  # 5-sigma band: false alarm < 1e-6
    assert th.exact() >= th.bound()


def test_full_order_sampler_matches_a_loop_and_printed_form_is_vacuous() -> None:
    th = FullOrderPreservation(epsilon=2.0, gap=0.4, n_edges=4)
    got = th.sample(200, np.random.default_rng(8))
    rng = np.random.default_rng(8)
    want = [bool(np.all(np.diff(0.4 * np.arange(4) + rng.laplace(0, 0.5, size=4)) > 0)) for _ in range(200)]
    assert np.array_equal(got, np.array(want))
    assert FullOrderPreservation(gap=3.0, n_edges=3, form="printed").bound() < 0
    assert FullOrderPreservation(gap=3.0, n_edges=10).bound() == pytest.approx(1 - 9 * float(pair_failure(3.0)))


def test_order_hypotheses_and_malformed_parameters() -> None:
    assert "K > 1" in BlockOrderPreservation(t=1.0, sizes=[4]).hypotheses()[0]
    assert "t > 0" in BlockOrderPreservation(t=0.0, sizes=[2, 2]).hypotheses()[0]
    assert "gap > 0" in FullOrderPreservation(gap=-1.0).hypotheses()[0]
    with pytest.raises(ValueError, match="sizes"):
        BlockOrderPreservation(t=1.0, sizes=[2, 0])
    with pytest.raises(ValueError, match="t=None"):
        BlockOrderPreservation(sizes=[2, 2], form="pairwise")
    with pytest.raises(ValueError, match="epsilon"):
        FullOrderPreservation(epsilon=0.0)


# --------------------------------------------------------------------------------------------------
# §4.1: Claim 4.1.1
# --------------------------------------------------------------------------------------------------

def _clusters_reference(d: np.ndarray, ties: str) -> set[frozenset[int]]:
    """Def 4.1.1 by enumeration of every split C = C1 ⊎ C2 (both non-empty)."""
    k = d.shape[0]
    out = set()
    for r in range(1, k + 1):
        for c in itertools.combinations(range(k), r):
            good = True
            for r1 in range(1, len(c)):
                for c1 in itertools.combinations(c, r1):
                    rest = [v for v in range(k) if v not in c1]
                    dist = {v: min(d[v, u] for u in c1) for v in rest}
                    best = min(dist.values())
                    nearest = {v for v in rest if dist[v] == best}
                    c2 = set(c) - set(c1)
                    good &= nearest <= c2 if ties == "all" else bool(nearest & c2)
            if good:
                out.add(frozenset(c))
    return out


@pytest.mark.parametrize("ties", ["all", "some"])
def test_cluster_enumeration_matches_definition(ties: str) -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        k = int(rng.integers(2, 6))
        d = rng.integers(1, 4, size=(k, k)).astype(float)
        d = np.minimum(d, d.T)
        np.fill_diagonal(d, 0.0)
        got = mc._clusters(d, ties)
        mine = {frozenset(int(i) for i in range(k) if (c >> i) & 1) for c in np.flatnonzero(got)}
        assert mine == _clusters_reference(d, ties)


def test_claim411_hand_counterexample_and_readings() -> None:
    # D = {a=0, b=1, c=2}: a-b, b-c at 10, a-c at 100; node x=3 outside D gives a-x-c = 2
    g = WeightedGraph.from_arrays(4, [[0, 1], [1, 2], [0, 2], [0, 3], [2, 3]], [10.0, 10.0, 100.0, 1.0, 1.0])
    found = find_path_violation(g, metric="graph", tree="induced")
    assert found == {"dataset": [0, 1, 2], "cluster": [0, 2], "tree": [[0, 1], [1, 2]]}
    assert find_path_violation(g, metric="graph", tree="closure") is None
    assert find_path_violation(g, metric="dataset", tree="induced") is None
    assert find_path_violation(g, datasets="full") is None


def test_claim411_ties() -> None:
    tri = WeightedGraph.from_arrays(3, [[0, 1], [0, 2], [1, 2]], [1.0, 1.0, 1.0])
    assert find_path_violation(tri, ties="all", datasets="full") is None
    found = find_path_violation(tri, ties="some", datasets="full")
    assert found is not None and len(found["cluster"]) == 2


def test_claim411_random_graphs_and_protocol() -> None:
    ok, failures = ClusterPathClosure(n_nodes=4).sample(60, np.random.default_rng(0))
    assert (~ok).sum() == len(failures) > 0 and all(f["size"] == 4 for f in failures)
    ok, failures = ClusterPathClosure(n_nodes=5, tree="closure", weights="integer").sample(20, np.random.default_rng(0))
    assert ok.all() and not failures
    ok, _ = ClusterPathClosure(n_nodes=3).sample(40, np.random.default_rng(0))
    assert ok.all()  # 3 nodes: a D that misses a node has 2 points, and D = V is the consistent case
    with pytest.raises(ValueError, match="n_nodes"):
        ClusterPathClosure(n_nodes=9)


# --------------------------------------------------------------------------------------------------
# verdicts through dpverify
# --------------------------------------------------------------------------------------------------

def test_check_theorem_verdicts() -> None:
    r = check_theorem(BoundComparisonDensity(form="abstract"), runs=1, seed=0, workers=1)
    assert r.verdict == "violated" and r.counterexample["size"] == 53
    r = check_theorem(BoundComparisonLambert(), runs=1, seed=0, workers=1)
    assert r.verdict == "holds"
    r = check_theorem(BlockOrderPreservation(t=10.0, sizes=[1000, 1000]), runs=1000, seed=0, workers=1)
    assert r.verdict == "violated" and r.exact_in_interval
    r = check_theorem(BlockOrderPreservation(sizes=[2, 2]), runs=500_000, seed=0, workers=1)
    assert r.verdict == "violated" and r.exact_in_interval
    r = check_theorem(FullOrderPreservation(gap=2.0, n_edges=3), runs=300_000, seed=0, workers=1)
    assert r.verdict == "holds" and r.exact_in_interval
    s = check_sweep(ClusterPathClosure, {}, "n_nodes", [3, 4], runs=60, seed=0, workers=1)
    assert s.verdict == "violated" and s.counterexample["size"] == 4
    with pytest.raises(Exception, match="overflows float64"):
        check_theorem(BoundComparisonLambert(form="proof"), runs=1, seed=0, workers=1)
