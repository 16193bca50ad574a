"""Strategies of single inputs: vectors of values (with boundaries, ties and optional non-finite values)
and datasets of records."""


from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.strategies import SearchStrategy

from dpverify.testing.strategies.arguments import DrawFn, NONFINITE, POOL_MAX, check_bool, check_dim, check_range, check_sizes, check_special


# --------------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------------


def _boundary_points(low: float, high: float, special: Sequence[float]) -> list[float]:
    """0 (if inside), low, high, the special values, and the float neighbours of low, high and the special
    values that lie inside ``[low, high]``; deduplicated, in this order (hypothesis shrinks to the first)."""
    pts: list[float] = []
    if low <= 0.0 <= high:
        pts.append(0.0)
    pts += [low, high, *special]
    for p in (low, high, *special):
        for q in (float(np.nextafter(p, -math.inf)), float(np.nextafter(p, math.inf))):
            if low <= q <= high:
                pts.append(q)
    seen: dict[float, None] = {}
    for p in pts:
        seen.setdefault(p, None)
    return list(seen)


def _finite_values(low: float, high: float, special: Sequence[float]) -> SearchStrategy[float]:
    return st.one_of(st.sampled_from(_boundary_points(low, high, special)), st.floats(low, high))


def _values(low: float, high: float, special: Sequence[float], nonfinite: bool) -> SearchStrategy[float]:
    finite = _finite_values(low, high, special)
    return st.one_of(finite, st.sampled_from(NONFINITE)) if nonfinite else finite


@st.composite
def _pooled(draw: DrawFn, item: SearchStrategy[Any], n: int) -> np.ndarray:
    """``n`` items drawn from a pool of 1..3 items drawn from ``item`` (repeated values / records)."""
    k = draw(st.integers(1, max(1, min(POOL_MAX, n))))
    pool = np.asarray(draw(st.lists(item, min_size=k, max_size=k)), dtype=float)
    idx = draw(hnp.arrays(np.intp, n, elements=st.integers(0, k - 1)))
    return pool[idx]


def vector_values(
    dim: int, low: float, high: float, special: Sequence[float], ties: bool
) -> SearchStrategy[np.ndarray]:
    values = _finite_values(low, high, special)
    plain = hnp.arrays(np.float64, dim, elements=values)
    if not ties or dim == 1:
        return plain
    equal = values.map(lambda v: np.full(dim, v, dtype=float))
    return st.one_of(plain, st.one_of(equal, _pooled(values, dim)))


def vectors(
    dim: int, low: float, high: float, *, special: Sequence[float] = (), ties: bool = True
) -> SearchStrategy[np.ndarray]:
    """1-D float64 arrays of length ``dim`` with values in ``[low, high]``.

    Values are arbitrary floats in the range (hypothesis's float distribution), the endpoints, 0 (when
    ``low <= 0 <= high``), the ``special`` values (which must lie in ``[low, high]``) and the float
    neighbours of endpoints and special values inside the range.  With ``ties=True`` about half of the
    draws are all-equal vectors or vectors whose values come from a pool of one to three values.
    """
    fn = "vectors"
    d = check_dim(dim, fn)
    lo, hi = check_range(low, high, fn)
    sp = check_special(special, lo, hi, fn)
    tie = check_bool(ties, "ties", fn)
    assert d is not None
    return vector_values(d, lo, hi, sp, tie)


# --------------------------------------------------------------------------------------------------
# Records and datasets
# --------------------------------------------------------------------------------------------------


def _same_record(a: Any, b: Any) -> bool:
    """Equal as the dataset relations see records (``0.0 == -0.0``); NaN equals NaN here."""
    return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))


def _finite_extremes(data: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-column (or scalar) minimum and maximum over the finite values; ``high`` / ``low`` if none."""
    a = data.reshape(-1, 1) if data.ndim == 1 else data
    fin = np.isfinite(a)
    mx = np.where(fin, a, -np.inf).max(axis=0, initial=-np.inf)
    mn = np.where(fin, a, np.inf).min(axis=0, initial=np.inf)
    mx = np.where(np.isfinite(mx), mx, low)
    mn = np.where(np.isfinite(mn), mn, high)
    return mn, mx


def _beyond(lo: float, hi: float, towards_high: bool) -> SearchStrategy[float]:
    """A value in ``[lo, hi]`` favouring the far end and the first float past the near end."""
    far = hi if towards_high else lo
    near = lo if towards_high else hi
    step = float(np.nextafter(near, math.inf if towards_high else -math.inf))
    pts = [far] + ([step] if lo <= step <= hi else [])
    return st.one_of(st.sampled_from(pts), st.floats(lo, hi))


@dataclass(frozen=True, eq=False)
class RecordSpec:
    """Where records come from: the box ``[low, high]^dim`` (with specials) or a finite candidate set."""

    dim: int | None
    low: float
    high: float
    special: tuple[float, ...] = ()
    ties: bool = True
    nonfinite: bool = False
    candidates: np.ndarray | None = None

    # shapes ------------------------------------------------------------------------------------------
    def shape(self, n: int) -> tuple[int, ...]:
        return (n,) if self.dim is None else (n, self.dim)

    # single records ----------------------------------------------------------------------------------
    def values(self, nonfinite: bool = False) -> SearchStrategy[float]:
        return _values(self.low, self.high, self.special, nonfinite)

    def record(self, nonfinite: bool = False) -> SearchStrategy[Any]:
        if self.candidates is not None:
            cand = self.candidates
            return st.integers(0, len(cand) - 1).map(lambda c: cand[c].copy())
        if self.dim is None:
            return self.values(nonfinite)
        if nonfinite:
            return hnp.arrays(np.float64, self.dim, elements=self.values(True))
        return vector_values(self.dim, self.low, self.high, self.special, self.ties)

    def boundary(self, draw: DrawFn) -> Any:
        p = draw(st.sampled_from(_boundary_points(self.low, self.high, self.special)))
        return p if self.dim is None else np.full(self.dim, p, dtype=float)

    def corner(self, draw: DrawFn) -> np.ndarray:
        assert self.dim is not None
        return draw(hnp.arrays(np.float64, self.dim, elements=st.sampled_from([self.low, self.high])))

    def extreme(self, draw: DrawFn, data: np.ndarray, towards_high: bool) -> Any:
        """A record beyond (or level with) all finite records of ``data`` in every column."""
        mn, mx = _finite_extremes(data, self.low, self.high)
        if towards_high:
            parts = [_beyond(float(m), self.high, True) for m in mx]
        else:
            parts = [_beyond(self.low, float(m), False) for m in mn]
        vals = draw(st.tuples(*parts))
        return float(vals[0]) if self.dim is None else np.asarray(vals, dtype=float)

    def differ(self, rec: Any) -> Any:
        """A record that surely differs from ``rec`` (first coordinate moved to ``low``, else ``high``)."""
        if self.dim is None:
            return self.low if rec != self.low else self.high
        out = np.asarray(rec, dtype=float).copy()
        out[0] = self.low if out[0] != self.low else self.high
        return out

    # datasets ----------------------------------------------------------------------------------------
    def sized(self, n: int) -> SearchStrategy[np.ndarray]:
        """Datasets of exactly ``n`` records."""
        shape = self.shape(n)
        if self.candidates is not None:
            cand = self.candidates
            k = len(cand)
            idx = hnp.arrays(np.intp, n, elements=st.integers(0, k - 1))
            options = [idx.map(lambda i: cand[i])]
            if self.ties and n >= 2:
                options.append(st.integers(0, k - 1).map(lambda c: cand[np.full(n, c, dtype=np.intp)]))
            return st.one_of(options)
        finite: SearchStrategy[np.ndarray] = hnp.arrays(np.float64, shape, elements=self.values())
        if self.ties and n >= 2:
            rec = self.record()
            identical = rec.map(lambda r: np.broadcast_to(np.asarray(r, dtype=float), shape).copy())
            finite = st.one_of(finite, st.one_of(identical, _pooled(rec, n)))
        if self.nonfinite:
            return st.one_of(finite, hnp.arrays(np.float64, shape, elements=self.values(True)))
        return finite

    def datasets(self, min_size: int, max_size: int) -> SearchStrategy[np.ndarray]:
        notable = sorted({s for s in (min_size, 0, 1, 2, max_size) if min_size <= s <= max_size})
        sizes = st.one_of(st.sampled_from(notable), st.integers(min_size, max_size))
        return sizes.flatmap(self.sized)

    # records to add or to replace with ----------------------------------------------------------------
    def draw_added(self, draw: DrawFn, data: np.ndarray) -> tuple[str, Any]:
        """``(kind, record)``: a record to add to ``data``."""
        n = len(data)
        if self.candidates is not None:
            kinds = ["candidate"] + (["dup"] if n else [])
        else:
            kinds = ["new", "boundary"] + (["corner"] if self.dim is not None else [])
            kinds += (["dup"] if n else []) + ["extreme-high", "extreme-low"]
        kind = draw(st.sampled_from(kinds))
        if kind == "dup":
            j = draw(st.integers(0, n - 1))
            return f"dup-of-{j}", np.copy(data[j])
        return self._draw_kind(draw, kind, data)

    def draw_replacement(self, draw: DrawFn, data: np.ndarray, i: int) -> tuple[str, Any]:
        """``(kind, record)``: a record that replaces ``data[i]`` and differs from it."""
        n = len(data)
        old = data[i]
        if self.candidates is not None:
            cand = self.candidates
            options = [c for c in range(len(cand)) if not _same_record(cand[c], old)]
            others = [j for j in range(n) if not _same_record(data[j], old)]
            kinds = ["candidate"] + (["dup"] if others else [])
            kind = draw(st.sampled_from(kinds))
            if kind == "dup":
                j = draw(st.sampled_from(others))
                return f"dup-of-{j}", np.copy(data[j])
            c = draw(st.sampled_from(options))  # non-empty: >= 2 distinct candidates (checked eagerly)
            return f"candidate-{c}", cand[c].copy()
        kinds = ["new", "nudge", "boundary"] + (["corner"] if self.dim is not None else [])
        kinds += (["dup"] if n >= 2 else []) + ["extreme-high", "extreme-low"]
        kind = draw(st.sampled_from(kinds))
        if kind == "dup":
            j = draw(st.integers(0, n - 2))
            j += j >= i
            label, rec = f"dup-of-{j}", np.copy(data[j])
        elif kind == "nudge":
            label, rec = self._nudge(draw, old)
        else:
            label, rec = self._draw_kind(draw, kind, data)
        if _same_record(rec, old):
            label, rec = f"{label}/forced-different", self.differ(old)
        return label, rec

    def _draw_kind(self, draw: DrawFn, kind: str, data: np.ndarray) -> tuple[str, Any]:
        if kind == "candidate":
            assert self.candidates is not None
            c = draw(st.integers(0, len(self.candidates) - 1))
            return f"candidate-{c}", self.candidates[c].copy()
        if kind == "new":
            return "new", draw(self.record(self.nonfinite))
        if kind == "boundary":
            return "boundary", self.boundary(draw)
        if kind == "corner":
            return "corner", self.corner(draw)
        return kind, self.extreme(draw, data, kind == "extreme-high")

    def _nudge(self, draw: DrawFn, old: Any) -> tuple[str, Any]:
        """``old`` moved by one ulp (up or down, staying in range) in one coordinate."""
        up = draw(st.booleans())
        rec = np.array(old, dtype=float, copy=True)
        flat = rec.reshape(-1)
        k = 0 if flat.size == 1 else draw(st.integers(0, flat.size - 1))
        v = float(flat[k])
        q = float(np.nextafter(v, math.inf if up else -math.inf))
        if not self.low <= q <= self.high:
            up = not up
            q = float(np.nextafter(v, math.inf if up else -math.inf))
        flat[k] = q
        label = f"nudge-{'up' if up else 'down'}" + (f"[{k}]" if self.dim is not None else "")
        return label, (float(flat[0]) if self.dim is None else flat)


def insert_record(data: np.ndarray, pos: int, rec: Any) -> np.ndarray:
    r = np.asarray(rec)
    out = data.astype(np.result_type(data, r), copy=False)
    return np.insert(out, pos, r, axis=0)


def replace_record(data: np.ndarray, i: int, rec: Any) -> np.ndarray:
    r = np.asarray(rec)
    out = data.astype(np.result_type(data, r), copy=True)
    out[i] = r
    return out


def datasets(
    dim: int | None,
    low: float,
    high: float,
    *,
    min_size: int = 0,
    max_size: int = 20,
    special: Sequence[float] = (),
    ties: bool = True,
    nonfinite: bool = False,
) -> SearchStrategy[np.ndarray]:
    """Datasets of records with values in ``[low, high]``: shape ``(n,)`` (``dim=None``, scalar records) or
    ``(n, dim)``, with ``min_size <= n <= max_size``; float64.

    Sizes ``min_size``, 0, 1, 2 and ``max_size`` (those in range) are drawn on purpose.  Values as in
    :func:`vectors`; with ``ties=True`` (for n >= 2) about half of the datasets are all-identical or have
    records from a pool of one to three records (whole-record duplicates).  ``nonfinite=True`` makes about
    half of the datasets draw their values from a mix that includes NaN, +inf and -inf.
    """
    fn = "datasets"
    d = check_dim(dim, fn, allow_none=True)
    lo, hi = check_range(low, high, fn)
    mn, mx = check_sizes(min_size, max_size, fn)
    sp = check_special(special, lo, hi, fn)
    spec = RecordSpec(d, lo, hi, sp, check_bool(ties, "ties", fn), check_bool(nonfinite, "nonfinite", fn))
    return spec.datasets(mn, mx)
