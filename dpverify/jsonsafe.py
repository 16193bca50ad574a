"""JSON-safe values for results and reports: JSON has no inf/nan, and numpy scalars are not JSON."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["json_float", "json_clean", "format_number"]


def json_float(v: float | None) -> float | str | None:
    """A float for JSON: ``inf``/``-inf``/``nan`` become the strings ``"inf"``/``"-inf"``/``"nan"``."""
    if v is None:
        return None
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def format_number(v: float | None) -> str:
    """A number for tables and summaries: 4 significant digits, ``-`` for None, ``inf``/``-inf``/``nan``."""
    if v is None:
        return "-"
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.4g}"


def json_clean(obj: Any) -> Any:
    """Recursively make ``obj`` JSON-safe: non-finite floats as strings, numpy values as Python ones."""
    if isinstance(obj, dict):
        return {str(k): json_clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_clean(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return json_float(float(obj))
    if obj is None or isinstance(obj, str):
        return obj
    return repr(obj)
