"""Argument checks shared by the checks of every kind, and the plain forms of inputs used in their messages and
records.  Private to the package: the names are public so that modules can share them without reaching into each
other's privates."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from dpverify.errors import InputError

__all__ = ["check_real", "check_count", "root_entropy", "show_value", "plain_input", "counted"]


def _type_name(value: Any) -> str:
    return type(value).__name__


def check_real(name: str, value: Any, *, low: float, high: float, low_open: bool, high_open: bool) -> float:
    """``value`` as a finite float in the interval from ``low`` to ``high`` (open or closed ends), else an InputError
    naming ``name``, the interval and the value.  Only numbers are accepted (Python or numpy ints and floats): a
    string such as ``"1.0"`` or a bool is an error, never converted."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        hint = ""
        if isinstance(value, str):
            try:
                hint = f"; pass the number {float(value)!r}, not a string"
            except ValueError:
                pass
        raise InputError(f"{name} must be a number (int or float), got {value!r} (a {_type_name(value)}){hint}")
    v = float(value)
    ok = math.isfinite(v) and (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    if not ok:
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise InputError(f"{name} must lie in {lo}{low:g}, {high:g}{hi}, got {value!r}")
    return v


def check_count(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int ``>= minimum`` (a Python or numpy integer), else an InputError naming ``name``.  A float
    is an error even when integral (``1e5``): counts are written as integers (``100_000``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        hint = ""
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            hint = f"; write {int(value)} (or int({value!r})), an integer"
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r} (a {_type_name(value)}){hint}")
    if value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def root_entropy(seed: int | np.random.SeedSequence | None) -> int:
    """The root entropy every seeded stream of a check derives from: the seed itself, a SeedSequence's entropy, or
    fresh OS entropy for ``None``."""
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.entropy)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError(f"seed must be a non-negative integer or None, got {seed!r}")
        return int(seed)
    return int(np.random.SeedSequence().entropy)

def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 pair"``, ``"3 pairs"``: a count and its noun in the right number (``plural`` defaults to noun + s)."""
    return f"{n} {noun if int(n) == 1 else (plural or noun + 's')}"


def show_value(o: Any) -> str:
    """A value for a message: arrays as lists."""
    return repr(o.tolist()) if isinstance(o, (np.ndarray, np.generic)) else repr(o)


def plain_input(x: Any) -> Any:
    """An input as JSON-able data: the weights (and edges) of a weighted input, else the array."""
    if hasattr(x, "weights") and hasattr(x, "with_weights"):
        out: dict[str, Any] = {"weights": np.asarray(x.weights).tolist()}
        if hasattr(x, "edges"):
            out["edges"] = np.asarray(x.edges).tolist()
        return out
    return np.asarray(x).tolist()
