"""Parameter and input validation shared by :mod:`algorithms.classic` and :mod:`algorithms.broken`.

Every check raises :class:`ValueError` naming the parameter and the allowed range, so that a
mis-configured mechanism fails at construction (``__post_init__``) rather than producing a
silently wrong noise scale.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "check_epsilon",
    "check_positive",
    "check_finite",
    "check_delta",
    "check_positive_int",
    "check_choice",
    "check_n",
    "as_float_input",
    "as_int_input",
    "as_dataset",
]


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_finite(name: str, value: float) -> float:
    """Return ``value`` as a float, raising if it is not a finite real number."""
    if not _is_real(value) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as a float, raising unless it is finite and > 0."""
    if not _is_real(value) or not math.isfinite(float(value)) or float(value) <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return float(value)


def check_epsilon(value: float, name: str = "epsilon") -> float:
    """A privacy parameter epsilon: finite and > 0."""
    return check_positive(name, value)


def check_delta(value: float, name: str = "delta", upper: float = 1.0) -> float:
    """A privacy parameter delta: 0 < delta < ``upper``."""
    if not _is_real(value) or not math.isfinite(float(value)) or not 0.0 < float(value) < upper:
        raise ValueError(f"{name} must satisfy 0 < {name} < {upper:g}, got {value!r}")
    return float(value)


def check_positive_int(name: str, value: int) -> int:
    """An integer >= 1 (numpy integers accepted, bools and floats rejected)."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or int(value) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def check_choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    """One of a fixed set of strings."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def check_n(n: int) -> int:
    """The number of samples requested from a mechanism: an integer >= 0."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or int(n) < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    return int(n)


def as_float_input(x: object, name: str = "x") -> np.ndarray:
    """A scalar or 1-D float input (0-d or 1-d float64 array)."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-D vector, got shape {arr.shape}")
    return arr


def as_finite_vector(x: object, what: str) -> np.ndarray:
    """A non-empty 1-D float64 vector of finite values; ``what`` names it in errors
    (e.g. ``"query answers"``)."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"x must be a non-empty 1-D vector of {what}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"x ({what}) must be finite")
    return arr


def as_int_input(x: object, name: str = "x") -> np.ndarray:
    """A scalar or 1-D integer input (0-d or 1-d int64 array); floats must be integral."""
    arr = np.asarray(x)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-D vector, got shape {arr.shape}")
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        return arr.astype(np.int64)
    raise ValueError(f"{name} must hold integers, got {x!r}")


def as_dataset(x: object, name: str = "x") -> np.ndarray:
    """A 1-D dataset of real-valued records (NaN allowed: mechanisms decide what to do with it)."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D dataset of records, got shape {arr.shape}")
    return arr
