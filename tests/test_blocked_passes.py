"""The search's passes over blocks of rows (transposed copies, row hashes, cell features, grouped values) give exactly
what the one-shot numpy expressions they replace give, at sizes across the block boundaries."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.statistical import features
from dpverify.statistical.atoms import row_hashes
from dpverify.statistical.cells import MAX_GROUPS, CellPartition, fit_cells_and_codes, grouped
from dpverify.statistical.features import transposed_copy


def _rows(n: int, k: int, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        a = rng.standard_normal((n, k)).astype(dtype)
        a[rng.random((n, k)) < 0.05] = np.nan
        a[rng.random((n, k)) < 0.05] = -0.0
        a[rng.random((n, k)) < 0.02] = np.inf
        return a
    return rng.integers(-3, 4, size=(n, k)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "int64"])
@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 70_001])
def test_transposed_copy_is_the_transpose(monkeypatch, dtype: str, n: int) -> None:
    monkeypatch.setattr(features, "TRANSPOSE_BLOCK_BYTES", 4096)        # many blocks, a ragged last one
    a = _rows(n, 7, dtype, n)
    got = transposed_copy(a)
    assert got.flags.c_contiguous and got.dtype == a.dtype
    np.testing.assert_array_equal(got, np.ascontiguousarray(a.T))
    sub = transposed_copy(a, np.float64, (5, 1, 3))
    assert sub.dtype == np.float64
    np.testing.assert_array_equal(sub, np.ascontiguousarray(a[:, [5, 1, 3]].T, dtype=np.float64))


def test_transposed_copy_of_a_strided_view() -> None:
    a = _rows(50_000, 12, "float64", 1)[::3, 2:9]
    np.testing.assert_array_equal(transposed_copy(a), np.ascontiguousarray(a.T))


def _hashes_whole(out: np.ndarray) -> np.ndarray:
    """The one-shot hash the blocked one replaced (the same splitmix64 passes over the whole array)."""
    a = out.reshape(len(out), -1)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.nan, a.astype(np.float64) + 0.0)
        bits = a.view(np.uint64)
    else:
        bits = a.astype(np.int64).view(np.uint64)
    golden = np.uint64(0x9E3779B97F4A7C15)
    m1, m2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
    h = np.full(len(a), golden, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bits.shape[1]):
            h = (h ^ bits[:, j]) + golden * np.uint64(j + 1)
            h = h ^ (h >> np.uint64(30))
            h = h * m1
            h = h ^ (h >> np.uint64(27))
            h = h * m2
            h = h ^ (h >> np.uint64(31))
    return h


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16"])
def test_row_hashes_blocked_equal_one_shot(dtype: str) -> None:
    a = _rows(200_003, 9, dtype, 2)                     # several blocks of 2**20 bytes, a ragged last one
    np.testing.assert_array_equal(row_hashes(a), _hashes_whole(a))
    np.testing.assert_array_equal(row_hashes(a, (0, 4, 8)), _hashes_whole(a[:, [0, 4, 8]]))
    z = np.zeros((3, 2)); z[1, 0] = -0.0; z[2, 1] = np.nan
    w = z.copy(); w[2, 1] = -np.float64("nan")
    assert row_hashes(z)[0] == row_hashes(z)[1] and (row_hashes(z) == row_hashes(w)).all()
    assert len(row_hashes(np.zeros((0, 4)))) == 0


def test_grouped_matches_masks() -> None:
    rng = np.random.default_rng(3)
    g = rng.integers(0, 7, size=10_000)
    v = rng.standard_normal(10_000)
    parts = grouped(v, g, 7)
    for k, (pos, vals) in enumerate(parts):
        np.testing.assert_array_equal(pos, np.flatnonzero(g == k))
        np.testing.assert_array_equal(vals, v[g == k])
    pos, vals = grouped(v, np.zeros(10_000, dtype=np.intp), 1)[0]
    np.testing.assert_array_equal(pos, np.arange(10_000))
    np.testing.assert_array_equal(vals, v)


def test_cell_feature_and_cells_unchanged_by_blocks() -> None:
    """The partition's continuous feature is the row sum of its continuous columns (NaN rows +inf), and the fit's
    own cells of the selection rows are what :meth:`CellPartition.cells` gives them."""
    rng = np.random.default_rng(4)
    n = 120_001
    disc = rng.integers(0, 5, size=(n, 3)).astype(np.float64)
    cont = rng.standard_normal((n, 4))
    cont[rng.random(n) < 0.01, 2] = np.nan
    rows = np.concatenate([disc[:, :2], cont[:, :2], disc[:, 2:], cont[:, 2:]], axis=1)   # columns interleaved
    sel0, sel1 = rows[: n // 2], rows[n // 2:]
    fitted = fit_cells_and_codes(sel0, sel1)
    assert fitted is not None
    part, codes = fitted
    assert part.discrete == (0, 1, 4) and part.continuous == (2, 3, 5, 6)
    with np.errstate(invalid="ignore"):
        s = rows[:, [2, 3, 5, 6]].sum(axis=1)
    np.testing.assert_array_equal(part.feature(rows), np.where(np.isnan(s), np.inf, s))
    assert codes is not None
    np.testing.assert_array_equal(codes, np.concatenate([part.cells(sel0), part.cells(sel1)]))
    assert len(part.groups) == MAX_GROUPS            # 125 discrete parts, the most frequent 64 with groups
    only = CellPartition((), (0, 1), (), ((0.0,),))
    np.testing.assert_array_equal(only.feature(cont[:, :2]), cont[:, :2].sum(axis=1))
