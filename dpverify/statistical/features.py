"""Scalar features of mechanism outputs that events threshold: the output itself, a column, a statistic of a
row (sum, max, min, argmax), a learned linear score, the lowest set bit of a double."""


from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np
from numpy.typing import NDArray


__all__ = ["Feature", "Identity", "Column", "Statistic", "LinearScore", "LowBit", "sorted_values", "transposed_copy",
           "rows_per_block"]


# --------------------------------------------------------------------------------------- features
_BLOCK = 8192     # rows per block of a score computed blockwise
#: bytes of input per block of :func:`transposed_copy` (a block and its transpose stay in the CPU's caches)
TRANSPOSE_BLOCK_BYTES = 1 << 21


def rows_per_block(rows: NDArray, nbytes: int = 1 << 20) -> int:
    """Rows of the 2-D array ``rows`` per block of a pass that keeps about ``nbytes`` of them at a time in the CPU's
    caches (at least 256)."""
    return max(256, nbytes // max(1, rows.shape[1] * rows.itemsize))


def transposed_copy(a: NDArray, dtype: type | np.dtype | None = None,
                    columns: Sequence[int] | None = None) -> NDArray:
    """``np.ascontiguousarray(a[:, columns].T, dtype)`` of a 2-D array (every column when ``columns`` is None), the
    same values, copied in blocks of rows.

    numpy copies a transposed view element by element along the output, each read from another cache line of
    ``a``: on a million rows of 20 float64 columns every line is fetched again for each of its values.  A block of
    rows at a time keeps its lines in cache until all their values are used, and a subset of the columns is taken
    block by block, never as a whole copy."""
    a = np.asarray(a)
    if a.ndim != 2:
        return np.ascontiguousarray(a.T, dtype=dtype)
    cols = list(range(a.shape[1])) if columns is None else list(columns)
    whole = cols == list(range(a.shape[1]))
    n = len(a)
    step = rows_per_block(a, TRANSPOSE_BLOCK_BYTES)
    if n <= step:
        return np.ascontiguousarray((a if whole else a[:, cols]).T, dtype=dtype)
    out = np.empty((len(cols), n), dtype=a.dtype if dtype is None else dtype)
    for start in range(0, n, step):
        block = a[start:start + step]
        out[:, start:start + step] = (block if whole else block[:, cols]).T
    return out


def finite_view(v: NDArray) -> NDArray[np.float64]:
    """Float64 copy with NaN mapped to +inf, so that every event is a well-defined set."""
    v = np.asarray(v, dtype=np.float64)
    if np.isnan(v).any():
        v = np.where(np.isnan(v), np.inf, v)
    return v


def sorted_values(v: NDArray, source: NDArray) -> NDArray:
    """``np.sort(v)`` for values ``v`` a built-in feature computed from ``source``: sorted in place when ``v`` is a
    fresh array of its own (no view, not sharing memory with ``source``), which saves the copy ``np.sort`` makes
    (a tenth of a vector search's time went to those copies); a copy otherwise (a column of float outputs is a view
    of them)."""
    if (isinstance(v, np.ndarray) and v.base is None and v.flags.owndata and v.flags.writeable
            and not np.may_share_memory(v, source)):
        v.sort()
        return v
    return np.sort(v)


class Feature(Protocol):
    """A scalar statistic of an output row, vectorised: ``(n, ...) -> (n,)`` float64."""

    @property
    def name(self) -> str: ...

    def __call__(self, out: NDArray) -> NDArray[np.float64]: ...


@dataclass(frozen=True)
class Identity:
    """The output itself (scalar outputs)."""

    @property
    def name(self) -> str:
        return "out"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        return finite_view(out)


@dataclass(frozen=True)
class Column:
    """Coordinate ``index`` of a vector output."""

    index: int

    @property
    def name(self) -> str:
        return f"out[{self.index}]"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        return finite_view(out[:, self.index])


@dataclass(frozen=True)
class Statistic:
    """``sum``, ``max``, ``min`` or ``argmax`` of a vector output."""

    kind: str

    @property
    def name(self) -> str:
        return f"{self.kind}(out)"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        a = np.asarray(out)
        if a.ndim != 2 or self.kind not in ("sum", "max", "min", "argmax"):
            return self._of_rows(out)
        if a.dtype.kind in "biu" and a.dtype.itemsize <= 4:
            # small integers: the statistic of the integers, then float64 -- the same values (the conversion is
            # exact and monotone, and a row's sum stays far below 2**53) without converting every entry first;
            # on the columns of a transposed copy: numpy reduces long contiguous columns 3-8 times as fast as
            # many rows of a few entries (exact for integers, whatever the order)
            return self.on_columns(a, transposed_copy(a))
        if self.kind == "sum":
            return self._of_rows(out)           # floats: the rows' own order of summation (numpy's pairwise sum)
        # floats: max, min and argmax are exact in any order (NaN is +inf by then), so by columns as well
        v = finite_view(a)
        return self._by_columns(v, transposed_copy(v)).astype(np.float64, copy=False)

    def on_columns(self, out: NDArray, cols: NDArray) -> NDArray[np.float64]:
        """The statistic of the rows ``out`` from ``cols``, their columns as one contiguous copy that a search's
        statistics share (one transposed copy of each half instead of one per statistic): for float rows, float64
        with NaN as +inf (max, min and argmax); for rows of small integers, the integers themselves (every
        statistic; :meth:`__call__` passes its own transposed copy here).  The same values as calling the statistic
        on ``out`` (called on it where ``cols`` does not hold every column)."""
        a = np.asarray(out)
        if a.ndim != 2 or cols.shape[0] != a.shape[1] or self.kind not in ("sum", "max", "min", "argmax"):
            return self(out)
        if a.dtype.kind in "biu" and a.dtype.itemsize <= 4 and cols.dtype == a.dtype:
            if self.kind == "sum":
                return cols.sum(axis=0, dtype=np.int64).astype(np.float64)
            return self._by_columns(a, cols).astype(np.float64)
        if self.kind in ("max", "min", "argmax") and a.dtype.kind == "f" and a.shape[1] <= 32:
            return self._by_columns(a, cols).astype(np.float64, copy=False)
        return self(out)

    def _by_columns(self, a: NDArray, cols: NDArray) -> NDArray:
        """max / min / argmax of the rows of ``a`` from ``cols``, its transposed contiguous copy (argmax: the first
        column holding the row's maximum, as ``argmax(axis=1)``)."""
        if self.kind == "max":
            return cols.max(axis=0)
        if self.kind == "min":
            return cols.min(axis=0)
        k = cols.shape[0]
        if cols.dtype.kind in "biu" and cols.dtype.itemsize <= 4 and k <= 64:
            # integers: one running maximum of the keys 64·value + (63 − column), whose low 6 bits name the first
            # column holding the row's maximum (exact: |value| < 2**32, so every key fits an int64); 3-4 times as
            # fast as the masks below
            key = cols[0].astype(np.int64) * 64 + 63
            term = np.empty_like(key)
            for j in range(1, k):
                np.multiply(cols[j], 64, out=term, dtype=np.int64)
                term += 63 - j
                np.maximum(key, term, out=key)
            return 63 - (key & 63)
        if k > 32:
            return a.argmax(axis=1)
        top = cols.max(axis=0)
        first = np.zeros(len(a), dtype=np.intp)
        for j in range(cols.shape[0] - 1, 0, -1):      # the first column holding the maximum wins
            first[cols[j] == top] = j
        first[cols[0] == top] = 0
        return first

    def _of_rows(self, out: NDArray) -> NDArray[np.float64]:
        v = finite_view(out)
        if self.kind == "sum":
            with np.errstate(invalid="ignore"):
                s = v.sum(axis=1)
            return np.where(np.isnan(s), np.inf, s)
        if self.kind == "max":
            return v.max(axis=1)
        if self.kind == "min":
            return v.min(axis=1)
        if self.kind == "argmax":
            return v.argmax(axis=1).astype(np.float64)
        raise ValueError(f"unknown statistic {self.kind!r}")


@dataclass(frozen=True)
class LinearScore:
    """``coef . ((o - mean) / scale) + intercept``: a logistic-regression score (DP-Sniper)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float

    @property
    def name(self) -> str:
        return "LR-score(out)"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        a = np.asarray(out)
        v = a.reshape(len(a), -1)
        integers = v.dtype.kind in "biu"
        # coef . ((o - mean) / scale) + intercept = o . w + c with w = coef / scale, c = intercept - mean . w: one
        # product per block instead of a subtraction, a division and a product per entry, each along short rows
        # (6x faster on 20 byte columns).  The scores move by rounding only (absolute error about ulp(o)·|w| either
        # way: the centring's own error in the original form), and one event's scores come from this one function
        # in both phases
        mean, scale, coef = (np.asarray(t, dtype=np.float64) for t in (self.mean, self.scale, self.coef))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            w = coef / scale
            c = float(self.intercept) - float(mean @ w)
        folded = bool(np.isfinite(w).all()) and math.isfinite(c)   # else (a scale near 0) centre first, per entry
        s = np.empty(len(v))
        # in blocks of rows, so that the temporaries stay in cache (the same arithmetic, row by row); integer rows
        # converted to float64 block by block, never as a whole copy (finite: no check)
        for start in range(0, len(v), _BLOCK):
            b = v[start:start + _BLOCK].astype(np.float64, copy=False)
            if not integers and not np.isfinite(b).all():
                b = np.where(np.isfinite(b), b, np.where(np.isnan(b), 0.0, np.sign(b) * 1e300))
            with np.errstate(over="ignore", invalid="ignore"):
                s[start:start + _BLOCK] = b @ w + c if folded else ((b - mean) / scale) @ coef + self.intercept
        return np.where(np.isnan(s), np.inf, s)


@dataclass(frozen=True)
class LowBit:
    """Exponent of the lowest set bit of a double (``+inf`` for 0, inf and NaN).

    A textbook floating-point Laplace sample ``x + Y`` lies on the grid of ``ulp(x + Y)`` *and* of the
    grid of ``x``: outputs near 0 for ``x = 1`` are multiples of ``2**-53`` while those for ``x = 0``
    are not (Mironov, CCS 2012).  ``index`` is the column (``None`` for scalar outputs).
    """

    index: int | None = None

    @property
    def name(self) -> str:
        return "lowbit(out)" if self.index is None else f"lowbit(out[{self.index}])"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        v = np.asarray(out if self.index is None else out[:, self.index], dtype=np.float64)
        mant, expo = np.frexp(np.where(np.isfinite(v), v, 0.0))
        m = np.abs(np.ldexp(mant, 53)).astype(np.int64)  # exact: |mant| in [0.5, 1)
        low = m & (-m)
        tz = np.zeros(m.shape, dtype=np.float64)
        nz = low > 0
        tz[nz] = np.log2(low[nz].astype(np.float64))
        res = (expo - 53).astype(np.float64) + tz
        return np.where(nz, res, np.inf)
