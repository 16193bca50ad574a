"""The event families added against hidden mass, joint and mixed violations (dpverify.statistical.atoms, dpverify.statistical.cells).

Statistical tests use fixed seeds; each states its error level.  A violation asserted on a broken mechanism is a
power check at that seed; a pass asserted on a correct mechanism can fail with probability at most the audit's
alpha (0.05) at any seed -- at these fixed seeds it does not.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpverify
from dpverify.statistical.atoms import HashSetEvent, row_hashes
from dpverify.statistical.cells import CellSetEvent, fit_cells, fit_product_ratio


def rare_leak(x, n, rng, p=1e-3, epsilon=1.0):
    out = x + rng.laplace(0.0, 1.0 / epsilon, size=n)
    out[rng.random(n) < p] = x                           # releases its exact input with probability p
    return out


def rounded_laplace(x, n, rng, epsilon=1.0):
    return np.round(x + rng.laplace(0.0, 1.0 / epsilon, size=n), 1)   # post-processing: still epsilon-DP


def replace_one_histogram(x, n, rng, epsilon=0.5):
    x = np.asarray(x, dtype=float)
    return x + rng.laplace(0.0, 1.0 / epsilon, size=(n, len(x)))      # scale for l1 distance 1, pairs at 2


def test_row_hashes_equal_rows_equal_hashes():
    a = np.array([[0.0, 1.5], [-0.0, 1.5], [np.nan, 2.0], [np.nan, 2.0], [1.0, 1.5]])
    h = row_hashes(a)
    assert h[0] == h[1] and h[2] == h[3] and len(set(h.tolist())) == 3
    assert row_hashes(np.array([3, 4]))[0] != row_hashes(np.array([4, 3]))[0]


def test_atom_sweep_finds_a_leak_too_rare_for_the_search_sample():
    # 2 000 search outputs see the atom ~2 times; the sweep (20 000 outputs) ~20 times; the test 200 000 ~200 times
    r = dpverify.audit(rare_leak, [(0.0, 1.0)], epsilon=1.0, samples=200_000, search_samples=2_000, seed=0,
                       workers=1)
    assert r.violation and r.witness.test.impossible
    assert "point mass" in r.witness.test.event


def test_hash_set_event_contains_its_atoms():
    ev = HashSetEvent(tuple(int(h) for h in row_hashes(np.array([1.0, 2.0]))))
    assert ev.contains(np.array([1.0, 2.0, 3.0, -0.0])).tolist() == [True, True, False, False]


@pytest.mark.parametrize("seed", [0, 1])
def test_post_processing_atoms_are_no_false_alarm(seed):
    # correct (eps = 1) and rounded to a grid: every output is an atom; error level alpha = 0.05 per seed
    r = dpverify.audit(rounded_laplace, [(0.0, 1.0)], epsilon=1.0, samples=200_000, search_samples=5_000,
                       seed=seed, workers=1)
    assert not r.violation


def test_joint_event_in_two_of_twenty_coordinates():
    x0 = np.full(20, 5.0)
    x1 = x0.copy()
    x1[3] -= 1.0
    x1[11] += 1.0                                      # true eps = 2 * 0.5 = 1 on this pair
    r = dpverify.audit(replace_one_histogram, [(x0, x1)], epsilon=0.5, samples=300_000, seed=0, workers=1)
    assert r.violation and r.epsilon_lower_bound >= 0.9
    # a joint event of the two coordinates: the product-ratio score of columns 3 and 11, or the clipped sum over the
    # coordinates the inputs differ in (dpverify.statistical.anchors.ClippedSum: here those two)
    assert "ratio-score(out[3,11])" in r.witness.test.event or "clipped-sum(out)" in r.witness.test.event


def test_product_ratio_keeps_the_informative_coordinates():
    rng = np.random.default_rng(0)
    a = rng.laplace(size=(50_000, 8))
    b = rng.laplace(size=(50_000, 8))
    b[:, 2] += 1.0
    b[:, 5] -= 1.0
    score = fit_product_ratio(a, b)
    assert score is not None and score.columns == (2, 5)
    assert score(a).mean() > score(b).mean()


def test_product_ratio_fit_on_shared_sorted_columns_is_the_same_fit():
    """The search hands the fit its sorted columns (shared with the column features): the same score as the fit
    that sorts them itself, on continuous, discrete, NaN-bearing and constant coordinates."""
    from dpverify.statistical.columns import SortedColumns
    rng = np.random.default_rng(4)
    a = np.column_stack([rng.laplace(size=20_000), rng.integers(0, 3, 20_000), rng.laplace(size=20_000),
                         np.zeros(20_000)])
    b = a[rng.permutation(20_000)] + np.array([0.5, 0.0, 0.0, 0.0])
    b[:, 1] = rng.integers(0, 4, 20_000)
    a[::97, 2] = np.nan
    shared = fit_product_ratio(a, b, SortedColumns(a, b))
    assert shared is not None and 0 in shared.columns and shared == fit_product_ratio(a, b)


def test_cells_of_scalar_outputs_from_the_shared_sorts_are_the_same_cells():
    """Scalar outputs: the search hands the cells' fit the sorted values of both selection halves and counts their
    cells from the sorted halves (``bin_counts``): the same partition as the fit that sorts them itself, and the
    counts ``np.bincount`` of the cells gives, with NaN (as +inf), point masses and signed zeros among the values;
    as do the scoring halves' counts from their feature sorted."""
    from dpverify.statistical.cells import bin_counts
    from dpverify.statistical.columns import SortedColumns
    rng = np.random.default_rng(6)
    a, b = rng.laplace(size=30_000), rng.laplace(0.3, size=30_000)
    a[::101], a[::89], b[::83], b[::79] = np.nan, 2.5, 0.0, -0.0
    cols = SortedColumns(a.reshape(-1, 1), b.reshape(-1, 1))
    part = fit_cells(a, b, cols.pooled(0))
    assert part is not None and not part.discrete and part == fit_cells(a, b)
    for sel, half in zip(cols(0), (a, b)):
        np.testing.assert_array_equal(bin_counts(sel, np.asarray(part.edges[0]), part.n_cells),
                                      np.bincount(part.cells(half), minlength=part.n_cells))
    # the scoring halves' counts (unsorted halves: the feature sorted, NaN last, then binned) are the cells' too
    for half in (b[::-1].copy(), a[::3].copy()):
        np.testing.assert_array_equal(bin_counts(np.sort(part.feature(half)), np.asarray(part.edges[0]), part.n_cells),
                                      np.bincount(part.cells(half), minlength=part.n_cells))


def test_cells_the_fit_gives_the_selection_rows_are_their_cells():
    """The search counts the selection halves' cells from the fit's own features and groups: the codes
    ``part.cells`` gives each half, with a discrete part of many groups, a rare group (pooled in the last one), NaN and
    infinities among the continuous values; and the continuous feature is the sum with each NaN taken as +inf."""
    from dpverify.statistical.cells import CellPartition, fit_cells_and_codes
    rng = np.random.default_rng(8)

    def rows(shift: float) -> np.ndarray:
        n = 20_000
        codes = rng.integers(0, 4, size=(n, 2)).astype(np.float64)
        codes[::997, 0] = 9.0                                    # a rare discrete part
        vals = rng.laplace(shift, 1.0, size=(n, 3))
        vals[::101, 1], vals[::211, 2], vals[::307, 0] = np.nan, -np.inf, np.inf
        return np.column_stack([codes, vals])

    a, b = rows(0.0), rows(0.4)
    part, codes = fit_cells_and_codes(a, b)
    assert part.discrete == (0, 1) and codes is not None and len(part.edges) > 2
    np.testing.assert_array_equal(codes[:len(a)], part.cells(a))
    np.testing.assert_array_equal(codes[len(a):], part.cells(b))
    v = np.where(np.isnan(a[:, 2:]), np.inf, a[:, 2:])
    with np.errstate(invalid="ignore"):
        ref = v.sum(axis=1)
    np.testing.assert_array_equal(part.feature(a), np.where(np.isnan(ref), np.inf, ref))
    assert isinstance(part, CellPartition)
    # continuous columns only: one group, whose cells the fit gives as well
    one, codes = fit_cells_and_codes(a[:, 2:], b[:, 2:])
    assert not one.discrete and len(one.edges) == 1
    np.testing.assert_array_equal(codes, np.concatenate([one.cells(a[:, 2:]), one.cells(b[:, 2:])]))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.bool_, np.int64, np.float64])
def test_sorted_columns_by_counting_equal_sorting(dtype):
    """Integer columns of a small span are sorted by counting (halves and pooled): the very arrays sorting the column
    features' values gives, for every dtype, for spans within and beyond ``COUNTED_RANGE``, with 32 columns kept and
    the 33rd not."""
    from dpverify.statistical.columns import COUNTED_RANGE, SortedColumns
    from dpverify.statistical.features import Column
    rng = np.random.default_rng(11)
    for span in (1, 2, 7, COUNTED_RANGE, COUNTED_RANGE + 1):
        hi = 1 if dtype is np.bool_ else min(span - 1, np.iinfo(dtype).max if dtype is not np.float64 else span)
        lo = 0 if dtype is np.bool_ or np.dtype(dtype).kind == "u" else -(span // 2)
        a, b = (rng.integers(lo, lo + hi, size=(n, 33), endpoint=True).astype(dtype) for n in (500, 300))
        cols = SortedColumns(a, b)
        for j in (0, 5, 32):
            want0, want1 = np.sort(Column(j)(a)), np.sort(Column(j)(b))
            got0, got1 = cols(j)
            np.testing.assert_array_equal(got0, want0)
            np.testing.assert_array_equal(got1, want1)
            assert got0.dtype == got1.dtype == np.float64
            np.testing.assert_array_equal(cols.pooled(j), np.sort(np.concatenate([want0, want1])))


def test_scoring_columns_are_the_column_features_values():
    """The search counts a column's chosen events on contiguous copies of the scoring halves' columns: the values
    :class:`Column` gives (NaN as +inf, integers as float64), column by column."""
    from dpverify.statistical.features import Column
    from dpverify.statistical.columns import SortedColumns
    rng = np.random.default_rng(5)
    for halves in [tuple(rng.laplace(size=(1000, 3)) for _ in range(4)),
                   tuple(rng.integers(-2, 3, size=(1000, 2)) for _ in range(4))]:
        if halves[2].dtype.kind == "f":
            halves[2][::7, 1] = np.nan
        cols = SortedColumns(*halves)
        for j in range(halves[0].shape[1]):
            got = cols.scoring(j)
            for g, h in zip(got, halves[2:]):
                assert g.flags.c_contiguous and g.dtype == np.float64
                np.testing.assert_array_equal(g, Column(j)(h))
    with pytest.raises(ValueError, match="no scoring halves"):
        SortedColumns(halves[0], halves[1]).scoring(0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.bool_, np.int64])
def test_statistics_of_small_integers_equal_those_of_their_floats(dtype):
    """sum / max / min / argmax of small-integer outputs are taken on the integers (no float64 copy first): the
    same values as on the float64 view, ties of argmax at the first maximum (also with the extreme values of the
    dtype and 64 columns, the most the packed keys of argmax take, and 65, beyond them)."""
    from dpverify.statistical.features import Statistic
    rng = np.random.default_rng(8)
    lo, hi = (0, 2) if dtype is np.bool_ else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    for k in (1, 7, 40, 64, 65):
        o = rng.integers(lo, hi, size=(500, k), endpoint=True).astype(dtype)
        o[7, :] = lo                                       # a row at the dtype's minimum, all tied
        o[9, k // 2] = hi
        o[3] = o[3, 0]                                     # a row of ties
        o[5, -1] = o[5].max()                              # a maximum in the last column too
        for kind in ("sum", "max", "min", "argmax"):
            got = Statistic(kind)(o)
            v = o.astype(np.float64)
            want = {"sum": v.sum(axis=1), "max": v.max(axis=1), "min": v.min(axis=1),
                    "argmax": v.argmax(axis=1).astype(np.float64)}[kind]
            assert got.dtype == np.float64
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.bool_, np.int64, np.float64])
def test_the_column_stores_statistics_equal_the_statistics_of_each_half(dtype):
    """A search's row statistics from its column store (``SortedColumns.feature``: small integers from one
    transposed copy of each half, shared by every statistic; floats from the float64 columns) are the statistic of
    the half itself, on all four halves; other features (a column, a 64-bit integer's statistic) are computed on the
    half as before, and the store makes one transposed copy per half."""
    from dpverify.statistical.columns import SortedColumns
    from dpverify.statistical.features import Column, Statistic
    rng = np.random.default_rng(12)
    lo, hi = (0, 1) if dtype is np.bool_ else (-5, 9) if np.dtype(dtype).kind != "u" else (0, 9)
    for k in (1, 6, 33):
        halves = [rng.integers(lo, hi, size=(300 + 7 * i, k), endpoint=True).astype(dtype) for i in range(4)]
        halves[1][4] = halves[1][4, 0]                       # a row of ties
        store = SortedColumns(*halves)
        for i, h in enumerate(halves):
            for f in [Statistic(kind) for kind in ("sum", "max", "min", "argmax")] + [Column(k - 1)]:
                got = store.feature(f, h, i)
                assert got.dtype == np.float64
                np.testing.assert_array_equal(got, f(h))
        if np.dtype(dtype).kind in "biu" and np.dtype(dtype).itemsize <= 4:
            assert store.transposed(2) is store.transposed(2)
            np.testing.assert_array_equal(store.transposed(3), halves[3].T)
            assert store.transposed(3).flags.c_contiguous and store.transposed(3).dtype == halves[3].dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_statistics_by_columns_equal_those_of_the_rows(dtype):
    """max / min / argmax of float outputs are taken on a transposed copy: the same values as numpy's row reductions
    (NaN read as +inf, ties of argmax -- including -0.0 against 0.0 -- at the first maximum, infinities kept); sum
    keeps the rows' own order of summation, bit for bit."""
    from dpverify.statistical.features import Statistic
    rng = np.random.default_rng(9)
    for k in (1, 5, 10, 40):
        o = rng.laplace(0.0, 3.0, size=(600, k)).round(1).astype(dtype)
        o[rng.random(o.shape) < 0.02] = np.nan
        o[rng.random(o.shape) < 0.02] = -np.inf
        o[rng.random(o.shape) < 0.02] = -0.0
        o[3] = o[3, 0]                                      # a row of ties
        o[4] = np.nan                                       # a row of NaN
        if k > 1:
            o[5, :2] = (-0.0, 0.0)
            o[5, 2:] = -1.0
        v = np.where(np.isnan(o.astype(np.float64)), np.inf, o.astype(np.float64))
        for kind in ("sum", "max", "min", "argmax"):
            got = Statistic(kind)(o)
            want = {"sum": np.where(np.isnan(v.sum(axis=1)), np.inf, v.sum(axis=1)), "max": v.max(axis=1),
                    "min": v.min(axis=1), "argmax": v.argmax(axis=1).astype(np.float64)}[kind]
            assert got.dtype == np.float64 and got.shape == (600,)
            np.testing.assert_array_equal(got, want)


def test_sorted_quantiles_are_numpys_quantiles():
    """The product-ratio fit's quartiles from its sorted pooled sample: bit for bit np.quantile's (linear method)
    on continuous, discrete, tiny and infinite-valued samples."""
    from dpverify.statistical.cells import sorted_quantiles
    rng = np.random.default_rng(9)
    qs = (0.25, 0.5, 0.75, 0.0, 1.0, 0.1)
    samples = [rng.laplace(size=n) for n in (1, 2, 3, 7, 1000, 99_999)]
    samples += [rng.integers(0, 3, 5000).astype(float), np.r_[-np.inf, rng.normal(size=10), np.inf],
                np.full(17, 2.5), rng.normal(size=1001) * 1e300]
    grids = [qs] + [np.linspace(0, 1, bins + 1)[1:-1] for bins in (2, 8, 16, 33)] + [rng.uniform(size=50)]
    samples += [rng.normal(size=n) for n in rng.integers(1, 400, 40)]
    samples += [rng.integers(-5, 5, size=n) for n in (1, 9, 300)]                 # integers too
    for a in samples:
        a = np.sort(a)
        for grid in grids:
            with np.errstate(invalid="ignore"):
                np.testing.assert_array_equal(sorted_quantiles(a, grid), np.quantile(a, grid))


def test_linear_score_in_blocks_is_the_score_of_each_row():
    """:class:`LinearScore` computes in blocks of rows: each row's score is ``coef . (o - mean) / scale +
    intercept``, non-finite coordinates as documented (NaN as 0, ±inf as ±1e300) and a NaN score as +inf, on
    batches longer and shorter than a block."""
    from dpverify.statistical.features import _BLOCK, LinearScore
    rng = np.random.default_rng(6)
    score = LinearScore((0.5, -1.0, 0.0), (1e-10, 1.0, 1e-10), (1.0, -0.5, 0.25), 0.1)
    for n in (1, 17, _BLOCK, 2 * _BLOCK + 5):
        o = rng.laplace(size=(n, 3))
        o[::11, 0] = np.nan
        o[::13, 1] = np.inf
        if n > 3:
            o[2] = [np.inf, -np.inf, 0.0]                # 1e300 / 1e-10 overflows: +inf
            o[3] = [np.inf, 0.0, -np.inf]                # +inf - inf: NaN, reported +inf
        v = np.where(np.isfinite(o), o, np.where(np.isnan(o), 0.0, np.sign(o) * 1e300))
        with np.errstate(over="ignore", invalid="ignore"):
            want = ((v - np.array(score.mean)) / np.array(score.scale)) @ np.array(score.coef) + score.intercept
        want = np.where(np.isnan(want), np.inf, want)
        np.testing.assert_allclose(score(o), want, rtol=1e-12, atol=0)
        if n > 3:
            assert score(o)[3] == np.inf
    # a scale so small that coef / scale overflows: the score centres each entry first, as the formula says
    tiny = LinearScore((0.0, 1.0), (1e-320, 1.0), (2.0, -1.0), 0.5)
    o = np.array([[0.0, 3.0], [1e-318, 1.0], [-1e-319, -2.0]])
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        want = ((o - np.array(tiny.mean)) / np.array(tiny.scale)) @ np.array(tiny.coef) + tiny.intercept
    np.testing.assert_allclose(tiny(o), want, rtol=1e-12, atol=0)


def test_learned_score_fits_the_rows_the_concatenation_would_give():
    """The LR fit gathers its subsample's rows from each side instead of concatenating every output: the same
    rows, hence the same score, as subsampling the concatenation (NaN coordinates included)."""
    from sklearn.linear_model import LogisticRegression
    from dpverify.statistical import learned as S
    rng = np.random.default_rng(7)
    o0 = rng.laplace(size=(S.LR_FIT_SAMPLES + 3000, 2))
    o1 = rng.laplace(size=(S.LR_FIT_SAMPLES + 5000, 2)) + 0.3
    o0[::50, 1], o1[::70, 0] = np.nan, np.nan
    got = S.fit_linear_score(o0, o1, np.random.default_rng(1))
    X = np.concatenate([o0, o1])
    X = np.where(np.isfinite(X), X, np.where(np.isnan(X), 0.0, np.sign(X) * 1e300))
    y = np.r_[np.zeros(len(o0)), np.ones(len(o1))]
    idx = np.random.default_rng(1).choice(len(X), 2 * S.LR_FIT_SAMPLES, replace=False)
    X, y = X[idx], y[idx]
    mean, scale = X.mean(axis=0), X.std(axis=0)
    model = LogisticRegression(max_iter=200, solver="newton-cholesky").fit((X - mean) / scale, y)
    assert got is not None and got.mean == tuple(mean) and got.scale == tuple(scale)
    np.testing.assert_allclose(got.coef, model.coef_[0], rtol=1e-9)


@pytest.mark.parametrize("n,shift,d", [(64, 0.1, 5), (2000, 0.3, 5), (30_000, 0.05, 5), (500, 3.0, 3), (800, 50.0, 2),
                                       (1500, 0.2, 40), (1000, 0.0, 4)])
def test_logistic_newton_is_scikit_learns_fit(n, shift, d):
    """learned.logistic_newton takes scikit-learn's Newton steps (``LogisticRegression(solver="newton-cholesky")``,
    C = 1, tol 1e-4): the same coefficients and intercept to 1e-10 on weak, strong and perfectly separated shifts
    (800 rows at 50 scales apart), many columns and no shift at all; at a tight tolerance both reach the same
    minimiser (deterministic)."""
    from sklearn.linear_model import LogisticRegression
    from dpverify.statistical.learned import logistic_newton
    rng = np.random.default_rng(n + d)
    X = rng.laplace(size=(2 * n, d))
    X[:n, 0] += shift
    y = np.r_[np.zeros(n), np.ones(n)]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    for tol in (1e-4, 1e-10):
        model = LogisticRegression(max_iter=500, solver="newton-cholesky", tol=tol).fit(X, y)
        coef, intercept = logistic_newton(X, y, tol=tol)
        np.testing.assert_allclose(coef, model.coef_[0], rtol=0, atol=1e-10)
        assert abs(intercept - model.intercept_[0]) < 1e-10


def test_cells_group_by_discrete_part_and_isolate_point_masses():
    rng = np.random.default_rng(1)
    n = 20_000
    code = rng.integers(0, 3, size=n).astype(float)
    value = np.where(code == 2, 0.0, rng.normal(size=n))          # group 2: a point mass at 0
    rows = np.stack([code, value], axis=1)
    part = fit_cells(rows[: n // 2], rows[n // 2:])
    assert part is not None and part.discrete == (0,) and part.continuous == (1,)
    cells = part.cells(rows)
    assert len(np.unique(cells[code == 2])) == 1                   # the atom is one cell
    assert not set(np.unique(cells[code == 2])) & set(np.unique(cells[code != 2]))
    ev = CellSetEvent(part, (int(cells[0]),))
    assert ev.contains(rows).sum() == (cells == cells[0]).sum()
    assert "discrete part" in ev.description


# ------------------------------------------------------------------- two-sided tails and monotone cells
def scale_leak(x, n, rng, epsilon=0.1):
    """A mean whose Laplace scale depends on the (private) count: under add/remove the two laws have one centre
    and different spreads, so the loss grows in both tails (true ε = ∞); its level sets are two-sided tails."""
    return 0.5 + rng.laplace(0.0, 1.0 / (len(np.atleast_1d(x)) * epsilon), size=n)


def test_two_sided_tail_events_count_both_ends():
    from dpverify.statistical.events import IntervalEvent
    from dpverify.statistical.features import Identity
    from dpverify.statistical.search import search_events
    from dpverify.statistical.stats import normal_quantile

    ev = IntervalEvent(Identity(), -1.0, 2.0, outside=True)
    v = np.array([-3.0, -1.0, 0.0, 2.0, 2.5, np.nan])
    assert ev.contains(v).tolist() == [True, False, False, False, True, True]   # NaN is +inf to every feature
    assert ev.description == "out < -1 or out > 2"
    rng = np.random.default_rng(0)
    o0, o1 = scale_leak(np.zeros(3), 400_000, rng), scale_leak(np.zeros(4), 400_000, rng)
    cands, _, _ = search_events(o0, o1, n_test=2_000_000, z=normal_quantile(0.05 / 6), delta=0.0, rng=rng)
    outside = [c for c in cands if isinstance(c.event, IntervalEvent) and c.event.outside and c.direction == 0]
    assert outside, "the two-sided tail family proposes an event"
    c = outside[0]
    assert c.event.low < 0.5 < c.event.high and c.count_num > c.count_den   # wider law: more mass in both tails


def test_scale_leak_is_flagged_with_the_two_sided_family():
    """Power at a fixed seed (true ε = ∞; the claim 0.1 is exceeded by a factor > 10 on these pairs)."""
    pairs = [(np.zeros(3), np.zeros(4))]
    r = dpverify.audit(scale_leak, pairs, epsilon=0.1, samples=1_000_000, search_samples=400_000, seed=3)
    assert r.violation and r.epsilon_lower_bound > 1.5


def test_monotone_log_ratio_pools_adjacent_cells_within_each_group():
    from dpverify.statistical.search import monotone_log_ratio

    an = np.array([50, 40, 41, 20, 5, 1, 9, 10, 20])      # group 0: cells 0..4, group 1: cells 5..8
    ad = np.array([10, 20, 19, 20, 20, 9, 9, 5, 5])
    fit = monotone_log_ratio(an, ad, np.array([0, 5, 9]))
    assert np.all(np.diff(fit[:5]) <= 1e-12)               # group 0 decreasing
    assert np.all(np.diff(fit[5:]) >= -1e-12)              # group 1 increasing
    assert fit[1] == fit[2]                                # a violation of monotonicity is pooled
    raw = np.log((an + 0.5) / (ad + 0.5))
    assert fit[0] == pytest.approx(raw[0]) and fit[8] == pytest.approx(raw[8])


def test_cell_set_event_is_membership_of_the_cells_it_lists():
    """``CellSetEvent.contains`` (a lookup table over the cells) and ``CellPartition.cells`` (one group: a plain
    search of the bins) agree with a per-group search and ``np.isin``, with and without a discrete part."""
    from dpverify.statistical.cells import CellSetEvent, fit_cells

    rng = np.random.default_rng(0)
    for discrete in (False, True):
        a, b = rng.laplace(size=(20_000, 3)), rng.laplace(size=(20_000, 3)) + 0.3
        x = rng.laplace(size=(50_000, 3))
        if discrete:
            a[:, 0], b[:, 0], x[:, 0] = rng.integers(0, 3, 20_000), rng.integers(0, 3, 20_000), rng.integers(0, 4, 50_000)
        part = fit_cells(a, b)
        assert (len(part.edges) > 1) == discrete
        g, f, off = part.group_of(x), part.feature(x), part.offsets()
        ref = np.empty(len(x), dtype=np.intp)
        for k, e in enumerate(part.edges):
            ref[g == k] = off[k] + np.searchsorted(np.asarray(e), f[g == k], "right")
        assert (part.cells(x) == ref).all()
        ev = CellSetEvent(part, tuple(sorted(rng.choice(part.n_cells, 7, replace=False).tolist())))
        assert (ev.contains(x) == np.isin(ref, np.asarray(ev.cells))).all()


def test_g_test_pvalue_is_chi2_contingencys():
    """The product-ratio fit's G-test equals scipy's chi2_contingency(lambda_="log-likelihood") p-value (Yates'
    correction at one degree of freedom included) on random tables, equal and unequal laws (deterministic)."""
    from scipy import stats

    from dpverify.statistical.cells import g_test_pvalue

    rng = np.random.default_rng(7)
    for _ in range(500):
        m = int(rng.integers(2, 6))
        p0 = rng.dirichlet(np.ones(m))
        p1 = p0 if rng.random() < 0.5 else rng.dirichlet(np.ones(m))
        t0, t1 = rng.multinomial(int(rng.integers(1, 3000)), p0), rng.multinomial(int(rng.integers(1, 3000)), p1)
        used = (t0 + t1) > 0
        if used.sum() < 2:
            continue
        expected = stats.chi2_contingency(np.stack([t0[used], t1[used]]), lambda_="log-likelihood")[1]
        assert g_test_pvalue(t0[used], t1[used]) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_distinct_rows_counts_or_says_more_than_the_limit():
    from dpverify.statistical.events import unique_rows
    from dpverify.statistical.search import _distinct_rows

    rng = np.random.default_rng(3)
    few = rng.integers(0, 3, size=(1000, 3)).astype(float)
    assert _distinct_rows(few, 100) == len(unique_rows(few)[0]) == 27
    assert _distinct_rows(few, 10) == 11                                   # 27 rows > 10
    mixed = np.column_stack([rng.integers(0, 2, 1000), rng.normal(size=1000)])
    assert _distinct_rows(mixed, 50) == 51
    zeros = np.array([[0.0], [-0.0], [np.nan], [np.nan]])                   # bitwise: 0.0, -0.0 and NaN differ
    assert _distinct_rows(zeros, 10) == len(unique_rows(zeros)[0]) == 3


def test_families_at_once_choose_what_one_at_a_time_chooses():
    """CandidateSearch.families scores all families in one call, and _scalar_features every feature's families in
    one call; the candidates (events, counts, scores, order) are those of calling family once per family."""
    from dpverify.statistical.projection import ProjectedBound
    from dpverify.statistical.search import CandidateSearch, _scalar_feature, _scalar_features
    from dpverify.statistical.features import Column, Statistic

    rng = np.random.default_rng(11)
    o0, o1 = rng.laplace(0.0, 1.0, (4000, 2)), rng.laplace(0.3, 1.0, (4000, 2))
    halves = (o0[:2000], o1[:2000], o0[2000:], o1[2000:])

    features = [Column(0), Column(1), Statistic("max")]

    def run(batched: bool, all_features: bool = False):
        search = CandidateSearch(ProjectedBound(2000, 10_000, 2.0, 0.0), ProjectedBound(2000, 10_000, 2.0, 0.0))
        if not batched:
            search.families = lambda specs: [search.family(*sp) for sp in specs]   # type: ignore[method-assign]
            original = CandidateSearch.families
            search.family = lambda *a: original(search, [a])                      # type: ignore[method-assign]
        if all_features:
            _scalar_features(features, halves, search)
        else:
            for f in features:
                _scalar_feature(f, halves, search)
        return [(c.event.description, c.direction, c.count_num, c.count_den, c.score, c.group) for c in search.finish()]

    batched, one_by_one, all_at_once = run(True), run(False), run(True, True)
    assert batched == one_by_one == all_at_once and len(batched) >= 12


def test_cell_edges_of_a_sorted_sample_match_the_sorting_reference():
    """_edges reads the distinct values and point masses of its sorted input in linear passes; the edges are those of
    the reference computation with np.unique / np.isin / np.sort (deterministic)."""
    from dpverify.statistical.cells import TAIL_CELL, _edges, tail_ranks

    def reference(values_sorted, bins, tails=True):
        v = values_sorted[np.isfinite(values_sorted)]
        if len(v) == 0:
            return ()
        uniq, counts = np.unique(v, return_counts=True)
        atoms = uniq[counts >= max(2, len(v) // 1000)]
        single = v[~np.isin(v, atoms)]
        qs = np.quantile(single, np.linspace(0, 1, bins + 1)[1:-1]) if len(single) and bins > 1 else np.zeros(0)
        tail_edges = np.zeros(0)
        if tails and len(single) and bins > 1:
            s = np.sort(single)
            r = tail_ranks(len(s) // bins, first=TAIL_CELL)
            tail_edges = np.concatenate([s[r + 1], s[len(s) - 2 - r]]) if len(r) else tail_edges
        e = np.concatenate([qs, tail_edges, atoms, np.nextafter(atoms, np.inf)])
        return tuple(float(t) for t in np.unique(e))

    rng = np.random.default_rng(5)
    for n in (0, 1, 50, 3000, 40_000):
        v = rng.laplace(size=n)
        v[rng.random(n) < 0.2] = 0.0                      # a point mass
        v[rng.random(n) < 0.01] = np.inf                  # a NaN mapped to +inf by the callers
        v = np.sort(np.round(v, 2 if n == 3000 else 12))  # many ties at n = 3000
        for bins, tails in ((1, True), (16, False), (64, True)):
            assert _edges(v, bins, tails) == reference(v, bins, tails)


def test_cell_set_event_by_comparisons_equals_the_lookup_table():
    """A one-group CellSetEvent of few runs of cells is counted by comparing the feature with the runs' ends; the
    rows it contains are those of the cell lookup (random partitions and cell sets, ties on the edges, NaN and inf
    rows; deterministic)."""
    from dpverify.statistical.cells import MAX_RUNS, CellPartition, CellSetEvent, _runs

    rng = np.random.default_rng(9)
    for _ in range(200):
        edges = tuple(float(t) for t in np.unique(np.round(rng.normal(size=int(rng.integers(1, 30))), 1)))
        part = CellPartition((), (0,), (), (edges,))
        out = np.round(rng.normal(size=5000), 1)                 # many outputs exactly on an edge
        out[rng.random(5000) < 0.01] = np.nan
        out[rng.random(5000) < 0.01] = -np.inf
        k = int(rng.integers(0, part.n_cells + 1))
        cells = tuple(int(c) for c in rng.choice(part.n_cells, size=k, replace=False))
        lookup = np.zeros(part.n_cells, dtype=bool)
        lookup[list(cells)] = True
        expected = lookup[part.cells(out)]
        assert np.array_equal(CellSetEvent(part, cells).contains(out), expected)
        if len(_runs(cells)) <= MAX_RUNS:
            assert _runs(cells) == sorted(_runs(cells))


def test_product_ratio_score_bins_few_edges_as_searchsorted_does():
    """Coordinates with few edges are binned by comparisons; the score equals the binary-search binning's (bits,
    small integers with NaN and inf, a continuous coordinate, one with more edges than FEW_EDGES and NaNs;
    deterministic)."""
    from dpverify.statistical.cells import FEW_EDGES, ProductRatioScore, _finite

    rng = np.random.default_rng(13)
    bits = rng.integers(0, 2, 4000).astype(float)
    small = rng.integers(-1, 3, 4000).astype(float)
    small[rng.random(4000) < 0.02] = np.nan
    small[rng.random(4000) < 0.02] = -np.inf
    cont = rng.normal(size=4000)
    wide = rng.normal(size=4000)
    wide[::37] = np.nan
    rows = np.column_stack([bits, small, cont, wide])
    edges = ((0.0, np.nextafter(0.0, 1.0), 1.0, np.nextafter(1.0, 2.0)), (-1.0, 0.0, 1.0, 2.0, 2.5),
             tuple(float(t) for t in np.linspace(-2, 2, 15)),
             tuple(float(t) for t in np.linspace(-2, 2, FEW_EDGES + 10)))
    assert max(len(e) for e in edges[:3]) <= FEW_EDGES < len(edges[3])
    ratios = tuple(tuple(float(x) for x in rng.normal(size=len(e) + 1)) for e in edges)
    score = ProductRatioScore((0, 1, 2, 3), edges, ratios)
    expected = sum(np.asarray(r)[np.searchsorted(np.asarray(e), _finite(rows[:, j]), "right")]
                   for j, e, r in zip(range(4), edges, ratios))
    assert np.array_equal(score(rows), expected)
    # one-byte integer outputs (RAPPOR's bits, int8 counts) are binned by a table of every value of their type
    for dtype in (np.int8, np.uint8, np.bool_):
        ints = rng.integers(0, 2, size=(4000, 2)) if dtype is np.bool_ else rng.integers(0, 4, size=(4000, 2))
        if dtype is np.int8:
            ints = ints - 2
        ints = ints.astype(dtype)
        two = ProductRatioScore((0, 1), edges[:2], ratios[:2])
        assert np.array_equal(two(ints), two(ints.astype(np.float64)))


def test_sorted_values_never_sorts_the_outputs_in_place():
    """``sorted_values`` sorts a fresh array of a feature in place (no copy) but never the outputs themselves, nor a
    view of them (a column of float outputs, the Identity of scalar outputs)."""
    from dpverify.statistical.features import Column, Identity, Statistic, sorted_values
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(200, 3))
    kept = rows.copy()
    for feature, src in ((Column(1), rows), (Identity(), rows[:, 0]), (Identity(), rows[:, 0].copy())):
        before = src.copy()
        got = sorted_values(feature(src), src)
        np.testing.assert_array_equal(got, np.sort(feature(before)))
        np.testing.assert_array_equal(src, before)
        assert got is not src
    np.testing.assert_array_equal(rows, kept)
    fresh = Statistic("sum")(rows)
    assert sorted_values(fresh, rows) is fresh and np.all(np.diff(fresh) >= 0)
