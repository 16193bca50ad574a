"""Argument checks of the strategies (eager: at strategy construction time, so a bad argument is an
InputError naming the strategy and the argument, not a Hypothesis health-check failure later)."""


from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from hypothesis import strategies as st

from dpverify.errors import InputError


DrawFn = st.DrawFn

#: The largest pool of distinct values (or records) a "ties" draw picks from.
POOL_MAX: int = 3
#: The non-finite values of ``nonfinite=True``.
NONFINITE: tuple[float, ...] = (math.nan, math.inf, -math.inf)


# --------------------------------------------------------------------------------------------------
# Argument validation (eager: at strategy construction time)
# --------------------------------------------------------------------------------------------------


def is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def check_dim(dim: Any, fn: str, *, allow_none: bool = False) -> int | None:
    if dim is None and allow_none:
        return None
    if not is_int(dim) or int(dim) < 1:
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


def check_range(low: Any, high: Any, fn: str, names: tuple[str, str] = ("low", "high")) -> tuple[float, float]:
    lo = _check_finite(low, names[0], fn, "the smallest value a coordinate may take")
    hi = _check_finite(high, names[1], fn, "the largest value a coordinate may take")
    if not lo < hi:
        raise InputError(
            f"{fn}: {names[0]} ({low!r}) must be smaller than {names[1]} ({high!r}); pass "
            f"{names[0]} < {names[1]}, the public range of the values."
        )
    return lo, hi


def check_domain(domain: Any, fn: str) -> tuple[float, float]:
    try:
        bad_type = isinstance(domain, (str, bytes, dict))
        items = None if bad_type else tuple(np.ravel(np.asarray(domain, dtype=object)))
    except (TypeError, ValueError):
        items = None
    if items is None or len(items) != 2:
        raise InputError(
            f"{fn}: domain must be a pair (low, high), the public range of a record's values, got {domain!r}."
        )
    return check_range(items[0], items[1], fn, ("domain low", "domain high"))


def check_special(special: Any, low: float, high: float, fn: str) -> tuple[float, ...]:
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


def check_bool(v: Any, name: str, fn: str) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise InputError(f"{fn}: {name} must be True or False, got {v!r}.")
    return bool(v)


def check_sizes(min_size: Any, max_size: Any, fn: str, *, gap: int = 0) -> tuple[int, int]:
    if not is_int(min_size) or int(min_size) < 0:
        raise InputError(f"{fn}: min_size must be a non-negative integer (fewest records), got {min_size!r}.")
    if not is_int(max_size) or int(max_size) < 0:
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


def check_positive(v: Any, name: str, fn: str, what: str) -> float:
    f = _check_finite(v, name, fn, what)
    if f <= 0.0:
        raise InputError(f"{fn}: {name} must be a positive finite number ({what}), got {v!r}.")
    return f
