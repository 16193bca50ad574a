"""The event search's counting shortcuts agree with the plain numpy definitions they replace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpverify.statistical.events import _unique_inverse, row_keys, rows_in, unique_rows
from dpverify.statistical.cells import block_argmax, sorted_distinct
from dpverify.statistical.search import _Ranks, search_events

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
small = st.sampled_from([-1.0, -0.0, 0.0, 0.5, 2.0, np.nan, np.inf])


@settings(max_examples=300, derandomize=True)
@given(st.one_of(arrays(np.float64, st.integers(0, 40), elements=floats),
                 arrays(np.float64, st.integers(0, 40), elements=small),
                 arrays(np.float64, st.integers(0, 40), elements=floats, unique=True),
                 arrays(np.int64, st.integers(0, 40), elements=st.integers(-3, 3)),
                 arrays(np.int64, st.integers(0, 40), elements=st.integers(-10**6, 10**6), unique=True)))
def test_sorted_unique_is_np_unique(values: np.ndarray) -> None:
    """``sorted_distinct`` of a sorted array is ``np.unique`` with counts: floats with NaN, infinities and both
    zeros, all-distinct samples (their own path) and integers; a fresh array, never the input."""
    s = np.sort(values)
    uniq, counts = sorted_distinct(s)
    ref_u, ref_c = np.unique(s, return_counts=True)
    np.testing.assert_array_equal(uniq, ref_u)
    np.testing.assert_array_equal(counts, ref_c)
    assert not np.signbit(uniq[uniq == 0]).any(), "zero must be reported as 0.0"
    assert counts.dtype == np.int64 and not np.shares_memory(uniq, s)


@settings(max_examples=300, derandomize=True)
@given(st.lists(st.lists(st.sampled_from([-np.inf, -1.0, 0.0, 0.0, 2.5, 2.5, np.inf, np.nan]), min_size=1,
                         max_size=6), min_size=1, max_size=8))
def test_block_argmax_is_argmax_of_each_block(blocks: list[list[float]]) -> None:
    """``block_argmax``: per block, ``np.argmax`` (the first maximum; the first NaN where there is one) and whether
    the value there is finite -- ties, NaN and infinities included."""
    s = np.concatenate([np.array(b) for b in blocks])
    best, ok = block_argmax(s, np.array([len(b) for b in blocks]))
    for b, i, finite in zip(blocks, best, ok):
        ref = int(np.argmax(b))
        assert finite == bool(np.isfinite(b[ref]))
        if finite:
            assert i == ref


@settings(max_examples=200, derandomize=True)
@given(arrays(np.float64, st.integers(0, 40), elements=small),
       arrays(np.float64, 5, elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0, np.inf, -np.inf])))
def test_threshold_counts_exclude_nan(values: np.ndarray, t: np.ndarray) -> None:
    """``_Ranks``: the counts of ``v <= t``, ``v >= t`` and ``a <= v <= b`` on a sorted half (NaNs never counted)
    from its ranks at the grid points, for every threshold and every pair of grid points."""
    s = np.sort(values)
    grid = np.unique(t)
    r = _Ranks(s, grid)
    for k, tk in enumerate(grid):
        assert r.ge()[k] == np.count_nonzero(values >= tk)
        assert r.le()[k] == np.count_nonzero(values <= tk)
    lo, hi = np.triu_indices(len(grid))
    got = r.between(lo, hi)
    for a, b, n in zip(lo, hi, got):
        assert n == np.count_nonzero((values >= grid[a]) & (values <= grid[b]))


def test_candidate_counts_are_the_events_counts_on_the_scoring_half() -> None:
    """Each candidate's scoring counts are those of its event on the second half of the sample."""
    rng = np.random.default_rng(7)
    n = 4000
    o0 = np.round(rng.laplace(size=(n, 3)), 1)
    o0[rng.random(n) < 0.1, 0] = np.nan
    o1 = np.round(rng.laplace(size=(n, 3)) + 0.3, 1)
    found, scored, _ = search_events(o0, o1, n_test=10**5, z=3.0, delta=0.0, nan_outcome=True,
                                     rng=np.random.default_rng(1))
    assert found and scored > 0
    h = n // 2
    for c in found:
        k0 = int(np.count_nonzero(c.event.contains(o0[h:])))
        k1 = int(np.count_nonzero(c.event.contains(o1[h:])))
        assert (c.count_num, c.count_den) == ((k0, k1) if c.direction == 0 else (k1, k0)), c.event.description


def test_vector_outputs_with_few_outcomes_are_searched_by_outcome_unions_alone() -> None:
    """SVT-like codes (one ⊤ at a random position, or none: 11 outcomes) get only outcome-union candidates -- every
    event is a union of outcomes, and the likelihood-ratio prefix unions hold the best -- and the union found is
    the one that tells the inputs apart (first position ⊤ far likelier under x0)."""
    from dpverify.statistical.search import UNIONS_SUFFICE

    rng = np.random.default_rng(3)
    n, k = 20_000, 10

    def codes(p_first: float) -> np.ndarray:
        out = np.full((n, k), -1, dtype=np.int8)
        pos = np.where(rng.random(n) < p_first, 0, rng.integers(1, k + 1, n))   # k: no ⊤ at all
        out[:, :] = 0
        rows = np.flatnonzero(pos < k)
        out[rows, pos[rows]] = 1
        after = np.arange(k)[None, :] > pos[:, None]
        out[after] = -1
        return out

    o0, o1 = codes(0.3), codes(0.1)
    assert len(unique_rows(np.concatenate([o0, o1]))[0]) <= UNIONS_SUFFICE
    found, _, kind = search_events(o0, o1, n_test=10**5, z=3.0, delta=0.0, rng=np.random.default_rng(1))
    assert kind == "discrete" and found
    assert {c.family for c in found} == {"outcomes"}
    best = max(found, key=lambda c: c.score)
    assert best.direction == 0 and best.score > 0.9          # ln(0.3 / 0.1) = 1.1 on the first-position event


row_values = st.sampled_from([0.0, -0.0, 1.0, 2.5, np.nan, np.inf, -1.0])


@settings(max_examples=300, derandomize=True)
@given(st.integers(1, 30), st.integers(1, 4), st.data())
def test_unique_rows_matches_void_keys(n: int, k: int, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([np.float64, np.int64, np.int32, np.bool_, np.float32]))
    elems = row_values if np.dtype(dtype).kind == "f" else st.integers(0, 3).map(lambda v: v % 2 if dtype is np.bool_ else v)
    out = data.draw(arrays(dtype, (n, k), elements=elems))
    first, inverse = unique_rows(out)
    _, ref_first, ref_inverse = np.unique(row_keys(out), return_index=True, return_inverse=True)
    np.testing.assert_array_equal(first, ref_first)
    np.testing.assert_array_equal(inverse, ref_inverse.ravel())
    sub = out[: max(1, n // 2)] if n else out
    np.testing.assert_array_equal(rows_in(out, sub), np.isin(row_keys(out), row_keys(sub)))


def test_row_codes_survive_many_wide_columns() -> None:
    """40 columns of 50 000 distinct values each: the mixed-radix key is compressed instead of overflowing."""
    rng = np.random.default_rng(3)
    out = rng.integers(0, 50_000, size=(3000, 40))
    out[1000:2000] = out[:1000]
    first, inverse = unique_rows(out)
    _, ref_first, ref_inverse = np.unique(row_keys(out), return_index=True, return_inverse=True)
    np.testing.assert_array_equal(first, ref_first)
    np.testing.assert_array_equal(inverse, ref_inverse.ravel())
    np.testing.assert_array_equal(rows_in(out, out[:5]), np.isin(row_keys(out), row_keys(out[:5])))

@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.bool_])
@pytest.mark.parametrize("low, high", [(-1, 2), (0, 2), (-128, 128), (0, 256), (-3, 300), (-2**40, 2**40)])
def test_row_codes_by_offset_match_void_keys(dtype, low: int, high: int) -> None:
    """Columns of a few small values are coded by their offset from the minimum, on the signed view when the bits of
    small negative integers span the whole unsigned range: the same outcomes as ``np.unique`` on the rows' bytes, at
    every width and range (an int8 column from -128 to 127 offset in int8 would wrap around)."""
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    lo, hi = (0, 2) if info is None else (max(low, int(info.min)), min(high, int(info.max) + 1))
    if lo >= hi:
        pytest.skip("range outside the dtype")
    rng = np.random.default_rng(11)
    for k in (2, 12, 40):
        out = rng.integers(lo, hi, size=(3000, k)).astype(dtype)
        out[1::3] = out[::3][: len(out[1::3])]          # repeated rows
        first, inverse = unique_rows(out)
        _, ref_first, ref_inverse = np.unique(row_keys(out), return_index=True, return_inverse=True)
        np.testing.assert_array_equal(first, ref_first)
        np.testing.assert_array_equal(inverse, ref_inverse.ravel())


def _rare_value_missed_by_probe() -> np.ndarray:
    out = np.zeros((20_000, 2))
    out[1::7, 0] = 1.5
    out[4321, 1] = -3.0           # off the probe's stride: the probe sees one value, the column has two
    return out


@pytest.mark.parametrize("make", [
    lambda r: r.integers(-3, 3, size=(20_000, 5)),                           # small signed span: table
    lambda r: r.integers(0, 2**40, size=(20_000, 2)),                        # wide span: sorted
    lambda r: r.choice([0.0, -0.0, 1.0, np.nan, np.inf], size=(20_000, 3)),  # few floats: probe
    lambda r: r.normal(size=(20_000, 2)),                                    # continuous: sorted
    lambda r: _rare_value_missed_by_probe(),                                 # probe misses a value: sorted
    lambda r: r.integers(0, 3, size=(20_000, 1)).astype(np.uint8),          # one column
    lambda r: 1.0 + r.integers(0, 5, size=(20_000, 2)) * np.spacing(1.0),    # adjacent doubles: 64-bit keys, table
], ids=["signed-span", "wide-span", "few-floats", "continuous", "rare-value", "one-column", "adjacent-doubles"])
def test_unique_rows_fast_paths_match_void_keys(make) -> None:
    """The linear codes (table lookups, probe of few values) give ``np.unique``'s first rows and inverse exactly,
    and fall back to sorting where they do not apply (a wide span, a value the probe missed)."""
    out = make(np.random.default_rng(8))
    first, inverse = unique_rows(out)
    _, ref_first, ref_inverse = np.unique(row_keys(out), return_index=True, return_inverse=True)
    np.testing.assert_array_equal(first, ref_first)
    np.testing.assert_array_equal(inverse, ref_inverse.ravel())
    bits = out.reshape(len(out), -1).view(f"u{out.dtype.itemsize}")
    for j in range(bits.shape[1]):           # the column codes, values included, are np.unique's
        for got, ref in zip(_unique_inverse(bits[:, j]), np.unique(bits[:, j], return_inverse=True)):
            np.testing.assert_array_equal(got, ref.ravel())



def test_single_threaded_libraries_limits_inside_the_block_only() -> None:
    """The audit's own linear algebra runs on one BLAS/OpenMP thread; the limit is lifted on exit.

    Checked in a fresh interpreter: the controller of a scope is cached per process, so in a test process where
    other tests loaded more libraries (scikit-learn's OpenMP) after it was cached, the check would depend on the
    order in which the tests ran."""
    import subprocess
    import sys

    code = """
from threadpoolctl import threadpool_info
from dpverify.execution.sampling import single_threaded_libraries
before = {i["filepath"]: i["num_threads"] for i in threadpool_info()}
with single_threaded_libraries():
    assert all(i["num_threads"] == 1 for i in threadpool_info() if i["filepath"] in before)
    with single_threaded_libraries():                         # nests: the cached controller again
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["filepath"] in before)
assert {i["filepath"]: i["num_threads"] for i in threadpool_info()} == before
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr

@pytest.mark.parametrize("kind", ["narrow", "negative", "wide", "two-columns", "absent", "int8", "many-keys",
                                  "many-floats"])
def test_rows_in_by_table_lookup_equals_isin(kind: str) -> None:
    """rows_in looks an event's column values up in a table when they span few integers, by binary search
    otherwise, and the rows' combined keys up in a table when they are few: the same membership as ``np.isin`` of
    the row keys either way (one column, several, more keys than the table holds)."""
    from dpverify.statistical import events as E
    rng = np.random.default_rng(4)
    out = rng.integers(0, 12, size=(5000, 1))
    sub = np.array([[2], [3], [7], [11]])
    if kind == "negative":           # -1 as an unsigned pattern sits at the top of the range: a wide span
        out, sub = out - 6, sub - 6
    elif kind == "wide":
        out = out * (E._LOOKUP_SPAN // 4)
        sub = sub * (E._LOOKUP_SPAN // 4)
    elif kind == "two-columns":
        out = rng.integers(0, 5, size=(5000, 2))
        sub = np.array([[0, 1], [4, 4], [2, 0]])
    elif kind == "absent":
        sub = np.array([[20], [30]])
    elif kind == "int8":
        out, sub = out.astype(np.int8), sub.astype(np.int8)
    elif kind == "many-keys":        # three columns of 100 outcome values: more keys than a table holds
        out = rng.integers(0, 120, size=(5000, 3))
        sub = np.vstack([out[:300], rng.integers(0, 100, size=(200, 3))])
    elif kind == "many-floats":      # one float column, more outcome values than are compared one by one
        out = rng.integers(0, 120, size=(5000, 1)) / 7.0
        sub = np.vstack([out[:80], [[0.5], [1e9]]])
    np.testing.assert_array_equal(rows_in(out, sub), np.isin(row_keys(out), row_keys(sub)))


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.sampled_from([np.int8, np.int16, np.uint16, np.int32, np.int64, np.float64, np.float32]),
       st.integers(1, 24), st.integers(1, 7), st.integers(0, 60), st.data())
def test_rows_in_matches_isin_on_many_narrow_columns(dtype, k: int, card: int, n_sub: int,
                                                     data: st.DataObject) -> None:
    """Rows of up to 24 columns of a few values each (an SVT's or RAPPOR's output): one table of every byte pattern,
    a table of the span, equality with a few values or a binary search per column, the partial keys ranked whenever
    their product would pass the lookup's limit: the same membership as ``np.isin`` of the row keys, outcomes that
    occur in the rows or not, none at all included."""
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    pool = np.array([-3, -1, 0, 1, 2, 7, 100][:card])
    if np.dtype(dtype).kind == "u":
        pool = np.abs(pool)
    out = rng.choice(pool, size=(3000, k)).astype(dtype)
    sub = np.vstack([out[: n_sub // 2], rng.choice(pool, size=(n_sub - n_sub // 2, k)).astype(dtype)])
    np.testing.assert_array_equal(rows_in(out, sub), np.isin(row_keys(out), row_keys(sub)))


def test_rows_in_ranks_partial_keys_of_many_columns() -> None:
    """40 byte columns of three values: the partial keys pass the lookup's limit several times and are ranked among
    the outcomes' each time; rows differing from an outcome only in the last column are not members."""
    rng = np.random.default_rng(8)
    out = rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=(20_000, 40))
    sub = out[:200].copy()
    near = sub.copy()
    near[:, -1] = np.where(near[:, -1] == 1, 0, 1)
    out = np.vstack([out, near])
    got = rows_in(out, sub)
    np.testing.assert_array_equal(got, np.isin(row_keys(out), row_keys(sub)))
    assert got[:200].all()


def test_cell_descriptions_name_the_value_as_the_output_holds_it():
    """A scalar output's cells are intervals of ``out``; one continuous column is ``out[j]``; several are summed."""
    from dpverify.statistical.cells import fit_cells
    rng = np.random.default_rng(0)
    scalar = fit_cells(rng.laplace(size=5000), rng.laplace(size=5000) + 1.0)
    assert scalar.describe_cell(3).startswith("out ∈ [")
    one = np.column_stack([rng.integers(0, 2, 5000), rng.laplace(size=5000)])
    assert fit_cells(one, one).describe_cell(3).startswith("discrete part = (0) and out[1] ∈ [")
    two = np.column_stack([rng.integers(0, 2, 5000), rng.laplace(size=5000), rng.laplace(size=5000)])
    assert fit_cells(two, two).describe_cell(3).startswith("discrete part = (0) and sum(out[1,2]) ∈ [")
