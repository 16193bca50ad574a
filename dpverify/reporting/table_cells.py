"""The cells of a report row that depend on the kind of check: the claim, the quantity found, and the ok mark.

Used by the plain table (:func:`dpverify.reporting.report.format_table`) and the markdown/HTML pages
(:mod:`dpverify.reporting.pages`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpverify.jsonsafe import format_number as _fmt
from dpverify.suites import EntryOutcome

__all__ = ["claim_cell", "found_cell", "ok_cell"]


def claim_cell(o: EntryOutcome) -> str:
    if o.kind == "theorem":
        return str((o.details or {}).get("claim", "-"))
    if o.claim.sensitivity is not None:
        return f"Δ={_fmt(o.claim.sensitivity)}"
    txt = _fmt(o.claim.epsilon)
    return txt + (f" (δ={o.claim.delta:g})" if o.claim.delta > 0 else "")


def ok_cell(o: EntryOutcome) -> str:
    if o.outcome == "not-run":
        return "-"
    return "✓" if o.matched else "✗"


def found_cell(o: EntryOutcome) -> str:
    """The ε the entry established: a lower confidence bound (statistical), ``=x`` an exact loss (exact),
    ``p=x`` the goodness-of-fit p-value (em), ``Δ=x`` the largest change found (sensitivity), ``r=x`` the largest
    step change over its declared sensitivity (replay), ``Σε=x`` the recorded charges of the worst run composed
    (ledger)."""
    if o.kind == "exact" and o.epsilon_lower_bound is not None:
        return "=" + _fmt(o.epsilon_lower_bound)
    if o.kind == "sensitivity" and o.details is not None and "max_change" in o.details:
        return "Δ=" + _fmt(float(o.details["max_change"]))
    if o.kind == "replay" and o.details is not None and "max_ratio" in o.details:
        return "r=" + _fmt(float(o.details["max_ratio"]))
    if o.kind == "ledger" and o.details is not None and "total_epsilon" in o.details:
        return "Σε=" + _fmt(float(o.details["total_epsilon"]))
    if o.kind == "theorem" and o.details is not None:
        return _theorem_found(o.details)
    if o.kind == "em" and o.details is not None and "pvalue" in o.details:
        p = o.details["pvalue"]
        return "p=" + (f"{p:.2g}" if isinstance(p, float) else str(p))
    return _fmt(o.epsilon_lower_bound)


def _theorem_found(details: Mapping[str, Any]) -> str:
    """A theorem's estimate (``"0.812"``; ``"3/4 hold"`` for a sweep; ``"0 fail/500"`` for an "always" check)."""
    points = details.get("points")
    if points is not None:
        holds = sum(p.get("verdict") == "holds" for p in points)
        return f"{holds}/{len(points)} hold"
    if details.get("quantity") == "always":
        return f"{details.get('failure_count', 0)} fail/{details.get('runs', 0)}"
    est = details.get("estimate")
    return _fmt(float(est)) if isinstance(est, (int, float)) else str(est)
