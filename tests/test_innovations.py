"""Innovations of vector outputs (dpverify/statistical/innovations.py) and the counters under continual observation
whose leaks they find (algorithms/classic/continual_counting.py).

Deterministic: fixed seeds.  The end-to-end audit is a regression test of a miscalibrated Binary Mechanism that the
search under-certified before the innovations: at the test's budget and fixed seed, bound 0.826 without them and
1.341 with them, against an oracle bound of 1.395 (claim 1.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpverify
from algorithms.classic.continual_counting import (FactorisedCounter, binary_factors, binary_mechanism,
                                                   square_root_counter, square_root_factors)
from algorithms.classic.prefix_sum import PrefixSum
from algorithms.hard.joint import LaplaceVector
from dpverify.statistical import search as search_module
from dpverify.statistical.innovations import InnovationSum, innovation_map, innovation_sum


def _stream(T: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).random(T) < 0.5).astype(float)


# ------------------------------------------------------------------------------------------- the counters
@pytest.mark.parametrize("factors", [binary_factors, square_root_factors])
@pytest.mark.parametrize("T", [1, 2, 5, 8, 13, 32])
def test_factors_multiply_to_the_running_counts(factors, T: int) -> None:
    left, right = factors(T)
    np.testing.assert_allclose(left @ right, np.tril(np.ones((T, T))), atol=1e-12)
    assert np.allclose(left, np.tril(left)) and np.allclose(right, np.tril(right))


def test_binary_mechanism_sensitivity_is_the_number_of_levels() -> None:
    for T in (1, 2, 3, 4, 7, 8, 16, 31, 32, 33):
        assert binary_mechanism(T, 1.0).sensitivity == math.floor(math.log2(T)) + 1
        assert binary_mechanism(T, 0.5).true_epsilon() == pytest.approx(0.5)


def test_square_root_counter_sensitivity_is_its_first_column() -> None:
    m = square_root_counter(4, 1.0)           # r = 1, 1/2, 3/8, 5/16
    assert m.sensitivity == pytest.approx(1 + 0.5 + 0.375 + 0.3125)
    assert m.true_epsilon() == pytest.approx(1.0)


def test_miscalibrated_counter_true_epsilon() -> None:
    m = binary_mechanism(16, 1.0, calibrated_for=1.0)     # the levels forgotten: scale 1/ε instead of 5/ε
    x0 = _stream(16)
    x1 = x0.copy()
    x1[0] += 1.0                                          # step 1 is in nodes 1, 2, 4, 8, 16
    assert m.epsilon_on(x0, x1) == pytest.approx(5.0)
    assert m.true_epsilon() == pytest.approx(5.0)


@pytest.mark.parametrize("make", [binary_mechanism, square_root_counter])
def test_log_density_is_a_density(make) -> None:
    """``E_x0[f_x1 / f_x0] = 1`` (importance weights of the law of x1 under that of x0), at a 4-sigma tolerance,
    and the loss never exceeds the pair's ε."""
    m = make(8, 1.0)
    x0 = _stream(8, 1)
    x1 = x0.copy()
    x1[2] = 1.0 - x1[2]
    out = m(x0, 200_000, np.random.default_rng(3))
    loss = m.log_density(x1, out) - m.log_density(x0, out)
    w = np.exp(loss)
    assert abs(w.mean() - 1.0) < 4 * w.std() / math.sqrt(len(w))
    assert np.abs(loss).max() <= m.epsilon_on(x0, x1) + 1e-9


def test_counter_rejects_bad_input() -> None:
    m = binary_mechanism(4, 1.0)
    with pytest.raises(ValueError, match="length 4"):
        m(np.zeros(5), 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="lower triangular"):
        FactorisedCounter(np.ones((3, 3)), np.eye(3), 1.0)
    with pytest.raises(ValueError, match="positive diagonal"):
        FactorisedCounter(np.zeros((3, 3)), np.eye(3), 1.0)
    with pytest.raises(ValueError, match="one shape"):
        FactorisedCounter(np.eye(3), np.eye(2), 1.0)


# ------------------------------------------------------------------------------------------- the unmixing
def _halves(mech, x0, x1, n: int = 20_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return mech(x0, n, rng), mech(x1, n, rng)


def test_map_recovers_the_noise_of_a_binary_mechanism() -> None:
    m = binary_mechanism(16, 1.0)
    x0 = _stream(16)
    x1 = x0.copy()
    x1[4] += 1.0
    found = innovation_map(*_halves(m, x0, x1))
    assert found is not None
    columns, unmix, offset = found
    assert columns == tuple(range(16))
    # unmix @ L = diag(1/sd of the noise): the nodes at unit variance, to the estimation error of 2 x 8,192 rows
    product = unmix @ m.left * (math.sqrt(2.0) * m.scale)
    np.testing.assert_allclose(product, np.eye(16), atol=0.05)


@pytest.mark.parametrize("mech,x0,x1", [
    (LaplaceVector(1.0), np.zeros(6), np.array([1.0, 0, 0, 1, 0, 0])),                 # independent coordinates
    (PrefixSum(0.5), np.zeros(6), np.array([1.0, 0, 1, 0, 0, 0])),                      # running sums
])
def test_map_leaves_out_what_the_search_already_unmixes(mech, x0, x1) -> None:
    assert innovation_map(*_halves(mech, x0, x1)) is None


def test_map_leaves_out_non_finite_constant_and_narrow_rows() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(500, 4)), rng.normal(size=(500, 4))
    with_nan = a.copy()
    with_nan[3, 1] = np.nan
    assert innovation_map(with_nan, b) is None
    constant = a.copy()
    constant[:, 2] = 7.0
    assert innovation_map(constant, b) is None
    assert innovation_map(a[:, :1], b[:, :1]) is None
    assert innovation_map(a.astype(str), b.astype(str)) is None


def test_map_leaves_out_labels_bits_and_point_masses() -> None:
    """Correlated columns that are no fine-grained noise: 0/1 answers, labels of a few values, a value released in
    a tenth of the rows and 0 otherwise (SVT's "not released")."""
    rng = np.random.default_rng(1)
    base = rng.laplace(size=(4000, 6)) @ binary_factors(6)[0].T              # mixed noise: would be unmixed
    assert innovation_map(base[:2000], base[2000:]) is not None
    bits = (base > 0).astype(np.int8)
    assert innovation_map(bits[:2000], bits[2000:]) is None
    labels = np.clip(np.round(base), -3, 3)
    assert innovation_map(labels[:2000], labels[2000:]) is None
    released = np.where(rng.random(base.shape) < 0.1, base, 0.0)
    assert innovation_map(released[:2000], released[2000:]) is None


def test_map_unmixes_integer_noise_of_a_fine_grained_law() -> None:
    """Geometric noise at a small ε (the discrete Laplace of integer counters): integer rows, many values."""
    rng = np.random.default_rng(2)
    noise = rng.geometric(0.1, size=(4000, 6)) - rng.geometric(0.1, size=(4000, 6))
    counts = noise @ np.array(binary_factors(6)[0], dtype=np.int64).T
    assert counts.dtype.kind == "i"
    assert innovation_map(counts[:2000], counts[2000:]) is not None


def test_map_drops_a_column_that_is_a_function_of_those_before() -> None:
    m = binary_mechanism(8, 1.0)
    x0 = _stream(8)
    o0, o1 = _halves(m, x0, x0 + np.eye(8)[2])
    total = lambda o: np.column_stack([o, o[:, :3].sum(axis=1)])           # a total of the first three counts
    found = innovation_map(total(o0), total(o1))
    assert found is not None and found[0] == tuple(range(8))


def test_feature_values_by_rows_and_by_columns_agree_and_non_finite_rows_are_high() -> None:
    m = binary_mechanism(8, 1.0)
    x0 = _stream(8)
    o0, o1 = _halves(m, x0, x0 + np.eye(8)[1])
    feature = innovation_sum(o0, o1)
    assert isinstance(feature, InnovationSum)
    assert feature.name == "clipped-sum(innovations, medians)"
    rows = o1[:1000].copy()
    rows[5, 3] = np.nan
    rows[6, 0] = -np.inf
    by_rows = feature(rows)
    cols = np.ascontiguousarray(rows.T)
    cols[np.isnan(cols)] = np.inf                        # the search's shared columns hold NaN as +inf
    np.testing.assert_allclose(by_rows, feature.on_columns(rows, cols), rtol=1e-12, atol=1e-12)
    assert by_rows[5] == np.inf and by_rows[6] == np.inf
    assert np.isfinite(np.delete(by_rows, [5, 6])).all()


def test_feature_clips_the_moved_nodes_at_their_answers() -> None:
    """On a Binary Mechanism the innovations that move are the nodes holding the changed step, each clipped between
    its two answers at unit variance (0 and 1/(√2 b)); the others' clip ranges are their medians' noise.  The feature
    ranks fresh outputs as the exact loss does (rank correlation 0.95 at this seed: the loss is flat where every
    moved node lies beyond both answers, and the noise of the other ranges orders those rows at random), far above
    any single running count (0.51)."""
    from scipy.stats import spearmanr
    m = binary_mechanism(16, 1.0)
    x0 = _stream(16)
    x1 = x0.copy()
    x1[5] += 1.0                                           # step 6 (1-based) is in nodes 6, 8 and 16
    o0, o1 = _halves(m, x0, x1, n=40_000)
    feature = innovation_sum(o0, o1)
    clipped = feature.clipped
    ranges = dict(zip(clipped.columns, np.subtract(clipped.high, clipped.low)))
    moved = {j for j, r in ranges.items() if r > 0.05}
    assert moved == {5, 7, 15}
    for j in moved:
        assert ranges[j] == pytest.approx(1.0 / (math.sqrt(2.0) * m.scale), rel=0.15)
        assert clipped.weights[clipped.columns.index(j)] == 1.0
    fresh = m(x1, 20_000, np.random.default_rng(9))
    loss = m.log_density(x1, fresh) - m.log_density(x0, fresh)
    assert spearmanr(feature(fresh), loss)[0] > 0.9
    assert max(abs(spearmanr(fresh[:, j], loss)[0]) for j in range(16)) < 0.6


# ------------------------------------------------------------------------------------------- end to end
def test_audit_certifies_a_miscalibrated_binary_mechanism(monkeypatch) -> None:
    """Binary Mechanism over 32 steps with its noise computed for 4 levels instead of 6 (true ε 1.5 on the first
    step, claim 1.2); at 2·10^5 outputs per input and its fixed seed the audit certifies it with the innovations
    and not without them."""
    m = binary_mechanism(32, 1.0, calibrated_for=4.0)
    x0 = _stream(32, 2)
    x1 = x0.copy()
    x1[0] = 1.0 - x1[0]
    assert m.epsilon_on(x0, x1) == pytest.approx(1.5)
    kwargs = dict(samples=200_000, search_samples=50_000, seed=11, workers=1)
    with_innovations = dpverify.audit(m, [(x0, x1)], 1.2, **kwargs)
    monkeypatch.setattr(search_module, "innovation_sum", lambda *a: None)
    without = dpverify.audit(m, [(x0, x1)], 1.2, **kwargs)
    assert with_innovations.violation and with_innovations.epsilon_lower_bound > 1.2
    assert not without.violation


def test_independent_coordinates_of_very_different_scales_are_left_out() -> None:
    """The identity is recognised in standard units: in raw units the estimation noise of a coefficient is
    multiplied by the ratio of the two columns' scales (here up to 40)."""
    scales = np.array([0.5, 1.0, 4.0, 20.0, 0.7, 9.0])
    rng = np.random.default_rng(4)
    a = rng.laplace(size=(20_000, 6)) * scales
    b = rng.laplace(size=(20_000, 6)) * scales + 1.0
    assert innovation_map(a, b) is None
    assert innovation_map(a @ binary_factors(6)[0].T, b @ binary_factors(6)[0].T) is not None


def test_a_coarse_or_non_finite_column_is_left_out_not_the_whole_unmixing() -> None:
    """A 0/1 column or a column with an infinite value beside the counts: the counts are still unmixed."""
    m = binary_mechanism(8, 1.0)
    x0 = _stream(8)
    o0, o1 = _halves(m, x0, x0 + np.eye(8)[2])
    flag = lambda o, seed: (np.random.default_rng(seed).random(len(o)) < 0.5).astype(float)
    found = innovation_map(np.column_stack([o0, flag(o0, 1)]), np.column_stack([o1, flag(o1, 2)]))
    assert found is not None and found[0] == tuple(range(8))
    inf0, inf1 = np.column_stack([flag(o0, 1), o0]), np.column_stack([flag(o1, 2), o1])
    inf0[7, 0] = np.inf
    found = innovation_map(inf0, inf1)
    assert found is not None and found[0] == tuple(range(1, 9))


def test_one_moving_innovation_suffices_unless_it_is_the_first() -> None:
    """A change in the last step moves the last node only (one innovation other than the first: a feature); the
    first innovation is the first count rescaled, whose events the search has."""
    T = 8
    m = binary_mechanism(T, 1.0, calibrated_for=1.0)
    x0 = _stream(T)
    last = x0.copy()
    last[T - 1] = 1.0 - last[T - 1]
    clipped = innovation_sum(*_halves(m, x0, last, n=40_000)).clipped
    ranges = np.subtract(clipped.high, clipped.low)
    assert int(np.argmax(ranges)) == clipped.columns.index(T - 1)
    from dpverify.statistical.anchors import median_clipped_sum
    rng = np.random.default_rng(0)
    a, b = rng.laplace(size=(20_000, 4)), rng.laplace(size=(20_000, 4))
    b[:, 0] += 1.0
    assert median_clipped_sum(a, b, single=True) is None
    b[:, 0] -= 1.0
    b[:, 2] += 1.0
    assert median_clipped_sum(a, b, single=True) is not None


@pytest.mark.parametrize("rows", [300, 1000, 5000])
def test_independent_coordinates_on_small_halves_are_left_out(rows: int) -> None:
    """The tolerance grows with the estimation error on the few hundred rows of an anytime audit's first
    checkpoints (32 independent columns: some 500 estimated coefficients, the largest of their errors about 3.5
    standard errors): 0 of 20 seeds unmixed at each size."""
    unmixed = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        a, b = rng.laplace(size=(rows, 32)), rng.laplace(size=(rows, 32)) + 0.5
        unmixed += innovation_map(a, b) is not None
    assert unmixed == 0
