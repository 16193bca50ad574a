"""frozen_noise_replay: deterministic detection of sensitivity bugs in mechanisms that declare their noisy steps.

No statistics: a replay compares the values a mechanism protects on two inputs with the sensitivities it declares,
so each verdict below is exact and reproducible (fixed seeds only choose which noise the adaptive mechanisms see).
"""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.broken.data_dependent_scale import MeanDataDependentScale
from algorithms.broken.geometric_ignores_sensitivity import GeometricIgnoresSensitivity
from algorithms.broken.missing_clipping import SumMissingClipping
from algorithms.classic.clipped_sum import ClippedSum
from algorithms.classic.exponential import ExponentialMechanism
from algorithms.classic.laplace import Laplace
from algorithms.classic.numerical_svt import NumericalSVT
from algorithms.classic.sparse_vector import SparseVector
from algorithms.classic.sparse_vector_dwork_roth import SparseVectorDworkRoth
from algorithms.broken.svt34_parallel import SVT34Parallel
from algorithms.graph.examples import topology
from algorithms.graph.pamst import PAMST
from algorithms.noise import NoiseSource
from dpverify.errors import InputError, MechanismError
from dpverify.neighbours import AddRemoveOne, LInfNeighbours
from dpverify.code_checks.replay import frozen_noise_replay


def test_laplace_within_and_beyond_its_declared_sensitivity() -> None:
    ok = frozen_noise_replay(Laplace(0.1, 1.0), [(np.array([0.0, 0.0]), np.array([0.5, -0.5]))])
    assert not ok.violation and ok.max_ratio == pytest.approx(1.0)
    bad = frozen_noise_replay(Laplace(0.1, 1.0), [(np.array([0.0, 0.0]), np.array([1.0, 1.0]))])
    assert bad.violation
    step = bad.witness.worst
    assert step is not None and step.step == "laplace" and step.change == pytest.approx(2.0)
    assert "exceeds the declared sensitivity" in bad.summary()


def test_replay_returns_the_recorded_outputs_on_x1() -> None:
    # forced coupling: the x1 run sees x0's noisy outputs, so a post-processing mechanism follows one path
    res = frozen_noise_replay(Laplace(1.0), [(0.0, 1.0)], samples=5, both_directions=False)
    assert len(res.pairs) == 1 and len(res.pairs[0].steps) == 1


@pytest.mark.parametrize("mech", [SparseVector(0.1, 0.5, cutoff=1), SparseVector(1.0, 0.0, cutoff=3),
                                  SparseVectorDworkRoth(0.1, 1.0, cutoff=2), NumericalSVT(0.1, 1.0, cutoff=2),
                                  SVT34Parallel(0.1, 1.0)], ids=["svt1", "svt-c3", "svt2", "numerical", "svt34"])
def test_svt_steps_draw_for_the_runs_still_answering(mech) -> None:
    """An SVT step draws only for the runs still answering; x1 sees x0's noisy outputs, hence the same runs at every
    step: an ℓ∞ neighbour replays without divergence within Δ = 1, a pair at distance 2 is flagged."""
    x0 = np.zeros(10)
    x1 = np.r_[np.ones(9), -1.0]
    res = frozen_noise_replay(mech, [(x0, x1)], samples=400, seed=3)
    assert not res.violation and all(p.diverged is None for p in res.pairs)
    assert frozen_noise_replay(mech, [(x0, x0 + 2.0)], samples=400, seed=3).violation


def test_missing_clipping_found_on_relation_patterns() -> None:
    pairs = AddRemoveOne(candidates=(0.0, 1.0, 10.0)).pairs(np.array([0.5, 0.2, 0.9]))
    good = frozen_noise_replay(ClippedSum(0.1, 0.0, 1.0), pairs)
    bad = frozen_noise_replay(SumMissingClipping(0.1, 0.0, 1.0), pairs)
    assert not good.violation
    assert bad.violation and bad.witness.worst is not None
    assert bad.witness.worst.change == pytest.approx(10.0)


def test_data_dependent_calibration_is_flagged() -> None:
    res = frozen_noise_replay(MeanDataDependentScale(0.1, 0.0, 1.0), [(np.array([0.5, 0.5]), np.array([0.5, 0.5, 0.5]))])
    assert res.violation
    assert "depends on the data" in (res.witness.worst.reason or "")


def test_geometric_twin_declares_sensitivity_one() -> None:
    res = frozen_noise_replay(GeometricIgnoresSensitivity(0.1, 2), [(0, 2)])
    assert res.violation and res.witness.worst.declared == 1.0


def test_selection_steps_compare_utilities_up_to_a_common_shift() -> None:
    em = ExponentialMechanism(1.0, 1.0)
    shifted = frozen_noise_replay(em, [(np.array([0.0, 1.0, 2.0]), np.array([5.0, 6.0, 7.0]))])
    assert not shifted.violation  # a common shift of 5 leaves the selection law unchanged
    assert shifted.witness.worst.raw_change == pytest.approx(5.0)
    spread = frozen_noise_replay(em, [(np.array([0.0, 1.0, 2.0]), np.array([1.5, 1.0, 0.5]))])
    assert spread.violation  # differences move by 3 -> half-range 1.5 > 1


def test_pamst_passes_on_corner_pairs_and_its_data_dependent_twin_fails() -> None:
    from algorithms.broken.pamst_data_dependent_sensitivity import PAMSTDataDependentSensitivity

    g = topology("complete", 4, weights=[0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    pairs = LInfNeighbours(1.0).pairs(g, random=4, seed=0)
    assert not frozen_noise_replay(PAMST(1.0, 1.0), pairs, seed=1).violation
    assert frozen_noise_replay(PAMSTDataDependentSensitivity(1.0, 1.0), pairs, seed=1).violation


def test_diverging_control_flow_is_a_violation() -> None:
    class Branchy:
        def release(self, x, n, noise):
            out = noise.add("a", float(x), lambda rng: rng.laplace(0, 1, n), sensitivity=1.0)
            if x > 0:  # the data decides whether a second step runs
                out = noise.add("b", 0.0, lambda rng: rng.laplace(0, 1, n), sensitivity=1.0)
            return out

    res = frozen_noise_replay(Branchy(), [(0.0, 1.0)])
    assert res.violation and "step" in (res.witness.diverged or "")


def test_same_seed_same_result_and_bad_input() -> None:
    pairs = [(np.array([0.0]), np.array([1.0]))]
    a = frozen_noise_replay(Laplace(0.5), pairs, seed=4).to_dict()
    b = frozen_noise_replay(Laplace(0.5), pairs, seed=4).to_dict()
    assert a == b
    with pytest.raises(InputError, match="explicit noise source"):
        frozen_noise_replay(lambda x, n, rng: rng.random(n), pairs)
    with pytest.raises(InputError, match="samples"):
        frozen_noise_replay(Laplace(0.5), pairs, samples=0)

    class Raises:
        def release(self, x, n, noise):
            raise RuntimeError("boom")

    with pytest.raises(MechanismError, match="boom"):
        frozen_noise_replay(Raises(), pairs)

    class BadDeclaration:
        def release(self, x, n, noise):
            return noise.add("a", x, lambda rng: rng.laplace(0, 1, n), sensitivity=-1.0)

    with pytest.raises(MechanismError, match="sensitivity must be > 0"):
        frozen_noise_replay(BadDeclaration(), pairs)
    assert isinstance(NoiseSource(np.random.default_rng(0)).add("a", 0.0, lambda r: 1.0, sensitivity=1.0), float)
