"""The clipped sums of dpverify/statistical/anchors.py beyond the inputs' own answers: the view of the first
differences (running sums of noisy answers), the view at the columns' medians (answers the inputs do not give),
and the column-by-column computation the search shares its copies with."""

import numpy as np
import pytest

from algorithms.classic.prefix_sum import PrefixSum
from dpverify.statistical.anchors import ClippedSum, clipped_sum, clipped_sums, input_anchors, median_clipped_sum
from dpverify.statistical.columns import SortedColumns
from dpverify.statistical.features import finite_view, transposed_copy
from dpverify.statistical.search import rank_candidates, search_events


def test_the_differences_view_is_the_loss_of_running_sums_of_laplace_answers():
    """PrefixSum releases cumsum(x + Lap(b)): ln f_x0(o) - ln f_x1(o) = C - (2/b) * clipped-sum(Δo) exactly (its own
    log density), on points anywhere and on its own outputs, coordinates moving up, down, unequally or not at all."""
    m = PrefixSum(0.5)
    b = m.scale
    x0 = np.array([0.0, 1.0, 3.0, -2.0, 5.0, 0.5])
    x1 = np.array([1.0, 0.0, 3.0, 2.0, 4.5, 0.5])
    f = clipped_sum(input_anchors(x0, x1), (6,), differences=True)
    assert f.name == "clipped-sum(Δout)" and f.columns == (0, 1, 3, 4) and f.weights == (1.0, -1.0, 1.0, -1.0)
    rng = np.random.default_rng(12)
    o = np.concatenate([np.cumsum(rng.uniform(-4.0, 7.0, (500, 6)), axis=1), m(x0, 500, rng)])
    loss = m.log_density(x0, o) - m.log_density(x1, o)
    c = sum(w * (x0[j] + x1[j]) for j, w in zip(f.columns, f.weights)) / b
    np.testing.assert_allclose(loss, c - 2.0 / b * f(o), rtol=0, atol=1e-9)
    # the raw view at the same anchors is not the loss of this mechanism (the answers are the running sums)
    raw = clipped_sum(input_anchors(x0, x1), (6,))
    assert np.abs(np.corrcoef(loss, raw(o))[0, 1]) < 0.99


def test_where_the_differences_view_exists():
    """One differing coordinate suffices (its difference is no column), unless it is the first (o_0 is a column);
    none for scalar inputs (they anchor every column, not a difference) or rows of one column."""
    assert clipped_sum(input_anchors([0.0, 0.0, 1.0], [0.0, 0.0, 2.0]), (3,), True).columns == (2,)
    assert clipped_sum(input_anchors([0.0, 0.0, 1.0], [0.0, 0.0, 2.0]), (3,)) is None
    assert clipped_sum(input_anchors([1.0, 0.0, 0.0], [2.0, 0.0, 0.0]), (3,), True) is None
    assert clipped_sum(input_anchors(0.0, 1.0), (3,), True) is None
    assert clipped_sum(input_anchors([0.0], [1.0]), (1,), True) is None


@pytest.mark.parametrize("differences", [False, True])
@pytest.mark.parametrize("columns", [(0, 1, 2, 3, 4, 5, 6, 7), (2, 3, 4), (0, 5, 7), (1,), (3, 7)])
def test_the_search_copies_give_the_rows_values_bitwise(columns, differences):
    """``on_columns`` (the search's shared float64 columns, NaN as +inf) and ``__call__`` (on the rows) give the
    same values bit for bit, with NaN and infinities among the outputs; NaN counts as +inf before clipping, and a
    difference of two +inf makes the row +inf."""
    rng = np.random.default_rng(13)
    x = rng.laplace(0.0, 3.0, (3000, 8))
    x[rng.random(x.shape) < 0.05] = np.nan
    x[rng.random(x.shape) < 0.02] = np.inf
    x[rng.random(x.shape) < 0.02] = -np.inf
    f = ClippedSum(columns, tuple(rng.uniform(-2, 0, len(columns))), tuple(rng.uniform(0, 2, len(columns))),
                   tuple(rng.choice([-1.0, 1.0], len(columns))), differences)
    rows = f(x)
    assert np.array_equal(rows, f.on_columns(x, finite_view(transposed_copy(x))))
    store = SortedColumns(x[:1500], x[1500:], x[:1500], x[1500:])
    assert np.array_equal(rows[:1500], store.feature(f, x[:1500], 0))
    v = np.where(np.isnan(x), np.inf, x)
    if differences:
        with np.errstate(invalid="ignore"):
            v = np.diff(v, axis=1, prepend=0.0)
    with np.errstate(invalid="ignore"):
        ref = np.clip(v[:, list(columns)], f.low, f.high) @ np.asarray(f.weights)
    np.testing.assert_allclose(rows, np.where(np.isnan(ref), np.inf, ref), rtol=1e-12, atol=1e-12)
    assert not np.isnan(rows).any()


def _running_counts(x, n, rng, scale=4.0):
    """Noisy running counts: cumsum(x) + Lap(scale) on each released count (the noise on the sums, not the
    increments)."""
    return np.cumsum(np.asarray(x, float)) + rng.laplace(0.0, scale, (n, len(x)))


def test_the_medians_view_finds_answers_the_inputs_do_not_give():
    """Running counts of one increment more at the start: every released count moves by 1, and the medians of each
    column under the two inputs (8 192 rows: about 0.05 apart from the answers at scale 4) are the bounds; the
    inputs' raw view clips at the increments (0 and 1 in the first column only: none) and the differences move in
    the first column only (none)."""
    rng = np.random.default_rng(14)
    x0, x1 = np.zeros(8), np.r_[1.0, np.zeros(7)]
    o0, o1 = _running_counts(x0, 20_000, rng), _running_counts(x1, 20_000, rng)
    f = median_clipped_sum(o0, o1)
    assert f is not None and f.name == "clipped-sum(out, medians)" and f.columns == tuple(range(8))
    assert f.weights == (1.0,) * 8
    np.testing.assert_allclose(f.low, 0.0, atol=0.25)
    np.testing.assert_allclose(f.high, 1.0, atol=0.25)
    assert median_clipped_sum(o0, o1, differences=True) is None
    assert [g.name for g in clipped_sums(input_anchors(x0, x1), o0, o1)] == ["clipped-sum(out, medians)"]


def test_the_medians_view_is_left_out_where_it_says_nothing_new():
    """No feature from noise alone (one law under both inputs), from one moving column (that column's own events),
    from integer columns whose medians are equal, or where the medians agree with the inputs' answers (the inputs'
    view is the same feature, exact)."""
    rng = np.random.default_rng(15)
    same = rng.laplace(0.0, 4.0, (2, 20_000, 6))
    assert median_clipped_sum(same[0], same[1]) is None and median_clipped_sum(same[0], same[1], True) is None
    one = same[1].copy()
    one[:, 2] += 3.0
    assert median_clipped_sum(same[0], one) is None
    assert median_clipped_sum(same[0], one, differences=True) is not None        # Δ2 and Δ3 move: a joint event
    ints = rng.integers(0, 3, (2, 20_000, 4))
    assert median_clipped_sum(ints[0], ints[1]) is None
    x0, x1 = np.zeros(6), np.ones(6)
    o0, o1 = x0 + rng.laplace(0.0, 4.0, (20_000, 6)), x1 + rng.laplace(0.0, 4.0, (20_000, 6))
    assert median_clipped_sum(o0, o1) is not None
    names = [g.name for g in clipped_sums(input_anchors(x0, x1), o0, o1)]
    assert names == ["clipped-sum(out)", "clipped-sum(Δout)"]        # the inputs' views; no medians view of either
    assert median_clipped_sum(np.zeros((5, 1)), np.ones((5, 1))) is None                # one column
    assert median_clipped_sum(np.zeros(5), np.ones(5)) is None                          # scalar outputs


def test_the_search_without_anchors_ranks_the_medians_view_among_the_best():
    """Running counts of 16 releases at scale 16, one more increment at the start (no anchors: the inputs' raw
    view does not apply): the loss is the clipped sum at the running counts, so the medians view's events rank
    among the five best of the search's candidates (fixed seed; the optimism-corrected ranking of the audit)."""
    rng = np.random.default_rng(16)
    x0, x1 = np.zeros(16), np.r_[1.0, np.zeros(15)]
    o0, o1 = _running_counts(x0, 40_000, rng, 16.0), _running_counts(x1, 40_000, rng, 16.0)
    found, _, _ = search_events(o0, o1, n_test=1_000_000, z=2.0, delta=0.0, rng=np.random.default_rng(0))
    ours = [c for c in found if c.event.description.startswith("clipped-sum(out, medians)")]
    ranks = rank_candidates(found, 20_000, 1_000_000, 2.0, 0.0)
    top = [found[i] for i in np.argsort(-ranks, kind="stable")[:5]]
    assert ours and any(c in ours for c in top)
