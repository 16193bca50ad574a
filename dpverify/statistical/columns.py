"""The columns of an event search's halves, shared by its families (:mod:`dpverify.statistical.search`): each selection
column sorted once, the two selection halves' columns merged once, and the scoring halves' columns contiguous."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.features import Column, finite_view, sorted_values

__all__ = ["SortedColumns", "MAX_COLUMNS"]

#: columns ``j < MAX_COLUMNS`` are kept once sorted; beyond, they are sorted on each call
MAX_COLUMNS = 32


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
        self._score_t: tuple[NDArray, NDArray] | None = None

    def __call__(self, j: int) -> tuple[NDArray, NDArray]:
        if j in self.memo:
            return self.memo[j]
        got = (sorted_values(Column(j)(self.sel[0]), self.sel[0]), sorted_values(Column(j)(self.sel[1]), self.sel[1]))
        if j < MAX_COLUMNS:
            self.memo[j] = got
        return got

    def pooled(self, j: int) -> NDArray:
        """Column ``j`` of both selection halves together, sorted (a linear merge of the two sorted runs; kept for
        ``j < MAX_COLUMNS``, as the product-ratio fit and the column's events both use it)."""
        if j in self.pooled_memo:
            return self.pooled_memo[j]
        got = np.concatenate(self(j))
        got.sort(kind="stable")                # in place: the concatenation is a fresh array
        if j < MAX_COLUMNS:
            self.pooled_memo[j] = got
        return got

    def scoring(self, j: int) -> tuple[NDArray, NDArray]:
        """Column ``j`` of the two scoring halves, as :class:`Column` gives it, from one transposed copy of each
        half (made on the first call)."""
        if self._score[0] is None or self._score[1] is None:
            raise ValueError("no scoring halves were given")
        if self._score_t is None:
            self._score_t = (np.ascontiguousarray(self._score[0].T), np.ascontiguousarray(self._score[1].T))
        return finite_view(self._score_t[0][j]), finite_view(self._score_t[1][j])
