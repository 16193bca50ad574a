"""Noisy gradient descent releasing every iterate (algorithms/hard/iterates.py): its law and its true ε.

Deterministic: fixed seeds.  The density check is a Monte-Carlo mean within 4 standard errors (error level about
6e-5); the true ε is checked against a dynamic program over a grid of trajectories, which gives the supremum of the
loss over feasible trajectories on the grid (a lower bound on the true supremum; the method's value an upper one)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.hard.iterates import NoisyGradientDescent


def _grid_supremum(m: NoisyGradientDescent, x0: np.ndarray, x1: np.ndarray, points: int = 1501) -> float:
    """max over both directions of the loss summed over trajectories ``θ_1 .. θ_{T-1}`` on a grid, the last step's
    noise chosen freely (its loss is then ``|Δ(θ_{T−1})| / b``)."""
    lo = min(x0.min(), x1.min(), 0.0) - 2 * m.clip - 1
    hi = max(x0.max(), x1.max(), 0.0) + 2 * m.clip + 1
    grid = np.linspace(lo, hi, points)
    b, eta = m.scale(len(x0)), m.rate
    best = 0.0
    for u, v in ((x0, x1), (x1, x0)):
        gu, gv = m._gradient(grid, u), m._gradient(grid, v)

        def step(p: np.ndarray, g_u: np.ndarray, g_v: np.ndarray) -> np.ndarray:
            # ln f_u − ln f_v of the step from each p to each grid point q: (|e_v| − |e_u|) / (η b)
            eu = grid[None, :] - p[:, None] + eta * g_u[:, None]
            ev = grid[None, :] - p[:, None] + eta * g_v[:, None]
            return (np.abs(ev) - np.abs(eu)) / (eta * b)

        zero = np.zeros(1)
        if m.steps == 1:
            best = max(best, float(abs(m._gradient(zero, u) - m._gradient(zero, v))[0]) / b)
            continue
        value = step(zero, m._gradient(zero, u), m._gradient(zero, v))[0]
        for _ in range(2, m.steps):
            value = (value[:, None] + step(grid, gu, gv)).max(axis=0)
        best = max(best, float((value + np.abs(gu - gv) / b).max()))
    return best


def test_true_epsilon_is_the_supremum_of_the_loss() -> None:
    rng = np.random.default_rng(0)
    for _ in range(8):
        m = NoisyGradientDescent(1.0, steps=int(rng.choice([1, 2, 4, 6])), rate=float(rng.uniform(0.2, 1.0)),
                                 clip=float(rng.uniform(0.3, 2.0)))
        x0 = rng.uniform(-3, 3, int(rng.integers(1, 7)))
        x1 = x0.copy()
        x1[0] += float(rng.uniform(-3, 3))
        bound = m.epsilon_on(x0, x1)
        assert _grid_supremum(m, x0, x1) == pytest.approx(bound, rel=1e-6)
        assert bound <= m.epsilon * (1 + 1e-12)                # correctly calibrated: within the claim


def test_composition_forgotten_multiplies_the_true_epsilon() -> None:
    x0, x1 = np.array([-0.6, -0.2, 0.1, 0.5, 0.9]), np.array([-0.6, -0.2, 0.1, 0.5, -1.5])
    right, half = NoisyGradientDescent(1.5, 8), NoisyGradientDescent(1.5, 8, calibrated_steps=4)
    assert half.scale(5) == pytest.approx(right.scale(5) / 2)
    assert half.epsilon_on(x0, x1) == pytest.approx(2 * right.epsilon_on(x0, x1))
    # b = 2·8/(5·1.5); the moved record saturates at every θ in [-0.5, -0.1] (|Δ| = 2C/n there) but not at θ_0 = 0
    assert right.epsilon_on(x0, x1) == pytest.approx((1.9 / 5 + 7 * 2 / 5) / (16 / 7.5))


def test_log_density_is_a_density() -> None:
    """``E_x0[f_x1 / f_x0] = 1`` within 4 standard errors."""
    m = NoisyGradientDescent(2.0, steps=4, rate=0.7, clip=0.8)
    x0, x1 = np.array([0.3, -0.4, 1.0]), np.array([0.3, -0.4, -0.5])
    o = m(x0, 200_000, np.random.default_rng(3))
    w = np.exp(m.log_density(x1, o) - m.log_density(x0, o))
    assert abs(w.mean() - 1.0) < 4 * w.std() / math.sqrt(len(w))


def test_iterates_follow_the_clipped_update() -> None:
    m = NoisyGradientDescent(1e9, steps=3, rate=0.5, clip=1.0)      # noise scale about 1e-9
    out = m(np.array([4.0, 4.0]), 2, np.random.default_rng(0))
    assert np.allclose(out, [[0.5, 1.0, 1.5]] * 2, atol=1e-6)        # clipped at 1: steps of 0.5 towards 4


def test_bad_parameters_and_inputs_are_named() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        NoisyGradientDescent(0.0)
    with pytest.raises(ValueError, match="steps"):
        NoisyGradientDescent(1.0, steps=0)
    with pytest.raises(ValueError, match="calibrated_steps"):
        NoisyGradientDescent(1.0, calibrated_steps=0)
    m = NoisyGradientDescent(1.0)
    with pytest.raises(ValueError, match="finite numbers"):
        m([np.nan], 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="same number of records"):
        m.epsilon_on([0.0, 1.0], [0.0])
