"""The exponential mechanism's exact law from its utility function, and its exact privacy-loss ratios across
neighbours (the EM ratio check of ``exact`` suite entries)."""


from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import log_softmax

from dpverify.errors import InputError
from dpverify.jsonsafe import json_float
from dpverify.exact.loss import ABS_TOL, ExactAuditResult, ExactDistribution, ExactPairResult, REL_TOL, check_claim, exact_privacy_loss, summarise, violates

__all__ = ["exponential_mechanism_law", "EMRatioResult", "em_exact_ratios"]


# --------------------------------------------------------------------------------------------------
# the exponential mechanism from its utility function
# --------------------------------------------------------------------------------------------------


def exponential_mechanism_law(utilities: Any, epsilon: float, sensitivity: float = 1.0,
                              factor: float = 2.0) -> ExactDistribution:
    """The EM's law ``softmax(ε·u/(factor·Δu))`` over candidates ``0..len(u)-1`` (McSherry & Talwar 2007;
    Dwork & Roth 2014, Def. 3.4: ``factor = 2``; ``factor = 1`` is the form without the 2)."""
    u = np.asarray(utilities, dtype=np.float64)
    if u.ndim != 1 or u.size == 0 or not np.isfinite(u).all():
        raise InputError(f"utilities must be a non-empty 1-D vector of finite numbers, got shape {u.shape}")
    epsilon, _ = check_claim(epsilon, 0.0)
    for name, v in (("sensitivity", sensitivity), ("factor", factor)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < math.inf):
            raise InputError(f"{name} must be a finite number > 0, got {v!r}")
    return ExactDistribution(outputs=np.arange(u.size), log_p=log_softmax(epsilon * u / (factor * sensitivity)))


@dataclass(frozen=True, eq=False)
class EMRatioResult:
    """Exact check of an EM specification ``(u, Δu, ε)`` across neighbouring inputs.

    ``audit`` holds the exact losses of ``softmax(ε·u(x)/(2Δu))`` on each pair; ``max_utility_change`` is the
    largest ``|u(x0, r) − u(x1, r)|`` seen (``utility_witness`` = (pair index, candidate)); ``sensitivity_ok``
    says whether it stays within the declared Δu -- when it does not, the EM's guarantee does not apply and the
    loss can exceed ε."""

    audit: ExactAuditResult
    max_utility_change: float
    utility_witness: tuple[int, int]
    sensitivity: float
    factor: float

    @property
    def violation(self) -> bool:
        return self.audit.violation

    @property
    def sensitivity_ok(self) -> bool:
        return self.max_utility_change <= self.sensitivity * (1 + REL_TOL) + ABS_TOL

    def summary(self) -> str:
        sens = ("within" if self.sensitivity_ok else "ABOVE") + f" the declared Δu = {self.sensitivity:g}"
        return (f"{self.audit.summary()}; largest utility change {self.max_utility_change:.6g} ({sens}, pair "
                f"{self.utility_witness[0]}, candidate {self.utility_witness[1]})")

    def to_dict(self) -> dict[str, Any]:
        out = self.audit.to_dict()
        out.update({"max_utility_change": json_float(self.max_utility_change),
                    "utility_witness": list(self.utility_witness), "sensitivity": self.sensitivity,
                    "sensitivity_ok": self.sensitivity_ok, "factor": self.factor})
        return out


def em_exact_ratios(utility: Callable[[Any], Any], pairs: Any, epsilon: float, sensitivity: float, *,
                    factor: float = 2.0, relation: Any = None) -> EMRatioResult:
    """Exact loss of the EM with utility function ``utility(x) -> vector over candidates`` on ``pairs``, and the
    largest utility change across them (the exact EM ratio check).  ``factor = 1`` checks the form
    without the 2 (seed 004 Def. 4 as printed)."""
    from dpverify.neighbours import as_pairs

    epsilon, _ = check_claim(epsilon, 0.0)
    plist = as_pairs(pairs, relation)
    results, worst_change, witness = [], -1.0, (0, 0)
    for i, p in enumerate(plist):
        u0 = np.asarray(utility(p.x0), dtype=np.float64)
        u1 = np.asarray(utility(p.x1), dtype=np.float64)
        if u0.shape != u1.shape:
            raise InputError(f"utility returned {u0.shape[0] if u0.ndim else u0.shape} candidates on x0 but "
                             f"{u1.shape[0] if u1.ndim else u1.shape} on x1 (pair {i}); the candidate set must "
                             f"not depend on the data")
        d0 = exponential_mechanism_law(u0, epsilon, sensitivity, factor)
        d1 = exponential_mechanism_law(u1, epsilon, sensitivity, factor)
        loss = exact_privacy_loss(d0, d1)
        results.append(ExactPairResult(index=i, label=p.label, loss=loss, delta_at_claim=loss.delta(epsilon),
                                       violation=violates(loss, epsilon, 0.0)))
        change = np.abs(u0 - u1)
        j = int(np.argmax(change))
        if change[j] > worst_change:
            worst_change, witness = float(change[j]), (i, j)
    return EMRatioResult(audit=summarise(results, epsilon, 0.0, 2 * len(results)),
                         max_utility_change=worst_change, utility_witness=witness,
                         sensitivity=float(sensitivity), factor=float(factor))
