"""Parameter checks shared by the theorem classes of :mod:`algorithms.theorems`.

A malformed parameter (wrong type, a negative size, an unknown form) raises ``ValueError`` naming it; a
parameter that is well formed but outside a theorem's hypotheses is not an error here -- the theorem's
``hypotheses()`` reports it, so that dpverify can refuse a verdict with a clear message.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["real", "positive", "nonnegative", "probability", "integer", "choice"]


def real(name: str, value: Any) -> float:
    """``value`` as a finite float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def positive(name: str, value: Any) -> float:
    """``value`` as a finite float > 0."""
    v = real(name, value)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def nonnegative(name: str, value: Any) -> float:
    """``value`` as a finite float >= 0."""
    v = real(name, value)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return v


def probability(name: str, value: Any) -> float:
    """``value`` as a float in [0, 1]."""
    v = real(name, value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return v


def integer(name: str, value: Any, low: int) -> int:
    """``value`` as an int >= ``low`` (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return str(value)
