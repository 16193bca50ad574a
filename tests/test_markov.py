"""Markov scores (dpverify/statistical/markov.py): the gate, the score's algebra and what it adds to an audit.

Deterministic: fixed seeds.  The gate is a chi-square test at a family-wise 1e-3 (about one fit in a thousand of
outputs it should pass makes the scores, which are then one more candidate, never a wrong bound): the "no score"
cases below are fixed draws where it holds.  The end-to-end audit is a
regression test at the test's budget and seed of a violation the search missed before the scores (bound 1.400
against the claim 1.5 without them, 2.184 with them at 1,000,000 + 200,000; oracle 2.357, true ε 2.98)."""

from __future__ import annotations

import numpy as np
import pytest

import dpverify
from algorithms.hard.iterates import NoisyGradientDescent
from dpverify.statistical import search as search_module
from dpverify.statistical.columns import SortedColumns
from dpverify.statistical.markov import GRID, Centre, MarkovScore, Table, fit_markov

X0 = np.array([-0.6, -0.2, 0.1, 0.5, 0.9])
X1 = np.array([-0.6, -0.2, 0.1, 0.5, -1.5])


def _halves(mech, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return mech(X0, n, rng), mech(X1, n, rng)


def test_gate_passes_independent_coordinates_and_linear_chains() -> None:
    rng = np.random.default_rng(0)
    n, d = 60_000, 8
    lap = rng.laplace(size=(n, d)), rng.laplace(size=(n, d)) + 0.3
    assert fit_markov(*lap) == []
    assert fit_markov(np.cumsum(lap[0], axis=1), np.cumsum(lap[1], axis=1)) == []          # running sums
    ar = [np.zeros((n, d)) for _ in range(2)]
    for k, a in enumerate(ar):                                                               # a Gaussian AR(1)
        z = rng.normal(size=(n, d))
        for t in range(d):
            a[:, t] = (0.8 * a[:, t - 1] if t else 0.0) + z[:, t] + 0.2 * k
    assert fit_markov(*ar) == []
    assert fit_markov(lap[0][:500], lap[1][:500]) == []                                    # too few rows
    assert fit_markov(lap[0][:, 0], lap[1][:, 0]) == []                                    # scalar outputs


def test_scores_of_clipped_gradient_descent_have_the_loss_level_sets() -> None:
    mech = NoisyGradientDescent(1.5, steps=6, rate=0.5, clip=1.0, calibrated_steps=2)
    s0, s1 = _halves(mech, 100_000, 1)
    fitted = fit_markov(s0, s1)
    scores = {f.power: f for f in fitted if f.kind == ""}
    shared = {f.power: f for f in fitted if f.kind == "h"}
    assert len(fitted) == 4 and set(scores) == set(shared) == {1, 2} and scores[1].columns == tuple(range(6))
    assert scores[1].previous == (None, 0, 1, 2, 3, 4) and scores[1].name == "markov1(out[0,1,2,3,4,5])"
    rng = np.random.default_rng(2)
    fresh = np.concatenate([mech(X0, 20_000, rng), mech(X1, 20_000, rng)])
    loss = mech.log_density(X0, fresh) - mech.log_density(X1, fresh)
    # the Laplace loss is the power-1 score with exact centres and spreads (up to scale)
    assert np.corrcoef(scores[1](fresh), loss)[0, 1] > 0.99
    # the shared transition (one table for steps 1-5) and its name
    assert shared[1].name == "markov1h(out[0,1,2,3,4,5])" and len({id(t) for t in shared[1].tables[1:]}) == 1
    assert np.corrcoef(shared[1](fresh), loss)[0, 1] > 0.98
    far = {f.power: f for f in fit_markov(s0 + 1e6, s1 + 1e6) if f.kind == ""}   # moments about the mean
    assert set(far) == {1, 2} and np.allclose(far[1](fresh + 1e6), scores[1](fresh), atol=1e-6)
    store = SortedColumns(s0, s1, s0, s1)
    assert [f.name for f in fit_markov(s0, s1, store)] == [f.name for f in fitted]
    got = fit_markov(s0, s1, store)[0]
    assert np.allclose(got.on_columns(fresh, store.by_column(0)[:, :0]), got(fresh))   # wrong columns: recomputed
    assert np.allclose(got(s0), scores[1](s0))


def test_shared_transition_finds_a_loss_in_a_rare_band_of_the_state() -> None:
    """A clipping bound of 0.4 and a changed record far below the others: the update differs only where an iterate
    strays into [-3.3, -1.8] (1-3 % of the steps), whose per-step bins are too coarse and noisy there; the shared
    transition pools the 3 steps, refines the tails and shrinks the bins' differences (measured at this seed:
    correlation with the true loss 0.16 per step, 0.48 shared)."""
    x0 = np.array([0.811, -0.226, 0.492, -1.026, -2.179, -1.425, -1.731, -1.896, -2.222])
    x1 = x0.copy()
    x1[-1] = -2.917
    mech = NoisyGradientDescent(0.8587, steps=4, rate=0.878, clip=0.398)      # noise scale 0.412
    rng = np.random.default_rng(1)
    fitted = {(f.power, f.kind): f for f in fit_markov(mech(x0, 100_000, rng), mech(x1, 100_000, rng))}
    fresh = mech(x0, 200_000, rng)
    loss = mech.log_density(x0, fresh) - mech.log_density(x1, fresh)
    per_step, shared = (np.corrcoef(fitted[1, k](fresh), loss)[0, 1] for k in ("", "h"))
    assert shared > per_step + 0.15 and shared > 0.35, (per_step, shared)


def test_score_algebra_and_non_finite_rows() -> None:
    c0 = Centre(np.array([-1.0, 0.0, 1.0]), np.array([0.0, 0.0, 2.0]))       # flat, then slope 2
    c1 = Centre(np.array([0.0]), np.array([0.5]))                            # a constant
    table = Table.of(c0, c1)
    prev = np.array([-3.0, -0.5, 0.5, 1.0, 4.0])
    a, b = table.centres(prev, len(prev))
    assert np.allclose(a, [0.0, 0.0, 1.0, 2.0, 8.0])                        # linear along the end cells beyond
    assert np.allclose(b, 0.5)
    assert table.values.shape == (2, GRID)
    f = MarkovScore((0, 1), (None, 0), (Table.of(Centre(np.zeros(1), np.zeros(1)), Centre(np.zeros(1), np.ones(1))),
                                          table), (1.0, 2.0), 1)
    out = np.array([[0.0, 1.0], [2.0, 0.5], [np.nan, 0.0], [0.0, np.inf]])
    got = f(out)
    # row 0: (|0 − 1| − |0 − 0|)/1 + (|1 − 0.5| − |1 − 0|)/2; row 1: its previous value 2 lies beyond the last
    # knot, where c0 = 2 + 2·(2 − 1) = 4
    assert got[0] == pytest.approx(1.0 + (0.5 - 1.0) / 2)
    assert got[1] == pytest.approx((1.0 - 2.0) + (abs(0.5 - 0.5) - abs(0.5 - 4.0)) / 2)
    assert np.isnan(got[2:]).all()


def test_audit_certifies_noisy_gradient_descent_with_composition_forgotten(monkeypatch) -> None:
    mech = NoisyGradientDescent(1.5, steps=8, rate=0.5, clip=1.0, calibrated_steps=4)
    kw = dict(samples=1_000_000, search_samples=200_000, seed=0, workers=1, alpha=0.05)
    res = dpverify.audit(mech, [(X0, X1)], 1.5, **kw)
    assert res.violation and res.epsilon_lower_bound > 2.0 and "markov" in str(res.witness.event)
    monkeypatch.setattr(search_module, "fit_markov", lambda *a, **k: [])
    assert not dpverify.audit(mech, [(X0, X1)], 1.5, **kw).violation


def test_shared_transition_aligns_the_bins_each_input_keeps() -> None:
    """A bin kept under one input only (fewer than MIN_BIN_ROWS rows under the other) is left out of the shared
    transition, and the bins both keep are paired by their index, not by their position."""
    from dpverify.statistical.markov import _homogeneous

    rng = np.random.default_rng(3)
    n = 40_000
    prev = [rng.uniform(0.0, 1.0, n), rng.uniform(0.0, 1.0, n)]
    prev[1][prev[1] < 0.05] += 0.5           # input 1 has no previous value below 0.05: its lowest bins are empty
    cols = tuple(np.stack([p, p + 0.1 * rng.laplace(size=n) + 0.2 * k]) for k, p in enumerate(prev))
    table = _homogeneous(cols, [(1, 0)])
    grid = np.array([0.2, 0.5, 0.8])
    c0, c1 = table.centres(grid, len(grid))
    # the next value is the previous plus 0.2 under input 1: the centres follow the previous value, 0.2 apart
    assert np.allclose(c0, grid, atol=0.02) and np.allclose(c1 - c0, 0.2, atol=0.02)
