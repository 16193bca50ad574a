"""A privacy-budget ledger: every mechanism call of a composed algorithm, and a loud failure on overspending.

A composed algorithm (DPM, seed 004 Algorithm 1) spends its budget in many small calls -- a Laplace count per
tree level, an exponential mechanism per split level, a DP percentile, a Gaussian average per leaf.  The ledger
records each call as a :class:`Charge` (kind, ε, δ, level, which subset of the data it read, and on how many
disjoint subsets it ran in parallel) and adds them up by **basic composition** (seed 004 Sec. 2.3: sequential
composition sums ε and δ; parallel composition on disjoint subsets costs one call).  With a claim set, a
charge that would take the total above the claim raises :class:`BudgetExceededError` *before* the call is
made, naming the total, the claim and the charges so far -- a run can never silently spend more than it says.

Protocol for verifiers (duck-typed; ``algorithms`` never imports ``dpverify``): an algorithm that keeps a
ledger exposes ``privacy_ledger(x, rng) -> Sequence[Charge]`` (the charges of one run on ``x``, without
enforcement), and the verifier recomposes them itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Charge", "BudgetLedger", "BudgetExceededError"]


class BudgetExceededError(RuntimeError):
    """A mechanism call would take the ledger's total above the claimed (ε, δ)."""


def _nonnegative(name: str, value: object) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not (v >= 0.0 and math.isfinite(v)):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return v


@dataclass(frozen=True)
class Charge:
    """One mechanism call (or one round of parallel calls on disjoint subsets).

    ``kind`` names the mechanism (``"laplace-count"``, ``"exponential"``, ...); ``epsilon``/``delta`` its cost;
    ``level`` the recursion level (``None`` outside the recursion); ``subset`` which data it read, in words;
    ``parallel`` on how many disjoint subsets it ran with this budget (the round costs ``(ε, δ)`` once).
    """

    kind: str
    epsilon: float
    delta: float
    level: int | None
    subset: str
    parallel: int = 1

    def describe(self) -> str:
        lv = "" if self.level is None else f" level {self.level}"
        par = "" if self.parallel == 1 else f" x{self.parallel} disjoint"
        return f"{self.kind}{lv} on {self.subset}{par}: eps={self.epsilon:.6g}, delta={self.delta:.6g}"


class BudgetLedger:
    """Records :class:`Charge` s and enforces an optional claim (see the module docstring).

    ``epsilon_claim``/``delta_claim``: the claimed totals (``None``: record only).  ``rtol`` absorbs the rounding
    of budgets split into fractions (a total within ``claim·(1 + rtol)`` is accepted).
    """

    def __init__(self, epsilon_claim: float | None = None, delta_claim: float | None = None,
                 rtol: float = 1e-9) -> None:
        self.epsilon_claim = None if epsilon_claim is None else _nonnegative("epsilon_claim", epsilon_claim)
        self.delta_claim = None if delta_claim is None else _nonnegative("delta_claim", delta_claim)
        self.rtol = _nonnegative("rtol", rtol)
        self._charges: list[Charge] = []

    @property
    def charges(self) -> tuple[Charge, ...]:
        return tuple(self._charges)

    def total(self) -> tuple[float, float]:
        """``(Σ ε, Σ δ)`` over the charges (basic composition; each parallel round counted once)."""
        return (math.fsum(c.epsilon for c in self._charges), math.fsum(c.delta for c in self._charges))

    def charge(self, kind: str, epsilon: float, delta: float = 0.0, *, level: int | None = None,
               subset: str = "D", parallel: int = 1) -> Charge:
        """Record one call; raise :class:`BudgetExceededError` first if it would exceed the claim."""
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"a charge needs a non-empty kind, got {kind!r}")
        if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
            raise ValueError(f"parallel must be an integer >= 1, got {parallel!r}")
        c = Charge(kind, _nonnegative(f"{kind}: epsilon", epsilon), _nonnegative(f"{kind}: delta", delta),
                   level, subset, parallel)
        eps, dlt = self.total()
        eps, dlt = eps + c.epsilon, dlt + c.delta
        over = []
        if self.epsilon_claim is not None and eps > self.epsilon_claim * (1.0 + self.rtol):
            over.append(f"epsilon {eps:.6g} > claimed {self.epsilon_claim:.6g}")
        if self.delta_claim is not None and dlt > self.delta_claim * (1.0 + self.rtol):
            over.append(f"delta {dlt:.6g} > claimed {self.delta_claim:.6g}")
        if over:
            so_far = "\n".join("  " + e.describe() for e in self._charges) or "  (none)"
            raise BudgetExceededError(
                f"privacy budget exceeded by the call '{c.describe()}': {' and '.join(over)}.\n"
                f"Charges so far:\n{so_far}\n"
                "Lower the per-call budgets or raise the claim; the call was not made."
            )
        self._charges.append(c)
        return c

    def summary(self) -> str:
        eps, dlt = self.total()
        lines = [c.describe() for c in self._charges]
        lines.append(f"total: eps={eps:.6g}, delta={dlt:.6g}")
        return "\n".join(lines)
