"""The cells of a report row that depend on the kind of check: the claim, the quantity found, and the ok mark.

Used by the plain table (:func:`dpverify.reporting.report.format_table`) and the markdown/HTML pages
(:mod:`dpverify.reporting.pages`).
"""

from __future__ import annotations


from dpverify.jsonsafe import format_number as _fmt
from dpverify.suites import EntryOutcome
from dpverify.suites.kinds import found_cell_of

__all__ = ["claim_cell", "found_cell", "ok_cell", "FOUND_LEGEND", "found_legend"]


def claim_cell(o: EntryOutcome) -> str:
    if o.kind == "theorem":
        return str((o.details or {}).get("claim", "-"))
    if o.claim.sensitivity is not None:
        return f"Δ={_fmt(o.claim.sensitivity)}"
    if o.claim.is_profile:
        return str((o.details or {}).get("profile_text") or o.claim)
    txt = _fmt(o.claim.epsilon)
    return txt + (f" (δ={o.claim.delta:g})" if o.claim.delta > 0 else "")


def ok_cell(o: EntryOutcome) -> str:
    if o.outcome == "not-run":
        return "-"
    return "✓" if o.matched else "✗"


def found_cell(o: EntryOutcome) -> str:
    """What the entry established, as its check kind shows it (:func:`dpverify.suites.kinds.found_cell_of`): an ε
    lower bound (statistical), ``=x`` an exact loss (exact), ``p=x`` a goodness-of-fit p-value (em), ``Δ=x`` the
    largest change found (sensitivity), ``r=x`` the largest step change over its declared sensitivity (replay),
    ``Σε=x`` the recorded charges of the worst run composed (ledger), a theorem's estimate; the ε lower bound for
    a kind that registers no cell."""
    cell = found_cell_of(o.kind)
    return cell(o) if cell is not None else _fmt(o.epsilon_lower_bound)


#: What the "found" cell of each built-in kind shows (the legend under the results table).
FOUND_LEGEND: dict[str, str] = {
    "statistical": "a plain number is the ε lower bound of a statistical audit (true ε ≥ it, at the audit's confidence)",
    "exact": "`=x` the exact privacy loss ε of the worst pair (exact)",
    "em": "`p=x` the goodness-of-fit p-value of the sampler against the exponential mechanism's law (em)",
    "sensitivity": "`Δ=x` the largest change of the function found between neighbours (sensitivity)",
    "replay": "`r=x` the largest change of a noisy step's input over its declared sensitivity (replay; > 1 breaks it)",
    "ledger": "`Σε=x` the recorded charges of the worst run, composed (ledger)",
    "theorem": "a theorem's estimate of its quantity (theorem)",
}


def found_legend(kinds: list[str]) -> str:
    """The legend of the "found" column for the ``kinds`` present, in the order of :data:`FOUND_LEGEND`."""
    parts = [text for kind, text in FOUND_LEGEND.items() if kind in kinds]
    parts += [f"`{k}`: as its check kind reports it" for k in dict.fromkeys(kinds) if k not in FOUND_LEGEND]
    return "Found: " + "; ".join(parts) + "." if parts else ""
