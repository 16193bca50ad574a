"""Events on mechanism outputs: sets of outputs with a vectorised membership test (intervals of a feature, value
sets, sets of rows, NaN), and the row keys that identify outputs of any shape.

An *event* ``S`` is a set of outputs with a vectorised membership test.  The audit chooses events on a
first sample (the *search*, :mod:`dpverify.statistical.search`) and tests them on fresh samples, so the
search may use any heuristic without affecting the validity of the reported bound."""


from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.features import Feature

__all__ = ["Event", "IntervalEvent", "ValueSetEvent", "RowSetEvent", "NanEvent", "row_keys", "unique_rows", "rows_in",
           "count_events"]


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
        return self.on_values(self.feature(out))

    def on_values(self, v: NDArray) -> NDArray[np.bool_]:
        """Membership from the feature's values ``v`` of the outputs (:func:`count_events` shares them)."""
        if self.outside:
            return (v < self.low) | (v > self.high)          # features map NaN to +inf, as for "≥"
        return (v >= self.low) & (v <= self.high)


def count_events(events: Sequence[Event], out: NDArray) -> NDArray[np.int64]:
    """How many of the outputs ``out`` each event holds, a feature shared by several interval events (a finalist and
    its deeper tails, :mod:`dpverify.statistical.deeper`) computed once."""
    shared: dict[int, NDArray] = {}
    counts = np.empty(len(events), dtype=np.int64)
    for k, ev in enumerate(events):
        if isinstance(ev, IntervalEvent):
            key = id(ev.feature)
            if key not in shared:
                shared[key] = ev.feature(out)
            counts[k] = np.count_nonzero(ev.on_values(shared[key]))
        else:
            counts[k] = np.count_nonzero(ev.contains(out))
    return counts


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


def _as_rows(out: NDArray) -> NDArray:
    """``out`` as ``(n, k)``: one row per output (no rows at all included, which ``reshape(n, -1)`` refuses)."""
    return out.reshape(len(out), math.prod(out.shape[1:]))


def row_keys(out: NDArray) -> NDArray:
    """One hashable, sortable key per output row (its bytes)."""
    a = np.ascontiguousarray(_as_rows(out))
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


_INT_KEY_LIMIT = 1 << 62


def _column_bits(out: NDArray) -> NDArray | None:
    """The rows' entries as unsigned integers of the same width (bitwise equality), ``(n, k)``; ``None`` for
    item sizes other than 1, 2, 4 or 8 bytes."""
    a = np.ascontiguousarray(_as_rows(out))
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
    span is small (:func:`_table_unique`) or when a probe of it shows few values that every entry is one of
    (:func:`_few_unique`)."""
    fast = _table_unique(v)
    if fast is not None:
        return fast[0], fast[1]
    few = _few_unique(v)
    if few is not None:
        return few[0], few[2]
    values, inverse = np.unique(v, return_inverse=True)
    return values, inverse.ravel()


def _small_span(col: NDArray) -> tuple[NDArray, int, NDArray]:
    """``col`` (unsigned, from :func:`_column_bits`) or its signed view, whichever spans fewer values, that span (the
    bits of small negative integers span the whole unsigned range) and its minimum (a 0-d array of its dtype)."""
    if not len(col):
        return col, 1, np.zeros((), dtype=col.dtype)
    lo = col.min()
    span = int(col.max()) - int(lo) + 1
    if span <= 2:
        return col, span, np.asarray(lo)
    signed = col.view(f"i{col.dtype.itemsize}")
    s_lo = signed.min()
    s_span = int(signed.max()) - int(s_lo) + 1
    return (signed, s_span, np.asarray(s_lo)) if s_span < span else (col, span, np.asarray(lo))


#: row keys are combined in int32 while their product stays below this (half the memory traffic of int64)
_INT32_KEY_LIMIT = 1 << 31


def _row_codes(bits: NDArray) -> NDArray[np.signedinteger]:
    """One integer per row (int32 while the codes' product allows, else int64), equal exactly when the rows are equal
    bit for bit.

    Column codes are combined in mixed radix; whenever the next product could pass 2^62 the partial key is
    first compressed to its rank (at most n values).  Integer sorts only: much faster than sorting the rows'
    bytes as ``np.void`` keys.  Columns of one or two bytes are transposed once into contiguous rows (a strided byte
    column is slow to reduce and to code).
    """
    cols = np.ascontiguousarray(bits.T) if bits.shape[1] > 1 and bits.dtype.itemsize <= 2 else bits.T
    key = np.zeros(len(bits), dtype=np.int32)
    size = 1
    for j in range(bits.shape[1]):
        col, span, lo = _small_span(cols[j])
        if span <= _OFFSET_SPAN:
            # a column of a few small values (codes, flags, counts): its offset from the minimum is a code already
            # (equal exactly when the entries are), without ranking the values present (3-6 times as fast)
            # (in unsigned arithmetic, where the difference of two entries of a small span is exact even when the
            # signed difference would wrap around, as it would for an int8 column spanning -128..127)
            u = f"u{col.dtype.itemsize}"
            code, card = col.view(u) - lo.view(u), span
        else:
            _, code = _unique_inverse(col)
            card = int(code.max()) + 1 if len(code) else 1
        if size * card >= _INT_KEY_LIMIT:
            key = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
            size = int(key.max()) + 1 if len(key) else 1
        if size * card >= _INT32_KEY_LIMIT and key.dtype != np.int64:
            key = key.astype(np.int64)
        key *= card
        np.add(key, code, out=key, casting="unsafe")      # (the codes are below card: no value changes)
        size *= card
    return key


def _few_unique(codes: NDArray) -> tuple[NDArray, NDArray[np.intp], NDArray[np.intp]] | None:
    """``np.unique(codes, return_index=True, return_inverse=True)`` (integer ``codes``) without sorting them when a
    probe shows at most ``_FEW_VALUES`` distinct values and every entry is one of them (a float output of a few
    values, whose bits span too wide a range for :func:`_table_unique`): each entry's position among them by
    :func:`_codes_in`, their first occurrences from a prefix (one pass per value not seen there); ``None``
    otherwise."""
    probe = np.unique(codes[:: max(1, len(codes) // _PROBE)])
    if not len(codes) or len(probe) > _FEW_VALUES:
        return None
    inverse = _codes_in(probe, codes)
    if inverse.max() == len(probe):                 # a value the probe missed
        return None
    first = np.empty(len(probe), dtype=np.intp)
    seen, at = np.unique(inverse[:_PROBE], return_index=True)
    first[seen] = at
    for k in np.setdiff1d(np.arange(len(probe)), seen):
        first[k] = np.argmax(inverse == k)
    return probe, first, inverse


def unique_rows(out: NDArray) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``(first, inverse)`` of ``np.unique(row_keys(out), return_index=True, return_inverse=True)``: the same
    outcomes in the same (byte) order, computed with integer sorts."""
    bits = _column_bits(out)
    if bits is None:
        _, first, inverse = np.unique(row_keys(out), return_index=True, return_inverse=True)
        return first, inverse.ravel()
    codes = bits[:, 0] if bits.shape[1] == 1 else _row_codes(bits)
    fast = _table_unique(codes, return_index=True)
    if fast is None:
        fast = _few_unique(codes)
    _, first, inverse = fast if fast is not None else np.unique(codes, return_index=True, return_inverse=True)
    perm = np.argsort(row_keys(out[first]), kind="stable")       # the byte order of np.void keys
    rank = np.empty_like(perm)
    rank[perm] = np.arange(len(perm))
    return first[perm], rank[inverse.ravel()]


#: the sorted values of an event's column spanning at most this many integers are looked up in a table, as are the
#: rows' combined keys when they span at most this many (or the rows' number)
_LOOKUP_SPAN = 1 << 16
#: a wide column (floats' bits) with at most this many values is coded by equality with each (faster than a search)
_FEW_EQUAL = 4
#: ... or this many, for membership alone (one boolean comparison per value)
_FEW_ISIN = 32


def _codes_in(values: NDArray, col: NDArray, member: bool = False) -> NDArray:
    """For each entry of integer ``col`` (the bits of :func:`_column_bits`): its position among the sorted distinct
    ``values``, or ``len(values)`` where it is none of them (``member``: whether it is one of them, a boolean).
    One gather from a table of every pattern for entries of one or two bytes (a byte column of an SVT's or RAPPOR's
    output: a boolean mask and its compaction per column had made a phase-2 count several times the mechanism's own
    sampling); from a table of the span for values spanning at most :data:`_LOOKUP_SPAN` integers; by equality with
    each of a few values (floats' bits: at most :data:`_FEW_EQUAL`, or :data:`_FEW_ISIN` for membership alone); by
    binary search otherwise."""
    card = len(values)
    if card == 0:
        return np.zeros(len(col), dtype=bool if member else np.int64)

    def table(size: int, at: NDArray) -> NDArray:
        t = np.full(size, False if member else card, dtype=bool if member else np.int64)
        t[at] = True if member else np.arange(card)
        return t

    # tables are indexed in unsigned arithmetic (a signed column's bits; the values keep their sorted order)
    ucol, uvals = (col, values) if col.dtype.kind == "u" else (col.view(f"u{col.dtype.itemsize}"),
                                                              values.view(f"u{col.dtype.itemsize}"))
    if col.dtype.itemsize <= 2:
        return np.take(table(1 << (8 * col.dtype.itemsize), uvals), ucol)
    span = int(values[-1]) - int(values[0]) + 1
    if span <= _LOOKUP_SPAN:
        # (the last slot: outside the span; entries below the first value wrap around to the top, so that one
        # minimum clamps both sides)
        return np.take(table(span + 1, (uvals - uvals[0]).astype(np.intp)),
                       np.minimum(ucol - uvals[0], span).astype(np.intp))
    if member and card <= _FEW_ISIN:
        hit = col == values[0]
        for v in values[1:]:
            hit |= col == v
        return hit
    if card <= _FEW_EQUAL:
        code = np.full(len(col), card, dtype=np.int64)
        for i, v in enumerate(values):
            np.putmask(code, col == v, i)
        return code
    idx = np.minimum(np.searchsorted(values, col), card - 1)
    found = values[idx] == col
    return found if member else np.where(found, idx, card)


def _ranked(key: NDArray[np.int64], okey: NDArray[np.int64], size: int,
            limit: int) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """``(key, okey, size)`` with every key replaced by its rank among the distinct outcome keys ``okey``, or by their
    number where it is none of them: by a table when the keys span at most ``limit`` values, by binary search
    otherwise."""
    u = np.unique(okey)
    if size <= limit:
        table = np.full(size, len(u), dtype=np.int64)
        table[u] = np.arange(len(u))
        return np.take(table, key), np.take(table, okey), len(u) + 1
    if not len(u):
        return np.zeros(len(key), dtype=np.int64), okey, 1
    idx = np.minimum(np.searchsorted(u, key), len(u) - 1)
    return np.where(u[idx] == key, idx, len(u)), np.searchsorted(u, okey), len(u) + 1


def rows_in(out: NDArray, outcomes: NDArray) -> NDArray[np.bool_]:
    """``np.isin(row_keys(out), row_keys(outcomes))`` with integer lookups (``out``, ``outcomes`` same dtype).

    Each row's key combines its columns' codes (:func:`_codes_in`: a value's position among the outcomes' values
    in that column, or one more for none) in mixed radix; whenever the next product would pass the lookup's limit
    (:data:`_LOOKUP_SPAN` or the rows' number) the partial keys are first replaced by their ranks among the
    outcomes' partial keys (a row whose prefix no outcome has keeps a code of its own), so that the keys stay few and
    exact over any number of columns, and the last lookup is a table."""
    bits, obits = _column_bits(out), _column_bits(outcomes)
    if bits is None or obits is None or bits.shape[1] != obits.shape[1]:
        return np.isin(row_keys(out), row_keys(outcomes))
    if bits.shape[1] == 1:            # membership alone (codes write several integer arrays: 10x on a float column)
        return _codes_in(np.unique(obits[:, 0]), bits[:, 0], member=True)
    key = np.zeros(len(bits), dtype=np.int64)
    okey = np.zeros(len(obits), dtype=np.int64)
    size, limit = 1, max(_LOOKUP_SPAN, len(key))
    for j in range(bits.shape[1]):
        values = np.unique(obits[:, j])
        radix = len(values) + 1
        if size * radix > limit:
            key, okey, size = _ranked(key, okey, size, limit)
        key *= radix
        key += _codes_in(values, bits[:, j])
        okey = okey * radix + np.searchsorted(values, obits[:, j])
        size *= radix
    if size <= limit:                  # a table of the outcomes' keys
        table = np.zeros(size, dtype=bool)
        table[okey] = True
        return np.take(table, key)
    key, okey, size = _ranked(key, okey, size, limit)
    return key < size - 1


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
