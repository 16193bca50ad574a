"""Hypothesis strategies that generate neighbouring inputs for property-based tests of DP code.

This module is what a user imports to write their own property tests ("for every pair of neighbouring
inputs, my function changes by at most its claimed sensitivity"), and what the hypothesis stage of
``dpverify.check_sensitivity`` draws its :class:`~dpverify.neighbours.Pair` objects from.  Every strategy
returns a :class:`hypothesis.strategies.SearchStrategy`, validates its arguments when it is *built* (a bad
argument raises :class:`~dpverify.errors.InputError` naming it and what to pass instead, before any test
runs), and is composed of hypothesis primitives only, so failing examples shrink to small, readable
inputs (index 0, the first pattern, the fewest records).

Strategies and the edge cases they are built to reach
-----------------------------------------------------
:func:`vectors` -- 1-D float vectors in ``[low, high]``.
    Besides arbitrary values (hypothesis floats in the range): the endpoints ``low`` and ``high``, ``0``
    when it lies inside, the user's ``special`` values (e.g. the edges of the split intervals of an
    algorithm), and the float neighbours (``np.nextafter``) of the endpoints and special values that lie
    inside the range; with ``ties=True`` also all-equal vectors and vectors whose values come from a pool
    of one to three values.
    Why: sensitivity proofs fail at boundaries and ties.  DPM ("Differentially private clustering by separation",
    Definition 5) counts the records in the *closed* interval ``[s - β/2, s + β/2]``, so adjacent
    intervals share their boundary point and a record exactly on it -- or one ulp beside it -- is counted
    twice or once; Definition 6 ranks a split candidate ``s`` by inserting it into the sorted records, and
    the tie convention (records equal to ``s``, several equal records) is not in the paper.  Such inputs
    have probability zero under a uniform draw, so they are drawn on purpose.
:func:`datasets` -- a dataset of scalar records (1-D array) or of ``dim``-column records (2-D array).
    Sizes hit ``min_size``, 0 (the empty dataset), 1, 2 and ``max_size`` on purpose, plus anything in
    between; record values as in :func:`vectors`; whole-record duplicates (records drawn from a small
    pool), all-identical datasets and extreme records.  ``nonfinite=True`` additionally allows NaN,
    +inf and -inf values (opt-in; never by default).
:func:`linf_pairs` / :func:`l1_pairs` -- weight-neighbour pairs ``x1 = x0 + d`` (vectors, or weighted
    inputs with a public topology such as graphs: only ``.weights`` change, through ``.with_weights``).
    The shift ``d`` follows the StatDP patterns of :mod:`dpverify.neighbours` (Ding et al., CCS 2018,
    ``generate_databases``): one coordinate up / down by the full radius, all up / all down, half up
    half down (at a drawn split point), one up rest down, random sign vectors, vertices ``{-r, 0, +r}``,
    the X shape (``x0 = x + u/2``, ``x1 = x - u/2``), and arbitrary shifts inside the ball.  For ℓ1: the
    whole budget on one coordinate, split over two coordinates, spread over all, arbitrary points inside
    the ball.  Extreme shifts are where a claimed sensitivity ``Δ = μ`` (seed 001, Def. 2.1) or ``Δ = r``
    (Sealfon) is attained, so they come first and most often.
:func:`add_remove_pairs` -- ``(D, D ∪ {x})`` and ``(D ∪ {x}, D)`` (both directions), with ``x`` a fresh
    record, a duplicate of an existing record (a tie), a boundary record (``low``, ``high``, special
    values and their float neighbours, corners of the box), or a new extreme beyond all others (moves the
    minimum / maximum, the range-dependent quantities and every rank).  ``x`` is inserted at a drawn
    position, not only at the end, since code may treat the first or last record specially.
:func:`replace_pairs` -- ``D`` and ``D`` with record ``i`` replaced (same size; both directions), by the
    same kinds of records plus a *nudge* (the record moved by one ulp, e.g. across a closed-interval
    boundary).  The replacement always differs from the replaced record.
:func:`neighbour_pairs` -- dispatches on a relation object of :mod:`dpverify.neighbours` and prefixes
    every label with how the pair was made (``x:``, ``domain-base:``, ``shifted-x:``, ``around-x:``,
    ``generated:``).

Guarantees: every pair satisfies ``relation.contains(p.x0, p.x1)`` for its relation (``LInfNeighbours(r)``,
``L1Neighbours(r)``, ``AddRemoveOne()``, ``ReplaceOne()``; the candidates' relation for
:func:`neighbour_pairs`), except pairs that hold NaN or ±inf records (``nonfinite=True``): the dataset
relations reject non-finite records as malformed inputs (``contains`` raises ``InputError``), so such pairs
are neighbours by construction (one record added / replaced) but cannot be checked by the relation.  The
vector strategies are stricter than the relation's 1e-12 relative tolerance: the *computed*
``x1.weights - x0.weights`` has ℓ∞ (resp. ℓ1, summed as ``np.sum(np.abs(...))``) norm at most ``radius``
exactly (coordinates are moved towards ``x0`` by ulps when rounding would overshoot).  Every dataset of a
generated dataset pair has between ``min_size`` and ``max_size`` records (``max_size >= min_size + 1`` for
add/remove); pairs around a fixed ``base`` dataset have ``len(base)`` and ``len(base) ± 1`` records.

Example::

    import numpy as np
    from hypothesis import given, target
    from dpverify.neighbours import LInfNeighbours
    from dpverify.testing.strategies import neighbour_pairs

    @given(neighbour_pairs(LInfNeighbours(1.0), x=np.zeros(3)))
    def test_sum_has_sensitivity_3(p):
        change = abs(p.x1.sum() - p.x0.sum())
        target(change)                      # steer hypothesis towards large changes
        assert change <= 3.0 + 1e-9, p.label
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.strategies import SearchStrategy

from dpverify.errors import InputError
from dpverify.neighbours import AddRemoveOne, L1Neighbours, LInfNeighbours, Pair, ReplaceOne
from dpverify.neighbours.base import check_radius, is_weighted
from dpverify.neighbours.vectors import as_vector

__all__ = [
    "vectors",
    "datasets",
    "linf_pairs",
    "l1_pairs",
    "add_remove_pairs",
    "replace_pairs",
    "neighbour_pairs",
]

DrawFn = st.DrawFn

#: The largest pool of distinct values (or records) a "ties" draw picks from.
_POOL_MAX: int = 3
#: The non-finite values of ``nonfinite=True``.
_NONFINITE: tuple[float, ...] = (math.nan, math.inf, -math.inf)


# --------------------------------------------------------------------------------------------------
# Argument validation (eager: at strategy construction time)
# --------------------------------------------------------------------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _check_dim(dim: Any, fn: str, *, allow_none: bool = False) -> int | None:
    if dim is None and allow_none:
        return None
    if not _is_int(dim) or int(dim) < 1:
        extra = " or None for scalar records" if allow_none else ""
        raise InputError(
            f"{fn}: dim must be a positive integer (the number of coordinates){extra}, got {dim!r}."
        )
    return int(dim)


def _check_finite(v: Any, name: str, fn: str, what: str) -> float:
    if not isinstance(v, numbers.Real) or isinstance(v, (bool, np.bool_)):
        raise InputError(f"{fn}: {name} must be a finite number ({what}), got {v!r}.")
    f = float(v)
    if not math.isfinite(f):
        raise InputError(f"{fn}: {name} must be a finite number ({what}), got {v!r}.")
    return f


def _check_range(low: Any, high: Any, fn: str, names: tuple[str, str] = ("low", "high")) -> tuple[float, float]:
    lo = _check_finite(low, names[0], fn, "the smallest value a coordinate may take")
    hi = _check_finite(high, names[1], fn, "the largest value a coordinate may take")
    if not lo < hi:
        raise InputError(
            f"{fn}: {names[0]} ({low!r}) must be smaller than {names[1]} ({high!r}); pass "
            f"{names[0]} < {names[1]}, the public range of the values."
        )
    return lo, hi


def _check_domain(domain: Any, fn: str) -> tuple[float, float]:
    try:
        bad_type = isinstance(domain, (str, bytes, dict))
        items = None if bad_type else tuple(np.ravel(np.asarray(domain, dtype=object)))
    except (TypeError, ValueError):
        items = None
    if items is None or len(items) != 2:
        raise InputError(
            f"{fn}: domain must be a pair (low, high), the public range of a record's values, got {domain!r}."
        )
    return _check_range(items[0], items[1], fn, ("domain low", "domain high"))


def _check_special(special: Any, low: float, high: float, fn: str) -> tuple[float, ...]:
    if isinstance(special, (str, bytes)) or isinstance(special, numbers.Number):
        raise InputError(
            f"{fn}: special must be a sequence of numbers (e.g. interval edges), got {special!r}; "
            "wrap a single value as (value,)."
        )
    try:
        items = list(np.ravel(special)) if isinstance(special, np.ndarray) else list(special)
    except TypeError:
        raise InputError(f"{fn}: special must be a sequence of numbers, got {special!r}.") from None
    out: list[float] = []
    for k, s in enumerate(items):
        v = _check_finite(s, f"special[{k}]", fn, "a boundary value inside [low, high]")
        if not low <= v <= high:
            raise InputError(
                f"{fn}: special[{k}] = {s!r} lies outside [low, high] = [{low!r}, {high!r}]; special values "
                "are drawn as record values, so give only values inside the range (or widen it)."
            )
        out.append(v)
    return tuple(out)


def _check_bool(v: Any, name: str, fn: str) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise InputError(f"{fn}: {name} must be True or False, got {v!r}.")
    return bool(v)


def _check_sizes(min_size: Any, max_size: Any, fn: str, *, gap: int = 0) -> tuple[int, int]:
    if not _is_int(min_size) or int(min_size) < 0:
        raise InputError(f"{fn}: min_size must be a non-negative integer (fewest records), got {min_size!r}.")
    if not _is_int(max_size) or int(max_size) < 0:
        raise InputError(f"{fn}: max_size must be a non-negative integer (most records), got {max_size!r}.")
    lo, hi = int(min_size), int(max_size)
    if hi < lo + gap:
        if gap:
            raise InputError(
                f"{fn}: max_size ({hi}) must be at least min_size + {gap} ({lo + gap}): both datasets of a "
                "pair have between min_size and max_size records and their sizes differ by one."
            )
        raise InputError(f"{fn}: max_size ({hi}) must be at least min_size ({lo}).")
    return lo, hi


def _check_positive(v: Any, name: str, fn: str, what: str) -> float:
    f = _check_finite(v, name, fn, what)
    if f <= 0.0:
        raise InputError(f"{fn}: {name} must be a positive finite number ({what}), got {v!r}.")
    return f


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
    return st.one_of(finite, st.sampled_from(_NONFINITE)) if nonfinite else finite


@st.composite
def _pooled(draw: DrawFn, item: SearchStrategy[Any], n: int) -> np.ndarray:
    """``n`` items drawn from a pool of 1..3 items drawn from ``item`` (repeated values / records)."""
    k = draw(st.integers(1, max(1, min(_POOL_MAX, n))))
    pool = np.asarray(draw(st.lists(item, min_size=k, max_size=k)), dtype=float)
    idx = draw(hnp.arrays(np.intp, n, elements=st.integers(0, k - 1)))
    return pool[idx]


def _vectors(
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
    d = _check_dim(dim, fn)
    lo, hi = _check_range(low, high, fn)
    sp = _check_special(special, lo, hi, fn)
    tie = _check_bool(ties, "ties", fn)
    assert d is not None
    return _vectors(d, lo, hi, sp, tie)


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
class _RecordSpec:
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
        return _vectors(self.dim, self.low, self.high, self.special, self.ties)

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


def _insert(data: np.ndarray, pos: int, rec: Any) -> np.ndarray:
    r = np.asarray(rec)
    out = data.astype(np.result_type(data, r), copy=False)
    return np.insert(out, pos, r, axis=0)


def _replace(data: np.ndarray, i: int, rec: Any) -> np.ndarray:
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
    d = _check_dim(dim, fn, allow_none=True)
    lo, hi = _check_range(low, high, fn)
    mn, mx = _check_sizes(min_size, max_size, fn)
    sp = _check_special(special, lo, hi, fn)
    spec = _RecordSpec(d, lo, hi, sp, _check_bool(ties, "ties", fn), _check_bool(nonfinite, "nonfinite", fn))
    return spec.datasets(mn, mx)


# --------------------------------------------------------------------------------------------------
# Dataset pairs
# --------------------------------------------------------------------------------------------------


def _add_remove_pair(draw: DrawFn, small: np.ndarray, pos: int, rec: Any, kind: str) -> Pair:
    big = _insert(small, pos, rec)
    small = small.astype(big.dtype, copy=True)
    if draw(st.booleans()):
        return Pair(small, big, f"add[{kind}@{pos}]")
    return Pair(big, small, f"remove[{pos}]({kind})")


def _add_to(draw: DrawFn, spec: _RecordSpec, small: np.ndarray) -> Pair:
    kind, rec = spec.draw_added(draw, small)
    n = len(small)
    pos = draw(st.one_of(st.sampled_from(sorted({0, n})), st.integers(0, n)))
    return _add_remove_pair(draw, small, pos, rec, kind)


@st.composite
def _add_remove_generated(draw: DrawFn, spec: _RecordSpec, min_size: int, max_size: int) -> Pair:
    small = draw(spec.datasets(min_size, max_size - 1))
    return _add_to(draw, spec, small)


@st.composite
def _add_remove_around(draw: DrawFn, spec: _RecordSpec, base: np.ndarray) -> Pair:
    n = len(base)
    if n and draw(st.booleans()):  # take a record of the base out
        i = draw(st.integers(0, n - 1))
        return _add_remove_pair(draw, np.delete(base, i, axis=0), i, np.copy(base[i]), f"base-record-{i}")
    return _add_to(draw, spec, base.copy())


def _replace_in(draw: DrawFn, spec: _RecordSpec, data: np.ndarray) -> Pair:
    i = draw(st.integers(0, len(data) - 1))
    kind, rec = spec.draw_replacement(draw, data, i)
    new = _replace(data, i, rec)
    pair = Pair(data.astype(new.dtype, copy=True), new, f"replace[{i},{kind}]")
    return pair.swapped() if draw(st.booleans()) else pair


@st.composite
def _replace_generated(draw: DrawFn, spec: _RecordSpec, min_size: int, max_size: int) -> Pair:
    return _replace_in(draw, spec, draw(spec.datasets(max(min_size, 1), max_size)))


@st.composite
def _replace_around(draw: DrawFn, spec: _RecordSpec, base: np.ndarray) -> Pair:
    return _replace_in(draw, spec, base)


def _check_base_dataset(base: Any, spec: _RecordSpec, fn: str, name: str, *, nonempty: bool) -> np.ndarray:
    """Validate a fixed dataset against the record shape (and the range, unless candidates are used)."""
    if is_weighted(base) or isinstance(base, (str, bytes)):
        raise InputError(f"{fn}: {name} must be a numeric array of records, got {type(base).__name__}.")
    try:
        a = np.asarray(base)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{fn}: {name} cannot be read as an array of records ({exc}).") from None
    if a.dtype.kind not in "biuf":
        raise InputError(f"{fn}: {name} must be a numeric array of records, got dtype {a.dtype}.")
    if a.ndim == 1 and a.size == 0 and spec.dim is not None:
        a = a.reshape(0, spec.dim)
    if spec.dim is None:
        want, records = "a 1-D array of scalar records", "scalars"
    else:
        want, records = f"a 2-D array with {spec.dim} columns", f"{spec.dim}-column rows"
    if a.ndim != (1 if spec.dim is None else 2) or (spec.dim is not None and a.shape[1] != spec.dim):
        raise InputError(
            f"{fn}: {name} has shape {a.shape} but the records are {records}; pass {want} (or change dim)."
        )
    if nonempty and a.shape[0] == 0:
        raise InputError(f"{fn}: {name} is empty; replacing a record needs at least one record.")
    if spec.candidates is not None:
        a = a.astype(np.result_type(a, spec.candidates), copy=True)
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise InputError(f"{fn}: {name} holds NaN or infinite values; records must be finite.")
        return a
    a = a.astype(float, copy=True)
    fin = np.isfinite(a)
    if not spec.nonfinite and not fin.all():
        raise InputError(
            f"{fn}: {name} holds NaN or infinite values; records must be finite (or pass nonfinite=True)."
        )
    inside = (a >= spec.low) & (a <= spec.high)
    if not np.all(inside | ~fin):
        bad = float(a[fin & ~inside].reshape(-1)[0])
        raise InputError(
            f"{fn}: {name} holds the value {bad!r} outside [low, high] = [{spec.low!r}, {spec.high!r}]; "
            "the range is the public range of a record's values, so widen it to cover the data."
        )
    return a


def _dataset_spec(
    dim: Any, low: Any, high: Any, special: Any, ties: Any, nonfinite: Any, fn: str
) -> _RecordSpec:
    d = _check_dim(dim, fn, allow_none=True)
    lo, hi = _check_range(low, high, fn)
    sp = _check_special(special, lo, hi, fn)
    return _RecordSpec(d, lo, hi, sp, _check_bool(ties, "ties", fn), _check_bool(nonfinite, "nonfinite", fn))


def add_remove_pairs(
    dim: int | None,
    low: float,
    high: float,
    *,
    min_size: int = 0,
    max_size: int = 20,
    special: Sequence[float] = (),
    ties: bool = True,
    nonfinite: bool = False,
    base: Any = None,
) -> SearchStrategy[Pair]:
    """Add/remove-one pairs ``(D, D ∪ {x})`` (label ``add[kind@pos]``) and ``(D ∪ {x}, D)`` (label
    ``remove[pos](kind)``); ``x`` is inserted at position ``pos``.

    ``kind`` says what ``x`` is: ``new`` (a record as in :func:`datasets`), ``dup-of-j`` (a copy of record
    ``j``), ``boundary`` (low, high, 0, a special value or a float neighbour of one, in every column),
    ``corner`` (each column low or high), ``extreme-high`` / ``extreme-low`` (at or beyond the largest /
    smallest finite value of every column).  Without ``base``, ``D`` is drawn as in :func:`datasets` with
    ``min_size <= |D| < max_size``, so both datasets have between ``min_size`` and ``max_size`` records.
    With ``base``, ``D`` is that fixed dataset (``min_size`` / ``max_size`` are then not used) and the
    pairs also remove one of its records (``kind = base-record-i``).
    """
    fn = "add_remove_pairs"
    spec = _dataset_spec(dim, low, high, special, ties, nonfinite, fn)
    if base is not None:
        return _add_remove_around(spec, _check_base_dataset(base, spec, fn, "base", nonempty=False))
    mn, mx = _check_sizes(min_size, max_size, fn, gap=1)
    return _add_remove_generated(spec, mn, mx)


def replace_pairs(
    dim: int | None,
    low: float,
    high: float,
    *,
    min_size: int = 1,
    max_size: int = 20,
    special: Sequence[float] = (),
    ties: bool = True,
    nonfinite: bool = False,
    base: Any = None,
) -> SearchStrategy[Pair]:
    """Replace-one pairs: ``D`` and ``D`` with record ``i`` replaced (label ``replace[i,kind]``, with
    ``:swapped`` when the replaced dataset comes first).

    Replacement kinds are those of :func:`add_remove_pairs` plus ``nudge-up`` / ``nudge-down`` (the
    record moved by one ulp in one column); a replacement that happens to equal the old record is
    changed (suffix ``/forced-different``), so the datasets always differ in exactly one record.
    Without ``base`` the dataset has ``max(min_size, 1) <= n <= max_size`` records; with ``base`` it is
    that fixed (non-empty) dataset.
    """
    fn = "replace_pairs"
    spec = _dataset_spec(dim, low, high, special, ties, nonfinite, fn)
    if base is not None:
        return _replace_around(spec, _check_base_dataset(base, spec, fn, "base", nonempty=True))
    mn, mx = _check_sizes(min_size, max_size, fn)
    if mx < 1:
        raise InputError(f"{fn}: max_size must be at least 1 (a record to replace), got {max_size!r}.")
    return _replace_generated(spec, mn, mx)


# --------------------------------------------------------------------------------------------------
# Vector pairs (ℓ∞ / ℓ1 weight neighbours)
# --------------------------------------------------------------------------------------------------


def _fit_linf(w0: np.ndarray, w1: np.ndarray, r: float) -> np.ndarray:
    """Move coordinates of ``w1`` towards ``w0`` by ulps until ``max|w1 - w0| <= r`` as computed."""
    w1 = w1.copy()
    for _ in range(64):
        bad = ~(np.abs(w1 - w0) <= r)
        if not bad.any():
            return w1
        w1[bad] = np.nextafter(w1[bad], w0[bad])
    bad = ~(np.abs(w1 - w0) <= r)  # pragma: no cover - rounding never needs 64 ulps
    w1[bad] = w0[bad]  # pragma: no cover
    return w1


def _fit_l1(w0: np.ndarray, w1: np.ndarray, r: float) -> np.ndarray:
    """Move coordinates of ``w1`` towards ``w0`` by ulps until ``sum|w1 - w0| <= r`` as computed."""
    w1 = _fit_linf(w0, w1, r)
    for _ in range(4 * w1.size + 64):
        diff = np.abs(w1 - w0)
        if float(np.sum(diff)) <= r:
            return w1
        moving = diff > 0
        k = int(np.argmax(np.where(moving, np.spacing(np.abs(w1)), -1.0)))  # the coarsest moved coordinate
        w1[k] = np.nextafter(w1[k], w0[k])
    for _ in range(4096):  # pragma: no cover - rounding excess of many ulps; shrink all coordinates
        if float(np.sum(np.abs(w1 - w0))) <= r:
            return w1
        w1 = np.nextafter(w1, w0)
    return w0.copy()  # pragma: no cover


def _half_signs(m: int, k: int, first: float) -> np.ndarray:
    return np.where(np.arange(m) < k, first, -first)


@st.composite
def _linf_shift(draw: DrawFn, m: int, r: float) -> tuple[str, np.ndarray, bool]:
    """``(label, d, x_shape)`` with ``||d||_inf <= r``; extreme patterns first (StatDP)."""
    kinds = ["one-up", "one-down", "all-up", "all-down"]
    if m >= 2:
        kinds += ["half-up-half-down", "half-down-half-up", "one-up-rest-down", "one-down-rest-up", "x-shape"]
    kinds += ["random-signs", "vertices", "random"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("one-up", "one-down", "one-up-rest-down", "one-down-rest-up"):
        i = draw(st.one_of(st.sampled_from(sorted({0, m - 1})), st.integers(0, m - 1)))
        sign = 1.0 if kind.startswith("one-up") else -1.0
        if kind.endswith("rest-down") or kind.endswith("rest-up"):
            d = np.full(m, -sign * r)
            d[i] = sign * r
        else:
            d = np.zeros(m)
            d[i] = sign * r
        return f"{kind}[{i}]", d, False
    if kind in ("all-up", "all-down"):
        return kind, np.full(m, r if kind == "all-up" else -r), False
    if kind in ("half-up-half-down", "half-down-half-up", "x-shape"):
        k = draw(st.one_of(st.just(m // 2), st.integers(1, m - 1)))
        d = r * _half_signs(m, k, 1.0 if kind != "half-down-half-up" else -1.0)
        return f"{kind}[{k}]", d, kind == "x-shape"
    if kind == "random-signs":
        elements: SearchStrategy[float] = st.sampled_from([r, -r])
    elif kind == "vertices":
        elements = st.sampled_from([r, -r, 0.0])
    else:
        elements = st.one_of(st.sampled_from([r, -r, 0.0]), st.floats(-r, r))
    return kind, draw(hnp.arrays(np.float64, m, elements=elements)), False


@st.composite
def _l1_shift(draw: DrawFn, m: int, r: float) -> tuple[str, np.ndarray, bool]:
    """``(label, d, x_shape)`` with ``||d||_1 <= r`` (up to rounding, fixed by :func:`_fit_l1`)."""
    kinds = ["one-up", "one-down"] + (["split"] if m >= 2 else []) + ["spread-up", "spread-down"]
    if m >= 2:
        kinds += ["spread-half-up-half-down", "spread-half-down-half-up", "spread-signs", "x-shape"]
    kinds += ["inside"]
    kind = draw(st.sampled_from(kinds))
    d = np.zeros(m)
    if kind in ("one-up", "one-down"):
        i = draw(st.one_of(st.sampled_from(sorted({0, m - 1})), st.integers(0, m - 1)))
        d[i] = r if kind == "one-up" else -r
        return f"{kind}[{i}]", d, False
    if kind == "split":
        i = draw(st.integers(0, m - 1))
        j = draw(st.integers(0, m - 2))
        j += j >= i
        t = draw(st.one_of(st.just(0.5), st.floats(0.0, 1.0)))
        si, sj = draw(st.sampled_from([1.0, -1.0])), draw(st.sampled_from([1.0, -1.0]))
        d[i], d[j] = si * t * r, sj * (1.0 - t) * r
        return f"split[{i},{j}]", d, False
    step = r / m
    if kind in ("spread-up", "spread-down"):
        return kind, np.full(m, step if kind == "spread-up" else -step), False
    if kind in ("spread-half-up-half-down", "spread-half-down-half-up", "x-shape"):
        k = draw(st.one_of(st.just(m // 2), st.integers(1, m - 1)))
        d = step * _half_signs(m, k, -1.0 if kind == "spread-half-down-half-up" else 1.0)
        return f"{kind}[{k}]", d, kind == "x-shape"
    if kind == "spread-signs":
        return kind, draw(hnp.arrays(np.float64, m, elements=st.sampled_from([step, -step]))), False
    v = draw(hnp.arrays(np.float64, m, elements=st.floats(-1.0, 1.0)))
    scale = draw(st.one_of(st.just(1.0), st.floats(0.0, 1.0)))
    top = float(np.max(np.abs(v)))
    if top > 0.0:
        v = v / top  # max |v| = 1, so sum |v| in [1, m]: no overflow below
        d = v * (r * scale / float(np.sum(np.abs(v))))
    return kind, d, False


@dataclass(frozen=True, eq=False)
class _VectorSource:
    """The base of vector pairs: a fixed vector / weighted input, or drawn weights on its topology."""

    m: int
    fixed: Any  # the _Vector of a fixed base, or None
    rebuild: Callable[[np.ndarray], Any]
    weights: SearchStrategy[np.ndarray] | None  # drawn base weights, or None for the fixed base


@st.composite
def _vector_pairs(draw: DrawFn, src: _VectorSource, radius: float, norm: str) -> Pair:
    shift = _linf_shift(src.m, radius) if norm == "linf" else _l1_shift(src.m, radius)
    fit = _fit_linf if norm == "linf" else _fit_l1
    if src.weights is None:
        w = src.fixed.w.copy()
        x0 = src.fixed.base()
    else:
        w = np.asarray(draw(src.weights), dtype=float)
        x0 = None
    label, d, x_shape = draw(shift)
    if x_shape:
        w0 = w + 0.5 * d
        w1 = fit(w0, w - 0.5 * d, radius)
        return Pair(src.rebuild(w0), src.rebuild(w1), label)
    w1 = fit(w, w + d, radius)
    return Pair(src.rebuild(w.copy()) if x0 is None else x0, src.rebuild(w1), label)


def _vector_source(
    base: Any, low: Any, high: Any, fn: str, special: Sequence[float] = (), name: str = "base"
) -> _VectorSource:
    if (low is None) != (high is None):
        raise InputError(f"{fn}: pass both base_low and base_high (the range of the base weights), or neither.")
    if _is_int(base):
        m = _check_dim(base, fn)
        assert m is not None
        if low is None:
            raise InputError(
                f"{fn}: base is the dimension {m}, so pass base_low= and base_high= (the range the base "
                "vectors are drawn from), or pass the base vector itself."
            )
        lo, hi = _check_range(low, high, fn, ("base_low", "base_high"))
        return _VectorSource(m, None, lambda w: np.array(w, dtype=float), _vectors(m, lo, hi, special, True))
    v = as_vector(base, name, fn)
    m = v.w.size
    if low is None:
        return _VectorSource(m, v, v.rebuild if v.weighted else (lambda w: np.array(w, dtype=float)), None)
    lo, hi = _check_range(low, high, fn, ("base_low", "base_high"))
    rebuild = v.rebuild if v.weighted else (lambda w: np.array(w, dtype=float))
    return _VectorSource(m, None, rebuild, _vectors(m, lo, hi, special, True))


def linf_pairs(
    base: Any, radius: float, *, base_low: float | None = None, base_high: float | None = None
) -> SearchStrategy[Pair]:
    """ℓ∞ weight-neighbour pairs ``(x0, x1)`` with ``x1.weights = x0.weights + d``, ``||d||_inf <= radius``.

    ``base`` is a 1-D array, a weighted input (``.weights`` / ``.with_weights``; outputs keep its type
    and topology) or an int dimension.  Without ``base_low`` / ``base_high``, ``x0`` is the base itself
    (the same object for weighted inputs); with them, ``x0``'s weights are drawn by
    ``vectors(dim, base_low, base_high)`` (required for an int base).  ``x1`` may leave
    ``[base_low, base_high]`` by up to ``radius``: the relation does not bound the weights.

    Shift labels: ``one-up[i]``, ``one-down[i]``, ``all-up``, ``all-down``, ``half-up-half-down[k]`` (the
    first ``k`` coordinates up), ``half-down-half-up[k]``, ``one-up-rest-down[i]``,
    ``one-down-rest-up[i]``, ``x-shape[k]`` (``x0 = x + u/2``, ``x1 = x - u/2``), ``random-signs``,
    ``vertices`` (each coordinate -r, 0 or +r) and ``random`` (also arbitrary values in [-r, r]).
    """
    fn = "linf_pairs"
    r = check_radius(radius, fn)
    return _vector_pairs(_vector_source(base, base_low, base_high, fn), r, "linf")


def l1_pairs(
    base: Any, radius: float, *, base_low: float | None = None, base_high: float | None = None
) -> SearchStrategy[Pair]:
    """ℓ1 weight-neighbour pairs: as :func:`linf_pairs` with ``||d||_1 <= radius``.

    Shift labels: ``one-up[i]`` / ``one-down[i]`` (the whole budget on one coordinate), ``split[i,j]``
    (over two coordinates, signs drawn), ``spread-up`` / ``spread-down`` (``±r/m`` everywhere),
    ``spread-half-up-half-down[k]``, ``spread-half-down-half-up[k]``, ``spread-signs``, ``x-shape[k]``
    and ``inside`` (an arbitrary point of the ball, often on its surface).
    """
    fn = "l1_pairs"
    r = check_radius(radius, fn)
    return _vector_pairs(_vector_source(base, base_low, base_high, fn), r, "l1")


@st.composite
def _shifted_weights(draw: DrawFn, w: np.ndarray, base_radius: float) -> np.ndarray:
    _, d, _ = draw(_linf_shift(w.size, base_radius))
    return _fit_linf(w, w + d, base_radius)


# --------------------------------------------------------------------------------------------------
# Dispatch on a relation object
# --------------------------------------------------------------------------------------------------


def _prefixed(strategy: SearchStrategy[Pair], prefix: str) -> SearchStrategy[Pair]:
    return strategy.map(lambda p: Pair(p.x0, p.x1, prefix + p.label))


def neighbour_pairs(
    relation: Any,
    x: Any = None,
    *,
    domain: tuple[float, float] | None = None,
    min_size: int = 0,
    max_size: int = 20,
    special: Sequence[float] = (),
    nonfinite: bool = False,
    base_radius: float | None = None,
) -> SearchStrategy[Pair]:
    """Pairs of neighbours under ``relation`` (an object of :mod:`dpverify.neighbours`).

    ``LInfNeighbours`` / ``L1Neighbours``: ``x`` (a vector or weighted input; or an int dimension when
    ``domain`` is given) is required.  With ``domain=(low, high)`` the base weights are drawn from it
    (keeping ``x``'s dimension and topology; ``special`` values are used there), labels ``domain-base:...``;
    elif ``base_radius`` the base is ``x`` shifted by at most ``base_radius`` in ℓ∞ (StatDP shift
    patterns), labels ``shifted-x:...``; else the base is ``x``, labels ``x:...``.  See :func:`linf_pairs`
    / :func:`l1_pairs`.

    ``special`` values need ``domain`` there (they are drawn as base weights).

    ``AddRemoveOne`` / ``ReplaceOne``: ``domain=(low, high)`` (the public range of a record's values) is
    required unless the relation has ``candidates``, in which case every record is drawn from the
    candidates.  Records are scalars unless ``x`` is 2-D (then ``x.shape[1]`` columns) or the candidates
    are rows.  With ``x`` half of the pairs are around the fixed dataset ``x`` (labels ``around-x:...``)
    and half on generated datasets of ``min_size``..``max_size`` records (labels ``generated:...``);
    without ``x`` all are generated.  See :func:`add_remove_pairs` / :func:`replace_pairs`.

    Every pair satisfies ``relation.contains(p.x0, p.x1)``, except pairs holding NaN / ±inf records
    (``nonfinite=True``, dataset relations only): the relation rejects such records as malformed.
    """
    if isinstance(relation, (LInfNeighbours, L1Neighbours)):
        return _vector_neighbour_pairs(relation, x, domain, special, nonfinite, base_radius)
    if isinstance(relation, (AddRemoveOne, ReplaceOne)):
        return _dataset_neighbour_pairs(relation, x, domain, min_size, max_size, special, nonfinite, base_radius)
    raise InputError(
        f"neighbour_pairs: relation must be one of LInfNeighbours, L1Neighbours, AddRemoveOne or ReplaceOne "
        f"(from dpverify.neighbours), got {type(relation).__name__}: {relation!r}."
    )


def _vector_neighbour_pairs(
    relation: LInfNeighbours | L1Neighbours,
    x: Any,
    domain: Any,
    special: Any,
    nonfinite: Any,
    base_radius: Any,
) -> SearchStrategy[Pair]:
    fn = f"neighbour_pairs({type(relation).__name__})"
    norm = "linf" if isinstance(relation, LInfNeighbours) else "l1"
    if x is None:
        raise InputError(
            f"{fn}: pass x=, the base vector (or weighted input such as a graph) whose neighbours to "
            "generate; its length (topology) fixes the dimension."
        )
    if _check_bool(nonfinite, "nonfinite", fn):
        raise InputError(
            f"{fn}: nonfinite=True applies to dataset relations only; weight neighbours need finite weights."
        )
    if domain is not None:
        lo, hi = _check_domain(domain, fn)
        sp = _check_special(special, lo, hi, fn)
        src = _vector_source(x, lo, hi, fn, sp, name="x")
        return _prefixed(_vector_pairs(src, relation.radius, norm), "domain-base:")
    if len(_check_special(special, -math.inf, math.inf, fn)):
        raise InputError(f"{fn}: special values are drawn as base weights, so they need domain=(low, high).")
    if _is_int(x):
        raise InputError(
            f"{fn}: x is the dimension {x}; pass domain=(low, high) to draw base vectors of that dimension, "
            "or pass the base vector itself."
        )
    src = _vector_source(x, None, None, fn, name="x")
    if base_radius is not None:
        br = _check_positive(base_radius, "base_radius", fn, "the largest ℓ∞ shift of the base from x")
        v = src.fixed
        shifted = _VectorSource(src.m, None, src.rebuild, _shifted_weights(v.w, br))
        return _prefixed(_vector_pairs(shifted, relation.radius, norm), "shifted-x:")
    return _prefixed(_vector_pairs(src, relation.radius, norm), "x:")


def _dataset_neighbour_pairs(
    relation: AddRemoveOne | ReplaceOne,
    x: Any,
    domain: Any,
    min_size: Any,
    max_size: Any,
    special: Any,
    nonfinite: Any,
    base_radius: Any,
) -> SearchStrategy[Pair]:
    cls = type(relation).__name__
    fn = f"neighbour_pairs({cls})"
    replace = isinstance(relation, ReplaceOne)
    nf = _check_bool(nonfinite, "nonfinite", fn)
    if base_radius is not None:
        raise InputError(f"{fn}: base_radius applies to LInfNeighbours / L1Neighbours only; leave it None.")
    mn, mx = _check_sizes(min_size, max_size, fn, gap=0 if replace else 1)
    if replace and mx < 1:
        raise InputError(f"{fn}: max_size must be at least 1 (a record to replace), got {max_size!r}.")
    x_dim: int | None = None
    if x is not None:
        xa = np.asarray(x) if not is_weighted(x) else None
        if xa is None or xa.ndim not in (1, 2):
            raise InputError(
                f"{fn}: x must be a dataset, a 1-D array of scalar records or a 2-D array with one record "
                f"per row, got {type(x).__name__}" + ("" if xa is None else f" of shape {xa.shape}") + "."
            )
        x_dim = None if xa.ndim == 1 else int(xa.shape[1])
    if relation.candidates is not None:
        cand = np.asarray(relation.candidates)
        if nf:
            raise InputError(f"{fn}: nonfinite=True cannot be combined with candidates (records come from them).")
        if len(_check_special(special, -math.inf, math.inf, fn)):
            raise InputError(f"{fn}: special values cannot be combined with candidates (records come from them).")
        c_dim = None if cand.ndim == 1 else int(cand.shape[1])
        if x is not None and x_dim != c_dim:
            raise InputError(
                f"{fn}: x has {'scalar records' if x_dim is None else f'{x_dim}-column records'} but the "
                f"candidates are {'scalars' if c_dim is None else f'{c_dim}-column records'}; make them agree."
            )
        if replace and len({tuple(np.atleast_1d(c).tolist()) for c in cand}) < 2:
            raise InputError(
                f"{fn}: the relation has a single distinct candidate record, so no dataset of candidates has "
                "a replace-one neighbour; give at least two different candidates."
            )
        lo, hi = (float(cand.min()), float(cand.max())) if domain is None else _check_domain(domain, fn)
        spec = _RecordSpec(c_dim, lo, hi, (), True, False, cand)
    else:
        if domain is None:
            raise InputError(
                f"{fn}: pass domain=(low, high), the public range of a record's values, so that records can "
                "be generated (or give the relation candidates=...)."
            )
        lo, hi = _check_domain(domain, fn)
        spec = _RecordSpec(x_dim, lo, hi, _check_special(special, lo, hi, fn), True, nf)
    generated = _replace_generated(spec, mn, mx) if replace else _add_remove_generated(spec, mn, mx)
    generated = _prefixed(generated, "generated:")
    if x is None:
        return generated
    base = _check_base_dataset(x, spec, fn, "x", nonempty=replace)
    around = _replace_around(spec, base) if replace else _add_remove_around(spec, base)
    return st.one_of(_prefixed(around, "around-x:"), generated)
