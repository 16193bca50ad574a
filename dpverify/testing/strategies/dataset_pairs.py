"""Strategies of add/remove-one and replace-one neighbouring dataset pairs."""


from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from dpverify.errors import InputError
from dpverify.neighbours import Pair
from dpverify.neighbours.base import is_weighted
from dpverify.testing.strategies.arguments import DrawFn, check_bool, check_dim, check_range, check_sizes, check_special
from dpverify.testing.strategies.values import RecordSpec, insert_record, replace_record


# --------------------------------------------------------------------------------------------------
# Dataset pairs
# --------------------------------------------------------------------------------------------------


def _add_remove_pair(draw: DrawFn, small: np.ndarray, pos: int, rec: Any, kind: str) -> Pair:
    big = insert_record(small, pos, rec)
    small = small.astype(big.dtype, copy=True)
    if draw(st.booleans()):
        return Pair(small, big, f"add[{kind}@{pos}]")
    return Pair(big, small, f"remove[{pos}]({kind})")


def _add_to(draw: DrawFn, spec: RecordSpec, small: np.ndarray) -> Pair:
    kind, rec = spec.draw_added(draw, small)
    n = len(small)
    pos = draw(st.one_of(st.sampled_from(sorted({0, n})), st.integers(0, n)))
    return _add_remove_pair(draw, small, pos, rec, kind)


@st.composite
def add_remove_generated(draw: DrawFn, spec: RecordSpec, min_size: int, max_size: int) -> Pair:
    small = draw(spec.datasets(min_size, max_size - 1))
    return _add_to(draw, spec, small)


@st.composite
def add_remove_around(draw: DrawFn, spec: RecordSpec, base: np.ndarray) -> Pair:
    n = len(base)
    if n and draw(st.booleans()):  # take a record of the base out
        i = draw(st.integers(0, n - 1))
        return _add_remove_pair(draw, np.delete(base, i, axis=0), i, np.copy(base[i]), f"base-record-{i}")
    return _add_to(draw, spec, base.copy())


def _replace_in(draw: DrawFn, spec: RecordSpec, data: np.ndarray) -> Pair:
    i = draw(st.integers(0, len(data) - 1))
    kind, rec = spec.draw_replacement(draw, data, i)
    new = replace_record(data, i, rec)
    pair = Pair(data.astype(new.dtype, copy=True), new, f"replace[{i},{kind}]")
    return pair.swapped() if draw(st.booleans()) else pair


@st.composite
def replace_generated(draw: DrawFn, spec: RecordSpec, min_size: int, max_size: int) -> Pair:
    return _replace_in(draw, spec, draw(spec.datasets(max(min_size, 1), max_size)))


@st.composite
def replace_around(draw: DrawFn, spec: RecordSpec, base: np.ndarray) -> Pair:
    return _replace_in(draw, spec, base)


def check_base_dataset(base: Any, spec: RecordSpec, fn: str, name: str, *, nonempty: bool) -> np.ndarray:
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
) -> RecordSpec:
    d = check_dim(dim, fn, allow_none=True)
    lo, hi = check_range(low, high, fn)
    sp = check_special(special, lo, hi, fn)
    return RecordSpec(d, lo, hi, sp, check_bool(ties, "ties", fn), check_bool(nonfinite, "nonfinite", fn))


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
        return add_remove_around(spec, check_base_dataset(base, spec, fn, "base", nonempty=False))
    mn, mx = check_sizes(min_size, max_size, fn, gap=1)
    return add_remove_generated(spec, mn, mx)


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
        return replace_around(spec, check_base_dataset(base, spec, fn, "base", nonempty=True))
    mn, mx = check_sizes(min_size, max_size, fn)
    if mx < 1:
        raise InputError(f"{fn}: max_size must be at least 1 (a record to replace), got {max_size!r}.")
    return replace_generated(spec, mn, mx)
