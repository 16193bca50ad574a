"""The columns of an event search's halves, shared by its families (:mod:`dpverify.statistical.search`): each selection
column sorted once, the two selection halves' columns merged once, and the scoring halves' columns contiguous."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.features import Column, Feature, Statistic, finite_view, sorted_values, transposed_copy

__all__ = ["SortedColumns", "MAX_COLUMNS"]

#: columns ``j < MAX_COLUMNS`` are kept once sorted; beyond, they are sorted on each call
MAX_COLUMNS = 32
#: integer columns spanning at most this many values are sorted by counting (:meth:`SortedColumns._counted`)
COUNTED_RANGE = 4096


class SortedColumns:
    """The selection halves' columns ``j < MAX_COLUMNS`` as :class:`Column` gives them (NaN as +inf), sorted once
    per search and shared by the product-ratio fit and the column features (sorting was most of a vector search's
    time); columns beyond are sorted on each call, not kept.  :meth:`scoring` gives the scoring halves' columns,
    contiguous: a column of a row-major output is a strided view, on which every count of a chosen event (two
    comparisons per output) took 20 times as long as on a contiguous copy."""

    def __init__(self, sel0: NDArray, sel1: NDArray, score0: NDArray | None = None,
                 score1: NDArray | None = None) -> None:
        self.sel = (sel0, sel1)
        self.memo: dict[int, tuple[NDArray, NDArray]] = {}
        self.pooled_memo: dict[int, NDArray] = {}
        self._score = (score0, score1)
        self._transposed: dict[int, NDArray] = {}
        self._by_column: dict[int, NDArray[np.float64]] = {}

    def __call__(self, j: int) -> tuple[NDArray, NDArray]:
        if j in self.memo:
            return self.memo[j]
        counted = self._counted(j)
        if counted is not None:
            got, pooled = counted
            if j < MAX_COLUMNS:
                self.memo[j], self.pooled_memo[j] = got, pooled
            return got
        if j < MAX_COLUMNS and self.sel[0].dtype.kind == "f" and self.sel[1].dtype.kind == "f":
            # float columns from the halves' contiguous copies (:meth:`by_column`, shared with the rows' statistics):
            # a strided column of row-major outputs is slower to read than to copy
            got = (np.sort(self.by_column(0)[j]), np.sort(self.by_column(1)[j]))
        else:
            got = (sorted_values(Column(j)(self.sel[0]), self.sel[0]),
                   sorted_values(Column(j)(self.sel[1]), self.sel[1]))
        if j < MAX_COLUMNS:
            self.memo[j] = got
        return got

    def _counted(self, j: int) -> tuple[tuple[NDArray, NDArray], NDArray] | None:
        """Column ``j`` of integer outputs spanning at most ``COUNTED_RANGE`` values: both halves and the two together
        sorted by counting (each value repeated as often as it occurs), the same arrays as sorting them, in a few
        passes instead of a sort and a merge each (bit vectors, codes, counts); ``None`` for other columns."""
        a0, a1 = self.sel
        if a0.dtype.kind not in "biu" or a0.dtype.itemsize > 4 or a1.dtype != a0.dtype or not len(a0) or not len(a1):
            return None
        c0, c1 = self.transposed(0)[j], self.transposed(1)[j]
        lo = int(min(c0.min(), c1.min()))
        span = int(max(c0.max(), c1.max())) - lo + 1
        if span > COUNTED_RANGE:
            return None
        if span <= 16:                        # a few values (bits, codes): one comparison pass per value
            n0, n1 = (np.array([np.count_nonzero(c == lo + v) for v in range(span)]) for c in (c0, c1))
        else:
            n0 = np.bincount(c0.astype(np.intp) - lo, minlength=span)
            n1 = np.bincount(c1.astype(np.intp) - lo, minlength=span)
        values = np.arange(lo, lo + span, dtype=np.float64)
        return (np.repeat(values, n0), np.repeat(values, n1)), np.repeat(values, n0 + n1)

    def pooled(self, j: int) -> NDArray:
        """Column ``j`` of both selection halves together, sorted (a linear merge of the two sorted runs; kept for
        ``j < MAX_COLUMNS``, as the product-ratio fit and the column's events both use it)."""
        if j in self.pooled_memo:
            return self.pooled_memo[j]
        halves = self(j)
        if j in self.pooled_memo:              # sorted by counting, the pooled column with them
            return self.pooled_memo[j]
        got = np.concatenate(halves)
        got.sort(kind="stable")                # in place: the concatenation is a fresh array
        if j < MAX_COLUMNS:
            self.pooled_memo[j] = got
        return got

    def by_column(self, i: int) -> NDArray[np.float64]:
        """Half ``i`` of the search (0, 1: the selection halves; 2, 3: the scoring halves), its columns ``j <
        MAX_COLUMNS`` as float64 with NaN as +inf, one contiguous copy made on the first call and kept (float outputs:
        the columns' sorts and counts and the max, min and argmax of rows of at most MAX_COLUMNS entries read it)."""
        if i not in self._by_column:
            half = (self.sel + self._score)[i]
            if half is None:
                raise ValueError("no scoring halves were given")
            cols = np.asarray(half, dtype=np.float64).reshape(len(half), -1)[:, :MAX_COLUMNS]
            self._by_column[i] = finite_view(transposed_copy(cols))
        return self._by_column[i]

    def scoring(self, j: int) -> tuple[NDArray, NDArray]:
        """Column ``j`` of the two scoring halves, as :class:`Column` gives it, from one transposed copy of each
        half (made on the first call)."""
        if self._score[0] is None or self._score[1] is None:
            raise ValueError("no scoring halves were given")
        if j < MAX_COLUMNS and self._score[0].dtype.kind == "f" and self._score[1].dtype.kind == "f":
            return self.by_column(2)[j], self.by_column(3)[j]
        return finite_view(self.transposed(2)[j]), finite_view(self.transposed(3)[j])

    def feature(self, feature: Feature, half: NDArray, i: int) -> NDArray:
        """``feature`` on ``half``, half ``i`` of the search (as :meth:`by_column` numbers them): a row statistic from
        this store's shared copy of the half (float rows: :meth:`by_column`; rows of small integers:
        :meth:`transposed`), a feature with an ``on_columns`` of its own (the clipped sums of
        :mod:`dpverify.statistical.anchors`) from :meth:`by_column` for float rows, any other feature on the half
        itself.  The same values either way."""
        if isinstance(feature, Statistic):
            if half.dtype.kind == "f":
                return feature.on_columns(half, self.by_column(i))
            if half.dtype.kind in "biu" and half.dtype.itemsize <= 4 and half.ndim == 2:
                return feature.on_columns(half, self.transposed(i))
        elif half.dtype.kind == "f" and half.ndim == 2 and callable(getattr(feature, "on_columns", None)):
            return feature.on_columns(half, self.by_column(i))
        return feature(half)

    def transposed(self, i: int) -> NDArray:
        """Half ``i`` of the search (as :meth:`by_column` numbers them) transposed into one contiguous copy in its own
        dtype, made on the first call and kept: the integer columns' counts and scoring halves and the small-integer
        rows' statistics (:meth:`dpverify.statistical.features.Statistic.on_columns`) share it (integers: small)."""
        if i not in self._transposed:
            half = (self.sel + self._score)[i]
            if half is None:
                raise ValueError("no scoring halves were given")
            self._transposed[i] = transposed_copy(half)
        return self._transposed[i]
