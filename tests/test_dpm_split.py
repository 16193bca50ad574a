"""DPM split selection (seed 004 Defs. 4-7, Alg. 1 lines 22-25, Lemmas 3-5): algorithms.dpm."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from algorithms.dpm import (
    DPMSplitEM,
    centreness,
    centreness_from_rank,
    check_parameters,
    decode_candidates,
    emptiness,
    score,
    score_sensitivity,
    split_candidates,
)

T, Q, ALPHA = 0.3, 1.0 / 12.0, 5.0


# -- candidates -----------------------------------------------------------------------------------
def test_candidate_grid_is_dimension_major():
    dims, pos = split_candidates((0.0, 1.0), 0.25, 2)
    assert dims.dtype == np.int64 and dims.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    np.testing.assert_allclose(pos, [0.125, 0.375, 0.625, 0.875] * 2)
    # range offset a is included (Alg. 1 line 25 omits it)
    _, pos = split_candidates((-2.0, 2.0), 1.0, 1)
    np.testing.assert_allclose(pos, [-1.5, -0.5, 0.5, 1.5])


def test_candidate_count_is_floor_without_tolerance():
    # (1 - 0)/0.3 = 3.33 -> 3 candidates, [0.9, 1] holds none
    _, pos = split_candidates((0.0, 1.0), 0.3, 1)
    np.testing.assert_allclose(pos, [0.15, 0.45, 0.75])
    # 0.3/0.1 = 2.9999999999999996 in floating point: floor gives 2, as int() in the authors' code
    assert split_candidates((0.0, 0.3), 0.1, 1)[0].size == 2


def test_decoding_inverts_the_index():
    dims, pos = split_candidates((0.0, 2.0), 0.5, 3)          # K = 4
    idx = np.arange(12)
    d_dec, p_dec = decode_candidates(idx, (0.0, 2.0), 0.5, 3)
    assert d_dec.tolist() == dims.tolist() and d_dec.tolist() == (idx // 4).tolist()
    np.testing.assert_allclose(p_dec, pos)
    d7, p7 = decode_candidates(7, (0.0, 2.0), 0.5, 3)         # i = 1, k = 3
    assert int(d7) == 1 and float(p7) == pytest.approx(1.75)
    with pytest.raises(ValueError, match=r"\[0, 12\)"):
        decode_candidates(12, (0.0, 2.0), 0.5, 3)


@pytest.mark.parametrize(
    "bounds, beta, d, msg",
    [
        ((0.0, 1.0), 2.0, 1, "wider than the range"),
        ((0.0, 1.0), 0.0, 1, "beta"),
        ((0.0, 1.0), -0.1, 1, "beta"),
        ((0.0, 1.0), float("nan"), 1, "beta"),
        ((1.0, 1.0), 0.1, 1, "a < b"),
        ((1.0, 0.0), 0.1, 1, "a < b"),
        ((0.0, 1.0), 0.1, 0, "d"),
    ],
)
def test_candidate_errors(bounds, beta, d, msg):
    with pytest.raises(ValueError, match=msg):
        split_candidates(bounds, beta, d)


# -- emptiness (Def. 5) --------------------------------------------------------------------------
def test_emptiness_closed_interval_counts_shared_boundary_twice():
    pos = np.array([0.125, 0.375, 0.625, 0.875])              # beta = 0.25 (exact in binary)
    # 0.25 is the boundary of candidates 0 and 1, 0.0 / 1.0 the range ends, 0.3 is inside candidate 1
    col = np.array([0.25, 0.0, 1.0, 0.3])
    e = emptiness(col, pos, 0.25, 4.0)
    # counts: [0.0, 0.25] -> {0.0, 0.25} = 2; [0.25, 0.5] -> {0.25, 0.3} = 2; [0.5, 0.75] -> 0; [0.75, 1] -> 1
    np.testing.assert_allclose(e, 1.0 - np.array([2, 2, 0, 1]) / 4.0)


def test_emptiness_clip_and_unclipped_negative():
    col = np.full(10, 0.1)
    pos = np.array([0.125, 0.375])
    np.testing.assert_allclose(emptiness(col, pos, 0.25, 4.0), [1.0 - 10 / 4, 1.0])   # Def. 5: negative
    np.testing.assert_allclose(emptiness(col, pos, 0.25, 4.0, clip=True), [0.0, 1.0])  # authors' code


# -- centreness (Def. 6) --------------------------------------------------------------------------
def test_centreness_key_values_and_continuity():
    n = 120.0                                                   # n q = 10
    c = centreness_from_rank(np.array([0.0, 10.0, 60.0, 110.0, 120.0]), n, T, Q)
    np.testing.assert_allclose(c, [0.0, T, 1.0, T, 0.0], atol=1e-12)
    h = 1e-9                                                   # both pieces meet at r = n q
    left, right = centreness_from_rank(np.array([10.0 - h, 10.0 + h]), n, T, Q)
    assert abs(left - T) < 1e-8 and abs(right - T) < 1e-8
    # slopes: outer t/(nq) = 0.03, inner 2(1-t)/(n(1-2q)) = 0.014
    o1, o2, i1, i2 = centreness_from_rank(np.array([3.0, 4.0, 30.0, 31.0]), n, T, Q)
    assert o2 - o1 == pytest.approx(T / (n * Q)) and i2 - i1 == pytest.approx(2 * (1 - T) / (n * (1 - 2 * Q)))
    # t = 2q: one tent, c(r) = 2 r / n below the median
    np.testing.assert_allclose(centreness_from_rank(np.array([5.0, 30.0]), 120.0, 0.2, 0.1), [5 / 60, 30 / 60])


def test_centreness_negative_beyond_n_tilde():
    n = 12.0
    c = centreness_from_rank(np.array([13.0, 14.0]), n, T, Q)  # r > n: outer formula (Def. 6 leaves it undefined)
    np.testing.assert_allclose(c, [-T / (n * Q), -2 * T / (n * Q)])
    assert np.all(c < 0)


def test_centreness_rank_is_left_insertion_index():
    col = np.array([0.1, 0.25, 0.25, 0.9])
    # rank of 0.25 = #{x < 0.25} = 1 (ties not counted)
    c = centreness(col, np.array([0.25]), 4.0, 0.5, 0.25)
    np.testing.assert_allclose(c, centreness_from_rank(np.array([1.0]), 4.0, 0.5, 0.25))


# -- score (Def. 7) -------------------------------------------------------------------------------
def _literal_score(data, dims, positions, beta, n, t, q, alpha):
    out = []
    for i, s in zip(dims, positions):
        col = [float(v) for v in data[:, i]]
        cnt = sum(1 for v in col if s - 0.5 * beta <= v <= s + 0.5 * beta)
        r = sum(1 for v in col if v < s)
        e = 1.0 - cnt / n
        core = n / 2 - abs(r - n / 2)
        if abs(n / 2 - r) >= n / 2 - n * q:
            c = core * t / (n * q)
        else:
            c = (t - 2 * q) / (1 - 2 * q) + core * (1 - t) / (n / 2 - n * q)
        out.append(c + alpha * e)
    return np.array(out)


def test_score_matches_literal_loop():
    rng = np.random.default_rng(2024)
    for trial in range(5):
        d = trial % 3 + 1
        data = np.round(rng.random((40, d)) * 16) / 16            # many points on interval boundaries
        dims, pos = split_candidates((0.0, 1.0), 0.125, d)
        n_tilde = float(rng.uniform(20, 60))                      # also ranks r > n_tilde
        got = score(data, dims, pos, 0.125, n_tilde, T, Q, ALPHA)
        np.testing.assert_allclose(got, _literal_score(data, dims, pos, 0.125, n_tilde, T, Q, ALPHA), atol=1e-12)
    one_d = rng.random(30)
    dims, pos = split_candidates((0.0, 1.0), 0.1, 1)
    np.testing.assert_allclose(score(one_d, dims, pos, 0.1, 30.0),
                               _literal_score(one_d[:, None], dims, pos, 0.1, 30.0, T, Q, ALPHA), atol=1e-12)


def test_empty_dataset_scores_alpha_and_uniform_law():
    m = DPMSplitEM(1.0, 10.0, 0.25, d=2)
    np.testing.assert_allclose(m.scores(np.empty((0, 2))), ALPHA)   # rank 0 -> c = 0, count 0 -> e = 1
    np.testing.assert_allclose(np.exp(m.log_pmf([])[1]), 1.0 / 8)


def test_score_sensitivity_lemma5_and_clamp():
    assert score_sensitivity(100.0) == pytest.approx(8.6 / 100.0)
    assert score_sensitivity(100.0, 40.0) == pytest.approx(8.6 / 60.0)
    with pytest.raises(ValueError, match="undefined"):
        score_sensitivity(100.0, 100.0)
    assert score_sensitivity(100.0, 150.0, clamp=True) == pytest.approx(8.6)
    with pytest.raises(ValueError, match="lam"):
        score_sensitivity(100.0, -1.0)


def test_score_changes_stay_within_lemma5_on_seeded_search():
    """Add/remove pairs at fixed n_tilde: every score moves by a value in [-(t/q+α)/ñ, t/(ñq)]."""
    rng = np.random.default_rng(7)
    grid = np.linspace(0.0, 1.0, 9)                              # boundaries and centres of beta = 0.25
    for _ in range(300):
        d, n, n_tilde = int(rng.integers(1, 3)), int(rng.integers(0, 30)), float(rng.uniform(1.0, 30.0))
        q = float(rng.uniform(0.02, 0.45))
        t = float(rng.uniform(2 * q, 1.0))
        data = rng.choice(grid, size=(n, d))
        x = rng.choice(grid, size=(1, d))
        dims, pos = split_candidates((0.0, 1.0), 0.25, d)
        diff = score(np.vstack([data, x]), dims, pos, 0.25, n_tilde, t, q, 1.0) - score(
            data, dims, pos, 0.25, n_tilde, t, q, 1.0)
        assert diff.min() >= -score_sensitivity(n_tilde, 0.0, t, q, 1.0) - 1e-12
        assert diff.max() <= t / (n_tilde * q) + 1e-12


# -- the mechanism ---------------------------------------------------------------------------------
DATA_2D = np.array([[0.1, 0.8], [0.15, 0.7], [0.5, 0.75], [0.55, 0.2], [0.9, 0.25], [0.4, 0.5], [0.62, 0.33]])


@pytest.mark.parametrize("exponent, k", [("two", 2.0), ("printed", 1.0)])
def test_exact_pmf_is_softmax_of_scores(exponent, k):
    m = DPMSplitEM(1.5, 9.0, 0.125, d=2, exponent=exponent)
    support, log_p = m.log_pmf(DATA_2D)
    assert support.dtype == np.int64 and support.tolist() == list(range(16))
    assert log_p.dtype == np.float64 and np.exp(log_p).sum() == pytest.approx(1.0, abs=1e-12)
    f = score(DATA_2D, *split_candidates((0.0, 1.0), 0.125, 2), 0.125, 9.0)
    np.testing.assert_allclose(m.scores(DATA_2D), f)
    w = np.exp(1.5 * (f - f.max()) / (k * 8.6 / 9.0))
    np.testing.assert_allclose(np.exp(log_p), w / w.sum(), rtol=1e-12)
    assert m.sensitivity() == pytest.approx(8.6 / 9.0)


def test_sampled_frequencies_match_log_pmf():
    """Chi-square goodness of fit, fixed seed, false-alarm level alpha = 1e-3."""
    m = DPMSplitEM(1.0, 7.0, 0.125, d=2)
    _, log_p = m.log_pmf(DATA_2D)
    n = 40_000
    draws = m(DATA_2D, n, np.random.default_rng(12345))
    assert draws.shape == (n,) and draws.dtype == np.int64
    expected = n * np.exp(log_p)
    assert expected.min() > 5
    observed = np.bincount(draws, minlength=m.n_candidates)
    assert chisquare(observed, expected).pvalue > 1e-3
    assert m(DATA_2D, 0, np.random.default_rng(0)).shape == (0,)


def _max_log_ratio(m, a, b):
    return float(np.max(np.abs(m.log_pmf(a)[1] - m.log_pmf(b)[1])))


def test_crafted_pair_factor_two_keeps_epsilon_printed_def4_exceeds_it():
    """D = 110 copies of (0.375, 0.875), D' = D ∪ {(0.625, 0.0)}; ñ = 120, ε = 1, β = 0.5 (K = 2), d = 2.

    Candidate (0, 0.75) has rank 110 = ñ − ñq (upper outer quantile) and an empty interval: the top
    score 5.3.  The new point lies in its interval below it, so it loses Δ₀ = 8.6/120 (rank and
    count +1).  Candidate (1, 0.75) has rank 0 and gains t/(ñq) = 0.03 (rank 0 → 1).  Privacy loss
    at (1, 0.75): 0.6538 for exp(εf/(2Δ)) (≤ ε) and 1.3992 for Def. 4's exp(εf/Δ) (> ε).
    """
    D = np.tile([0.375, 0.875], (110, 1))
    Dp = np.vstack([D, [[0.625, 0.0]]])
    two = DPMSplitEM(1.0, 120.0, 0.5, d=2, exponent="two")
    printed = DPMSplitEM(1.0, 120.0, 0.5, d=2, exponent="printed")
    loss_two, loss_printed = _max_log_ratio(two, D, Dp), _max_log_ratio(printed, D, Dp)
    assert loss_two == pytest.approx(0.653805, abs=1e-6) and loss_two <= 1.0
    assert loss_printed == pytest.approx(1.399174, abs=1e-6) and loss_printed > 1.0
    # both within the mechanisms' stated bounds (12.2/8.6/2 and 12.2/8.6)
    assert loss_two <= two.true_epsilon() == pytest.approx(12.2 / 8.6 / 2)
    assert loss_printed <= printed.true_epsilon() == pytest.approx(12.2 / 8.6)
    assert printed.generic_epsilon_bound() == 2.0 and two.generic_epsilon_bound() == 1.0
    # with ñ = 1200 (1100 copies) the loss is at the bound to 1e-9
    big = DPMSplitEM(1.0, 1200.0, 0.5, d=2, exponent="printed")
    D = np.tile([0.375, 0.875], (1100, 1))
    assert _max_log_ratio(big, D, np.vstack([D, [[0.625, 0.0]]])) == pytest.approx(12.2 / 8.6, abs=1e-9)


def test_factor_two_never_exceeds_epsilon_on_seeded_pairs():
    rng = np.random.default_rng(99)
    grid = np.linspace(0.0, 1.0, 5)
    for _ in range(200):
        d, n = int(rng.integers(1, 3)), int(rng.integers(0, 15))
        m = DPMSplitEM(float(rng.uniform(0.1, 10.0)), float(rng.uniform(1.0, 20.0)), 0.25, d=d,
                       lam=float(rng.uniform(0.0, 0.9)), clip_emptiness=bool(rng.integers(2)))
        D = rng.choice(grid, size=(n, d))
        Dp = np.vstack([D, rng.choice(grid, size=(1, d))])
        assert _max_log_ratio(m, D, Dp) <= min(m.true_epsilon(), m.epsilon) + 1e-9


def test_one_dimensional_input_and_decode():
    m = DPMSplitEM(1.0, 5.0, 0.2)
    np.testing.assert_allclose(m.scores([0.1, 0.5, 0.9]), m.scores([[0.1], [0.5], [0.9]]))
    dims, pos = m.decode(np.array([0, 4]))
    assert dims.tolist() == [0, 0] and np.allclose(pos, [0.1, 0.9])


# -- parameter and input errors ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(t=0.1, q=0.1), r"t >= 2q > 0"),
        (dict(t=0.3, q=0.0), r"t >= 2q > 0"),
        (dict(t=1.5, q=0.1), r"t must be <= 1"),
        (dict(alpha=0.0), "alpha"),
        (dict(lam=10.0), r"n_tilde - lam = 0.0 <= 0.*undefined"),
        (dict(lam=12.0), "undefined"),
        (dict(lam=-1.0), "lam"),
        (dict(exponent="half"), "exponent"),
        (dict(beta=1.5), "wider than the range"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(n_tilde=float("nan")), "n_tilde"),
        (dict(d=0), "d must be"),
    ],
)
def test_constructor_rejects_invalid_parameters(kwargs, msg):
    params = dict(epsilon=1.0, n_tilde=10.0, beta=0.25)
    params.update(kwargs)
    with pytest.raises(ValueError, match=msg):
        DPMSplitEM(**params)


def test_check_parameters_names_the_rule():
    with pytest.raises(ValueError, match=r"Def. 6"):
        check_parameters(0.1, 0.2, 5.0)
    check_parameters(0.2, 0.1, 5.0, n_tilde=3.0, beta=0.1, lam=0.0)        # t = 2q is valid


@pytest.mark.parametrize(
    "x, d, msg",
    [
        ([[0.5, 1.2]], 2, r"x\[0\] = \[0.5, 1.2\] lies outside the public range.*clip"),
        ([0.2, -0.1], 1, r"x\[1\] = \[-0.1\] lies outside"),
        ([[0.5, 0.5, 0.5]], 2, r"shape \(n, 2\)"),
        ([0.5, 0.5], 2, r"shape \(n, 2\)"),
        ([[0.5, float("nan")]], 2, r"finite: point x\[0\]"),
        ([0.1, float("inf")], 1, "finite"),
    ],
)
def test_mechanism_rejects_bad_data(x, d, msg):
    m = DPMSplitEM(1.0, 10.0, 0.25, d=d)
    with pytest.raises(ValueError, match=msg):
        m(x, 5, np.random.default_rng(0))


def test_exponent_two_is_default_and_true_epsilon_values():
    m = DPMSplitEM(0.5, 50.0, 0.1, lam=10.0)
    assert m.exponent == "two" and m.delta == 0.0
    assert m.sensitivity() == pytest.approx(8.6 / 40.0)
    assert m.true_epsilon() == pytest.approx(0.5 / 2 * 12.2 / 8.6 * 40.0 / 50.0)
    assert math.isclose(DPMSplitEM(0.5, 50.0, 0.1, exponent="printed").true_epsilon(), 0.5 * 12.2 / 8.6)
