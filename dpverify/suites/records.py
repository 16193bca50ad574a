"""Reading the JSON records of entry outcomes (``report.json`` entries, certificates): numbers written as strings,
the witness of a statistical record and its upper confidence bound, and the comparison rules of the built-in kinds
(:func:`statistical_rise`, :func:`exact_rise`) that :mod:`dpverify.reporting.compare` applies through the registry
of check kinds."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dpverify.jsonsafe import format_number as _fmt

__all__ = ["EXACT_RTOL", "record_number", "witness_upper_bound", "witness_key", "witness_text", "statistical_rise",
           "exact_rise"]

#: Relative tolerance of an exact ε: a rise below it is floating-point rounding.
EXACT_RTOL = 1e-9


def record_number(v: Any) -> float | None:
    """A JSON number, or ``"inf"``/``"-inf"``/``"nan"``, as a float; anything else ``None``."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if v in ("inf", "-inf", "nan"):
        return float(v)
    return None


def witness_upper_bound(record: Mapping[str, Any]) -> float | None:
    """Upper confidence bound on the privacy loss of a statistical record's witness event (see the module
    docstring), at the per-test level the audit used; ``None`` when the record has no usable witness counts."""
    from scipy import stats

    from dpverify.statistical.stats import clopper_pearson_lower, clopper_pearson_upper

    w = record.get("witness")
    if not isinstance(w, Mapping):
        return None
    k1, k0, n = w.get("count_num"), w.get("count_den"), w.get("samples")
    n0 = w.get("samples_den", n)           # records before per-input sizes have one size
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (k1, k0, n, n0)) or not 0 <= k0 <= n0 \
            or not 0 <= k1 <= n or n < 1 or n0 < 1:
        return None
    p_low, p_high = record_number(w.get("p_num_low")), record_number(w.get("p_den_high"))
    if k1 > 0 and p_low is not None and 0.0 < p_low < 1.0:
        level = float(stats.beta.cdf(p_low, k1, n - k1 + 1))
    elif k0 < n0 and p_high is not None and 0.0 < p_high < 1.0:
        level = float(stats.beta.sf(p_high, k0 + 1, n0 - k0))
    else:
        return None
    if not 0.0 < level < 0.5:
        return None
    claim = record.get("claim")
    delta = record_number(claim.get("delta")) if isinstance(claim, Mapping) else None
    hi = float(clopper_pearson_upper(k1, n, level)) - (delta or 0.0)
    lo = float(clopper_pearson_lower(k0, n0, level))
    if lo <= 0.0:
        return math.inf
    if hi <= 0.0:
        return -math.inf
    return math.log(hi / lo)


def witness_key(record: Mapping[str, Any]) -> tuple[Any, ...] | None:
    w = record.get("witness")
    if not isinstance(w, Mapping):
        return None
    return (w.get("pair_label"), w.get("direction"), w.get("event"))


def witness_text(r: Mapping[str, Any]) -> str:
    w = r.get("witness")
    if not isinstance(w, Mapping):
        return "none"
    return f"'{w.get('event')}' on {w.get('pair_label')}"


def statistical_rise(b: Mapping[str, Any], n: Mapping[str, Any]) -> str | None:
    """A statistical ε lower bound that rose beyond sampling noise from record ``b`` to ``n``: above BASE's upper
    confidence bound on its witness event, or (no witness counts) above the claim; else ``None``."""
    lb_b, lb_n = record_number(b.get("epsilon_lower_bound")), record_number(n.get("epsilon_lower_bound"))
    if lb_n is None or math.isnan(lb_n) or (lb_b is not None and not lb_n > lb_b):
        return None
    upper = witness_upper_bound(b)
    if upper is not None:
        if not lb_n > upper:
            return None
        same = witness_key(b) == witness_key(n)
        which = ("on the same witness event" if same else
                 f"(NEW's witness is another event: {witness_text(n)}; BASE's: {witness_text(b)})")
        return (f"ε lower bound {_fmt(lb_b)} -> {_fmt(lb_n)}, above BASE's upper confidence bound "
                f"{_fmt(upper)} {which}")
    claim = b.get("claim")
    eps = record_number(claim.get("epsilon")) if isinstance(claim, Mapping) else None
    if eps is None or not lb_n > eps:
        return None
    return f"ε lower bound {_fmt(lb_b)} -> {_fmt(lb_n)}, above the claim {_fmt(eps)} (BASE has no witness counts)"


def exact_rise(b: Mapping[str, Any], n: Mapping[str, Any]) -> str | None:
    """An exact ε that rose beyond floating-point rounding (:data:`EXACT_RTOL`) from record ``b`` to ``n``."""
    lb_b, lb_n = record_number(b.get("epsilon_lower_bound")), record_number(n.get("epsilon_lower_bound"))
    if lb_n is None or math.isnan(lb_n) or lb_b is None or math.isnan(lb_b):
        return None
    if not lb_n > lb_b + EXACT_RTOL * max(1.0, abs(lb_b)):
        return None
    return f"exact ε {_fmt(lb_b)} -> {_fmt(lb_n)} (computed, no sampling noise)"
