"""Dispersion scores (dpverify/statistical/dispersion.py), the planted data-dependent scale they find
(algorithms/hard/planted.py: ScaledNoise) and the medians of the clipped sums taken from all the search's rows.

Deterministic: fixed seeds.  The end-to-end audits are regression tests of leaks the search under-certified before,
at the tests' budgets and seeds: a noise scale 11 % wider on 8 coordinates (bound 0.817 without the scores, 1.007
with them, oracle 1.305), and Laplace centres moved by 0.02-0.06 of the noise's scale in 8 coordinates (true ε 0.3:
bound 0.195 with the medians of 8,192 rows, 0.221 with all of them, oracle 0.237)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpverify
from algorithms.hard.planted import ScaledNoise
from dpverify.statistical import search as search_module
from dpverify.statistical.anchors import median_clipped_sum
from dpverify.statistical.columns import SortedColumns
from dpverify.statistical.dispersion import DispersionScore, fit_dispersion


def _inputs(d: int, wider: dict[int, float], moved: dict[int, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    x0 = np.zeros((2, d))
    x1 = x0.copy()
    for j, r in wider.items():
        x1[1, j] = math.log1p(r)
    for j, m in (moved or {}).items():
        x1[0, j] = m
    return x0, x1


# ------------------------------------------------------------------------------------------- the planted mechanism
def test_scaled_noise_true_epsilon() -> None:
    lap, gauss = ScaledNoise(2.0), ScaledNoise(2.0, "gaussian")
    x0, x1 = _inputs(3, {}, {0: 1.0, 2: -0.5})
    assert lap.epsilon_on(x0, x1) == pytest.approx(0.75)          # (1 + 0.5) / 2
    assert gauss.epsilon_on(x0, x1) == math.inf
    assert gauss.epsilon_on(x0, x0) == 0.0
    assert lap.epsilon_on(*_inputs(3, {1: 0.1})) == math.inf
    with pytest.raises(ValueError, match=r"\(2, d\) array"):
        lap(np.zeros(3), 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="kind"):
        ScaledNoise(1.0, "cauchy")


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_scaled_noise_log_density_is_a_density(kind: str) -> None:
    """``E_x0[f_x1 / f_x0] = 1`` within 4 standard errors (error level about 6e-5)."""
    mech = ScaledNoise(1.0, kind)
    x0, x1 = _inputs(2, {0: 0.2}, {1: 0.3})
    o = mech(x0, 200_000, np.random.default_rng(3))
    w = np.exp(mech.log_density(x1, o) - mech.log_density(x0, o))
    assert abs(w.mean() - 1.0) < 4 * w.std() / math.sqrt(len(w))


# ------------------------------------------------------------------------------------------------ the fit
def test_fit_uses_the_coordinates_whose_scale_moves_and_has_the_loss_level_sets() -> None:
    mech = ScaledNoise(1.0)
    x0, x1 = _inputs(8, {1: 0.2, 4: 0.2, 6: -0.15})
    rng = np.random.default_rng(0)
    s0, s1 = mech(x0, 100_000, rng), mech(x1, 100_000, rng)
    scores = {f.power: f for f in fit_dispersion(s0, s1)}
    assert set(scores) == {1, 2}
    f = scores[1]
    assert f.columns == (1, 4, 6)
    assert f.weights[0] > 0 and f.weights[1] > 0 and f.weights[2] < 0      # wider under x1, narrower at 6
    fresh = mech(x1, 20_000, rng)
    loss = mech.log_density(x0, fresh) - mech.log_density(x1, fresh)
    # the Laplace loss is an affine function of the power-1 score with the exact weights; estimated ones come close
    assert np.corrcoef(f(fresh), -loss)[0, 1] > 0.99


def test_fit_finds_nothing_when_only_the_centres_move() -> None:
    mech = ScaledNoise(1.0)
    x0, x1 = _inputs(8, {}, {j: 0.5 for j in range(8)})
    rng = np.random.default_rng(1)
    assert fit_dispersion(mech(x0, 100_000, rng), mech(x1, 100_000, rng)) == []


def test_fit_needs_two_moving_fine_grained_columns() -> None:
    rng = np.random.default_rng(2)
    one = ScaledNoise(1.0)
    x0, x1 = _inputs(4, {2: 0.3})
    assert fit_dispersion(one(x0, 50_000, rng), one(x1, 50_000, rng)) == []          # one column: its own tails
    x0, x1 = _inputs(3, {0: 0.3, 1: 0.3})
    a, b = one(x0, 50_000, rng), one(x1, 50_000, rng)
    a[:, 1], b[:, 1] = np.round(a[:, 1]), np.round(b[:, 1])                        # a few labels: not noise
    assert fit_dispersion(a, b) == []
    b[:, 0] = np.nan
    assert fit_dispersion(a, b) == []
    assert fit_dispersion(a[:, 0], b[:, 0]) == []                                   # scalar outputs
    assert fit_dispersion(a[:5], b[:5]) == []


def test_fit_on_the_searchs_sorted_columns_equals_its_own() -> None:
    mech = ScaledNoise(1.0, "gaussian")
    x0, x1 = _inputs(6, {0: 0.1, 3: 0.1, 5: 0.1})
    rng = np.random.default_rng(4)
    s0, s1 = mech(x0, 40_000, rng), mech(x1, 40_000, rng)
    columns = SortedColumns(s0, s1, s0, s1)
    assert fit_dispersion(s0, s1, columns) == fit_dispersion(s0, s1)
    assert fit_dispersion(s0, s1, columns, columns.pooled) == fit_dispersion(s0, s1)


def test_score_of_a_row_with_a_non_finite_value_is_nan() -> None:
    f = DispersionScore((0, 2), (0.0, 1.0), (1.0, 2.0), (0.5, -1.0), 2)
    out = np.array([[1.0, 9.0, 3.0], [np.nan, 0.0, 1.0], [0.0, 0.0, np.inf]])
    got = f(out)
    assert got[0] == pytest.approx(0.5 * 1.0 - 1.0 * 1.0)
    assert np.isnan(got[1:]).all()
    assert f.name == "dispersion2(out[0,2])"


def test_fit_with_moved_centres_has_the_plug_in_likelihood_ratio() -> None:
    """Scales and centres both move: the coordinates whose centre moves get their own centre under each input
    (named ``likelihood``), and the power-1 score is the Laplace loss up to an affine map (correlation > 0.999 on
    fresh rows; 0.11 with the terms of input 1's centres dropped, and 0.56 for a score of the moved scales alone
    about the pooled medians, the fit before the centres moved with the input; measured at seed 6)."""
    mech = ScaledNoise(1.0)
    x0, x1 = _inputs(6, {0: 0.3, 2: -0.2, 4: 0.25}, {1: 0.4, 2: -0.3, 5: 0.5})
    rng = np.random.default_rng(6)
    s0, s1 = mech(x0, 100_000, rng), mech(x1, 100_000, rng)
    f = {g.power: g for g in fit_dispersion(s0, s1)}[1]
    assert f.columns == (0, 1, 2, 4, 5) and f.name == "likelihood1(out[0,1,2,4,5])"
    assert [f.columns[i] for i, _, _ in f.shifted] == [1, 2, 5]
    assert all(abs(c1 - x1[0, f.columns[i]]) < 0.02 for i, c1, _ in f.shifted)    # input 1's medians
    fresh = np.concatenate([mech(x0, 20_000, rng), mech(x1, 20_000, rng)])
    loss = mech.log_density(x0, fresh) - mech.log_density(x1, fresh)
    assert np.corrcoef(f(fresh), -loss)[0, 1] > 0.999
    centred = DispersionScore(f.columns, f.centres, f.scales, f.weights, 1)        # the shifted terms dropped
    assert np.corrcoef(centred(fresh), -loss)[0, 1] < 0.99


def test_fit_with_one_moved_scale_beside_moved_centres_makes_a_score() -> None:
    mech = ScaledNoise(1.0, "gaussian")
    x0, x1 = _inputs(4, {3: 0.3}, {0: 0.5, 1: -0.5})
    rng = np.random.default_rng(7)
    scores = {g.power: g for g in fit_dispersion(mech(x0, 100_000, rng), mech(x1, 100_000, rng))}
    assert scores[2].columns == (0, 1, 3) and [i for i, _, _ in scores[2].shifted] == [0, 1]
    # a shifted term is w0·|u0|^p − w1·|u1|^p: with one scale (weights 1) the Gaussian's term is linear in the value
    g = DispersionScore((0,), (0.0,), (1.0,), (1.0,), 2, ((0, 1.0, 1.0),))
    assert np.allclose(g(np.array([[0.0], [2.0], [-1.0]])), [-1.0, 3.0, -3.0])
    assert g.name == "likelihood2(out[0])"


# ----------------------------------------------------------------------------- medians from all the rows
def test_clipped_sum_medians_from_the_sorted_columns_see_small_moves() -> None:
    mech = ScaledNoise(1.0)
    x0, x1 = _inputs(8, {}, {j: 0.04 for j in range(8)})
    rng = np.random.default_rng(5)
    s0, s1 = mech(x0, 100_000, rng), mech(x1, 100_000, rng)
    assert median_clipped_sum(s0, s1) is None                  # medians of 8,192 rows: the moves are in their noise
    got = median_clipped_sum(s0, s1, sorted_column=SortedColumns(s0, s1, s0, s1))
    assert got is not None and got.columns == tuple(range(8)) and set(got.weights) == {1.0}
    assert np.allclose(np.asarray(got.high) - np.asarray(got.low), 0.04, atol=0.02)


# -------------------------------------------------------------------------------------------- end to end
def test_audit_certifies_a_data_dependent_scale_in_many_coordinates(monkeypatch) -> None:
    mech = ScaledNoise(1.0)
    pair = _inputs(8, {j: 0.11 for j in range(8)})
    kw = dict(samples=1_000_000, search_samples=200_000, seed=0, workers=1)
    with_scores = dpverify.audit(mech, [pair], 0.3, **kw).epsilon_lower_bound
    monkeypatch.setattr(search_module, "fit_dispersion", lambda *a, **k: [])
    without = dpverify.audit(mech, [pair], 0.3, **kw).epsilon_lower_bound
    assert with_scores > 0.95 and without < 0.85


def test_audit_is_tight_on_laplace_centres_moved_by_little(monkeypatch) -> None:
    mech = ScaledNoise(1.0)
    pair = _inputs(8, {}, {j: (-1) ** j * 0.02 * (1 + j % 3) for j in range(8)})
    eps = mech.epsilon_on(*pair)
    kw = dict(samples=1_000_000, search_samples=200_000, seed=0, workers=1)
    res = dpverify.audit(mech, [pair], eps, **kw)
    assert not res.violation and res.epsilon_lower_bound > 0.21
    few_rows = search_module.clipped_sums
    monkeypatch.setattr(search_module, "clipped_sums", lambda anchors, a, b, columns=None: few_rows(anchors, a, b))
    assert dpverify.audit(mech, [pair], eps, **kw).epsilon_lower_bound < 0.2


def test_moved_centre_terms_are_exactly_constant_beyond_both_centres() -> None:
    # a shifted term of power 1 with one spread is ±(2·clip(o) − c0 − c1): the same double for every value beyond
    # both centres (the difference of two absolute values rounds differently with the value's low bits, and those
    # rounding variants were "atoms" that told outputs apart by their floating-point bits)
    f = DispersionScore((0,), (-0.2477886966007476,), (0.7978363725567967,), (1.0,), 1,
                        ((0, -0.13926482914132599, 1.0),))
    far = np.random.default_rng(0).uniform(-5.0, -0.3, size=(100_000, 1))
    assert len(np.unique(f(far))) == 1
    assert len(np.unique(f(-far))) == 1 and f(far)[0] == -f(-far)[0]
    inside = np.array([[-0.2], [np.nan], [np.inf]])
    got = f(inside)
    assert got[0] == pytest.approx((2 * -0.2 + 0.2477886966007476 + 0.13926482914132599) / 0.7978363725567967)
    assert np.isnan(got[1:]).all()
