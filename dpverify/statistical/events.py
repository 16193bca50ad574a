"""Events on mechanism outputs: sets of outputs with a vectorised membership test (intervals of a feature, value
sets, sets of rows, NaN), and the row keys that identify outputs of any shape.

An *event* ``S`` is a set of outputs with a vectorised membership test.  The audit chooses events on a
first sample (the *search*, :mod:`dpverify.statistical.search`) and tests them on fresh samples, so the
search may use any heuristic without affecting the validity of the reported bound."""


from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.features import Feature

__all__ = ["Event", "IntervalEvent", "ValueSetEvent", "RowSetEvent", "NanEvent", "row_keys", "unique_rows", "rows_in"]


# ----------------------------------------------------------------------------------------- events
class Event(Protocol):
    """A set of outputs: ``contains(out) -> bool array`` and a readable ``description``."""

    @property
    def description(self) -> str: ...

    def contains(self, out: NDArray) -> NDArray[np.bool_]: ...


def _fmt(x: float) -> str:
    return f"{x:.6g}"


@dataclass(frozen=True)
class IntervalEvent:
    """``{low <= feature(o) <= high}`` (either end may be infinite), or with ``outside`` its complement,
    ``{feature(o) < low or feature(o) > high}`` (two-sided tails)."""

    feature: Feature
    low: float
    high: float
    outside: bool = False

    @property
    def description(self) -> str:
        f = self.feature.name
        if self.outside:
            return f"{f} < {_fmt(self.low)} or {f} > {_fmt(self.high)}"
        if self.low == -math.inf:
            return f"{f} ≤ {_fmt(self.high)}"
        if self.high == math.inf:
            return f"{f} ≥ {_fmt(self.low)}"
        return f"{f} ∈ [{_fmt(self.low)}, {_fmt(self.high)}]"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        v = self.feature(out)
        if self.outside:
            return (v < self.low) | (v > self.high)          # features map NaN to +inf, as for "≥"
        return (v >= self.low) & (v <= self.high)


@dataclass(frozen=True)
class ValueSetEvent:
    """``{feature(o) in values}``: point masses of a scalar feature."""

    feature: Feature
    values: tuple[float, ...]

    @property
    def description(self) -> str:
        vals = ", ".join(_fmt(v) for v in self.values[:5]) + (", …" if len(self.values) > 5 else "")
        return f"{self.feature.name} ∈ {{{vals}}}"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        return np.isin(self.feature(out), np.asarray(self.values, dtype=np.float64))


def row_keys(out: NDArray) -> NDArray:
    """One hashable, sortable key per output row (its bytes)."""
    a = np.ascontiguousarray(out.reshape(len(out), -1))
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


_INT_KEY_LIMIT = 1 << 62


def _column_bits(out: NDArray) -> NDArray | None:
    """The rows' entries as unsigned integers of the same width (bitwise equality), ``(n, k)``; ``None`` for
    item sizes other than 1, 2, 4 or 8 bytes."""
    a = np.ascontiguousarray(out.reshape(len(out), -1))
    if a.dtype.itemsize not in (1, 2, 4, 8):
        return None
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


#: a column of row codes spanning at most this many values is coded by its offset from its minimum
_OFFSET_SPAN = 256
#: integer keys spanning at most this many values per key are coded by a table lookup rather than a sort
_TABLE_SPAN_PER_KEY = 4
#: a column whose probe of about this many entries has at most ``_FEW_VALUES`` distinct values is coded against them
_PROBE = 4096
_FEW_VALUES = 1024


def _table_unique(v: NDArray, return_index: bool = False) -> tuple[NDArray, ...] | None:
    """``np.unique(v, return_inverse=True)`` (with ``return_index``: ``(values, first, inverse)``) for integer keys
    spanning at most ``_TABLE_SPAN_PER_KEY`` values per key, by a table of the span (linear: no sort); ``None`` for
    a wider span.  The same values, first occurrences and inverse as ``np.unique``."""
    n = len(v)
    if n == 0 or v.dtype.kind not in "iu":
        return None
    lo, hi = v.min(), v.max()
    span = int(hi) - int(lo) + 1
    if span > _TABLE_SPAN_PER_KEY * n:
        return None
    offset = (v - lo).astype(np.intp)
    present = np.zeros(span, dtype=bool)
    present[offset] = True
    rank = np.cumsum(present) - 1
    values = lo + np.flatnonzero(present).astype(v.dtype)      # in v's dtype: exact for 64-bit keys too
    inverse = rank[offset]
    if not return_index:
        return values, inverse
    first = np.full(span, n, dtype=np.intp)
    np.minimum.at(first, offset, np.arange(n, dtype=np.intp))
    return values, first[present], inverse


def _unique_inverse(v: NDArray) -> tuple[NDArray, NDArray[np.intp]]:
    """``np.unique(v, return_inverse=True)`` for one column of :func:`_column_bits`, without sorting it when its
    span is small (:func:`_table_unique`) or when a probe of it shows few values that every entry is one of (then
    each entry's code is its position among them, found by binary search)."""
    fast = _table_unique(v)
    if fast is not None:
        return fast[0], fast[1]
    probe = np.unique(v[:: max(1, len(v) // _PROBE)])
    if len(probe) <= _FEW_VALUES:
        idx = np.minimum(np.searchsorted(probe, v), len(probe) - 1)
        if np.array_equal(probe[idx], v):
            return probe, idx
    values, inverse = np.unique(v, return_inverse=True)
    return values, inverse.ravel()


def _small_span(col: NDArray) -> tuple[NDArray, int]:
    """``col`` (unsigned, from :func:`_column_bits`) or its signed view, whichever spans fewer values, and that span
    (the bits of small negative integers span the whole unsigned range)."""
    if not len(col):
        return col, 1
    span = int(col.max()) - int(col.min()) + 1
    if span <= 2:
        return col, span
    signed = col.view(f"i{col.dtype.itemsize}")
    s_span = int(signed.max()) - int(signed.min()) + 1
    return (signed, s_span) if s_span < span else (col, span)


def _row_codes(bits: NDArray) -> NDArray[np.int64]:
    """One int64 per row, equal exactly when the rows are equal bit for bit.

    Column codes are combined in mixed radix; whenever the next product could pass 2^62 the partial key is
    first compressed to its rank (at most n values).  Integer sorts only: much faster than sorting the rows'
    bytes as ``np.void`` keys.
    """
    key = np.zeros(len(bits), dtype=np.int64)
    size = 1
    for j in range(bits.shape[1]):
        col, span = _small_span(bits[:, j])
        if span <= _OFFSET_SPAN:
            # a column of a few small values (codes, flags, counts): its offset from the minimum is a code already
            # (equal exactly when the entries are), without ranking the values present (3-6 times as fast)
            # (in int64, where the difference of two entries of a small span is exact: an int8 offset would wrap
            # around; 64-bit entries above 2**63 wrap in the cast, their differences do not)
            code, card = col.astype(np.int64) - col.min().astype(np.int64), span
        else:
            _, code = _unique_inverse(col)
            card = int(code.max()) + 1 if len(code) else 1
        if size * card >= _INT_KEY_LIMIT:
            key = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
            size = int(key.max()) + 1 if len(key) else 1
        key = key * card + code
        size *= card
    return key


def unique_rows(out: NDArray) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``(first, inverse)`` of ``np.unique(row_keys(out), return_index=True, return_inverse=True)``: the same
    outcomes in the same (byte) order, computed with integer sorts."""
    bits = _column_bits(out)
    if bits is None:
        _, first, inverse = np.unique(row_keys(out), return_index=True, return_inverse=True)
        return first, inverse.ravel()
    codes = bits[:, 0] if bits.shape[1] == 1 else _row_codes(bits)
    fast = _table_unique(codes, return_index=True)
    _, first, inverse = fast if fast is not None else np.unique(codes, return_index=True, return_inverse=True)
    perm = np.argsort(row_keys(out[first]), kind="stable")       # the byte order of np.void keys
    rank = np.empty_like(perm)
    rank[perm] = np.arange(len(perm))
    return first[perm], rank[inverse.ravel()]


#: the sorted values of an event's column spanning at most this many integers are looked up in a table
_LOOKUP_SPAN = 1 << 16


def _position_in(values: NDArray, col: NDArray) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """For each entry of ``col``: its position among the sorted distinct ``values`` (some valid index where it is
    not one of them) and whether it is one.  Values spanning at most :data:`_LOOKUP_SPAN` integers are looked up in a
    table of the span (linear; a phase-2 count of a few outcomes of an integer output was mostly binary search)."""
    card = len(values)
    if card == 0:
        return np.zeros(len(col), dtype=np.intp), np.zeros(len(col), dtype=bool)
    lo, hi = int(values[0]), int(values[-1])
    if hi - lo < _LOOKUP_SPAN:
        table = np.full(hi - lo + 1, -1, dtype=np.intp)
        table[(values - values[0]).astype(np.intp)] = np.arange(card)
        pos = np.full(len(col), -1, dtype=np.intp)
        inside = (col >= values[0]) & (col <= values[-1])
        pos[inside] = table[(col[inside] - values[0]).astype(np.intp)]
        found = pos >= 0
        return np.maximum(pos, 0), found
    idx = np.minimum(np.searchsorted(values, col), card - 1)
    return idx, values[idx] == col


def rows_in(out: NDArray, outcomes: NDArray) -> NDArray[np.bool_]:
    """``np.isin(row_keys(out), row_keys(outcomes))`` with integer lookups (``out``, ``outcomes`` same dtype)."""
    bits, obits = _column_bits(out), _column_bits(outcomes)
    if bits is None or obits is None or bits.shape[1] != obits.shape[1]:
        return np.isin(row_keys(out), row_keys(outcomes))
    hit = np.ones(len(bits), dtype=bool)
    key = np.zeros(len(bits), dtype=np.int64)
    okey = np.zeros(len(obits), dtype=np.int64)
    size = 1
    for j in range(bits.shape[1]):
        values = np.unique(obits[:, j])
        card = len(values)
        if size * max(card, 1) >= _INT_KEY_LIMIT:
            return np.isin(row_keys(out), row_keys(outcomes))
        idx, found = _position_in(values, bits[:, j])
        hit &= found
        key = key * card + idx
        okey = okey * card + np.searchsorted(values, obits[:, j])
        size *= card
    if bits.shape[1] == 1:            # one column: its value is one of the outcomes' exactly when it was found
        return hit
    if size <= _LOOKUP_SPAN:          # the keys' range is small: a table of the outcomes' keys (no sort)
        table = np.zeros(size, dtype=bool)
        table[okey] = True
        hit[hit] = table[key[hit]]
        return hit
    hit[hit] = np.isin(key[hit], okey)
    return hit


@dataclass(frozen=True)
class RowSetEvent:
    """``{o in outcomes}`` for discrete outputs; ``outcomes`` are rows of the output's dtype."""

    outcomes: NDArray = field(repr=False)
    dtype: str = "int64"

    @property
    def description(self) -> str:
        rows = self.outcomes.reshape(len(self.outcomes), -1)
        shown = [
            (str(r[0].item()) if rows.shape[1] == 1 else "(" + ",".join(str(v) for v in r.tolist()) + ")")
            for r in rows[:4]
        ]
        more = f", … ({len(rows)} outcomes)" if len(rows) > 4 else ""
        return "out ∈ {" + ", ".join(shown) + more + "}"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        out = np.asarray(out)
        if out.dtype != self.outcomes.dtype:
            return np.zeros(len(out), dtype=bool)
        return rows_in(out, self.outcomes)

    def __eq__(self, other: object) -> bool:  # arrays make the dataclass eq ambiguous
        return isinstance(other, RowSetEvent) and np.array_equal(self.outcomes, other.outcomes)

    def __hash__(self) -> int:
        return hash(self.outcomes.tobytes())


@dataclass(frozen=True)
class NanEvent:
    """``{o has a NaN entry}`` (only with ``nan_policy="outcome"``)."""

    @property
    def description(self) -> str:
        return "out is NaN"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        v = np.asarray(out, dtype=np.float64).reshape(len(out), -1)
        return np.isnan(v).any(axis=1)
