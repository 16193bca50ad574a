"""algorithms.theorems.classic_dp: Pinot et al. Prop 3.1, Pinot's report Prop 1.5.2 and Props 1.4.1-1.4.3.

Fixed seeds; theorem verdicts at alpha = 0.05; exact laws compared with closed forms to 1e-12."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpverify
from algorithms.theorems.classic_dp import (
    AdaptiveComposition,
    ExponentialMechanismAccuracyReport,
    HomogeneityImplication,
    LeakyRandomizedResponse,
    PostProcessed,
    SimpleComposition,
    homogeneous_by_definition,
    spanning_trees,
)


def _max_log_ratio(p: np.ndarray, q: np.ndarray) -> float:
    both = (p > 0) & (q > 0)
    if np.any((p > 0) != (q > 0)):
        return math.inf
    return float(np.max(np.abs(np.log(p[both]) - np.log(q[both]))))


def test_spanning_trees_of_k4_are_kirchhoffs_16() -> None:
    edges = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    assert len(spanning_trees(4, edges)) == 16
    assert len(spanning_trees(3, np.array([(0, 1), (1, 2)]))) == 1


def test_homogeneity_by_hand_on_a_triangle_plus_pendant() -> None:
    # cluster 0 = {0, 1, 2} (a triangle with weights 1, 1, 2), cluster 1 = {3} hung on node 2
    edges = np.array([(0, 1), (1, 2), (0, 2), (2, 3)])
    labels = np.array([0, 0, 0, 1])
    # strong needs the inter edge above max² / min = 4 over G[C_0]; the MSTs use the two unit edges only
    assert homogeneous_by_definition(4, edges, [1, 1, 2, 5], labels, 0) == (True, True)
    assert homogeneous_by_definition(4, edges, [1, 1, 2, 3], labels, 0) == (False, True)   # weak but not strong
    assert homogeneous_by_definition(4, edges, [1, 1, 2, 1], labels, 0) == (False, False)


def test_proposition_31_holds_and_its_premise_occurs() -> None:
    th = HomogeneityImplication(n_nodes=5, n_clusters=2, weights="planted")
    assert th.premise_rate(50, seed=1) > 0.5
    result = dpverify.check_theorem(th, runs=100, seed=1, workers=1)
    assert result.verdict == "holds" and result.failure_count == 0


@pytest.mark.parametrize(("kw", "match"), [
    ({"n_nodes": 8}, "at most 7"), ({"n_clusters": 6}, "at most n_nodes"), ({"density": 1.5}, "density"),
    ({"weights": "planted", "max_weight": 2}, "max_weight >= 3"), ({"weights": "other"}, "weights"),
])
def test_homogeneity_parameters_are_checked(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        HomogeneityImplication(**kw)


def test_em_accuracy_exact_matches_the_sampler_and_the_bound() -> None:
    th = ExponentialMechanismAccuracyReport(t=1.0, n_candidates=100)
    r = (np.exp(-1.0) * 99 / 100)
    assert th.exact() == pytest.approx(r / (1 + r), rel=1e-9)      # the closed form of the hardest vector
    result = dpverify.check_theorem(th, runs=20_000, seed=0, workers=1)
    assert result.verdict == "holds" and result.exact_in_interval


def test_em_accuracy_on_pamst_steps_and_its_union_bound() -> None:
    each = ExponentialMechanismAccuracyReport(mechanism="pamst", n_candidates=5, epsilon=4.0, step=3, t=0.5)
    assert each.bound() == pytest.approx(math.exp(-0.5))
    anyone = ExponentialMechanismAccuracyReport(mechanism="pamst", n_candidates=5, epsilon=4.0, step=-1, t=0.5)
    assert anyone.bound() == 1.0                                         # 4 e^-0.5 > 1: capped
    ev = anyone.sample(2000, np.random.default_rng(0))
    assert ev.dtype == bool and ev.shape == (2000,)
    assert dpverify.check_theorem(each, runs=4000, seed=0, workers=1).verdict == "holds"
    with pytest.raises(ValueError, match="step"):
        ExponentialMechanismAccuracyReport(mechanism="pamst", n_candidates=5, step=4)
    with pytest.raises(ValueError, match="at most 12"):
        ExponentialMechanismAccuracyReport(mechanism="pamst", n_candidates=13)


def test_leaky_randomized_response_is_exactly_epsilon_delta() -> None:
    m = LeakyRandomizedResponse(1.0, 0.1, 3)
    p, q = m.pmf(0), m.pmf(1)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert _max_log_ratio(p[:3], q[:3]) == pytest.approx(1.0, abs=1e-12)
    assert p[3] == pytest.approx(0.1) and q[3] == 0.0
    counts = np.bincount(m(0, 20_000, np.random.default_rng(0)), minlength=6) / 20_000
    assert np.max(np.abs(counts - p)) < 0.02


def test_simple_composition_spends_the_sum_exactly() -> None:
    m = SimpleComposition(epsilons=[0.5, 0.25, 0.25], k=2)
    assert m.composed_budget() == (1.0, 0.0)
    assert m.pmf(0).sum() == pytest.approx(1.0, abs=1e-12)
    assert _max_log_ratio(m.pmf(0), m.pmf(1)) == pytest.approx(1.0, abs=1e-12)


def test_adaptive_composition_stays_within_its_budget() -> None:
    m = AdaptiveComposition(epsilon=0.5, second_epsilons=[0.25, 0.5], k=2)
    assert m.composed_budget() == (1.0, 0.0)
    assert m.pmf(1).sum() == pytest.approx(1.0, abs=1e-12)
    assert _max_log_ratio(m.pmf(0), m.pmf(1)) <= 1.0 + 1e-12


def test_post_processing_never_increases_epsilon() -> None:
    for mapping in PostProcessed.MAPPINGS:
        m = PostProcessed(epsilon=1.0, k=4, mapping=mapping)
        assert m.pmf(2).sum() == pytest.approx(1.0, abs=1e-12)
        assert _max_log_ratio(m.pmf(0), m.pmf(1)) <= 1.0 + 1e-12, mapping
    assert _max_log_ratio(PostProcessed(mapping="constant").pmf(0), PostProcessed(mapping="constant").pmf(3)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(("cls", "kw", "match"), [
    (SimpleComposition, {"epsilons": []}, "non-empty"), (SimpleComposition, {"deltas": [0.1]}, "one entry per part"),
    (SimpleComposition, {"epsilons": [0.5, -1.0]}, "epsilons\\[1\\]"), (AdaptiveComposition, {"delta": 1.0}, "delta"),
    (PostProcessed, {"mapping": "square"}, "mapping"), (LeakyRandomizedResponse, {"epsilon": 1.0, "k": 1}, "k must"),
])
def test_composition_parameters_are_checked(cls: type, kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        cls(**kw)


def test_bad_category_is_refused() -> None:
    with pytest.raises(ValueError, match="one category"):
        SimpleComposition().pmf(5)
